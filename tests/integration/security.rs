//! What a build run on an untrusted tree may read and write: the kustomization file goes through
//! the load restrictor, `-o` writes only where it was told, through exclusive temporary files
//! that keep the destination's mode and never stay behind; and what kustomize refuses (absolute
//! roots, validators, `.nan`), we refuse. Compared with the reference kustomize where installed.
#![cfg(unix)]

use crate::common;

use common::{files_under, ours, ours_env, reference_run, TempTree};
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
    // The per-document bound or the build's copy budget, whichever is reached first.
    assert_refused(&r, "excessive aliasing", "9^8 aliases");
}

// ---------------------------------------------------------------------------
// The third pass: helm, plugins, diff, edit and the render cache under attack

/// How a guarded run of the binary ended: its outcome, and its peak memory.
struct Guarded {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_mib: u64,
    /// Why the guard stopped it, if it did (memory past the cap, or a hang).
    stopped: Option<String>,
}

/// Runs peerpods-build with stdout and stderr in files, stopping it when its resident memory
/// passes `max_rss_mib` or it runs past `hang_guard` (a guard against a test that would never
/// end, far above what the run needs; the assertions are on the outcome and the memory). The
/// child is reaped with `wait4`, so its own peak memory is known.
fn run_guarded(args: &[&str], cwd: &Path, env: &[(&str, &str)], stdout: Option<fs::File>, max_rss_mib: u64, hang_guard: std::time::Duration) -> Guarded {
    use std::process::{Command, Stdio};
    let out_path = std::env::temp_dir().join(format!("peerpods-guarded-{}-{}.out", std::process::id(), rand_suffix()));
    let err_path = out_path.with_extension("err");
    let stdout_to_file = stdout.is_none();
    let child = Command::new(common::bin())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout.unwrap_or_else(|| fs::File::create(&out_path).unwrap()))
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("starting peerpods-build");
    let pid = child.id() as libc::pid_t;
    let started = std::time::Instant::now();
    let mut stopped = None;
    loop {
        // SAFETY: waitid with WNOWAIT only looks at our own child's state; it is reaped below.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
        assert_eq!(r, 0, "waitid failed");
        if unsafe { info.si_pid() } == pid {
            break;
        }
        let rss_kib = fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
            .unwrap_or(0);
        let why = if rss_kib / 1024 > max_rss_mib {
            Some(format!("resident memory passed {max_rss_mib} MiB"))
        } else if started.elapsed() > hang_guard {
            Some(format!("still running after {hang_guard:?}"))
        } else {
            None
        };
        if let Some(why) = why {
            // SAFETY: our own child, not yet reaped, so the pid is still its own.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            stopped = Some(why);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    std::mem::forget(child);
    let read = |p: &Path| fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let guarded = Guarded {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout: if stdout_to_file { read(&out_path) } else { String::new() },
        stderr: read(&err_path),
        peak_mib: usage.ru_maxrss as u64 / 1024,
        stopped,
    };
    let _ = fs::remove_file(&out_path);
    let _ = fs::remove_file(&err_path);
    assert!(!guarded.stderr.contains("panicked"), "peerpods-build panicked:\n{}", guarded.stderr);
    guarded
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// Asserts a guarded run failed cleanly (an error, not a signal or the guard) saying `wording`.
fn assert_guarded_refusal(g: &Guarded, wording: &str, what: &str) {
    assert_eq!(g.stopped, None, "{what}: stopped by the guard (peak {} MiB); stderr:\n{}", g.peak_mib, g.stderr);
    assert!(g.code.is_some_and(|c| c != 0), "{what}: expected a failure, got exit {:?}:\n{}", g.code, g.stderr);
    assert!(g.stderr.contains(wording), "{what}: stderr does not say '{wording}':\n{}", g.stderr);
}

fn executable(tmp: &TempTree, rel: &str, script: &str) -> std::path::PathBuf {
    let path = tmp.write(rel, script);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A helm stand-in: `version` reports `version`, `template` prints a ConfigMap named `name`.
fn fake_helm(tmp: &TempTree, rel: &str, version: &str, name: &str) -> String {
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  version) echo {version} ;;\n  template) printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: {name}\\n' ;;\n  *) echo \"unexpected: $*\" >&2; exit 1 ;;\nesac\n"
    );
    executable(tmp, rel, &script).display().to_string()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

#[test]
fn a_chart_name_cannot_carry_the_values_file_out_of_the_temporary_folder() {
    let tmp = TempTree::new("helm-name-escape");
    let helm = fake_helm(&tmp, "bin/helm", "v3.19.0", "from-chart");
    // A chart folder at victim/sub, and beside it a link where the values file would land.
    tmp.mkdir("victim/sub");
    tmp.write("victim/target", "untouched\n");
    tmp.symlink(s(&tmp.path("victim/target")), "victim/sub-kustomize-values.yaml");
    tmp.write("app/values.yaml", "a: 1\n");
    tmp.mkdir("app/charts");
    let victim = tmp.path("victim/sub");
    let relative = format!("{}{}", "../".repeat(16), s(&victim).trim_start_matches('/'));
    let cache = tmp.path("cache");
    for name in [s(&victim).to_string(), relative] {
        tmp.write("app/kustomization.yaml", &format!("helmCharts:\n- name: {name}\n  valuesFile: values.yaml\n"));
        let r = ours_env(&["build", s(&tmp.path("app")), "--enable-helm", "--helm-command", &helm], &tmp.root, &[("PEERPODS_BUILD_CACHE", s(&cache))]);
        assert_refused(&r, "must be one path component", &name);
        assert_eq!(fs::read_to_string(tmp.path("victim/target")).unwrap(), "untouched\n", "{name}: written through the link");
        assert!(fs::symlink_metadata(tmp.path("victim/sub-kustomize-values.yaml")).unwrap().file_type().is_symlink());
    }
    // A version with `../` would move `helm pull --untardir` out of the root.
    tmp.write("app/kustomization.yaml", "helmCharts:\n- name: c\n  repo: https://charts.invalid\n  version: ../../../x\n");
    let r = ours_env(&["build", s(&tmp.path("app")), "--enable-helm", "--helm-command", &helm], &tmp.root, &[("PEERPODS_BUILD_CACHE", s(&cache))]);
    assert_refused(&r, "version '../../../x' must be one path component", "a version with ../");
    // A plain name still renders.
    tmp.mkdir("app/charts/c");
    tmp.write("app/charts/c/values.yaml", "a: 1\n");
    tmp.write("app/kustomization.yaml", "helmCharts:\n- name: c\n  releaseName: r\n");
    let r = ours_env(&["build", s(&tmp.path("app")), "--enable-helm", "--helm-command", &helm], &tmp.root, &[("PEERPODS_BUILD_CACHE", s(&cache))]);
    assert!(r.success(), "{}", r.stderr);
    assert!(r.stdout.contains("name: from-chart"), "{}", r.stdout);
}

#[test]
fn old_style_exec_plugins_run_only_from_beneath_the_plugin_home() {
    let tmp = TempTree::new("exec-plugin-escape");
    let home = tmp.mkdir("home");
    let marker = tmp.path("ran");
    let script = format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display());
    let evil = executable(&tmp, "outside/evil", &script);
    executable(&tmp, "outside/v1/evil/evil", &script);
    tmp.symlink(s(&evil), "home/x/v1/linked/linked");
    let outside_v1 = tmp.path("outside/v1");
    let cases = [
        ("x/v1".to_string(), s(&evil).to_string(), "the kind must be one path component"),
        (format!("x/{}", s(&outside_v1)), "evil".to_string(), "the version must be one path component"),
        ("x/v1".to_string(), "..".to_string(), "the kind must be one path component"),
        ("x/v1".to_string(), "linked".to_string(), "outside the plugin home"),
    ];
    tmp.write("app/kustomization.yaml", "transformers:\n- plugin.yaml\n");
    for (api_version, kind, wording) in cases {
        tmp.write("app/plugin.yaml", &format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: p\n"));
        let r = ours_env(&["build", s(&tmp.path("app")), "--enable-alpha-plugins"], &tmp.root, &[("KUSTOMIZE_PLUGIN_HOME", s(&home))]);
        assert_refused(&r, wording, &format!("{api_version} {kind}"));
        assert!(!marker.exists(), "{api_version} {kind}: a program outside the plugin home ran");
    }
    // A plugin inside the home runs.
    executable(&tmp, "home/x/v1/inside/inside", &script);
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\ntransformers:\n- plugin.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.write("app/plugin.yaml", "apiVersion: x/v1\nkind: inside\nmetadata:\n  name: p\n");
    let r = ours_env(&["build", s(&tmp.path("app")), "--enable-alpha-plugins"], &tmp.root, &[("KUSTOMIZE_PLUGIN_HOME", s(&home))]);
    assert!(r.success(), "{}", r.stderr);
    assert!(marker.exists(), "the plugin inside the home did not run");
}

#[test]
fn the_render_cache_key_reads_only_regular_chart_files() {
    let tmp = TempTree::new("helm-chart-irregular");
    let helm = fake_helm(&tmp, "bin/helm", "v3.19.0", "from-chart");
    tmp.write("app/kustomization.yaml", "helmCharts:\n- name: c\n");
    tmp.write("app/charts/c/values.yaml", "a: 1\n");
    tmp.symlink("/dev/zero", "app/charts/c/templates/zero.yaml");
    let cache = tmp.path("cache");
    let app = tmp.path("app");
    let args = ["build", s(&app), "--enable-helm", "--helm-command", &helm];
    let env = [("PEERPODS_BUILD_CACHE", s(&cache))];
    let g = run_guarded(&args, &tmp.root, &env, None, 512, std::time::Duration::from_secs(60));
    assert_guarded_refusal(&g, "not a regular file", "a chart file linked to /dev/zero");
    assert!(g.stderr.contains("zero.yaml"), "the file is not named:\n{}", g.stderr);
    fs::remove_file(tmp.path("app/charts/c/templates/zero.yaml")).unwrap();
    mkfifo(&tmp.path("app/charts/c/templates/fifo.yaml"));
    let g = run_guarded(&args, &tmp.root, &env, None, 512, std::time::Duration::from_secs(60));
    assert_guarded_refusal(&g, "not a regular file", "a chart file that is a FIFO");
}

/// A resource whose `spec` is a sequence of maps `depth` deep, ending in `leaf`.
fn deep_map_sequence(depth: usize, leaf: &str) -> String {
    let mut text = String::from("apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: deep\nspec:\n");
    for level in 0..depth {
        text.push_str(&" ".repeat(2 + 4 * level));
        text.push_str("- a:\n");
    }
    text.push_str(&" ".repeat(2 + 4 * depth));
    text.push_str(&format!("{leaf}\n"));
    text
}

#[test]
fn diff_walks_a_sequence_of_maps_three_thousand_deep() {
    let tmp = TempTree::new("diff-deep");
    for (side, leaf) in [("a", "old"), ("b", "new")] {
        tmp.write(&format!("{side}/r.yaml"), &deep_map_sequence(3000, leaf));
        tmp.write(&format!("{side}/kustomization.yaml"), "resources:\n- r.yaml\n");
    }
    let r = common::run_program(common::bin(), &["diff", s(&tmp.path("a")), s(&tmp.path("b"))], &tmp.root);
    assert!(r.code.is_some(), "diff A B was killed by a signal (a stack overflow):\n{}", r.stderr);
    assert_eq!(r.code, Some(1), "diff A B: the two sides differ:\n{}", r.stderr);
    assert!(r.stdout.contains("-") && r.stdout.contains("old") && r.stdout.contains("new"), "{}", &r.stdout[..r.stdout.len().min(400)]);

    // diff --base: the same change, committed then edited.
    let git = |args: &[&str]| {
        let r = common::run_program_env("git", args, &tmp.root, &[("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@t"), ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@t")]);
        assert!(r.success(), "git {}: {}", args.join(" "), r.stderr);
    };
    git(&["init", "-q"]);
    git(&["add", "a"]);
    git(&["commit", "-q", "-m", "deep"]);
    fs::copy(tmp.path("b/r.yaml"), tmp.path("a/r.yaml")).unwrap();
    let r = common::run_program(common::bin(), &["diff", "--base", "HEAD", s(&tmp.path("a"))], &tmp.root);
    assert!(r.code.is_some(), "diff --base was killed by a signal (a stack overflow):\n{}", r.stderr);
    assert_eq!(r.code, Some(1), "diff --base: the sides differ:\n{}", r.stderr);
}

#[test]
fn diff_base_refuses_a_blob_larger_than_a_file_may_be_before_reading_it() {
    let tmp = TempTree::new("diff-big-blob");
    let env = [("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@t"), ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@t")];
    let git = |args: &[&str]| {
        let r = common::run_program_env("git", args, &tmp.root, &env);
        assert!(r.success(), "git {}: {}", args.join(" "), r.stderr);
        r.stdout.trim().to_string()
    };
    git(&["init", "-q"]);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    tmp.write("app/r.yaml", CONFIGMAP);
    // One blob of zeros one byte past the bound (git stores it compressed in a few hundred KB).
    // One past `bounded_read::MAX_FILE_BYTES` (256 MiB).
    let size: u64 = 256 * 1024 * 1024 + 1;
    let mut hash = std::process::Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(&tmp.root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = hash.stdin.take().unwrap();
        let zeros = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            stdin.write_all(&zeros[..n]).unwrap();
            left -= n as u64;
        }
    }
    let out = hash.wait_with_output().unwrap();
    let blob = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let small = git(&["hash-object", "-w", "app/kustomization.yaml"]);
    let r_yaml = git(&["hash-object", "-w", "app/r.yaml"]);
    let listing = format!("100644 blob {small}\tkustomization.yaml\n100644 blob {r_yaml}\tr.yaml\n100644 blob {blob}\tbig.yaml\n");
    let mktree = |listing: &str| {
        let mut child = std::process::Command::new("git")
            .arg("mktree")
            .current_dir(&tmp.root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), listing.as_bytes()).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap().trim().to_string()
    };
    let app_tree = mktree(&listing);
    let top = mktree(&format!("040000 tree {app_tree}\tapp\n"));
    let commit = git(&["commit-tree", &top, "-m", "big"]);
    let g = run_guarded(&["diff", "--base", &commit, s(&tmp.path("app"))], &tmp.root, &[], None, 1024, std::time::Duration::from_secs(120));
    assert_guarded_refusal(&g, "big.yaml' at this revision holds", "a blob past the bound");
    // Reading the blob would take its 256 MiB at least (the peak counts git's own memory too).
    assert!(g.peak_mib < 256, "the blob was read: peak {} MiB", g.peak_mib);
}

#[test]
fn output_to_dev_stdout_is_written_in_place_when_stdout_is_a_file() {
    let tmp = TempTree::new("dev-stdout");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    // A link through /proc, as /dev/stdout is, while stdout is a regular file.
    let link = tmp.symlink("/proc/self/fd/1", "out.yaml");
    let stdout_file = tmp.path("stdout.txt");
    let g = run_guarded(&["build", s(&tmp.path("app")), "-o", s(&link)], &tmp.root, &[], Some(fs::File::create(&stdout_file).unwrap()), 1024, std::time::Duration::from_secs(60));
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was renamed over");
    let expected = ours(&["build", s(&tmp.path("app"))], &tmp.root);
    assert_eq!(fs::read_to_string(&stdout_file).unwrap(), expected.stdout, "the output did not reach stdout");
}

#[test]
fn copies_are_bounded_in_bytes_across_transformers() {
    let tmp = TempTree::new("copy-bytes");
    let big = "x".repeat(1 << 20);
    // 13 JSON 6902 copies of a 1 MB value, each doubling the resource: 8 GB unbounded.
    tmp.write("copy/cm.yaml", &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: {big}\n"));
    let ops: String = (0..13).map(|i| format!("- op: copy\n  from: /data\n  path: /data/c{i}\n")).collect();
    tmp.write("copy/kustomization.yaml", &format!("resources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n{}\n", indent(&ops, 4)));
    // A 1 MB namePrefix over 2,000 resources: 2 GB of names.
    let many: String = (0..2000).map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n")).collect();
    tmp.write("prefix/cms.yaml", &many);
    tmp.write("prefix/kustomization.yaml", &format!("resources:\n- cms.yaml\nnamePrefix: {big}\n"));
    tmp.write("labels/cms.yaml", &many);
    tmp.write("labels/kustomization.yaml", &format!("resources:\n- cms.yaml\ncommonAnnotations:\n  a: {big}\n"));
    for case in ["copy", "prefix", "labels"] {
        let g = run_guarded(&["build", s(&tmp.path(case))], &tmp.root, &[], None, 1024, std::time::Duration::from_secs(120));
        assert_guarded_refusal(&g, "excessive aliasing or copying", case);
        assert!(g.peak_mib < 1024, "{case}: peak {} MiB", g.peak_mib);
    }
}

fn indent(text: &str, by: usize) -> String {
    text.lines().map(|l| format!("{}{l}\n", " ".repeat(by))).collect()
}

#[test]
fn a_function_timeout_does_not_wait_for_an_orphan_holding_stdout() {
    let tmp = TempTree::new("orphan");
    let pid_file = tmp.path("orphan.pid");
    executable(&tmp, "home/x/v1/orphan/orphan", &format!("#!/bin/sh\nsetsid sleep 60 &\necho $! > '{}'\ncat\n", pid_file.display()));
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\ntransformers:\n- plugin.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.write("app/plugin.yaml", "apiVersion: x/v1\nkind: orphan\nmetadata:\n  name: p\n");
    let started = std::time::Instant::now();
    let g = run_guarded(
        &["build", s(&tmp.path("app")), "--enable-alpha-plugins", "--function-timeout", "30s"],
        &tmp.root,
        &[("KUSTOMIZE_PLUGIN_HOME", s(&tmp.path("home")))],
        None,
        1024,
        std::time::Duration::from_secs(120),
    );
    let took = started.elapsed();
    if let Ok(pid) = fs::read_to_string(&pid_file).unwrap_or_default().trim().parse::<libc::pid_t>() {
        // SAFETY: the orphan this test started (its pid from its own script).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert_eq!(g.stopped, None, "{}", g.stderr);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.stdout.contains("name: cm"), "{}", g.stdout);
    // The orphan sleeps 60 s and the timeout is 30 s: waiting for either takes far longer.
    assert!(took < std::time::Duration::from_secs(25), "the build waited {took:?} for the orphan");
}

#[test]
fn cache_clear_removes_only_what_carries_the_caches_marker() {
    let tmp = TempTree::new("cache-clear");
    // A project folder named as the cache: its own helm/ and git/ folders.
    let project = tmp.mkdir("project");
    fs::set_permissions(&project, fs::Permissions::from_mode(0o700)).unwrap();
    tmp.write("project/helm/mychart/Chart.yaml", "name: mychart\n");
    tmp.write("project/git/hooks/pre-commit", "#!/bin/sh\n");
    // And a real rendering, cached there by a build.
    let helm = fake_helm(&tmp, "bin/helm", "v3.19.0", "from-chart");
    tmp.write("app/kustomization.yaml", "helmCharts:\n- name: c\n");
    tmp.write("app/charts/c/values.yaml", "a: 1\n");
    let r = ours(&["build", s(&tmp.path("app")), "--enable-helm", "--helm-command", &helm, "--cache-dir", s(&project)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    let r = ours(&["cache", "clear", "--cache-dir", s(&project)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert!(r.stderr.contains("removed 0 cached checkout(s) and 1 helm rendering(s)"), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("left {}", tmp.path("project/helm/mychart").display())), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("left {}", tmp.path("project/git/hooks").display())), "{}", r.stderr);
    assert_eq!(fs::read_to_string(tmp.path("project/helm/mychart/Chart.yaml")).unwrap(), "name: mychart\n");
    assert!(tmp.path("project/git/hooks/pre-commit").is_file());
}

#[test]
fn edit_reads_the_kustomization_with_the_bounded_reader() {
    let tmp = TempTree::new("edit-irregular");
    tmp.symlink("/dev/zero", "zero/kustomization.yaml");
    mkfifo(&tmp.mkdir("fifo").join("kustomization.yaml"));
    for case in ["zero", "fifo"] {
        tmp.write(&format!("{case}/x.yaml"), CONFIGMAP);
    }
    for case in ["zero", "fifo"] {
        let g = run_guarded(&["edit", "add", "resource", "x.yaml"], &tmp.path(case), &[], None, 512, std::time::Duration::from_secs(60));
        assert_guarded_refusal(&g, "not a regular file", case);
    }
    // build refuses both as well, through the same reader.
    for case in ["zero", "fifo"] {
        let g = run_guarded(&["build", s(&tmp.path(case)), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root, &[], None, 512, std::time::Duration::from_secs(60));
        assert_eq!(g.stopped, None, "build {case}: {}", g.stderr);
        assert!(g.code.is_some_and(|c| c != 0), "build {case}: {}", g.stderr);
    }
}

#[test]
fn the_render_cache_key_includes_the_helm_program() {
    let tmp = TempTree::new("helm-identity");
    let first = fake_helm(&tmp, "one/helm", "v3.19.0", "from-first");
    let second = fake_helm(&tmp, "two/helm", "v3.19.0", "from-second");
    tmp.write("app/kustomization.yaml", "helmCharts:\n- name: c\n");
    tmp.write("app/charts/c/values.yaml", "a: 1\n");
    let cache = tmp.path("cache");
    for (helm, name) in [(&first, "from-first"), (&second, "from-second"), (&first, "from-first")] {
        let r = ours(&["build", s(&tmp.path("app")), "--enable-helm", "--helm-command", helm, "--cache-dir", s(&cache)], &tmp.root);
        assert!(r.success(), "{}", r.stderr);
        assert!(r.stdout.contains(&format!("name: {name}")), "{helm} was served another helm's rendering:\n{}", r.stdout);
    }
}

#[test]
fn a_plugins_stdout_is_bounded() {
    let tmp = TempTree::new("plugin-stdout");
    executable(&tmp, "home/x/v1/flood/flood", "#!/bin/sh\nexec cat /dev/zero\n");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\ntransformers:\n- plugin.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.write("app/plugin.yaml", "apiVersion: x/v1\nkind: flood\nmetadata:\n  name: p\n");
    let g = run_guarded(
        &["build", s(&tmp.path("app")), "--enable-alpha-plugins"],
        &tmp.root,
        &[("KUSTOMIZE_PLUGIN_HOME", s(&tmp.path("home")))],
        None,
        1024,
        std::time::Duration::from_secs(120),
    );
    assert_guarded_refusal(&g, "printed more than", "a plugin printing without end");
    assert!(g.peak_mib < 768, "peak {} MiB", g.peak_mib);
}
