//! `commonLabels`, `labels` and `commonAnnotations`: add entries to the maps the field specs name.
use serde_json::{Map, Value};

use super::fieldspec::{apply_field_specs_at, CreateKind, FieldSpec};
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
    let budget = crate::budget::current();
    resources.try_for_each_mut_parallel(|r| add_to_resource(r, entries, specs, &budget))
}

fn add_to_resource(r: &mut Resource, entries: &StringMap, specs: &[FieldSpec], budget: &crate::budget::Budget) -> Result<()> {
    // For each key, the paths where this run created it.
    let mut created: Vec<Vec<NodePath>> = vec![Vec::new(); entries.len()];
    let mut failed_spec = None;
    let quoted = r.quoted.clone();
    let outcome: Result<()> = r.write(|value| {
        for spec in specs {
            apply_field_specs_at(value, std::slice::from_ref(spec), CreateKind::Mapping, &mut |node, path| {
                if node.is_null() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(map) = node else {
                    let got = if node.is_array() { "SequenceNode" } else { "ScalarNode" };
                    let contents = crate::yaml::emit::emit_node_dump(node, quoted_at(quoted.as_deref(), &path()));
                    return Err(Error::msg(format!("wrong node kind: expected MappingNode but got {got}: node contents:\n{contents}")));
                };
                for (i, (k, v)) in entries.iter().enumerate() {
                    budget.charge_text(k.len() + v.len(), 2).map_err(|e| Error::msg(e.to_string()))?;
                    if !map.contains_key(k) {
                        let mut at = path();
                        at.push(Step::Key(k.clone()));
                        created[i].push(at);
                    }
                    map.insert(k.clone(), Value::String(v.clone()));
                }
                Ok(())
            })
            .inspect_err(|_| failed_spec = Some(spec.path.clone()))?;
        }
        Ok(())
    });
    if let Err(e) = outcome {
        // The id is made only for the message.
        let path = failed_spec.unwrap_or_default();
        return Err(e.context(format!("considering field '{path}' of object {}", r.current_id())));
    }
    for (paths, k) in created.into_iter().zip(entries.keys()) {
        if crate::yaml::scalar::plain_key_as_go_value(k).is_some() {
            r.plain_keys.extend(paths.iter().cloned());
        }
        r.nodes.link(paths);
    }
    Ok(())
}
