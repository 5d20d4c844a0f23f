//! The command line as a user meets it: arguments, output files, errors,
//! warnings, `--strict`, the load restrictor, and what is refused.
//!
//! Every run of peerpods-build goes through `common::ours`, which fails the
//! test if the binary panics or prints anything on stdout while failing.
//! Expected outputs are the committed, hand-checked fixtures of
//! `tests/fixtures/` or the build of a control tree; where the reference
//! kustomize is present its stdout (and deprecation notices) are compared too.

use crate::common;

use common::{deprecation_lines, documents, files_under, fixture, ours, reference_run, TempTree};
use pretty_assertions::assert_eq;
use std::fs;
use std::path::Path;

fn expected_of(fixture_name: &str) -> String {
    fs::read_to_string(fixture(fixture_name).join("expected.yaml")).expect("fixture expected.yaml")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A failed run: non-zero exit, nothing on stdout (checked in `ours`), and a message on stderr.
fn assert_failed(r: &common::Run, what: &str) {
    assert!(!r.success(), "{what}: expected a failure, got exit 0 with:\n{}", r.stdout);
    assert!(r.stderr.contains("Error"), "{what}: stderr has no error message:\n{}", r.stderr);
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";

// ---------------------------------------------------------------------------
// Arguments and output

#[test]
fn bare_directory_argument_means_build() {
    let dir = fixture("name_prefix_suffix");
    let with_command = ours(&["build", s(&dir)], &common::manifest_dir());
    let bare = ours(&[s(&dir)], &common::manifest_dir());
    let no_argument = ours(&[], &dir);
    for (label, r) in [("build DIR", &with_command), ("DIR", &bare), ("(no argument, in DIR)", &no_argument)] {
        assert!(r.success(), "peerpods-build {label} failed:\n{}", r.stderr);
        assert_eq!(r.stdout, expected_of("name_prefix_suffix"), "peerpods-build {label}");
    }
}

/// Semantic Versioning 2.0.0, with the leading `v` Go tools print.
fn is_semver(text: &str) -> bool {
    let text = text.strip_prefix('v').unwrap_or(text);
    let (rest, build) = match text.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (text, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numeric = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && (p == "0" || !p.starts_with('0'));
    let ident = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.is_none_or(|p| p.split('.').all(|i| ident(i) && (!i.bytes().all(|b| b.is_ascii_digit()) || numeric(i))))
        && build.is_none_or(|b| b.split('.').all(ident))
}

#[test]
fn semver_check_itself_rejects_non_versions() {
    for good in ["v5.6.0", "1.2.3", "v5.6.0+peerpods-build.0.1.0", "1.0.0-rc.1+build.5"] {
        assert!(is_semver(good), "{good} is a semver");
    }
    for bad in ["", "v5.6", "5.6.0.1", "v05.6.0", "peerpods-build 0.1.0", "1.2.3-", "1.2.3+", "1.2.3-01"] {
        assert!(!is_semver(bad), "{bad:?} is not a semver");
    }
}

#[test]
fn version_short_prints_one_semver_line() {
    let r = ours(&["version", "--short"], &common::manifest_dir());
    assert!(r.success(), "version --short failed:\n{}", r.stderr);
    let line = r.stdout.strip_suffix('\n').expect("one line ending in a newline");
    assert!(!line.contains('\n'), "version --short printed several lines:\n{}", r.stdout);
    assert!(is_semver(line), "version --short printed {line:?}, not a semantic version");
}

#[test]
fn output_file_gets_the_build_and_stdout_stays_empty() {
    let tmp = TempTree::new("out-file");
    for flag in ["-o", "--output"] {
        let out = tmp.path(&format!("built{flag}.yaml"));
        let r = ours(&["build", s(&fixture("namespace")), flag, s(&out)], &tmp.root);
        assert!(r.success(), "{flag} failed:\n{}", r.stderr);
        assert_eq!(r.stdout, "", "{flag} FILE must print nothing on stdout");
        assert_eq!(fs::read_to_string(&out).expect("output file written"), expected_of("namespace"));
    }
    assert_eq!(files_under(&tmp.root), vec!["built--output.yaml", "built-o.yaml"], "no stray temporary files");
}

#[test]
fn output_to_existing_directory_writes_one_file_per_resource() {
    let tmp = TempTree::new("out-dir");
    let out = tmp.mkdir("out");
    let r = ours(&["build", s(&fixture("namespace")), "-o", s(&out)], &tmp.root);
    assert!(r.success(), "-o DIR failed:\n{}", r.stderr);
    assert_eq!(r.stdout, "", "-o DIR must print nothing on stdout");

    let mut expected_docs = documents(&expected_of("namespace"));
    expected_docs.sort();
    assert_eq!(expected_docs.len(), 5, "the namespace fixture has five resources");
    // Beside the resources, the record of what the build wrote (kustomize writes none).
    let names: Vec<String> = files_under(&out).into_iter().filter(|n| n != ".peerpods-build-files").collect();
    assert!(out.join(".peerpods-build-files").is_file());
    let mut written: Vec<String> = names.iter().map(|n| fs::read_to_string(out.join(n)).unwrap()).collect();
    written.sort();
    assert_eq!(written, expected_docs, "each file holds exactly one resource of the build");
    for (name, content) in names.iter().map(|n| (n, fs::read_to_string(out.join(n)).unwrap())) {
        let resource_name = content.lines().find_map(|l| l.strip_prefix("  name: ")).expect("metadata.name");
        assert!(name.ends_with(&format!("_{resource_name}.yaml")), "{name} is not named after {resource_name}");
    }

    if let Some(reference) = reference_run(&[s(&fixture("namespace")), "-o", s(&tmp.mkdir("reference"))], &tmp.root, "-o DIR") {
        assert!(reference.success(), "reference -o DIR failed:\n{}", reference.stderr);
        let dir = tmp.path("reference");
        let mut theirs: Vec<String> = files_under(&dir).iter().map(|n| fs::read_to_string(dir.join(n)).unwrap()).collect();
        theirs.sort();
        assert_eq!(written, theirs, "file contents differ from kubectl kustomize -o DIR");
    }
}

/// Names as kustomize v5.6.0 writes them: `[namespace_]group_version_kind_name.yaml`, lower
/// case, with the namespace prefix (`default` for namespaced resources without one) only
/// when the build spans several namespaces.
#[test]
fn output_directory_file_names_match_kustomize() {
    let tmp = TempTree::new("out-dir-names");
    tmp.write(
        "k/kustomization.yaml",
        "resources:\n- r.yaml\n",
    );
    tmp.write(
        "k/r.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: one\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\n  namespace: two\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata:\n  name: one\n",
    );
    let out = tmp.mkdir("out");
    let r = ours(&["build", s(&tmp.path("k")), "-o", s(&out)], &tmp.root);
    assert!(r.success(), "-o DIR failed:\n{}", r.stderr);
    let expected = vec![
        "default_v1_configmap_c.yaml",
        "one_v1_configmap_a.yaml",
        "two_apps_v1_deployment_b.yaml",
        "v1_namespace_one.yaml",
    ];
    if let Some(reference) = reference_run(&[s(&tmp.path("k")), "-o", s(&tmp.mkdir("reference"))], &tmp.root, "-o DIR names") {
        assert!(reference.success(), "reference -o DIR failed:\n{}", reference.stderr);
        assert_eq!(files_under(&tmp.path("reference")), expected, "the reference's names changed");
    }
    let ours_with_record: Vec<&str> = [".peerpods-build-files"].into_iter().chain(expected).collect();
    assert_eq!(files_under(&out), ours_with_record);
}

/// Two names that differ only in case make one file name: the later resource is kept, as
/// kustomize keeps it, whether the folder exists or is made by the build.
#[test]
fn output_directory_files_sharing_a_name_keep_the_later_resource() {
    let tmp = TempTree::new("out-dir-case");
    tmp.write("k/kustomization.yaml", "resources:\n- r.yaml\n");
    tmp.write(
        "k/r.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Foo\ndata:\n  a: upper\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foo\ndata:\n  a: lower\n",
    );
    let existing = tmp.mkdir("existing");
    let new = tmp.path("new/");
    for out in [&existing, &new] {
        let r = ours(&["build", s(&tmp.path("k")), "-o", s(out)], &tmp.root);
        assert!(r.success(), "-o {} failed:\n{}", out.display(), r.stderr);
        assert_eq!(files_under(out), [".peerpods-build-files", "v1_configmap_foo.yaml"]);
        assert!(fs::read_to_string(out.join("v1_configmap_foo.yaml")).unwrap().contains("a: lower"), "{}", out.display());
    }
    if let Some(reference) = reference_run(&[s(&tmp.path("k")), "-o", s(&tmp.mkdir("reference"))], &tmp.root, "-o DIR with one name twice") {
        assert!(reference.success(), "reference -o DIR failed:\n{}", reference.stderr);
        let theirs = tmp.path("reference/v1_configmap_foo.yaml");
        assert_eq!(fs::read_to_string(theirs).unwrap(), fs::read_to_string(new.join("v1_configmap_foo.yaml")).unwrap());
    }
}

#[test]
fn failed_build_writes_no_output_file_and_keeps_an_existing_one() {
    let tmp = TempTree::new("out-failed");
    tmp.write("k/kustomization.yaml", "resources:\n- missing.yaml\n");
    let fresh = tmp.path("fresh.yaml");
    let r = ours(&["build", s(&tmp.path("k")), "-o", s(&fresh)], &tmp.root);
    assert_failed(&r, "-o FILE with a missing resource");
    assert!(!fresh.exists(), "a failed build created {}", fresh.display());

    let existing = tmp.write("existing.yaml", "previous content\n");
    let r = ours(&["build", s(&tmp.path("k")), "-o", s(&existing)], &tmp.root);
    assert_failed(&r, "-o EXISTING_FILE with a missing resource");
    assert_eq!(fs::read_to_string(&existing).unwrap(), "previous content\n", "a failed build touched the output file");

    let dir = tmp.mkdir("out");
    let r = ours(&["build", s(&tmp.path("k")), "-o", s(&dir)], &tmp.root);
    assert_failed(&r, "-o DIR with a missing resource");
    assert!(files_under(&dir).is_empty(), "a failed build wrote {:?}", files_under(&dir));
    assert_eq!(files_under(&tmp.root), vec!["existing.yaml", "k/kustomization.yaml"], "no stray temporary files");
}

// ---------------------------------------------------------------------------
// Bad input

#[test]
fn invalid_yaml_resource_names_file_line_and_column() {
    let tmp = TempTree::new("bad-yaml");
    tmp.write("kustomization.yaml", "resources:\n- r.yaml\n");
    // Line 5 is indented under `name: x`; the ':' after `labels` (column 10) is where it breaks.
    tmp.write("r.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   labels: y\n");
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "invalid YAML resource");
    // kustomize's message (go-yaml's words and line), then where on a line of its own.
    let words = "accumulating resources: accumulating resources from 'r.yaml': MalformedYAMLError: yaml: line 5: mapping values are not allowed in this context in File: r.yaml";
    let located = format!("  at {}:5:10", s(&tmp.path("r.yaml")));
    assert_eq!(r.stderr.lines().collect::<Vec<_>>(), [format!("Error: {words}").as_str(), located.as_str()], "{}", r.stderr);
    if let Some(reference) = reference_run(&[s(&tmp.root)], &tmp.root, "bad-yaml") {
        assert!(reference.stderr.contains(words), "the reference says otherwise:\n{}", reference.stderr);
    }
}

#[test]
fn invalid_yaml_kustomization_names_file_line_and_column() {
    let tmp = TempTree::new("bad-kustomization");
    // Line 3 starts one column in, where no mapping key can start.
    tmp.write("kustomization.yaml", "resources:\n  - r.yaml\n bad: [\n");
    tmp.write("r.yaml", CONFIGMAP);
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "invalid kustomization.yaml");
    let located = format!("{}:3:2", s(&tmp.path("kustomization.yaml")));
    assert!(r.stderr.contains(&located), "stderr does not name {located}:\n{}", r.stderr);
}

/// A patch written inline in kustomization.yaml is part of that file: its errors must name it.
#[test]
fn invalid_inline_patch_names_the_kustomization_file() {
    let tmp = TempTree::new("bad-inline-patch");
    tmp.write("r.yaml", CONFIGMAP);
    let kustomization = tmp.path("kustomization.yaml");
    for (what, text) in [
        // Line 9 of the file (line 5 of the patch) is mis-indented.
        ("unparsable inline patch", "resources:\n- r.yaml\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: x\n     data: [\n"),
        ("patch entry with neither patch nor path", "resources:\n- r.yaml\npatches:\n- target:\n    kind: ConfigMap\n"),
    ] {
        tmp.write("kustomization.yaml", text);
        let r = ours(&["build", s(&tmp.root)], &tmp.root);
        assert_failed(&r, what);
        assert!(r.stderr.contains(s(&kustomization)), "{what}: stderr does not name {}:\n{}", kustomization.display(), r.stderr);
    }
}

#[test]
fn unknown_kustomization_field_names_field_and_file() {
    let tmp = TempTree::new("unknown-field");
    tmp.write("kustomization.yaml", "resources:\n- r.yaml\nresourcez:\n- other.yaml\n");
    tmp.write("r.yaml", CONFIGMAP);
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "unknown kustomization field");
    assert!(r.stderr.contains("resourcez"), "stderr does not name the field:\n{}", r.stderr);
    assert!(r.stderr.contains(s(&tmp.path("kustomization.yaml"))), "stderr does not name the file:\n{}", r.stderr);
    if let Some(reference) = reference_run(&[s(&tmp.root)], &tmp.root, "unknown field") {
        assert!(!reference.success(), "the reference accepts the unknown field");
    }
}

