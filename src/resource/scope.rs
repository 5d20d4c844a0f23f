//! Which kinds live in a namespace, from kustomize's own table (generated from the Kubernetes schema
//! by `tools/gen-namespaced-kinds.sh`); kinds it does not know count as namespaced, as in kustomize.
use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("namespaced_kinds.tsv");

fn table() -> &'static HashMap<(&'static str, &'static str), bool> {
    static T: OnceLock<HashMap<(&str, &str), bool>> = OnceLock::new();
    T.get_or_init(|| {
        TABLE
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                Some(((f.next()?, f.next()?), f.next()? == "true"))
            })
            .collect()
    })
}

/// Whether a resource of this apiVersion and kind is namespaced.
pub fn is_namespaced(api_version: &str, kind: &str) -> bool {
    table().get(&(api_version, kind)).copied().unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::is_namespaced;

    #[test]
    fn cluster_scoped_kinds_are_known() {
        assert!(!is_namespaced("v1", "Namespace"));
        assert!(!is_namespaced("rbac.authorization.k8s.io/v1", "ClusterRole"));
        assert!(is_namespaced("apps/v1", "Deployment"));
        assert!(is_namespaced("example.com/v1", "Unknown"));
    }
}
