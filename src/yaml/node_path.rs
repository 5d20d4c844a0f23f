//! A path into a document or a resource as steps (a mapping key, a sequence position), and the
//! node it reaches. The one structural path of the house: the parser records places with it
//! (empty nulls, quoted scalars, positions), resources record shared and untagged nodes with it,
//! `explain` records where a field came from with it. Paths written as text (kyaml's field-spec,
//! replacement and var paths, and the paths `diff` and `explain` print) are
//! `transform/path.rs`'s.
use serde_json::Value;

use crate::fast_hash::{field, field_mut};

/// One step of a path into a document (or a resource): a mapping key or a sequence position.
/// Paths order as kyaml's walker visits fields (keys sorted, positions in order).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Where a node sits inside a document or resource.
pub type NodePath = Vec<Step>;

/// The node at `path` below `root` (small mappings are scanned, not hashed).
pub fn value_at<'v>(root: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(root, |node, step| match step {
        Step::Key(k) => field(node.as_object()?, k),
        Step::Index(i) => node.as_array()?.get(*i),
    })
}

/// The node at `path` below `root`, to change.
pub fn value_at_mut<'v>(root: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(root, |node, step| match step {
        Step::Key(k) => field_mut(node.as_object_mut()?, k),
        Step::Index(i) => node.as_array_mut()?.get_mut(*i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_reaches_through_maps_and_lists_and_stops_at_a_wrong_kind() {
        let mut doc = serde_json::json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let path = [Step::Key("spec".into()), Step::Key("containers".into()), Step::Index(1), Step::Key("name".into())];
        assert_eq!(value_at(&doc, &path), Some(&serde_json::json!("b")));
        *value_at_mut(&mut doc, &path).unwrap() = "c".into();
        assert_eq!(doc["spec"]["containers"][1]["name"], "c");
        assert_eq!(value_at(&doc, &[Step::Key("spec".into()), Step::Index(0)]), None, "an index into a map");
        assert_eq!(value_at(&doc, &path[..3]).and_then(|v| v.get("name")), Some(&serde_json::json!("c")));
        assert!(Step::Key("a".into()) < Step::Key("b".into()));
    }
}
