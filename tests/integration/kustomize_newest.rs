//! The newest kustomize release (v5.8.3, built from its module by `tools/go-clients.sh`) over
//! every shared suite (`tools/conformance.sh`), whose expectations are kustomize v5.8.1's output:
//! each case it fails is a difference between v5.8.1 and the newest release, and must be one
//! `tests/kustomize-newest-differences.txt` lists (docs/clients.md names the upstream change
//! behind each, and what we do about it).
use std::collections::BTreeMap;
use std::fs;

use crate::common;
use crate::go_clients;

/// Case id (suite/case) -> whether it passed, from conformance.py's `--json` output.
fn outcomes(label: &str, command: &str) -> BTreeMap<String, bool> {
    let json = tempfile::NamedTempFile::new().unwrap();
    let script = common::manifest_dir().join("tools/conformance.sh");
    // The suites take minutes, longer than common::run_program allows; conformance.py bounds each
    // case (20 s) itself.
    let run = std::process::Command::new("bash")
        .args([script.to_str().unwrap(), "--show-failures", "0", "--json", json.path().to_str().unwrap()])
        .env("CONFORMANCE_CMD", command)
        .current_dir(common::manifest_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running tools/conformance.sh");
    let text = fs::read_to_string(json.path()).unwrap_or_default();
    assert!(
        !text.is_empty(),
        "{label}: tools/conformance.sh wrote no results ({:?}):\n{}{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let id = format!("{}/{}", case["suite"].as_str().unwrap(), case["case"].as_str().unwrap());
            let passed = if case["expect"] == "error" { case["error_ok"].as_bool() == Some(true) } else { case["byte_exact"].as_bool() == Some(true) };
            (id, passed)
        })
        .collect()
}

#[test]
fn client_kustomize_newest_differs_from_v5_8_1_only_where_recorded() {
    let label = "the newest kustomize over the shared suites";
    let Some((kustomize, version)) = go_clients::client(label, go_clients::KUSTOMIZE_NEWEST) else { return };
    if common::shared_dir(label).is_none() {
        return;
    }
    let theirs = outcomes(label, &format!("{} build {{dir}} {{flags}}", kustomize.display()));
    assert!(theirs.len() > 800, "{label}: only {} cases ran", theirs.len());
    let differing: Vec<&str> = theirs.iter().filter(|(_, passed)| !**passed).map(|(id, _)| id.as_str()).collect();
    let listed_file = common::manifest_dir().join("tests/kustomize-newest-differences.txt");
    let text = fs::read_to_string(&listed_file).unwrap();
    let listed: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|l| l.split_whitespace().next().unwrap()).collect();
    pretty_assertions::assert_eq!(listed, differing, "kustomize {version} differs from the expectations (kustomize v5.8.1's output) on other cases than tests/kustomize-newest-differences.txt lists");
}
