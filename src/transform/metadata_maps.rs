//! `commonLabels`, `labels` and `commonAnnotations`: add entries to the maps the field specs name.
use serde_json::{Map, Value};

use super::fieldspec::{apply_field_specs, CreateKind, FieldSpec};
use crate::error::{Error, Result};
use crate::kustomization::types::StringMap;
use crate::resource::ResMap;

/// Sets every pair of `entries` in each map found at the specs' paths (created where the spec says).
pub fn add_map_entries(resources: &mut ResMap, entries: &StringMap, specs: &[FieldSpec]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    resources.for_each_mut(|r| {
        let id = r.current_id();
        apply_field_specs(&mut r.value, specs, CreateKind::Mapping, &mut |node| {
            if node.is_null() {
                *node = Value::Object(Map::new());
            }
            let Value::Object(map) = node else {
                return Err(Error::msg(format!("expected a mapping in {id}, got {node}")));
            };
            for (k, v) in entries {
                map.insert(k.clone(), Value::String(v.clone()));
            }
            Ok(())
        })
    })
}
