//! `commonLabels`, `labels` and `commonAnnotations`: add entries to the maps the field specs name.
use serde_json::{Map, Value};

use super::fieldspec::{apply_field_specs, CreateKind, FieldSpec};
use crate::error::{Error, Result};
use crate::kustomization::types::StringMap;
use crate::resource::{ResId, ResMap};

/// Sets every pair of `entries` in each map found at the specs' paths (created where the spec says).
pub fn add_map_entries(resources: &mut ResMap, entries: &StringMap, specs: &[FieldSpec]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    resources.try_for_each_mut_parallel(|r| {
        // The id is made only for the message: a failed walk is repeated to word it (the entries
        // added before the failure are added again, to the same effect).
        add_to_resource(&mut r.value, entries, specs, None).or_else(|_| {
            let id = r.current_id();
            add_to_resource(&mut r.value, entries, specs, Some(&id))
        })
    })
}

fn add_to_resource(value: &mut Value, entries: &StringMap, specs: &[FieldSpec], id: Option<&ResId>) -> Result<()> {
    for spec in specs {
        apply_field_specs(value, std::slice::from_ref(spec), CreateKind::Mapping, &mut |node| {
            if node.is_null() {
                *node = Value::Object(Map::new());
            }
            let Value::Object(map) = node else {
                let got = if node.is_array() { "SequenceNode" } else { "ScalarNode" };
                let contents = crate::yaml::emit::emit_stream([&*node]);
                return Err(Error::msg(format!("wrong node kind: expected MappingNode but got {got}: node contents:\n{contents}")));
            };
            for (k, v) in entries {
                map.insert(k.clone(), Value::String(v.clone()));
            }
            Ok(())
        })
        .map_err(|e| {
            let id = id.map(ToString::to_string).unwrap_or_default();
            e.context(format!("considering field '{}' of object {id}", spec.path))
        })?;
    }
    Ok(())
}
