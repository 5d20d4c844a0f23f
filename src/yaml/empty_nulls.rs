//! Where a document holds a null written as nothing at all (`key:` with no value), and
//! (see [`QuotedScalars`]) which scalars were quoted.
//!
//! kyaml keeps a resource as YAML nodes until the output, so it still knows how a null was
//! written: its strategic merge drops fields holding such an empty null (the patch's walk sets
//! each target field again and an empty value clears it) but keeps `null` and `~`. Our
//! resources are JSON values, so the parser notes these places on the side.
use crate::fast_hash::FastHashMap;

use super::node_path::Step;

/// A sparse tree of marked places in a document, by mapping key and sequence index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTree<M> {
    mark: Option<M>,
    fields: FastHashMap<String, PathTree<M>>,
    items: FastHashMap<usize, PathTree<M>>,
}

impl<M> Default for PathTree<M> {
    fn default() -> Self {
        PathTree { mark: None, fields: FastHashMap::default(), items: FastHashMap::default() }
    }
}

/// The places holding an empty null.
pub type EmptyNulls = PathTree<()>;

/// How a quoted scalar was written. kyaml keeps a scalar's style when a transformer sets its
/// value, and shows it when an error prints the node; kustomize's output does not show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quote {
    Single,
    Double,
}

/// The places holding a quoted scalar.
pub type QuotedScalars = PathTree<Quote>;

impl EmptyNulls {
    /// The tree of these paths; `None` when there are none.
    pub fn from_paths(paths: Vec<Vec<Step>>) -> Option<EmptyNulls> {
        PathTree::from_marked(paths.into_iter().map(|p| (p, ())).collect())
    }

    /// Whether the value at this place is an empty null.
    pub fn here(&self) -> bool {
        self.mark.is_some()
    }
}

impl<M> PathTree<M> {
    /// The tree of these marked paths; `None` when there are none.
    pub fn from_marked(paths: Vec<(Vec<Step>, M)>) -> Option<PathTree<M>> {
        if paths.is_empty() {
            return None;
        }
        let mut root = PathTree::default();
        for (path, mark) in paths {
            let mut node = &mut root;
            for step in path {
                node = match step {
                    Step::Key(key) => node.fields.entry(key).or_default(),
                    Step::Index(i) => node.items.entry(i).or_default(),
                };
            }
            node.mark = Some(mark);
        }
        Some(root)
    }

    /// The mark of this place, if it has one.
    pub fn mark(&self) -> Option<&M> {
        self.mark.as_ref()
    }

    /// The places under the mapping key `key`.
    pub fn field(&self, key: &str) -> Option<&PathTree<M>> {
        self.fields.get(key)
    }

    /// The places under the sequence item `index`.
    pub fn item(&self, index: usize) -> Option<&PathTree<M>> {
        self.items.get(&index)
    }

    /// The places under the item `index` of the sequence at `key`, as a tree of its own.
    pub fn take_item(&mut self, key: &str, index: usize) -> Option<PathTree<M>> {
        self.fields.get_mut(key)?.items.remove(&index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_a_tree() {
        let tree = EmptyNulls::from_paths(vec![
            vec![Step::Key("spec".into()), Step::Key("a".into())],
            vec![Step::Key("list".into()), Step::Index(1), Step::Key("b".into())],
        ])
        .unwrap();
        assert!(tree.field("spec").unwrap().field("a").unwrap().here());
        assert!(!tree.field("spec").unwrap().here());
        assert!(tree.field("list").unwrap().item(1).unwrap().field("b").unwrap().here());
        assert!(tree.field("list").unwrap().item(0).is_none());
        assert!(EmptyNulls::from_paths(Vec::new()).is_none());
    }
}
