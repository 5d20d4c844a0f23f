//! JSON text as Go's `encoding/json` writes it (`json.Marshal`, `json.MarshalIndent(v, "", "  ")`):
//! map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, numbers as Go prints them. Used for
//! generator hashes and for JSON documents that replacements write into.
use serde_json::Value;

/// Where encoded text goes: a `String`, or a digest fed piece by piece (generator hashes), so the
/// text need not be built first.
pub trait JsonSink {
    fn put(&mut self, s: &str);
}

impl JsonSink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// `json.Marshal`.
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write(v, None, &mut out);
    out
}

/// `json.Marshal`, written into `out`.
pub fn go_json_into<S: JsonSink>(v: &Value, out: &mut S) {
    write(v, None, out);
}

/// `json.MarshalIndent(v, "", "  ")`.
pub fn go_json_indented(v: &Value) -> String {
    let mut out = String::new();
    write(v, Some(0), &mut out);
    out
}

/// `depth`: the indentation level when indenting, `None` for compact text.
fn write<S: JsonSink>(v: &Value, depth: Option<usize>, out: &mut S) {
    let inner = depth.map(|d| d + 1);
    let newline = |out: &mut S, level: Option<usize>| {
        if let Some(level) = level {
            out.put("\n");
            for _ in 0..level {
                out.put("  ");
            }
        }
    };
    match v {
        Value::Object(m) if m.is_empty() => out.put("{}"),
        Value::Object(m) => {
            // Go sorts map keys; a map read in sorted order needs no sorting.
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            }
            out.put("{");
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                newline(out, inner);
                write_string(k, out);
                out.put(if depth.is_some() { ": " } else { ":" });
                write(item, inner, out);
            }
            newline(out, depth);
            out.put("}");
        }
        Value::Array(items) if items.is_empty() => out.put("[]"),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                newline(out, inner);
                write(item, inner, out);
            }
            newline(out, depth);
            out.put("]");
        }
        Value::String(s) => write_string(s, out),
        Value::Number(n) => out.put(&super::go_number_json(n)),
        Value::Bool(b) => out.put(if *b { "true" } else { "false" }),
        Value::Null => out.put("null"),
    }
}

/// Bytes that may need escaping: controls, `"`, `\`, `<`, `>`, `&`, and E2, the first byte of
/// U+2028 and U+2029 (E2 80 A8, E2 80 A9).
const MAY_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'<' as usize] = true;
    table[b'>' as usize] = true;
    table[b'&' as usize] = true;
    table[0xE2] = true;
    table
};

/// A JSON string as Go writes it; runs that need no escaping go out in one piece.
fn write_string<S: JsonSink>(s: &str, out: &mut S) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put("\"");
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !MAY_ESCAPE[b as usize] {
            i += 1;
            continue;
        }
        let (code, width) = match b {
            // `s` is UTF-8, so E2 starts a character; only U+2028 and U+2029 are escaped.
            0xE2 => match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(0x80), Some(&last @ (0xA8 | 0xA9))) => (0x2028 + u32::from(last - 0xA8), 3),
                _ => {
                    i += 1;
                    continue;
                }
            },
            other => (u32::from(other), 1),
        };
        out.put(&s[run..i]);
        match b {
            b'"' => out.put("\\\""),
            b'\\' => out.put("\\\\"),
            b'\n' => out.put("\\n"),
            b'\r' => out.put("\\r"),
            b'\t' => out.put("\\t"),
            0x08 => out.put("\\b"),
            0x0c => out.put("\\f"),
            _ => {
                let mut text = *b"\\u0000";
                for (slot, shift) in text[2..].iter_mut().zip([12, 8, 4, 0]) {
                    *slot = HEX[((code >> shift) & 0xf) as usize];
                }
                out.put(std::str::from_utf8(&text).unwrap_or_default());
            }
        }
        i += width;
        run = i;
    }
    out.put(&s[run..]);
    out.put("\"");
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
