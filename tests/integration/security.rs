//! What a build run on an untrusted tree may read and write: the kustomization file goes through
//! the load restrictor, `-o` writes only where it was told, through exclusive temporary files
//! that keep the destination's mode and never stay behind; and what kustomize refuses (absolute
//! roots, validators, `.nan`), we refuse. Compared with the reference kustomize where installed.
#![cfg(unix)]

use crate::common;

use common::{files_under, ours, reference_run, TempTree};
use pretty_assertions::assert_eq;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n";

/// Text no file of a build ever contains: it must never reach stdout or stderr.
const SECRET: &str = "SECRET-d41d8cd98f00b204";

/// A failed run whose stderr says `wording`, compared with the reference's failure.
fn assert_refused(r: &common::Run, wording: &str, what: &str) {
    assert!(!r.success(), "{what}: expected a failure, got:\n{}", r.stdout);
    assert!(r.stderr.contains(wording), "{what}: stderr does not say '{wording}':\n{}", r.stderr);
}

fn reference_fails_with(args: &[&str], cwd: &Path, wording: &str, what: &str) {
    if let Some(reference) = reference_run(args, cwd, what) {
        assert!(!reference.success(), "{what}: the reference succeeds; the test premise is wrong:\n{}", reference.stdout);
        assert!(reference.stderr.contains(wording), "{what}: the reference says:\n{}", reference.stderr);
    }
}

// ---------------------------------------------------------------------------
// The kustomization file itself goes through the load restrictor

#[test]
fn kustomization_file_linked_outside_the_root_is_not_found() {
    for name in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
        let tmp = TempTree::new("kfile-escape");
        tmp.write("outside.yaml", "resources:\n- cm.yaml\n");
        tmp.write("app/cm.yaml", CONFIGMAP);
        tmp.symlink("../outside.yaml", &format!("app/{name}"));
        let app = tmp.path("app");
        let not_found = format!(
            "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
            app.display()
        );

        let refused = ours(&["build", s(&app)], &tmp.root);
        assert_refused(&refused, &not_found, name);
        reference_fails_with(&[s(&app)], &tmp.root, &not_found, name);

        // Without the restrictor the link is followed, as kustomize follows it.
        let allowed = ours(&["build", s(&app), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root);
        assert!(allowed.success(), "{name}: refused with LoadRestrictionsNone:\n{}", allowed.stderr);
        assert!(allowed.stdout.contains("name: cm"), "{name}: {}", allowed.stdout);
        if let Some(reference) = reference_run(&[s(&app), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root, name) {
            assert_eq!(allowed.stdout, reference.stdout, "{name}: differs from the reference");
        }
    }
}

#[test]
fn kustomization_file_linked_to_a_secret_never_shows_its_content() {
    let tmp = TempTree::new("kfile-secret");
    // Not YAML a kustomization can be: the old parse error printed the whole text.
    tmp.write("etc/passwd", &format!("root:x:0:0:{SECRET}:/root:/bin/bash\n"));
    tmp.symlink("../etc/passwd", "app/kustomization.yaml");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    assert_refused(&r, "unable to find one of", "a link to a password file");
    assert!(!r.stderr.contains(SECRET), "the refused file's content was printed:\n{}", r.stderr);
    reference_fails_with(&[s(&app)], &tmp.root, "unable to find one of", "a link to a password file");

    // Even where the restrictor lets it through, the error names the type, not the text.
    let open = ours(&["build", s(&app), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root);
    assert_refused(&open, "json: cannot unmarshal string into Go value of type types.Kustomization", "LoadRestrictionsNone");
    assert!(!open.stderr.contains(SECRET), "the file's content was printed:\n{}", open.stderr);
}

#[test]
fn kustomization_file_linked_inside_the_root_is_read() {
    let tmp = TempTree::new("kfile-inside");
    tmp.write("app/real/k.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.symlink("real/k.yaml", "app/kustomization.yaml");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert!(r.stdout.contains("name: cm"), "{}", r.stdout);
    if let Some(reference) = reference_run(&[s(&app)], &tmp.root, "a link inside the root") {
        assert_eq!(r.stdout, reference.stdout);
    }
}

// ---------------------------------------------------------------------------
// -o DIR writes only plain file names inside DIR

/// Builds `resources` into `out/` and returns the run; nothing may appear outside `out/`.
fn build_into_folder(tmp: &TempTree, resources: &str) -> common::Run {
    tmp.write("app/r.yaml", resources);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    tmp.mkdir("out");
    let before = files_under(&tmp.root);
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&tmp.path("out"))], &tmp.root);
    let after = files_under(&tmp.root);
    let new: Vec<&String> = after.iter().filter(|f| !before.contains(f)).collect();
    assert!(new.iter().all(|f| f.starts_with("out/") && !f[4..].contains('/')), "files written outside out/: {new:?}");
    r
}

