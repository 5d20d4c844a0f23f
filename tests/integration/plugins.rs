//! Plugins that are other programs (KRM functions in containers and as exec functions,
//! old-style exec plugins), compared with the reference kustomize.
//!
//! There is no docker daemon here: `tests/plugins/bin/docker`, first on PATH for both
//! programs, runs the local function program an image names (`fn.test/krm:v1` runs
//! `tests/plugins/functions/krm`) and records each argv in `$PLUGIN_STANDIN_LOG`; the function
//! programs and exec plugins record their runs there too. kubectl's kustomize has no
//! `--enable-exec`, so an exec function case is built by the reference from a copy in which
//! the same program is named as a container image. kpt is a second speaker of the protocol.
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{self, Run, TempTree};

fn plugins_dir() -> PathBuf {
    common::manifest_dir().join("tests").join("plugins")
}

/// One kustomization under `tests/plugins/cases`, and the flags both programs get.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// It uses exec functions: we run them with `--enable-exec`, the reference as containers.
    exec: bool,
}

const fn case(name: &'static str) -> Case {
    Case { name, args: &[], exec: false }
}

const CASES: &[Case] = &[
    case("add-change-delete"),
    case("base-and-overlay"),
    // Origins and transformer runs travel through plugins as annotations.
    case("build-metadata"),
    case("configs-from-folder"),
    Case { name: "container-envs", args: &["-e", "FLAG=from-flag", "-e", "OVERRIDDEN=flag", "--env", "PLUGIN_TEST_EXPORTED"], exec: false },
    case("container-generator"),
    case("container-label"),
    Case { name: "container-mounts-network", args: &["--network", "--mount", "type=bind,src=data,dst=/flag", "--as-current-user"], exec: false },
    Case { name: "exec-decrypt", args: &[], exec: true },
    Case { name: "exec-envs", args: &["-e", "FLAG=from-flag", "-e", "OVERRIDDEN=flag"], exec: true },
    case("exec-plugin-generator"),
    case("exec-plugin-transformer"),
    // Without --enable-exec, here and in the reference: the exec functions are skipped.
    case("exec-skipped"),
    Case { name: "exec-transformer", args: &[], exec: true },
    case("fifo-positions"),
    // A function that drops kustomize's internal annotations drops what they held (the hash
    // wish, the earlier names a reference follows).
    case("forgotten-state"),
    case("generator-hash"),
    case("generator-in-component"),
    case("generator-merge"),
    case("inline-and-legacy-annotation"),
    case("json-output-results"),
    case("move-and-local"),
    case("mixed-order"),
    case("plain-stream-output"),
    case("several-in-order"),
    case("state-round-trip"),
];

