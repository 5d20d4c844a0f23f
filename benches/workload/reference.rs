//! Where the reference kustomize is: `PEERPODS_REFERENCE_KUSTOMIZE` (a command to which the
//! arguments are appended; empty means none), else the `kubectl.1.33` beside `kubectl` on PATH
//! (symlinks resolved), run as `kubectl.1.33 kustomize DIR` (kustomize v5.6.0).

/// The reference command's words, or `None` where there is none.
pub fn find() -> Option<Vec<String>> {
    if let Some(command) = std::env::var_os("PEERPODS_REFERENCE_KUSTOMIZE") {
        let words: Vec<String> = command.to_string_lossy().split_whitespace().map(str::to_owned).collect();
        return (!words.is_empty()).then_some(words);
    }
    let path = std::env::var_os("PATH")?;
    let kubectl = std::env::split_paths(&path).map(|dir| dir.join("kubectl")).find(|c| c.is_file())?;
    let resolved = std::fs::canonicalize(kubectl).ok()?;
    let pinned = resolved.parent()?.join("kubectl.1.33");
    pinned.is_file().then(|| vec![pinned.to_string_lossy().into_owned(), "kustomize".to_owned()])
}

/// A `Command` running the reference on `dir`.
pub fn command(words: &[String], dir: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(&words[0]);
    c.args(&words[1..]).arg(dir);
    c
}
