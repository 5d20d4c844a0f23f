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
        // The id is only needed for the message, so it is only made when there is one.
        let mut not_a_mapping = None;
        let result = apply_field_specs(&mut r.value, specs, CreateKind::Mapping, &mut |node| {
            if node.is_null() {
                *node = Value::Object(Map::new());
            }
            let Value::Object(map) = node else {
                not_a_mapping = Some(node.to_string());
                return Err(Error::msg("not a mapping"));
            };
            for (k, v) in entries {
                map.insert(k.clone(), Value::String(v.clone()));
            }
            Ok(())
        });
        match not_a_mapping {
            Some(node) => Err(Error::msg(format!("expected a mapping in {}, got {node}", r.current_id()))),
            None => result,
        }
    })
}
