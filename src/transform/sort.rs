//! Output order: kustomize's legacy order (by kind priority, then group/version/kind, namespace, name),
//! or the input order (`fifo`).
use crate::fast_hash::FastHashMap;

use crate::resource::{Gvk, ResId, ResMap};

/// Kinds printed first, in this order, by the legacy sort.
pub const LEGACY_ORDER_FIRST: [&str; 22] = [
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
    "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret",
    "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
    "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget",
];

/// Kinds printed last, in this order, by the legacy sort.
pub const LEGACY_ORDER_LAST: [&str; 2] = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];

/// Sorts in kustomize's legacy order with the given first/last kind lists.
pub fn legacy_sort(resources: &mut ResMap, order_first: &[String], order_last: &[String]) {
    let mut rank: FastHashMap<&str, i64> = FastHashMap::default();
    for (i, kind) in order_first.iter().enumerate() {
        rank.insert(kind, i as i64 - order_first.len() as i64);
    }
    for (i, kind) in order_last.iter().enumerate() {
        rank.insert(kind, 1 + i as i64);
    }
    use rayon::prelude::*;
    let mut keyed: Vec<(i64, String, String, usize)> = resources
        .as_slice()
        .par_iter()
        .with_min_len(64)
        .enumerate()
        .map(|(i, r)| {
            let id = r.current_id();
            (rank.get(id.gvk.kind.as_str()).copied().unwrap_or(0), gvk_sort_string(&id.gvk), id_sort_string(&id), i)
        })
        .collect();
    if resources.is_large() {
        keyed.par_sort();
    } else {
        keyed.sort();
    }
    let mut slots: Vec<Option<crate::resource::Resource>> = std::mem::take(resources).into_vec().into_iter().map(Some).collect();
    let sorted = keyed.into_iter().map(|(_, _, _, i)| slots[i].take().unwrap()).collect();
    *resources = ResMap::from_vec(sorted);
}

fn gvk_sort_string<'a>(gvk: &'a Gvk) -> String {
    let or = |s: &'a str, d: &'static str| if s.is_empty() { d } else { s };
    format!("{}_{}_{}", or(&gvk.group, "~G"), or(&gvk.version, "~V"), or(&gvk.kind, "~K"))
}

fn id_sort_string(id: &ResId) -> String {
    let ns = if id.namespace.is_empty() { "~X" } else { &id.namespace };
    let name = if id.name.is_empty() { "~N" } else { &id.name };
    format!("{}|{}|{}", id.gvk, ns, name)
}

pub fn default_order_first() -> Vec<String> {
    LEGACY_ORDER_FIRST.iter().map(|s| s.to_string()).collect()
}

pub fn default_order_last() -> Vec<String> {
    LEGACY_ORDER_LAST.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::table::resources;

    /// kustomize's legacy order (as v5.8.1 prints a tree holding these kinds): the kinds of the
    /// first list in its order, then the rest by group/version/kind and name, then the last
    /// list (webhooks after everything they could intercept).
    #[test]
    fn legacy_order_puts_namespaces_and_crds_first_and_webhooks_last() {
        let kinds = [
            ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v"),
            ("apps/v1", "StatefulSet", "db"),
            ("apps/v1", "Deployment", "web"),
            ("v1", "ConfigMap", "b"),
            ("v1", "ConfigMap", "a"),
            ("v1", "ServiceAccount", "sa"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "w.example.com"),
            ("v1", "Namespace", "nsx"),
            ("example.com/v1", "Widget", "w"),
        ];
        let yaml: Vec<String> = kinds.iter().map(|(api, kind, name)| format!("apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\n")).collect();
        let mut set = resources(&yaml.join("---\n"));
        legacy_sort(&mut set, &default_order_first(), &default_order_last());
        let order: Vec<String> = set.iter().map(|r| format!("{}/{}", r.kind(), r.name())).collect();
        assert_eq!(
            order,
            [
                "Namespace/nsx",
                "CustomResourceDefinition/w.example.com",
                "ServiceAccount/sa",
                "ConfigMap/a",
                "ConfigMap/b",
                "Deployment/web",
                "StatefulSet/db",
                "Widget/w",
                "ValidatingWebhookConfiguration/v",
            ]
        );
    }
}
