//! Values as Go's `fmt` prints them with `%q` and `%#v`, for kustomize's messages that quote a
//! string or dump a decoded resource (`map[string]interface {}{...}`).
use serde_json::{Number, Value};
use std::fmt::Write as _;

/// A string as Go's `%q` (and `%#v`) prints it: `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !is_go_printable(c) => {
                let _ = if (c as u32) < 0x10000 { write!(out, "\\u{:04x}", c as u32) } else { write!(out, "\\U{:08x}", c as u32) };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint` for characters beyond ASCII, for the ones resources hold in practice:
/// controls, format characters, spaces other than U+0020, line and paragraph separators,
/// private use and non-characters are not printable.
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    !matches!(u,
        0x80..=0xA0 | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x1680 | 0x180E
        | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x2064 | 0x2066..=0x206F | 0x3000
        | 0xE000..=0xF8FF | 0xFDD0..=0xFDEF | 0xFEFF | 0xFFF9..=0xFFFB | 0xFFFE | 0xFFFF
        | 0xF0000..)
        && (u & 0xFFFE) != 0xFFFE
}

/// A decoded resource as Go's `%#v` prints a `map[string]interface {}` (keys sorted).
pub fn sharp_v(value: &Value) -> String {
    let mut out = String::new();
    write_go(value, &mut out, None);
    out
}

/// A plain mapping key go-yaml v3 reads as a number or a boolean: what a Go
/// `map[interface {}]interface {}` then holds as the key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GoKey {
    Uint(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl GoKey {
    /// The key as Go's `%#v` prints it (an unsigned integer in hexadecimal).
    pub fn sharp_v(self) -> String {
        match self {
            GoKey::Uint(u) => format!("{u:#x}"),
            GoKey::Int(i) => i.to_string(),
            GoKey::Float(f) => {
                let mut out = String::new();
                write_float(f, &mut out);
                out
            }
            GoKey::Bool(b) => b.to_string(),
        }
    }

    /// The order of Go's `fmt` for keys of a map of interfaces: by type (in the order of the
    /// type descriptors in kustomize's binary: uint64, int, float64, bool), then by value, a
    /// NaN before every other float.
    pub fn go_order(self, other: GoKey) -> std::cmp::Ordering {
        let rank = |k: GoKey| match k {
            GoKey::Uint(_) => 0,
            GoKey::Int(_) => 1,
            GoKey::Float(_) => 2,
            GoKey::Bool(_) => 3,
        };
        match (self, other) {
            (GoKey::Uint(a), GoKey::Uint(b)) => a.cmp(&b),
            (GoKey::Int(a), GoKey::Int(b)) => a.cmp(&b),
            (GoKey::Float(a), GoKey::Float(b)) => a.is_nan().cmp(&b.is_nan()).reverse().then(a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)),
            (GoKey::Bool(a), GoKey::Bool(b)) => a.cmp(&b),
            (a, b) => rank(a).cmp(&rank(b)),
        }
    }
}

/// One step of the path to a value, for [`sharp_v_with_plain_keys`].
#[derive(Clone, Copy, Debug)]
pub enum At<'a> {
    Key(&'a str),
    Index(usize),
}

