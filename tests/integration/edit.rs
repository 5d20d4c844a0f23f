//! `edit`: Argo CD's `kustomize edit` calls replayed on copies of an overlay. Each call must
//! change exactly the lines expected (comments and everything else stay), the result must
//! build, with the reference kustomize, to what a kustomization written by hand with the
//! fields kustomize's edit writes builds to, and our build of it must equal the reference's.
use std::fs;
use std::path::Path;

use crate::common::{self, copy_dir, manifest_dir, ours, reference_run, TempTree};

/// What kustomize's edit writes after the fields of a file without `apiVersion` and `kind`.
const KIND: &str = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";

const DIGEST: &str = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3";

/// One call as Argo CD makes it (in the kustomization folder), with the lines it removes and
/// adds in the kustomization file, in file order.
struct Call {
    args: Vec<String>,
    removed: Vec<String>,
    added: Vec<String>,
}

fn call(args: &[&str], removed: &[&str], added: &[&str]) -> Call {
    let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
    Call { args: strings(args), removed: strings(removed), added: strings(added) }
}

/// The lines only in `old` and the lines only in `new` (a longest-common-subsequence diff).
fn line_diff(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] { common[i + 1][j + 1] + 1 } else { common[i + 1][j].max(common[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut removed, mut added) = (0, 0, Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || common[i][j + 1] >= common[i + 1][j]) {
            added.push(b[j].to_string());
            j += 1;
        } else {
            removed.push(a[i].to_string());
            i += 1;
        }
    }
    (removed, added)
}

/// Runs each call in `dir` and checks the lines it changed.
fn replay(dir: &Path, calls: &[Call]) {
    let file = dir.join("kustomization.yaml");
    for c in calls {
        let before = fs::read_to_string(&file).unwrap();
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let r = ours(&args, dir);
        assert!(r.success(), "peerpods-build {} failed:\n{}", args.join(" "), r.stderr);
        assert_eq!(r.stdout, "", "edit prints nothing on stdout");
        let after = fs::read_to_string(&file).unwrap();
        let (removed, added) = line_diff(&before, &after);
        assert_eq!((removed, added), (c.removed.clone(), c.added.clone()), "lines changed by {}", args.join(" "));
    }
}

/// The reference's build of `dir`; None (after a SKIP line) where there is no reference,
/// which under CI is a failure (`reference_run` says so).
fn reference_build(dir: &Path, label: &str) -> Option<String> {
    let run = reference_run(&[dir.to_str().unwrap()], dir, label)?;
    assert!(run.success(), "{label}: reference build of {} failed:\n{}", dir.display(), run.stderr);
    Some(run.stdout)
}

/// The edited folder builds, with the reference, as the folder written by hand does; and our
/// build of it equals the reference's.
fn assert_builds_like(edited: &Path, by_hand: &Path, label: &str) {
    let ours_built = ours(&["build", edited.to_str().unwrap()], edited);
    assert!(ours_built.success(), "{label}: our build failed:\n{}", ours_built.stderr);
    let (Some(reference_edited), Some(reference_by_hand)) =
        (reference_build(edited, label), reference_build(by_hand, label))
    else {
        return;
    };
    assert_eq!(reference_edited, reference_by_hand, "{label}: the edited kustomization builds unlike the one written by hand");
    assert_eq!(ours_built.stdout, reference_edited, "{label}: our build differs from the reference's");
}