/// The reference and the environment both programs run in, or `None` (skipped) without one.
struct Setup {
    reference: &'static [String],
    path: String,
    /// Variables set after (over) the usual ones.
    extra_env: Vec<(&'static str, String)>,
}

fn setup(label: &str) -> Option<Setup> {
    let Some(reference) = common::reference() else {
        common::skip(label, common::NO_REFERENCE);
        return None;
    };
    let standin = plugins_dir().join("bin");
    let path = format!("{}:{}", standin.display(), std::env::var("PATH").unwrap_or_default());
    Some(Setup { reference, path, extra_env: Vec::new() })
}

impl Setup {
    fn env<'a>(&'a self, log: &'a str) -> Vec<(&'a str, String)> {
        let mut env = vec![
            ("PATH", self.path.clone()),
            ("PLUGIN_STANDIN_LOG", log.to_string()),
            ("KUSTOMIZE_PLUGIN_HOME", plugins_dir().join("home").display().to_string()),
            ("PLUGIN_TEST_EXPORTED", "exported-value".to_string()),
        ];
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// Runs the reference on `dir` with `--enable-alpha-plugins` (when `enabled`) and `args`;
    /// the run and the calls it made.
    fn reference(&self, dir: &Path, args: &[&str], enabled: bool) -> (Run, Vec<String>) {
        let scratch = TempTree::new("plugins-log");
        let log = scratch.path("log").display().to_string();
        let mut all: Vec<&str> = self.reference[1..].iter().map(String::as_str).collect();
        let dir = dir.display().to_string();
        all.push(&dir);
        if enabled {
            all.push("--enable-alpha-plugins");
        }
        all.extend_from_slice(args);
        let env = self.env(&log);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = common::run_program_env(&self.reference[0], &all, &common::manifest_dir(), &env);
        (run, read_log(&log))
    }

    /// Runs `peerpods-build build dir args`; the run and the calls it made.
    fn ours(&self, dir: &Path, args: &[&str]) -> (Run, Vec<String>) {
        let scratch = TempTree::new("plugins-log");
        let log = scratch.path("log").display().to_string();
        let dir = dir.display().to_string();
        let mut all = vec!["build", dir.as_str()];
        all.extend_from_slice(args);
        let env = self.env(&log);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = common::ours_env(&all, &common::manifest_dir(), &env);
        (run, read_log(&log))
    }
}

fn show_difference(theirs: &str, mine: &str, stderr: &str) -> String {
    let diff = similar::TextDiff::from_lines(theirs, mine);
    format!("{}stderr: {stderr}", diff.unified_diff().header("reference", "peerpods-build"))
}

fn read_log(path: &str) -> Vec<String> {
    fs::read_to_string(path).map(|t| t.lines().map(String::from).collect()).unwrap_or_default()
}

/// A copy of the case in which every exec function is the same program as a container image.
fn as_container_functions(case_dir: &Path, scratch: &TempTree) -> PathBuf {
    let copy = scratch.path("case");
    common::copy_dir(case_dir, &copy);
    let exec = regex::Regex::new(r"exec: \{path: [^,}]*/functions/([a-z-]+)(, envs: \[[^\]]*\])?\}").unwrap();
    for file in common::files_under(&copy) {
        let path = copy.join(&file);
        let text = fs::read_to_string(&path).unwrap();
        let rewritten = exec.replace_all(&text, "container: {image: fn.test/$1:v1$2}");
        fs::write(&path, rewritten.as_ref()).unwrap();
    }
    copy
}

#[test]
fn plugin_kustomizations_build_as_the_reference_builds_them() {
    let Some(setup) = setup("plugins: cases") else { return };
    // Four at a time: the time goes into starting programs, not into work.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let setup = &setup;
        let workers: Vec<_> = CASES
            .chunks(CASES.len().div_ceil(4))
            .map(|chunk| scope.spawn(move || chunk.iter().flat_map(|case| compare_case(setup, case)).collect::<Vec<_>>()))
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a comparison panicked")).collect()
    });
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), CASES.len(), failures.join("\n\n"));
}

/// The differences between the reference's build of `case` and ours (none when they agree).
fn compare_case(setup: &Setup, case: &Case) -> Vec<String> {
    let mut failures = Vec::new();
    let dir = plugins_dir().join("cases").join(case.name);
    let scratch = TempTree::new("plugins-case");
    let reference_dir = if case.exec { as_container_functions(&dir, &scratch) } else { dir.clone() };
    let (theirs, their_calls) = setup.reference(&reference_dir, case.args, true);
    let mut args = vec!["--enable-alpha-plugins"];
    if case.exec {
        args.push("--enable-exec");
    }
    args.extend_from_slice(case.args);
    let (mine, my_calls) = setup.ours(&dir, &args);
    if !theirs.success() {
        failures.push(format!("{}: the reference failed: {}", case.name, theirs.stderr));
        return failures;
    }
    if !mine.success() || mine.stdout != theirs.stdout {
        failures.push(format!(
            "{}: output differs (exit {:?})\n{}",
            case.name,
            mine.code,
            show_difference(&theirs.stdout, &mine.stdout, &mine.stderr)
        ));
        return failures;
    }
    // The same programs ran, in the same order, with the same argv; an exec function is
    // the program itself here and a `docker run` there.
    let ran = |calls: &[String]| -> Vec<String> { calls.iter().filter(|c| !case.exec || c.starts_with("[\"ran\"")).cloned().collect() };
    if ran(&my_calls) != ran(&their_calls) {
        failures.push(format!("{}: calls differ\nreference: {:#?}\nours: {:#?}", case.name, their_calls, my_calls));
    }
    if !case.name.starts_with("exec-skipped") && my_calls.is_empty() {
        failures.push(format!("{}: no plugin ran", case.name));
    }
    failures
}

