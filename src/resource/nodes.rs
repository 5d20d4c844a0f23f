//! What kustomize's YAML node graph knows about a resource that a JSON value does not.
//!
//! kustomize holds a resource as a tree of `yaml.Node`s and two of its habits leak into the output:
//!
//! * **Shared nodes.** `labels`, `commonLabels` and `commonAnnotations` make ONE scalar node per
//!   key they add to a resource and link it at every field-spec path where the key was missing
//!   (`metadata/labels`, `spec/selector/matchLabels`, `spec/template/metadata/labels`...). kyaml
//!   writes an existing field in place (`RNode.SetYNode` copies the new node into the old one), so
//!   a later write to any of those paths — another `labels` entry, an outer kustomization's labels,
//!   a strategic-merge patch, a replacement, a var — shows at all of them. Keys that already
//!   existed get a copy, not the shared node. A JSON 6902 patch rebuilds the resource from JSON,
//!   which ends all sharing. Resources travel between kustomization levels as node trees, so the
//!   sharing survives levels (and name prefixes, namespaces and the like, which write elsewhere).
//! * **Untagged scalars.** A field created by a replacement is a node without a YAML tag: its text
//!   alone decides its type when the resource is printed (`11.4` is a number). Resolving `vars`
//!   types the untagged values it visits as strings, and a strategic-merge patch re-sets every
//!   field of its target, double-quoting untagged text that YAML 1.1 reads as a non-string.
//!
//! [`NodeFacts`] keeps both as paths into the resource's value. Writers call
//! [`Resource::write`](super::Resource::write) (or the narrower helpers here), which propagates a
//! write at one shared path to the others.
use serde_json::Value;

use crate::yaml::empty_nulls::QuotedScalars;

/// Paths into a resource: the YAML model's steps.
pub use crate::yaml::node_path::{value_at, value_at_mut, NodePath, Step};

/// The quoted scalars recorded at and below `path` (see [`Resource::quoted`](super::Resource::quoted)).
pub fn quoted_at<'q>(quoted: Option<&'q QuotedScalars>, path: &[Step]) -> Option<&'q QuotedScalars> {
    path.iter().try_fold(quoted?, |tree, step| match step {
        Step::Key(k) => tree.field(k),
        Step::Index(i) => tree.item(*i),
    })
}

fn is_scalar(v: &Value) -> bool {
    !v.is_object() && !v.is_array()
}

/// A scalar without a YAML tag: its text, and the value that text resolves to.
#[derive(Clone, Debug, PartialEq)]
struct Untagged {
    path: NodePath,
    text: String,
    value: Value,
}

/// Shared nodes and untagged scalars of one resource (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct NodeFacts {
    /// Each group: paths that hold one and the same scalar node.
    shared: Vec<Vec<NodePath>>,
    untagged: Vec<Untagged>,
}

/// The value of each shared group before a write, and for a write that may replace maps (see
/// [`NodeFacts::snapshot_marking_parents`]) the marks it left in them.
pub struct Snapshot {
    values: Vec<Option<Value>>,
    marks: Option<ParentMarks>,
}

/// A key no resource has: written into the map holding each shared or untagged scalar, so that
/// after a strategic-merge patch a map that was replaced (a list without merge keys, a
/// `$patch: replace`) can be told from one that was merged in place.
/// A strategic merge told of it ignores it when it tells whether it changed the resource.
pub const PARENT_MARK: &str = "\u{1}peerpods:parent-of-linked-scalar";

struct ParentMarks {
    /// For each shared path, the mark of its parent map.
    shared: Vec<Vec<Option<u64>>>,
    /// For each untagged scalar, the mark of its parent map.
    untagged: Vec<Option<u64>>,
    /// For each key read as a number or a boolean (`Resource::plain_keys`), the mark of its map.
    plain_keys: Vec<Option<u64>>,
    /// Where the marks can be after the write: each marked map's path up to its first list
    /// index (a strategic merge moves maps only within lists, reordered by their merge keys),
    /// none inside another.
    within: Vec<NodePath>,
}

/// The parts of `maps` (paths of marked maps) that a strategic merge leaves in place: each up to
/// its first list index, without those inside another.
fn fixed_parts<'p>(maps: impl Iterator<Item = &'p [Step]>) -> Vec<NodePath> {
    let mut parts: Vec<&[Step]> = maps
        .map(|path| match path.iter().position(|step| matches!(step, Step::Index(_))) {
            Some(index) => &path[..index],
            None => path,
        })
        .collect();
    parts.sort();
    parts.dedup();
    let mut outer: Vec<NodePath> = Vec::with_capacity(parts.len());
    for part in parts {
        // Sorted: a path inside another comes right after it or after others inside it.
        if !outer.last().is_some_and(|last| part.starts_with(last)) {
            outer.push(part.to_vec());
        }
    }
    outer
}

