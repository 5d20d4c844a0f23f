//! What replacements and the structured-data writer share: kyaml's node kinds and scalar text over
//! JSON values, field paths read (`PathGetter`) and matched (`PathMatcher`), and the value written.
use regex::Regex;
use serde_json::{Map, Value};

use crate::resource::Step;
use crate::transform::path::{go_atoi, is_list_position, is_list_selector, split_list_selector};
use crate::yaml::parse::parse_documents;
use crate::yaml::scalar::{decode_plain, resolve_untagged, ScalarTag};

// ---------------------------------------------------------------------------
// YAML node model over JSON values: kinds, tags and scalar text
// ---------------------------------------------------------------------------

/// kyaml's node kinds (null is a scalar).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Scalar,
    Mapping,
    Sequence,
}

impl Kind {
    pub fn of(v: &Value) -> Kind {
        match v {
            Value::Object(_) => Kind::Mapping,
            Value::Array(_) => Kind::Sequence,
            _ => Kind::Scalar,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Scalar => "ScalarNode",
            Kind::Mapping => "MappingNode",
            Kind::Sequence => "SequenceNode",
        }
    }
}

/// The text of a scalar node as kyaml holds it (`yaml.GetValue`); empty for maps and lists.
pub(crate) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        _ => String::new(),
    }
}

/// The value a scalar of tag `tag` and text `text` decodes to, or go-yaml's complaint as kustomize
/// words it when it re-reads the object.
pub(super) fn typed_scalar(tag: ScalarTag, text: &str) -> std::result::Result<Value, String> {
    decode_plain(tag, text).map_err(|e| format!("map[string]interface {{}}(nil): yaml: {e}"))
}

/// kyaml's `RNode.String` of a node, trimmed: what `[field=regex]` matches and errors show.
pub(super) fn node_string(v: &Value) -> String {
    match v {
        Value::String(s) => {
            if s.is_empty() || resolve_untagged(s).0 != ScalarTag::Str {
                format!("\"{s}\"")
            } else {
                s.clone()
            }
        }
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(_) | Value::Array(_) => {
            let mut out = String::new();
            block(v, 0, &mut out);
            out.trim_end().to_string()
        }
        other => scalar_text(other),
    }
}

/// A map or list in block style, keys in their order, lists not indented below their key, as
/// kyaml prints nodes (flow styles of the input are not known here).
pub(super) fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 || !out.ends_with("- ") {
                    out.push_str(&pad);
                }
                out.push_str(&node_string(&Value::String(k.clone())));
                out.push(':');
                match val {
                    Value::Object(c) if !c.is_empty() => {
                        out.push('\n');
                        block(val, indent + 2, out);
                    }
                    Value::Array(c) if !c.is_empty() => {
                        out.push('\n');
                        block(val, indent, out);
                    }
                    other => {
                        out.push(' ');
                        out.push_str(&node_string(other));
                        out.push('\n');
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if !out.ends_with("- ") {
                    out.push_str(&pad);
                }
                out.push_str("- ");
                match item {
                    Value::Object(c) if !c.is_empty() => block(item, indent + 2, out),
                    Value::Array(c) if !c.is_empty() => block(item, indent + 2, out),
                    other => {
                        out.push_str(&node_string(other));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&node_string(other));
            out.push('\n');
        }
    }
}

/// kyaml's `ErrorIfInvalid` message.
pub(super) fn wrong_kind(expected: Kind, node: &Value) -> String {
    format!(
        "wrong node kind: expected {} but got {}: node contents:\n{}",
        expected.name(),
        Kind::of(node).name(),
        node_string(node)
    )
}