#[test]
fn output_folder_refuses_names_that_would_leave_it() {
    let tmp = TempTree::new("o-escape");
    let victim = tmp.path("victim");
    let cases = [
        (format!("apiVersion: /{}/v1\nkind: ConfigMap\nmetadata:\n  name: a\n", victim.display()), "path separator"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../b\n".to_string(), "path separator"),
        ("apiVersion: a/b/c\nkind: X\nmetadata:\n  name: n\n".to_string(), "path separator"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a..b\n".to_string(), "'..'"),
        ("apiVersion: v1\nkind: ..\nmetadata:\n  name: a\n".to_string(), "'..'"),
    ];
    for (resource, wording) in &cases {
        fs::create_dir_all(&victim).unwrap();
        let r = build_into_folder(&tmp, &format!("{CONFIGMAP}---\n{resource}"));
        assert_refused(&r, wording, resource);
        assert!(files_under(&tmp.path("out")).is_empty(), "{resource}: some files were written: {:?}", files_under(&tmp.path("out")));
        assert!(files_under(&victim).is_empty(), "{resource}: written outside: {:?}", files_under(&victim));
    }
}

#[test]
fn output_folder_names_split_the_api_version_at_the_first_slash() {
    let tmp = TempTree::new("o-names");
    let r = build_into_folder(&tmp, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: Web\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(files_under(&tmp.path("out")), [".peerpods-build-files", "apps_v1_deployment_web.yaml", "v1_configmap_c.yaml"]);
    if reference_run(&["--help"], &tmp.root, "names").is_some() {
        let theirs = tmp.mkdir("theirs");
        let reference = reference_run(&[s(&tmp.path("app")), "-o", s(&theirs)], &tmp.root, "names").unwrap();
        assert!(reference.success(), "{}", reference.stderr);
        let ours: Vec<String> = files_under(&tmp.path("out")).into_iter().filter(|f| f != ".peerpods-build-files").collect();
        assert_eq!(ours, files_under(&theirs), "the resource files are named as kustomize names them");
    }
}

// ---------------------------------------------------------------------------
// Temporary files: exclusive, random, removed on failure; modes kept

#[test]
fn a_symlink_planted_at_the_temporary_name_is_not_followed() {
    let tmp = TempTree::new("o-planted");
    tmp.write("app/r.yaml", CONFIGMAP);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    let victim = tmp.write("victim.txt", "untouched\n");
    // The names a predictable scheme would use, for a file and for a folder of files.
    tmp.symlink(s(&victim), "out.peerpods-build.tmp");
    tmp.symlink(s(&victim), "dir/v1_configmap_cm.peerpods-build.tmp");
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&tmp.path("out.yaml"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    let r2 = ours(&["build", s(&tmp.path("app")), "-o", s(&tmp.path("dir"))], &tmp.root);
    assert!(r2.success(), "{}", r2.stderr);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched\n", "the build wrote through a planted symlink");
    assert!(fs::read_to_string(tmp.path("out.yaml")).unwrap().contains("name: cm"));
    assert!(fs::read_to_string(tmp.path("dir/v1_configmap_cm.yaml")).unwrap().contains("name: cm"));
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn an_existing_output_keeps_its_mode_and_a_new_one_gets_the_umasks() {
    let tmp = TempTree::new("o-mode");
    tmp.write("app/r.yaml", CONFIGMAP);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    let existing = tmp.write("out.yaml", "old\n");
    fs::set_permissions(&existing, fs::Permissions::from_mode(0o600)).unwrap();
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&existing)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert!(fs::read_to_string(&existing).unwrap().contains("name: cm"));
    assert_eq!(mode(&existing), 0o600, "the existing file's mode changed");

    // A new file: what any program's new file gets under this umask (0666 less the umask).
    let plain = tmp.write("plain.txt", "");
    let new = tmp.path("new.yaml");
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&new)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(mode(&new), mode(&plain), "a new output file's mode is not the umask's");

    let dir = tmp.mkdir("dir");
    let kept = tmp.write("dir/v1_configmap_cm.yaml", "old\n");
    fs::set_permissions(&kept, fs::Permissions::from_mode(0o640)).unwrap();
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&dir)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(mode(&kept), 0o640, "a file in the output folder lost its mode");
}

fn temporary_files(dir: &Path) -> Vec<String> {
    files_under(dir).into_iter().filter(|f| f.ends_with(".peerpods-build.tmp")).collect()
}

#[test]
fn a_failed_write_leaves_no_temporary_file() {
    let tmp = TempTree::new("o-litter");
    tmp.write("app/r.yaml", &format!("{CONFIGMAP}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz\n"));
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    let out = tmp.mkdir("out");
    // The second file cannot be renamed into place: a folder holds its name.
    tmp.mkdir("out/v1_configmap_zz.yaml/taken");
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&out)], &tmp.root);
    assert!(!r.success(), "writing over a folder succeeded");
    assert_eq!(temporary_files(&tmp.root), Vec::<String>::new(), "temporary files were left behind");
    assert!(r.stderr.contains("v1_configmap_zz.yaml"), "the error does not name the file:\n{}", r.stderr);
}

