//! `peerpods-build check-settings`: a user's overlay on top of a provider
//! overlay, with each kind of mistake the command must report (provider, key,
//! file:line, non-zero exit), and a clean one it must accept.
use std::fs;
use std::path::Path;

use crate::common::{ours, TempTree};

/// A scratch tree holding base/, components/ and overlays/aws of this
/// repository, plus `mine/` with the given kustomization and env file.
fn user_overlay(label: &str, kustomization: &str, settings: &str) -> TempTree {
    let tree = TempTree::new(label);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for part in ["base", "components", "overlays/aws"] {
        copy_dir(&repo.join(part), &tree.root.join(part));
    }
    tree.write("mine/kustomization.yaml", kustomization);
    tree.write("mine/settings.env", settings);
    tree
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

const USER_KUSTOMIZATION: &str = "\
resources:
- ../overlays/aws
configMapGenerator:
- name: peer-pods-cm
  behavior: merge
  envs:
  - settings.env
  literals:
  - PODVM_AMI_ID=ami-0123456789
components:
- ../components/settings-rollout
";

/// Runs check-settings on `mine` and returns its findings (stderr); asserts
/// the exit status and that stdout stays empty.
fn check(tree: &TempTree, expect_success: bool) -> Vec<String> {
    let run = ours(&["check-settings", "mine"], &tree.root);
    assert_eq!(
        run.success(),
        expect_success,
        "check-settings exit {:?}\nstdout:\n{}\nstderr:\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("checked against cloud-api-adaptor"), "{}", run.stderr);
    // The findings: every stderr line but the summary and the final error.
    run.stderr
        .lines()
        .filter(|line| !line.contains("checked against cloud-api-adaptor") && !line.starts_with("Error: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn clean_user_overlay_passes() {
    let tree = user_overlay("check-clean", USER_KUSTOMIZATION, "AWS_REGION=eu-west-1\nUSE_PUBLIC_IP=true\n");
    assert_eq!(check(&tree, true), Vec::<String>::new());
}

#[test]
fn typo_in_a_key_is_reported_with_the_key_it_resembles() {
    let tree = user_overlay("check-typo", USER_KUSTOMIZATION, "# mine\nAWS_REGOIN=eu-west-1\n");
    assert_eq!(
        check(&tree, false),
        ["mine/settings.env:2: aws: AWS_REGOIN: not a setting the aws adaptor reads; did you mean AWS_REGION?"]
    );
}

#[test]
fn another_providers_key_is_reported() {
    let kustomization = USER_KUSTOMIZATION.replace(
        "  - PODVM_AMI_ID=ami-0123456789\n",
        "  - PODVM_AMI_ID=ami-0123456789\n  - GCP_ZONE=us-west1-a\n",
    );
    let tree = user_overlay("check-other-provider", &kustomization, "");
    assert_eq!(
        check(&tree, false),
        ["mine/kustomization.yaml:10: aws: GCP_ZONE: not a setting the aws adaptor reads"]
    );
}

#[test]
fn required_key_left_empty_is_reported_where_it_is_set() {
    let kustomization = USER_KUSTOMIZATION.replace("  literals:\n  - PODVM_AMI_ID=ami-0123456789\n", "");
    let tree = user_overlay("check-required", &kustomization, "");
    assert_eq!(
        check(&tree, false),
        ["overlays/aws/settings.env:5: aws: PODVM_AMI_ID: required by the adaptor, but empty"]
    );
}

#[test]
fn trailing_comment_in_an_env_file_is_reported() {
    let tree = user_overlay("check-comment", USER_KUSTOMIZATION, "\n\nSSH_KP_NAME=mykey # mine\n");
    assert_eq!(
        check(&tree, false),
        ["mine/settings.env:3: aws: SSH_KP_NAME: `# mine` becomes part of the value (env files have no trailing comments)"]
    );
}

#[test]
fn quotes_in_an_env_file_are_reported() {
    let tree = user_overlay("check-quotes", USER_KUSTOMIZATION, "PODVM_INSTANCE_TYPE=\"m6a.large\"\n");
    assert_eq!(
        check(&tree, false),
        ["mine/settings.env:1: aws: PODVM_INSTANCE_TYPE: the quotes become part of the value (write it without quotes)"]
    );
}

#[test]
fn boolean_that_is_not_one_is_reported() {
    let tree = user_overlay("check-bool", USER_KUSTOMIZATION, "USE_PUBLIC_IP=yes\n");
    assert_eq!(
        check(&tree, false),
        ["mine/settings.env:1: aws: USE_PUBLIC_IP: `yes` is not a boolean (true or false; anything else means false)"]
    );
}

#[test]
fn number_that_is_not_one_is_reported_in_literals_too() {
    let kustomization = USER_KUSTOMIZATION.replace(
        "  - PODVM_AMI_ID=ami-0123456789\n",
        "  - PODVM_AMI_ID=ami-0123456789\n  - ROOT_VOLUME_SIZE=\"30GiB\"\n",
    );
    let tree = user_overlay("check-number", &kustomization, "PROXY_TIMEOUT=5 minutes\n");
    assert_eq!(
        check(&tree, false),
        [
            "mine/settings.env:1: aws: PROXY_TIMEOUT: `5 minutes` is not a duration such as 90s, 5m or 1h30m (the adaptor keeps its default)",
            "mine/kustomization.yaml:10: aws: ROOT_VOLUME_SIZE: `30GiB` is not an integer (the adaptor ignores it and keeps its default)",
        ]
    );
}

#[test]
fn overlay_without_a_provider_is_an_error() {
    let tree = TempTree::new("check-no-provider");
    tree.write("kustomization.yaml", "resources: []\n");
    let run = ours(&["check-settings", "."], &tree.root);
    assert!(!run.success());
    assert!(run.stderr.contains("renders no CLOUD_PROVIDER"), "{}", run.stderr);
}

/// The shipped overlays offer only keys their adaptor reads, typed right: a
/// fresh clone's only findings are the required keys still to fill in.
#[test]
fn shipped_overlays_only_miss_their_required_values() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in fs::read_dir(repo.join("overlays")).unwrap() {
        let dir = entry.unwrap().path();
        let relative = format!("overlays/{}", dir.file_name().unwrap().to_string_lossy());
        let run = ours(&["check-settings", &relative], repo);
        let findings: Vec<&str> = run
            .stderr
            .lines()
            .filter(|line| !line.contains("checked against cloud-api-adaptor") && !line.starts_with("Error: "))
            .collect();
        assert_eq!(run.success(), findings.is_empty(), "{relative}: {}", run.stderr);
        for finding in findings {
            assert!(finding.ends_with("required by the adaptor, but empty"), "{relative}: {finding}");
        }
    }
}

/// Credentials generated into peer-pods-secret are checked too (a misspelt
/// credential would leave the adaptor without it).
#[test]
fn misspelt_credential_in_a_generated_secret_is_reported() {
    let kustomization = format!(
        "{USER_KUSTOMIZATION}secretGenerator:\n- name: peer-pods-secret\n  namespace: confidential-containers-system\n  envs:\n  - credentials.env\n"
    );
    let tree = user_overlay("check-credentials", &kustomization, "");
    tree.write("mine/credentials.env", "AWS_ACCESS_KEY_ID=AKIA\nAWS_SECRET_KEY=x\n");
    assert_eq!(
        check(&tree, false),
        ["mine/credentials.env:2: aws: AWS_SECRET_KEY: not a setting the aws adaptor reads; did you mean AWS_SECRET_ACCESS_KEY?"]
    );
}

/// A user overlay that changes settings without settings-rollout last would
/// not roll the DaemonSet.
#[test]
fn settings_changed_after_the_rollout_are_reported() {
    let kustomization = USER_KUSTOMIZATION.replace("components:\n- ../components/settings-rollout\n", "");
    let tree = user_overlay("check-rollout", &kustomization, "AWS_REGION=eu-west-1\n");
    assert_eq!(
        check(&tree, false),
        ["mine/settings.env:1: aws: AWS_REGION: set after components/settings-rollout ran, so changing it does not roll the DaemonSet: list settings-rollout as the last component of the overlay that sets it"]
    );
}

/// Which settings a provider requires is said once, by the `# required` marks of its
/// settings.env (checked against `data/adaptor-settings.tsv`); a comment of its
/// kustomization.yaml that lists required keys drifts from both, so there is none.
#[test]
fn overlay_comments_list_no_required_keys() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = fs::read_to_string(repo.join("data/adaptor-settings.tsv")).unwrap();
    let keys: std::collections::BTreeSet<&str> =
        table.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split('\t').nth(1)).filter(|k| *k != "key").collect();
    assert!(keys.contains("GCP_PROJECT_ID"), "the table lists the keys");
    let mut found = Vec::new();
    for entry in fs::read_dir(repo.join("overlays")).unwrap() {
        let file = entry.unwrap().path().join("kustomization.yaml");
        let text = fs::read_to_string(&file).unwrap_or_default();
        // A comment block that says "required" must name no key.
        for block in text.split(|c| c == '\n').collect::<Vec<_>>().split(|l| !l.trim_start().starts_with('#')) {
            let comment = block.join("\n");
            if !comment.to_lowercase().contains("required") {
                continue;
            }
            let words = comment.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            found.extend(words.filter(|w| keys.contains(w)).map(|w| format!("{}: {w}", file.display())));
        }
    }
    assert!(found.is_empty(), "comments listing required settings (mark them `# required` in settings.env instead):\n{}", found.join("\n"));
}
