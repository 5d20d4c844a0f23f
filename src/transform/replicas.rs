//! `replicas`: set the replica count of named workloads.
use serde_json::Value;

use super::fieldspec::{walk_spec_path, CreateKind, FieldSpec};
use crate::error::{Error, Result};
use crate::kustomization::types::Replica;
use crate::resource::{ResId, ResMap};

/// Sets `count` on every resource named `replica.name` (under any of its names) whose kind a spec selects.
pub fn set_replicas(resources: &mut ResMap, replica: &Replica, specs: &[FieldSpec]) -> Result<()> {
    let mut found = false;
    let named = resources.positions_named(&replica.name);
    // Each named resource's ids, made once for all the specs (writing a count changes none).
    let ids: Vec<Vec<ResId>> = named.iter().map(|&i| resources.get(i).all_ids()).collect();
    for spec in specs {
        for (&i, ids) in named.iter().zip(&ids) {
            if !ids.iter().any(|id| id.name == replica.name && id.gvk.is_selected_by(&spec.gvk)) {
                continue;
            }
            let r = resources.get_mut(i);
            found = true;
            // Through the resource: a count written at a shared annotation node shows at each
            // of its paths (`resource::nodes`).
            r.write(|value| {
                walk_spec_path(value, spec, CreateKind::Scalar, &mut |node| {
                    *node = count_over(node, replica.count);
                    Ok(())
                })
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

/// The count written over `old`, as kustomize writes it: an integer node that keeps the old
/// node's style, so over a quoted scalar (a string YAML 1.1 would read as something else was
/// quoted) it prints quoted, a string.
fn count_over(old: &Value, count: i64) -> Value {
    match old {
        Value::String(text) if crate::yaml::reads_as_non_string_in_yaml_1_1(text) => Value::String(count.to_string()),
        _ => Value::from(count),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transform::fieldspec_tables::FieldSpecTables;
    use crate::transform::table::{field, resources};

    const WORKLOADS: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
";

    /// As kustomize v5.8.1 builds `replicas: [{name: web, count: 5}, {name: db, count: 3}]`:
    /// the count is set, or created, on every workload of that name, and nowhere else.
    #[test]
    fn the_count_is_set_or_created_on_workloads_of_that_name() {
        let mut set = resources(WORKLOADS);
        let specs = &FieldSpecTables::builtin().replicas;
        set_replicas(&mut set, &Replica { name: "web".into(), count: 5 }, specs).unwrap();
        set_replicas(&mut set, &Replica { name: "db".into(), count: 3 }, specs).unwrap();
        let rows = [("Deployment", "web", Some(json!(5))), ("StatefulSet", "db", Some(json!(3))), ("ConfigMap", "web", None)];
        for (kind, name, expected) in rows {
            assert_eq!(field(&set, kind, name, "spec.replicas"), expected.as_ref(), "{kind}/{name}");
        }
    }

    #[test]
    fn a_name_no_workload_has_is_kustomizes_error() {
        let mut set = resources(WORKLOADS);
        let error = set_replicas(&mut set, &Replica { name: "cache".into(), count: 2 }, &FieldSpecTables::builtin().replicas).unwrap_err();
        assert!(error.to_string().starts_with("resource with name cache does not match a config with the following GVK ["), "{error}");
    }
}