/// Argo CD's override calls, in its order, on the release fixture: every value already
/// exists in some form (scalars with comments, block and flow lists and maps), or is new.
fn release_calls() -> Vec<Call> {
    let sidecar = format!("sidecar=*@{DIGEST}");
    let digest_line = format!("  - digest: {DIGEST}");
    vec![
        call(
            &["edit", "set", "nameprefix", "--", "prod-"],
            &["namePrefix: staging-   # Argo CD overrides this per environment"],
            &["namePrefix: prod-   # Argo CD overrides this per environment"],
        ),
        call(&["edit", "set", "namesuffix", "--", "-v2"], &[], &["nameSuffix: -v2"]),
        call(
            &["edit", "set", "image", "app=registry.example.com/app:1.1", "nginx:1.27", &sidecar],
            &["    newTag: \"1.0\"   # bumped on every release", "  - name: sidecar", "    newTag: v2"],
            &[
                "    newTag: \"1.1\"   # bumped on every release",
                "  - name: nginx",
                "    newTag: \"1.27\"",
                &digest_line,
                "    name: sidecar",
            ],
        ),
        call(
            &["edit", "set", "replicas", "web=3", "worker=2"],
            &["    count: 1"],
            &["    count: 3", "  - count: 2", "    name: worker"],
        ),
        call(
            &["edit", "add", "label", "--force", "team:platform", "app.kubernetes.io/version:1.1"],
            &["  team: core   # owners"],
            &["  app.kubernetes.io/version: \"1.1\"", "  team: platform   # owners"],
        ),
        call(
            &["edit", "add", "label", "--force", "--without-selector", "--include-templates", "tier:backend"],
            &["      tier: frontend"],
            &["      tier: backend"],
        ),
        call(
            &["edit", "add", "annotation", "--force", "owner:platform", "note:hello, world"],
            &["commonAnnotations: {owner: core}"],
            &["commonAnnotations: {note: \"hello, world\", owner: platform}"],
        ),
        call(&["edit", "set", "namespace", "--", "prod"], &[], &["namespace: prod"]),
        call(
            &["edit", "add", "component", "../components/debug"],
            &["components: [../components/monitoring]"],
            &["components: [../components/monitoring, ../components/debug]"],
        ),
    ]
}

/// What kustomize's edit writes for the release fixture after those calls (it rewrites the
/// whole file: its own layout, comments only before fields).
fn release_by_hand() -> String {
    format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namePrefix: prod-
resources:
- ../base
images:
- name: app
  newName: registry.example.com/app
  newTag: \"1.1\"
- name: nginx
  newTag: \"1.27\"
- digest: {DIGEST}
  name: sidecar
replicas:
- count: 3
  name: web
- count: 2
  name: worker
commonLabels:
  app.kubernetes.io/version: \"1.1\"
  team: platform
labels:
- includeTemplates: true
  pairs:
    tier: backend
commonAnnotations:
  note: hello, world
  owner: platform
components:
- ../components/monitoring
- ../components/debug
nameSuffix: -v2
namespace: prod
"
    )
}

/// A scratch copy of the release fixture, and its overlay folder.
fn release_copy(label: &str) -> (TempTree, std::path::PathBuf) {
    let tmp = TempTree::new(label);
    copy_dir(&manifest_dir().join("tests/edit_fixtures/release"), &tmp.path("tree"));
    let overlay = tmp.path("tree/overlay");
    (tmp, overlay)
}

#[test]
fn argo_cd_overrides_on_a_commented_overlay_change_only_their_lines() {
    let (tmp, overlay) = release_copy("edit-release");
    replay(&overlay, &release_calls());
    tmp.write("tree/by-hand/kustomization.yaml", &release_by_hand());
    assert_builds_like(&overlay, &tmp.path("tree/by-hand"), "release overlay");
}

#[test]
fn repeating_the_overrides_changes_nothing() {
    let (_tmp, overlay) = release_copy("edit-repeat");
    let calls = release_calls();
    replay(&overlay, &calls);
    let file = overlay.join("kustomization.yaml");
    let edited = fs::read_to_string(&file).unwrap();
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&file).unwrap());
    let again: Vec<Call> = calls.into_iter().map(|c| Call { removed: Vec::new(), added: Vec::new(), ..c }).collect();
    replay(&overlay, &again);
    assert_eq!(fs::read_to_string(&file).unwrap(), edited);
    #[cfg(unix)]
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&fs::metadata(&file).unwrap()), inode, "an edit with nothing to change writes nothing");
}