fn mark_at(root: &Value, path: &[Step]) -> Option<u64> {
    let (_, parent) = path.split_last()?;
    value_at(root, parent)?.as_object()?.get(PARENT_MARK)?.as_u64()
}

/// Removes every mark below `node`.
fn remove_marks(node: &mut Value) {
    match node {
        Value::Object(m) => {
            m.shift_remove(PARENT_MARK);
            m.values_mut().for_each(remove_marks);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_marks),
        _ => {}
    }
}

impl NodeFacts {
    /// Whether nothing is known beyond the JSON value (the common case, which costs nothing).
    pub fn is_empty(&self) -> bool {
        self.shared.is_empty() && self.untagged.is_empty()
    }

    /// Whether a shared node sits under a key `is_key` accepts (a field-spec walk that ends at
    /// other keys cannot write one).
    pub fn shares_a_key(&self, is_key: impl Fn(&str) -> bool) -> bool {
        self.shared.iter().flatten().any(|p| matches!(p.last(), Some(Step::Key(k)) if is_key(k)))
    }

    /// Records that the scalars at `paths` are one node from now on.
    pub fn link(&mut self, paths: Vec<NodePath>) {
        if paths.len() > 1 {
            self.shared.push(paths);
        }
    }

    /// The groups' values, taken before a write that [`Self::propagate`] then follows.
    pub fn snapshot(&self, root: &Value) -> Snapshot {
        Snapshot { values: self.group_values(root), marks: None }
    }

    fn group_values(&self, root: &Value) -> Vec<Option<Value>> {
        self.shared.iter().map(|group| group.iter().find_map(|p| value_at(root, p)).cloned()).collect()
    }

    /// [`Self::snapshot`] for a write that may replace whole maps: the maps holding linked
    /// scalars (and the keys at `plain_keys`) are marked, and [`Self::propagate`] unlinks the
    /// scalars (and forgets the keys) of maps that lost their mark.
    pub fn snapshot_marking_parents(&self, root: &mut Value, plain_keys: &[NodePath]) -> Snapshot {
        let values = self.group_values(root);
        let mut next_id = 0u64;
        let mut mark = |path: &NodePath| -> Option<u64> {
            let (_, parent) = path.split_last()?;
            let Value::Object(m) = value_at_mut(root, parent)? else { return None };
            if let Some(id) = m.get(PARENT_MARK).and_then(Value::as_u64) {
                return Some(id);
            }
            next_id += 1;
            m.insert(PARENT_MARK.to_string(), Value::from(next_id));
            Some(next_id)
        };
        let shared = self.shared.iter().map(|g| g.iter().map(&mut mark).collect()).collect();
        let untagged = self.untagged.iter().map(|u| mark(&u.path)).collect();
        let plain_key_marks = plain_keys.iter().map(&mut mark).collect();
        let marked = self.shared.iter().flatten().chain(self.untagged.iter().map(|u| &u.path)).chain(plain_keys);
        let within = fixed_parts(marked.filter_map(|path| Some(path.split_last()?.1)));
        Snapshot { values, marks: Some(ParentMarks { shared, untagged, plain_keys: plain_key_marks, within }) }
    }

    /// After a write: a shared path whose value changed passes it to the group's other paths
    /// (the last such path in kyaml's walking order, when several changed);
    /// paths that no longer hold a scalar (or whose map was replaced) leave their group;
    /// untagged scalars that were overwritten take the writer's tag (their value as it is now).
    pub fn propagate(&mut self, root: &mut Value, before: Snapshot) {
        self.propagate_with_keys(root, before, &mut Vec::new());
    }

    /// [`Self::propagate`], and the keys at `plain_keys` whose map was replaced are forgotten
    /// (the new map's keys are the writer's).
    pub fn propagate_with_keys(&mut self, root: &mut Value, before: Snapshot, plain_keys: &mut Vec<NodePath>) {
        if let Some(marks) = &before.marks {
            for (group, group_marks) in self.shared.iter_mut().zip(&marks.shared) {
                let mut kept = group_marks.iter();
                group.retain(|p| {
                    let was = kept.next().copied().flatten();
                    was.is_some() && mark_at(root, p) == was
                });
            }
            // Items of lists are not marked (lists are not maps): they stay while their value does.
            let mut kept = marks.untagged.iter();
            self.untagged.retain(|u| match kept.next().copied().flatten() {
                Some(was) => mark_at(root, &u.path) == Some(was),
                None => true,
            });
            let mut kept = marks.plain_keys.iter();
            plain_keys.retain(|path| match kept.next().copied().flatten() {
                Some(was) => mark_at(root, path) == Some(was),
                None => true,
            });
            // Looked for below where each marked map was, up to the list a merge may have moved it in.
            for part in &marks.within {
                if let Some(node) = value_at_mut(root, part) {
                    remove_marks(node);
                }
            }
        }
        self.forget_paths_without_scalars(root);
        for (group, old) in self.shared.iter_mut().zip(before.values) {
            // Paths written with different values: the one visited last wins, as in kustomize.
            let changed = group
                .iter()
                .filter_map(|p| value_at(root, p).filter(|v| Some(*v) != old.as_ref()).map(|v| (p, v)))
                .max_by(|a, b| a.0.cmp(b.0))
                .map(|(_, v)| v.clone());
            if let Some(new) = changed {
                for p in group.iter() {
                    if let Some(v) = value_at_mut(root, p) {
                        *v = new.clone();
                    }
                }
            }
        }
        self.forget_settled(root);
    }

