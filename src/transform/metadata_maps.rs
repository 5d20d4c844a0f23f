//! `commonLabels`, `labels` and `commonAnnotations`: add entries to the maps the field specs name.
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::fieldspec::{owned_path, CreateKind, FieldSpec, SpecPaths, StepRef};
use super::steps::{Outcome, ResourceStep};
use crate::fast_hash::{field_mut, SCAN};
use crate::error::{Error, Result};
use crate::kustomization::types::StringMap;
use crate::resource::nodes::quoted_at;
use crate::resource::{NodePath, ResMap, Resource, Step};

/// Sets every pair of `entries` in each map found at the specs' paths (created where the spec says).
/// Like kustomize, each key gets one value node per resource, shared by every path where the key
/// was missing (see `resource::nodes`).
pub fn add_map_entries(resources: &mut ResMap, entries: &StringMap, specs: &[FieldSpec]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    add_map_entries_at(resources, entries, &SpecPaths::new(specs))
}

/// [`add_map_entries`] with the specs' paths already split.
pub fn add_map_entries_at(resources: &mut ResMap, entries: &StringMap, paths: &SpecPaths) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let step = MapEntries::new(entries, paths);
    resources.try_for_each_mut_parallel(|r| step.add(r))
}

/// The entries added to one resource's maps at the specs' paths.
pub struct MapEntries<'a> {
    entries: &'a StringMap,
    /// Whether each key reads back as a non-string (`true`, `1`): the same for every resource.
    plain: Vec<bool>,
    paths: &'a SpecPaths<'a>,
    budget: std::sync::Arc<crate::budget::Budget>,
}

impl<'a> MapEntries<'a> {
    /// Made on the build's thread, whose budget every entry it writes is charged to.
    pub fn new(entries: &'a StringMap, paths: &'a SpecPaths<'a>) -> Self {
        let plain = entries.keys().map(|k| crate::yaml::scalar::plain_key_as_go(k).is_some()).collect();
        MapEntries { entries, plain, paths, budget: crate::budget::current() }
    }
}

impl ResourceStep for MapEntries<'_> {
    fn apply(&self, _at: usize, r: &mut Resource) -> Result<Outcome> {
        self.add(r).map(|()| Outcome::Kept)
    }
}

impl MapEntries<'_> {
    fn add(&self, r: &mut Resource) -> Result<()> {
        if self.entries.is_empty() {
            return Ok(());
        }
        add_to_resource(r, self.entries, &self.plain, self.paths, &self.budget)
    }
}

fn add_to_resource(r: &mut Resource, entries: &StringMap, plain: &[bool], specs: &SpecPaths, budget: &crate::budget::Budget) -> Result<()> {
    // Where this run created a key: the key's index and the path of its map, as steps borrowed
    // from the specs (one after another in `steps`). Owned paths are made afterwards, only for
    // a key created at more than one path (a shared node) or one read back as a non-string.
    let mut created: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    let mut steps: Vec<StepRef> = Vec::new();
    let quoted = r.quoted.clone();
    let outcome = r.write_map_entries(|k| entries.contains_key(k), |value| {
        specs.apply_at(value, CreateKind::Mapping, &mut |node, path| {
            if node.is_null() {
                *node = Value::Object(Map::new());
            }
            let Value::Object(map) = node else {
                let got = if node.is_array() { "SequenceNode" } else { "ScalarNode" };
                let contents = crate::yaml::emit::emit_node_dump(node, quoted_at(quoted.as_deref(), &owned_path(path)));
                return Err(Error::msg(format!("wrong node kind: expected MappingNode but got {got}: node contents:\n{contents}")));
            };
            let mut map_path: Option<std::ops::Range<usize>> = None;
            for (i, (k, v)) in entries.iter().enumerate() {
                budget.charge_text(k.len() + v.len(), 2).map_err(|e| Error::msg(e.to_string()))?;
                if set_entry(map, k, v) {
                    let range = map_path.get_or_insert_with(|| {
                        let start = steps.len();
                        steps.extend_from_slice(path);
                        start..steps.len()
                    });
                    created.push((i, range.clone()));
                }
            }
            Ok(())
        })
    });
    if let Err(failure) = outcome {
        // The id is made only for the message.
        let path = &failure.spec.path;
        return Err(failure.error.context(format!("considering field '{path}' of object {}", r.current_id())));
    }
    for (i, k) in entries.keys().enumerate() {
        let count = created.iter().filter(|(key, _)| *key == i).count();
        if count == 0 {
            continue;
        }
        let plain = plain[i];
        if count == 1 && !plain {
            continue;
        }
        let paths: Vec<NodePath> = created
            .iter()
            .filter(|(key, _)| *key == i)
            .map(|(_, range)| {
                let mut at = owned_path(&steps[range.clone()]);
                at.push(Step::Key(k.clone()));
                at
            })
            .collect();
        if plain {
            r.plain_keys.extend(paths.iter().cloned());
        }
        r.nodes.link(paths);
    }
    Ok(())
}

