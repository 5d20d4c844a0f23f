//! `replicas`: set the replica count of named workloads.
use serde_json::Value;

use super::fieldspec::{walk_spec_path, CreateKind, FieldSpec};
use crate::error::{Error, Result};
use crate::kustomization::types::Replica;
use crate::resource::ResMap;

/// Sets `count` on every resource named `replica.name` (under any of its names) whose kind a spec selects.
pub fn set_replicas(resources: &mut ResMap, replica: &Replica, specs: &[FieldSpec]) -> Result<()> {
    let mut found = false;
    let named = resources.positions_named(&replica.name);
    for spec in specs {
        for &i in &named {
            let r = resources.get_mut(i);
            if !r.all_ids().iter().any(|id| id.name == replica.name && id.gvk.is_selected_by(&spec.gvk)) {
                continue;
            }
            found = true;
            walk_spec_path(&mut r.value, spec, CreateKind::Scalar, &mut |node| {
                *node = Value::from(replica.count);
                Ok(())
            })?;
        }
    }
    if !found {
        let gvks: Vec<String> = specs.iter().map(|s| s.gvk.to_string()).collect();
        return Err(Error::msg(format!(
            "resource with name {} does not match a config with the following GVK [{}]",
            replica.name,
            gvks.join(" ")
        )));
    }
    Ok(())
}
