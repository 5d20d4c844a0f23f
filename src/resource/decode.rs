//! A stream of resources as a file (or a program's output) holds them: YAML or JSON documents
//! decoded into resources, `kind: *List` documents unpacked, each checked as kyaml checks it.
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::yaml::empty_nulls::{EmptyNulls, QuotedScalars};
use crate::yaml::parse::{parse_resource_documents, GoMarks, ParseError, ResourceDocument};

use super::{NodePath, Resource, Step};

pub(crate) fn parse_file(file: &Path, text: &str) -> Result<Vec<ResourceDocument>> {
    let docs = parse_resource_documents(text).map_err(|e| parse_error(file, text, e))?;
    Ok(docs.into_iter().filter(|d| !d.value.is_null()).collect())
}

/// kyaml's words for a stream that does not parse (`MalformedYAMLError: yaml: line N: ...`), and
/// after them where in the file. kyaml parses each document (the text between lines starting
/// with `---`) on its own, so go-yaml's line counts from the document's first line.
pub(crate) fn parse_error(file: &Path, text: &str, mut e: ParseError) -> Error {
    let at = format!("at {}:{}:{}", file.display(), e.line, e.column);
    if let Some(message) = duplicate_key_error(text, &e) {
        return Error::noted(message, at);
    }
    let before = lines_before_document(text, e.line);
    e.line -= before;
    e.go_marks = e.go_marks.map(|m| GoMarks { problem: m.problem.saturating_sub(before).max(1), context: m.context.saturating_sub(before).max(1) });
    Error::noted(format!("MalformedYAMLError: {}", e.go_yaml_v3()), at)
}

/// Whether `e` is kustomize's error for a resource that cannot become a Go map (a mapping key
/// written twice): kustomize meets it only when it writes the output, outside any entry.
pub fn is_go_map_error(e: &Error) -> bool {
    matches!(e, Error::Noted { message, .. } if message.starts_with(GO_MAP_ERROR))
}

const GO_MAP_ERROR: &str = "map[string]interface {}(nil): yaml: ";

/// The paths of `paths` inside item `index` of a List's `items`, from that item.
fn item_paths(paths: &[NodePath], index: usize) -> Vec<NodePath> {
    paths
        .iter()
        .filter_map(|path| match path.as_slice() {
            [Step::Key(items), Step::Index(i), rest @ ..] if items == "items" && *i == index => Some(rest.to_vec()),
            _ => None,
        })
        .collect()
}

/// kyaml's `splitDocuments`: a line starting with `---` (after a line break, and itself ended
/// by one) separates documents, and anything on it after the dashes but blanks or a comment is
/// refused, before any document is parsed.
fn check_separators(text: &str) -> Result<()> {
    let mut from = 0;
    while let Some(found) = text[from..].find("\n---") {
        let start = from + found;
        let Some(end) = text[start + 1..].find('\n').map(|n| start + 1 + n) else { break };
        let rest = text[start + 4..end].trim();
        if !rest.is_empty() && !rest.starts_with('#') {
            return Err(Error::msg(format!("invalid document separator: {}", text[start..end].trim())));
        }
        // The separator's line break is taken: a separator right after it does not count.
        from = end + 1;
    }
    Ok(())
}

/// A mapping key written twice: kyaml reads it, and kustomize fails only when it turns the
/// resource into a Go map, in go-yaml's words for the text kyaml writes of the resource. That
/// text drops the document's blank lines and its `---`, so its lines are the file's less those
/// (lines inside block scalars aside, and scalars written over several lines).
fn duplicate_key_error(text: &str, e: &ParseError) -> Option<String> {
    let (key, first) = e.message.strip_prefix("mapping key ")?.rsplit_once(" already defined at line ")?;
    let first: usize = first.parse().ok()?;
    let start = lines_before_document(text, e.line);
    let dropped = |line: usize| {
        let document = text.lines().take(line.saturating_sub(1)).skip(start);
        document.enumerate().filter(|(i, l)| l.trim().is_empty() || *i == 0 && l.starts_with("---")).count()
    };
    // A line kyaml takes for a separator (`----x: 1` starts with `---`) may not end the document
    // the parser read, so the first definition can sit above `start`: never below line 0.
    let written = |line: usize| line.saturating_sub(start).saturating_sub(dropped(line));
    Some(format!("{GO_MAP_ERROR}unmarshal errors:\n  line {}: mapping key {key} already defined at line {}", written(e.line), written(first)))
}

/// How many lines of `text` come before the document that holds line `line` (1-based): kyaml
/// splits a stream at every line that starts with `---` after a line break, and drops it.
fn lines_before_document(text: &str, line: usize) -> usize {
    let separator = text.lines().take(line.saturating_sub(1)).enumerate().skip(1).filter(|(_, l)| l.starts_with("---")).last();
    separator.map_or(0, |(index, _)| index + 1)
}

