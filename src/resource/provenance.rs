//! Provenance: for every node of a resource, where it was read from and each step that wrote it.
//!
//! Only `explain` records it: a resource's [`Provenance`] is `None` in a plain build, and nothing
//! here runs. When recording, each step of the build ends with [`end_step`], which compares
//! every resource with its history's tree (the value as the step before left it), so every
//! write (by any transformer, through any of the resource's write paths) is found without code
//! in the transformers. What a step says about itself (its
//! rule's file:line:column, its name) is one [`StepRecord`]; generator and transformer steps
//! that make resources of their own (helm charts, KRM functions) call [`created`].
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::nodes::Step;
use super::{ResMap, Resource};
use crate::yaml::positions::{Pos, PosNode};

/// A place in a file: the display path, line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub file: Arc<str>,
    pub at: Pos,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.at.line, self.at.column)
    }
}

/// Where a generator or transformer step's output comes from, beyond its kustomization entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Written by the kustomization entry itself (the common case).
    Entry,
    /// A chart's rendered template (`helmCharts`).
    Helm { chart: String, template: String },
    /// A KRM function or exec plugin's output.
    Function { name: String },
    /// A remote base: the URL, the ref and the path inside the repository.
    Remote { url: String, git_ref: String, path: String },
}

/// One step of the build, as it describes itself: its rule (the kustomization entry, e.g.
/// `images[0]`, at its file:line:column), a detail (`strategic merge`) and its origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepInfo {
    pub rule: Source,
    pub name: String,
    pub detail: Option<String>,
    pub origin: Origin,
}

/// What a step wrote to one field: the text that holds the value (a patch's line, a literal),
/// and a more precise name when the step has several entries (`images[1]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Located {
    pub source: Option<Source>,
    pub name: Option<String>,
    pub detail: Option<String>,
}

/// Finds, for a field a step wrote, the text behind it: given the resource after the step,
/// the field's path, its history so far and (for a field the step changed) its value before.
pub type Locator = dyn Fn(&Value, &[Step], &[Event], Option<&Value>) -> Located + Sync + Send;

/// A step as the recorder needs it.
pub struct StepRecord {
    pub info: Arc<StepInfo>,
    pub locate: Box<Locator>,
}

impl StepRecord {
    /// One step made of several entries applied together (`patchesStrategicMerge`): a write
    /// belongs to the last entry that locates it, and takes that entry's name.
    pub fn any_of(entries: Vec<StepRecord>) -> Self {
        let info = entries.first().map(|e| e.info.clone()).expect("a step of at least one entry");
        StepRecord {
            info,
            locate: Box::new(move |root, path, history, before| {
                for entry in entries.iter().rev() {
                    let mut found = (entry.locate)(root, path, history, before);
                    if found.source.is_some() {
                        found.name = found.name.or_else(|| Some(entry.info.name.clone()));
                        return found;
                    }
                }
                Located::default()
            }),
        }
    }

    /// A step whose every write is attributed to its rule.
    pub fn plain(info: StepInfo) -> Self {
        StepRecord { info: Arc::new(info), locate: Box::new(|_, _, _, _| Located::default()) }
    }
}

/// One thing that happened to a node.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Read from a file, at this position.
    Loaded(Source),
    /// Set (or created) by a step.
    Written(Box<Write>),
}

/// A step's write to one node: the step, the text behind the value, and (for a scalar) the
/// value before (`None` where the node was created) and after.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub step: Arc<StepInfo>,
    pub located: Located,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl Event {
    /// The file position that set the node: the located text, else the step's rule.
    pub fn source(&self) -> &Source {
        match self {
            Event::Loaded(source) => source,
            Event::Written(w) => w.located.source.as_ref().unwrap_or(&w.step.rule),
        }
    }
}

/// The history of one node and of the nodes below it. The tree has the shape of the value as
/// the last recorded step left it, and holds its scalars: the next step's writes are found by
/// comparing the value with the tree, with no copy of the value kept around a step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    pub events: Vec<Event>,
    pub children: Children,
}

/// The nodes below a mapping (in the value's key order) or a sequence; a scalar's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Children {
    Leaf(Scalar),
    Map(Vec<(String, Provenance)>),
    Seq(Vec<Provenance>),
}

impl Default for Children {
    fn default() -> Self {
        Children::Leaf(Scalar::Null)
    }
}

/// A scalar as the provenance tree keeps it: smaller than a [`Value`], which reserves room for
/// a mapping in every node.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(Box<str>),
}

