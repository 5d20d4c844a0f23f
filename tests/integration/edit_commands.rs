//! `create` and every `edit add|set|remove|fix` command, on the cases of kustomize's own tests
//! (`kustomize/commands/**/*_test.go` at v5.8.1) made into fixtures: each sequence of calls must
//! leave the kustomization with the fields kustomize's edit writes (the file "by hand"), the
//! edited folder must build, with the reference kustomize, to the same bytes as the folder with
//! the file by hand, our build of it must equal the reference's, and repeating the calls must
//! change nothing (where kustomize says so: it logs the item as already there).
use std::fs;
use std::path::Path;

use crate::common::{ours, reference_run, TempTree};

/// The files each case's folder starts with (besides its kustomization).
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.25\n",
    ),
    ("service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"),
    ("cm-a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"),
    ("cm-b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n"),
    ("replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"),
    ("json-patch.yaml", "- op: add\n  path: /metadata/annotations\n  value:\n    patched: \"yes\"\n"),
    ("app.env", "LOG_LEVEL=debug\nMODE=fast\n"),
    ("settings.properties", "a=1\nb=2\n"),
    ("label-transformer.yaml", "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\nlabels:\n  team: core\nfieldSpecs:\n- path: metadata/labels\n  create: true\n"),
    ("annotation-transformer.yaml", "apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: note\nannotations:\n  note: hi\nfieldSpecs:\n- path: metadata/annotations\n  create: true\n"),
    ("generator-cm.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: generated\nliterals:\n- x=y\n"),
    ("base/kustomization.yaml", "resources:\n- cm.yaml\n"),
    ("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-base\n"),
    ("base2/kustomization.yaml", "resources:\n- cm.yaml\n"),
    ("base2/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-base2\n"),
];