#[test]
fn a_stale_temporary_file_does_not_block_the_next_build() {
    let tmp = TempTree::new("o-stale");
    tmp.write("app/r.yaml", CONFIGMAP);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    // What a killed build of the predictable scheme left: a folder and a file in the way.
    tmp.mkdir("out.peerpods-build.tmp/stale");
    tmp.write("dir/v1_configmap_cm.peerpods-build.tmp/stale", "");
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&tmp.path("out.yaml"))], &tmp.root);
    assert!(r.success(), "a stale temporary file blocked the build:\n{}", r.stderr);
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&tmp.path("dir"))], &tmp.root);
    assert!(r.success(), "a stale temporary file blocked the build:\n{}", r.stderr);
    assert!(tmp.path("dir/v1_configmap_cm.yaml").is_file());
}

// ---------------------------------------------------------------------------
// What kustomize refuses, refused

#[test]
fn absolute_resource_and_component_folders_are_refused_as_in_kustomize() {
    let tmp = TempTree::new("absolute-root");
    tmp.write("base/cm.yaml", CONFIGMAP);
    tmp.write("base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: x-\n");
    let base = tmp.path("base");
    let comp = tmp.path("comp");
    let cases = [
        (format!("resources:\n- {}\n", base.display()), format!("new root '{}' cannot be absolute", base.display())),
        (format!("resources:\n- ../base\ncomponents:\n- {}\n", comp.display()), format!("new root '{}' cannot be absolute", comp.display())),
    ];
    for (kustomization, wording) in &cases {
        tmp.write("app/kustomization.yaml", kustomization);
        let app = tmp.path("app");
        for flags in [&[][..], &["--load-restrictor", "LoadRestrictionsNone"][..]] {
            let mut args = vec!["build", s(&app)];
            args.extend_from_slice(flags);
            let r = ours(&args, &tmp.root);
            assert_refused(&r, wording, kustomization);
            reference_fails_with(&args[1..], &tmp.root, wording, kustomization);
        }
    }
}

#[test]
fn validators_are_refused_not_ignored() {
    let tmp = TempTree::new("validators");
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.write("app/v.yaml", "apiVersion: example.com/v1\nkind: Validator\nmetadata:\n  name: v\n");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\nvalidators:\n- v.yaml\n");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    assert_refused(&r, "validators: external plugins disabled", "validators");
    reference_fails_with(&[s(&app)], &tmp.root, "external plugins disabled", "validators");
}

#[test]
fn settings_kustomize_ignores_warn_and_fail_under_strict() {
    let cases = [
        ("helmGlobals:\n  chartHome: charts\n".to_string(), "helmGlobals has no effect"),
        ("openapi:\n  foo: bar\n".to_string(), "openapi: 'foo'"),
        ("buildMetadata: [sourceAnnotations]\n".to_string(), "buildMetadata: 'sourceAnnotations'"),
    ];
    for (setting, wording) in &cases {
        let tmp = TempTree::new("ignored");
        tmp.write("app/cm.yaml", CONFIGMAP);
        tmp.write("app/kustomization.yaml", &format!("resources:\n- cm.yaml\n{setting}"));
        let app = tmp.path("app");
        let r = ours(&["build", s(&app)], &tmp.root);
        assert!(r.success(), "{setting}: {}", r.stderr);
        assert!(r.stderr.contains(wording), "{setting}: no warning:\n{}", r.stderr);
        let strict = ours(&["build", s(&app), "--strict"], &tmp.root);
        assert!(!strict.success(), "{setting}: --strict accepted a setting that has no effect");
        if let Some(reference) = reference_run(&[s(&app)], &tmp.root, setting) {
            assert!(reference.success(), "{setting}: the reference refuses it: {}", reference.stderr);
        }
    }
}

