//! The transformers `run_transformers` gathers into one pass (`transform::steps`) leave every
//! resource as they leave it run one after another, each over all the resources.
use std::path::Path;

use crate::diagnostics::Diagnostics;
use crate::kustomization::types::{Image, Patch, Selector, StringMap};
use crate::kustomization::{LoadRestrictor, Loader};
use crate::patch::Schema;
use crate::resource::ResMap;
use crate::transform::fieldspec::SpecPaths;
use crate::transform::fieldspec_tables::FieldSpecTables;
use crate::transform::images::{set_images, ImageRewrites};
use crate::transform::metadata_maps::{add_map_entries_at, MapEntries};
use crate::transform::name_affix::{add_name_affixes, NameAffixes};
use crate::transform::namespace::{set_namespace, walked_field_specs, NamespaceMove, NamespaceOptions, SubjectsMode};
use crate::transform::patches::{apply_patch, patch_field_config, ConfigFrom, EntryNote, PluginConfig, TargetedPatch};
use crate::transform::steps::{run_together, ResourceStep};
use crate::transform::table::resources;

/// `count` resources of kinds the builtin field specs treat differently: workloads with
/// containers and templates, services, bindings with subjects, cluster-scoped objects, a
/// Namespace and config maps, some labelled already (a key that existed gets a copy, not a shared node).
fn mixed(count: usize) -> String {
    (0..count)
        .map(|i| match i % 6 {
            0 => format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web{i}, labels: {{app: web{i}}}}}\nspec:\n  selector: {{matchLabels: {{app: web{i}}}}}\n  template:\n    metadata: {{labels: {{app: web{i}}}}}\n    spec:\n      initContainers: [{{name: init, image: busybox}}]\n      containers: [{{name: c, image: 'nginx:1.{i}'}}, {{name: s, image: registry.example.com/side@sha256:abc}}]\n"
            ),
            1 => format!("apiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}, namespace: other}}\nspec: {{selector: {{app: web{i}}}, ports: [{{port: 80}}]}}\n"),
            2 => format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: rb{i}}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}}\nsubjects: [{{kind: ServiceAccount, name: default}}, {{kind: ServiceAccount, name: sa{i}}}]\n"),
            3 => format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: cr{i}}}\nrules: []\n"),
            4 => format!("apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: job{i}}}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{{name: j, image: 'nginx:old'}}]\n"),
            // One Namespace: the move names it after the namespace.
            _ if i == 5 => format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns{i}}}\n"),
            _ => format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}}}\ndata: {{k: v}}\n"),
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

