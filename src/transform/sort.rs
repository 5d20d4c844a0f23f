//! Output order: kustomize's legacy order (by kind priority, then group/version/kind, namespace, name),
//! or the input order (`fifo`).
use std::cmp::Ordering;

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

/// kyaml's `Gvk.IsLessThan`, the order kustomize sorts its field spec tables in: the kinds of
/// the default lists first and last, as the legacy sort places them, then by
/// `group_version_kind` ([`compare_gvk_text`]). The sorts that use it are stable, as Go's
/// `sort.Stable`: a table already in order (the builtin one, merged into a kustomization's) is
/// sorted in one pass.
pub fn compare_gvk(a: &Gvk, b: &Gvk) -> Ordering {
    default_rank(&a.kind).cmp(&default_rank(&b.kind)).then_with(|| compare_gvk_text(a, b))
}

/// A kind's place by [`LEGACY_ORDER_FIRST`] (negative) and [`LEGACY_ORDER_LAST`] (positive), 0
/// for the others: the lists as a `match`, which a field spec table's sort asks at every
/// comparison (a unit test holds the two to each other).
fn default_rank(kind: &str) -> i8 {
    match kind {
        "Namespace" => -22,
        "ResourceQuota" => -21,
        "StorageClass" => -20,
        "CustomResourceDefinition" => -19,
        "ServiceAccount" => -18,
        "PodSecurityPolicy" => -17,
        "Role" => -16,
        "ClusterRole" => -15,
        "RoleBinding" => -14,
        "ClusterRoleBinding" => -13,
        "ConfigMap" => -12,
        "Secret" => -11,
        "Endpoints" => -10,
        "Service" => -9,
        "LimitRange" => -8,
        "PriorityClass" => -7,
        "PersistentVolume" => -6,
        "PersistentVolumeClaim" => -5,
        "Deployment" => -4,
        "StatefulSet" => -3,
        "CronJob" => -2,
        "PodDisruptionBudget" => -1,
        "MutatingWebhookConfiguration" => 1,
        "ValidatingWebhookConfiguration" => 2,
        _ => 0,
    }
}

/// kyaml's text of a group/version/kind, `group_version_kind` with empty parts as `~G`, `~V`,
/// `~K`, compared as that text without making it: not part by part (a group `a_b` comes before
/// `a`, whose text goes on with `_v`), and an empty part after every letter.
fn compare_gvk_text(a: &Gvk, b: &Gvk) -> Ordering {
    gvk_text(a).cmp(gvk_text(b))
}

/// The bytes of kyaml's `group_version_kind` text of `g` (see [`compare_gvk_text`]).
fn gvk_text(g: &Gvk) -> impl Iterator<Item = &u8> {
    fn or<'s>(part: &'s str, empty: &'static str) -> &'s [u8] {
        if part.is_empty() { empty.as_bytes() } else { part.as_bytes() }
    }
    or(&g.group, "~G").iter().chain(b"_").chain(or(&g.version, "~V")).chain(b"_").chain(or(&g.kind, "~K"))
}

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
    // The group/version/kind text made once for each resource: thousands of comparisons of
    // texts that mostly agree run faster over whole byte strings.
    let mut keyed: Vec<(i64, Vec<u8>, String, usize)> = resources
        .as_slice()
        .par_iter()
        .with_min_len(64)
        .enumerate()
        .map(|(i, r)| {
            let id = r.current_id();
            (rank.get(id.gvk.kind.as_str()).copied().unwrap_or(0), gvk_text(&id.gvk).copied().collect(), id_sort_string(&id), i)
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

    /// The `match` the table sorts ask is the default lists, place for place.
    #[test]
    fn the_default_rank_is_the_default_lists() {
        for (i, kind) in LEGACY_ORDER_FIRST.iter().enumerate() {
            assert_eq!(default_rank(kind) as i64, i as i64 - LEGACY_ORDER_FIRST.len() as i64, "{kind}");
        }
        for (i, kind) in LEGACY_ORDER_LAST.iter().enumerate() {
            assert_eq!(default_rank(kind) as i64, 1 + i as i64, "{kind}");
        }
        assert_eq!(default_rank("Widget"), 0);
        assert_eq!(default_rank("namespace"), 0);
    }

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