#[test]
fn empty_kustomizations_and_wrong_api_versions_are_refused_as_in_kustomize() {
    let cases = [
        ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", "kustomization.yaml is empty"),
        ("resources: ~\nnamePrefix: \"\"\n", "kustomization.yaml is empty"),
        ("apiVersion: example.com/v9\nresources:\n- cm.yaml\n", "apiVersion for Kustomization should be kustomize.config.k8s.io/v1beta1"),
        ("apiVersion: v1\nkind: Kustomization\nresources:\n- cm.yaml\n", "apiVersion for Kustomization should be kustomize.config.k8s.io/v1beta1"),
    ];
    for (kustomization, wording) in cases {
        let tmp = TempTree::new("empty");
        tmp.write("app/cm.yaml", CONFIGMAP);
        tmp.write("app/kustomization.yaml", kustomization);
        let app = tmp.path("app");
        let r = ours(&["build", s(&app)], &tmp.root);
        assert_refused(&r, wording, kustomization);
        reference_fails_with(&[s(&app)], &tmp.root, wording, kustomization);
    }
    // Set but empty is not empty, for kustomize too.
    let tmp = TempTree::new("empty-list");
    tmp.write("app/kustomization.yaml", "resources: []\n");
    let r = ours(&["build", s(&tmp.path("app"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    if let Some(reference) = reference_run(&[s(&tmp.path("app"))], &tmp.root, "resources: []") {
        assert!(reference.success(), "{}", reference.stderr);
    }
}

#[test]
fn infinity_and_nan_fail_as_in_kustomize() {
    let tmp = TempTree::new("nan");
    let cases = [
        ("resource", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: .nan\n", "resources:\n- r.yaml\n", "json: unsupported value: NaN"),
        ("patch", CONFIGMAP, "resources:\n- r.yaml\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: cm}\n    data: {y: -.Inf}\n", "json: unsupported value: -Inf"),
        ("kustomization", CONFIGMAP, "resources:\n- r.yaml\ncommonAnnotations:\n  a: .inf\n", "json: unsupported value: +Inf"),
    ];
    for (label, resource, kustomization, wording) in cases {
        tmp.write(&format!("{label}/r.yaml"), resource);
        tmp.write(&format!("{label}/kustomization.yaml"), kustomization);
        let dir = tmp.path(label);
        let r = ours(&["build", s(&dir)], &tmp.root);
        assert_refused(&r, wording, label);
        reference_fails_with(&[s(&dir)], &tmp.root, "json: unsupported value", label);
    }
    // Quoted, they are strings.
    tmp.write("quoted/r.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \".nan\"\n");
    tmp.write("quoted/kustomization.yaml", "resources:\n- r.yaml\n");
    let r = ours(&["build", s(&tmp.path("quoted"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    if let Some(reference) = reference_run(&[s(&tmp.path("quoted"))], &tmp.root, "quoted .nan") {
        assert_eq!(r.stdout, reference.stdout);
    }
}

#[test]
fn a_symlink_loop_is_called_one() {
    let tmp = TempTree::new("loop");
    tmp.symlink("loop2", "app/loop1");
    tmp.symlink("loop1", "app/loop2");
    tmp.write("app/kustomization.yaml", "resources:\n- loop1\n");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    assert_refused(&r, "symlink loop", "resources: [loop1]");
    assert!(!r.stderr.contains("no such file"), "{}", r.stderr);
    reference_fails_with(&[s(&app)], &tmp.root, "too many links", "resources: [loop1]");

    tmp.symlink("kustomization.yaml", "loop/kustomization.yaml");
    let r = ours(&["build", s(&tmp.path("loop"))], &tmp.root);
    assert_refused(&r, "symlink loop", "kustomization.yaml linked to itself");
}

// ---------------------------------------------------------------------------
// Parser limits: go-yaml's depth, a bound on aliases, and no stack overflow

/// A resource whose `spec` nests `depth` block sequences (`- - - x`).
fn deep_block_resource(depth: usize) -> String {
    format!("apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: deep\nspec:\n  {}x\n", "- ".repeat(depth - 1))
}

/// A resource whose `spec` nests `depth` flow sequences (`[[[]]]`).
fn deep_flow_resource(depth: usize) -> String {
    format!("apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: deep\nspec: {}{}\n", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_as_deep_as_go_yaml_allows_builds_on_a_normal_thread() {
    let tmp = TempTree::new("deep");
    let cases = [
        ("block", deep_block_resource(peerpods_build::yaml::parse::MAX_DEPTH - 2)),
        ("flow", deep_flow_resource(peerpods_build::yaml::parse::MAX_FLOW_DEPTH)),
    ];
    for (label, resource) in cases {
        tmp.write(&format!("{label}/r.yaml"), &resource);
        tmp.write(&format!("{label}/kustomization.yaml"), "resources:\n- r.yaml\nnamePrefix: p-\nlabels:\n- pairs:\n    a: b\n");
        let dir = tmp.path(label);
        // The library on a thread with Rust's default 2 MiB stack: build, print, drop.
        let output = std::thread::spawn(move || {
            let options = peerpods_build::BuildOptions::default();
            let result = peerpods_build::build(&dir, &options).unwrap_or_else(|f| panic!("{label}: {}", f.error));
            result.to_yaml()
        })
        .join()
        .unwrap_or_else(|_| panic!("{label}: the build panicked"));
        assert!(output.contains("name: p-deep"), "{label}: {}", &output[..200.min(output.len())]);
        let r = ours(&["build", s(&tmp.path(label))], &tmp.root);
        assert!(r.success(), "{label}: {}", r.stderr);
        assert_eq!(r.stdout, output, "{label}: the binary and the library differ");
        if let Some(reference) = reference_run(&[s(&tmp.path(label))], &tmp.root, label) {
            assert_eq!(r.stdout, reference.stdout, "{label}: differs from the reference");
        }
    }
}

#[test]
fn nesting_beyond_the_limits_is_a_clear_error() {
    let tmp = TempTree::new("too-deep");
    let cases = [
        ("block", deep_block_resource(peerpods_build::yaml::parse::MAX_DEPTH + 10), "exceeded max depth of 10000"),
        ("flow", deep_flow_resource(peerpods_build::yaml::parse::MAX_FLOW_DEPTH + 1), "flow collections nested deeper than 255"),
    ];
    for (label, resource, wording) in cases {
        tmp.write(&format!("{label}/r.yaml"), &resource);
        tmp.write(&format!("{label}/kustomization.yaml"), "resources:\n- r.yaml\n");
        let r = ours(&["build", s(&tmp.path(label))], &tmp.root);
        assert_refused(&r, wording, label);
        assert!(r.stderr.contains("r.yaml:"), "{label}: the error does not name the file:\n{}", r.stderr);
    }
}

/// A "billion laughs" document: `levels` anchored lists, each of nine aliases to the one before.
pub fn alias_bomb(levels: usize) -> String {
    let mut text = String::from("apiVersion: example.com/v1\nkind: Laughs\nmetadata:\n  name: lol\nx0: &a0 [lol]\n");
    for level in 1..=levels {
        let refs = vec![format!("*a{}", level - 1); 9].join(", ");
        text.push_str(&format!("x{level}: &a{level} [{refs}]\n"));
    }
    text
}

#[test]
fn aliases_expand_as_in_kustomize_up_to_a_bound() {
    let tmp = TempTree::new("aliases");
    // 9^6 copies (600,000 nodes): kustomize builds it (in minutes), so do we.
    tmp.write("big/r.yaml", &alias_bomb(6));
    tmp.write("big/kustomization.yaml", "resources:\n- r.yaml\n");
    let r = ours(&["build", s(&tmp.path("big"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(r.stdout.matches("lol").count(), 1 + (0..=6).map(|k| 9usize.pow(k)).sum::<usize>());
    // 9^5, compared with the reference byte for byte.
    tmp.write("ok/r.yaml", &alias_bomb(5));
    tmp.write("ok/kustomization.yaml", "resources:\n- r.yaml\n");
    let r = ours(&["build", s(&tmp.path("ok"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    // `lol` in the name, then 9^k times in list k.
    assert_eq!(r.stdout.matches("lol").count(), 1 + (0..=5).map(|k| 9usize.pow(k)).sum::<usize>());
    if let Some(reference) = reference_run(&[s(&tmp.path("ok"))], &tmp.root, "9^5 aliases") {
        assert_eq!(r.stdout, reference.stdout);
    }
    // 9^8 copies: refused before any memory is spent on them.
    tmp.write("bomb/r.yaml", &alias_bomb(8));
    tmp.write("bomb/kustomization.yaml", "resources:\n- r.yaml\n");
    let r = ours(&["build", s(&tmp.path("bomb"))], &tmp.root);
    assert_refused(&r, "document contains excessive aliasing", "9^8 aliases");
}
