//! Replacements into structured data (kustomize v5.8): a target field path that goes on past a
//! string holding a JSON or YAML document (`data.config\.json.database.host`) writes into that
//! document, which is then written back into the string.
//!
//! kustomize's rule (`setValueInStructuredData`), and so this one:
//! * the string is the first node along the path that is a scalar (followed by more path) and
//!   parses as YAML (JSON being YAML); the rest of the path is matched in its first document
//!   with the target's `create` option;
//! * a scalar found there keeps its tag and style and takes the source's text (no delimiter
//!   option; the text is not checked against the tag); a map or list found there becomes the
//!   source node;
//! * a document whose text starts with `{` or `[` is written back as Go's `encoding/json` writes
//!   it: keys sorted, `<`, `>` and `&` escaped, numbers as Go prints a float64, indented by two
//!   spaces when the text had a line break and two spaces in a row, else compact;
//! * any other document is matched and written back through its node tree
//!   ([`crate::yaml::node_tree`]), printed as kyaml prints a node ([`crate::yaml::node_emit`]):
//!   keys in their order, flow collections in flow style, each scalar's own text, tag and style,
//!   the common comments; created nodes are plain, untagged, block style (flow inside a flow
//!   collection); a map or list set from the source is the source's value in block style (kustomize
//!   keeps the source node's styles, which a resource's values do not hold);
//! * a document the tree does not model (anchors, aliases, merge keys, other tags, collection or
//!   repeated keys) is written back from its values: keys in their order, quoted scalars still
//!   quoted, the rest in block style;
//! * anything that fails on the way leaves the field to the ordinary path matcher.
use serde_json::Value;

use super::decode::FieldOptions;
use super::matching::{typed_scalar, Hit, Kind, Matcher, Source};
use crate::resource::nodes::value_at_mut;
use crate::resource::{Resource, Step};
use crate::transform::path::split_replacement_path;
use crate::yaml::empty_nulls::QuotedScalars;
use crate::yaml::go_json_text::{go_json, go_json_indented};
use crate::yaml::node_emit;
use crate::yaml::node_tree::{parse_first_document, Content, Node, Style};
use crate::yaml::parse::parse_resource_documents;
use crate::yaml::scalar::ScalarTag;

/// Writes `value` at `field_path` of `res` when the path runs into structured data: `true` when
/// written, `false` to leave the field path to the ordinary matcher.
/// With `options.delimiter` (kustomize v5.8.3), a scalar target takes the delimited text and any
/// other target is refused with `setFieldValue`'s message.
pub(super) fn write(res: &mut Resource, value: &Source, field_path: &str, create: Option<Kind>, options: Option<&FieldOptions>) -> Result<bool, String> {
    let mut refused = false;
    let written = write_delimited(res, value, field_path, create, options, &mut refused);
    if refused {
        return Err("delimiter option can only be used with scalar nodes".into());
    }
    Ok(written)
}

fn write_delimited(res: &mut Resource, value: &Source, field_path: &str, create: Option<Kind>, options: Option<&FieldOptions>, refused: &mut bool) -> bool {
    let delimiter = options.filter(|o| !o.delimiter.is_empty());
    let parts = split_replacement_path(field_path);
    if parts.len() < 2 {
        return false;
    }
    let Some((consumed, at, text, mut doc, quoted, mut tree)) = find_document(&res.value, &parts) else { return false };
    let mut matcher = Matcher::new(create);
    if matcher.filter(&mut doc, &parts[consumed..], &mut Vec::new()).is_err() || matcher.hits.is_empty() {
        return false;
    }
    if let Some(tree) = tree.as_mut() {
        if !write_nodes(tree, &doc, &matcher, value, delimiter, refused) {
            return false;
        }
    }
    for hit in matcher.hits.iter().filter(|_| tree.is_none()) {
        let Hit::Node(path) = hit else { continue };
        let fresh = matcher.fresh.contains(path);
        let Some(target) = value_at_mut(&mut doc, path) else { return false };
        let written = match (Kind::of(target), value) {
            (Kind::Scalar, _) => {
                let tag = if fresh { ScalarTag::None } else { ScalarTag::of_value(target) };
                match delimiter {
                    Some(o) => typed_scalar(tag, &super::delimited(&super::matching::scalar_text(target), o, value.text())),
                    None => typed_scalar(tag, value.text()),
                }
            }
            _ if delimiter.is_some() => {
                *refused = true;
                return false;
            }
            (_, Source::Scalar { tag, text }) => typed_scalar(*tag, text),
            (_, Source::Node(node)) => {
                if crate::budget::current().charge_copies(node, 1).is_err() {
                    return false;
                }
                Ok(node.clone())
            }
        };
        match written {
            Ok(v) => *target = v,
            Err(_) => return false,
        }
    }
    let serialized = match &tree {
        Some(tree) => node_emit::emit_document(tree).trim().to_string(),
        None => match serialize(&doc, quoted.as_ref(), &text) {
            Some(s) => s,
            None => return false,
        },
    };
    let Resource { value: root, nodes, .. } = &mut *res;
    let before = nodes.snapshot(root);
    let Some(field) = value_at_mut(root, &at) else { return false };
    *field = Value::String(serialized);
    nodes.propagate(root, before);
    true
}

