//! The field paths at which two values of one resource differ, written as kustomize's field
//! paths are (`spec.template.spec.containers[name=adaptor].image`), so a reviewer reads which
//! settings two overlays or two revisions set differently without reading the whole diff.
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::transform::path::{item_names, push_child};

/// Every path whose value differs, keys in sorted order (as printed), list items in order; a field present on one side only counts.
pub fn differing_paths(old: &Value, new: &Value) -> Vec<String> {
    let mut walker = Walker { way: Vec::new(), out: Vec::new() };
    walker.walk(old, new);
    walker.out
}

/// One step of the way down, written out only when a difference is found there: the cost of a
/// comparison is the size of the values, not the depth times the number of fields.
enum Part<'v> {
    Key(&'v str),
    Name(&'v str),
    Index(usize),
}

struct Walker<'v> {
    way: Vec<Part<'v>>,
    out: Vec<String>,
}

impl<'v> Walker<'v> {
    fn differs_here(&mut self) {
        use std::fmt::Write as _;
        let mut path = String::new();
        for part in &self.way {
            match part {
                Part::Key(key) => push_child(&mut path, key),
                Part::Name(name) => {
                    let _ = write!(path, "[name={name}]");
                }
                Part::Index(i) => {
                    let _ = write!(path, "[{i}]");
                }
            }
        }
        self.out.push(path);
    }

    fn below(&mut self, part: Part<'v>, old: Option<&'v Value>, new: Option<&'v Value>) {
        self.way.push(part);
        match (old, new) {
            (Some(x), Some(y)) => self.walk(x, y),
            _ => self.differs_here(),
        }
        self.way.pop();
    }

    fn walk(&mut self, old: &'v Value, new: &'v Value) {
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => self.walk_maps(a, b),
            (Value::Array(a), Value::Array(b)) => self.walk_lists(a, b),
            _ if old == new => {}
            _ => self.differs_here(),
        }
    }

    fn walk_maps(&mut self, a: &'v Map<String, Value>, b: &'v Map<String, Value>) {
        // In key order, as the YAML prints them.
        let mut keys: Vec<&'v String> = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))).collect();
        keys.sort();
        for key in keys {
            self.below(Part::Key(key), a.get(key), b.get(key));
        }
    }

    /// Lists whose items all carry distinct `name`s (containers, volumes, env) are matched by
    /// name, so an inserted item is one difference, not a shift of every item after it; other
    /// lists by position, and as a whole when their lengths differ.
    fn walk_lists(&mut self, a: &'v [Value], b: &'v [Value]) {
        if let (Some(names_a), Some(names_b)) = (item_names(a), item_names(b)) {
            let index = |items: &'v [Value], names: &[String]| -> HashMap<String, &'v Value> { names.iter().cloned().zip(items).collect() };
            let (by_name_a, by_name_b) = (index(a, &names_a), index(b, &names_b));
            let added = names_b.iter().filter(|n| !by_name_a.contains_key(*n));
            for name in names_a.iter().chain(added) {
                let (x, y) = (by_name_a.get(name).copied(), by_name_b.get(name).copied());
                let item = x.or(y).expect("a name of one side");
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                self.below(Part::Name(name), x, y);
            }
        } else if a.len() == b.len() {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                self.below(Part::Index(i), Some(x), Some(y));
            }
        } else {
            self.differs_here();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_added_and_removed_map_fields() {
        let old = json!({"data": {"A": "1", "B": "2", "C": "3"}});
        let new = json!({"data": {"A": "1", "B": "9", "D": "4"}});
        assert_eq!(differing_paths(&old, &new), ["data.B", "data.C", "data.D"]);
    }

    #[test]
    fn named_items_are_matched_by_name() {
        let old = json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]});
        let new = json!({"env": [{"name": "X", "value": "0"}, {"name": "A", "value": "1"}, {"name": "B", "value": "3"}]});
        assert_eq!(differing_paths(&old, &new), ["env[name=B].value", "env[name=X]"]);
    }

    #[test]
    fn plain_lists_by_position_or_whole() {
        assert_eq!(differing_paths(&json!({"args": ["a", "b"]}), &json!({"args": ["a", "c"]})), ["args[1]"]);
        assert_eq!(differing_paths(&json!({"args": ["a"]}), &json!({"args": ["a", "c"]})), ["args"]);
    }

    #[test]
    fn dotted_keys_are_bracketed() {
        let old = json!({"metadata": {"labels": {"app.kubernetes.io/name": "a"}}});
        let new = json!({"metadata": {"labels": {"app.kubernetes.io/name": "b"}}});
        assert_eq!(differing_paths(&old, &new), ["metadata.labels[app.kubernetes.io/name]"]);
    }
}
