//! Provenance: for every node of a resource, where it was read from and each step that wrote it.
//!
//! Only `explain` records it: a resource's [`Provenance`] is `None` in a plain build, and nothing
//! here runs. When recording, each step of the build is bracketed by [`begin_step`] and
//! [`end_step`]: the first keeps every resource's value as it was, the second compares it with
//! the value after the step, so every write (by any transformer, through any of the resource's
//! write paths) is found without code in the transformers. What a step says about itself (its
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
/// the field's path and its history so far.
pub type Locator = dyn Fn(&Value, &[Step], &[Event]) -> Located + Sync + Send;

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
            locate: Box::new(move |root, path, history| {
                for entry in entries.iter().rev() {
                    let mut found = (entry.locate)(root, path, history);
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
        StepRecord { info: Arc::new(info), locate: Box::new(|_, _, _| Located::default()) }
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

/// The history of one node and of the nodes below it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    pub events: Vec<Event>,
    pub children: Children,
    /// The value before the step running now (between [`begin_step`] and [`end_step`]).
    pending: Option<Box<Value>>,
}

/// The nodes below a mapping (in the value's key order) or a sequence.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Children {
    #[default]
    None,
    Map(Vec<(String, Provenance)>),
    Seq(Vec<Provenance>),
}

impl Provenance {
    /// The node below this one at `step`.
    pub fn child(&self, step: &Step) -> Option<&Provenance> {
        match (&self.children, step) {
            (Children::Map(entries), Step::Key(k)) => entries.iter().find(|(key, _)| key == k).map(|(_, p)| p),
            (Children::Seq(items), Step::Index(i)) => items.get(*i),
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
            _ => Children::None,
        };
        Provenance { events: vec![Event::Loaded(Source { file: file.clone(), at })], children, pending: None }
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
            _ => Children::None,
        };
        let after = scalar(value);
        let located = (step.locate)(root, path, &[]);
        let write = Write { step: step.info.clone(), located, before: None, after };
        Provenance { events: vec![Event::Written(Box::new(write))], children, pending: None }
    }

    /// The history after a step changed `old` into `new` (this history being `old`'s).
    fn update(mut self, old: &Value, new: &Value, path: &mut Vec<Step>, root: &Value, step: &StepRecord) -> Provenance {
        if same(old, new) {
            return self;
        }
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => {
                let mut previous: HashMap<String, Provenance> = match std::mem::take(&mut self.children) {
                    Children::Map(entries) => entries.into_iter().collect(),
                    _ => HashMap::new(),
                };
                let entries = b
                    .iter()
                    .map(|(k, v)| {
                        path.push(Step::Key(k.clone()));
                        let child = match a.get(k) {
                            Some(was) => previous.remove(k).unwrap_or_default().update(was, v, path, root, step),
                            None => Provenance::created(v, path, root, step),
                        };
                        path.pop();
                        (k.clone(), child)
                    })
                    .collect();
                self.children = Children::Map(entries);
                self
            }
            (Value::Array(a), Value::Array(b)) => {
                let mut previous: Vec<Option<Provenance>> = match std::mem::take(&mut self.children) {
                    Children::Seq(items) => items.into_iter().map(Some).collect(),
                    _ => Vec::new(),
                };
                let by_name = named_items(a).zip(named_items(b));
                let items = b
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let matched = match &by_name {
                            Some((names_a, names_b)) => names_a.iter().position(|n| *n == names_b[i]),
                            None => (i < a.len()).then_some(i),
                        };
                        path.push(Step::Index(i));
                        let child = match matched {
                            Some(j) => previous.get_mut(j).and_then(Option::take).unwrap_or_default().update(&a[j], v, path, root, step),
                            None => Provenance::created(v, path, root, step),
                        };
                        path.pop();
                        child
                    })
                    .collect();
                self.children = Children::Seq(items);
                self
            }
            _ => {
                let mut fresh = Provenance::created(new, path, root, step);
                let located = (step.locate)(root, path, &self.events);
                if let Some(Event::Written(w)) = fresh.events.first_mut() {
                    w.before = Some(old.clone());
                    w.located = located;
                }
                self.events.append(&mut fresh.events);
                fresh.events = self.events;
                fresh
            }
        }
    }
}

/// `a == b`, walking maps in their key order first: after a step most resources are unchanged,
/// entry for entry, and comparing them so costs no key lookups.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && (x.iter().zip(y).all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2)) || x == y)
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v1, v2)| same(v1, v2)),
        _ => a == b,
    }
}

/// The `name` of every item of a list whose items are all maps with distinct string names.
fn named_items(items: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = items.iter().map(|item| item.get("name")?.as_str()).collect::<Option<_>>()?;
    let mut distinct = names.clone();
    distinct.sort_unstable();
    distinct.dedup();
    (distinct.len() == names.len()).then_some(names)
}

fn scalar(value: &Value) -> Option<Value> {
    (!value.is_object() && !value.is_array()).then(|| value.clone())
}

/// Before a step: every resource keeps its value, to compare with after the step.
pub fn begin_step(resources: &mut ResMap) {
    let _ = resources.try_for_each_mut_parallel(|r| {
        if let Some(p) = r.provenance.as_mut() {
            p.pending = Some(Box::new(r.value.clone()));
        }
        Ok::<(), std::convert::Infallible>(())
    });
}

/// After a step: the writes it made are added to each resource's history; a resource without
/// history is one the step made.
pub fn end_step(resources: &mut ResMap, step: &StepRecord) {
    let _ = resources.try_for_each_mut_parallel(|r| {
        record(r, step);
        Ok::<(), std::convert::Infallible>(())
    });
}

fn record(r: &mut Resource, step: &StepRecord) {
    let mut path = Vec::new();
    match r.provenance.take() {
        Some(mut p) => match p.pending.take() {
            Some(before) => r.provenance = Some(Box::new(p.update(&before, &r.value, &mut path, &r.value, step))),
            // Came in during the step with its history (absorbed from a sub-build).
            None => r.provenance = Some(p),
        },
        None => r.provenance = Some(Box::new(Provenance::created(&r.value, &mut path, &r.value, step))),
    }
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
        begin_step(&mut map);
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
