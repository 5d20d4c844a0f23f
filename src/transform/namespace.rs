//! `namespace`: moves namespaced resources, and the fields that name a namespace, into one namespace.
use serde_json::Value;

use super::fieldspec::{CreateKind, FieldSpec, SpecPaths};
use super::steps::{Outcome, ResourceStep};
use crate::error::{Error, Result};
use crate::resource::nodes::{quoted_at, NodePath};
use crate::resource::{scope::is_namespaced, ResMap, Resource};

/// Which RoleBinding/ClusterRoleBinding subjects get the namespace (NamespaceTransformer option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SubjectsMode {
    /// Only subjects named `default` (kustomize's default).
    #[default]
    DefaultOnly,
    /// Every ServiceAccount subject.
    AllServiceAccounts,
    /// None.
    None,
}

/// The NamespaceTransformer's settings.
#[derive(Clone, Debug, Default)]
pub struct NamespaceOptions {
    pub namespace: String,
    pub field_specs: Vec<FieldSpec>,
    /// Set the namespace only where none is set yet.
    pub unset_only: bool,
    pub subjects: SubjectsMode,
    /// Whether the build keeps origins and transformer runs (its errors print them).
    pub tracks_origins: bool,
}

/// The field specs a move walks: all but `metadata/namespace` (which must skip cluster-scoped
/// kinds) and binding subjects (set by `options.subjects`), handled apart as kustomize's
/// namespace filter does.
pub fn walked_field_specs(options: &NamespaceOptions) -> Vec<FieldSpec> {
    options
        .field_specs
        .iter()
        .filter(|s| s.path != "metadata/namespace")
        .filter(|s| !(s.path == "subjects/namespace" && is_binding(&s.gvk.kind)))
        .cloned()
        .collect()
}

/// The move of one resource into the namespace; `specs` are [`walked_field_specs`].
pub struct NamespaceMove<'a> {
    options: &'a NamespaceOptions,
    specs: &'a [FieldSpec],
    paths: SpecPaths<'a>,
}

impl<'a> NamespaceMove<'a> {
    pub fn new(options: &'a NamespaceOptions, specs: &'a [FieldSpec]) -> Self {
        NamespaceMove { options, specs, paths: SpecPaths::new(specs) }
    }

    /// Whether moving the resources one at a time could give two of them one id, which is then
    /// checked as each moves ([`set_namespace`]); else each resource moves on its own.
    pub fn may_conflict(&self, resources: &ResMap) -> bool {
        same_named_after(resources, self.specs, self.options).is_some()
    }

    fn set(&self, node: &mut Value) {
        let is_set = matches!(node, Value::String(s) if !s.is_empty());
        if !(self.options.unset_only && is_set) {
            *node = Value::String(self.options.namespace.clone());
        }
    }

    /// Moves `r`; says whether it took part (kustomize leaves what a chart rendered to helm,
    /// v5.8, even its id history).
    fn move_one(&self, r: &mut Resource) -> Result<bool> {
        let options = self.options;
        if r.is_helm_generated() {
            return Ok(false);
        }
        // kustomize records the id before this transformer for every resource, moved or not.
        r.store_previous_id();
        let may_set = !options.unset_only || r.namespace().is_empty();
        if may_set && is_namespaced(r.api_version(), r.kind()) {
            r.set_namespace(&options.namespace);
        }
        if is_binding(r.kind()) {
            set_subject_namespaces(&mut r.value, options.subjects, &|node| self.set(node));
        }
        // A quoted scalar keeps its quotes when set, as a kyaml node does; they show only
        // in the node an error prints, so paths are tracked only when there are quotes.
        let quoted = r.quoted.clone();
        for (index, spec) in self.specs.iter().enumerate() {
            // Renaming a Namespace object is for the core kind only, not for CRDs also named Namespace.
            if spec.path == "metadata/name" && spec.gvk.kind == "Namespace" && r.api_version() != "v1" {
                continue;
            }
            let mut visit = |node: &mut Value, path: &dyn Fn() -> NodePath| match node {
                Value::Null | Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                    self.set(node);
                    Ok(())
                }
                other => Err(Error::msg(format!(
                    "wrong node kind: expected ScalarNode but got {}: node contents:\n{}",
                    if other.is_array() { "SequenceNode" } else { "MappingNode" },
                    crate::yaml::emit::emit_node_dump(other, quoted_at(quoted.as_deref(), &path()))
                ))),
            };
            self.paths.apply_one(index, &mut r.value, CreateKind::Scalar, quoted.is_some(), &mut visit).map_err(|e| {
                let id = r.current_id();
                Error::msg(format!(
                    "namespace field specs must target scalar nodes: considering field '{}' of object {id}: {e}",
                    spec.path
                ))
            })?;
        }
        Ok(true)
    }
}

