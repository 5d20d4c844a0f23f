//! A YAML document as go-yaml v3 holds it in kyaml's node tree: each scalar keeps its text as
//! written (`1.50`, `0x1F`, `~`, nothing at all), its tag and its style (plain, quoted, literal,
//! folded), each collection whether it was written in flow style, mapping keys are nodes of their
//! own, and the common comments stay with their node (a `# ...` block right above a mapping key
//! or sequence item, a `# ...` after a value on its line). [`super::node_emit`] writes it back.
//!
//! Not modelled, so [`parse_first_document`] gives `None` and the caller does without: anchors,
//! aliases, explicit tags, merge keys, keys that are collections, repeated keys. Comments go
//! unnoticed inside flow collections, after block scalars' headers, below a collection's last
//! entry (go-yaml's foot comments) and above an entry when a blank line separates them.
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::Value;

use super::comments::CommentScan;
use super::empty_nulls::{Quote, QuotedScalars};
use super::scalar::{decode_plain, resolve_untagged, ScalarTag};
use super::node_path::Step;

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// The value as go-yaml reads it (quotes and escapes undone), not retyped.
    pub text: String,
    /// `ScalarTag::None` for a node made without one (kyaml's created fields).
    pub tag: ScalarTag,
    /// The tag was written (`!!int 1`): go-yaml then always writes it again.
    pub explicit_tag: bool,
    pub style: Style,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    Scalar(Scalar),
    Mapping(Vec<Entry>),
    Sequence(Vec<Node>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub content: Content,
    /// A collection written in flow style (`[a, b]`, `{a: 1}`).
    pub flow: bool,
    /// Comment lines above the node (a mapping key or a sequence item), `""` for a blank line.
    pub head_comment: Vec<String>,
    /// The comment after the node on its line (a mapping value's: after the value, or after
    /// the key's `:` when the value is a block collection below).
    pub line_comment: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    fn new(content: Content) -> Node {
        Node { content, flow: false, head_comment: Vec::new(), line_comment: None }
    }

    pub fn scalar(text: String, tag: ScalarTag, style: Style) -> Node {
        Node::new(Content::Scalar(Scalar { text, tag, explicit_tag: false, style }))
    }

    /// A node for a value kyaml holds as plain nodes: block collections, strings quoted only as
    /// `quoted` says (the places of quoted scalars below, when known), other scalars plain.
    pub fn from_value(value: &Value, quoted: Option<&QuotedScalars>) -> Node {
        let tagged = |text: String, tag| Node::scalar(text, tag, Style::Plain);
        match value {
            Value::Null => tagged("null".into(), ScalarTag::Null),
            Value::Bool(b) => tagged(b.to_string(), ScalarTag::Bool),
            Value::Number(n) => {
                let tag = if n.is_f64() { ScalarTag::Float } else { ScalarTag::Int };
                tagged(super::go_number_json(n), tag)
            }
            Value::String(s) => {
                let style = match quoted.and_then(QuotedScalars::mark) {
                    Some(Quote::Single) => Style::SingleQuoted,
                    Some(Quote::Double) => Style::DoubleQuoted,
                    None => Style::Plain,
                };
                Node::scalar(s.clone(), ScalarTag::Str, style)
            }
            Value::Array(items) => Node::new(Content::Sequence(
                items.iter().enumerate().map(|(i, v)| Node::from_value(v, quoted.and_then(|q| q.item(i)))).collect(),
            )),
            Value::Object(map) => Node::new(Content::Mapping(
                map.iter()
                    .map(|(k, v)| Entry {
                        key: Node::scalar(k.clone(), ScalarTag::Str, Style::Plain),
                        value: Node::from_value(v, quoted.and_then(|q| q.field(k))),
                    })
                    .collect(),
            )),
        }
    }

    /// A node kyaml creates for a missing part of a path: no tag, block style.
    fn created(value: &Value) -> Node {
        match value {
            Value::Array(items) => Node::new(Content::Sequence(items.iter().map(Node::created).collect())),
            Value::Object(map) => Node::new(Content::Mapping(
                map.iter()
                    .map(|(k, v)| Entry { key: Node::scalar(k.clone(), ScalarTag::None, Style::Plain), value: Node::created(v) })
                    .collect(),
            )),
            Value::String(s) => Node::scalar(s.clone(), ScalarTag::None, Style::Plain),
            Value::Null => Node::scalar(String::new(), ScalarTag::None, Style::Plain),
            other => Node::scalar(other.to_string(), ScalarTag::None, Style::Plain),
        }
    }

    /// The node one step down, if there.
    fn child_mut(&mut self, step: &Step) -> Option<&mut Node> {
        match (&mut self.content, step) {
            (Content::Mapping(entries), Step::Key(k)) => entries.iter_mut().find(|e| e.key.text() == Some(k)).map(|e| &mut e.value),
            (Content::Sequence(items), Step::Index(i)) => items.get_mut(*i),
            _ => None,
        }
    }

    /// The node at `path`, creating what is missing as the matcher created it in `value` (the
    /// same document as values): a missing key is appended, a missing item pushed.
    pub fn at_path_creating(&mut self, path: &[Step], value: &Value) -> Option<&mut Node> {
        let Some((step, rest)) = path.split_first() else { return Some(self) };
        let sub = match (value, step) {
            (Value::Object(m), Step::Key(k)) => m.get(k)?,
            (Value::Array(items), Step::Index(i)) => items.get(*i)?,
            _ => return None,
        };
        if self.child_mut(step).is_none() {
            match (&mut self.content, step) {
                (Content::Mapping(entries), Step::Key(k)) => entries.push(Entry {
                    key: Node::scalar(k.clone(), ScalarTag::None, Style::Plain),
                    value: Node::created(sub),
                }),
                (Content::Sequence(items), Step::Index(i)) if *i == items.len() => items.push(Node::created(sub)),
                _ => return None,
            }
        }
        self.child_mut(step)?.at_path_creating(rest, sub)
    }

    /// The node as a value, for matching paths in it: typed by its tag, or a string where its
    /// text does not read as its tag (go-yaml only decodes it when asked to, kyaml never asks).
    pub fn to_value(&self) -> Value {
        match &self.content {
            Content::Scalar(s) if s.explicit_tag && s.tag == ScalarTag::Str => Value::String(s.text.clone()),
            Content::Scalar(s) => match (s.style, s.tag) {
                (_, ScalarTag::None) => resolve_untagged(&s.text).1,
                (Style::Plain, tag) => decode_plain(tag, &s.text).unwrap_or_else(|_| Value::String(s.text.clone())),
                _ => Value::String(s.text.clone()),
            },
            Content::Sequence(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Content::Mapping(entries) => Value::Object(
                entries.iter().filter_map(|e| Some((e.key.text()?.clone(), e.value.to_value()))).collect(),
            ),
        }
    }

    pub fn text(&self) -> Option<&String> {
        match &self.content {
            Content::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// An empty collection, which go-yaml writes in flow style (`[]`, `{}`) whatever its style.
    pub fn is_empty_collection(&self) -> bool {
        match &self.content {
            Content::Mapping(e) => e.is_empty(),
            Content::Sequence(i) => i.is_empty(),
            Content::Scalar(_) => false,
        }
    }
}

/// An open collection while the events are read.
struct Open {
    node: Node,
    /// A mapping's key, read and waiting for its value.
    key: Option<Node>,
}

/// The first document of `text` as a node tree; `None` when there is none or it holds what the
/// tree does not model (see the module's comment), or saphyr refuses the text.
pub fn parse_first_document(text: &str) -> Option<Node> {
    let scan = CommentScan::new(text);
    let mut open: Vec<Open> = Vec::new();
    // The last line of what came before the next node, so that comment lines are looked for
    // below it only (a `#` line inside a block scalar is text).
    let mut last_line = 0usize;
    let mut seen_node = false;
    let mut flow_depth = 0usize;
    for item in Parser::new_from_str(text) {
        let (event, span) = item.ok()?;
        let node = match event {
            Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => continue,
            Event::DocumentEnd | Event::StreamEnd => return None,
            Event::Alias(_) => return None,
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 {
                    return None;
                }
                let explicit = match tag.as_deref() {
                    None => None,
                    Some(t) => match ScalarTag::of(Some(t)) {
                        ScalarTag::None | ScalarTag::Other | ScalarTag::Merge => return None,
                        known => Some(known),
                    },
                };
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let tag = match explicit {
                    Some(tag) => tag,
                    None if style == Style::Plain => resolve_untagged(&value).0,
                    None => ScalarTag::Str,
                };
                if tag == ScalarTag::Merge || (style == Style::Plain && value == "<<") {
                    return None;
                }
                // A block scalar's span starts at its text and runs on over what follows it.
                let end_line = if matches!(style, Style::Literal | Style::Folded) {
                    span.start.line() + value.trim_end_matches('\n').matches('\n').count()
                } else {
                    span.end.line()
                };
                let mut node = Node::scalar(value.into_owned(), tag, style);
                if let Content::Scalar(s) = &mut node.content {
                    s.explicit_tag = explicit.is_some();
                }
                let is_key = matches!(open.last(), Some(Open { node: Node { content: Content::Mapping(_), .. }, key: None }));
                if flow_depth == 0 {
                    node.head_comment = head_comment(&scan, &open, &span, last_line, seen_node, is_key);
                    // saphyr's span of a quoted scalar runs on to the end of its line.
                    let start = scan.byte_of(span.start.index());
                    let end = match style {
                        Style::SingleQuoted | Style::DoubleQuoted => text.get(start..).and_then(quoted_len).map_or(text.len(), |n| start + n),
                        _ => scan.byte_of(span.end.index()),
                    };
                    if is_key {
                        node.line_comment = scan.comment_after_colon(end);
                    } else if !matches!(style, Style::Literal | Style::Folded) {
                        node.line_comment = scan.line_comment_after(end);
                    }
                }
                seen_node = true;
                last_line = last_line.max(end_line);
                node
            }
            Event::MappingStart(anchor, ref tag) | Event::SequenceStart(anchor, ref tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                let mapping = matches!(event, Event::MappingStart(..));
                let first = text.get(scan.byte_of(span.start.index())..).and_then(|t| t.chars().next());
                let flow = first == Some(if mapping { '{' } else { '[' });
                let mut node = Node::new(if mapping { Content::Mapping(Vec::new()) } else { Content::Sequence(Vec::new()) });
                node.flow = flow;
                if flow && flow_depth == 0 {
                    node.head_comment = head_comment(&scan, &open, &span, last_line, seen_node, false);
                }
                if flow {
                    flow_depth += 1;
                }
                seen_node = seen_node || flow;
                // As deep as the values may go (the writer recurses, on the build's large stacks).
                if open.len() >= super::parse::MAX_DEPTH {
                    return None;
                }
                open.push(Open { node, key: None });
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let mut done = open.pop()?;
                if done.key.is_some() {
                    return None;
                }
                if done.node.flow {
                    flow_depth = flow_depth.saturating_sub(1);
                    // The span starts at the closing bracket and runs on to the end of its line.
                    last_line = last_line.max(span.start.line());
                    if flow_depth == 0 {
                        done.node.line_comment = scan.line_comment_after(scan.byte_of(span.start.index() + 1));
                    }
                }
                done.node
            }
        };
        // Place the finished node in its parent.
        let Some(parent) = open.last_mut() else { return Some(node) };
        match (&mut parent.node.content, parent.key.take()) {
            (Content::Sequence(items), _) => {
                let mut node = node;
                // `- a: 1` starts the item and its first key on one line: the comment above is
                // the item's.
                if let Content::Mapping(entries) = &mut node.content {
                    if let Some(first) = entries.first_mut().filter(|_| !node.flow) {
                        node.head_comment = std::mem::take(&mut first.key.head_comment);
                    }
                }
                items.push(node)
            }
            (Content::Mapping(_), None) => {
                let Content::Scalar(_) = node.content else { return None };
                parent.key = Some(node);
            }
            (Content::Mapping(entries), Some(mut key)) => {
                if entries.iter().any(|e| e.key.text() == key.text()) {
                    return None;
                }
                let mut value = node;
                // A comment after the key's `:` belongs to a value written on the lines below.
                if value.line_comment.is_none() && !value.flow && matches!(value.content, Content::Mapping(_) | Content::Sequence(_)) {
                    value.line_comment = key.line_comment.take();
                }
                key.line_comment = None;
                entries.push(Entry { key, value });
            }
            (Content::Scalar(_), _) => return None,
        }
    }
    None
}

/// The length in bytes of the quoted scalar `text` starts with, closing quote included.
fn quoted_len(text: &str) -> Option<usize> {
    let quote = text.chars().next().filter(|&c| c == '"' || c == '\'')?;
    let b = text.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == '"' => i += 2,
            b'\'' if quote == '\'' && b.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote as u8 => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The head comment of a node starting at `span`: a block mapping's key or a block sequence's
/// item (a mapping or sequence that is an item takes it; a first key inside it then has none).
fn head_comment(scan: &CommentScan, open: &[Open], span: &Span, last_line: usize, seen_node: bool, is_key: bool) -> Vec<String> {
    let is_item = matches!(open.last(), Some(Open { node: Node { content: Content::Sequence(_), .. }, .. }));
    if !is_key && !is_item && seen_node {
        return Vec::new();
    }
    scan.head_comment(span.start.line(), last_line, !seen_node)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(node: &Node) -> &[Entry] {
        match &node.content {
            Content::Mapping(e) => e,
            _ => panic!("not a mapping"),
        }
    }

    #[test]
    fn scalars_keep_their_text_tag_and_style() {
        let doc = parse_first_document("a: 1.50\nb: ~\nc:\n'd': \"x\"\ne: |\n  t\n").unwrap();
        let e = entries(&doc);
        assert_eq!(e[0].value, Node::scalar("1.50".into(), ScalarTag::Float, Style::Plain));
        assert_eq!(e[1].value, Node::scalar("~".into(), ScalarTag::Null, Style::Plain));
        assert_eq!(e[2].value, Node::scalar(String::new(), ScalarTag::Null, Style::Plain));
        assert_eq!(e[3].key, Node::scalar("d".into(), ScalarTag::Str, Style::SingleQuoted));
        assert_eq!(e[3].value, Node::scalar("x".into(), ScalarTag::Str, Style::DoubleQuoted));
        assert_eq!(e[4].value, Node::scalar("t\n".into(), ScalarTag::Str, Style::Literal));
    }

    #[test]
    fn flow_collections_are_noted() {
        let doc = parse_first_document("a: [x, {y: 1}]\nb:\n- z\n").unwrap();
        let e = entries(&doc);
        assert!(e[0].value.flow);
        let Content::Sequence(items) = &e[0].value.content else { panic!() };
        assert!(items[1].flow);
        assert!(!e[1].value.flow);
    }

    #[test]
    fn comments_stay_with_their_node() {
        let doc = parse_first_document("# top\n\n# a\na: 1 # one\nb: |\n  # text\nc: # three\n  d: 2\n").unwrap();
        let e = entries(&doc);
        assert_eq!(e[0].key.head_comment, vec!["# top", "", "# a"]);
        assert_eq!(e[0].value.line_comment.as_deref(), Some("# one"));
        assert!(e[2].key.head_comment.is_empty());
        assert_eq!(e[2].value.line_comment.as_deref(), Some("# three"));
    }

    #[test]
    fn what_the_tree_does_not_model_gives_none() {
        for text in ["a: &x 1\nb: *x\n", "a: !x 1\n", "a: !!map {}\n", "<<: {a: 1}\n", "a: 1\na: 2\n", "[a]: 1\n", "a: [\n"] {
            assert_eq!(parse_first_document(text), None, "{text}");
        }
    }

    #[test]
    fn missing_parts_are_created_as_the_values_say() {
        let mut doc = parse_first_document("a: {b: 1}\n").unwrap();
        let value = serde_json::json!({"a": {"b": 1, "c": {"d": null}}});
        let path = [Step::Key("a".into()), Step::Key("c".into()), Step::Key("d".into())];
        let node = doc.at_path_creating(&path, &value).unwrap();
        assert_eq!(*node, Node::scalar(String::new(), ScalarTag::None, Style::Plain));
        assert_eq!(entries(&entries(&doc)[0].value).len(), 2);
    }
}