    /// Shared paths that no longer hold a scalar leave their group.
    fn forget_paths_without_scalars(&mut self, root: &Value) {
        for group in &mut self.shared {
            group.retain(|p| value_at(root, p).is_some_and(is_scalar));
        }
    }

    /// Groups of one path are no longer shared; untagged scalars whose value changed took a tag.
    fn forget_settled(&mut self, root: &Value) {
        self.shared.retain(|g| g.len() > 1);
        self.untagged.retain(|u| value_at(root, &u.path) == Some(&u.value));
    }

    /// Whether a write that only sets entries named `is_written_key` in maps (making maps and
    /// lists of missing fields and nulls on the way, as a field-spec walk does) may change a
    /// shared or untagged scalar: one is such an entry, or a null the walk could replace.
    pub fn may_change_scalars_at_keys(&self, root: &Value, is_written_key: impl Fn(&str) -> bool) -> bool {
        let touched = |p: &NodePath| {
            matches!(p.last(), Some(Step::Key(k)) if is_written_key(k)) || value_at(root, p).is_some_and(Value::is_null)
        };
        self.shared.iter().flatten().any(touched) || self.untagged.iter().any(|u| touched(&u.path))
    }

    /// [`Self::propagate`] after a write that changed no shared or untagged scalar, so there is
    /// nothing to pass on: paths that no longer hold their scalar are forgotten.
    pub fn forget_overwritten(&mut self, root: &Value) {
        self.forget_paths_without_scalars(root);
        self.forget_settled(root);
    }

    /// The string map at `map_path` was written again with fresh string nodes (kyaml's
    /// `SetAnnotations`): its entries leave their groups and untagged ones become strings.
    pub fn map_rewritten(&mut self, root: &mut Value, map_path: &[Step]) {
        let is_entry = |p: &[Step]| p.len() == map_path.len() + 1 && p.starts_with(map_path);
        for group in &mut self.shared {
            group.retain(|p| !is_entry(p));
        }
        self.shared.retain(|g| g.len() > 1);
        self.type_untagged_as_strings(root, is_entry);
    }

    /// A JSON 6902 patch rebuilt the resource: nothing is shared and every scalar has the type
    /// its text resolved to.
    pub fn forget_all(&mut self) {
        self.shared.clear();
        self.untagged.clear();
    }

    /// Records an untagged scalar at `path` holding `text`, which resolved to `value`.
    pub fn mark_untagged(&mut self, path: NodePath, text: String, value: Value) {
        self.untagged.retain(|u| u.path != path);
        self.untagged.push(Untagged { path, text, value });
    }

    /// The text of the untagged scalar at `path`, if the scalar there has no tag.
    pub fn untagged_text(&self, path: &[Step]) -> Option<&str> {
        self.untagged.iter().find(|u| u.path == path).map(|u| u.text.as_str())
    }

    /// The text of `node`, a node found inside `root`, if it is an untagged scalar.
    pub fn untagged_text_of(&self, root: &Value, node: &Value) -> Option<&str> {
        self.untagged.iter().find(|u| value_at(root, &u.path).is_some_and(|v| std::ptr::eq(v, node))).map(|u| u.text.as_str())
    }

    /// Types as strings the untagged scalars whose path `covers` accepts (vars resolution, and
    /// kustomize's rewrite of `metadata.annotations` as a string map).
    pub fn type_untagged_as_strings(&mut self, root: &mut Value, covers: impl Fn(&[Step]) -> bool) {
        self.untagged.retain(|u| {
            if !covers(&u.path) {
                return true;
            }
            if let Some(v) = value_at_mut(root, &u.path) {
                *v = Value::String(u.text.clone());
            }
            false
        });
    }

