//! Printing provenance: the build's output with a comment after each field (the build's bytes
//! once the comments are stripped), one field's whole history, or JSON for tools.
//!
//! Field paths are written as `diff` writes them: `spec.template.spec.containers[name=app].image`,
//! a key holding a dot in brackets (`metadata.labels[app.kubernetes.io/name]`), an item of a
//! list without distinct names by position (`args[0]`).
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::transform::path::{child_path, item_names};
use crate::resource::nodes::{value_at, NodePath, Step};
use crate::resource::provenance::{Children, Event, Origin, Provenance, Write};
use crate::resource::Resource;

/// What a comment says about one event: `file:line:column`, then for a write the step.
pub fn describe(event: &Event) -> String {
    let source = event.source();
    match event {
        Event::Loaded(_) => source.to_string(),
        Event::Written(w) => {
            let (step, located) = (&w.step, &w.located);
            let name = located.name.as_deref().unwrap_or(&step.name);
            let name = match &step.origin {
                Origin::Helm { chart, template } => format!("{name} (chart {chart}, template {template})"),
                Origin::Function { name: function } => format!("{name} (function {function})"),
                Origin::Entry | Origin::Remote { .. } => name.to_string(),
            };
            match located.detail.as_deref().or(step.detail.as_deref()) {
                Some(detail) if detail.starts_with("from ") || detail.starts_with("to ") => format!("{source} {name} {detail}"),
                Some(detail) => format!("{source} {name} ({detail})"),
                None => format!("{source} {name}"),
            }
        }
    }
}

/// One resource's YAML, as the build prints it, with `  # ...` after each line that holds a
/// field: a scalar's last event, or a mapping or list a step created.
pub fn annotated(resource: &Resource) -> String {
    let Some(prov) = resource.provenance.as_deref() else { return crate::yaml::emit::emit_stream([&resource.value]) };
    let mut yaml = String::new();
    let mut commenter = Commenter { stack: Vec::new(), next: Some(prov), key_line: None, comments: BTreeMap::new() };
    crate::yaml::emit::emit_observed(&resource.value, &mut yaml, &mut commenter);
    let comments = commenter.comments;
    let mut out = String::with_capacity(yaml.len() * 2);
    for (i, line) in yaml.lines().enumerate() {
        out.push_str(line);
        if let Some((_, comment)) = comments.get(&(i as u32 + 1)) {
            out.push_str("  # ");
            out.push_str(comment);
        }
        out.push('\n');
    }
    out
}

/// Follows the emitter through a resource and its history side by side, noting a comment by
/// line: a scalar's (`true`) wins over a collection's on the same line.
struct Commenter<'p> {
    /// The history of each open mapping or sequence (`None` below a node without history).
    stack: Vec<Option<&'p Provenance>>,
    /// The history of the node the emitter writes next, and the line of its key.
    next: Option<&'p Provenance>,
    key_line: Option<u32>,
    comments: BTreeMap<u32, (bool, String)>,
}

impl<'p> Commenter<'p> {
    /// The next node's history, where it has events.
    fn take_next(&mut self) -> Option<(&'p Provenance, &'p Event)> {
        let prov = self.next.take()?;
        Some((prov, prov.events.last()?))
    }

    fn begin(&mut self, line: u32) {
        let key_line = self.key_line.take();
        let Some((prov, last)) = self.take_next() else { return self.stack.push(None) };
        if matches!(last, Event::Written(_)) {
            self.comments.entry(key_line.unwrap_or(line)).or_insert((false, describe(last)));
        }
        self.stack.push(Some(prov));
    }
}

impl crate::yaml::emit::Observer for Commenter<'_> {
    fn begin_map(&mut self, line: u32) {
        self.begin(line);
    }

    fn begin_seq(&mut self, line: u32) {
        self.begin(line);
    }

    fn key(&mut self, key: &str, line: u32) {
        self.next = self.stack.last().copied().flatten().and_then(|p| p.child_by_key(key));
        self.key_line = Some(line);
    }

    fn item(&mut self, index: usize) {
        self.next = self.stack.last().copied().flatten().and_then(|p| p.child(&Step::Index(index)));
        self.key_line = None;
    }

    fn scalar(&mut self, line: u32, end_line: u32, block: bool) {
        self.key_line = None;
        // A comment may follow a one-line scalar or a block scalar's header, not a quoted or
        // plain scalar that goes on over several lines.
        if let Some((_, last)) = self.take_next() {
            if block || end_line == line {
                self.comments.insert(line, (true, describe(last)));
            }
        }
    }

    fn end(&mut self) {
        self.stack.pop();
    }
}

/// The node a field path names in `value` (see the module documentation), or `None`.
pub fn resolve_path(value: &Value, path: &str) -> Option<NodePath> {
    let mut steps = Vec::new();
    let mut node = value;
    let mut rest = path.trim();
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        let (part, bracketed, after) = match rest.strip_prefix('[') {
            Some(inner) => {
                let end = inner.find(']')?;
                (&inner[..end], true, &inner[end + 1..])
            }
            None => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                (&rest[..end], false, &rest[end..])
            }
        };
        let step = match node {
            Value::Array(items) => match part.split_once('=') {
                Some((key, want)) if bracketed => {
                    Step::Index(items.iter().position(|item| item.get(key).and_then(Value::as_str) == Some(want) || item.get(key).is_some_and(|v| v.to_string() == want))?)
                }
                _ => Step::Index(part.parse().ok()?),
            },
            Value::Object(_) => Step::Key(part.to_string()),
            _ => return None,
        };
        node = value_at(node, std::slice::from_ref(&step))?;
        steps.push(step);
        rest = after;
    }
    Some(steps)
}

