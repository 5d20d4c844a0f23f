//! kustomize's rules for the cases a fixture folder cannot hold: builds that must fail (with
//! kustomize's words), symbolic links, and rules whose point is that they change nothing.
//!
//! Each case is written into a scratch tree. peerpods-build must fail with the expected words (or
//! print the expected output), and the reference, where installed, must do the same; without it
//! that half is skipped with a SKIP line on stderr (a failure under `CI=true`).

use crate::common::{ours, reference_run, TempTree};
use pretty_assertions::assert_eq;

/// Writes `files` (path, content) into a scratch tree labelled `label`.
fn tree(label: &str, files: &[(&str, &str)]) -> TempTree {
    let t = TempTree::new(label);
    for (path, content) in files {
        t.write(path, content);
    }
    t
}

/// Building `dir` of `t` fails, and stderr holds `ours` for peerpods-build and `kustomize` for
/// the reference.
fn fails_with(label: &str, t: &TempTree, dir: &str, ours_words: &str, kustomize_words: &str) {
    fails_with_flags(label, t, dir, &[], ours_words, kustomize_words)
}

/// [`fails_with`], building with `flags`.
fn fails_with_flags(label: &str, t: &TempTree, dir: &str, flags: &[&str], ours_words: &str, kustomize_words: &str) {
    let path = t.path(dir);
    let path = path.to_str().expect("UTF-8 path");
    let mut args = vec!["build", path];
    args.extend_from_slice(flags);
    let r = ours(&args, &t.root);
    assert!(!r.success(), "{label}: peerpods-build succeeded, printing:\n{}", r.stdout);
    assert!(r.stderr.contains(ours_words), "{label}: peerpods-build's error lacks {ours_words:?}:\n{}", r.stderr);
    if let Some(reference) = reference_run(&args[1..], &t.root, label) {
        assert!(!reference.success(), "{label}: the reference succeeded, printing:\n{}", reference.stdout);
        assert!(
            reference.stderr.contains(kustomize_words),
            "{label}: the reference's error lacks {kustomize_words:?}:\n{}",
            reference.stderr
        );
    }
}

/// Building `dir` of `t` (with `flags`) prints `expected`; returns peerpods-build's stderr.
fn prints(label: &str, t: &TempTree, dir: &str, flags: &[&str], expected: &str) -> String {
    let path = t.path(dir);
    let path = path.to_str().expect("UTF-8 path");
    let mut args = vec!["build", path];
    args.extend_from_slice(flags);
    let r = ours(&args, &t.root);
    assert!(r.success(), "{label}: peerpods-build failed:\n{}", r.stderr);
    assert_eq!(r.stdout, expected, "{label}: peerpods-build's output");
    let mut reference_args = vec![path];
    reference_args.extend_from_slice(flags);
    if let Some(reference) = reference_run(&reference_args, &t.root, label) {
        assert!(reference.success(), "{label}: the reference failed:\n{}", reference.stderr);
        assert_eq!(reference.stdout, expected, "{label}: the reference's output");
    }
    r.stderr
}

const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