impl Scalar {
    /// The scalar `value` holds; `None` for a mapping or a sequence.
    fn of(value: &Value) -> Option<Scalar> {
        Some(match value {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Number(n) => Scalar::Number(n.clone()),
            Value::String(s) => Scalar::String(s.as_str().into()),
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    fn holds(&self, value: &Value) -> bool {
        match (self, value) {
            (Scalar::Null, Value::Null) => true,
            (Scalar::Bool(a), Value::Bool(b)) => a == b,
            (Scalar::Number(a), Value::Number(b)) => a == b,
            (Scalar::String(a), Value::String(b)) => **a == **b,
            _ => false,
        }
    }

    fn value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::String(s) => Value::String(s.to_string()),
        }
    }
}

impl Provenance {
    /// The node below this one at `step`.
    pub fn child(&self, step: &Step) -> Option<&Provenance> {
        match (&self.children, step) {
            (Children::Map(_), Step::Key(k)) => self.child_by_key(k),
            (Children::Seq(items), Step::Index(i)) => items.get(*i),
            _ => None,
        }
    }

    /// The entry `key` of the mapping this node is.
    pub fn child_by_key(&self, key: &str) -> Option<&Provenance> {
        match &self.children {
            Children::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, p)| p),
            _ => None,
        }
    }

    /// The node at `path` below this one.
    pub fn at(&self, path: &[Step]) -> Option<&Provenance> {
        path.iter().try_fold(self, |node, step| node.child(step))
    }

    /// A node as read from `file`: each node at its position in `positions` (a node the text
    /// does not hold, such as a key brought in by a merge key, at its parent's position).
    pub fn loaded(value: &Value, positions: Option<&PosNode>, file: &Arc<str>, parent: Pos) -> Provenance {
        let at = positions.map_or(parent, PosNode::at);
        let children = match value {
            Value::Object(map) => Children::Map(
                map.iter()
                    .map(|(k, v)| {
                        let entry = positions.and_then(|p| p.entry(k));
                        let child_pos = entry.map(|(_, node)| node);
                        let here = entry.map_or(at, |(key_at, _)| key_at);
                        (k.clone(), Provenance::loaded(v, child_pos, file, here))
                    })
                    .collect(),
            ),
            Value::Array(items) => Children::Seq(
                items.iter().enumerate().map(|(i, v)| Provenance::loaded(v, positions.and_then(|p| p.item(i)), file, at)).collect(),
            ),
            scalar => Children::Leaf(Scalar::of(scalar).expect("a scalar")),
        };
        Provenance { events: vec![Event::Loaded(Source { file: file.clone(), at })], children }
    }

    /// A node created by a step, with everything below it.
    fn created(value: &Value, path: &mut Vec<Step>, root: &Value, step: &StepRecord) -> Provenance {
        let children = match value {
            Value::Object(map) => Children::Map(
                map.iter()
                    .map(|(k, v)| {
                        path.push(Step::Key(k.clone()));
                        let child = Provenance::created(v, path, root, step);
                        path.pop();
                        (k.clone(), child)
                    })
                    .collect(),
            ),
            Value::Array(items) => Children::Seq(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        path.push(Step::Index(i));
                        let child = Provenance::created(v, path, root, step);
                        path.pop();
                        child
                    })
                    .collect(),
            ),
            scalar => Children::Leaf(Scalar::of(scalar).expect("a scalar")),
        };
        let after = scalar(value);
        let located = (step.locate)(root, path, &[], None);
        let write = Write { step: step.info.clone(), located, before: None, after };
        Provenance { events: vec![Event::Written(Box::new(write))], children }
    }

    /// Whether the tree has `value`'s shape and scalars: walks maps in their key order, as
    /// after a step most resources are unchanged, entry for entry.
    fn holds(&self, value: &Value) -> bool {
        match (&self.children, value) {
            (Children::Map(entries), Value::Object(map)) => {
                if entries.len() != map.len() {
                    return false;
                }
                for ((k1, p), (k2, v)) in entries.iter().zip(map) {
                    if k1 != k2 {
                        // The keys moved: the same entries in another order still hold.
                        return entries.iter().all(|(k, p)| map.get(k).is_some_and(|v| p.holds(v)));
                    }
                    if !p.holds(v) {
                        return false;
                    }
                }
                true
            }
            (Children::Seq(items), Value::Array(values)) => items.len() == values.len() && items.iter().zip(values).all(|(p, v)| p.holds(v)),
            (Children::Leaf(s), v) => s.holds(v),
            _ => false,
        }
    }

    /// The value the tree holds.
    fn value(&self) -> Value {
        match &self.children {
            Children::Leaf(s) => s.value(),
            Children::Map(entries) => Value::Object(entries.iter().map(|(k, p)| (k.clone(), p.value())).collect()),
            Children::Seq(items) => Value::Array(items.iter().map(Provenance::value).collect()),
        }
    }

    /// The `name` this node holds, for an item of a list of named maps.
    fn item_name(&self) -> Option<&str> {
        match &self.children {
            Children::Map(entries) => match entries.iter().find(|(k, _)| k == "name").map(|(_, p)| &p.children) {
                Some(Children::Leaf(Scalar::String(name))) => Some(name),
                _ => None,
            },
            _ => None,
        }
    }

    /// The tree follows `new` without recording a write: for kustomize's own rewrites between
    /// steps (annotations set again as strings), which change a value's type, not its source.
    fn settle(&mut self, new: &Value) {
        if self.holds(new) {
            return;
        }
        match (&mut self.children, new) {
            (Children::Map(entries), Value::Object(b)) => {
                let mut previous = PreviousEntries::new(std::mem::take(entries));
                *entries = b
                    .iter()
                    .map(|(k, v)| {
                        let (key, mut child) = previous.take(k).unwrap_or_else(|| (k.clone(), Provenance::default()));
                        child.settle(v);
                        (key, child)
                    })
                    .collect();
            }
            (Children::Seq(items), Value::Array(b)) => {
                items.resize_with(b.len(), Provenance::default);
                items.iter_mut().zip(b).for_each(|(p, v)| p.settle(v));
            }
            (children, new) => {
                // Another kind of node: an empty one of the new kind, filled in below.
                *children = match new {
                    Value::Object(_) => Children::Map(Vec::new()),
                    Value::Array(_) => Children::Seq(Vec::new()),
                    scalar => Children::Leaf(Scalar::of(scalar).expect("a scalar")),
                };
                self.settle(new);
            }
        }
    }

    /// The history after a step changed the value this tree holds into `new`: only nodes that
    /// changed are visited with their path (finding a write's text needs it).
    fn update(mut self, new: &Value, path: &mut Vec<Step>, root: &Value, step: &StepRecord) -> Provenance {
        if self.holds(new) {
            return self;
        }
        match (&mut self.children, new) {
            (Children::Map(entries), Value::Object(b)) => {
                let mut previous = PreviousEntries::new(std::mem::take(entries));
                *entries = b
                    .iter()
                    .map(|(k, v)| match previous.take(k) {
                        Some((key, was)) if was.holds(v) => (key, was),
                        was => {
                            path.push(Step::Key(k.clone()));
                            let child = match was {
                                Some((_, was)) => was.update(v, path, root, step),
                                None => Provenance::created(v, path, root, step),
                            };
                            path.pop();
                            (k.clone(), child)
                        }
                    })
                    .collect();
                self
            }
            (Children::Seq(items), Value::Array(b)) => {
                // Items of lists of distinctly named maps are matched by name, others by position.
                let old_names = distinct(items.iter().map(Provenance::item_name).collect());
                let new_names = distinct(b.iter().map(|item| item.get("name")?.as_str()).collect());
                let matched: Vec<Option<usize>> = match (old_names, new_names) {
                    (Some(old), Some(new)) => {
                        let position: HashMap<&str, usize> = old.into_iter().enumerate().map(|(i, n)| (n, i)).collect();
                        new.iter().map(|n| position.get(n).copied()).collect()
                    }
                    _ => (0..b.len()).map(|i| (i < items.len()).then_some(i)).collect(),
                };
                let mut previous: Vec<Option<Provenance>> = std::mem::take(items).into_iter().map(Some).collect();
                *items = b
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let matched = matched[i];
                        path.push(Step::Index(i));
                        let child = match matched.and_then(|j| previous.get_mut(j).and_then(Option::take)) {
                            Some(was) => was.update(v, path, root, step),
                            None => Provenance::created(v, path, root, step),
                        };
                        path.pop();
                        child
                    })
                    .collect();
                self
            }
            _ => {
                let mut fresh = Provenance::created(new, path, root, step);
                let before = self.value();
                let located = (step.locate)(root, path, &self.events, Some(&before));
                if let Some(Event::Written(w)) = fresh.events.first_mut() {
                    w.before = Some(before);
                    w.located = located;
                }
                self.events.append(&mut fresh.events);
                fresh.events = self.events;
                fresh
            }
        }
    }
}

