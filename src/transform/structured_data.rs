//! Replacements into structured data (kustomize v5.8): a target field path that goes on past a
//! string holding a JSON or YAML document (`data.config\.json.database.host`) writes into that
//! document, which is then written back into the string.
//!
//! kustomize's rule (`setValueInStructuredData`), and so this one:
//! * the string is the first node along the path that is a scalar (followed by more path) and
//!   parses as YAML (JSON being YAML); the rest of the path is matched in its first document
//!   with the target's `create` option;
//! * a scalar found there keeps its type and takes the source's text (no delimiter option); a
//!   map or list found there becomes the source node;
//! * a document whose text starts with `{` or `[` is written back as Go's `encoding/json` writes
//!   it: keys sorted, `<`, `>` and `&` escaped, numbers as Go prints a float64, indented by two
//!   spaces when the text had a line break and two spaces in a row, else compact;
//! * any other document is written back as YAML as kyaml prints a node: keys in their order,
//!   quoted scalars still quoted (a flow collection is printed in block style, where kustomize
//!   keeps it in flow style);
//! * anything that fails on the way leaves the field to the ordinary path matcher.
use serde_json::Value;

use super::replacements::{typed_scalar, Hit, Kind, Matcher, Source};
use crate::resource::nodes::value_at_mut;
use crate::resource::{Resource, Step};
use crate::transform::path::split_replacement_path;
use crate::yaml::empty_nulls::QuotedScalars;
use crate::yaml::parse::parse_resource_documents;
use crate::yaml::scalar::ScalarTag;

/// Writes `value` at `field_path` of `res` when the path runs into structured data: `true` when
/// written, `false` to leave the field path to the ordinary matcher.
pub(super) fn write(res: &mut Resource, value: &Source, field_path: &str, create: Option<Kind>) -> bool {
    let parts = split_replacement_path(field_path);
    if parts.len() < 2 {
        return false;
    }
    let Some((at, text, mut doc, quoted)) = find_document(&res.value, &parts) else { return false };
    let mut matcher = Matcher::new(create);
    if matcher.filter(&mut doc, &parts[at.len()..], &mut Vec::new()).is_err() || matcher.hits.is_empty() {
        return false;
    }
    for hit in &matcher.hits {
        let Hit::Node(path) = hit else { continue };
        let fresh = matcher.fresh.contains(path);
        let Some(target) = value_at_mut(&mut doc, path) else { return false };
        let written = match (Kind::of(target), value) {
            (Kind::Scalar, _) => {
                let tag = if fresh { ScalarTag::None } else { ScalarTag::of_value(target) };
                typed_scalar(tag, value.text())
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
    let Some(serialized) = serialize(&doc, quoted.as_ref(), &text) else { return false };
    let Resource { value: root, nodes, .. } = &mut *res;
    let before = nodes.snapshot(root);
    let Some(field) = value_at_mut(root, &at) else { return false };
    *field = Value::String(serialized);
    nodes.propagate(root, before);
    true
}

/// The first scalar along `parts` (with more path after it) whose text parses as YAML: its path,
/// its text, the text's first document and where that holds quoted scalars.
fn find_document(root: &Value, parts: &[String]) -> Option<(Vec<Step>, String, Value, Option<QuotedScalars>)> {
    for i in 1..parts.len() {
        let Some((at, node)) = super::replacements::lookup_with_path(root, &parts[..i]) else { continue };
        let text = match node {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => continue,
        };
        if let Ok(docs) = parse_resource_documents(&text) {
            let (doc, quoted) = docs.into_iter().next().map_or((Value::Null, None), |d| (d.value, d.quoted));
            return Some((at, text, doc, quoted));
        }
    }
    None
}

/// The document as text again: JSON as Go writes it where the text was JSON, else YAML.
fn serialize(doc: &Value, quoted: Option<&QuotedScalars>, original: &str) -> Option<String> {
    let first = original.trim().chars().next()?;
    if first == '{' || first == '[' {
        let pretty = original.contains('\n') && original.contains("  ");
        let mut out = String::new();
        go_json(doc, pretty, 0, &mut out)?;
        Some(out)
    } else {
        Some(crate::yaml::emit::emit_node_dump(doc, quoted).trim().to_string())
    }
}

/// Go's `json.Marshal` (or `MarshalIndent(v, "", "  ")`) of the value go-yaml decodes `doc` to:
/// maps with their keys sorted, numbers as float64 or integers. `None` where Go fails (NaN).
fn go_json(v: &Value, pretty: bool, depth: usize, out: &mut String) -> Option<()> {
    let newline = |out: &mut String, depth: usize| {
        if pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        }
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)?),
        Value::String(s) => go_string(s, out),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                go_json(item, pretty, depth + 1, out)?;
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                go_string(key, out);
                out.push(':');
                if pretty {
                    out.push(' ');
                }
                go_json(&map[key], pretty, depth + 1, out)?;
            }
            newline(out, depth);
            out.push('}');
        }
    }
    Some(())
}

/// A number as Go's encoder prints it: an integer go-yaml decodes as one as digits, any other
/// as a float64 (`'f'` format, or `'e'` below 1e-6 and from 1e21, with `e-7`, `e+21`).
fn go_number(n: &serde_json::Number) -> Option<String> {
    if n.is_i64() || n.is_u64() {
        return Some(n.to_string());
    }
    let f = n.as_f64()?;
    if !f.is_finite() {
        return None;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent = if exponent.starts_with('-') { exponent.to_string() } else { format!("+{exponent}") };
        return Some(format!("{mantissa}e{exponent}"));
    }
    Some(format!("{f}"))
}

/// A JSON string as Go's encoder writes it, HTML-safe (`<`, `>`, `&` as `\u003c`...).
fn go_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_text(v: Value, pretty: bool) -> String {
        let mut out = String::new();
        go_json(&v, pretty, 0, &mut out).unwrap();
        out
    }

    // What Go's json.Marshal printed (through kustomize v5.8.1) for the same values.
    #[test]
    fn json_is_written_as_go_writes_it() {
        assert_eq!(
            json_text(json!({"z": 1.5, "ports": {"b": "<x> & y", "appA": "a"}, "a": [1e-7, 100.0, 1.2345678901234568e22]}), false),
            r#"{"a":[1e-7,100,1.2345678901234568e+22],"ports":{"appA":"a","b":"\u003cx\u003e \u0026 y"},"z":1.5}"#
        );
        assert_eq!(json_text(json!({"b": {}, "a": [1, {"c": []}]}), true), "{\n  \"a\": [\n    1,\n    {\n      \"c\": []\n    }\n  ],\n  \"b\": {}\n}");
        assert_eq!(json_text(json!("tab\tquote\"\u{1}"), false), r#""tab\tquote\"\u0001""#);
    }

    #[test]
    fn a_float_beyond_go_range_of_fixed_notation_takes_an_exponent() {
        let n = |f: f64| go_number(&serde_json::Number::from_f64(f).unwrap()).unwrap();
        assert_eq!((n(0.000001), n(1e-10), n(1e20), n(1e21), n(-2.5e-8)), ("0.000001".into(), "1e-10".into(), "100000000000000000000".into(), "1e+21".into(), "-2.5e-8".into()));
    }
}