fn pairs(entries: &[(&str, &str)]) -> StringMap {
    entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Everything a later step or the output reads of a resource.
fn state(resources: &ResMap) -> Vec<String> {
    resources.iter().map(|r| format!("{r:?}")).collect()
}

#[test]
fn gathered_steps_leave_every_resource_as_the_passes_one_after_another_do() {
    let tables = FieldSpecTables::builtin();
    let namespace = NamespaceOptions {
        namespace: "team".into(),
        field_specs: tables.namespace.clone(),
        subjects: SubjectsMode::DefaultOnly,
        ..Default::default()
    };
    let labels = pairs(&[("app", "shop"), ("tier", "web")]);
    let annotations = pairs(&[("owner", "platform"), ("true", "1")]);
    let label_paths = SpecPaths::new(&tables.common_labels);
    let annotation_paths = SpecPaths::new(&tables.common_annotations);
    let images = vec![
        Image { name: "nginx".into(), new_tag: "1.27".into(), ..Default::default() },
        Image { name: "busybox".into(), new_name: "mirror.example.com/busybox".into(), ..Default::default() },
        Image { name: "absent".into(), new_tag: "x".into(), ..Default::default() },
    ];
    // Below the size at which the steps run as one pass (each then over all the resources), and
    // above it.
    for count in [12, 300] {
        let mut one_by_one = resources(&mixed(count));
        set_namespace(&mut one_by_one, &namespace).unwrap();
        add_name_affixes(&mut one_by_one, "pre-", "", &tables.name_prefix).unwrap();
        add_name_affixes(&mut one_by_one, "", "-suf", &tables.name_suffix).unwrap();
        add_map_entries_at(&mut one_by_one, &labels, &label_paths).unwrap();
        add_map_entries_at(&mut one_by_one, &annotations, &annotation_paths).unwrap();
        let matched = set_images(&mut one_by_one, &images, &tables.images).unwrap();
        assert_eq!(matched, [true, true, false]);

        let mut together = resources(&mixed(count));
        let namespace_specs = walked_field_specs(&namespace);
        let namespace_step = NamespaceMove::new(&namespace, &namespace_specs);
        assert!(!namespace_step.may_conflict(&together));
        let image_step = ImageRewrites::new(&images, &tables.images);
        let steps: Vec<Box<dyn ResourceStep>> = vec![
            Box::new(namespace_step),
            Box::new(NameAffixes::new("pre-", "", &tables.name_prefix)),
            Box::new(NameAffixes::new("", "-suf", &tables.name_suffix)),
            Box::new(MapEntries::new(&labels, &label_paths)),
            Box::new(MapEntries::new(&annotations, &annotation_paths)),
            Box::new(&image_step),
        ];
        run_together(&mut together, &steps, &mut Diagnostics::default(), "k").unwrap();
        assert_eq!(image_step.matched(), matched);
        assert_eq!(state(&together), state(&one_by_one), "{count} resources");
        // The steps did change them: the comparison is not between two untouched sets.
        assert_ne!(state(&together), state(&resources(&mixed(count))));
    }
}

/// Two Namespace objects would both be named after the namespace: they move one at a time,
/// each checked against the others (`set_namespace`), not among the gathered steps.
#[test]
fn a_move_that_could_give_two_resources_one_id_is_not_gathered() {
    let options = NamespaceOptions { namespace: "team".into(), field_specs: FieldSpecTables::builtin().namespace.clone(), ..Default::default() };
    let specs = walked_field_specs(&options);
    let step = NamespaceMove::new(&options, &specs);
    let two = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
    assert!(step.may_conflict(&resources(two)));
    assert!(!step.may_conflict(&resources(&two[..two.find("---").unwrap()])));
}

fn targeted(target: Selector, text: &str) -> Patch {
    Patch { patch: text.into(), target: Some(target), ..Default::default() }
}

fn kind(kind: &str) -> Selector {
    Selector { kind: kind.into(), ..Default::default() }
}

/// `patches` entries with targets, each kind of outcome: a JSON patch, a strategic merge that
/// annotates, one that deletes, one that changes nothing, one that selects nothing, and ones
/// that select what the earlier patches left (an annotation one added, the config maps one
/// deleted some of).
fn patch_entries() -> Vec<Patch> {
    vec![
        targeted(kind("Deployment"), "- op: add\n  path: /spec/replicas\n  value: 3\n"),
        targeted(kind("Service"), "apiVersion: v1\nkind: Service\nmetadata: {name: any, annotations: {exposed: 'yes'}}\n"),
        targeted(Selector { kind: "ConfigMap".into(), name: "cm1.*".into(), ..Default::default() }, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: any}\n$patch: delete\n"),
        targeted(kind("ClusterRole"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: any}\nrules: []\n"),
        targeted(kind("Secret"), "- op: add\n  path: /data\n  value: {}\n"),
        targeted(Selector { annotation_selector: "exposed=yes".into(), ..Default::default() }, "- op: add\n  path: /spec/type\n  value: NodePort\n"),
        targeted(kind("ConfigMap"), "- op: replace\n  path: /data/k\n  value: w\n"),
    ]
}

fn loader() -> Loader {
    Loader::new(Path::new(env!("CARGO_MANIFEST_DIR")), LoadRestrictor::RootOnly).unwrap()
}

/// Each entry applied over all the resources before the next, as `apply_patch` does.
fn one_patch_after_another(resources: &mut ResMap, entries: &[Patch], diagnostics: &mut Diagnostics) -> crate::error::Result<()> {
    for (i, entry) in entries.iter().enumerate() {
        let make = || patch_field_config(entry, false);
        let config = PluginConfig { plugin: "PatchTransformer", from: ConfigFrom::Field(&make) };
        apply_patch(resources, entry, &loader(), Schema::builtin(), diagnostics, "k", &config).map_err(|e| e.note(EntryNote { kustomization: "k", index: i }))?;
    }
    Ok(())
}

/// The entries as gathered steps, each noted as `run_transformers` notes it.
fn patch_steps<'a>(entries: &'a [Patch], loader: &Loader) -> Vec<TargetedPatch<'a>> {
    let steps = entries.iter().enumerate().map(|(i, entry)| {
        let make = || patch_field_config(entry, false);
        let config = PluginConfig { plugin: "PatchTransformer", from: ConfigFrom::Field(&make) };
        TargetedPatch::new(entry, loader, Schema::builtin(), &config, EntryNote { kustomization: "k", index: i }).unwrap().expect("each entry has a target")
    });
    steps.collect()
}