/// A mapping's entries before a step, taken by key in the order the new mapping has them: most
/// steps add a key or change values, so the next old entry is nearly always the one asked for;
/// a key found elsewhere is looked up in an index made once (a scan for small mappings).
struct PreviousEntries {
    entries: Vec<Option<(String, Provenance)>>,
    next: usize,
    index: Option<HashMap<String, usize>>,
}

impl PreviousEntries {
    fn new(entries: Vec<(String, Provenance)>) -> Self {
        PreviousEntries { entries: entries.into_iter().map(Some).collect(), next: 0, index: None }
    }

    fn take(&mut self, key: &str) -> Option<(String, Provenance)> {
        let at = match self.entries.get(self.next) {
            Some(Some((k, _))) if k == key => Some(self.next),
            _ if self.entries.len() <= 16 => self.entries.iter().position(|e| e.as_ref().is_some_and(|(k, _)| k == key)),
            _ => {
                let entries = &self.entries;
                let index = self.index.get_or_insert_with(|| {
                    entries.iter().enumerate().filter_map(|(i, e)| e.as_ref().map(|(k, _)| (k.clone(), i))).collect()
                });
                index.get(key).copied()
            }
        }?;
        self.next = at + 1;
        self.entries[at].take()
    }
}

/// The names of a list's items, where all are named and no two alike.
fn distinct(names: Option<Vec<&str>>) -> Option<Vec<&str>> {
    let names = names?;
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == names.len()).then_some(names)
}

