//! The transformers `run_transformers` gathers into one pass (`transform::steps`) leave every
//! resource as they leave it run one after another, each over all the resources.
use crate::kustomization::types::{Image, StringMap};
use crate::resource::ResMap;
use crate::transform::fieldspec::SpecPaths;
use crate::transform::fieldspec_tables::FieldSpecTables;
use crate::transform::images::{set_images, ImageRewrites};
use crate::transform::metadata_maps::{add_map_entries_at, MapEntries};
use crate::transform::name_affix::{add_name_affixes, NameAffixes};
use crate::transform::namespace::{set_namespace, walked_field_specs, NamespaceMove, NamespaceOptions, SubjectsMode};
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
    // Below and above the size at which a pass runs in parallel.
    for count in [12, 150] {
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
        run_together(&mut together, &steps).unwrap();
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