    /// After a strategic-merge patch, which re-sets every field: untagged text that YAML 1.1
    /// reads as a non-string is double-quoted, so it becomes a string (kyaml's `FieldSetter`).
    /// Returns whether that changed a value.
    pub fn quote_untagged_non_strings(&mut self, root: &mut Value) -> bool {
        let mut changed = false;
        self.untagged.retain(|u| {
            // Items of a list of scalars are kept as they are, not set again.
            let in_list = matches!(u.path.last(), Some(Step::Index(_)));
            if in_list || u.text.contains('\n') || !crate::yaml::reads_as_non_string_in_yaml_1_1(&u.text) {
                return true;
            }
            if let Some(v) = value_at_mut(root, &u.path) {
                let quoted = Value::String(u.text.clone());
                changed |= *v != quoted;
                *v = quoted;
            }
            false
        });
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(keys: &[&str]) -> NodePath {
        keys.iter().map(|k| Step::Key(k.to_string())).collect()
    }

    #[test]
    fn a_write_at_one_shared_path_reaches_the_others_and_a_removed_path_leaves() {
        let mut root = json!({"a": {"k": "1"}, "b": {"k": "1"}, "c": {"k": "1"}});
        let mut facts = NodeFacts::default();
        facts.link(vec![path(&["a", "k"]), path(&["b", "k"]), path(&["c", "k"])]);
        let before = facts.snapshot(&root);
        root["b"]["k"] = json!("2");
        root["c"].as_object_mut().unwrap().remove("k");
        facts.propagate(&mut root, before);
        assert_eq!(root, json!({"a": {"k": "2"}, "b": {"k": "2"}, "c": {}}));
        let before = facts.snapshot(&root);
        root["a"]["k"] = json!("3");
        facts.propagate(&mut root, before);
        assert_eq!(root["b"]["k"], json!("3"));
        facts.forget_all();
        assert!(facts.is_empty());
    }

    /// A write that moves marked maps within a list (a merge by key reorders it) and keeps or
    /// replaces others leaves no mark anywhere, and the scalars of a replaced map leave.
    #[test]
    fn marks_are_removed_where_a_merge_moved_their_maps_within_a_list() {
        let mut root = json!({
            "metadata": {"labels": {"k": "1"}},
            "spec": {"items": [{"name": "a", "v": "1"}, {"name": "b", "v": "1"}], "other": {"k": "1"}}
        });
        let item = |i: usize, key: &str| vec![Step::Key("spec".into()), Step::Key("items".into()), Step::Index(i), Step::Key(key.into())];
        let mut facts = NodeFacts::default();
        facts.link(vec![path(&["metadata", "labels", "k"]), item(0, "v"), item(1, "v")]);
        facts.mark_untagged(path(&["spec", "other", "k"]), "1".into(), json!("1"));
        let before = facts.snapshot_marking_parents(&mut root, &[]);
        // The merge: an item comes first and the marked ones move one place down, `other` is
        // replaced by a map of the patch.
        let items = root["spec"]["items"].as_array_mut().unwrap();
        items.insert(0, json!({"name": "c"}));
        root["spec"]["other"] = json!({"k": "2"});
        facts.propagate(&mut root, before);
        let text = root.to_string();
        assert!(!text.contains(PARENT_MARK.trim_start_matches('\u{1}')), "a mark was left: {text}");
        assert_eq!(root["spec"]["items"][2], json!({"name": "b", "v": "1"}));
        assert!(facts.untagged.is_empty(), "the untagged scalar of the replaced map stayed");
    }

    #[test]
    fn marks_are_looked_for_up_to_the_first_list_and_not_twice() {
        let key = |k: &str| Step::Key(k.into());
        let maps = [
            vec![key("spec"), key("template"), key("metadata"), key("labels")],
            vec![key("spec"), key("containers"), Step::Index(3), key("env"), Step::Index(0)],
            vec![key("spec"), key("containers"), Step::Index(1)],
            vec![key("spec"), key("template")],
            vec![key("metadata"), key("labels")],
        ];
        let parts = fixed_parts(maps.iter().map(Vec::as_slice));
        assert_eq!(parts, vec![vec![key("metadata"), key("labels")], vec![key("spec"), key("containers")], vec![key("spec"), key("template")]]);
        let root_and_below = [vec![], vec![key("a")]];
        assert_eq!(fixed_parts(root_and_below.iter().map(Vec::as_slice)), vec![Vec::<Step>::new()]);
    }

    #[test]
    fn untagged_scalars_are_quoted_only_when_yaml_1_1_reads_a_non_string() {
        let mut root = json!({"f": 1.5, "s": "plain", "b": true});
        let mut facts = NodeFacts::default();
        facts.mark_untagged(path(&["f"]), "1.5".into(), json!(1.5));
        facts.mark_untagged(path(&["s"]), "plain".into(), json!("plain"));
        facts.mark_untagged(path(&["b"]), "true".into(), json!(true));
        facts.quote_untagged_non_strings(&mut root);
        assert_eq!(root, json!({"f": "1.5", "s": "plain", "b": "true"}));
        assert_eq!(facts.untagged_text(&path(&["s"])), Some("plain"));
        assert_eq!(facts.untagged_text(&path(&["f"])), None);
    }
}