fn scalar(value: &Value) -> Option<Value> {
    (!value.is_object() && !value.is_array()).then(|| value.clone())
}

/// After a step: the writes it made are added to each resource's history (found by comparing
/// each resource the step may have changed with its history's tree); a resource without
/// history is one the step made.
pub fn end_step(resources: &mut ResMap, step: &StepRecord) {
    resources.drain_touched(|r| record(r, step));
}

fn record(r: &mut Resource, step: &StepRecord) {
    let mut path = Vec::new();
    r.provenance = Some(Box::new(match r.provenance.take() {
        Some(p) => p.update(&r.value, &mut path, &r.value, step),
        None => Provenance::created(&r.value, &mut path, &r.value, step),
    }));
}

/// After a change no step made (kustomize's own rewrites between steps): every resource's
/// history follows its value, with no write recorded.
pub fn settle(resources: &mut ResMap) {
    resources.drain_touched(|r| {
        if let Some(p) = r.provenance.as_mut() {
            p.settle(&r.value);
        }
    });
}

/// For a generator step that makes resources itself (a helm chart, a KRM function): marks
/// `resource` as made by `step`, each field attributed by `step`'s locator.
pub fn created(resource: &mut Resource, step: &StepRecord) {
    resource.provenance = None;
    record(resource, step);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(name: &str) -> StepRecord {
        StepRecord::plain(StepInfo {
            rule: Source { file: "k.yaml".into(), at: Pos { line: 1, column: 1 } },
            name: name.into(),
            detail: None,
            origin: Origin::Entry,
        })
    }

    #[test]
    fn a_resource_made_by_a_step_has_every_field_written_by_it() {
        let mut r = Resource::new(json!({"kind": "ConfigMap", "data": {"k": "v"}}));
        let mut made = step("helmCharts[0]");
        made.info = Arc::new(StepInfo { origin: Origin::Helm { chart: "c".into(), template: "templates/cm.yaml".into() }, ..(*made.info).clone() });
        created(&mut r, &made);
        let p = r.provenance.as_deref().unwrap();
        let Event::Written(w) = &p.at(&[Step::Key("data".into()), Step::Key("k".into())]).unwrap().events[0] else { panic!() };
        assert_eq!((w.step.name.as_str(), &w.before, &w.after), ("helmCharts[0]", &None, &Some(json!("v"))));
        assert!(matches!(&w.step.origin, Origin::Helm { template, .. } if template == "templates/cm.yaml"));
    }

    #[test]
    fn a_step_adds_a_write_to_the_fields_it_changed_and_created_and_to_no_other() {
        let file: Arc<str> = "r.yaml".into();
        let value = json!({"a": "1", "b": {"c": "2"}, "l": [{"name": "x", "v": 1}]});
        let mut r = Resource::new(value.clone());
        r.provenance = Some(Box::new(Provenance::loaded(&value, None, &file, Pos { line: 1, column: 1 })));
        let mut map = ResMap::from_vec(vec![r]);
        map.get_mut(0).value = json!({"a": "9", "b": {"c": "2", "d": "3"}, "l": [{"name": "y"}, {"name": "x", "v": 1}]});
        end_step(&mut map, &step("s"));
        let p = map.get(0).provenance.as_deref().unwrap();
        let events = |path: &[Step]| p.at(path).unwrap().events.len();
        assert_eq!(events(&[Step::Key("a".into())]), 2);
        assert_eq!(events(&[Step::Key("b".into()), Step::Key("c".into())]), 1);
        assert_eq!(events(&[Step::Key("b".into()), Step::Key("d".into())]), 1);
        assert!(matches!(p.at(&[Step::Key("b".into()), Step::Key("d".into())]).unwrap().events[0], Event::Written(_)));
        // The item named x moved to position 1 and kept its history.
        let x = p.at(&[Step::Key("l".into()), Step::Index(1), Step::Key("v".into())]).unwrap();
        assert!(matches!(x.events[..], [Event::Loaded(_)]));
        let Event::Written(w) = &p.at(&[Step::Key("a".into())]).unwrap().events[1] else { panic!() };
        assert_eq!((w.before.clone(), w.after.clone()), (Some(json!("1")), Some(json!("9"))));
    }
}