#[test]
fn container_functions_get_kustomizes_docker_argv() {
    let Some(setup) = setup("plugins: docker argv") else { return };
    let case = &CASES.iter().find(|c| c.name == "container-mounts-network").unwrap();
    let dir = plugins_dir().join("cases").join(case.name);
    let mut args = vec!["--enable-alpha-plugins"];
    args.extend_from_slice(case.args);
    let (mine, calls) = setup.ours(&dir, &args);
    assert!(mine.success(), "{}", mine.stderr);
    let argv: Vec<String> = serde_json::from_str(&calls[0]).unwrap();
    let data = dir.join("data").display().to_string();
    // SAFETY: getuid and getgid cannot fail.
    let user = unsafe { format!("{}:{}", libc::getuid(), libc::getgid()) };
    let expected = [
        "run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR", "--network", "host", "--user", &user,
        "--security-opt=no-new-privileges",
        "--mount", &format!("type=bind,source={data},target=/data,readonly"),
        "--mount", &format!("type=bind,source={data},target=/data-rw"),
        "--mount", &format!("type=bind,source={data},target=/flag,readonly"),
        "-e", "LOG_TO_STDERR=true", "-e", "STRUCTURED_RESULTS=true", "fn.test/krm:v1",
    ];
    assert_eq!(argv, expected);
    let (theirs, their_calls) = setup.reference(&dir, case.args, true);
    assert!(theirs.success(), "{}", theirs.stderr);
    assert_eq!(their_calls[0], calls[0], "the reference's argv");
}

#[test]
fn exec_functions_are_skipped_without_enable_exec_and_strict_refuses_that() {
    let Some(setup) = setup("plugins: exec skipped") else { return };
    let dir = plugins_dir().join("cases").join("exec-skipped");
    let (mine, calls) = setup.ours(&dir, &["--enable-alpha-plugins"]);
    assert!(mine.success(), "{}", mine.stderr);
    assert!(calls.is_empty(), "nothing may run: {calls:?}");
    assert_eq!(mine.stderr.matches("runs only with --enable-exec").count(), 2, "{}", mine.stderr);
    let (strict, calls) = setup.ours(&dir, &["--enable-alpha-plugins", "--strict"]);
    assert!(!strict.success() && calls.is_empty(), "{}", strict.stderr);
}

#[test]
fn nothing_runs_without_the_flags() {
    let Some(setup) = setup("plugins: no flags") else { return };
    for case in CASES.iter().filter(|c| !c.args.iter().any(|a| a.starts_with("--enable"))) {
        let dir = plugins_dir().join("cases").join(case.name);
        let (mine, calls) = setup.ours(&dir, case.args);
        assert!(!mine.success(), "{}: built without --enable-alpha-plugins", case.name);
        assert!(mine.stderr.contains("external plugins disabled"), "{}: {}", case.name, mine.stderr);
        assert!(calls.is_empty(), "{}: ran without the flag: {calls:?}", case.name);
        if case.exec {
            // --enable-exec alone allows nothing either.
            let (mine, calls) = setup.ours(&dir, &["--enable-exec"]);
            assert!(!mine.success() && calls.is_empty(), "{}: --enable-exec alone ran {calls:?}", case.name);
        }
    }
    // kustomize refuses them the same way.
    for name in ["container-label", "exec-plugin-generator"] {
        let (theirs, calls) = setup.reference(&plugins_dir().join("cases").join(name), &[], false);
        assert!(!theirs.success() && theirs.stderr.contains("external plugins disabled") && calls.is_empty(), "{name}: {}", theirs.stderr);
    }
}

/// An error case under `tests/plugins/errors`: what our message must say, and whether the
/// reference fails too (two differ on purpose, see the README's Plugins section).
struct ErrorCase {
    name: &'static str,
    args: &'static [&'static str],
    says: &'static str,
    reference_fails: bool,
}

