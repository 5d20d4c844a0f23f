//! The field paths at which two values of one resource differ, written as kustomize's field
//! paths are (`spec.template.spec.containers[name=adaptor].image`), so a reviewer reads which
//! settings two overlays or two revisions set differently without reading the whole diff.
use serde_json::{Map, Value};

use crate::transform::path::{child_path, item_names};

/// Every path whose value differs, keys in sorted order (as printed), list items in order; a field present on one side only counts.
pub fn differing_paths(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(old, new, String::new(), &mut out);
    out
}

fn walk(old: &Value, new: &Value, path: String, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => walk_maps(a, b, &path, out),
        (Value::Array(a), Value::Array(b)) => walk_lists(a, b, path, out),
        _ if old == new => {}
        _ => out.push(path),
    }
}

fn walk_maps(a: &Map<String, Value>, b: &Map<String, Value>, path: &str, out: &mut Vec<String>) {
    // In key order, as the YAML prints them.
    let mut keys: Vec<&String> = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))).collect();
    keys.sort();
    for key in keys {
        let child = child_path(path, key);
        match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) => walk(x, y, child, out),
            _ => out.push(child),
        }
    }
}

/// Lists whose items all carry distinct `name`s (containers, volumes, env) are matched by name,
/// so an inserted item is one difference, not a shift of every item after it; other lists by
/// position, and as a whole when their lengths differ.
fn walk_lists(a: &[Value], b: &[Value], path: String, out: &mut Vec<String>) {
    if let (Some(names_a), Some(names_b)) = (item_names(a), item_names(b)) {
        let names = names_a.iter().chain(names_b.iter().filter(|n| !names_a.contains(n)));
        for name in names {
            let child = format!("{path}[name={name}]");
            let find = |items: &[Value], names: &[String]| names.iter().position(|n| n == name).map(|i| items[i].clone());
            match (find(a, &names_a), find(b, &names_b)) {
                (Some(x), Some(y)) => walk(&x, &y, child, out),
                _ => out.push(child),
            }
        }
    } else if a.len() == b.len() {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            walk(x, y, format!("{path}[{i}]"), out);
        }
    } else {
        out.push(path);
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