#[test]
fn kustomizations_with_nothing_but_type_fields_are_empty() {
    let empty = [
        ("nothing", ""),
        ("comments", "# only a comment\n"),
        ("type-only", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"),
        ("component", "kind: Component\n"),
        ("null-fields", "resources:\nmetadata:\nnamePrefix: \"\"\n"),
        // kustomize moves `bases` into `resources`: an empty list leaves nothing set.
        ("empty-bases", "bases: []\n"),
    ];
    for (label, text) in empty {
        let t = tree(label, &[("site/svc.yaml", CONFIG_MAP), ("site/kustomization.yaml", "resources:\n- svc.yaml\n- ../empty\n"), ("empty/kustomization.yaml", text)]);
        fails_with(label, &t, "site", "kustomization.yaml is empty", "kustomization.yaml is empty");
    }
    // An empty list or map is set, as in Go.
    let t = tree("empty-list", &[("kustomization.yaml", "resources: []\n")]);
    prints("empty-list", &t, ".", &[], "");
}

#[test]
fn resources_need_a_kind_and_but_for_lists_a_name() {
    let cases = [
        (
            "no-name",
            "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  labels:\n    team: billing\nspec:\n  hard:\n    pods: \"10\"\n",
            "missing metadata.name in object {{v1 ResourceQuota} {{ } map[team:billing] map[]}}",
        ),
        (
            "null-name",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: null\n  namespace: ns\n  labels:\n    z: 1\n    a: x\n    m:\n  annotations:\n    q: true\n",
            "missing metadata.name in object {{v1 ConfigMap} {{ ns} map[a:x m: z:1] map[q:true]}}",
        ),
        (
            "list-item-without-name",
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    labels:\n      a: b\n",
            "missing metadata.name in object {{v1 ConfigMap} {{ } map[a:b] map[]}}",
        ),
        (
            "no-kind",
            "apiVersion: v1\nmetadata:\n  name: default-limits\nspec:\n  limits:\n  - type: Container\n",
            "missing kind in object {{v1 } {{default-limits } map[] map[]}}",
        ),
        ("no-metadata-at-all", "foo: bar\n", "missing Resource metadata"),
    ];
    for (label, resource, words) in cases {
        let t = tree(label, &[("kustomization.yaml", "resources:\n- r.yaml\n"), ("r.yaml", resource)]);
        fails_with(label, &t, ".", words, words);
    }
    // A list without items needs no name (and gets an empty metadata when kustomize sets the
    // annotations of every resource again at the end).
    let t = tree("empty-list-kind", &[("kustomization.yaml", "resources:\n- r.yaml\n"), ("r.yaml", "apiVersion: v1\nkind: ConfigMapList\n")]);
    let stderr = prints("empty-list-kind", &t, ".", &[], "apiVersion: v1\nkind: ConfigMapList\nmetadata: {}\n");
    assert!(!stderr.contains("Error"), "{stderr}");
}

#[test]
fn kustomization_syntax_errors_are_invalid_kustomizations_with_a_position() {
    let t = tree(
        "kustomization-syntax",
        &[
            ("app/kustomization.yaml", "resources:\n- ../base\n"),
            ("base/kustomization.yaml", "resources:\n- cm.yaml\nnamePrefix: dev-\n  namespace: sandbox\n"),
            ("base/cm.yaml", CONFIG_MAP),
        ],
    );
    let file = t.path("base/kustomization.yaml");
    // kustomize's message whole, and on the next line where.
    let base = t.path("base").canonicalize().expect("scratch tree");
    let words = format!("couldn't make target for path '{}': invalid Kustomization: yaml: line 4: mapping values are not allowed in this context", base.display());
    fails_with("kustomization-syntax", &t, "app", &format!("{words}\n  at {}:4:12\n", file.display()), &words);
}

#[test]
fn plugins_other_than_builtin_ones_are_external_and_disabled() {
    let krm = "apiVersion: example.com/v1\nkind: Painter\nmetadata:\n  name: p\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example/painter\n";
    let t = tree("krm-transformer", &[("kustomization.yaml", "transformers:\n- fn.yaml\n"), ("fn.yaml", krm)]);
    let words = "external plugins disabled; unable to load external plugin 'Painter'";
    fails_with("krm-transformer", &t, ".", words, words);

    let go_plugin = "apiVersion: someteam.example.com/v1\nkind: Chart\nmetadata:\n  name: c\n";
    let t = tree("external-generator", &[("kustomization.yaml", "generators:\n- gen.yaml\n"), ("gen.yaml", go_plugin)]);
    let words = "loading generator plugins: failed to load generator: external plugins disabled; unable to load external plugin 'Chart'";
    fails_with("external-generator", &t, ".", words, words);
}

#[test]
fn a_non_scalar_mapping_key_fails_only_after_every_resource_is_read() {
    let templated = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: {{ .ns }}\n";
    // A file missing later in `resources` is the error kustomize meets first.
    let t = tree("complex-key-then-missing", &[("kustomization.yaml", "resources:\n- d.yaml\n- missing.yaml\n"), ("d.yaml", templated)]);
    fails_with("complex-key-then-missing", &t, ".", "no such file or directory", "no such file or directory");
    // Alone, the key is the error.
    let t = tree("complex-key", &[("kustomization.yaml", "resources:\n- d.yaml\n"), ("d.yaml", templated)]);
    let file = t.path("d.yaml");
    let words = r#"map[string]interface {}(nil): yaml: invalid map key: map[string]interface {}{".ns":""}"#;
    fails_with("complex-key", &t, ".", &format!("{words}\n  at {}:6:9\n", file.display()), words);
    // Keys of every kind, printed as Go prints the decoded key.
    let keys = [
        ("[a, 1, 2.5, null, \"\"]: x", r#"[]interface {}{"a", 1, 2.5, interface {}(nil), ""}"#),
        ("? {a: 1, b: [x], c: }\n    : v", r#"map[string]interface {}{"a":1, "b":[]interface {}{"x"}, "c":""}"#),
        ("? - q\n      - 7\n    : v", r#"[]interface {}{"q", 7}"#),
        ("{a: {{b: c}: d}}: e", r#"map[string]interface {}{"b":"c"}"#),
    ];
    for (key, printed) in keys {
        let doc = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    {key}\n");
        let t = tree("complex-key-kinds", &[("kustomization.yaml", "resources:\n- d.yaml\n"), ("d.yaml", &doc)]);
        let words = format!("map[string]interface {{}}(nil): yaml: invalid map key: {printed}");
        fails_with(key, &t, ".", &words, &words);
    }
}

#[test]
fn values_the_yaml_encoder_refuses_fail_the_build() {
    for (label, value) in [("delete", "\\x7f"), ("c1-control", "\\u0090"), ("non-character", "\\uFFFE")] {
        let cm = format!("{CONFIG_MAP}data:\n  x: \"bad{value} here\"\n");
        let t = tree(label, &[("kustomization.yaml", "resources:\n- cm.yaml\n"), ("cm.yaml", &cm)]);
        // kustomize names the resource by its decoded map, as Go's `%#v` prints it.
        let escaped = value.replace("\\uFFFE", "\\ufffe");
        let words = format!(
            r#"map[string]interface {{}}{{"apiVersion":"v1", "data":map[string]interface {{}}{{"x":"bad{escaped} here"}}, "kind":"ConfigMap", "metadata":map[string]interface {{}}{{"name":"a"}}}}: yaml: control characters are not allowed"#
        );
        fails_with(label, &t, ".", &words, &words);
    }
    // Numbers, nulls, lists and escapes print as Go prints them.
    let thing = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: a\nspec:\n  f: 1.0\n  g: 1000000.0\n  g2: 1234567.5\n  h: 0.00001\n  h2: 0.0001\n  i: 42\n  n: null\n  e:\n  list: [1, \"two\", {k: v}]\n  empty: {}\n  s: \"tab\\there\\u00a0nb\\u200bz\\U0001F600\\a\"\n  bad: \"x\\x7f\"\n";
    let t = tree("go-printed", &[("kustomization.yaml", "resources:\n- r.yaml\n"), ("r.yaml", thing)]);
    let words = r#"map[string]interface {}{"apiVersion":"example.com/v1", "kind":"Thing", "metadata":map[string]interface {}{"name":"a"}, "spec":map[string]interface {}{"bad":"x\x7f", "e":interface {}(nil), "empty":map[string]interface {}{}, "f":1, "g":1e+06, "g2":1.2345675e+06, "h":1e-05, "h2":0.0001, "i":42, "list":[]interface {}{1, "two", map[string]interface {}{"k":"v"}}, "n":interface {}(nil), "s":"tab\there\u00a0nb\u200bz😀\a"}}: yaml: control characters are not allowed"#;
    fails_with("go-printed", &t, ".", words, words);
    // A next-line character is fine in a value, not in a key.
    let cm = format!("{CONFIG_MAP}data:\n  \"k\\u0085\": v\n");
    let t = tree("nel-key", &[("kustomization.yaml", "resources:\n- cm.yaml\n"), ("cm.yaml", &cm)]);
    let words = r#"map[string]interface {}{"apiVersion":"v1", "data":map[string]interface {}{"k\u0085":"v"}, "kind":"ConfigMap", "metadata":map[string]interface {}{"name":"a"}}: yaml: line 1: did not find expected ',' or '}'"#;
    fails_with("nel-key", &t, ".", words, words);
    // A build large enough to be looked at on several threads names the first refused resource
    // in output order, not in input order nor whichever thread finds one first.
    let mut many = String::new();
    for n in (0..200).rev() {
        let bad = if n == 50 || n == 150 { "\\x7f" } else { "" };
        many.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n:03}\ndata:\n  x: \"v{bad}\"\n"));
    }
    let t = tree("many-refused", &[("kustomization.yaml", "resources:\n- many.yaml\n"), ("many.yaml", &many)]);
    let words = r#"map[string]interface {}{"apiVersion":"v1", "data":map[string]interface {}{"x":"v\x7f"}, "kind":"ConfigMap", "metadata":map[string]interface {}{"name":"cm050"}}: yaml: control characters are not allowed"#;
    fails_with("many-refused", &t, ".", words, words);
}

#[cfg(unix)]
#[test]
fn a_kustomization_file_linked_from_outside_the_root_is_missing_unless_unrestricted() {
    let t = tree("linked-kustomization", &[("app/cm.yaml", CONFIG_MAP), ("other/k.yaml", "resources:\n- cm.yaml\n")]);
    t.symlink("../other/k.yaml", "app/kustomization.yaml");
    let root = t.path("app");
    let words = format!(
        "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
        root.display()
    );
    fails_with("linked-kustomization", &t, "app", &words, &words);
    prints("linked-kustomization-unrestricted", &t, "app", &["--load-restrictor", "LoadRestrictionsNone"], CONFIG_MAP);

    // A link inside the root is read.
    let t = tree("linked-inside", &[("app/cm.yaml", CONFIG_MAP), ("app/real.yaml", "resources:\n- cm.yaml\n")]);
    t.symlink("real.yaml", "app/kustomization.yaml");
    prints("linked-inside", &t, "app", &[], CONFIG_MAP);
}

#[test]
fn a_top_level_patch_replace_changes_nothing_and_says_so() {
    let settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ui-settings\ndata:\n  THEME: dark\n  FONT_SIZE: \"14\"\n";
    let patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ui-settings\ndata:\n  LANGUAGE: de\n$patch: replace\n";
    let t = tree(
        "toplevel-replace",
        &[("kustomization.yaml", "resources:\n- settings.yaml\npatches:\n- path: replace.yaml\n"), ("settings.yaml", settings), ("replace.yaml", patch)],
    );
    let expected = "apiVersion: v1\ndata:\n  FONT_SIZE: \"14\"\n  THEME: dark\nkind: ConfigMap\nmetadata:\n  name: ui-settings\n";
    let stderr = prints("toplevel-replace", &t, ".", &[], expected);
    assert!(stderr.contains("changes nothing in ConfigMap.v1.[noGrp]/ui-settings.[noNs]"), "{stderr}");
}

/// The "changes nothing" warning compares the resource before and after a strategic merge patch
/// as values: a list's order counts, a mapping's key order does not, a dropped empty null counts.
#[test]
fn a_strategic_merge_patch_warns_exactly_when_it_changes_nothing() {
    let deployment = |labels: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n{labels}spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        args: [\"a\", \"b\"]\n        env:\n        - name: A\n          value: \"1\"\n        - name: B\n          value: \"2\"\n"
        )
    };
    let head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";
    let container = "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n";
    // What each build prints, field by field: (metadata's labels line, args, env).
    let printed = |labels: &str, args: &str, env: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n{labels}  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - args:\n{args}        env:\n{env}        image: nginx\n        name: app\n"
        )
    };
    let (ab, ba) = ("        - a\n        - b\n", "        - b\n        - a\n");
    let (env_a, env_b, env_a3) = ("        - name: A\n          value: \"1\"\n", "        - name: B\n          value: \"2\"\n", "        - name: A\n          value: \"3\"\n");
    let env = format!("{env_a}{env_b}");
    let with_tier = "  labels:\n    tier:\n";
    let cases: Vec<(&str, String, String, String, bool)> = vec![
        ("equal", deployment(""), deployment(""), printed("", ab, &env), true),
        (
            "equal-keys-reordered",
            deployment(""),
            format!("{head}{container}        env:\n        - value: \"1\"\n          name: A\n        - value: \"2\"\n          name: B\n        image: nginx\n"),
            printed("", ab, &env),
            true,
        ),
        // The patched element goes first: the list's order changed.
        (
            "element-moved",
            deployment(""),
            format!("{head}{container}        env:\n        - name: B\n          value: \"2\"\n"),
            printed("", ab, &format!("{env_b}{env_a}")),
            false,
        ),
        ("list-order", deployment(""), format!("{head}{container}        args: [\"b\", \"a\"]\n"), printed("", ba, &env), false),
        ("empty-null", deployment(with_tier), format!("{head}{with_tier}"), printed("  labels: {}\n", ab, &env), false),
        (
            "delete-element",
            deployment(""),
            format!("{head}{container}        env:\n        - name: A\n          $patch: delete\n"),
            printed("", ab, env_b),
            false,
        ),
        (
            "deep-scalar",
            deployment(""),
            format!("{head}{container}        env:\n        - name: A\n          value: \"3\"\n"),
            printed("", ab, &format!("{env_a3}{env_b}")),
            false,
        ),
    ];
    for (label, target, patch, expected, warns) in cases {
        let t = tree(
            label,
            &[("kustomization.yaml", "resources:\n- deploy.yaml\npatches:\n- path: patch.yaml\n"), ("deploy.yaml", &target), ("patch.yaml", &patch)],
        );
        let stderr = prints(label, &t, ".", &[], &expected);
        let warned = stderr.contains("patch 'patch.yaml' changes nothing in Deployment.v1.apps/web.[noNs]");
        assert_eq!(warned, warns, "{label}: warned {warned}, stderr:\n{stderr}");
    }
}

