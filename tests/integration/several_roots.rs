//! `build DIR DIR... -o OUT/` over roots that share files: the builds run side by side and
//! read a shared base once, yet each file is what kustomize prints for its root alone, stderr
//! keeps the order the directories were given, and a failed root stops nothing else.
use std::fs;

use crate::common::{ours, reference_run, TempTree};

/// `apps/<app>/overlays/<env>` over `apps/<app>/base` and one component every overlay uses.
fn monorepo(label: &str, apps: usize, envs: &[&str]) -> (TempTree, Vec<String>) {
    let t = TempTree::new(label);
    t.write(
        "components/probe/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value:\n        probe: \"on\"\n",
    );
    let mut roots = Vec::new();
    for app in 0..apps {
        let base = format!("apps/a{app}/base");
        // The generator's sources are shared files too: each overlay of the app reads them.
        t.write(
            &format!("{base}/kustomization.yaml"),
            "resources:\n- deployment.yaml\n- service.yaml\nconfigMapGenerator:\n- name: settings\n  literals: [LEVEL=info]\n  envs: [extra.env]\n  files: [app.properties]\n",
        );
        t.write(&format!("{base}/extra.env"), &format!("# shared\nAPP=a{app}\nREPLICAS=2\n"));
        t.write(&format!("{base}/app.properties"), &format!("name=a{app}\nport=80\n"));
        t.write(
            &format!("{base}/deployment.yaml"),
            &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a{app}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: registry.example/a{app}:1\n        envFrom:\n        - configMapRef:\n            name: settings\n"),
        );
        t.write(&format!("{base}/service.yaml"), &format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: a{app}\nspec:\n  ports:\n  - port: 80\n"));
        for env in envs {
            let root = format!("apps/a{app}/overlays/{env}");
            t.write(
                &format!("{root}/kustomization.yaml"),
                &format!("resources:\n- ../../base\ncomponents:\n- ../../../../components/probe\nnamePrefix: {env}-\nimages:\n- name: registry.example/a{app}\n  newTag: \"{env}\"\n"),
            );
            roots.push(root);
        }
    }
    (t, roots)
}

fn output_name(root: &str) -> String {
    format!("{}.yaml", root.replace('/', "_"))
}

#[test]
fn roots_sharing_a_base_are_written_as_each_builds_alone_and_as_kustomize_prints_it() {
    let (t, roots) = monorepo("several-roots-shared", 3, &["dev", "prod", "qa"]);
    let mut args = vec!["build"];
    args.extend(roots.iter().map(String::as_str));
    args.extend(["-o", "out/"]);
    let run = ours(&args, &t.root);
    assert!(run.success(), "{}", run.stderr);
    for root in &roots {
        let written = fs::read_to_string(t.path(&format!("out/{}", output_name(root)))).unwrap();
        let alone = ours(&["build", root], &t.root);
        assert!(alone.success(), "{root}: {}", alone.stderr);
        assert_eq!(written, alone.stdout, "{root}: the file differs from the root's own build");
        assert!(written.contains(&format!("name: {}-a", root.rsplit('/').next().unwrap())), "{root}: {written}");
        if let Some(reference) = reference_run(&[root.as_str()], &t.root, "several roots against kustomize") {
            assert!(reference.success(), "{root}: {}", reference.stderr);
            assert_eq!(written, reference.stdout, "{root}: the file differs from kustomize's build of the root");
        }
    }
}

/// The first root is much the largest: the builds after it are done long before it, yet their
/// warnings and errors come after its own, in the order given.
#[test]
fn stderr_keeps_the_order_given_when_a_late_root_finishes_first() {
    let t = TempTree::new("several-roots-order");
    let mut big = String::new();
    for i in 0..3000 {
        big.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: v{i}\n"));
    }
    t.write("big/configmaps.yaml", &big);
    // `commonLabels` is deprecated: kustomize warns, naming no folder.
    t.write("big/kustomization.yaml", "resources:\n- configmaps.yaml\ncommonLabels:\n  size: big\n");
    t.write("small/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\n");
    t.write("small/kustomization.yaml", "resources:\n- cm.yaml\nimageTags: []\n");
    t.write("broken/kustomization.yaml", "resources:\n- missing.yaml\n");
    t.write("last/kustomization.yaml", "resources:\n- ../small/cm.yaml\nbases: []\n");
    let run = ours(&["build", "big", "small", "broken", "last", "--load-restrictor", "LoadRestrictionsNone", "-o", "out/"], &t.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let at = |needle: &str| run.stderr.find(needle).unwrap_or_else(|| panic!("{needle} not in: {}", run.stderr));
    let order = [at("'commonLabels' is deprecated"), at("'imageTags' is deprecated"), at("Error: broken: "), at("'bases' is deprecated"), at("1 of 4 builds failed")];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "stderr out of order: {}", run.stderr);
    for file in ["big.yaml", "small.yaml", "last.yaml"] {
        assert!(t.path(&format!("out/{file}")).is_file(), "{file} missing");
    }
    assert!(!t.path("out/broken.yaml").exists());
}

/// Many roots, each worker taking a few in a row: every file is its root's own build, and the
/// errors come in the order the roots were given.
#[test]
fn many_roots_taken_a_few_at_a_time_keep_their_order() {
    let (t, roots) = monorepo("several-roots-runs", 100, &["dev", "prod", "qa", "stage"]);
    let broken = [5, 6, 150, 333, 399];
    for &i in &broken {
        t.write(&format!("{}/kustomization.yaml", roots[i]), "resources:\n- ../../base\n- missing.yaml\n");
    }
    let mut args = vec!["build"];
    args.extend(roots.iter().map(String::as_str));
    args.extend(["-o", "out/"]);
    let run = ours(&args, &t.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let errors: Vec<&str> = run.stderr.lines().filter_map(|l| l.strip_prefix("Error: ")).filter_map(|l| l.split(':').next()).collect();
    let expected: Vec<&str> = broken.iter().map(|&i| roots[i].as_str()).chain(["5 of 400 builds failed"]).collect();
    assert_eq!(errors, expected, "errors out of order:\n{}", run.stderr);
    for (i, root) in roots.iter().enumerate().filter(|(i, _)| i % 23 == 0 && !broken.contains(i)) {
        let alone = ours(&["build", root], &t.root);
        assert!(alone.success(), "{root}: {}", alone.stderr);
        assert_eq!(fs::read_to_string(t.path(&format!("out/{}", output_name(root)))).unwrap(), alone.stdout, "root {i}: {root}");
    }
}

/// A root that fails keeps its earlier file and stops nothing; the others are written, and
/// the run says how many failed, naming the root before kustomize's words.
#[test]
fn a_failing_root_among_good_ones_stops_nothing_and_keeps_its_earlier_file() {
    let (t, roots) = monorepo("several-roots-failing", 2, &["dev", "prod"]);
    let mut args = vec!["build"];
    args.extend(roots.iter().map(String::as_str));
    args.extend(["-o", "out/"]);
    assert!(ours(&args, &t.root).success());
    let broken = &roots[1];
    let earlier = fs::read_to_string(t.path(&format!("out/{}", output_name(broken)))).unwrap();
    t.write(&format!("{broken}/kustomization.yaml"), "resources:\n- ../../base\n- missing.yaml\n");
    // Each good root's file is rewritten: make them stale first.
    for root in roots.iter().filter(|r| *r != broken) {
        t.write(&format!("out/{}", output_name(root)), "stale: true\n");
    }
    let run = ours(&args, &t.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("Error: {broken}: ")), "{}", run.stderr);
    assert!(run.stderr.contains("missing.yaml"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("1 of {} builds failed", roots.len())), "{}", run.stderr);
    assert_eq!(fs::read_to_string(t.path(&format!("out/{}", output_name(broken)))).unwrap(), earlier, "the failed root's file changed");
    for root in roots.iter().filter(|r| *r != broken) {
        let alone = ours(&["build", root], &t.root);
        assert_eq!(fs::read_to_string(t.path(&format!("out/{}", output_name(root)))).unwrap(), alone.stdout, "{root}");
    }
}

/// A shared file edited between two runs is read again; a file already holding its build is
/// left as it is (same inode), the others are replaced.
#[cfg(unix)]
#[test]
fn a_shared_file_edited_between_runs_is_read_again() {
    use std::os::unix::fs::MetadataExt;
    let (t, roots) = monorepo("several-roots-edited", 2, &["dev", "prod"]);
    let mut args = vec!["build"];
    args.extend(roots.iter().map(String::as_str));
    args.extend(["-o", "out/"]);
    assert!(ours(&args, &t.root).success());
    let inode = |root: &str| fs::metadata(t.path(&format!("out/{}", output_name(root)))).unwrap().ino();
    let before: Vec<u64> = roots.iter().map(|r| inode(r)).collect();
    // The same size, other bytes: only the content can tell.
    t.write("apps/a0/base/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: a0\nspec:\n  ports:\n  - port: 81\n");
    t.write("apps/a0/base/app.properties", "name=a0\nport=81\n");
    let run = ours(&args, &t.root);
    assert!(run.success(), "{}", run.stderr);
    for (root, inode_before) in roots.iter().zip(&before) {
        let written = fs::read_to_string(t.path(&format!("out/{}", output_name(root)))).unwrap();
        assert_eq!(written, ours(&["build", root], &t.root).stdout, "{root}");
        if root.starts_with("apps/a0/") {
            assert!(written.contains("port: 81"), "{root}: the edited base was not read again");
            assert!(written.contains("port=81"), "{root}: the edited generator source was not read again");
            assert_ne!(inode(root), *inode_before, "{root}: a changed file is replaced");
        } else {
            assert_eq!(inode(root), *inode_before, "{root}: an unchanged file was rewritten");
        }
    }
}

/// The names of the files in `dir` that a write left behind half-done.
fn temporary_files(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".peerpods-build.tmp")).collect()
}

