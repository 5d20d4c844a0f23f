//! `namePrefix` and `nameSuffix`: add text around resource names (and the fields the specs name).
use serde_json::Value;

use super::fieldspec::{walk_spec_path, CreateKind, FieldSpec};
use crate::error::{Error, Result};
use crate::resource::{Gvk, ResMap};

/// Kinds whose names kustomize never prefixes or suffixes.
fn is_skipped(gvk: &Gvk) -> bool {
    gvk.kind == "CustomResourceDefinition"
        || (gvk.kind == "APIService" && gvk.group == "apiregistration.k8s.io")
        || gvk.kind == "Namespace"
}

/// Adds `prefix` and `suffix` at every field spec path (normally just `metadata/name`).
pub fn add_name_affixes(resources: &mut ResMap, prefix: &str, suffix: &str, specs: &[FieldSpec]) -> Result<()> {
    // Every name written grows by the affixes, and each resource keeps a copy of both.
    let budget = crate::budget::current();
    let affixes = prefix.len() + suffix.len();
    resources.try_for_each_mut_parallel(|r| {
        let original = r.original_id();
        if is_skipped(&original.gvk) {
            return Ok(());
        }
        for spec in specs {
            if !original.gvk.is_selected_by(&spec.gvk) {
                continue;
            }
            if spec.path == "metadata/name" {
                budget.charge_text(affixes, 1).map_err(|e| Error::msg(e.to_string()))?;
                // Recorded even when empty: name references compare these lists.
                r.prefixes.push(prefix.to_string());
                r.suffixes.push(suffix.to_string());
                if !prefix.is_empty() || !suffix.is_empty() {
                    r.store_previous_id();
                }
            }
            walk_spec_path(&mut r.value, spec, CreateKind::Scalar, &mut |node| {
                if let Value::String(s) = node {
                    budget.charge_text(affixes, 1).map_err(|e| Error::msg(e.to_string()))?;
                    *s = format!("{prefix}{s}{suffix}");
                }
                Ok(())
            })?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transform::fieldspec_tables::FieldSpecTables;
    use crate::transform::table::{field, resources};

    /// Each row as kustomize v5.8.1 builds it with `namePrefix: p-` and `nameSuffix: -s`.
    #[test]
    fn names_take_prefix_and_suffix_except_namespaces_and_crds() {
        let mut set = resources(
            "
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
---
apiVersion: v1
kind: Namespace
metadata: {name: nsx}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
",
        );
        let tables = FieldSpecTables::builtin();
        add_name_affixes(&mut set, "p-", "", &tables.name_prefix).unwrap();
        add_name_affixes(&mut set, "", "-s", &tables.name_suffix).unwrap();
        let rows = [("ConfigMap", "cfg", "p-cfg-s"), ("Deployment", "web", "p-web-s"), ("Namespace", "nsx", "nsx"), ("CustomResourceDefinition", "widgets.example.com", "widgets.example.com")];
        for (kind, name, expected) in rows {
            assert_eq!(field(&set, kind, name, "metadata.name"), Some(&json!(expected)), "{kind}/{name}");
        }
    }
}