#[test]
fn argo_cd_overrides_on_the_gcp_overlay() {
    let tmp = TempTree::new("edit-gcp");
    for folder in ["base", "components", "overlays/gcp"] {
        copy_dir(&manifest_dir().join(folder), &tmp.path(folder));
    }
    let gcp = tmp.path("overlays/gcp");
    let original = fs::read_to_string(gcp.join("kustomization.yaml")).unwrap();
    // kustomize's `edit add component` appends to the overlay's own `components` list, if it has one.
    let has_components = original.starts_with("components:\n") || original.contains("\ncomponents:\n");
    let component_lines: &[&str] = if has_components { &["- ../../components/tls"] } else { &["components:", "- ../../components/tls"] };
    // kustomize v5.6.0 itself fails on this `add label` call with two new labels and no
    // --force ("label ... already in kustomization file"): it puts every pair into the new
    // entry and then finds the second one there.
    let calls = vec![
        call(&["edit", "set", "nameprefix", "--", "pp-"], &[], &["namePrefix: pp-"]),
        call(&["edit", "set", "namesuffix", "--", "-gcp"], &[], &["nameSuffix: -gcp"]),
        call(
            &["edit", "set", "image", "quay.io/confidential-containers/cloud-api-adaptor=registry.example.com/caa:v0.14.0"],
            &[],
            &["images:", "- name: quay.io/confidential-containers/cloud-api-adaptor", "  newName: registry.example.com/caa", "  newTag: v0.14.0"],
        ),
        call(
            &["edit", "add", "label", "--without-selector", "--include-templates", "env:prod", "app.kubernetes.io/part-of:peer-pods"],
            &[],
            &["labels:", "- includeTemplates: true", "  pairs:", "    app.kubernetes.io/part-of: peer-pods", "    env: prod"],
        ),
        call(&["edit", "add", "annotation", "owner:platform-team"], &[], &["commonAnnotations:", "  owner: platform-team"]),
        call(&["edit", "set", "namespace", "--", "peer-pods"], &[], &["namespace: peer-pods"]),
        call(&["edit", "add", "component", "../../components/tls"], &[], component_lines),
    ];
    replay(&gcp, &calls);
    let edited = fs::read_to_string(gcp.join("kustomization.yaml")).unwrap();
    if !has_components {
        assert!(edited.starts_with(&original), "the original file stays, byte for byte, before the added fields");
    }
    // The overlay's own fields (whatever they are: the overlay's maintainers change them) and
    // the ones kustomize's edit writes, in its layout.
    let mut by_hand = with_component_appended(&original, "- ../../components/tls")
        + "namePrefix: pp-
nameSuffix: -gcp
images:
- name: quay.io/confidential-containers/cloud-api-adaptor
  newName: registry.example.com/caa
  newTag: v0.14.0
labels:
- includeTemplates: true
  pairs:
    app.kubernetes.io/part-of: peer-pods
    env: prod
commonAnnotations:
  owner: platform-team
namespace: peer-pods
";
    if !has_components {
        by_hand.push_str("components:\n- ../../components/tls\n");
    }
    copy_dir(&manifest_dir().join("overlays/gcp"), &tmp.path("overlays/gcp-by-hand"));
    tmp.write("overlays/gcp-by-hand/kustomization.yaml", &by_hand);
    assert_builds_like(&gcp, &tmp.path("overlays/gcp-by-hand"), "gcp overlay");
}

/// `text` with `item` added after the last entry of its block-style `components:` list (as
/// kustomize's edit appends), or unchanged when it has none.
fn with_component_appended(text: &str, item: &str) -> String {
    let mut out = String::new();
    let mut in_components = false;
    let mut added = false;
    for line in text.lines() {
        if in_components && !added && !line.starts_with("- ") && !line.starts_with("  ") {
            out.push_str(item);
            out.push('\n');
            added = true;
        }
        in_components = in_components || line == "components:";
        out.push_str(line);
        out.push('\n');
    }
    if in_components && !added {
        out.push_str(item);
        out.push('\n');
    }
    out
}