/// For a map key (the path to its map, the key): the Go value go-yaml read it as, when a boolean
/// or a number; `None` when it is a string.
pub type PlainKeys<'f> = &'f dyn Fn(&[At<'_>], &str) -> Option<GoKey>;

/// [`sharp_v`] of a resource where kustomize wrote some keys untagged, so that go-yaml read them
/// back as booleans or numbers: each map holding one prints as Go's `map[interface {}]interface {}`,
/// its string keys first, then the others in Go's order ([`GoKey::go_order`]).
pub fn sharp_v_with_plain_keys(value: &Value, plain_keys: PlainKeys<'_>) -> String {
    let mut out = String::new();
    write_go(value, &mut out, Some((plain_keys, &mut Vec::new())));
    out
}

fn write_go<'v>(value: &'v Value, out: &mut String, mut plain: Option<(PlainKeys<'_>, &mut Vec<At<'v>>)>) {
    match value {
        Value::Null => out.push_str("interface {}(nil)"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_child(item, At::Index(i), out, &mut plain);
            }
            out.push('}');
        }
        Value::Object(map) => {
            let go_key = |k: &str| plain.as_ref().and_then(|(keys, path)| keys(path, k));
            let mut entries: Vec<_> = map.iter().map(|(k, v)| (go_key(k), k, v)).collect();
            let any_plain = entries.iter().any(|(g, _, _)| g.is_some());
            out.push_str(if any_plain { "map[interface {}]interface {}{" } else { "map[string]interface {}{" });
            entries.sort_by(|a, b| match (a.0, b.0) {
                (None, None) => a.1.as_bytes().cmp(b.1.as_bytes()),
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => x.go_order(y),
            });
            for (i, (go, k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match go {
                    Some(go) => out.push_str(&go.sharp_v()),
                    None => out.push_str(&quote(k)),
                }
                out.push(':');
                write_child(v, At::Key(k), out, &mut plain);
            }
            out.push('}');
        }
    }
}

/// A map's value or a list's item, its step on the path while it is written (where keys are tracked).
fn write_child<'v>(value: &'v Value, step: At<'v>, out: &mut String, plain: &mut Option<(PlainKeys<'_>, &mut Vec<At<'v>>)>) {
    match plain.as_mut() {
        Some((keys, path)) => {
            path.push(step);
            write_go(value, out, Some((*keys, &mut **path)));
            path.pop();
        }
        None => write_go(value, out, None),
    }
}

/// An int as is; a float64 as Go's `%v` (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest
/// digits, in exponent form (`1e+06`) below 1e-4 or from 1e6 on.
fn write_number(n: &Number, out: &mut String) {
    match n.as_f64().filter(|_| n.is_f64()) {
        Some(f) => write_float(f, out),
        None => {
            let _ = write!(out, "{n}");
        }
    }
}

/// A float64 as Go's `%v` prints it (see [`write_number`]).
fn write_float(f: f64, out: &mut String) {
    if !f.is_finite() {
        out.push_str(if f.is_nan() { "NaN" } else if f > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    // Rust's `{:e}` gives the shortest digits that read back: `d.ddde±x`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "{mantissa}e{sign}{:02}", exp.abs());
    } else {
        let _ = write!(out, "{f}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_quoted_as_strconv_quote_does() {
        assert_eq!(quote("a\"b\\c\td\u{7}"), r#""a\"b\\c\td\a""#);
        assert_eq!(quote("bad\u{7f}\u{90}\u{fffe}é"), r#""bad\x7f\u0090\ufffeé""#);
    }

    #[test]
    fn maps_print_sorted_with_go_type_names() {
        let v = json!({"z": [1, 2.5, null, true], "a": {"k": "v"}, "e": {}, "f": 1e6, "g": 0.00001, "h": 123456.0});
        assert_eq!(
            sharp_v(&v),
            r#"map[string]interface {}{"a":map[string]interface {}{"k":"v"}, "e":map[string]interface {}{}, "f":1e+06, "g":1e-05, "h":123456, "z":[]interface {}{1, 2.5, interface {}(nil), true}}"#
        );
    }
}

/// A YAML syntax error in go-yaml's words where the parser's differ (kustomize prints go-yaml's
/// text for a kustomization file that does not parse), else the parser's own.
pub fn go_yaml_error_wording(message: &str) -> &str {
    const WORDING: [(&str, &str); 11] = [
        ("while scanning a plain scalar, found a tab", "found a tab character that violates indentation"),
        ("unexpected character", "found character that cannot start any token"),
        ("tabs disallowed within this context", "found character that cannot start any token"),
        ("did not find expected '-' indicator", "did not find expected '-' indicator"),
        ("did not find expected key", "did not find expected key"),
        ("flow sequence, expected ',' or ']'", "did not find expected ',' or ']'"),
        ("did not find expected ',' or ']'", "did not find expected ',' or ']'"),
        ("did not find expected ',' or '}'", "did not find expected ',' or '}'"),
        ("flow mapping, expected ',' or '}'", "did not find expected ',' or '}'"),
        ("found unexpected end of stream", "found unexpected end of stream"),
        ("mapping values are not allowed in this context", "mapping values are not allowed in this context"),
    ];
    WORDING.iter().find(|(ours, _)| message.contains(ours)).map_or(message, |(_, go)| go)
}
