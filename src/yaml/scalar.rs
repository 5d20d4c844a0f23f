//! The one place a YAML scalar's type is decided: go-yaml v3's `resolve`, which kustomize's
//! decoding uses. The parser types every scalar it reads with it (`parse.rs`); transformers type
//! the text they write with it (replacements keep a target's tag, or none for fields they create).
use saphyr_parser::ScalarStyle;
use serde_json::Value;

use super::parse::{resolve_plain, resolve_scalar};

/// A scalar's YAML tag, as far as typing goes: `None` for a node without one (kustomize creates
/// such nodes), `Other` for tags outside the core schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarTag {
    None,
    Str,
    Int,
    Float,
    Bool,
    Null,
    Timestamp,
    Binary,
    Merge,
    Other,
}

impl ScalarTag {
    /// The tag a decoded value carries (timestamps decode to strings, so never `Timestamp`).
    pub fn of_value(value: &Value) -> ScalarTag {
        match value {
            Value::String(_) => ScalarTag::Str,
            Value::Number(n) if n.is_f64() => ScalarTag::Float,
            Value::Number(_) => ScalarTag::Int,
            Value::Bool(_) => ScalarTag::Bool,
            _ => ScalarTag::Null,
        }
    }
}

/// The tag and value go-yaml v3 gives a plain scalar that has no tag.
pub fn resolve_untagged(text: &str) -> (ScalarTag, Value) {
    let resolved = resolve_plain(text, true);
    (resolved.tag(), resolved.into_value(text))
}

/// The value of a plain scalar holding `text` under `tag`, or go-yaml's complaint
/// (``cannot decode !!str `abc` as a !!int``).
pub fn decode_plain(tag: ScalarTag, text: &str) -> Result<Value, String> {
    resolve_scalar(text, ScalarStyle::Plain, tag).map(|(value, _)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn untagged_plain_scalars_resolve_as_yaml_1_2() {
        for (text, value) in [
            ("42", json!(42)),
            ("0x1F", json!(31)),
            ("1_000", json!(1000)),
            ("1.5", json!(1.5)),
            ("True", json!(true)),
            ("~", json!(null)),
            ("yes", json!("yes")),
            ("1.2.3", json!("1.2.3")),
            ("-", json!("-")),
            ("2001-12-14", json!("2001-12-14T00:00:00Z")),
        ] {
            assert_eq!(resolve_untagged(text).1, value, "{text}");
        }
    }

    #[test]
    fn a_tag_keeps_its_type_or_refuses_the_text() {
        assert_eq!(decode_plain(ScalarTag::Str, "8080"), Ok(json!("8080")));
        assert_eq!(decode_plain(ScalarTag::Int, "8080"), Ok(json!(8080)));
        assert_eq!(decode_plain(ScalarTag::Float, "2"), Ok(json!(2.0)));
        assert_eq!(decode_plain(ScalarTag::Int, "abc"), Err("cannot decode !!str `abc` as a !!int".to_string()));
    }
}