const ERRORS: &[ErrorCase] = &[
    ErrorCase { name: "defer-failure", args: &[], says: "failed: exit status 1; its stderr ends:\nkrm: failing late", reference_fails: true },
    ErrorCase { name: "duplicate-output", args: &[], says: "generated duplicate resource", reference_fails: true },
    ErrorCase { name: "exec-plugin-fails", args: &[], says: "exit status 2; its stderr ends:\nstamp: refusing, as configured", reference_fails: true },
    ErrorCase { name: "exec-plugin-missing", args: &[], says: "NoSuchPlugin does not exist", reference_fails: true },
    ErrorCase { name: "exit-status", args: &[], says: "failed: exit status 3; its stderr ends:\nkrm: cannot go on: the input is wrong", reference_fails: true },
    ErrorCase { name: "generator-conflict", args: &[], says: "exists; can not use behavior: 'unspecified', behavior must be merge or replace", reference_fails: true },
    ErrorCase { name: "invalid-yaml", args: &[], says: "is not valid", reference_fails: true },
    ErrorCase { name: "mount-absolute", args: &[], says: "mount path '/etc' is not permitted", reference_fails: true },
    ErrorCase { name: "mount-outside", args: &[], says: "must be under the current kustomization directory", reference_fails: true },
    ErrorCase { name: "needs-hash-invalid", args: &[], says: "contains an invalid value (\"perhaps\")", reference_fails: true },
    ErrorCase { name: "network-not-enabled", args: &[], says: "network required but not enabled with --network", reference_fails: true },
    // kustomize takes an empty answer as "delete every resource"; we refuse it.
    ErrorCase { name: "prints-nothing", args: &[], says: "printed nothing", reference_fails: false },
    // kustomize has no timeout; the function sleeps 20 s.
    ErrorCase { name: "timeout", args: &["--function-timeout", "1"], says: "ran longer than --function-timeout (1s) and was stopped", reference_fails: false },
    ErrorCase { name: "unknown-spec-field", args: &[], says: "unknown field `imagePullPolicy`", reference_fails: true },
    ErrorCase { name: "validator-modifies", args: &[], says: "validator shouldn't modify the resource map", reference_fails: true },
];

#[test]
fn failing_plugins_fail_the_build_naming_kustomization_and_plugin() {
    let Some(setup) = setup("plugins: errors") else { return };
    for case in ERRORS {
        let dir = plugins_dir().join("errors").join(case.name);
        let mut args = vec!["--enable-alpha-plugins"];
        args.extend_from_slice(case.args);
        let (mine, _) = setup.ours(&dir, &args);
        assert!(!mine.success(), "{}: built", case.name);
        let kustomization = dir.join("kustomization.yaml").display().to_string();
        assert!(mine.stderr.contains(&kustomization), "{}: the message must name {kustomization}: {}", case.name, mine.stderr);
        assert!(mine.stderr.contains(case.says), "{}: expected '{}' in: {}", case.name, case.says, mine.stderr);
        assert!(mine.stderr.contains(&format!("name: {}", dir_plugin_name(&dir))), "{}: the plugin is not named: {}", case.name, mine.stderr);
        if case.name == "timeout" {
            continue;
        }
        let (theirs, _) = setup.reference(&dir, case.args, true);
        assert_eq!(!theirs.success(), case.reference_fails, "{}: the reference: {}", case.name, theirs.stderr);
    }
}

/// The `metadata.name` of the (first) plugin config in an error case.
fn dir_plugin_name(dir: &Path) -> String {
    let config = ["fn.yaml", "gen.yaml", "plugin.yaml", "stamp.yaml"].iter().map(|f| dir.join(f)).find(|p| p.is_file()).unwrap();
    let text = fs::read_to_string(config).unwrap();
    let value = peerpods_build::yaml::parse::parse_document(&text).unwrap();
    value["metadata"]["name"].as_str().unwrap().to_string()
}

