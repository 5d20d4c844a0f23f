//! `namePrefix` and `nameSuffix`: add text around resource names (and the fields the specs name).
use serde_json::Value;

use super::fieldspec::{walk_spec_path, CreateKind, FieldSpec};
use super::steps::{Outcome, ResourceStep};
use crate::error::{Error, Result};
use crate::resource::{Gvk, ResMap, Resource};

/// Kinds whose names kustomize never prefixes or suffixes.
fn is_skipped(gvk: &Gvk) -> bool {
    gvk.kind == "CustomResourceDefinition"
        || (gvk.kind == "APIService" && gvk.group == "apiregistration.k8s.io")
        || gvk.kind == "Namespace"
}

/// Adds `prefix` and `suffix` at every field spec path (normally just `metadata/name`).
pub fn add_name_affixes(resources: &mut ResMap, prefix: &str, suffix: &str, specs: &[FieldSpec]) -> Result<()> {
    let step = NameAffixes::new(prefix, suffix, specs);
    resources.try_for_each_mut_parallel(|r| step.affix(r))
}

/// The affixes added to one resource's name and the fields the specs name.
pub struct NameAffixes<'a> {
    prefix: &'a str,
    suffix: &'a str,
    specs: &'a [FieldSpec],
    budget: std::sync::Arc<crate::budget::Budget>,
}

impl<'a> NameAffixes<'a> {
    /// Made on the build's thread, whose budget every name it writes is charged to.
    pub fn new(prefix: &'a str, suffix: &'a str, specs: &'a [FieldSpec]) -> Self {
        NameAffixes { prefix, suffix, specs, budget: crate::budget::current() }
    }
}

impl ResourceStep for NameAffixes<'_> {
    fn apply(&self, _at: usize, r: &mut Resource) -> Result<Outcome> {
        self.affix(r).map(|()| Outcome::Kept)
    }
}

impl NameAffixes<'_> {
    fn affix(&self, r: &mut Resource) -> Result<()> {
        let NameAffixes { prefix, suffix, specs, budget } = self;
        // Every name written grows by the affixes, and each resource keeps a copy of both.
        let affixes = prefix.len() + suffix.len();
        let original = r.original_id();
        if is_skipped(&original.gvk) {
            return Ok(());
        }
        for spec in specs.iter() {
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
    }
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