/// The elements of a sequence (`RNode.Elements`): none for null, an error for other kinds.
pub(super) fn elements(node: &Value) -> std::result::Result<&[Value], String> {
    match node {
        Value::Null => Ok(&[]),
        Value::Array(items) => Ok(items),
        other => Err(wrong_kind(Kind::Sequence, other)),
    }
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

/// kyaml's `PathGetter` without creation (`yaml.Lookup`): the node at `parts`, if any.
pub(crate) fn lookup<'v>(node: &'v Value, parts: &[String]) -> std::result::Result<Option<&'v Value>, String> {
    let mut current = node;
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let next = if let Some(idx) = go_atoi(part) {
            if idx < 0 {
                return Err(format!("array index {idx} cannot be negative"));
            }
            elements(current)?.get(idx as usize)
        } else if part == "-" {
            elements(current)?.last()
        } else if is_list_selector(part) {
            let (name, value) = split_list_selector(part)?;
            let items = elements(current)?;
            if name.is_empty() {
                items.iter().find(|e| Kind::of(e) == Kind::Scalar && scalar_text(e) == value)
            } else {
                items.iter().find(|e| {
                    e.as_object()
                        .and_then(|m| m.get(&name))
                        .is_some_and(|f| Kind::of(f) == Kind::Scalar && scalar_text(f) == value)
                })
            }
        } else {
            match current {
                Value::Null => None,
                Value::Object(m) => m.get(part),
                other => return Err(wrong_kind(Kind::Mapping, other)),
            }
        };
        match next {
            Some(n) => current = n,
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// `yaml.Lookup` (no creation), with the path of the node found.
pub(super) fn lookup_with_path<'v>(root: &'v Value, parts: &[String]) -> Option<(Vec<Step>, &'v Value)> {
    let mut path = Vec::new();
    let mut node = root;
    for part in parts {
        let next = lookup(node, std::slice::from_ref(part)).ok()??;
        if std::ptr::eq(next, node) {
            continue;
        }
        path.push(match node {
            Value::Object(map) => Step::Key(map.iter().find(|(_, v)| std::ptr::eq(*v, next))?.0.clone()),
            Value::Array(items) => Step::Index(items.iter().position(|v| std::ptr::eq(v, next))?),
            _ => return None,
        });
        node = next;
    }
    Some((path, node))
}

/// A node found by the path matcher.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Hit {
    /// A node of the resource, at this path.
    Node(Vec<Step>),
    /// A node created under a null, which kyaml keeps out of the object: found, but not written.
    Detached,
}

/// kyaml's `PathMatcher` (with its `Create` option), over one resource.
pub(super) struct Matcher {
    /// The kind of node to create at the end of a missing path; `None` to create nothing.
    pub(super) create: Option<Kind>,
    /// Scalars created here: they have no tag yet, so their text alone decides their type.
    pub(super) fresh: Vec<Vec<Step>>,
    pub(super) hits: Vec<Hit>,
}

impl Matcher {
    pub(super) fn new(create: Option<Kind>) -> Matcher {
        Matcher { create, fresh: Vec::new(), hits: Vec::new() }
    }

    /// The kind of node to create for a missing part followed by `next`.
    pub(super) fn part_kind(&self, next: Option<&String>) -> Kind {
        match next {
            Some(n) if is_list_selector(n) || is_list_position(n) => Kind::Sequence,
            Some(n) if !n.is_empty() => Kind::Mapping,
            _ => self.create.unwrap_or(Kind::Scalar),
        }
    }

    pub(super) fn new_node(&mut self, kind: Kind, at: &[Step]) -> Value {
        match kind {
            Kind::Mapping => Value::Object(Map::new()),
            Kind::Sequence => Value::Array(Vec::new()),
            Kind::Scalar => {
                self.fresh.push(at.to_vec());
                Value::Null
            }
        }
    }

    pub(super) fn filter(&mut self, node: &mut Value, path: &[String], at: &mut Vec<Step>) -> std::result::Result<(), String> {
        let Some(part) = path.first() else {
            self.hits.push(Hit::Node(at.clone()));
            return Ok(());
        };
        if is_list_position(part) {
            self.index(node, path, at)
        } else if is_list_selector(part) {
            self.seq(node, path, at, true)
        } else if part == "*" {
            self.every(node, path, at)
        } else {
            self.field(node, path, at)
        }
    }

    pub(super) fn field(&mut self, node: &mut Value, path: &[String], at: &mut Vec<Step>) -> std::result::Result<(), String> {
        let name = &path[0];
        let map = match node {
            Value::Null => {
                if self.create.is_some() {
                    self.hits.push(Hit::Detached);
                }
                return Ok(());
            }
            Value::Object(m) if !name.is_empty() => m,
            other if name.is_empty() && Kind::of(other) == Kind::Scalar => {
                // An empty field name compares the scalar's text with nothing.
                return if scalar_text(other).is_empty() { self.filter(other, &path[1..], at) } else { Ok(()) };
            }
            other => return Err(wrong_kind(if name.is_empty() { Kind::Scalar } else { Kind::Mapping }, other)),
        };
        if !map.contains_key(name.as_str()) {
            if self.create.is_none() {
                return Ok(());
            }
            let kind = self.part_kind(path.get(1));
            at.push(Step::Key(name.clone()));
            let fresh = self.new_node(kind, at);
            at.pop();
            map.insert(name.clone(), fresh);
        }
        let child = map.get_mut(name.as_str()).unwrap();
        if path.len() > 1 && Kind::of(child) == Kind::Scalar && !child.is_null() {
            return self.into_structured_data(child, &path[1..]);
        }
        at.push(Step::Key(name.clone()));
        let result = self.filter(child, &path[1..], at);
        at.pop();
        result
    }

