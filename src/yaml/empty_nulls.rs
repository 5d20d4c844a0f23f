//! Where a document holds a null written as nothing at all (`key:` with no value).
//!
//! kyaml keeps a resource as YAML nodes until the output, so it still knows how a null was
//! written: its strategic merge drops fields holding such an empty null (the patch's walk sets
//! each target field again and an empty value clears it) but keeps `null` and `~`. Our
//! resources are JSON values, so the parser notes these places on the side.
use std::collections::HashMap;

/// A sparse tree of the places holding an empty null, by mapping key and sequence index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmptyNulls {
    here: bool,
    fields: HashMap<String, EmptyNulls>,
    items: HashMap<usize, EmptyNulls>,
}

/// One step of a path into a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl EmptyNulls {
    /// The tree of these paths; `None` when there are none.
    pub fn from_paths(paths: Vec<Vec<Step>>) -> Option<EmptyNulls> {
        if paths.is_empty() {
            return None;
        }
        let mut root = EmptyNulls::default();
        for path in paths {
            let mut node = &mut root;
            for step in path {
                node = match step {
                    Step::Key(key) => node.fields.entry(key).or_default(),
                    Step::Index(i) => node.items.entry(i).or_default(),
                };
            }
            node.here = true;
        }
        Some(root)
    }

    /// Whether the value at this place is an empty null.
    pub fn here(&self) -> bool {
        self.here
    }

    /// The places under the mapping key `key`.
    pub fn field(&self, key: &str) -> Option<&EmptyNulls> {
        self.fields.get(key)
    }

    /// The places under the sequence item `index`.
    pub fn item(&self, index: usize) -> Option<&EmptyNulls> {
        self.items.get(&index)
    }

    /// The places under the item `index` of the sequence at `key`, as a tree of its own.
    pub fn take_item(&mut self, key: &str, index: usize) -> Option<EmptyNulls> {
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
