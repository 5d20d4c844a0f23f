//! `localize`: kustomize's localizer tests as fixtures (input tree, expected tree), the shared
//! realworld and conformance cases localized and built offline with the reference to the same
//! bytes as the originals, and remote bases (file:// and loopback HTTP git, an HTTP file).
//!
//! A fixture is `tests/localize_fixtures/<case>/`: `input/` (the tree, copied to a scratch
//! folder), `expected/` (the destination tree, exactly) and `case.txt` (`target=`, `scope=`,
//! `error=` expected on stderr instead of a tree, `mkdir=`/`expect_dir=` for empty folders,
//! which git cannot hold).
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{manifest_dir, ours, reference, run_program, shared_dir, skip, TempTree};
use crate::remote::{Repos, Server};

pub(crate) struct Fixture {
    pub(crate) target: String,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) mkdirs: Vec<String>,
    pub(crate) expect_dirs: Vec<String>,
}

pub(crate) fn read_fixture(dir: &Path) -> Fixture {
    let text = fs::read_to_string(dir.join("case.txt")).expect("case.txt");
    let mut fixture = Fixture { target: ".".into(), scope: None, error: None, mkdirs: vec![], expect_dirs: vec![] };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (key, value) = line.split_once('=').unwrap_or_else(|| panic!("{}: bad line {line:?}", dir.display()));
        let value = value.to_string();
        match key {
            "target" => fixture.target = value,
            "scope" => fixture.scope = Some(value),
            "error" => fixture.error = Some(value),
            "mkdir" => fixture.mkdirs.push(value),
            "expect_dir" => fixture.expect_dirs.push(value),
            other => panic!("{}: unknown key {other}", dir.display()),
        }
    }
    fixture
}

/// Every file (with its bytes) and every folder under `dir`, relative, sorted.
pub(crate) fn tree_of(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                out.push((format!("{rel}/"), None));
                walk(base, &entry.path(), out);
            } else {
                out.push((rel, Some(fs::read(entry.path()).unwrap())));
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// The folders of a tree of files, as `tree_of` lists them.
pub(crate) fn with_folders(files: Vec<(String, Option<Vec<u8>>)>, extra_dirs: &[String]) -> Vec<(String, Option<Vec<u8>>)> {
    let mut all = files;
    let mut dirs: Vec<String> = extra_dirs.iter().map(|d| format!("{d}/")).collect();
    for (path, _) in &all {
        let mut at = Path::new(path.trim_end_matches('/')).parent();
        while let Some(dir) = at.filter(|d| !d.as_os_str().is_empty()) {
            dirs.push(format!("{}/", dir.display()));
            at = dir.parent();
        }
    }
    for dir in extra_dirs {
        let mut at = Path::new(dir).parent();
        while let Some(parent) = at.filter(|d| !d.as_os_str().is_empty()) {
            dirs.push(format!("{}/", parent.display()));
            at = parent.parent();
        }
    }
    all.extend(dirs.into_iter().map(|d| (d, None)));
    all.sort();
    all.dedup();
    all
}

pub(crate) fn show(tree: &[(String, Option<Vec<u8>>)]) -> String {
    tree.iter()
        .map(|(path, content)| match content {
            Some(bytes) => format!("== {path}\n{}\n", String::from_utf8_lossy(bytes)),
            None => format!("== {path}\n"),
        })
        .collect()
}

pub(crate) fn localize_args<'a>(target: &'a str, scope: Option<&'a str>, dest: &'a str, verify: bool) -> Vec<&'a str> {
    let mut args = vec!["localize", target, dest];
    if let Some(scope) = scope {
        args.extend(["--scope", scope]);
    }
    if !verify {
        args.push("--no-verify");
    }
    args
}