impl ResourceStep for NamespaceMove<'_> {
    fn apply(&self, _at: usize, r: &mut Resource) -> Result<Outcome> {
        self.move_one(r).map(|_| Outcome::Kept)
    }
}

/// Sets the namespace of every namespaced resource and of the fields the specs name.
pub fn set_namespace(resources: &mut ResMap, options: &NamespaceOptions) -> Result<()> {
    let specs = walked_field_specs(options);
    let step = NamespaceMove::new(options, &specs);
    // Only resources of one group, version, kind and name after the move can come to share an
    // id here. Where there are such, the resources are moved as kustomize moves them, one after
    // another, each checked against all the others as they are at that moment: its error shows
    // them so.
    let Some(groups) = same_named_after(resources, &specs, options) else {
        return resources.try_for_each_mut_parallel(|r| step.move_one(r).map(drop));
    };
    // How many resources of each group have each current id as the move goes: a conflict is a
    // count above one.
    let id_of = |r: &Resource| {
        let namespace = crate::resource::effective_namespace(r.api_version(), r.kind(), r.namespace());
        [r.api_version(), r.kind(), r.name(), namespace].map(str::to_owned)
    };
    let mut counts: crate::fast_hash::FastHashMap<(usize, [String; 4]), usize> = crate::fast_hash::FastHashMap::default();
    for (&j, &group) in &groups.of {
        *counts.entry((group, id_of(resources.get(j)))).or_default() += 1;
    }
    for i in 0..resources.len() {
        let Some(&group) = groups.of.get(&i) else {
            step.move_one(resources.get_mut(i))?;
            continue;
        };
        let before = id_of(resources.get(i));
        if !step.move_one(resources.get_mut(i))? {
            continue;
        }
        let after = id_of(resources.get(i));
        if let Some(count) = counts.get_mut(&(group, before)) {
            *count -= 1;
        }
        let count = counts.entry((group, after)).or_default();
        *count += 1;
        if *count > 1 {
            let moved = resources.get(i);
            let matches: Vec<usize> = groups.positions[group].iter().copied().filter(|&j| resources.get(j).has_same_current_id(moved)).collect();
            if matches.len() > 1 {
                return Err(id_conflict(resources, &matches, options.tracks_origins));
            }
        }
    }
    Ok(())
}

/// The resources that may come to share an id: by group, and each one's group.
struct Groups {
    positions: Vec<Vec<usize>>,
    of: crate::fast_hash::FastHashMap<usize, usize>,
}

/// The resources that share a group, version, kind and name with another once moved (a spec
/// for `metadata/name`, as the builtin one for Namespace objects, names them after the
/// namespace), or None when every resource stays alone. Ids are compared as the texts they are
/// made of. A spec that would change a kind or an apiVersion makes every resource one group.
fn same_named_after<'r>(resources: &'r ResMap, specs: &[FieldSpec], options: &'r NamespaceOptions) -> Option<Groups> {
    let parts: Vec<Vec<String>> = specs.iter().map(|s| super::path::split_field_spec_path(&s.path)).collect();
    let is = |p: &[String], want: &[&str]| p.len() == want.len() && p.iter().zip(want).all(|(a, b)| a == b);
    if parts.iter().any(|p| is(p, &["kind"]) || is(p, &["apiVersion"])) {
        let all: Vec<usize> = (0..resources.len()).collect();
        return Some(Groups { of: all.iter().map(|&i| (i, 0)).collect(), positions: vec![all] });
    }
    let naming: Vec<&FieldSpec> = specs.iter().zip(&parts).filter(|(_, p)| is(p, &["metadata", "name"])).map(|(s, _)| s).collect();
    let name_after = |r: &Resource| -> bool {
        let renamed = naming.iter().any(|s| {
            // As the move itself skips it: only the core Namespace kind is renamed by that spec.
            !(s.gvk.kind == "Namespace" && r.api_version() != "v1") && s.applies_to(r.api_version(), r.kind())
        });
        renamed && !r.is_helm_generated() && !(options.unset_only && !r.name().is_empty())
    };
    let id_after = |r: &'r Resource| {
        let (group, version) = crate::resource::split_api_version(r.api_version());
        let name = if name_after(r) { options.namespace.as_str() } else { r.name() };
        (group, version, r.kind(), name)
    };
    // Each resource's id is read on every thread of a large build; only the inserts need one.
    let ids = resources.read_each(id_after);
    let mut first = crate::fast_hash::FastHashMap::default();
    first.reserve(resources.len());
    let mut shared: Vec<(usize, usize)> = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        match first.entry(id) {
            std::collections::hash_map::Entry::Occupied(earlier) => shared.push((*earlier.get(), i)),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
    }
    if shared.is_empty() {
        return None;
    }
    let mut groups = Groups { positions: Vec::new(), of: Default::default() };
    for (earlier, i) in shared {
        let group = *groups.of.entry(earlier).or_insert_with(|| {
            groups.positions.push(vec![earlier]);
            groups.positions.len() - 1
        });
        groups.positions[group].push(i);
        groups.of.insert(i, group);
    }
    Some(groups)
}