    /// A scalar with more path after it (v5.8): the path goes on in the YAML its text holds.
    /// What is found there is a copy kustomize writes nothing back from (writing into structured
    /// data is `structured_data::write`, tried first): found, but not written.
    pub(super) fn into_structured_data(&mut self, scalar: &Value, path: &[String]) -> std::result::Result<(), String> {
        let text = scalar_text(scalar);
        let mut doc = parse_documents(&text).map_err(|e| e.to_string())?.into_iter().next().unwrap_or(Value::Null);
        let mut inner = Matcher::new(self.create);
        inner.filter(&mut doc, path, &mut Vec::new())?;
        self.hits.extend(inner.hits.iter().map(|_| Hit::Detached));
        Ok(())
    }

    pub(super) fn index(&mut self, node: &mut Value, path: &[String], at: &mut Vec<Step>) -> std::result::Result<(), String> {
        let idx = go_atoi(&path[0]).unwrap() as usize;
        let len = elements(node)?.len();
        if node.is_null() {
            if len == idx && self.create.is_some() {
                self.hits.push(Hit::Detached);
                return Ok(());
            }
            return Err(format!("index {idx} specified but only 0 elements found"));
        }
        let items = node.as_array_mut().unwrap();
        if len == idx && self.create.is_some() {
            let kind = self.part_kind(path.get(1));
            at.push(Step::Index(idx));
            let fresh = self.new_node(kind, at);
            at.pop();
            items.push(fresh);
        }
        if items.len() < idx + 1 {
            return Err(format!("index {idx} specified but only {} elements found", items.len()));
        }
        at.push(Step::Index(idx));
        let result = self.filter(&mut items[idx], &path[1..], at);
        at.pop();
        result
    }

    pub(super) fn every(&mut self, node: &mut Value, path: &[String], at: &mut Vec<Step>) -> std::result::Result<(), String> {
        elements(node)?;
        let Value::Array(items) = node else { return Ok(()) };
        for (i, item) in items.iter_mut().enumerate() {
            at.push(Step::Index(i));
            let result = self.filter(item, &path[1..], at);
            at.pop();
            result?;
        }
        Ok(())
    }

    /// `[field=regex]` (or `[=regex]` for scalars): the elements whose field's YAML text matches.
    pub(super) fn seq(&mut self, node: &mut Value, path: &[String], at: &mut Vec<Step>, may_create: bool) -> std::result::Result<(), String> {
        let (field, pattern) = split_list_selector(&path[0])?;
        let re = Regex::new(&super::super::select::go_regexp_syntax(&pattern)).map_err(|e| format!("error parsing regexp: {e}"))?;
        elements(node)?;
        let before = self.hits.len();
        if let Value::Array(items) = node {
            for (i, item) in items.iter_mut().enumerate() {
                if field.is_empty() {
                    // A scalar match is the element itself, whatever the rest of the path says.
                    if re.is_match(&node_string(item)) {
                        at.push(Step::Index(i));
                        self.hits.push(Hit::Node(at.clone()));
                        at.pop();
                    }
                    continue;
                }
                let matched = item.as_object().and_then(|m| m.get(&field)).is_some_and(|v| re.is_match(&node_string(v)));
                if matched {
                    at.push(Step::Index(i));
                    let result = self.filter(item, &path[1..], at);
                    at.pop();
                    result?;
                }
            }
        }
        if self.hits.len() > before || self.create.is_none() || !may_create {
            return Ok(());
        }
        // Nothing matched: append an element that will, then search again.
        let Value::Array(items) = node else {
            self.hits.push(Hit::Detached);
            return Ok(());
        };
        let idx = items.len();
        let (_, value) = resolve_untagged(&pattern);
        if field.is_empty() {
            items.push(value);
            let mut fresh_at = at.clone();
            fresh_at.push(Step::Index(idx));
            self.fresh.push(fresh_at);
        } else {
            let mut m = Map::new();
            m.insert(field.clone(), value);
            items.push(Value::Object(m));
            let mut fresh_at = at.clone();
            fresh_at.extend([Step::Index(idx), Step::Key(field.clone())]);
            self.fresh.push(fresh_at);
        }
        // kustomize would search forever if its own element does not match; search once more.
        self.seq(node, path, at, false)
    }
}


/// The value a replacement writes: a scalar's tag and text, or a whole map or list.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Source {
    Scalar { tag: ScalarTag, text: String },
    Node(Value),
}

impl Source {
    pub(super) fn kind(&self) -> Kind {
        match self {
            Source::Scalar { .. } => Kind::Scalar,
            Source::Node(v) => Kind::of(v),
        }
    }

    /// `yaml.GetValue`: the scalar text, empty for maps and lists.
    pub(super) fn text(&self) -> &str {
        match self {
            Source::Scalar { text, .. } => text,
            Source::Node(_) => "",
        }
    }
}