struct Case {
    label: &'static str,
    start: &'static str,
    calls: &'static [&'static [&'static str]],
    by_hand: &'static str,
    /// Whether repeating the calls leaves the file as it is.
    repeatable: bool,
}

const CASES: &[Case] = &[
    Case {
        label: "add resource: files, a glob, a folder; the file itself never",
        start: "resources:\n- deployment.yaml\n",
        calls: &[&["edit", "add", "resource", "service.yaml", "cm-*.yaml", "base", "kustomization.yaml", "deployment.yaml"]],
        by_hand: "resources:\n- deployment.yaml\n- service.yaml\n- cm-a.yaml\n- cm-b.yaml\n- base\n",
        repeatable: true,
    },
    Case {
        label: "add resource into a file without resources, in flow style",
        start: "namePrefix: p-\n",
        calls: &[&["edit", "add", "resource", "deployment.yaml"], &["edit", "add", "resource", "--no-verify", "base2"]],
        by_hand: "namePrefix: p-\nresources:\n- deployment.yaml\n- base2\n",
        repeatable: true,
    },
    Case {
        label: "add base",
        start: "resources: [deployment.yaml]  # app\n",
        calls: &[&["edit", "add", "base", "base,base2"]],
        by_hand: "resources:\n- deployment.yaml\n- base\n- base2\n",
        repeatable: false,
    },
    Case {
        label: "add patch: a file with a target, an inline patch; the same patch twice is added once",
        start: "resources:\n- deployment.yaml\n- service.yaml\n",
        calls: &[
            &["edit", "add", "patch", "--path", "replicas.yaml"],
            &["edit", "add", "patch", "--path", "json-patch.yaml", "--group", "apps", "--version", "v1", "--kind", "Deployment", "--name", "web"],
            &["edit", "add", "patch", "--patch", "[{\"op\": \"add\", \"path\": \"/metadata/labels\", \"value\": {\"svc\": \"yes\"}}]", "--kind", "Service", "--label-selector", ""],
        ],
        by_hand: "resources:\n- deployment.yaml\n- service.yaml\npatches:\n- path: replicas.yaml\n- path: json-patch.yaml\n  target:\n    group: apps\n    kind: Deployment\n    name: web\n    version: v1\n- patch: '[{\"op\": \"add\", \"path\": \"/metadata/labels\", \"value\": {\"svc\": \"yes\"}}]'\n  target:\n    kind: Service\n",
        repeatable: true,
    },
    Case {
        label: "add configmap: literals, files, an env file; a second call merges into the entry",
        start: "resources:\n- deployment.yaml\n",
        calls: &[
            &["edit", "add", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=two words"],
            &["edit", "add", "configmap", "settings", "--from-file=settings.properties", "--behavior=create"],
            &["edit", "add", "configmap", "env", "--from-env-file=app.env", "--disableNameSuffixHash", "--namespace=ns1"],
            &["edit", "add", "configmap", "keyed", "--from-file=props=settings.properties"],
        ],
        by_hand: "resources:\n- deployment.yaml\nconfigMapGenerator:\n- behavior: create\n  files:\n  - settings.properties\n  literals:\n  - a=1\n  - b=two words\n  name: settings\n- envs:\n  - app.env\n  name: env\n  namespace: ns1\n  options:\n    disableNameSuffixHash: true\n- files:\n  - props=settings.properties\n  name: keyed\n",
        repeatable: false,
    },
    Case {
        label: "add secret: type, literals, env file",
        start: "resources:\n- deployment.yaml\n",
        calls: &[
            &["edit", "add", "secret", "creds", "--from-literal=user=admin", "--from-literal=password=secret"],
            &["edit", "add", "secret", "tls", "--from-env-file=app.env", "--type=kubernetes.io/tls"],
        ],
        by_hand: "resources:\n- deployment.yaml\nsecretGenerator:\n- literals:\n  - user=admin\n  - password=secret\n  name: creds\n  type: Opaque\n- envs:\n  - app.env\n  name: tls\n  type: kubernetes.io/tls\n",
        repeatable: false,
    },
    Case {
        label: "add generator and transformer files",
        start: "resources:\n- deployment.yaml\n",
        calls: &[
            &["edit", "add", "transformer", "label-transformer.yaml", "annotation-*.yaml"],
            &["edit", "add", "generator", "generator-cm.yaml"],
        ],
        by_hand: "resources:\n- deployment.yaml\ntransformers:\n- label-transformer.yaml\n- annotation-transformer.yaml\ngenerators:\n- generator-cm.yaml\n",
        repeatable: true,
    },
    Case {
        label: "add, set and remove buildmetadata",
        start: "resources:\n- cm-a.yaml\n",
        calls: &[
            &["edit", "add", "buildmetadata", "originAnnotations,transformerAnnotations"],
            &["edit", "remove", "buildmetadata", "transformerAnnotations"],
            &["edit", "set", "buildmetadata", "originAnnotations,managedByLabel"],
        ],
        by_hand: "resources:\n- cm-a.yaml\nbuildMetadata:\n- originAnnotations\n- managedByLabel\n",
        repeatable: false,
    },
    Case {
        label: "set label and annotation overwrite",
        start: "resources:\n- deployment.yaml\ncommonLabels:\n  team: core   # owners\ncommonAnnotations: {owner: core}\n",
        calls: &[&["edit", "set", "label", "team:platform", "tier:web"], &["edit", "set", "annotation", "owner:platform", "note:\"quoted\""]],
        by_hand: "resources:\n- deployment.yaml\ncommonLabels:\n  team: platform\n  tier: web\ncommonAnnotations:\n  note: quoted\n  owner: platform\n",
        repeatable: true,
    },
    Case {
        label: "set configmap and secret: an existing key's value, the namespace",
        start: "resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: settings\n  literals:\n  - a=1   # default\n  - b=2\nsecretGenerator:\n- name: creds\n  namespace: old\n  literals:\n  - user=admin\n",
        calls: &[
            &["edit", "set", "configmap", "settings", "--from-literal=a=10"],
            &["edit", "set", "configmap", "settings", "--namespace=default", "--new-namespace=apps"],
            &["edit", "set", "secret", "creds", "--namespace=old", "--from-literal=user=root", "--new-namespace=new"],
        ],
        by_hand: "resources:\n- deployment.yaml\nconfigMapGenerator:\n- literals:\n  - a=10\n  - b=2\n  name: settings\n  namespace: apps\nsecretGenerator:\n- literals:\n  - user=root\n  name: creds\n  namespace: new\n",
        repeatable: false,
    },
    Case {
        label: "remove resource by name and by pattern",
        start: "resources:\n# the app\n- deployment.yaml\n- service.yaml\n- cm-a.yaml\n- cm-b.yaml\n- base\n",
        calls: &[&["edit", "remove", "resource", "service.yaml", "cm-*"], &["edit", "remove", "resource", "not-listed.yaml"]],
        by_hand: "resources:\n- deployment.yaml\n- base\n",
        repeatable: true,
    },
    Case {
        label: "remove every resource: the field goes",
        start: "namePrefix: p-\nresources: [cm-a.yaml, cm-b.yaml]\ngenerators:\n- generator-cm.yaml\n",
        calls: &[&["edit", "remove", "resource", "*.yaml"]],
        by_hand: "namePrefix: p-\ngenerators:\n- generator-cm.yaml\n",
        repeatable: true,
    },
    Case {
        label: "remove patch and transformer",
        start: "resources:\n- deployment.yaml\npatches:\n- path: replicas.yaml\n- path: json-patch.yaml\n  target:\n    kind: Deployment\ntransformers:\n- label-transformer.yaml\n- annotation-transformer.yaml\n",
        calls: &[
            &["edit", "remove", "patch", "--path", "json-patch.yaml", "--kind", "Deployment"],
            &["edit", "remove", "patch", "--path", "replicas.yaml", "--kind", "Deployment"],
            &["edit", "remove", "transformer", "label-*"],
        ],
        by_hand: "resources:\n- deployment.yaml\npatches:\n- path: replicas.yaml\ntransformers:\n- annotation-transformer.yaml\n",
        repeatable: true,
    },
    Case {
        label: "remove configmap and secret by name and namespace",
        start: "resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: a\n  literals: [x=1]\n- name: b\n  literals: [x=2]\n- name: b\n  namespace: other\n  literals: [x=3]\nsecretGenerator:\n- name: s\n  literals: [x=1]\n",
        calls: &[&["edit", "remove", "configmap", "a,b,missing"], &["edit", "remove", "secret", "s", "--namespace", "default"]],
        by_hand: "resources:\n- deployment.yaml\nconfigMapGenerator:\n- name: b\n  namespace: other\n  literals: [x=3]\n",
        repeatable: false,
    },
    Case {
        label: "remove label and annotation, -i for missing keys",
        start: "resources:\n- deployment.yaml\ncommonLabels:\n  a: \"1\"\n  b: \"2\"\ncommonAnnotations:\n  c: \"3\"\n",
        calls: &[&["edit", "remove", "label", "a"], &["edit", "remove", "annotation", "-i", "c,nope"], &["edit", "remove", "label", "-i", "zzz"]],
        by_hand: "resources:\n- deployment.yaml\ncommonLabels:\n  b: \"2\"\n",
        repeatable: false,
    },
];

/// A folder with the shared files and `kustomization` as its kustomization file.
fn folder(tmp: &TempTree, rel: &str, kustomization: &str) -> std::path::PathBuf {
    for (name, content) in FILES {
        tmp.write(&format!("{rel}/{name}"), content);
    }
    tmp.write(&format!("{rel}/kustomization.yaml"), kustomization);
    tmp.path(rel)
}

fn fields(text: &str, label: &str) -> serde_json::Value {
    peerpods_build::yaml::parse::parse_document(text).unwrap_or_else(|e| panic!("{label}: {e}\n{text}"))
}

/// The reference's build of `dir` (None, after a SKIP, when there is none).
fn reference_build(dir: &Path, label: &str) -> Option<String> {
    let run = reference_run(&[dir.to_str().unwrap()], dir, label)?;
    assert!(run.success(), "{label}: the reference cannot build {}:\n{}", dir.display(), run.stderr);
    Some(run.stdout)
}

/// `edited` builds, with the reference, as `by_hand` does, and ours equals the reference's.
pub(crate) fn assert_same_build(edited: &Path, by_hand: &Path, label: &str) {
    let built = ours(&["build", edited.to_str().unwrap()], edited);
    assert!(built.success(), "{label}: our build failed:\n{}", built.stderr);
    let (Some(theirs_edited), Some(theirs_by_hand)) = (reference_build(edited, label), reference_build(by_hand, label)) else {
        return;
    };
    assert_eq!(theirs_edited, theirs_by_hand, "{label}: the edited folder builds unlike the one by hand");
    assert_eq!(built.stdout, theirs_edited, "{label}: our build differs from the reference's");
}

fn run_calls(dir: &Path, calls: &[&[&str]], label: &str) {
    for call in calls {
        let r = ours(call, dir);
        assert!(r.success(), "{label}: peerpods-build {} failed:\n{}", call.join(" "), r.stderr);
    }
}

#[test]
fn each_edit_writes_kustomizes_fields_and_builds_as_they_do() {
    let tmp = TempTree::new("edit-commands");
    for (n, case) in CASES.iter().enumerate() {
        let edited = folder(&tmp, &format!("{n}/edited"), case.start);
        let by_hand = folder(&tmp, &format!("{n}/by-hand"), case.by_hand);
        run_calls(&edited, case.calls, case.label);
        let file = edited.join("kustomization.yaml");
        let written = fs::read_to_string(&file).unwrap();
        // kustomize's edit fills in a missing apiVersion and kind.
        let mut expected = fields(case.by_hand, case.label);
        for (key, value) in [("apiVersion", "kustomize.config.k8s.io/v1beta1"), ("kind", "Kustomization")] {
            expected.as_object_mut().unwrap().entry(key).or_insert(value.into());
        }
        assert_eq!(fields(&written, case.label), expected, "{}: the fields written:\n{written}", case.label);
        assert_same_build(&edited, &by_hand, case.label);
        if case.repeatable {
            run_calls(&edited, case.calls, case.label);
            assert_eq!(fs::read_to_string(&file).unwrap(), written, "{}: repeating the calls changed the file", case.label);
        }
    }
}

#[test]
fn comments_and_untouched_lines_stay() {
    let tmp = TempTree::new("edit-commands-comments");
    let start = "# overlay for staging\nresources:\n# the app\n- deployment.yaml   # keep\n- service.yaml\n\nnamePrefix: staging-  # per environment\n";
    let dir = folder(&tmp, "app", start);
    run_calls(&dir, &[&["edit", "remove", "resource", "service.yaml"], &["edit", "add", "resource", "cm-a.yaml"]], "comments");
    let text = fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    assert_eq!(
        text,
        "# overlay for staging\nresources:\n# the app\n- deployment.yaml   # keep\n- cm-a.yaml\n\nnamePrefix: staging-  # per environment\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
    );
}

/// kustomize's refusals, with its messages; nothing is written.
#[test]
fn refusals_say_what_kustomize_says_and_write_nothing() {
    let tmp = TempTree::new("edit-commands-refusals");
    let start = "resources:\n- deployment.yaml\ncommonLabels:\n  a: b\nbuildMetadata:\n- originAnnotations\nconfigMapGenerator:\n- name: settings\n  literals:\n  - a=1\n";
    let dir = folder(&tmp, "app", start);
    let cases: &[(&[&str], &str)] = &[
        (&["edit", "add", "resource"], "must specify a resource file"),
        (&["edit", "add", "resource", "missing.yaml"], "missing.yaml has no match: must build at directory: not a valid directory"),
        (&["edit", "add", "base", "missing"], "missing does not exist"),
        (&["edit", "add", "base"], "must specify a base directory"),
        (&["edit", "add", "patch"], "must provide either patch or path"),
        (&["edit", "add", "patch", "--path", "a.yaml", "--patch", "x"], "patch and path can't be set at the same time"),
        (&["edit", "add", "configmap", "x"], "at least from-env-file, or from-file or from-literal must be set"),
        (&["edit", "add", "configmap", "x", "--from-env-file=app.env", "--from-literal=a=b"], "from-env-file cannot be combined with from-file or from-literal"),
        (&["edit", "add", "configmap", "x", "--from-literal=a=b", "--behavior=bogus"], "invalid behavior: must be one of \"create\", \"merge\", or \"replace\""),
        (&["edit", "add", "buildmetadata", "originAnnotations"], "buildMetadata option originAnnotations already in kustomization file"),
        (&["edit", "add", "buildmetadata", "bogus"], "invalid buildMetadata option: bogus"),
        (&["edit", "add", "buildmetadata", "a", "b"], "too many arguments: [a b]; to provide multiple buildMetadata options, please separate options by comma"),
        (&["edit", "set", "configmap", "settings"], "at least one of [--from-literal, --new-namespace] must be specified"),
        (&["edit", "set", "configmap", "nope", "--from-literal=a=2"], "unable to find ConfigMap with name \"nope\""),
        (&["edit", "set", "configmap", "settings", "--from-literal=zz=2"], "key 'zz' not found in resource"),
        (&["edit", "remove", "configmap", "nope"], "no specified configmap(s) were found in the kustomization.yaml file"),
        (&["edit", "remove", "configmap"], "at least one configmap name must be specified"),
        (&["edit", "remove", "secret", "a", "b"], "too many arguments: [a b]; to provide multiple secrets to remove, please separate secret names by commas"),
        (&["edit", "remove", "label", "nope"], "label nope is not defined in kustomization file"),
        (&["edit", "remove", "label", "a", "b"], "labels must be comma-separated, with no spaces"),
        (&["edit", "remove", "label", "a,"], "invalid label: '' (name is empty)"),
        (&["edit", "remove", "annotation", "x"], "commonAnnotations is not defined in kustomization file"),
        (&["edit", "remove", "resource"], "must specify a resource file"),
    ];
    let file = dir.join("kustomization.yaml");
    for (args, message) in cases {
        let r = ours(args, &dir);
        assert_eq!(r.code, Some(1), "peerpods-build {}: exit 1:\n{}", args.join(" "), r.stderr);
        assert!(r.stderr.contains(message), "peerpods-build {}: expected {message:?} in:\n{}", args.join(" "), r.stderr);
        assert!(r.stderr.starts_with("Error: "), "one style of error line: {}", r.stderr);
        assert_eq!(fs::read_to_string(&file).unwrap(), start, "{} wrote the file", args.join(" "));
    }
}

/// kustomize's `edit fix` cases, and the deprecated fields its reader folds: the fixed
/// kustomization has the fields kustomize writes, and builds, with the reference, as the
/// unfixed one does.
#[test]
fn fix_rewrites_deprecated_fields_and_the_build_stays() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "patchesJson6902",
            "resources:\n- deployment.yaml\n- service.yaml\npatchesJson6902:\n- path: json-patch.yaml\n  target:\n    kind: Service\n    name: web\n- path: json-patch.yaml\n  target:\n    group: apps\n    kind: Deployment\n    version: v1\n    name: web\n",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- service.yaml\npatches:\n- path: json-patch.yaml\n  target:\n    kind: Service\n    name: web\n- path: json-patch.yaml\n  target:\n    group: apps\n    kind: Deployment\n    name: web\n    version: v1\n",
        ),
        (
            "patchesJson6902 after patches",
            "resources:\n- deployment.yaml\n- service.yaml\npatchesJson6902:\n- path: json-patch.yaml\n  target:\n    kind: Deployment\n    name: web\npatches:\n- path: json-patch.yaml\n  target:\n    kind: Service\n",
            "patches:\n- path: json-patch.yaml\n  target:\n    kind: Service\n- path: json-patch.yaml\n  target:\n    kind: Deployment\n    name: web\nresources:\n- deployment.yaml\n- service.yaml\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
        ),
        (
            "patchesStrategicMerge, inline and a file, after patchesJson6902",
            "resources:\n- deployment.yaml\n- service.yaml\npatchesStrategicMerge:\n- replicas.yaml\n- |-\n  apiVersion: v1\n  kind: Service\n  metadata:\n    name: web\n  spec:\n    type: NodePort\npatchesJson6902:\n- path: json-patch.yaml\n  target:\n    kind: Deployment\n    name: web\n",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- service.yaml\npatches:\n- path: json-patch.yaml\n  target:\n    kind: Deployment\n    name: web\n- path: replicas.yaml\n- patch: |-\n    apiVersion: v1\n    kind: Service\n    metadata:\n      name: web\n    spec:\n      type: NodePort\n",
        ),
        (
            "commonLabels",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\ncommonLabels:\n  foo: bar\nlabels:\n- pairs:\n    a: b\n",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\nlabels:\n- pairs:\n    a: b\n- includeSelectors: true\n  pairs:\n    foo: bar\n",
        ),
        (
            "bases, imageTags and a generator's env",
            "bases:\n- base\nresources:\n- deployment.yaml\nimageTags:\n- name: nginx\n  newTag: \"1.27\"\nconfigMapGenerator:\n- name: settings\n  env: app.env\n",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- base\nimages:\n- name: nginx\n  newTag: \"1.27\"\nconfigMapGenerator:\n- envs:\n  - app.env\n  name: settings\n",
        ),
    ];
    let tmp = TempTree::new("edit-fix");
    for (n, (label, start, by_hand)) in cases.iter().enumerate() {
        let unfixed = folder(&tmp, &format!("{n}/unfixed"), start);
        let edited = folder(&tmp, &format!("{n}/edited"), start);
        let hand = folder(&tmp, &format!("{n}/by-hand"), by_hand);
        let r = ours(&["edit", "fix"], &edited);
        assert!(r.success(), "{label}: {}", r.stderr);
        assert!(r.stdout.contains("Fixed fields:\n  patchesJson6902 -> patches"), "{label}: {}", r.stdout);
        assert!(!r.stderr.contains("Warning: 'Fixed'"), "{label}: the build changed: {}", r.stderr);
        let written = fs::read_to_string(edited.join("kustomization.yaml")).unwrap();
        assert_eq!(fields(&written, label), fields(by_hand, label), "{label}: the fields written:\n{written}");
        assert_same_build(&edited, &hand, label);
        assert_same_build(&edited, &unfixed, label);
        let again = ours(&["edit", "fix"], &edited);
        assert!(again.success(), "{label}: {}", again.stderr);
        assert_eq!(fs::read_to_string(edited.join("kustomization.yaml")).unwrap(), written, "{label}: a second fix changed the file");
    }
    let conflict = folder(&tmp, "conflict", "resources:\n- deployment.yaml\ncommonLabels:\n  foo: bar\nlabels:\n- pairs:\n    foo: baz\n    a: b\n");
    let r = ours(&["edit", "fix"], &conflict);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("label name 'foo' exists in both commonLabels and labels"), "{}", r.stderr);
}