/// kustomize's error when the namespace gives two resources one id: every resource with that
/// id, in order, as its `%+v` prints them (Go's JSON of each, with the annotations kustomize
/// keeps on it while it builds).
fn id_conflict(resources: &ResMap, matches: &[usize], tracks_origins: bool) -> Error {
    let printed: Vec<String> = matches
        .iter()
        .map(|&j| {
            let r = resources.get(j);
            crate::yaml::go_json_text::go_json(&crate::build_metadata::with_build_annotations(r, &r.value, tracks_origins))
        })
        .collect();
    Error::msg(format!("namespace transformation produces ID conflict: [{}]", printed.join(" ")))
}

fn is_binding(kind: &str) -> bool {
    matches!(kind, "RoleBinding" | "ClusterRoleBinding")
}

/// kustomize's role binding special case: which subjects get the namespace depends on the mode.
fn set_subject_namespaces(binding: &mut Value, mode: SubjectsMode, set: &dyn Fn(&mut Value)) {
    let Some(subjects) = binding.get_mut("subjects").and_then(Value::as_array_mut) else { return };
    for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
        let name = subject.get("name").and_then(Value::as_str).unwrap_or("");
        let kind = subject.get("kind").and_then(Value::as_str).unwrap_or("");
        let selected = match mode {
            SubjectsMode::DefaultOnly => name == "default",
            SubjectsMode::AllServiceAccounts => kind == "ServiceAccount",
            SubjectsMode::None => false,
        };
        if selected {
            set(subject.entry("namespace").or_insert(Value::Null));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transform::fieldspec_tables::FieldSpecTables;
    use crate::transform::table::{field, resources};

    const RESOURCES: &str = "
apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other, namespace: other}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cr}
---
apiVersion: v1
kind: Namespace
metadata: {name: somens}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: crb}
subjects:
- {kind: ServiceAccount, name: a, namespace: default}
- {kind: ServiceAccount, name: default, namespace: default}
- {kind: ServiceAccount, name: default, namespace: x}
- {kind: ServiceAccount, name: default}
- {kind: User, name: default, namespace: default}
";

    fn with_namespace(unset_only: bool) -> ResMap {
        let mut resources = resources(RESOURCES);
        let options = NamespaceOptions { namespace: "ns1".into(), field_specs: FieldSpecTables::builtin().namespace.clone(), unset_only, ..Default::default() };
        set_namespace(&mut resources, &options).unwrap();
        resources
    }

    /// Each row as kustomize v5.8.1 builds it with `namespace: ns1`.
    #[test]
    fn namespaced_kinds_take_the_namespace_cluster_scoped_ones_do_not() {
        let set = with_namespace(false);
        let rows = [
            ("ConfigMap", "plain", "metadata.namespace", Some(json!("ns1"))),
            ("ConfigMap", "other", "metadata.namespace", Some(json!("ns1"))),
            ("ClusterRole", "cr", "metadata.namespace", None),
            // A kind the schema does not know is namespaced.
            ("Widget", "w", "metadata.namespace", Some(json!("ns1"))),
            // A Namespace is renamed to the namespace itself.
            ("Namespace", "somens", "metadata.name", Some(json!("ns1"))),
            ("Namespace", "somens", "metadata.namespace", None),
        ];
        for (kind, name, path, expected) in rows {
            assert_eq!(field(&set, kind, name, path), expected.as_ref(), "{kind}/{name} {path}");
        }
    }

    /// The subjects of a binding: one named `default` (of any kind) follows the namespace
    /// wherever it pointed; any other subject is left alone.
    #[test]
    fn only_subjects_named_default_follow() {
        let set = with_namespace(false);
        let namespaces: Vec<Option<&Value>> = (0..5).map(|i| field(&set, "ClusterRoleBinding", "crb", &format!("subjects.{i}.namespace"))).collect();
        assert_eq!(namespaces, [Some(&json!("default")), Some(&json!("ns1")), Some(&json!("ns1")), Some(&json!("ns1")), Some(&json!("ns1"))]);
    }

    #[test]
    fn unset_only_keeps_a_namespace_already_set() {
        let set = with_namespace(true);
        assert_eq!(field(&set, "ConfigMap", "other", "metadata.namespace"), Some(&json!("other")));
        assert_eq!(field(&set, "ConfigMap", "plain", "metadata.namespace"), Some(&json!("ns1")));
    }
}