#[test]
fn gathered_patches_leave_the_resources_and_the_warnings_as_one_patch_after_another() {
    let tables = FieldSpecTables::builtin();
    let namespace = NamespaceOptions { namespace: "team".into(), field_specs: tables.namespace.clone(), ..Default::default() };
    let labels = pairs(&[("app", "shop")]);
    let label_paths = SpecPaths::new(&tables.common_labels);
    let entries = patch_entries();
    let loader = loader();
    for count in [12, 300] {
        let mut one_by_one = resources(&mixed(count));
        let mut expected = Diagnostics::default();
        one_patch_after_another(&mut one_by_one, &entries, &mut expected).unwrap();
        set_namespace(&mut one_by_one, &namespace).unwrap();
        add_map_entries_at(&mut one_by_one, &labels, &label_paths).unwrap();

        let mut together = resources(&mixed(count));
        let patches = patch_steps(&entries, &loader);
        assert!(patches.iter().all(|p| !p.may_change_id()));
        let namespace_specs = walked_field_specs(&namespace);
        let mut steps: Vec<Box<dyn ResourceStep>> = patches.into_iter().map(|p| Box::new(p) as Box<dyn ResourceStep>).collect();
        steps.push(Box::new(NamespaceMove::new(&namespace, &namespace_specs)));
        steps.push(Box::new(MapEntries::new(&labels, &label_paths)));
        let mut diagnostics = Diagnostics::default();
        run_together(&mut together, &steps, &mut diagnostics, "k").unwrap();

        assert_eq!(state(&together), state(&one_by_one), "{count} resources");
        assert_eq!(format!("{diagnostics:?}"), format!("{expected:?}"), "{count} resources");
        // What is compared is not trivial: resources were deleted, and the patches warned.
        assert!(together.len() < resources(&mixed(count)).len());
        let said = |what: &str| diagnostics.unmatched.iter().filter(|w| w.contains(what)).count();
        assert!(said("selects no resource") >= 1, "{:?}", diagnostics.unmatched);
        assert!(said("changes nothing") >= 2, "{:?}", diagnostics.unmatched);
    }
}

/// A gathered patch that fails gives the error the patches run one after another give, and the
/// patches before it say what they would have said before it ran.
#[test]
fn a_failing_gathered_patch_gives_the_error_and_the_warnings_before_it_of_one_patch_after_another() {
    let mut entries = patch_entries();
    // Fails on every RoleBinding: it has no `spec`.
    entries.insert(5, targeted(kind("RoleBinding"), "- op: replace\n  path: /spec/x\n  value: 1\n"));
    let loader = loader();
    for count in [12, 300] {
        let mut expected = Diagnostics::default();
        let sequential = one_patch_after_another(&mut resources(&mixed(count)), &entries, &mut expected).map_err(|e| e.to_string());
        let steps: Vec<Box<dyn ResourceStep>> = patch_steps(&entries, &loader).into_iter().map(|p| Box::new(p) as Box<dyn ResourceStep>).collect();
        let mut diagnostics = Diagnostics::default();
        let gathered = run_together(&mut resources(&mixed(count)), &steps, &mut diagnostics, "k").map_err(|e| e.to_string());
        assert!(sequential.as_ref().is_err_and(|e| e.contains("patches[5]")), "{sequential:?}");
        assert_eq!(gathered, sequential, "{count} resources");
        assert_eq!(format!("{diagnostics:?}"), format!("{expected:?}"), "{count} resources");
        assert!(diagnostics.unmatched.iter().any(|w| w.contains("selects no resource")));
    }
}

/// The namespace step tells whether two resources could come to share an id from the resources
/// before it; a gathered patch that may change what it reads runs before that check.
#[test]
fn a_patch_that_may_change_an_id_says_so() {
    let loader = loader();
    let may_change = |entry: Patch| patch_steps(&[entry], &loader).remove(0).may_change_id();
    let json = |path: &str| targeted(kind("Deployment"), &format!("- op: add\n  path: {path}\n  value: x\n"));
    for path in ["/metadata/name", "/metadata/namespace", "/kind", "/apiVersion", "/metadata", "''", "/metadata/annotations", "/metadata/annotations/config.kubernetes.io~1helm-generated"] {
        assert!(may_change(json(path)), "{path}");
    }
    for path in ["/spec/replicas", "/metadata/labels/a", "/metadata/annotations/other", "/metadata/names"] {
        assert!(!may_change(json(path)), "{path}");
    }
    let moved = targeted(kind("Deployment"), "- op: move\n  from: /metadata/name\n  path: /spec/x\n");
    assert!(may_change(moved));
    let strategic = |text: &str| targeted(kind("Deployment"), &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: any{text}}}\n"));
    assert!(!may_change(strategic("")));
    assert!(!may_change(strategic(", labels: {a: b}, annotations: {c: d}")));
    assert!(may_change(strategic(", annotations: {config.kubernetes.io/helm-generated: 'true'}")));
    assert!(may_change(strategic(", $patch: replace")));
    assert!(may_change(targeted(kind("Deployment"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: any}\n$patch: replace\n")));
    assert!(!may_change(targeted(kind("Deployment"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: any}\n$patch: delete\n")));
    let mut renaming = strategic("");
    renaming.options.insert("allowNameChange".into(), true);
    assert!(may_change(renaming));
}