/// Sets the matched nodes of `tree` as kyaml sets them (`doc`: the same document as values, with
/// the nodes the matcher created): a scalar takes the source's text and keeps its tag and style,
/// a map or list becomes the source's node. `false` when a path does not lead anywhere.
fn write_nodes(tree: &mut Node, doc: &Value, matcher: &Matcher, value: &Source, delimiter: Option<&FieldOptions>, refused: &mut bool) -> bool {
    for hit in &matcher.hits {
        let Hit::Node(path) = hit else { continue };
        let Some(target) = tree.at_path_creating(path, doc) else { return false };
        match (&mut target.content, value) {
            (Content::Scalar(s), _) => match delimiter {
                Some(o) => s.text = super::delimited(&s.text, o, value.text()),
                None => s.text = value.text().to_string(),
            },
            _ if delimiter.is_some() => {
                *refused = true;
                return false;
            }
            (_, Source::Scalar { tag, text }) => *target = Node::scalar(text.clone(), *tag, Style::Plain),
            (_, Source::Node(node)) => {
                if crate::budget::current().charge_copies(node, 1).is_err() {
                    return false;
                }
                *target = Node::from_value(node, None);
            }
        }
    }
    true
}

/// Whether the text is a JSON document (kustomize's test: its first character).
fn is_json(text: &str) -> bool {
    matches!(text.trim().chars().next(), Some('{' | '['))
}

/// What a path finds: how many parts lead to the string, its path, its text, the text's first
/// document as values, where that holds quoted scalars, and its node tree (YAML only).
type Found = (usize, Vec<Step>, String, Value, Option<QuotedScalars>, Option<Node>);

/// The first scalar along `parts` (with more path after it) whose text parses as YAML. A YAML
/// document is written back from its node tree, which keeps what the values lose.
fn find_document(root: &Value, parts: &[String]) -> Option<Found> {
    for i in 1..parts.len() {
        let Some((at, node)) = super::matching::lookup_with_path(root, &parts[..i]) else { continue };
        let text = match node {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => continue,
        };
        if !is_json(&text) {
            if let Some(tree) = parse_first_document(&text) {
                return Some((i, at, text, tree.to_value(), None, Some(tree)));
            }
        }
        if let Ok(docs) = parse_resource_documents(&text) {
            let (doc, quoted) = docs.into_iter().next().map_or((Value::Null, None), |d| (d.value, d.quoted));
            return Some((i, at, text, doc, quoted, None));
        }
    }
    None
}

/// The document as text again: JSON as Go writes it where the text was JSON, else YAML.
fn serialize(doc: &Value, quoted: Option<&QuotedScalars>, original: &str) -> Option<String> {
    original.trim().chars().next()?;
    if is_json(original) {
        let pretty = original.contains('\n') && original.contains("  ");
        Some(if pretty { go_json_indented(doc) } else { go_json(doc) })
    } else {
        Some(crate::yaml::emit::emit_node_dump(doc, quoted).trim().to_string())
    }
}

