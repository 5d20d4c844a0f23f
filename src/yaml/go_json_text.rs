//! JSON text as Go's `encoding/json` writes it (`json.Marshal`, `json.MarshalIndent(v, "", "  ")`):
//! map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, numbers as Go prints them. Used for
//! generator hashes and for JSON documents that replacements write into.
use serde_json::Value;

/// `json.Marshal`.
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write(v, None, &mut out);
    out
}

/// `json.MarshalIndent(v, "", "  ")`.
pub fn go_json_indented(v: &Value) -> String {
    let mut out = String::new();
    write(v, Some(0), &mut out);
    out
}

/// `depth`: the indentation level when indenting, `None` for compact text.
fn write(v: &Value, depth: Option<usize>, out: &mut String) {
    let inner = depth.map(|d| d + 1);
    let newline = |out: &mut String, level: Option<usize>| {
        if let Some(level) = level {
            out.push('\n');
            out.push_str(&"  ".repeat(level));
        }
    };
    match v {
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write_string(k, out);
                out.push_str(if depth.is_some() { ": " } else { ":" });
                write(&m[k], inner, out);
            }
            newline(out, depth);
            out.push('}');
        }
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write(item, inner, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) => out.push_str(&super::go_number_json(n)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
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

    // What Go's encoder printed (through kustomize v5.8.1) for the same values.
    #[test]
    fn compact_and_indented_text_is_gos() {
        assert_eq!(
            go_json(&json!({"z": 1.5, "ports": {"b": "<x> & y", "appA": "a"}, "a": [1e-7, 100.0, 1.2345678901234568e22]})),
            r#"{"a":[1e-7,100,1.2345678901234568e+22],"ports":{"appA":"a","b":"\u003cx\u003e \u0026 y"},"z":1.5}"#
        );
        assert_eq!(go_json_indented(&json!({"b": {}, "a": [1, {"c": []}]})), "{\n  \"a\": [\n    1,\n    {\n      \"c\": []\n    }\n  ],\n  \"b\": {}\n}");
        assert_eq!(go_json(&json!("tab\tquote\"\u{1}\u{8}")), r#""tab\tquote\"\u0001\b""#);
    }
}