#[test]
fn refusals_exit_non_zero_with_kustomizes_message_and_write_nothing() {
    let (tmp, overlay) = release_copy("edit-refusals");
    let file = overlay.join("kustomization.yaml");
    let original = fs::read_to_string(&file).unwrap();
    let invalid_image = peerpods_build::edit::args::INVALID_IMAGE;
    let invalid_replica = "invalid format of replica, use the following format: <name>=<count>";
    let cases: &[(&[&str], &str)] = &[
        (&["edit", "add", "label", "team:other", "new:one"], "label team already in kustomization file. Use --force to override."),
        (&["edit", "add", "label", "--without-selector", "--include-templates", "tier:x"], "label tier already in kustomization file. Use --force to override."),
        (&["edit", "add", "annotation", "owner:x"], "annotation owner already in kustomization file. Use --force to override."),
        (&["edit", "add", "label", "--include-templates", "a:b"], "--without-selector flag must be specified for --include-templates to work"),
        (&["edit", "add", "label", ":v"], "invalid label: ':v' (need k:v pair where v may be quoted)"),
        (&["edit", "add", "label"], "must specify label"),
        (&["edit", "set", "image", "app"], invalid_image),
        (&["edit", "set", "image", "nginx:1.27", "registry.example.com/app"], invalid_image),
        (&["edit", "set", "image"], "no image specified"),
        (&["edit", "set", "replicas", "web"], invalid_replica),
        (&["edit", "set", "replicas", "web=three"], invalid_replica),
        (&["edit", "set", "replicas", "web=1=2"], invalid_replica),
        (&["edit", "set", "replicas"], "no replicas specified"),
        (&["edit", "set", "nameprefix", "a-", "b-"], "must specify exactly one prefix value"),
        (&["edit", "set", "namespace"], "must specify exactly one namespace value"),
        (&["edit", "add", "component"], "must specify a component file"),
        (&["edit", "add", "component", "../components/missing"], "../components/missing has no match: must build at directory: not a valid directory"),
    ];
    for (args, message) in cases {
        let r = ours(args, &overlay);
        assert!(!r.success(), "peerpods-build {} succeeded", args.join(" "));
        assert!(r.stderr.contains(message), "peerpods-build {}: expected {message:?} in:\n{}", args.join(" "), r.stderr);
        assert_eq!(fs::read_to_string(&file).unwrap(), original, "{} wrote the file", args.join(" "));
    }

    let empty = tmp.mkdir("empty");
    let r = ours(&["edit", "set", "nameprefix", "--", "p-"], &empty);
    assert!(!r.success());
    assert!(r.stderr.contains("Missing kustomization file 'kustomization.yaml'."), "{}", r.stderr);
    assert_eq!(common::files_under(&empty), Vec::<String>::new(), "nothing created");

    tmp.write("two/kustomization.yaml", "resources: []\n");
    tmp.write("two/Kustomization", "resources: []\n");
    let r = ours(&["edit", "set", "namespace", "--", "x"], &tmp.path("two"));
    assert!(r.stderr.contains("Found multiple kustomization file: [kustomization.yaml Kustomization]"), "{}", r.stderr);

    tmp.write("unknown/kustomization.yaml", "resources: []\nnotAField: 1\n");
    let r = ours(&["edit", "set", "namespace", "--", "x"], &tmp.path("unknown"));
    assert!(!r.success() && r.stderr.contains("invalid Kustomization"), "{}", r.stderr);
}