/// The resources of one YAML/JSON file; `kind: *List` documents contribute their items.
/// A document with a non-scalar mapping key is loaded without that entry, and the error
/// kustomize meets later is returned beside the resources (see [`ResourceDocument`]).
pub fn resources_from_file(file: &Path, text: &str) -> Result<(Vec<Resource>, Option<Error>)> {
    check_separators(text)?;
    let mut out = Vec::new();
    let mut deferred = None;
    let mut pending: Vec<(Value, Option<EmptyNulls>, Option<QuotedScalars>, Vec<NodePath>)> = Vec::new();
    for doc in parse_file(file, text)?.into_iter().rev() {
        if let Some(e) = doc.invalid_key {
            // kustomize fails when printing the resource, which it names by its (undecodable) map.
            deferred = Some(Error::noted(format!("{GO_MAP_ERROR}{}", e.message), format!("at {}:{}:{}", file.display(), e.line, e.column)));
        }
        pending.push((doc.value, doc.empty_nulls, doc.quoted, doc.plain_keys));
    }
    while let Some((mut doc, mut empty_nulls, mut quoted, plain_keys)) = pending.pop() {
        if !doc.is_object() {
            return Err(Error::msg(format!("{}: expected a mapping (a Kubernetes object), got {}", file.display(), crate::error::excerpt(&doc.to_string()))));
        }
        let is_list = doc.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"));
        if is_list {
            if let Some(Value::Array(items)) = doc.get_mut("items") {
                let items = std::mem::take(items).into_iter().enumerate();
                pending.extend(
                    items
                        .map(|(i, item)| {
                            let nulls = empty_nulls.as_mut().and_then(|n| n.take_item("items", i));
                            (item, nulls, quoted.as_mut().and_then(|q| q.take_item("items", i)), item_paths(&plain_keys, i))
                        })
                        .rev(),
                );
                continue;
            }
        }
        // kustomize's words alone: the entry that named the file is said around them.
        validate_metadata(&doc).map_err(Error::msg)?;
        let mut resource = Resource::new(stringify_annotations(doc));
        resource.empty_nulls = empty_nulls.map(Arc::new);
        resource.quoted = quoted.map(Arc::new);
        resource.plain_keys = plain_keys;
        out.push(resource);
    }
    Ok((out, deferred))
}

/// kyaml's `GetValidatedMetadata`: a resource needs a kind, and but for lists a name.
fn validate_metadata(doc: &Value) -> std::result::Result<(), String> {
    // kyaml reads these as text; a null or a collection reads as nothing.
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(v @ (Value::Bool(_) | Value::Number(_))) => crate::kustomization::types::scalar_text(v).unwrap_or_default(),
        _ => String::new(),
    };
    let meta = doc.get("metadata").filter(|m| m.as_object().is_some_and(|m| !m.is_empty()));
    let (api_version, kind) = (text(doc.get("apiVersion")), text(doc.get("kind")));
    let field = |name: &str| meta.and_then(|m| m.get(name));
    let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null() && v.as_object().is_none_or(|m| !m.is_empty()));
    if api_version.is_empty() && kind.is_empty() && !["name", "namespace", "labels", "annotations"].iter().any(|f| present(field(f))) {
        return Err("missing Resource metadata".into());
    }
    // Go's `%v` of kyaml's ResourceMeta: {{apiVersion kind} {{name namespace} map[labels] map[annotations]}}
    let go_map = |v: Option<&Value>| {
        let mut entries: Vec<(String, String)> = match v {
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), text(Some(v)))).collect(),
            _ => Vec::new(),
        };
        entries.sort();
        let entries: Vec<String> = entries.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
        format!("map[{}]", entries.join(" "))
    };
    let name = text(field("name"));
    let described = || {
        format!(
            "{{{{{api_version} {kind}}} {{{{{name} {}}} {} {}}}}}",
            text(field("namespace")),
            go_map(field("labels")),
            go_map(field("annotations"))
        )
    };
    if kind.is_empty() {
        return Err(format!("missing kind in object {}", described()));
    }
    if name.is_empty() && !kind.ends_with("List") {
        return Err(format!("missing metadata.name in object {}", described()));
    }
    Ok(())
}

/// Annotation values are strings: kustomize sets the annotations of every resource again at the
/// end of a build, as a string map, turning `happy: true` into `"true"`. Labels keep their type.
fn stringify_annotations(mut doc: Value) -> Value {
    if let Some(map) = doc.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        stringify_values(map);
    }
    doc
}

/// Booleans and numbers in `map` become their text.
pub(crate) fn stringify_values(map: &mut serde_json::Map<String, Value>) {
    for v in map.values_mut() {
        if matches!(v, Value::Bool(_) | Value::Number(_)) {
            *v = Value::String(crate::kustomization::types::scalar_text(v).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each as kustomize v5.8.1 reads a resource file holding it.
    #[test]
    fn a_separator_line_holding_more_than_a_comment_is_refused() {
        let refused = [
            ("a: 1\n----apiVersion: v1\nkind: ConfigMap\n", "invalid document separator: ----apiVersion: v1"),
            ("a: 1\n--- foo\nb: 2\n", "invalid document separator: --- foo"),
        ];
        for (text, expected) in refused {
            let error = resources_from_file(Path::new("r.yaml"), text).err().expect(text);
            assert_eq!(error.to_string(), expected);
        }
        // A comment, blanks, or a last line without a line break are no separator errors.
        for text in ["a: 1\n--- # note\nb: 2\n", "a: 1\n---  \nb: 2\n", "a: 1\n--- x"] {
            let outcome = resources_from_file(Path::new("r.yaml"), text);
            assert!(!outcome.as_ref().is_err_and(|e| e.to_string().contains("separator")), "{text:?}: {:?}", outcome.err());
        }
    }
}