#[test]
fn kustomize_localizer_tests_as_fixtures() {
    let root = manifest_dir().join("tests/localize_fixtures");
    let mut names: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert!(names.len() >= 40, "fixtures missing in {}", root.display());
    let mut failures = Vec::new();
    for name in &names {
        let dir = root.join(name);
        let fixture = read_fixture(&dir);
        let tree = TempTree::new("localize-fixture");
        crate::common::copy_dir(&dir.join("input"), &tree.path("in"));
        for extra in &fixture.mkdirs {
            tree.mkdir(&format!("in/{extra}"));
        }
        let target = format!("in/{}", fixture.target);
        let scope = fixture.scope.as_ref().map(|s| format!("in/{s}"));
        let run = ours(&localize_args(&target, scope.as_deref(), "dst", false), &tree.root);
        match &fixture.error {
            Some(error) => {
                if run.code != Some(1) || !run.stderr.contains(error.as_str()) || tree.path("dst").exists() {
                    failures.push(format!("{name}: expected exit 1 with {error:?} and no dst; got {:?}:\n{}", run.code, run.stderr));
                }
            }
            None => {
                if !run.success() {
                    failures.push(format!("{name}: failed:\n{}", run.stderr));
                    continue;
                }
                let expected: Vec<_> = tree_of(&dir.join("expected")).into_iter().filter(|(_, c)| c.is_some()).collect();
                let expected = with_folders(expected, &fixture.expect_dirs);
                let actual = tree_of(&tree.path("dst"));
                if expected != actual {
                    failures.push(format!("{name}: destination differs\n--- expected\n{}--- actual\n{}", show(&expected), show(&actual)));
                }
                // The source tree is left as it was.
                let mut source = tree_of(&dir.join("input"));
                source.retain(|(_, c)| c.is_some());
                let source = with_folders(source, &fixture.mkdirs);
                if source != tree_of(&tree.path("in")) {
                    failures.push(format!("{name}: the source tree changed"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n{}", failures.len(), names.len(), failures.join("\n"));
}

#[test]
fn the_destination_must_be_new_and_messages_are_kustomizes() {
    let tree = TempTree::new("localize-cli");
    tree.write("app/kustomization.yaml", "resources:\n- pod.yaml\nnamePrefix: p-\n");
    tree.write("app/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n");
    tree.mkdir("taken");
    let run = ours(&["localize", "app", "taken"], &tree.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("invalid localize destination \"taken\": localize destination \"taken\" already exists"), "{}", run.stderr);
    let run = ours(&["localize", "app", "no/such/parent"], &tree.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("unable to create localize destination directory"), "{}", run.stderr);
    assert_eq!(ours(&["localize", "a", "b", "c"], &tree.root).code, Some(2));

    // Default destination, in the current folder; verification on.
    let run = ours(&["localize"], &tree.path("app"));
    assert!(run.success(), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let dest = tree.path("app/localized-app").display().to_string();
    assert!(run.stderr.contains(&format!("VERIFICATION SUCCESS: `kustomize build` for . and {dest} are the same after localization.")), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("SUCCESS: localized \".\" to directory {dest}")), "{}", run.stderr);
    // The destination inside the target holds the copy, and only the copy.
    assert_eq!(fs::read_to_string(tree.path("app/localized-app/pod.yaml")).unwrap(), fs::read_to_string(tree.path("app/pod.yaml")).unwrap());
    assert_eq!(crate::common::files_under(&tree.path("app/localized-app")), ["kustomization.yaml", "pod.yaml"]);
}

#[cfg(unix)]
#[test]
fn symlinks_are_resolved_and_none_leads_outside() {
    let tree = TempTree::new("localize-links");
    tree.write("app/real/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n");
    tree.symlink("real/pod.yaml", "app/link.yaml");
    tree.write("app/kustomization.yaml", "resources:\n- link.yaml\n");
    let run = ours(&["localize", "app", "copy"], &tree.root);
    assert!(run.success(), "{}", run.stderr);
    // As kustomize does, the copy is at the file's real place, and the entry says so.
    assert_eq!(fs::read_to_string(tree.path("copy/kustomization.yaml")).unwrap(), "resources:\n- real/pod.yaml\n");
    assert_eq!(crate::common::files_under(&tree.path("copy")), ["kustomization.yaml", "real/pod.yaml"]);

    tree.write("secret.env", "TOKEN=1\n");
    tree.symlink("../secret.env", "leaky/app.env");
    tree.write("leaky/kustomization.yaml", "configMapGenerator:\n- name: c\n  envs:\n  - app.env\n");
    let run = ours(&["localize", "leaky", "leaky-copy"], &tree.root);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("is not in or below"), "{}", run.stderr);
    assert!(!tree.path("leaky-copy").exists(), "a failed run leaves its destination behind");
}

/// One shared case: its build folder, flags and expected output.
#[derive(Clone)]
struct SharedCase {
    dir: PathBuf,
    build: String,
    flags: Vec<String>,
}

fn shared_cases(suite: &Path) -> Vec<SharedCase> {
    let mut cases = Vec::new();
    let Ok(entries) = fs::read_dir(suite) else { return cases };
    for entry in entries.flatten() {
        let Ok(text) = fs::read_to_string(entry.path().join("case.json")) else { continue };
        let case: serde_json::Value = serde_json::from_str(&text).expect("case.json");
        let flags: Vec<String> = case["flags"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(String::from)).collect();
        // localize reads files as LoadRestrictionsRootOnly does, and runs no plugin.
        let localizable = case["expect"] == "output" && !flags.iter().any(|f| f.contains("LoadRestrictionsNone") || f.contains("enable"));
        if localizable {
            cases.push(SharedCase { dir: entry.path(), build: case["build"].as_str().unwrap_or(".").to_string(), flags });
        }
    }
    cases.sort_by(|a, b| a.dir.cmp(&b.dir));
    cases
}

/// Localizes a shared case (scope: its `files/` folder) and builds the copy with the reference;
/// an error when it differs from the original's output. `Ok(false)` when localize refuses the
/// case as kustomize's localize does (a file in `bases`, a reference it cannot follow).
fn check_shared_case(case: &SharedCase, command: &[String]) -> Result<bool, String> {
    let tree = TempTree::new("localize-shared");
    let files = case.dir.join("files");
    let target = files.join(&case.build);
    let (target_text, scope_text) = (target.display().to_string(), files.display().to_string());
    let run = ours(&localize_args(&target_text, Some(&scope_text), "dst", false), &tree.root);
    if !run.success() {
        // kustomize's localize refuses these too: a reference out of the scope or the root, a
        // file in `bases`, a folder of plugin configurations in `generators`/`transformers`.
        let refused_as_kustomize_does = ["outside localize scope", "is not in or below", "must build at directory"];
        let plugin_folder = run.stderr.contains("unable to load resource entry") && run.stderr.contains("must resolve to a file");
        if plugin_folder || refused_as_kustomize_does.iter().any(|r| run.stderr.contains(r)) {
            return Ok(false);
        }
        return Err(format!("{}: localize failed:\n{}", case.dir.display(), run.stderr));
    }
    let build = |dir: &Path| {
        let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
        let dir = dir.display().to_string();
        args.push(&dir);
        args.extend(case.flags.iter().map(String::as_str));
        let run = run_program(&command[0], &args, &tree.root);
        (run.code, run.stdout)
    };
    let localized = build(&tree.path("dst").join(&case.build));
    let name = case.dir.file_name().unwrap_or_default().to_string_lossy();
    if let Some((_, why)) = NOT_LOCALIZED_BY_KUSTOMIZE.iter().find(|(case, _)| name == *case) {
        // kustomize's localizer leaves this file behind as well: the copy cannot build.
        return if localized.0 == Some(0) { Err(format!("{name}: expected the copy not to build ({why})")) } else { Ok(false) };
    }
    let expected = fs::read_to_string(case.dir.join("expected.yaml")).unwrap_or_default();
    // expected.yaml may come from another kustomize version: then the reference builds the original too.
    if localized.0 == Some(0) && localized.1 == expected {
        return Ok(true);
    }
    let original = build(&target);
    if original == localized {
        Ok(true)
    } else {
        Err(format!("{}: the localized copy builds differently (exit {:?} vs {:?})", case.dir.display(), localized.0, original.0))
    }
}

/// Cases whose build reads a file through a field kustomize's localizer does not know, so that
/// its copy (and ours) lacks the file.
const NOT_LOCALIZED_BY_KUSTOMIZE: &[(&str, &str)] = &[
    ("PatchTransformer__TestMultipleSMPatchesWithFilePath", "the plugin's field is spelled `Path`; the localizer looks at `path` only"),
    ("ValueAddTransformer__TestValueAddTransformer", "ValueAddTransformer's targetFilePath is not among the localized plugin fields"),
];

/// Runs `check` over `cases` on two threads; panics listing the failures.
fn check_all(label: &str, cases: &[SharedCase], command: &[String]) -> (usize, usize) {
    let results: Vec<Result<bool, String>> = std::thread::scope(|scope| {
        let halves: Vec<_> = cases.chunks(cases.len().div_ceil(2).max(1)).map(|chunk| scope.spawn(move || chunk.iter().map(|c| check_shared_case(c, command)).collect::<Vec<_>>())).collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let same = results.iter().filter(|r| matches!(r, Ok(true))).count();
    let refused = results.iter().filter(|r| matches!(r, Ok(false))).count();
    eprintln!("{label}: {same} localized copies build the same, {refused} refused as kustomize's localize refuses them, {} failures", failures.len());
    assert!(failures.is_empty(), "{label}:\n{}", failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n"));
    (same, refused)
}

/// Every `n`th case, so that the suite stays within seconds.
fn sample(cases: Vec<SharedCase>, n: usize) -> Vec<SharedCase> {
    cases.into_iter().enumerate().filter(|(i, _)| i % n == 0).map(|(_, c)| c).collect()
}

#[test]
fn localized_shared_cases_build_offline_as_the_originals() {
    let label = "localize-shared";
    let Some(shared) = shared_dir(label) else { return };
    let Some(command) = reference() else {
        skip(label, crate::common::NO_REFERENCE);
        return;
    };
    let realworld = shared_cases(&shared.join("realworld/cases"));
    assert!(realworld.len() > 50, "realworld cases missing");
    let (same, _) = check_all("realworld/cases", &realworld, command);
    assert!(same * 10 >= realworld.len() * 9, "too few realworld cases localized");
    check_all("realworld/public (sample)", &sample(shared_cases(&shared.join("realworld/public")), 12), command);
    let krusty = shared_cases(&shared.join("conformance/krusty"));
    let known: Vec<SharedCase> = krusty.iter().filter(|c| NOT_LOCALIZED_BY_KUSTOMIZE.iter().any(|(n, _)| c.dir.ends_with(n))).cloned().collect();
    check_all("conformance/krusty (sample)", &sample(krusty, 20), command);
    check_all("conformance/krusty (not localized by kustomize either)", &known, command);
}

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n";

#[test]
fn remote_bases_and_http_files_are_localized_and_build_offline() {
    let label = "localize-remote";
    let Some(repos) = Repos::or_skip(label) else { return };
    let tree = &repos.tree;
    tree.write("served/service.yaml", SERVICE);
    let mut server = Server::start(tree.path("repos"), tree.path("served"));
    let file_base = format!("{}//dev?ref=v1", repos.file_url("repo.git"));
    let http_base = format!("{}/git/nosuffix//base?ref=v2", server.url());
    let http_file = format!("{}/files/service.yaml", server.url());
    let component = format!("{}//component?ref=v1", repos.file_url("repo.git"));
    tree.write("overlay/kustomization.yaml", &format!("resources:\n- {file_base}\n- {http_base}\n- {http_file}\ncomponents:\n- {component}\nnamePrefix: o-\n"));
    let cache = tree.path("cache").display().to_string();
    let run = ours(&["localize", "overlay", "dst", "--cache-dir", &cache], &tree.root);
    assert!(run.success(), "{}", run.stderr);
    assert!(run.stderr.contains("VERIFICATION SUCCESS"), "{}", run.stderr);

    let repo_dir = tree.path("repos").display().to_string();
    let file_root = format!("localized-files/file-schemed{repo_dir}/repo/v1");
    let kustomization = fs::read_to_string(tree.path("dst/kustomization.yaml")).unwrap();
    assert_eq!(
        kustomization,
        format!(
            "components:\n- {file_root}/component\nnamePrefix: o-\nresources:\n- {file_root}/dev\n- localized-files/127.0.0.1/git/nosuffix/v2/base\n- localized-files/127.0.0.1/files/service.yaml\n"
        )
    );
    let dst = tree.path("dst");
    for file in [
        format!("{file_root}/dev/kustomization.yaml"),
        format!("{file_root}/base/kustomization.yaml"),
        format!("{file_root}/base/pod.yaml"),
        format!("{file_root}/component/kustomization.yaml"),
        "localized-files/127.0.0.1/git/nosuffix/v2/base/pod.yaml".to_string(),
    ] {
        assert!(dst.join(&file).is_file(), "{file} missing; tree:\n{}", show(&tree_of(&dst)));
    }
    assert_eq!(fs::read_to_string(dst.join("localized-files/127.0.0.1/files/service.yaml")).unwrap(), SERVICE);
    // Only what the bases read: the repository's other folders are not copied.
    assert!(!dst.join(format!("{file_root}/escape")).exists());

    // A remote target: its scope is the repository, the default destination names folder and ref.
    let run = ours(&["localize", &file_base, "--cache-dir", &cache], &tree.path("overlay"));
    assert!(run.success(), "{}", run.stderr);
    assert!(run.stderr.contains("VERIFICATION SUCCESS"), "{}", run.stderr);
    assert!(tree.path("overlay/localized-dev-v1/dev/kustomization.yaml").is_file(), "{}", show(&tree_of(&tree.path("overlay"))));
    let run = ours(&["localize", &file_base, "elsewhere", "--scope", "overlay", "--cache-dir", &cache], &tree.root);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("specified for remote localize target"), "{}", run.stderr);
    fs::remove_dir_all(tree.path("overlay/localized-dev-v1")).unwrap();
    // A root with a `localized-files` folder of its own has no room for remote content.
    tree.write("crowded/kustomization.yaml", &format!("resources:\n- {http_file}\n"));
    tree.mkdir("crowded/localized-files");
    let run = ours(&["localize", "crowded", "crowded-copy"], &tree.root);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("already contains localized-files needed to store file"), "{}", run.stderr);
    assert!(!tree.path("crowded-copy").exists());

    let Some(command) = reference() else {
        skip(label, crate::common::NO_REFERENCE);
        return;
    };
    let kustomize = |dir: &Path| {
        let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
        let dir = dir.display().to_string();
        args.push(&dir);
        run_program(&command[0], &args, &tree.root)
    };
    let original = kustomize(&tree.path("overlay"));
    assert!(original.success(), "{}", original.stderr);
    // Offline: no server, no repositories.
    server.stop();
    fs::remove_dir_all(tree.path("repos")).unwrap();
    fs::remove_dir_all(tree.path("cache")).unwrap();
    let localized = kustomize(&dst);
    assert!(localized.success(), "{}", localized.stderr);
    assert_eq!(localized.stdout, original.stdout);
}

#[test]
fn absolute_paths_inside_the_root_become_relative() {
    // kustomize's TestLocalizeResources: `/a/b/pod2.yaml` in the root `/a/b` is written `pod2.yaml`.
    let tree = TempTree::new("localize-absolute");
    tree.write("a/b/pod2.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: two\n");
    let absolute = tree.path("a/b/pod2.yaml").display().to_string();
    tree.write("a/b/kustomization.yaml", &format!("resources:\n- {absolute}\n"));
    let run = ours(&["localize", "a/b", "dst", "--scope", "a"], &tree.root);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(fs::read_to_string(tree.path("dst/b/kustomization.yaml")).unwrap(), "resources:\n- pod2.yaml\n");
    assert!(tree.path("dst/b/pod2.yaml").is_file());
}

#[test]
fn a_copy_that_does_not_build_fails_verification() {
    // The localizer looks at a plugin's `path` only; `Path` (which the build accepts) stays behind,
    // in kustomize as here, and the copy's build fails.
    let tree = TempTree::new("localize-verify");
    tree.write("app/kustomization.yaml", "resources:\n- pod.yaml\ntransformers:\n- t.yaml\n");
    tree.write("app/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n");
    tree.write("app/t.yaml", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: t\nPath: patch.yaml\n");
    tree.write("app/patch.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    patched: \"yes\"\n");
    let run = ours(&["localize", "app", "copy"], &tree.root);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("If your target directory requires flags to build"), "{}", run.stderr);
    assert!(!run.stderr.contains("SUCCESS"), "{}", run.stderr);
    // Localizing itself succeeded: the copy stays, for the user to look at.
    assert!(tree.path("copy/t.yaml").is_file());
    assert!(!tree.path("copy/patch.yaml").exists());
    assert!(ours(&["localize", "app", "copy2", "--no-verify"], &tree.root).success());
}

/// The README's example on a bundled overlay: with `--scope .` the copy builds as the overlay
/// does; without it, kustomize's error, then how `--scope` widens the scope, and nothing written.
#[test]
fn a_bundled_overlay_localizes_as_the_readme_prints_it() {
    let t = TempTree::new("localize-bundled");
    let dest = t.path("libvirt-offline").display().to_string();
    let narrow = ours(&localize_args("overlays/libvirt", None, &dest, true), &manifest_dir());
    assert_eq!(narrow.code, Some(1), "{}", narrow.stderr);
    assert!(narrow.stderr.contains("outside localize scope"), "kustomize's words first: {}", narrow.stderr);
    assert!(narrow.stderr.contains("the scope defaults to the target's folder; --scope DIR widens it"), "{}", narrow.stderr);
    assert!(!t.path("libvirt-offline").exists(), "a refused localize leaves nothing");

    let wide = ours(&localize_args("overlays/libvirt", Some("."), &dest, true), &manifest_dir());
    assert!(wide.success(), "{}", wide.stderr);
    assert!(wide.stderr.contains("VERIFICATION SUCCESS"), "{}", wide.stderr);
    assert!(t.path("libvirt-offline/overlays/libvirt/kustomization.yaml").is_file());
    assert!(t.path("libvirt-offline/base/kustomization.yaml").is_file());
}