#[test]
fn missing_resource_file_is_an_error_naming_it() {
    let tmp = TempTree::new("missing-resource");
    tmp.write("kustomization.yaml", "resources:\n- r.yaml\n- not-there.yaml\n");
    tmp.write("r.yaml", CONFIGMAP);
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "missing resource");
    assert!(r.stderr.contains("not-there.yaml"), "stderr does not name the missing file:\n{}", r.stderr);
}

#[test]
fn missing_kustomization_directory_is_an_error() {
    let tmp = TempTree::new("missing-dir");
    let r = ours(&["build", s(&tmp.path("nowhere"))], &tmp.root);
    assert_failed(&r, "missing directory");
    assert!(r.stderr.contains("nowhere"), "stderr does not name the directory:\n{}", r.stderr);

    tmp.write("empty/readme.txt", "no kustomization here\n");
    let r = ours(&["build", s(&tmp.path("empty"))], &tmp.root);
    assert_failed(&r, "directory without kustomization.yaml");
}

#[test]
fn strategic_merge_patch_for_a_missing_resource_fails_as_in_kustomize() {
    let tmp = TempTree::new("smp-missing");
    tmp.write(
        "kustomization.yaml",
        "resources:\n- r.yaml\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: missing\n    spec:\n      replicas: 2\n",
    );
    tmp.write("r.yaml", CONFIGMAP);
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "patch without a target resource");
    assert!(r.stderr.contains("missing"), "stderr does not name the patch's resource:\n{}", r.stderr);
    if let Some(reference) = reference_run(&[s(&tmp.root)], &tmp.root, "patch without target") {
        assert!(!reference.success(), "the reference accepts it; the test premise is wrong");
    }
}