/// Sets `key: value` in `map`; says whether the key was missing. The key is hashed once at most:
/// small maps are searched key by key, larger ones go through one entry lookup.
fn set_entry(map: &mut Map<String, Value>, key: &str, value: &str) -> bool {
    let slot = if map.len() <= SCAN {
        match field_mut(map, key) {
            Some(slot) => slot,
            None => {
                map.insert(key.to_string(), Value::String(value.to_string()));
                return true;
            }
        }
    } else {
        match map.entry(key) {
            Entry::Occupied(slot) => slot.into_mut(),
            Entry::Vacant(slot) => {
                slot.insert(Value::String(value.to_string()));
                return true;
            }
        }
    };
    match slot {
        // Already the value: nothing to write (and no new string to make).
        Value::String(old) if old == value => {}
        slot => *slot = Value::String(value.to_string()),
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transform::fieldspec::FieldSpec;
    use crate::transform::fieldspec_tables::FieldSpecTables;
    use crate::transform::table::{field, resources};

    const WORKLOADS: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {team: old}}
";

    fn pairs(key: &str, value: &str) -> StringMap {
        [(key.to_string(), value.to_string())].into_iter().collect()
    }

    /// Where each kind of label goes, as kustomize v5.8.1 builds `commonLabels: {env: prod}`
    /// and `labels: [{pairs: {team: a}, includeTemplates: true}]`: common labels reach
    /// selectors and templates; `labels` with templates reach templates but not selectors; an
    /// existing value is replaced.
    #[test]
    fn common_labels_reach_selectors_template_labels_do_not() {
        let mut set = resources(WORKLOADS);
        let tables = FieldSpecTables::builtin();
        add_map_entries(&mut set, &pairs("env", "prod"), &tables.common_labels).unwrap();
        let mut template_specs = tables.template_labels.clone();
        template_specs.push(FieldSpec { gvk: Default::default(), path: "metadata/labels".into(), create: true });
        add_map_entries(&mut set, &pairs("team", "a"), &template_specs).unwrap();
        let rows = [
            ("Deployment", "web", "metadata.labels", json!({"env": "prod", "team": "a"})),
            ("Deployment", "web", "spec.selector.matchLabels", json!({"app": "web", "env": "prod"})),
            ("Deployment", "web", "spec.template.metadata.labels", json!({"app": "web", "env": "prod", "team": "a"})),
            ("ConfigMap", "cfg", "metadata.labels", json!({"env": "prod", "team": "a"})),
        ];
        for (kind, name, path, expected) in rows {
            assert_eq!(field(&set, kind, name, path), Some(&expected), "{kind}/{name} {path}");
        }
    }

    /// A key missing at several paths of one resource becomes one shared node there (kustomize
    /// sets the same value node at each); a key missing at one path only is linked to nothing.
    /// A key YAML reads as a non-string is recorded at every path where it was created.
    #[test]
    fn keys_created_at_several_paths_are_linked_and_plain_keys_recorded() {
        let mut set = resources(WORKLOADS);
        let tables = FieldSpecTables::builtin();
        add_map_entries(&mut set, &pairs("env", "prod"), &tables.common_labels).unwrap();
        let linked = |set: &ResMap, kind: &str| !set.iter().find(|r| r.kind() == kind).unwrap().nodes.is_empty();
        assert!(linked(&set, "Deployment"), "metadata, selector and template labels share the value");
        assert!(!linked(&set, "ConfigMap"), "one path only");
        add_map_entries(&mut set, &pairs("true", "yes"), &tables.common_labels).unwrap();
        let config_map = set.iter().find(|r| r.kind() == "ConfigMap").unwrap();
        let expected: NodePath = ["metadata", "labels", "true"].iter().map(|k| Step::Key((*k).to_string())).collect();
        assert_eq!(config_map.plain_keys, vec![expected]);
    }

    /// Maps larger than the scanned size: an equal value stays, a different one is replaced in
    /// place, a missing key goes last.
    #[test]
    fn large_maps_keep_their_order() {
        let mut set = resources(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: {a: '1', b: '2', c: '3', d: '4', e: '5', f: '6', g: '7', h: '8', i: '9'}\n",
        );
        let entries: StringMap = [("c", "3"), ("e", "five"), ("z", "26")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let specs = [FieldSpec { gvk: Default::default(), path: "metadata/labels".into(), create: true }];
        add_map_entries(&mut set, &entries, &specs).unwrap();
        let labels = field(&set, "ConfigMap", "cfg", "metadata.labels").unwrap().as_object().unwrap();
        let got: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect();
        let expected = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "five"), ("f", "6"), ("g", "7"), ("h", "8"), ("i", "9"), ("z", "26")];
        assert_eq!(got, expected);
    }
}
