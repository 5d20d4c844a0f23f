//! A kustomization over hundreds of resources, where the transformers that change each resource
//! on its own (patches with a target, namespace, name prefix, labels, annotations, images) run
//! as one pass: the output must be kustomize's, byte for byte, and the warnings those the
//! transformers give run one after another.

use crate::common::{ours, reference_run, TempTree};
use pretty_assertions::assert_eq;
use std::fmt::Write as _;

/// `count` resources of six kinds, each named after its position.
fn resources(count: usize) -> String {
    let mut out = String::new();
    for i in 0..count {
        let doc = match i % 6 {
            0 => format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web{i}\n  labels: {{tier: {}}}\nspec:\n  selector: {{matchLabels: {{app: web{i}}}}}\n  template:\n    metadata: {{labels: {{app: web{i}}}}}\n    spec:\n      containers:\n      - {{name: app, image: 'nginx:1.{i}'}}\n      - {{name: side, image: busybox}}\n",
                ["frontend", "backend"][i % 12 / 6]
            ),
            1 => format!("apiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}}}\nspec: {{selector: {{app: web{i}}}, ports: [{{port: 80}}]}}\n"),
            2 => format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}}}\ndata: {{k: v}}\n"),
            3 => format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: cr{i}}}\nrules: []\n"),
            4 => format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: rb{i}}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}}\nsubjects: [{{kind: ServiceAccount, name: sa{i}}}]\n"),
            _ => format!("apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: sa{i}}}\n"),
        };
        let _ = write!(out, "---\n{doc}");
    }
    out
}

/// Patches with a target of every outcome (a JSON patch, a strategic merge that annotates, one
/// that deletes, one that changes nothing, one that selects nothing, one selecting by what an
/// earlier one wrote), then the transformers that follow them.
const KUSTOMIZATION: &str = r#"resources:
- resources.yaml
patches:
- target: {kind: Deployment, labelSelector: tier=frontend}
  patch: |-
    - op: add
      path: /spec/replicas
      value: 3
- target: {kind: Service}
  patch: |-
    apiVersion: v1
    kind: Service
    metadata:
      name: any
      annotations:
        exposed: "yes"
- target: {kind: ConfigMap, name: cm1.*}
  patch: |-
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: any
    $patch: delete
- target: {kind: ClusterRole}
  patch: |-
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata:
      name: any
    rules: []
- target: {kind: Secret}
  patch: |-
    - op: add
      path: /data
      value: {}
- target: {annotationSelector: exposed=yes}
  patch: |-
    - op: add
      path: /spec/type
      value: NodePort
namespace: team
namePrefix: pre-
labels:
- pairs: {owner: platform}
commonLabels: {app.kubernetes.io/part-of: shop}
commonAnnotations: {contact: team@example.com}
images:
- name: nginx
  newTag: "1.27"
"#;

#[test]
fn a_level_of_hundreds_of_resources_builds_as_kustomize_builds_it() {
    let t = TempTree::new("large-level");
    t.write("k/resources.yaml", &resources(360));
    t.write("k/kustomization.yaml", KUSTOMIZATION);
    let dir = t.path("k");
    let dir = dir.to_str().expect("UTF-8 path");
    let r = ours(&["build", dir], &t.root);
    assert!(r.success(), "peerpods-build failed:\n{}", r.stderr);
    // Sixty ConfigMaps, of which the patch deletes those named cm1...
    let deleted = (0..360).filter(|i| i % 6 == 2 && i.to_string().starts_with('1')).count();
    assert_eq!(r.stdout.matches("\nkind: ConfigMap\n").count(), 60 - deleted);
    let warned = |what: &str| r.stderr.lines().filter(|l| l.contains(what)).count();
    assert_eq!(warned("with target kind=Secret selects no resource"), 1, "{}", r.stderr);
    assert_eq!(warned("with target kind=ClusterRole changes nothing in ClusterRole"), 60, "{}", r.stderr);
    // Said in resource order, as the patch run on its own says them.
    let unchanged: Vec<&str> = r.stderr.lines().filter(|l| l.contains("changes nothing")).map(|l| l.rsplit('/').next().unwrap()).collect();
    let in_order: Vec<String> = (0..360).filter(|i| i % 6 == 3).map(|i| format!("cr{i}.[noNs]")).collect();
    assert_eq!(unchanged, in_order);
    if let Some(reference) = reference_run(&[dir], &t.root, "a_level_of_hundreds_of_resources_builds_as_kustomize_builds_it") {
        assert!(reference.success(), "the reference failed:\n{}", reference.stderr);
        assert_eq!(r.stdout, reference.stdout);
    }
}

/// A patch that fails on some of the resources: the build fails with the error of the first
/// resource it fails on, as when the patch runs on its own, and the warnings of the patches
/// before it are said.
#[test]
fn a_failing_patch_among_hundreds_of_resources_fails_on_the_first() {
    let t = TempTree::new("large-level-failing");
    t.write("k/resources.yaml", &resources(360));
    let failing = "- target: {kind: RoleBinding}\n  patch: |-\n    - op: replace\n      path: /spec/x\n      value: 1\n";
    t.write("k/kustomization.yaml", &KUSTOMIZATION.replacen("namespace: team\n", &format!("{failing}namespace: team\n"), 1));
    let dir = t.path("k");
    let dir = dir.to_str().expect("UTF-8 path");
    let r = ours(&["build", dir], &t.root);
    assert!(!r.success(), "peerpods-build succeeded");
    assert!(r.stderr.contains("patches[6]") && r.stderr.contains("RoleBinding.v1.rbac.authorization.k8s.io/rb4.[noNs]"), "{}", r.stderr);
    assert!(!r.stderr.contains("rb10."), "{}", r.stderr);
    assert!(r.stderr.contains("with target kind=Secret selects no resource"), "{}", r.stderr);
    if let Some(reference) = reference_run(&[dir], &t.root, "a_failing_patch_among_hundreds_of_resources_fails_on_the_first") {
        assert!(!reference.success(), "the reference succeeded");
        // kustomize's message, whole, is in ours.
        let theirs = reference.stderr.lines().find_map(|l| l.strip_prefix("error: ")).expect("the reference's error line");
        assert!(r.stderr.contains(theirs), "ours lacks {theirs:?}:\n{}", r.stderr);
    }
}