#[test]
fn kustomization_cycle_is_an_error() {
    let tmp = TempTree::new("cycle");
    tmp.write("a/kustomization.yaml", "resources:\n- ../b\n");
    tmp.write("b/kustomization.yaml", "resources:\n- ../a\n");
    let a = tmp.path("a");
    for extra in [&[][..], &["--load-restrictor", "LoadRestrictionsNone"][..]] {
        let mut args = vec!["build", s(&a)];
        args.extend_from_slice(extra);
        let r = ours(&args, &tmp.root);
        assert_failed(&r, "cycle");
        assert!(r.stderr.contains("cycle detected"), "stderr does not say there is a cycle:\n{}", r.stderr);
    }
}

#[test]
fn illegal_load_restrictor_value_is_an_error() {
    let r = ours(&["build", s(&fixture("replicas")), "--load-restrictor", "Sometimes"], &common::manifest_dir());
    assert_failed(&r, "--load-restrictor Sometimes");
    assert!(r.stderr.contains("Sometimes"), "stderr does not name the bad value:\n{}", r.stderr);
}

/// Truncating any fixture file anywhere, or spoiling the start of any of its
/// lines with a YAML indicator, gives either a build or a clean error:
/// never a panic, never output on stdout with a failure (both checked in `ours`).
#[test]
fn truncated_and_corrupted_inputs_never_panic() {
    let names: Vec<String> = fs::read_dir(common::manifest_dir().join("tests/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    const SPOILERS: [&str; 9] = ["\t", "&", "*", "[", "{", "!", "%", "? ", "- "];
    let mut runs = 0;
    let mut failures = 0;
    for name in names {
        let tmp = TempTree::new(&format!("spoiled-{name}"));
        let root = tmp.copy_fixture(&name, "k");
        for file in files_under(&root).into_iter().filter(|f| f != "expected.yaml") {
            let path = root.join(&file);
            let original = fs::read(&path).unwrap();
            let mut variants: Vec<(String, Vec<u8>)> = Vec::new();
            // Cut every 17th byte, and before each line's last character.
            let mut cuts: Vec<usize> = (0..original.len()).step_by(17).collect();
            cuts.extend(original.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i.saturating_sub(1)));
            cuts.sort_unstable();
            cuts.dedup();
            variants.extend(cuts.into_iter().map(|cut| (format!("cut at byte {cut}"), original[..cut].to_vec())));
            // Each line's first character replaced by an indicator, in turn.
            let text = String::from_utf8(original.clone()).expect("UTF-8 fixture");
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            for (i, line) in lines.iter().enumerate() {
                let spoiler = SPOILERS[i % SPOILERS.len()];
                let mut spoiled: String = lines[..i].concat();
                spoiled.push_str(spoiler);
                spoiled.push_str(line.get(1..).unwrap_or(""));
                spoiled.push_str(&lines[i + 1..].concat());
                variants.push((format!("line {} starting with {spoiler:?}", i + 1), spoiled.into_bytes()));
            }
            for (what, content) in variants {
                fs::write(&path, &content).unwrap();
                let r = ours(&["build", s(&root)], &tmp.root);
                runs += 1;
                if !r.success() {
                    failures += 1;
                    assert!(r.stderr.lines().any(|l| l.starts_with("Error: ")), "{name}/{file}, {what}: unclear error:\n{}", r.stderr);
                }
            }
            fs::write(&path, &original).unwrap();
        }
    }
    assert!(runs > 2000 && failures > 1000, "the variants exercised too little: {runs} runs, {failures} failures");
}

// ---------------------------------------------------------------------------
// The load restrictor

/// One way to reach a file outside the kustomization root. `tree` sets up the
/// escaping tree under `escape/k` and a control tree under `control/k` that
/// holds the same content inside the root.
struct Escape {
    label: &'static str,
    setup: fn(&TempTree),
}

const OUTSIDE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\ndata:\n  from: elsewhere\n";

fn escapes() -> Vec<Escape> {
    vec![
        Escape {
            label: "resource ../outside.yaml",
            setup: |t| {
                t.write("escape/outside.yaml", OUTSIDE);
                t.write("escape/k/kustomization.yaml", "resources:\n- ../outside.yaml\n");
                t.write("control/k/outside.yaml", OUTSIDE);
                t.write("control/k/kustomization.yaml", "resources:\n- outside.yaml\n");
            },
        },
        #[cfg(unix)]
        Escape {
            label: "resource through a symlinked file",
            setup: |t| {
                t.write("escape/outside.yaml", OUTSIDE);
                t.symlink("../outside.yaml", "escape/k/link.yaml");
                t.write("escape/k/kustomization.yaml", "resources:\n- link.yaml\n");
                t.write("control/k/link.yaml", OUTSIDE);
                t.write("control/k/kustomization.yaml", "resources:\n- link.yaml\n");
            },
        },
        #[cfg(unix)]
        Escape {
            label: "resource through a symlinked folder",
            setup: |t| {
                t.write("escape/elsewhere/outside.yaml", OUTSIDE);
                t.symlink("../elsewhere", "escape/k/sub");
                t.write("escape/k/kustomization.yaml", "resources:\n- sub/outside.yaml\n");
                t.write("control/k/sub/outside.yaml", OUTSIDE);
                t.write("control/k/kustomization.yaml", "resources:\n- sub/outside.yaml\n");
            },
        },
        Escape {
            label: "patch file ../patch.yaml",
            setup: |t| {
                let patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  patched: \"yes\"\n";
                t.write("escape/patch.yaml", patch);
                t.write("escape/k/r.yaml", CONFIGMAP);
                t.write("escape/k/kustomization.yaml", "resources:\n- r.yaml\npatches:\n- path: ../patch.yaml\n");
                t.write("control/k/patch.yaml", patch);
                t.write("control/k/r.yaml", CONFIGMAP);
                t.write("control/k/kustomization.yaml", "resources:\n- r.yaml\npatches:\n- path: patch.yaml\n");
            },
        },
        Escape {
            label: "configMapGenerator file ../settings.txt",
            setup: |t| {
                t.write("escape/settings.txt", "secret=1\n");
                t.write("escape/k/kustomization.yaml", "configMapGenerator:\n- name: c\n  files:\n  - ../settings.txt\n");
                t.write("control/k/settings.txt", "secret=1\n");
                t.write("control/k/kustomization.yaml", "configMapGenerator:\n- name: c\n  files:\n  - settings.txt\n");
            },
        },
    ]
}

#[test]
fn files_outside_the_root_are_refused_unless_restrictions_are_off() {
    for escape in escapes() {
        let tmp = TempTree::new("escape");
        (escape.setup)(&tmp);
        let k = tmp.path("escape/k");
        let label = escape.label;

        let refused = ours(&["build", s(&k)], &tmp.root);
        assert_failed(&refused, label);
        assert!(refused.stderr.contains("is not in or below"), "{label}: stderr does not explain the refusal:\n{}", refused.stderr);
        assert!(refused.stderr.contains(s(&k)), "{label}: stderr does not name the root:\n{}", refused.stderr);

        let control = ours(&["build", s(&tmp.path("control/k"))], &tmp.root);
        assert!(control.success(), "{label}: the control tree fails:\n{}", control.stderr);
        let allowed = ours(&["build", s(&k), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root);
        assert!(allowed.success(), "{label}: refused even with LoadRestrictionsNone:\n{}", allowed.stderr);
        assert_eq!(allowed.stdout, control.stdout, "{label}: with LoadRestrictionsNone");

        if let Some(reference) = reference_run(&[s(&k)], &tmp.root, label) {
            assert!(!reference.success(), "{label}: the reference allows it; the test premise is wrong");
            assert!(reference.stderr.contains("is not in or below"), "{label}: reference says:\n{}", reference.stderr);
        }
        if let Some(reference) = reference_run(&[s(&k), "--load-restrictor", "LoadRestrictionsNone"], &tmp.root, label) {
            assert!(reference.success(), "{label}: the reference fails with LoadRestrictionsNone:\n{}", reference.stderr);
            assert_eq!(allowed.stdout, reference.stdout, "{label}: differs from the reference with LoadRestrictionsNone");
        }
    }
}

#[cfg(unix)]
#[test]
fn symlink_staying_inside_the_root_is_allowed() {
    let tmp = TempTree::new("symlink-inside");
    tmp.write("k/real/cm.yaml", OUTSIDE);
    tmp.symlink("real/cm.yaml", "k/link.yaml");
    tmp.write("k/kustomization.yaml", "resources:\n- link.yaml\n");
    tmp.write("control/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("control/cm.yaml", OUTSIDE);
    let r = ours(&["build", s(&tmp.path("k"))], &tmp.root);
    assert!(r.success(), "a symlink inside the root was refused:\n{}", r.stderr);
    let control = ours(&["build", s(&tmp.path("control"))], &tmp.root);
    assert_eq!(r.stdout, control.stdout);
}

// ---------------------------------------------------------------------------
// Rules that match nothing: a warning, and a failure under --strict

/// An overlay over a committed fixture, adding one rule that matches nothing.
fn overlay_with(tmp: &TempTree, base_fixture: &str, rule: &str) -> std::path::PathBuf {
    tmp.copy_fixture(base_fixture, "base");
    fs::remove_file(tmp.path("base/expected.yaml")).unwrap();
    tmp.write("overlay/kustomization.yaml", &format!("resources:\n- ../base\n{rule}"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn check_unmatched_rule(label: &str, base_fixture: &str, rule: &str, warning_mentions: &str) {
    let tmp = TempTree::new("unmatched");
    let overlay = overlay_with(&tmp, base_fixture, rule);
    let kustomization = overlay.join("kustomization.yaml");

    let r = ours(&["build", s(&overlay)], &tmp.root);
    assert!(r.success(), "{label}: an unmatched rule failed the build:\n{}", r.stderr);
    assert_eq!(r.stdout, expected_of(base_fixture), "{label}: the rule matches nothing, so the output is the base's");
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("Warning")).collect();
    assert!(
        warnings.iter().any(|w| w.contains(s(&kustomization)) && w.contains(warning_mentions)),
        "{label}: no warning naming {} and {warning_mentions:?}:\n{}",
        kustomization.display(),
        r.stderr
    );
    if let Some(reference) = reference_run(&[s(&overlay)], &tmp.root, label) {
        assert!(reference.success(), "{label}: the reference fails:\n{}", reference.stderr);
        assert_eq!(r.stdout, reference.stdout, "{label}: stdout differs from the reference");
    }

    let strict = ours(&["build", s(&overlay), "--strict"], &tmp.root);
    assert_failed(&strict, &format!("{label} with --strict"));
    assert!(strict.stderr.contains(s(&kustomization)), "{label} --strict: stderr does not name the kustomization:\n{}", strict.stderr);

    // The same rule in a base, built through an overlay, is reported against the base's file.
    let nested = TempTree::new("unmatched-nested");
    let inner = overlay_with(&nested, base_fixture, rule);
    nested.write("top/kustomization.yaml", "resources:\n- ../overlay\n");
    let r = ours(&["build", s(&nested.path("top"))], &nested.root);
    assert!(r.success(), "{label} (nested): {}", r.stderr);
    assert!(r.stderr.contains(s(&inner.join("kustomization.yaml"))), "{label} (nested): warning does not name the inner kustomization:\n{}", r.stderr);
    assert_failed(&ours(&["build", s(&nested.path("top")), "--strict"], &nested.root), &format!("{label} (nested) --strict"));
}

#[test]
fn patch_whose_target_selects_nothing_warns_and_fails_under_strict() {
    check_unmatched_rule(
        "patch target",
        "replicas",
        "patches:\n- target:\n    kind: Deployment\n    name: no-such-deployment\n  patch: |-\n    - op: add\n      path: /metadata/labels\n      value: {a: b}\n",
        "no-such-deployment",
    );
}

#[test]
fn patch_whose_label_selector_selects_nothing_warns_and_fails_under_strict() {
    check_unmatched_rule(
        "patch labelSelector",
        "common_annotations",
        "patches:\n- target:\n    labelSelector: app=nobody\n  patch: |-\n    - op: add\n      path: /metadata/labels/x\n      value: y\n",
        "app=nobody",
    );
}

#[test]
fn strategic_merge_patch_that_changes_nothing_warns_and_fails_under_strict() {
    // The base already sets web's replicas to 5: the patch is a no-op.
    check_unmatched_rule(
        "no-op strategic merge patch",
        "replicas",
        "patches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      replicas: 5\n",
        "changes nothing",
    );
}

#[test]
fn json_patch_that_changes_nothing_warns_and_fails_under_strict() {
    check_unmatched_rule(
        "no-op JSON patch",
        "replicas",
        "patches:\n- target:\n    kind: Deployment\n    name: web\n  patch: |-\n    - op: test\n      path: /spec/replicas\n      value: 5\n",
        "changes nothing",
    );
}

#[test]
fn images_entry_matching_nothing_warns_and_fails_under_strict() {
    check_unmatched_rule("images entry", "images", "images:\n- name: postgres\n  newTag: \"16\"\n", "postgres");
}

#[test]
fn strict_accepts_a_build_where_every_rule_matches() {
    for name in ["patch_target_selectors", "images", "patch_json6902"] {
        let r = ours(&["build", s(&fixture(name)), "--strict"], &common::manifest_dir());
        assert!(r.success(), "{name} --strict failed although every rule matches:\n{}", r.stderr);
        assert_eq!(r.stdout, expected_of(name), "{name} --strict");
    }
}

// ---------------------------------------------------------------------------
// Deprecated fields

fn deprecated(field: &str, instead: &str) -> String {
    format!("# Warning: '{field}' is deprecated. Please use '{instead}' instead. Run 'kustomize edit fix' to update your Kustomization automatically.")
}

/// Builds `kustomization` (with a Pod in pod.yaml and a base in base/), and checks the
/// deprecation notices on stderr: exactly `expected`, and the reference's when present.
fn check_deprecations(label: &str, kustomization: &str, expected: &[String]) {
    let tmp = TempTree::new("deprecated");
    tmp.write("base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("base/cm.yaml", CONFIGMAP);
    tmp.write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n");
    tmp.write("kustomization.yaml", kustomization);
    let reference = reference_run(&[s(&tmp.root)], &tmp.root, label);
    if let Some(reference) = &reference {
        assert!(reference.success(), "{label}: reference failed:\n{}", reference.stderr);
        assert_eq!(deprecation_lines(&reference.stderr), expected, "{label}: the reference's notices changed");
    }
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert!(r.success(), "{label}: {}", r.stderr);
    assert_eq!(deprecation_lines(&r.stderr), expected, "{label}: deprecation notices");
    if let Some(reference) = &reference {
        assert_eq!(r.stdout, reference.stdout, "{label}: stdout differs from the reference");
    }
}

#[test]
fn deprecated_bases_common_labels_and_patches_strategic_merge_warn_as_kustomize() {
    check_deprecations(
        "bases, commonLabels, patchesStrategicMerge",
        "bases:\n- base\ncommonLabels:\n  a: b\npatchesStrategicMerge:\n- |-\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data:\n    k: v\n",
        &[
            deprecated("bases", "resources"),
            deprecated("commonLabels", "labels"),
            deprecated("patchesStrategicMerge", "patches"),
        ],
    );
}

#[test]
fn current_fields_print_no_deprecation_notice() {
    check_deprecations(
        "resources, labels, patches",
        "resources:\n- base\n- pod.yaml\nlabels:\n- pairs:\n    a: b\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: x\n    data:\n      k: v\n",
        &[],
    );
}

/// kustomize v5.6.0 reports imageTags before patchesJson6902, and its vars notice
/// says [EXPERIMENTAL] (read from the reference's stderr).
#[test]
fn deprecated_image_tags_json6902_and_vars_warn_as_kustomize() {
    check_deprecations(
        "imageTags, patchesJson6902, vars",
        "resources:\n- pod.yaml\nimageTags:\n- name: nginx\n  newTag: \"2\"\npatchesJson6902:\n- target:\n    version: v1\n    kind: Pod\n    name: p\n  patch: |-\n    - op: add\n      path: /metadata/labels\n      value: {a: b}\nvars:\n- name: X\n  objref:\n    kind: Pod\n    name: p\n    apiVersion: v1\n",
        &[
            deprecated("imageTags", "images"),
            deprecated("patchesJson6902", "patches"),
            "# Warning: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically.".to_owned(),
        ],
    );
}

// ---------------------------------------------------------------------------
// What is refused

#[test]
fn enable_helm_without_charts_is_an_ordinary_build() {
    let r = ours(&["build", s(&fixture("replicas")), "--enable-helm"], &common::manifest_dir());
    assert!(r.success(), "--enable-helm with no chart failed:\n{}", r.stderr);
    let plain = ours(&["build", s(&fixture("replicas"))], &common::manifest_dir());
    assert_eq!(r.stdout, plain.stdout);

    let tmp = TempTree::new("helm");
    tmp.write("kustomization.yaml", "helmCharts:\n- name: chart\n  repo: https://charts.example.com\n  version: 1.0.0\n");
    let r = ours(&["build", s(&tmp.root)], &tmp.root);
    assert_failed(&r, "helmCharts without --enable-helm");
    assert!(r.stderr.contains("must specify --enable-helm"), "stderr does not point at --enable-helm:\n{}", r.stderr);
}