/// An output folder named through a link: the files land in the folder it leads to, each whole
/// (what the root's own build prints), and no temporary file is left, fresh or rewritten.
#[cfg(unix)]
#[test]
fn an_output_folder_through_a_link_gets_whole_files_and_no_temporary_ones() {
    let (t, roots) = monorepo("several-roots-linked-out", 2, &["dev", "prod"]);
    fs::create_dir(t.path("real-out")).unwrap();
    t.symlink("real-out", "out");
    let mut args = vec!["build"];
    args.extend(roots.iter().map(String::as_str));
    args.extend(["-o", "out/"]);
    for round in ["fresh", "one file stale"] {
        let run = ours(&args, &t.root);
        assert!(run.success(), "{round}: {}", run.stderr);
        assert!(fs::symlink_metadata(t.path("out")).unwrap().file_type().is_symlink(), "{round}: the link was replaced");
        for root in &roots {
            let written = fs::read_to_string(t.path(&format!("real-out/{}", output_name(root)))).unwrap();
            assert_eq!(written, ours(&["build", root], &t.root).stdout, "{round}: {root}");
        }
        assert_eq!(temporary_files(&t.path("real-out")), Vec::<String>::new(), "{round}");
        t.write(&format!("real-out/{}", output_name(&roots[0])), "stale: true\n");
    }
}