#[test]
fn kpt_runs_the_exec_function_to_the_same_resources() {
    let label = "plugins: kpt";
    let Some(setup) = setup(label) else { return };
    let kpt_found = common::run_program_env("sh", &["-c", "command -v kpt"], &common::manifest_dir(), &[]).success();
    if !kpt_found {
        common::skip(label, "kpt not found on PATH");
        return;
    }
    let dir = plugins_dir().join("cases").join("exec-transformer");
    let scratch = TempTree::new("plugins-kpt");
    fs::create_dir_all(scratch.path("in")).unwrap();
    fs::copy(dir.join("resources.yaml"), scratch.path("in/resources.yaml")).unwrap();
    let program = plugins_dir().join("functions").join("krm").display().to_string();
    let config = dir.join("exec.yaml").display().to_string();
    let input = scratch.path("in").display().to_string();
    let kpt = common::run_program_env(
        "kpt",
        &["fn", "eval", "--exec", &program, "--fn-config", &config, "-o", "stdout", &input],
        &scratch.root,
        &[("PATH", &setup.path)],
    );
    assert!(kpt.success(), "kpt: {}", kpt.stderr);
    let (mine, _) = setup.ours(&dir, &["--enable-alpha-plugins", "--enable-exec"]);
    assert!(mine.success(), "{}", mine.stderr);
    let kpt_items = peerpods_build::functions::resource_list::decode_output(&kpt.stdout).unwrap();
    let normalize = |docs: Vec<serde_json::Value>| {
        let mut texts: Vec<String> = docs.iter().map(|d| peerpods_build::yaml::emit::emit_stream([d])).collect();
        texts.sort();
        texts
    };
    let ours = peerpods_build::yaml::parse::parse_documents(&mine.stdout).unwrap();
    assert_eq!(normalize(ours), normalize(kpt_items));
}

#[test]
fn a_plugins_stderr_is_shown_and_its_results_ignored() {
    let Some(setup) = setup("plugins: stderr") else { return };
    let dir = plugins_dir().join("cases").join("json-output-results");
    let (mine, _) = setup.ours(&dir, &["--enable-alpha-plugins"]);
    assert!(mine.success(), "{}", mine.stderr);
    assert!(mine.stderr.contains("a note on stderr"), "{}", mine.stderr);
    assert!(!mine.stdout.contains("results") && !mine.stdout.contains("checked"), "{}", mine.stdout);
}

#[test]
fn exec_plugins_are_found_under_xdg_config_home_without_kustomize_plugin_home() {
    let Some(mut setup) = setup("plugins: XDG_CONFIG_HOME") else { return };
    let config_home = TempTree::new("plugins-xdg");
    config_home.symlink(plugins_dir().join("home").to_str().unwrap(), "kustomize/plugin");
    setup.extra_env = vec![("KUSTOMIZE_PLUGIN_HOME", String::new()), ("XDG_CONFIG_HOME", config_home.root.display().to_string())];
    let dir = plugins_dir().join("cases").join("exec-plugin-transformer");
    let (mine, calls) = setup.ours(&dir, &["--enable-alpha-plugins"]);
    assert!(mine.success(), "{}", mine.stderr);
    let (theirs, their_calls) = setup.reference(&dir, &[], true);
    assert!(theirs.success(), "{}", theirs.stderr);
    assert_eq!(mine.stdout, theirs.stdout);
    assert_eq!(calls, their_calls);
    assert_eq!(calls, vec![r#"["ran", "Stamp", "one", "two", "first", "second line", "third"]"#]);
}

/// The inputs `tests/plugins/functions/tee-input` saw, one parsed ResourceList per call.
fn function_inputs(copy: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(copy).unwrap_or_default();
    text.split("#####\n").filter(|t| !t.trim().is_empty()).map(|t| peerpods_build::yaml::parse::parse_document(t).unwrap()).collect()
}

#[test]
fn functions_read_the_resource_list_kustomize_sends() {
    let Some(mut setup) = setup("plugins: protocol") else { return };
    for name in ["generator-input", "inline-config-input", "transformer-input", "origins-only-input"] {
        let dir = plugins_dir().join("protocol").join(name);
        let scratch = TempTree::new("plugins-protocol");
        let (ours_copy, their_copy) = (scratch.path("ours"), scratch.path("theirs"));
        setup.extra_env = vec![("PLUGIN_INPUT_COPY", ours_copy.display().to_string())];
        let (mine, _) = setup.ours(&dir, &["--enable-alpha-plugins"]);
        setup.extra_env = vec![("PLUGIN_INPUT_COPY", their_copy.display().to_string())];
        let (theirs, _) = setup.reference(&dir, &[], true);
        assert!(mine.success() && theirs.success(), "{name}: {}{}", mine.stderr, theirs.stderr);
        assert_eq!(mine.stdout, theirs.stdout, "{name}");
        let (sent, expected) = (function_inputs(&ours_copy), function_inputs(&their_copy));
        assert_eq!(sent.len(), 1, "{name}: one call");
        // The same objects (key order aside: both are YAML mappings).
        assert_eq!(sent, expected, "{name}: the ResourceList differs");
    }
}