/// Merge lists some element of which lacks a key (ports without a `protocol`), in resources a
/// strategic merge patch reaches: kyaml rebuilds them element by element, which keeps a list
/// whose elements hold the same keys as one another, each told apart by them (`proxy`, `side`,
/// `init`, the Service's ports), and drops or merges elements of any other (`mixed`, `odd`,
/// `twice`), whether the patch names their container or not. The output is kustomize's, checked
/// against it.
#[test]
fn merge_lists_with_elements_lacking_a_key_are_kept_or_rebuilt_as_kyaml_does() {
    let t = tree(
        "fidelity-irregular-merge-lists",
        &[
            ("app/kustomization.yaml", r#"resources:
- d.yaml
- s.yaml
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      template:
        spec:
          containers:
          - name: app
            image: app:2
          - name: mixed
            env:
            - name: B
              value: "2"
- patch: |-
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      labels:
        patched: "yes"
"#),
            ("app/d.yaml", r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
      - name: proxy
        image: proxy:1
        ports:
        - name: proxy
          containerPort: 8072
      - name: side
        image: side:1
        ports:
        - containerPort: 9001
        - containerPort: 9000
          name: second
      - name: mixed
        image: mixed:1
        ports:
        - containerPort: 7001
        - containerPort: 7000
          protocol: UDP
        - name: nameonly
        - containerPort: 7002
          protocol: TCP
      - name: odd
        image: odd:1
        ports:
        - name: onlyname
        - name: other
      - name: emptyproto
        image: e:1
        ports:
        - containerPort: 4000
          protocol: ""
        - containerPort: 4001
          protocol: ""
      - name: twice
        image: twice:1
        ports:
        - containerPort: 6000
        - containerPort: 6000
          name: again
      initContainers:
      - name: init
        image: init:1
        ports:
        - containerPort: 5000
"#),
            ("app/s.yaml", r#"apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 443
    targetPort: 8443
  - port: 80
    targetPort: 8080
    name: plain
"#),
        ],
    );
    prints("fidelity-irregular-merge-lists", &t, "app", &[], r#"apiVersion: v1
kind: Service
metadata:
  labels:
    patched: "yes"
  name: web
spec:
  ports:
  - port: 443
    targetPort: 8443
  - name: plain
    port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - image: app:2
        name: app
        ports:
        - containerPort: 8080
          name: http
          protocol: TCP
      - env:
        - name: B
          value: "2"
        image: mixed:1
        name: mixed
        ports:
        - name: nameonly
        - containerPort: 7002
          protocol: TCP
      - image: proxy:1
        name: proxy
        ports:
        - containerPort: 8072
          name: proxy
      - image: side:1
        name: side
        ports:
        - containerPort: 9001
        - containerPort: 9000
          name: second
      - image: odd:1
        name: odd
        ports:
        - name: other
      - image: e:1
        name: emptyproto
        ports:
        - containerPort: 4000
          protocol: ""
        - containerPort: 4001
          protocol: ""
      - image: twice:1
        name: twice
        ports:
        - containerPort: 6000
          name: again
      initContainers:
      - image: init:1
        name: init
        ports:
        - containerPort: 5000
"#);
}

/// A patch that leaves a resource as it was warns so, also when the resource holds merge lists
/// with elements lacking a key, which the patch's walk keeps as they are.
#[test]
fn a_patch_that_changes_nothing_beside_irregular_lists_warns_so() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n      - name: proxy\n        image: proxy:1\n        ports:\n        - containerPort: 8072\n        - containerPort: 8073\n          name: admin\n";
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n";
    let expected = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - image: app:1\n        name: app\n      - image: proxy:1\n        name: proxy\n        ports:\n        - containerPort: 8072\n        - containerPort: 8073\n          name: admin\n";
    let t = tree(
        "fidelity-irregular-unchanged",
        &[("kustomization.yaml", "resources:\n- deploy.yaml\npatches:\n- path: patch.yaml\n"), ("deploy.yaml", deployment), ("patch.yaml", patch)],
    );
    let stderr = prints("fidelity-irregular-unchanged", &t, ".", &[], expected);
    assert!(stderr.contains("patch 'patch.yaml' changes nothing in Deployment.v1.apps/web.[noNs]"), "no warning:\n{stderr}");
}

#[test]
fn field_spec_errors_name_the_field_and_the_object() {
    let transformer = "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: ns\n  namespace: test\nfieldSpecs:\n- path: subjects\n  kind: ClusterRoleBinding\n";
    let binding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nsubjects:\n- kind: ServiceAccount\n  name: default\n";
    let t = tree(
        "namespace-on-a-list",
        &[("kustomization.yaml", "resources:\n- b.yaml\ntransformers:\n- t.yaml\n"), ("b.yaml", binding), ("t.yaml", transformer)],
    );
    let words = "namespace field specs must target scalar nodes: considering field 'subjects' of object \
                 ClusterRoleBinding.v1.rbac.authorization.k8s.io/b.[noNs]: wrong node kind: expected ScalarNode but got SequenceNode: \
                 node contents:\n- kind: ServiceAccount\n  name: default\n";
    fails_with("namespace-on-a-list", &t, ".", words, words);

    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n  - broken\n";
    let t = tree("labels-on-a-list", &[("kustomization.yaml", "resources:\n- cm.yaml\nlabels:\n- pairs:\n    team: a\n"), ("cm.yaml", cm)]);
    let words = "considering field 'metadata/labels' of object ConfigMap.v1.[noGrp]/cm.[noNs]: wrong node kind: \
                 expected MappingNode but got SequenceNode: node contents:\n- broken\n";
    fails_with("labels-on-a-list", &t, ".", words, words);
}

/// kyaml prints the node itself in a "wrong node kind" error: keys in the order written and
/// quoted scalars with their quotes, kept when a transformer set their value.
#[test]
fn error_dumps_show_nodes_with_their_keys_in_order_and_their_quotes() {
    const NS_TRANSFORMER: &str = "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: x\n  namespace: prod\nfieldSpecs:\n- path: subjects\n  kind: RoleBinding\n- path: spec/nested\n  kind: Thing\n";
    let with_transformer = "resources:\n- r.yaml\ntransformers:\n- t.yaml\n";
    let cases: [(&str, &str, &str, &str); 5] = [
        (
            "subjects-set-keep-quotes",
            with_transformer,
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nsubjects:\n- name: default\n  namespace: 'old'\n- name: default\n  namespace: \"other\"\n- name: default\n  namespace: plain\n- name: \"quoted-name\"\n  kind: 'User'\n  namespace: \"kept\"\n",
            "of object RoleBinding.v1.rbac.authorization.k8s.io/rb.prod: wrong node kind: expected ScalarNode but got SequenceNode: node contents:\n- name: default\n  namespace: 'prod'\n- name: default\n  namespace: \"prod\"\n- name: default\n  namespace: prod\n- name: \"quoted-name\"\n  kind: 'User'\n  namespace: \"kept\"\n",
        ),
        (
            "map-in-written-order",
            with_transformer,
            "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  nested:\n    zeta: \"z\"\n    alpha: 'it''s'\n    mid: \"tab\\there\"\n    empty: ''\n    plain: 1\n",
            "wrong node kind: expected ScalarNode but got MappingNode: node contents:\nzeta: \"z\"\nalpha: 'it''s'\nmid: \"tab\\there\"\nempty: ''\nplain: 1\n",
        ),
        (
            "labels-on-a-quoted-scalar",
            "resources:\n- r.yaml\nlabels:\n- pairs:\n    app: x\n  includeSelectors: true\n",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector: \"app\"\n",
            "considering field 'spec/selector' of object Service.v1.[noGrp]/s.[noNs]: wrong node kind: expected MappingNode but got ScalarNode: node contents:\n\"app\"\n",
        ),
        (
            "labels-on-a-list",
            "resources:\n- r.yaml\ncommonLabels:\n  app: x\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    matchLabels:\n    - 'a'\n    - \"b\"\n    - c\n",
            "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n- 'a'\n- \"b\"\n- c\n",
        ),
        (
            "annotations-on-a-single-quoted-scalar",
            "resources:\n- r.yaml\ncommonAnnotations:\n  note: x\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: 'just text'\n",
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\n'just text'\n",
        ),
    ];
    for (label, kustomization, resource, words) in cases {
        let t = tree(label, &[("kustomization.yaml", kustomization), ("t.yaml", NS_TRANSFORMER), ("r.yaml", resource)]);
        fails_with(label, &t, ".", words, words);
    }
}

/// kustomize's loader refuses a folder at or above one on the way to it: a kustomization
/// reaching its own folder or an ancestor, or a base listing its overlay.
#[test]
fn folders_reaching_back_up_the_chain_are_cycles() {
    let cm = CONFIG_MAP;
    let t = tree(
        "cycles",
        &[
            ("o/x/kustomization.yaml", "resources:\n- cm.yaml\n- sub\n"),
            ("o/x/cm.yaml", cm),
            ("o/x/sub/kustomization.yaml", "resources:\n- ..\n"),
            ("self/kustomization.yaml", "resources:\n- .\n"),
            ("up/cm.yaml", cm),
            ("up/a/kustomization.yaml", "resources:\n- ../\n"),
            ("base/kustomization.yaml", "resources:\n- ../overlay\n"),
            ("overlay/kustomization.yaml", "resources:\n- ../base\n"),
            ("comp/kustomization.yaml", "components:\n- c\n"),
            ("comp/c/kustomization.yaml", "kind: Component\ncomponents:\n- ..\n"),
        ],
    );
    let root = t.root.canonicalize().expect("scratch tree");
    let at = |rel: &str| root.join(rel).display().to_string();
    let cycle = |candidate: &str, visited: &str| {
        format!("cycle detected: candidate root '{}' contains visited root '{}'", at(candidate), at(visited))
    };
    let from = |entry: &str, path: &str| {
        format!("accumulating resources: accumulation err='accumulating resources from '{entry}': '{}' must resolve to a file'", at(path))
    };
    let cases = [
        ("parent", "o/x/sub", format!("{}: {}", from("..", "o/x"), cycle("o/x", "o/x/sub"))),
        (
            "parent-through-child",
            "o/x",
            format!("{}: recursed accumulation of path '{}': {}: {}", from("sub", "o/x/sub"), at("o/x/sub"), from("..", "o/x"), cycle("o/x", "o/x/sub")),
        ),
        ("itself", "self", format!("{}: {}", from(".", "self"), cycle("self", "self"))),
        // Refused before looking for a kustomization there.
        ("ancestor-without-kustomization", "up/a", format!("{}: {}", from("../", "up"), cycle("up", "up/a"))),
        (
            "base-and-overlay",
            "overlay",
            format!("{}: recursed accumulation of path '{}': {}: {}", from("../base", "base"), at("base"), from("../overlay", "overlay"), cycle("overlay", "overlay")),
        ),
        ("component-parent", "comp/c", format!("accumulating components: loader.New \"{}\"", cycle("comp", "comp/c"))),
    ];
    for (label, dir, words) in &cases {
        fails_with(label, &t, dir, words, words);
    }
    let unrestricted = format!(
        "accumulating resources: accumulation err='accumulating resources from '../overlay': read {}: is a directory': {}",
        at("overlay"),
        cycle("overlay", "overlay")
    );
    fails_with_flags("base-and-overlay-unrestricted", &t, "overlay", &["--load-restrictor", "LoadRestrictionsNone"], &unrestricted, &unrestricted);
}

/// A field spec path may start with a slash (kyaml's `PathSplitter` drops it), for every table
/// of a `configurations` file: labels, name prefixes and replicas reach `/spec/...` as they
/// reach `spec/...`.
#[test]
fn field_spec_paths_may_start_with_a_slash() {
    let t = tree(
        "fidelity-slash-paths",
        &[
            (
                "app/kustomization.yaml",
                "resources: [d.yaml]\nlabels:\n- pairs: {env: prod}\n  includeSelectors: true\nnamePrefix: p-\nreplicas: [{name: web, count: 3}]\nconfigurations: [conf.yaml]\n",
            ),
            (
                "app/conf.yaml",
                "commonLabels:\n- {path: /spec/extra/labels, kind: Deployment, create: true}\nnamePrefix:\n- {path: /spec/other, kind: Deployment}\nreplicas:\n- {path: /spec/count, kind: Deployment, create: true}\n",
            ),
            ("app/d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  other: x\n"),
        ],
    );
    let expected = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    env: prod\n  name: p-web\nspec:\n  count: 3\n  extra:\n    labels:\n      env: prod\n  other: p-x\n  replicas: 3\n  selector:\n    matchLabels:\n      env: prod\n  template:\n    metadata:\n      labels:\n        env: prod\n";
    prints("fidelity-slash-paths", &t, "app", &[], expected);
}

/// Builds `dir` of `t`, which must succeed and print what the reference prints; returns the output.
fn same_as_reference(label: &str, t: &TempTree, dir: &str) -> String {
    let path = t.path(dir);
    let path = path.to_str().expect("UTF-8 path");
    let r = ours(&["build", path], &t.root);
    assert!(r.success(), "{label}: peerpods-build failed:\n{}", r.stderr);
    if let Some(reference) = reference_run(&[path], &t.root, label) {
        assert!(reference.success(), "{label}: the reference failed:\n{}", reference.stderr);
        assert_eq!(r.stdout, reference.stdout, "{label}: peerpods-build's output differs from the reference's");
    }
    r.stdout
}

/// Name references of a build large enough to be resolved on several threads: each referrer
/// names its own resource's new name, as in a sequential pass.
#[test]
fn name_references_of_a_large_build_follow_every_rename() {
    let mut docs = Vec::new();
    for n in 0..40 {
        docs.push(format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n:02}\n"));
        docs.push(format!("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa{n:02}\nimagePullSecrets:\n- name: tok{n:02}\n"));
        docs.push(format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: tok{n:02}\n"));
        docs.push(format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{n:02}\nspec:\n  template:\n    spec:\n      serviceAccountName: sa{n:02}\n      containers:\n      - name: c\n        image: x\n        envFrom:\n        - configMapRef:\n            name: cm{n:02}\n"
        ));
    }
    let all = docs.join("---\n");
    let t = tree("many-references", &[("kustomization.yaml", "namePrefix: p-\nresources:\n- all.yaml\n"), ("all.yaml", &all)]);
    let out = same_as_reference("many-references", &t, ".");
    for n in [0, 17, 39] {
        assert!(out.contains(&format!("            name: p-cm{n:02}\n")), "cm{n:02} not renamed in its referrer:\n{out}");
        assert!(out.contains(&format!("      serviceAccountName: p-sa{n:02}\n")), "sa{n:02} not renamed in its referrer");
        assert!(out.contains(&format!("imagePullSecrets:\n- name: p-tok{n:02}\n")), "tok{n:02} not renamed in its referrer");
    }
}

/// Many resources of one name, each in a namespace of its own: a namespace transformer that
/// sets only missing namespaces moves them one by one (they share a name) and finds no
/// conflict; `namespace:` makes the second meet the first, in kustomize's words.
#[test]
fn many_resources_of_one_name_are_moved_one_by_one() {
    let docs: Vec<String> = (0..400).map(|n| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: n{n}\ndata:\n  k: v{n}\n")).collect();
    let all = docs.join("---\n");
    let unset_only = "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: n\n  namespace: moved\nunsetOnly: true\n";
    let t = tree(
        "one-name-many-namespaces",
        &[
            ("kept/kustomization.yaml", "resources:\n- all.yaml\ntransformers:\n- ns.yaml\n"),
            ("kept/ns.yaml", unset_only),
            ("kept/all.yaml", &all),
            ("moved/kustomization.yaml", "namespace: moved\nresources:\n- all.yaml\n"),
            ("moved/all.yaml", &all),
        ],
    );
    let out = same_as_reference("one-name-many-namespaces", &t, "kept");
    assert_eq!(out.matches("  namespace: n").count(), 400, "every namespace kept");
    let first = r#"namespace transformation produces ID conflict: [{"apiVersion":"v1","data":{"k":"v0"},"kind":"ConfigMap","metadata":{"annotations":{"internal.config.kubernetes.io/previousKinds":"ConfigMap","internal.config.kubernetes.io/previousNames":"config","internal.config.kubernetes.io/previousNamespaces":"n0"},"name":"config","namespace":"moved"}} {"apiVersion":"v1","data":{"k":"v1"}"#;
    fails_with("one-name-many-namespaces-moved", &t, "moved", first, first);
}

/// An ambiguous reference in a large build: the error prints each candidate as a pass in
/// resource order has it then, a later candidate with its own references not yet updated.
/// kustomize visits referrers in the order of a Go map, which changes from run to run: its
/// error prints each candidate either way, and ours is one of those, always the same.
#[test]
fn an_ambiguous_reference_prints_later_candidates_as_they_were() {
    let mut docs = vec![
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: crb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\nsubjects:\n- kind: ServiceAccount\n  name: sa\n".to_string(),
    ];
    for ns in ["ns1", "ns2"] {
        docs.push(format!("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  namespace: {ns}\nimagePullSecrets:\n- name: tok\n"));
        docs.push(format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: tok\n  namespace: {ns}\n"));
    }
    for n in 0..70 {
        docs.push(format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: filler{n:02}\n  namespace: ns1\n"));
    }
    let all = docs.join("---\n");
    let t = tree("ambiguous-large", &[("kustomization.yaml", "namePrefix: p-\nresources:\n- all.yaml\n"), ("all.yaml", &all)]);
    let words = "found multiple possible referrals: ServiceAccount.v1.[noGrp]/p-sa.ns1, ServiceAccount.v1.[noGrp]/p-sa.ns2";
    fails_with("ambiguous-large", &t, ".", words, words);
    // Its own reference (to the secret `tok` of its namespace, renamed `p-tok`) as written.
    let later = "--- possible referral 1:\napiVersion: v1\nimagePullSecrets:\n- name: tok\nkind: ServiceAccount\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/prefixes: p-\n    internal.config.kubernetes.io/previousKinds: ServiceAccount\n    internal.config.kubernetes.io/previousNames: sa\n    internal.config.kubernetes.io/previousNamespaces: ns2\n  name: p-sa\n  namespace: ns2\n";
    let path = t.path(".");
    let path = path.to_str().expect("UTF-8 path");
    for _ in 0..3 {
        let run = ours(&["build", path], &t.root);
        assert!(!run.success() && run.stderr.contains(later), "ambiguous-large-candidates: our error lacks {later:?}:\n{}", run.stderr);
    }
    // The same candidate after its own update, as kustomize prints it when it visited it first.
    let updated = later.replace("- name: tok\n", "- name: p-tok\n");
    if let Some(reference) = reference_run(&[path], &t.root, "ambiguous-large-candidates") {
        assert!(!reference.success(), "the reference succeeded:\n{}", reference.stdout);
        assert!(
            reference.stderr.contains(later) || reference.stderr.contains(&updated),
            "the reference's error holds neither state of the later candidate:\n{}",
            reference.stderr
        );
    }
}

/// A build asked to make its output as its last check (`render`, as `build` does for stdout and
/// one file) prints and refuses exactly what a build checked apart from printing does: the
/// same text, the same first refused resource.
#[test]
fn an_output_made_during_the_check_is_the_output_made_after_it() {
    use peerpods_build::{build, BuildOptions};
    let both = |t: &TempTree| {
        let dir = t.path(".");
        let plain = build(&dir, &BuildOptions::default()).map(|b| b.to_yaml()).map_err(|f| f.error.to_string());
        let rendered = build(&dir, &BuildOptions { render: true, ..BuildOptions::default() });
        let mut written = Vec::new();
        let rendered = rendered.map(|b| {
            b.write_to(&mut written).expect("writes to memory");
            assert_eq!(String::from_utf8_lossy(&written), b.to_yaml(), "write_to and to_yaml differ");
            b.to_yaml()
        });
        (plain, rendered.map_err(|f| f.error.to_string()))
    };
    // Values past ASCII that YAML holds (in keys and values, long and short), many documents.
    let mut docs = String::new();
    for n in 0..150 {
        docs.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n:03}\ndata:\n  \"ключ{n}\": \"значение — {n} \\u00e9\\u0085x\"\n  plain: v{n}\n"));
    }
    let t = tree("rendered-fine", &[("kustomization.yaml", "resources:\n- many.yaml\n"), ("many.yaml", &docs)]);
    let (plain, rendered) = both(&t);
    assert!(plain.as_ref().is_ok_and(|text| text.contains("ключ149")), "{plain:?}");
    assert_eq!(plain, rendered);
    // Two refused resources, the later one first in the file; and a key holding NEL.
    for (label, bad) in [("rendered-refused", "\\x7f"), ("rendered-nel", "\\u0085")] {
        let mut docs = String::new();
        for n in (0..150).rev() {
            let key = if n == 40 || n == 120 { format!("\"k{bad}\"") } else { "k".into() };
            docs.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n:03}\ndata:\n  {key}: v\n"));
        }
        let t = tree(label, &[("kustomization.yaml", "resources:\n- many.yaml\n"), ("many.yaml", &docs)]);
        let (plain, rendered) = both(&t);
        assert!(plain.as_ref().is_err_and(|e| e.contains("\"name\":\"cm040\"")), "{label}: {plain:?}");
        assert_eq!(plain, rendered, "{label}");
    }
}

/// Entries named as files usually are: each is read when its turn comes, and what is not a
/// plain file there (a folder named `x.yaml`, a link, a missing name) gets kustomize's answer.
#[test]
fn entries_named_like_files_are_told_apart_when_read() {
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let t = tree(
        "file-like-entries",
        &[
            ("app/kustomization.yaml", "resources:\n- a.yaml\n- folder.yaml\n- linked.yaml\n- sub/nested.json\n- b.yml\n"),
            ("app/a.yaml", &cm("a")),
            ("app/folder.yaml/kustomization.yaml", "namePrefix: f-\nresources:\n- inner.yaml\n"),
            ("app/folder.yaml/inner.yaml", &cm("inner")),
            ("app/real/c.yaml", &cm("c")),
            ("app/sub/nested.json", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"nested\"}}"),
            ("app/b.yml", &cm("b")),
            ("gone/kustomization.yaml", "resources:\n- a.yaml\n- missing.yaml\n"),
            ("gone/a.yaml", &cm("a")),
            ("outside.yaml", &cm("outside")),
            ("escape/kustomization.yaml", "resources:\n- out.yaml\n"),
        ],
    );
    t.symlink("real/c.yaml", "app/linked.yaml");
    t.symlink("../outside.yaml", "escape/out.yaml");
    let out = same_as_reference("file-like-entries", &t, "app");
    let names: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("  name: ")).collect();
    // Printed in kustomize's order (by kind, then name).
    assert_eq!(names, ["a", "b", "c", "f-inner", "nested"], "each entry read as what it is");
    let missing = t.path("gone/missing.yaml");
    let missing = missing.display();
    let words = format!("accumulating resources from 'missing.yaml': evalsymlink failure on '{missing}' : lstat {missing}: no such file or directory'");
    fails_with("file-like-missing", &t, "gone", &words, &words);
    let words = "accumulating resources from 'out.yaml': security; file";
    fails_with("file-like-escaping-link", &t, "escape", words, words);
}