/// One folder given twice, spelled two ways (`./x/`, through a link to it): both would be written
/// to one file, so the run is refused before anything is built or written.
#[cfg(unix)]
#[test]
fn a_root_given_twice_through_two_spellings_is_refused() {
    let (t, roots) = monorepo("several-roots-twice", 1, &["dev"]);
    t.symlink("apps/a0/overlays/dev", "dev-link");
    for other in [format!("./{}/", roots[0]), format!("{}/../dev", roots[0]), "dev-link".to_string()] {
        let run = ours(&["build", &roots[0], &other, "-o", "out/"], &t.root);
        assert_eq!(run.code, Some(1), "{other}: {}", run.stderr);
        assert!(run.stderr.contains("two directories would both be written to apps_a0_overlays_dev.yaml"), "{other}: {}", run.stderr);
        assert!(!t.path("out").exists() || fs::read_dir(t.path("out")).unwrap().next().is_none(), "{other}: something was written");
    }
}

/// A root named through a link, whose file links out of it: refused under
/// `LoadRestrictionsRootOnly` with the words of the root's own build (and kustomize's), while
/// the root beside it is written.
#[cfg(unix)]
#[test]
fn a_root_through_a_link_reading_a_file_outside_it_is_refused_as_alone() {
    let (t, roots) = monorepo("several-roots-escape", 1, &["dev"]);
    t.write("outside/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\n");
    t.write("apps/a0/overlays/leaky/kustomization.yaml", "resources:\n- secret.yaml\n");
    t.symlink("../../../../outside/secret.yaml", "apps/a0/overlays/leaky/secret.yaml");
    t.symlink("apps/a0/overlays/leaky", "leaky-link");
    let alone = ours(&["build", "leaky-link"], &t.root);
    assert!(!alone.success(), "{}", alone.stdout);
    let words = alone.stderr.lines().find(|l| l.contains("secret.yaml")).unwrap_or_else(|| panic!("{}", alone.stderr)).trim_start_matches("Error: ").to_string();
    if let Some(reference) = reference_run(&["leaky-link"], &t.root, "a root through a link reading outside it") {
        assert!(!reference.success(), "kustomize built it: {}", reference.stdout);
        assert!(reference.stderr.contains("is not in or below"), "{}", reference.stderr);
        assert!(words.contains("is not in or below"), "{words}");
    }
    let run = ours(&["build", "leaky-link", &roots[0], "-o", "out/"], &t.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("Error: leaky-link: {words}")), "{}", run.stderr);
    assert!(run.stderr.contains("1 of 2 builds failed"), "{}", run.stderr);
    assert!(!t.path("out/apps_a0_overlays_leaky.yaml").exists());
    assert_eq!(fs::read_to_string(t.path(&format!("out/{}", output_name(&roots[0])))).unwrap(), ours(&["build", &roots[0]], &t.root).stdout);
    assert!(fs::read_dir(t.path("out")).unwrap().flatten().all(|e| !fs::read_to_string(e.path()).unwrap_or_default().contains("leaked")));
}
