//! `deps` and `affected`: the set a build reads, checked against the files the build opens
//! (strace) and hand-written lists, and `affected` against renderings before and after a change.
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::{self, git, ours, TempTree};

fn have(program: &str, label: &str) -> bool {
    let present = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        common::skip(label, &format!("no {program} program"));
    }
    present
}

/// The regular files below `root` that `build DIR` opens, as strace sees them, relative to `root`.
fn opened_by_build(root: &Path, dir: &str, extra: &[&str]) -> BTreeSet<String> {
    let log = root.join(".strace.log");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat,open", "-e", "status=successful", "-o"])
        .arg(&log)
        .arg(common::bin())
        .args(["build", dir, "-o", "/dev/null"])
        .args(extra)
        .current_dir(root)
        .status()
        .expect("strace runs");
    assert!(status.success(), "build {dir} under strace failed");
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let prefix = format!("{}/", root.display());
    text.lines()
        .filter_map(|line| line.split('"').nth(1))
        .filter_map(|path| path.strip_prefix(&prefix))
        .filter(|path| root.join(path).is_file())
        .map(str::to_string)
        .collect()
}

/// The files `deps --format json` lists for `dir`, relative to `root` (the current folder).
fn deps_files(root: &Path, dir: &str, extra: &[&str]) -> (BTreeSet<String>, serde_json::Value) {
    let mut args = vec!["deps", "--format", "json", dir];
    args.extend(extra);
    let run = common::run_program(common::bin(), &args, root);
    assert!(run.success(), "deps {dir}: {}", run.stderr);
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let files = value[0]["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
    (files, value[0].clone())
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n";
const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n";

/// A tree with every field that names a file, a component, a symlink and a transformer config.
fn every_field_tree(tmp: &TempTree) {
    tmp.write("base/kustomization.yaml", "resources:\n- deploy.yaml\n- cm.yaml\nconfigurations:\n- config.yaml\ncrds:\n- crd.json\n");
    tmp.write("base/deploy.yaml", DEPLOY);
    tmp.write("base/real/cm.yaml", CM);
    tmp.symlink("real/cm.yaml", "base/cm.yaml");
    tmp.write("base/config.yaml", "namePrefix:\n- path: metadata/name\n");
    tmp.write("base/crd.json", "{}\n");
    tmp.write("base/unread.yaml", CM);
    tmp.write("comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: comp-patch.yaml\n");
    tmp.write("comp/comp-patch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    comp: \"yes\"\n");
    tmp.write(
        "app/kustomization.yaml",
        "resources:\n- ../base\ncomponents:\n- ../comp\nopenapi:\n  path: schema.json\npatchesStrategicMerge:\n- psm.yaml\npatchesJson6902:\n- target: {kind: Deployment, name: web}\n  path: json.yaml\npatches:\n- path: patch.yaml\nconfigMapGenerator:\n- name: gen\n  files:\n  - data.txt\n  envs:\n  - gen.env\nsecretGenerator:\n- name: sec\n  literals: [a=b]\n  files:\n  - key.txt\nreplacements:\n- path: repl.yaml\ngenerators:\n- generator.yaml\ntransformers:\n- transformer.yaml\n",
    );
    tmp.write("app/schema.json", "{\"definitions\": {}}\n");
    tmp.write("app/psm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    psm: \"yes\"\n");
    tmp.write("app/json.yaml", "- op: add\n  path: /metadata/annotations/json\n  value: \"yes\"\n");
    tmp.write("app/patch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    patch: \"yes\"\n");
    tmp.write("app/data.txt", "hello\n");
    tmp.write("app/gen.env", "K=V\n");
    tmp.write("app/key.txt", "secret\n");
    tmp.write("app/repl.yaml", "- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.a]\n    options: {create: true}\n");
    tmp.write("app/generator.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: plugin-gen\nfiles:\n- plugin-data.txt\n");
    tmp.write("app/plugin-data.txt", "x\n");
    tmp.write("app/transformer.yaml", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: t\npath: transformer-patch.yaml\n");
    tmp.write("app/transformer-patch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    t: \"yes\"\n");
    tmp.write("app/README.md", "not read\n");
}

#[test]
fn deps_lists_every_field_that_names_a_file_and_what_the_build_opens() {
    let tmp = TempTree::new("deps-fields");
    every_field_tree(&tmp);
    let expected = set(&[
        "app/data.txt", "app/gen.env", "app/generator.yaml", "app/json.yaml", "app/key.txt", "app/kustomization.yaml",
        "app/patch.yaml", "app/plugin-data.txt", "app/psm.yaml", "app/repl.yaml", "app/schema.json", "app/transformer-patch.yaml",
        "app/transformer.yaml", "base/config.yaml", "base/crd.json", "base/deploy.yaml", "base/kustomization.yaml",
        "base/real/cm.yaml", "comp/comp-patch.yaml", "comp/kustomization.yaml",
    ]);
    let (files, json) = deps_files(&tmp.root, "app", &[]);
    assert_eq!(files, expected);
    let folders: Vec<(&str, &str)> =
        json["folders"].as_array().unwrap().iter().map(|f| (f["path"].as_str().unwrap(), f["kind"].as_str().unwrap())).collect();
    assert_eq!(folders, [("app", "Kustomization"), ("base", "Kustomization"), ("comp", "Component")]);
    // The build itself agrees with kustomize, and opens exactly those files.
    if let Some(reference) = common::reference_run(&["app"], &tmp.root, "deps-fields") {
        let build = ours(&["build", "app"], &tmp.root);
        assert!(reference.success(), "{}", reference.stderr);
        assert_eq!(build.stdout, reference.stdout, "{}", build.stderr);
    }
    if have("strace", "deps-fields") {
        assert_eq!(opened_by_build(&tmp.root, "app", &[]), expected);
    }
    // Text: files, then folders, relative to the current folder.
    let text = ours(&["deps", "app"], &tmp.root).stdout;
    assert!(text.ends_with("comp/kustomization.yaml\napp/\nbase/\ncomp/\n"), "{text}");
    // Argo CD: relative to the application's folder, `;` between.
    let argocd = ours(&["deps", "--format", "argocd", "app"], &tmp.root).stdout;
    assert!(argocd.starts_with("../base/config.yaml;") && argocd.contains(";data.txt;") && argocd.contains(";../base/real/cm.yaml;") , "{argocd}");
    // make: the rule, then an empty rule per file.
    let make = ours(&["deps", "--format", "make", "--target", "out/app.yaml", "app"], &tmp.root).stdout;
    assert!(make.starts_with("out/app.yaml: \\\n app/data.txt \\\n"), "{make}");
    assert!(make.contains("\nbase/real/cm.yaml:\n"), "{make}");
    // mermaid: the include graph, the component as a hexagon.
    let mermaid = ours(&["deps", "--format", "mermaid", "app"], &tmp.root).stdout;
    assert_eq!(mermaid, "graph TD\n  n0[\"app\"]\n  n1[\"base\"]\n  n2{{\"comp\"}}\n  n0 --> n1\n  n0 --> n2\n");
}

#[test]
fn deps_outside_the_root_with_load_restrictions_none() {
    let tmp = TempTree::new("deps-none");
    tmp.write("shared/cm.yaml", CM);
    tmp.write("shared/patch.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  b: \"2\"\n");
    tmp.write("app/kustomization.yaml", "resources:\n- ../shared/cm.yaml\npatches:\n- path: ../shared/patch.yaml\n");
    // A failed build lists what it read before the failure (on stdout) and exits 1.
    let refused = common::run_program(common::bin(), &["deps", "app"], &tmp.root);
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert!(refused.stderr.contains("is not in or below"), "{}", refused.stderr);
    // What it read before the refusal is listed.
    assert_eq!(refused.stdout, "app/kustomization.yaml\napp/\n");
    let flag = ["--load-restrictor", "LoadRestrictionsNone"];
    let (files, _) = deps_files(&tmp.root, "app", &flag);
    let expected = set(&["app/kustomization.yaml", "shared/cm.yaml", "shared/patch.yaml"]);
    assert_eq!(files, expected);
    if have("strace", "deps-none") {
        assert_eq!(opened_by_build(&tmp.root, "app", &flag), expected);
    }
}

#[test]
fn deps_of_a_remote_names_the_url_and_the_commit() {
    if !have("git", "deps-remote") {
        return;
    }
    let tmp = TempTree::new("deps-remote");
    let repo = tmp.mkdir("repo");
    tmp.write("repo/base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("repo/base/cm.yaml", CM);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "base"]);
    let commit = String::from_utf8(Command::new("git").args(["rev-parse", "HEAD"]).current_dir(&repo).output().unwrap().stdout).unwrap();
    let url = format!("file://{}//base?ref=main", repo.display());
    tmp.write("app/kustomization.yaml", &format!("resources:\n- {url}\n"));
    let cache = tmp.path("cache");
    let run = ours(&["deps", "--cache-dir", cache.to_str().unwrap(), "app"], &tmp.root);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.stdout, format!("app/kustomization.yaml\napp/\n{url}@{}\n", commit.trim()));
}

/// A repository of three roots over a shared base and a component; returns the tree.
fn small_repository(label: &str) -> TempTree {
    let tmp = TempTree::new(label);
    tmp.write("base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("base/cm.yaml", CM);
    tmp.write("comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: c-\n");
    for (app, component) in [("a", true), ("b", false), ("c", true)] {
        let components = if component { "components:\n- ../../comp\n" } else { "" };
        tmp.write(&format!("apps/{app}/kustomization.yaml"), &format!("resources:\n- ../../base\npatches:\n- path: patch.yaml\n{components}"));
        tmp.write(&format!("apps/{app}/patch.yaml"), &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  app: {app}\n"));
    }
    tmp.write("README.md", "not read\n");
    git(&tmp.root, &["init", "-q"]);
    git(&tmp.root, &["add", "."]);
    git(&tmp.root, &["commit", "-qm", "tree"]);
    tmp
}

#[test]
fn affected_lists_the_roots_whose_build_reads_a_changed_file() {
    if !have("git", "affected") {
        return;
    }
    let tmp = small_repository("affected");
    let root = &tmp.root;
    let affected = |args: &[&str]| {
        let mut all = vec!["affected"];
        all.extend(args);
        let run = ours(&all, root);
        assert!(run.success(), "{}", run.stderr);
        run.stdout
    };
    assert_eq!(affected(&["--base", "HEAD"]), "");
    assert_eq!(affected(&["--changed", "README.md"]), "");
    assert_eq!(affected(&["--changed", "base/cm.yaml"]), "apps/a\napps/b\napps/c\n");
    assert_eq!(affected(&["--changed", "comp/kustomization.yaml"]), "apps/a\napps/c\n");
    assert_eq!(affected(&["--changed", "apps/b/patch.yaml", "apps/b"]), "apps/b\n");
    assert_eq!(affected(&["--changed", "apps/b/patch.yaml", "apps/a", "apps/c"]), "");
    // From stdin, one path a line.
    let mut child = Command::new(common::bin())
        .args(["affected", "--changed", "-", "--format", "json"])
        .current_dir(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"README.md\napps/c/patch.yaml\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "[\n  \"apps/c\"\n]\n");
    // The work tree against HEAD: a change, an added file a build looks for, a deleted file.
    std::fs::write(root.join("apps/a/patch.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  app: changed\n").unwrap();
    assert_eq!(affected(&["--base", "HEAD"]), "apps/a\n");
    std::fs::write(root.join("apps/b/kustomization.yml"), "resources: []\n").unwrap();
    assert_eq!(affected(&["--base", "HEAD"]), "apps/a\napps/b\n", "an added kustomization.yml is looked for by b's build");
    std::fs::write(root.join("apps/c/unrelated.yaml"), CM).unwrap();
    assert_eq!(affected(&["--base", "HEAD"]), "apps/a\napps/b\n", "an added file no build reads");
    std::fs::remove_file(root.join("comp/kustomization.yaml")).unwrap();
    assert_eq!(affected(&["--base", "HEAD"]), "apps/a\napps/b\napps/c\n");
    // diff --base renders only the affected roots and says so.
    git(root, &["checkout", "-q", "--", "."]);
    std::fs::remove_file(root.join("apps/b/kustomization.yml")).unwrap();
    std::fs::write(root.join("apps/c/patch.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  app: changed\n").unwrap();
    let diff = common::run_program(common::bin(), &["diff", "--base", "HEAD", "--stat"], root);
    assert_eq!(diff.code, Some(1), "{}", diff.stderr);
    assert_eq!(diff.stdout, "apps/c\tchanged\tConfigMap/c-cm\t+1 -1\tdata.app\n");
    assert!(diff.stderr.contains("rendering 1 of 3 kustomization roots"), "{}", diff.stderr);
    let given = common::run_program(common::bin(), &["diff", "--base", "HEAD", "--stat", "apps/a", "apps/c"], root);
    assert_eq!(given.stderr, "diff: apps/a: skipped, unaffected by the change since HEAD\n");
}

/// Random trees from the workload generator, random changes: a root `affected` leaves out
/// renders the same bytes before and after, and the set `deps` lists is what the build opens.
#[test]
fn affected_is_exact_on_random_trees() {
    if !have("git", "affected-random") {
        return;
    }
    let strace = have("strace", "affected-random");
    let mut changed_some = false;
    for seed in 1..=3u64 {
        let tmp = TempTree::new("affected-random");
        let workload = crate::generator::Workload { apps: 4, overlays: 2, seed };
        let mut files = workload.files();
        files.retain(|path, _| !path.starts_with("envs/") && path != "workload.json");
        for (path, text) in &files {
            tmp.write(path, text);
        }
        git(&tmp.root, &["init", "-q"]);
        git(&tmp.root, &["add", "."]);
        git(&tmp.root, &["commit", "-qm", "tree"]);
        let roots: Vec<String> = ours(&["affected", "--changed", "-"], &tmp.root).stdout.lines().map(str::to_string).collect();
        assert!(roots.is_empty());
        let roots: Vec<String> = files.keys().filter(|p| p.contains("/overlays/") && p.ends_with("kustomization.yaml")).map(|p| p.trim_end_matches("/kustomization.yaml").to_string()).collect();
        if strace {
            for root in roots.iter().take(2) {
                assert_eq!(deps_files(&tmp.root, root, &[]).0, opened_by_build(&tmp.root, root, &[]), "seed {seed}: {root}");
            }
        }
        let render = |root: &str| {
            let run = ours(&["build", root], &tmp.root);
            format!("{:?}\n{}", run.code, run.stdout)
        };
        let before: Vec<String> = roots.iter().map(|r| render(r)).collect();
        // A few changes, each checked alone: a file edited, a file deleted.
        let paths: Vec<&String> = files.keys().collect();
        let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        for trial in 0..6 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let path = paths[(rng >> 33) as usize % paths.len()];
            let full = tmp.path(path);
            if trial % 3 == 2 {
                std::fs::remove_file(&full).unwrap();
            } else {
                let text = std::fs::read_to_string(&full).unwrap();
                std::fs::write(&full, text.replacen(": ", ": x", 1).replacen('1', "7", 1)).unwrap();
            }
            let run = ours(&["affected", "--base", "HEAD"], &tmp.root);
            assert!(run.success(), "{}", run.stderr);
            let listed: BTreeSet<String> = run.stdout.lines().map(str::to_string).collect();
            for (root, old) in roots.iter().zip(&before) {
                let now = render(root);
                if !listed.contains(root) {
                    assert_eq!(&now, old, "seed {seed}: {path} changed, {root} left out, but its rendering changed");
                } else if &now != old {
                    changed_some = true;
                }
            }
            git(&tmp.root, &["checkout", "-q", "--", "."]);
        }
    }
    assert!(changed_some, "no random change changed any rendering: the trials checked nothing");
}

/// A helm chart: its folder (read whole by helm: any change below it matters), its values file
/// and `additionalValuesFiles`, from `helmCharts` and from a `HelmChartInflationGenerator` config
/// in `generators` (the config file read too). Nothing runs: the walk reads, helm is not needed.
#[test]
fn deps_of_helm_charts_lists_the_chart_folder_and_values_files() {
    let tmp = TempTree::new("deps-helm");
    tmp.write(
        "app/kustomization.yaml",
        "helmGlobals:\n  chartHome: vendor/charts\nhelmCharts:\n- name: web\n  releaseName: web\n  valuesFile: values-prod.yaml\n  additionalValuesFiles:\n  - extra/more.yaml\ngenerators:\n- chart-generator.yaml\n",
    );
    tmp.write("app/vendor/charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n");
    tmp.write("app/vendor/charts/web/values.yaml", "replicas: 1\n");
    tmp.write("app/vendor/charts/web/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n");
    tmp.write("app/vendor/charts/db/Chart.yaml", "apiVersion: v2\nname: db\nversion: 0.1.0\n");
    tmp.write("app/vendor/charts/db/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n");
    tmp.write("app/values-prod.yaml", "replicas: 3\n");
    tmp.write("app/extra/more.yaml", "labels: {}\n");
    tmp.write("app/extra/unused.yaml", "labels: {}\n");
    tmp.write(
        "app/chart-generator.yaml",
        "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: db\nname: db\nreleaseName: db\nchartHome: vendor/charts\nvaluesFile: db-values.yaml\n",
    );
    tmp.write("app/db-values.yaml", "size: 1\n");
    let (files, json) = deps_files(&tmp.root, "app", &[]);
    assert_eq!(
        files,
        set(&["app/chart-generator.yaml", "app/db-values.yaml", "app/extra/more.yaml", "app/kustomization.yaml", "app/values-prod.yaml"])
    );
    let trees: Vec<&str> = json["trees"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(trees, ["app/vendor/charts/db", "app/vendor/charts/web"]);
    if !have("git", "deps-helm") {
        return;
    }
    // A change inside a chart's folder affects the folder; a file beside the charts does not.
    let affected = |path: &str| ours(&["affected", "--changed", path, "app"], &tmp.root).stdout;
    assert_eq!(affected("app/vendor/charts/web/templates/cm.yaml"), "app\n");
    assert_eq!(affected("app/vendor/charts/db/templates/new.yaml"), "app\n", "an added template");
    assert_eq!(affected("app/extra/more.yaml"), "app\n");
    assert_eq!(affected("app/extra/unused.yaml"), "");
    assert_eq!(affected("app/vendor/charts/README.md"), "");
}

/// An exec plugin (a program in the plugin home named by the config's apiVersion and kind) and an
/// exec KRM function (`config.kubernetes.io/function: exec: path`): the config files and the
/// `argsFromFile` file are read, the programs listed (what they read on their own is theirs).
#[test]
fn deps_of_exec_plugins_lists_their_configs_and_programs() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempTree::new("deps-plugins");
    let program = "plugins/example.com/v1/labeller/Labeller";
    tmp.write(program, "#!/bin/sh\ncat\n");
    tmp.write("app/fn.sh", "#!/bin/sh\ncat\n");
    for path in [program, "app/fn.sh"] {
        std::fs::set_permissions(tmp.path(path), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\ntransformers:\n- labeller.yaml\n- function.yaml\n");
    tmp.write("app/cm.yaml", CM);
    tmp.write("app/labeller.yaml", "apiVersion: example.com/v1\nkind: Labeller\nmetadata:\n  name: l\nargsFromFile: args.txt\n");
    tmp.write("app/args.txt", "--one\n--two\n");
    tmp.write(
        "app/function.yaml",
        "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n",
    );
    let home = tmp.path("plugins");
    let env = [("KUSTOMIZE_PLUGIN_HOME", home.to_str().unwrap())];
    let run = common::ours_env(&["deps", "--format", "json", "app"], &tmp.root, &env);
    assert!(run.success(), "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let list = |field: &str| -> Vec<String> { json[0][field].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect() };
    assert_eq!(list("files"), ["app/args.txt", "app/cm.yaml", "app/function.yaml", "app/kustomization.yaml", "app/labeller.yaml"]);
    assert_eq!(list("programs"), ["app/fn.sh", program]);
    // The build with the plugins enabled runs exactly those programs and reads those files.
    let build = common::ours_env(&["build", "app", "--enable-alpha-plugins", "--enable-exec"], &tmp.root, &env);
    assert!(build.success(), "{}", build.stderr);
    if have("strace", "deps-plugins") {
        let log = tmp.path(".strace.log");
        let status = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=openat,execve", "-e", "status=successful", "-o"])
            .arg(&log)
            .arg(common::bin())
            .args(["build", "app", "--enable-alpha-plugins", "--enable-exec", "-o", "/dev/null"])
            .env("KUSTOMIZE_PLUGIN_HOME", &home)
            .current_dir(&tmp.root)
            .status()
            .expect("strace runs");
        assert!(status.success());
        let text = std::fs::read_to_string(&log).unwrap();
        let prefix = format!("{}/", tmp.root.display());
        let touched: BTreeSet<String> = text
            .lines()
            .filter_map(|line| line.split('"').nth(1))
            .filter_map(|path| path.strip_prefix(&prefix))
            .filter(|path| tmp.path(path).is_file())
            // A program runs as its config names it (`app/./fn.sh`).
            .map(|path| peerpods_build::kustomization::loader::normalize(Path::new(path)).display().to_string())
            .collect();
        let mut expected: BTreeSet<String> = list("files").into_iter().collect();
        expected.extend(list("programs"));
        assert_eq!(touched, expected);
    }
}

/// One run over many roots shares the walks of their common folders: each root's set is the
/// set it has alone.
#[test]
fn deps_of_many_roots_in_one_run_equals_each_alone() {
    let tmp = TempTree::new("deps-shared");
    let workload = crate::generator::Workload { apps: 3, overlays: 3, seed: 7 };
    let mut files = workload.files();
    files.retain(|path, _| !path.starts_with("envs/") && path != "workload.json");
    for (path, text) in &files {
        tmp.write(path, text);
    }
    let roots: Vec<&str> =
        files.keys().filter(|p| p.contains("/overlays/") && p.ends_with("kustomization.yaml")).map(|p| p.trim_end_matches("/kustomization.yaml")).collect();
    assert!(roots.len() >= 6, "{roots:?}");
    let mut args = vec!["deps", "--format", "json"];
    args.extend(&roots);
    let run = ours(&args, &tmp.root);
    assert!(run.success(), "{}", run.stderr);
    let together: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    for (position, root) in roots.iter().enumerate() {
        let (_, alone) = deps_files(&tmp.root, root, &[]);
        assert_eq!(together[position], alone, "{root}");
    }
    // Folders whose reads depend on the includer: an `openapi` chosen above a base that names
    // its own (the outermost choice wins, so the base's schema is read only without one above),
    // and a base with `configurations`.
    let tmp = TempTree::new("deps-shared-openapi");
    tmp.write("base/kustomization.yaml", "resources:\n- cm.yaml\nopenapi:\n  path: base-schema.json\n");
    tmp.write("base/cm.yaml", CM);
    tmp.write("base/base-schema.json", "{\"definitions\": {}}\n");
    tmp.write("tables/kustomization.yaml", "resources:\n- ../base\nconfigurations:\n- config.yaml\n");
    tmp.write("tables/config.yaml", "namePrefix:\n- path: metadata/name\n");
    tmp.write("chooses/kustomization.yaml", "resources:\n- ../tables\nopenapi:\n  path: schema.json\n");
    tmp.write("chooses/schema.json", "{\"definitions\": {}}\n");
    tmp.write("plain/kustomization.yaml", "resources:\n- ../tables\n");
    for order in [["chooses", "plain"], ["plain", "chooses"]] {
        let run = ours(&["deps", "--format", "json", order[0], order[1]], &tmp.root);
        assert!(run.success(), "{}", run.stderr);
        let together: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        for (position, root) in order.iter().enumerate() {
            assert_eq!(together[position], deps_files(&tmp.root, root, &[]).1, "{order:?}: {root}");
        }
    }
    assert!(!deps_files(&tmp.root, "chooses", &[]).0.contains("base/base-schema.json"));
    assert!(deps_files(&tmp.root, "plain", &[]).0.contains("base/base-schema.json"));
}