/// A node path written as a field path (the inverse of [`resolve_path`]).
pub fn path_text(value: &Value, path: &[Step]) -> String {
    let mut out = String::new();
    let mut node = value;
    for step in path {
        match step {
            Step::Key(k) => out = child_path(&out, k),
            Step::Index(i) => {
                let items = node.as_array().map(Vec::as_slice).unwrap_or_default();
                match item_names(items) {
                    Some(names) => out = format!("{out}[name={}]", names[*i]),
                    None => out = format!("{out}[{i}]"),
                }
            }
        }
        node = value_at(node, std::slice::from_ref(step)).unwrap_or(&Value::Null);
    }
    out
}

/// One resource named as `--resource` takes it: `Kind/name` or `Kind/name.namespace`.
pub fn matches_resource(resource: &Resource, wanted: &str) -> bool {
    let Some((kind, name)) = wanted.split_once('/') else { return false };
    if !resource.kind().eq_ignore_ascii_case(kind) {
        return false;
    }
    if resource.name() == name {
        return true;
    }
    name.rsplit_once('.').is_some_and(|(n, ns)| resource.name() == n && resource.namespace() == ns)
}

/// A resource's id as `diff` prints it: `Kind/namespace/name`, or `Kind/name`.
pub fn resource_label(resource: &Resource) -> String {
    match resource.namespace() {
        "" => format!("{}/{}", resource.kind(), resource.name()),
        ns => format!("{}/{ns}/{}", resource.kind(), resource.name()),
    }
}

/// The history of the node at `path`, earliest first.
pub fn history<'r>(resource: &'r Resource, path: &[Step]) -> &'r [Event] {
    resource.provenance.as_deref().and_then(|p| p.at(path)).map_or(&[], |p| p.events.as_slice())
}

/// `--field`: each event of one field, earliest first, with the value before and after a write.
pub fn field_history_text(resource: &Resource, path: &[Step]) -> String {
    let mut out = format!("{} {}\n", resource_label(resource), path_text(&resource.value, path));
    for event in history(resource, path) {
        match event {
            Event::Loaded(_) => out.push_str(&format!("  loaded  {}\n", describe(event))),
            Event::Written(w) => {
                let text = |v: &Option<Value>| v.as_ref().map_or("(none)".to_string(), Value::to_string);
                out.push_str(&format!("  written {}: {} -> {}\n", describe(event), text(&w.before), text(&w.after)));
            }
        }
    }
    out
}

/// One event as JSON (the schema is in the README): `event`, `file`, `line`, `column`, and
/// for a write `step`, `detail`, `rule`, `before`, `after`.
pub fn event_json(event: &Event) -> Value {
    let source = event.source();
    let mut out = json!({"file": &*source.file, "line": source.at.line, "column": source.at.column});
    let map = out.as_object_mut().expect("an object");
    match event {
        Event::Loaded(_) => {
            map.insert("event".into(), json!("loaded"));
        }
        Event::Written(w) => {
            let Write { step, located, before, after } = &**w;
            map.insert("event".into(), json!("written"));
            map.insert("step".into(), json!(located.name.as_deref().unwrap_or(&step.name)));
            map.insert("detail".into(), json!(located.detail.as_deref().or(step.detail.as_deref())));
            map.insert("rule".into(), json!(step.rule.to_string()));
            map.insert("before".into(), before.clone().unwrap_or(Value::Null));
            map.insert("after".into(), after.clone().unwrap_or(Value::Null));
        }
    }
    out
}

/// A resource as JSON: its id and, for every field (scalars and empty collections), its events.
pub fn resource_json(resource: &Resource, only: Option<&[Step]>) -> Value {
    let mut fields = Map::new();
    if let Some(prov) = resource.provenance.as_deref() {
        match only {
            Some(path) => {
                let events = prov.at(path).map_or(Vec::new(), |p| p.events.iter().map(event_json).collect());
                fields.insert(path_text(&resource.value, path), Value::Array(events));
            }
            None => leaves_json(&resource.value, prov, &mut Vec::new(), &resource.value, &mut fields),
        }
    }
    json!({"resource": resource_label(resource), "apiVersion": resource.api_version(), "fields": fields})
}

fn leaves_json(node: &Value, prov: &Provenance, path: &mut NodePath, root: &Value, out: &mut Map<String, Value>) {
    let children: Vec<(Step, &Value)> = match node {
        Value::Object(m) => m.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (Step::Index(i), v)).collect(),
        _ => Vec::new(),
    };
    if children.is_empty() || matches!(prov.children, Children::Leaf(_)) {
        out.insert(path_text(root, path), Value::Array(prov.events.iter().map(event_json).collect()));
        return;
    }
    for (step, child) in children {
        if let Some(p) = prov.child(&step) {
            path.push(step);
            leaves_json(child, p, path, root, out);
            path.pop();
        }
    }
}