#[test]
fn other_kustomization_file_names_are_edited() {
    let tmp = TempTree::new("edit-names");
    for (folder, name) in [("yml", "kustomization.yml"), ("capital", "Kustomization")] {
        tmp.write(&format!("{folder}/{name}"), "resources: []\n");
        let dir = tmp.path(folder);
        let r = ours(&["edit", "set", "namespace", "--", "ns"], &dir);
        assert!(r.success(), "{name}: {}", r.stderr);
        // kustomize writes the fields the file lacked (apiVersion, kind) after those it had and
        // leaves the empty list out.
        assert_eq!(fs::read_to_string(dir.join(name)).unwrap(), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ns\n");
    }
}

/// The edited file is replaced through a fresh temporary file: a link planted where a
/// temporary file could be expected is never followed, and the file keeps its mode.
#[cfg(unix)]
#[test]
fn edits_never_follow_a_planted_link_and_keep_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempTree::new("edit-planted-link");
    let victim = tmp.write("victim.txt", "untouched\n");
    let file = tmp.write("app/kustomization.yaml", "resources: []\n");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    for name in [".kustomization.yaml.peerpods-build-edit.tmp", ".kustomization.yaml.peerpods-build.tmp"] {
        tmp.symlink(&victim.to_string_lossy(), &format!("app/{name}"));
    }
    let r = ours(&["edit", "set", "namespace", "--", "ns"], &tmp.path("app"));
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched\n");
    assert_eq!(fs::read_to_string(&file).unwrap(), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ns\n");
    assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
}

/// Argo CD reads `version --short` (kustomize v5.8.3's, with ours as build metadata) through Masterminds' semver pattern and chooses its calls
/// by the version: labels as separate arguments from 3.8.5, components from 3.7.0, Helm
/// options from 5.3.0.
#[test]
fn argo_cd_reads_version_short_as_kustomize_5_8_3() {
    let r = ours(&["version", "--short"], &manifest_dir());
    assert!(r.success(), "{}", r.stderr);
    // Argo CD's versionWithBinaryPath: trim, drop braces and a `kustomize/` prefix.
    let text = r.stdout.trim().trim_start_matches('{').trim_end_matches('}').trim().replace("  ", " ");
    let text = text.trim_start_matches("kustomize/");
    let semver = regex::Regex::new(
        r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    )
    .unwrap();
    let found = semver.find(text).expect("a semantic version in the output").as_str();
    assert_eq!(found, text, "the whole output is the version Argo CD parses");
    let caps = semver.captures(found).unwrap();
    let part = |i: usize| caps.get(i).map_or(0, |m| m.as_str().trim_start_matches('.').parse::<u64>().unwrap());
    assert_eq!((part(1), part(2), part(3)), (5, 8, 3), "Argo CD takes the kustomize version, {found}");
    assert!(caps.get(4).is_none(), "no pre-release part, which would sort before 5.8.3: {found}");
}

/// `set image` cases of kustomize's own tests (arguments, the file's `images`, the `images`
/// kustomize writes): our file must hold the same entries, build as kustomize's does, and, for
/// a file without images, have kustomize's very lines.
#[test]
fn every_set_image_form_writes_kustomizes_entries() {
    let d = DIGEST;
    let with_digest = format!("- digest: {d}\n  name: image2\n  newName: foo.bar.foo:8800/foo/image1\n");
    let cases: Vec<(Vec<String>, &str, String)> = vec![
        (vec!["image1=my-image1:my-tag".into()], "", "- name: image1\n  newName: my-image1\n  newTag: my-tag\n".into()),
        (vec!["image1=my-image1:1234".into()], "", "- name: image1\n  newName: my-image1\n  newTag: \"1234\"\n".into()),
        (vec!["image1=my-image1:3.2e2".into()], "", "- name: image1\n  newName: my-image1\n  newTag: \"3.2e2\"\n".into()),
        (vec![format!("image1=my-image1@{d}")], "", format!("- digest: {d}\n  name: image1\n  newName: my-image1\n")),
        (vec!["image1:my-tag".into()], "", "- name: image1\n  newTag: my-tag\n".into()),
        (vec![format!("image1@{d}")], "", format!("- digest: {d}\n  name: image1\n")),
        (vec![format!("my-image1:my-tag@{d}")], "", format!("- digest: {d}\n  name: my-image1\n  newTag: my-tag\n")),
        (
            vec![format!("image1=my-image1:my-tag@{d}")],
            "",
            format!("- digest: {d}\n  name: image1\n  newName: my-image1\n  newTag: my-tag\n"),
        ),
        (vec!["ngnix=localhost:5000/my-project/ngnix".into()], "", "- name: ngnix\n  newName: localhost:5000/my-project/ngnix\n".into()),
        (
            vec!["ngnix=localhost:5000/my-project/ngnix:dev-01".into()],
            "",
            "- name: ngnix\n  newName: localhost:5000/my-project/ngnix\n  newTag: dev-01\n".into(),
        ),
        (
            vec!["node:8.15.0".into(), "mysql=mariadb".into(), format!("alpine@{d}")],
            "",
            format!("- digest: {d}\n  name: alpine\n- name: mysql\n  newName: mariadb\n- name: node\n  newTag: 8.15.0\n"),
        ),
        (
            vec!["image1=foo.bar.foo:8800/foo/image1:foo-bar".into()],
            "- name: image1\n  newName: my-image1\n  newTag: my-tag\n- name: image2\n  newName: my-image2\n  newTag: my-tag2\n",
            "- name: image1\n  newName: foo.bar.foo:8800/foo/image1\n  newTag: foo-bar\n- name: image2\n  newName: my-image2\n  newTag: my-tag2\n".into(),
        ),
        (vec!["image1:v1".into()], "- name: image1\n  newName: my-image1\n  newTag: my-tag\n", "- name: image1\n  newTag: v1\n".into()),
        (
            vec!["image1=foo.bar.foo:8800/foo/image1:foo-bar".into(), format!("image2=my-image2@{d}"), "image3:my-tag".into()],
            "- name: image1\n  newName: my-image1\n  newTag: my-tag1\n- name: image2\n  newName: my-image2\n  newTag: my-tag2\n- name: image3\n  newTag: my-tag\n",
            format!("- name: image1\n  newName: foo.bar.foo:8800/foo/image1\n  newTag: foo-bar\n- digest: {d}\n  name: image2\n  newName: my-image2\n- name: image3\n  newTag: my-tag\n"),
        ),
        (
            vec!["image1=*:v1".into()],
            "- name: image1\n  newName: foo.bar.foo:8800/foo/image1\n  newTag: my-tag\n",
            "- name: image1\n  newName: foo.bar.foo:8800/foo/image1\n  newTag: v1\n".into(),
        ),
        (
            vec!["image1=my-image1:*".into()],
            "- name: image1\n  newName: foo.bar.foo:8800/foo/image1\n  newTag: my-tag\n",
            "- name: image1\n  newName: my-image1\n  newTag: my-tag\n".into(),
        ),
        (vec!["image1=*:*".into()], "- name: image1\n  newName: my-image1\n  newTag: my-tag\n", "- name: image1\n  newName: my-image1\n  newTag: my-tag\n".into()),
        (vec!["image1=*:v1".into()], "- name: image1\n  newTag: my-tag\n", "- name: image1\n  newTag: v1\n".into()),
        (vec!["image1=*:v1".into()], "", "- name: image1\n  newTag: v1\n".into()),
        (vec!["image1=my-image1:*".into()], "", "- name: image1\n  newName: my-image1\n".into()),
        (
            vec![format!("image2=*@{d}")],
            "- name: image2\n  newName: my-image2\n  digest: sha256:abcdef12345\n",
            format!("- digest: {d}\n  name: image2\n  newName: my-image2\n"),
        ),
        (
            vec![format!("image2=*@{d}")],
            "- name: image2\n  newName: my-image2\n  newTag: my-tag\n",
            format!("- digest: {d}\n  name: image2\n  newName: my-image2\n"),
        ),
        (
            vec!["image2=my-image2@*".into()],
            &with_digest,
            format!("- digest: {d}\n  name: image2\n  newName: my-image2\n"),
        ),
    ];
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n"
        .to_string()
        + &["image1:old", "image2", "image3:1", "my-image1:2", "ngnix", "node:8", "mysql:5", "alpine:3"]
            .iter()
            .enumerate()
            .map(|(i, image)| format!("      - name: c{i}\n        image: {image}\n"))
            .collect::<String>();
    let tmp = TempTree::new("edit-image-forms");
    for (n, (arguments, infile, expected)) in cases.iter().enumerate() {
        let label = format!("set image {}", arguments.join(" "));
        let start = if infile.is_empty() { "resources:\n- deployment.yaml\n".to_string() } else { format!("resources:\n- deployment.yaml\nimages:\n{infile}") };
        tmp.write(&format!("{n}/ours/deployment.yaml"), &deployment);
        tmp.write(&format!("{n}/ours/kustomization.yaml"), &start);
        tmp.write(&format!("{n}/kustomize/deployment.yaml"), &deployment);
        tmp.write(&format!("{n}/kustomize/kustomization.yaml"), &format!("resources:\n- deployment.yaml\nimages:\n{expected}"));
        let dir = tmp.path(&format!("{n}/ours"));
        let mut args = vec!["edit", "set", "image"];
        args.extend(arguments.iter().map(String::as_str));
        let r = ours(&args, &dir);
        assert!(r.success(), "{label}: {}", r.stderr);
        let written = fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
        let images_of = |text: &str| peerpods_build::yaml::parse::parse_document(text).unwrap()["images"].clone();
        assert_eq!(images_of(&written), images_of(&format!("images:\n{expected}")), "{label}: the images entries");
        if infile.is_empty() {
            assert_eq!(written, format!("{start}{KIND}images:\n{expected}"), "{label}: kustomize's lines");
        }
        assert_builds_like(&dir, &tmp.path(&format!("{n}/kustomize")), &label);
    }
}