/// `create`, as kustomize's tests run it: fields from the flags, resources from a list (globs
/// expanded) and detected, an existing kustomization refused.
#[test]
fn create_writes_a_kustomization_that_builds_as_kustomizes() {
    let tmp = TempTree::new("create");
    let dir = folder(&tmp, "app", "");
    fs::remove_file(dir.join("kustomization.yaml")).unwrap();
    // kustomize's detection cases: prose and YAML that is no object are left out.
    fs::write(dir.join("README.md"), "# Not a k8s resource\nThis file is not a valid kubernetes object.\n").unwrap();
    fs::write(dir.join("non-k8s.yaml"), "# Not a k8s resource\nother: yaml\nfoo:\n- bar\n- baz\n").unwrap();
    tmp.write("app/nested/deep/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
    let r = ours(
        &["create", "--resources", "deployment.yaml,base", "--autodetect", "--namespace", "staging", "--nameprefix", "acme-", "--namesuffix", "-v1", "--labels", "app:web,tier:\"front\"", "--annotations", "owner:team"],
        &dir,
    );
    assert!(r.success(), "{}", r.stderr);
    let written = fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    // kustomize writes apiVersion and kind first, then its field order.
    let detected = "- annotation-transformer.yaml\n- cm-a.yaml\n- cm-b.yaml\n- generator-cm.yaml\n- label-transformer.yaml\n- replicas.yaml\n- service.yaml\n";
    assert_eq!(
        written,
        format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- base\n{detected}namePrefix: acme-\nnameSuffix: -v1\nnamespace: staging\ncommonLabels:\n  app: web\n  tier: front\ncommonAnnotations:\n  owner: team\n")
    );
    let again = ours(&["create"], &dir);
    assert_eq!(again.code, Some(1));
    assert!(again.stderr.contains("kustomization file already exists"), "{}", again.stderr);

    let recursive = folder(&tmp, "tree", "");
    fs::remove_file(recursive.join("kustomization.yaml")).unwrap();
    // A second Deployment named web would make the tree unbuildable.
    fs::remove_file(recursive.join("replicas.yaml")).unwrap();
    tmp.write("tree/nested/deep/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
    let r = ours(&["init", "--autodetect", "--recursive"], &recursive);
    assert!(r.success(), "{}", r.stderr);
    let written = fs::read_to_string(recursive.join("kustomization.yaml")).unwrap();
    assert!(written.contains("- base\n- base2\n") && written.contains("- nested/deep/pod.yaml\n"), "{written}");
    // A list of patch operations and an env file are no resources.
    assert!(!written.contains("json-patch.yaml") && !written.contains("app.env"), "{written}");
    let built = ours(&["build", "."], &recursive);
    assert!(built.success(), "{}", built.stderr);
    if let Some(theirs) = reference_build(&recursive, "create --recursive") {
        assert_eq!(built.stdout, theirs);
    }
}

/// `edit fix --vars` on kustomize's cases (a var inside a delimited value; a var of an overlay
/// used in its base): the replacements kustomize writes, `$(VAR)` rewritten in the resource
/// files, and the reference builds the converted tree as it built the one with vars.
#[test]
fn fix_vars_become_replacements_that_build_the_same() {
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: my-secret\n";
    let var = "vars:\n- name: SOME_SECRET_NAME\n  objref:\n    kind: Secret\n    name: my-secret\n    apiVersion: v1\n";
    let replacement = |options: &str| {
        format!("replacements:\n- source:\n    kind: Secret\n    name: my-secret\n    version: v1\n  targets:\n  - fieldPaths:\n    - spec.containers.0.env.0.value\n{options}    select:\n      kind: Pod\n      name: my-pod\n      version: v1\n")
    };
    let pod = |value: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: my-pod\nspec:\n  containers:\n  - image: myimage\n    name: hello\n    env:\n    - name: SECRET_TOKEN\n      value: {value}\n")
    };
    struct VarsCase {
        label: &'static str,
        pod_at: &'static str,
        resources: &'static str,
        value: &'static str,
        options: &'static str,
    }
    let cases = [
        VarsCase { label: "delimited", pod_at: "pod.yaml", resources: "- pod.yaml\n- secret.yaml\n", value: "my/path/$(SOME_SECRET_NAME)/secret/path", options: "    options:\n      delimiter: /\n      index: 2\n" },
        VarsCase { label: "in a base", pod_at: "base/pod.yaml", resources: "- base\n- secret.yaml\n", value: "$(SOME_SECRET_NAME)", options: "" },
    ];
    let tmp = TempTree::new("edit-fix-vars");
    for (n, case) in cases.iter().enumerate() {
        for side in ["original", "fixed"] {
            tmp.write(&format!("{n}/{side}/kustomization.yaml"), &format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\nresources:\n{}\n{var}", case.resources));
            tmp.write(&format!("{n}/{side}/{}", case.pod_at), &pod(case.value));
            tmp.write(&format!("{n}/{side}/secret.yaml"), secret);
            tmp.write(&format!("{n}/{side}/base/kustomization.yaml"), "resources:\n- pod.yaml\n");
        }
        let fixed = tmp.path(&format!("{n}/fixed"));
        let r = ours(&["edit", "fix", "--vars"], &fixed);
        assert!(r.success(), "{}: {}", case.label, r.stderr);
        assert!(r.stdout.contains("  vars -> replacements"), "{}", r.stdout);
        let written = fs::read_to_string(fixed.join("kustomization.yaml")).unwrap();
        let expected = format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{}{}", case.resources, replacement(case.options));
        assert_eq!(fields(&written, case.label), fields(&expected, case.label), "{}:\n{written}", case.label);
        let placeholder = case.value.replace("$(SOME_SECRET_NAME)", "SOME_SECRET_NAME_PLACEHOLDER");
        assert_eq!(fs::read_to_string(fixed.join(case.pod_at)).unwrap(), pod(&placeholder), "{}", case.label);
        assert_same_build(&fixed, &tmp.path(&format!("{n}/original")), case.label);
    }
    // A var in the middle of a value without the same character around it cannot be converted.
    tmp.write("bad/kustomization.yaml", &format!("resources:\n- pod.yaml\n- secret.yaml\n{var}"));
    tmp.write("bad/pod.yaml", &pod("a-$(SOME_SECRET_NAME)/b"));
    tmp.write("bad/secret.yaml", secret);
    let r = ours(&["edit", "fix", "--vars"], &tmp.path("bad"));
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("cannot convert all vars to replacements; $(SOME_SECRET_NAME) is not delimited"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(tmp.path("bad/pod.yaml")).unwrap(), pod("a-$(SOME_SECRET_NAME)/b"), "nothing written");
    // A file outside the folder (through `..`) is never rewritten.
    tmp.write("outside/pod.yaml", &pod("$(SOME_SECRET_NAME)"));
    tmp.write("inner/kustomization.yaml", &format!("resources:\n- ../outside/pod.yaml\n{var}"));
    let r = ours(&["edit", "fix", "--vars"], &tmp.path("inner"));
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("outside this kustomization's folder; nothing written"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(tmp.path("outside/pod.yaml")).unwrap(), pod("$(SOME_SECRET_NAME)"));
    assert!(fs::read_to_string(tmp.path("inner/kustomization.yaml")).unwrap().contains("vars:"));
}
