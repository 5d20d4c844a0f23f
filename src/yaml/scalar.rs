//! The one place a YAML scalar's type is decided: go-yaml v3's `resolve`, which kustomize's
//! decoding uses. The parser types every scalar it reads with it (`parse.rs`); transformers type
//! the text they write with it (replacements keep a target's tag, or none for fields they create).
use std::borrow::Cow;

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

use super::go_syntax::GoKey;

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

thread_local! {
    /// Set only for the duration of [`parse_document_last_key_wins`](super::parse::parse_document_last_key_wins)
    /// on this thread.
    pub(super) static LAST_KEY_WINS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// go-yaml v2's booleans that YAML 1.2 (go-yaml v3) reads as strings.
pub(super) fn yaml_1_1_boolean(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// A scalar's explicit tag, as far as typing goes.
pub(super) use ScalarTag as TagKind;

const CORE_SCHEMA: &str = "tag:yaml.org,2002:";

impl TagKind {
    pub(super) fn of(tag: Option<&Tag>) -> TagKind {
        let Some(tag) = tag else { return TagKind::None };
        let suffix = if tag.handle == CORE_SCHEMA {
            tag.suffix.as_str()
        } else if tag.handle.is_empty() && tag.suffix.starts_with(CORE_SCHEMA) {
            &tag.suffix[CORE_SCHEMA.len()..]
        } else if tag.handle.is_empty() && tag.suffix == "!" || tag.handle == "!" && tag.suffix.is_empty() {
            // The non-specific tag `!`: go-yaml treats it as no tag.
            return TagKind::None;
        } else {
            return TagKind::Other;
        };
        match suffix {
            "str" => TagKind::Str,
            "int" => TagKind::Int,
            "float" => TagKind::Float,
            "bool" => TagKind::Bool,
            "null" => TagKind::Null,
            "timestamp" => TagKind::Timestamp,
            "binary" => TagKind::Binary,
            "merge" => TagKind::Merge,
            _ => TagKind::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            TagKind::Str => "!!str",
            TagKind::Int => "!!int",
            TagKind::Float => "!!float",
            TagKind::Bool => "!!bool",
            TagKind::Null => "!!null",
            TagKind::Timestamp => "!!timestamp",
            TagKind::Binary => "!!binary",
            TagKind::Merge => "!!merge",
            TagKind::None | TagKind::Other => "",
        }
    }
}

/// What a plain scalar resolves to.
#[derive(Debug, PartialEq)]
pub(super) enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// `.inf`, `-.inf`, `.nan`: JSON cannot hold them, they are refused.
    NonFinite,
    /// The RFC 3339 text Go's JSON encoder writes for the time.
    Timestamp(String),
    Str,
}

impl Resolved {
    pub(super) fn tag(&self) -> TagKind {
        match self {
            Resolved::Null => TagKind::Null,
            Resolved::Bool(_) => TagKind::Bool,
            Resolved::Int(_) | Resolved::Uint(_) => TagKind::Int,
            Resolved::Float(_) | Resolved::NonFinite => TagKind::Float,
            Resolved::Timestamp(_) => TagKind::Timestamp,
            Resolved::Str => TagKind::Str,
        }
    }

    pub(super) fn into_value(self, text: &str) -> Value {
        match self {
            Resolved::Null => Value::Null,
            Resolved::Bool(b) => Value::Bool(b),
            Resolved::Int(i) => Value::from(i),
            Resolved::Uint(u) => Value::from(u),
            Resolved::Float(f) => Number::from_f64(f).map_or_else(|| Value::String(text.to_owned()), Value::Number),
            Resolved::Timestamp(t) => Value::String(t),
            Resolved::NonFinite | Resolved::Str => Value::String(text.to_owned()),
        }
    }
}

/// Types one scalar as go-yaml v3 does when decoding into `interface{}`: its value in block
/// context, and its value inside a flow collection when that differs. The v3 encoder writes empty
/// plain scalars as `''` in flow collections and quotes plain scalars containing `:` there, so
/// those come back as strings.
pub(super) fn resolve_scalar(text: &str, style: ScalarStyle, tag: TagKind) -> Result<(Value, Option<Value>), String> {
    let string = || Value::String(text.to_owned());
    match tag {
        TagKind::Str | TagKind::Other | TagKind::Merge => Ok((string(), None)),
        TagKind::None if style != ScalarStyle::Plain => Ok((string(), None)),
        TagKind::None => {
            if let Some(b) = yaml_1_1_boolean(text).filter(|_| LAST_KEY_WINS.with(|flag| flag.get())) {
                return Ok((Value::Bool(b), None));
            }
            // go-yaml v2 (sigs.k8s.io/yaml: kustomization files, JSON 6902 patches) keeps a
            // timestamp's text when decoding into `interface{}`.
            let resolved = resolve_plain(text, !LAST_KEY_WINS.with(|flag| flag.get()));
            refuse_non_finite(&resolved, text)?;
            let in_flow = match resolved {
                Resolved::Null if text.is_empty() => Some(string()),
                Resolved::Timestamp(_) if text.contains(':') => Some(string()),
                _ => None,
            };
            Ok((resolved.into_value(text), in_flow))
        }
        TagKind::Binary => decode_binary(text).map(|v| (v, None)),
        TagKind::Int | TagKind::Float | TagKind::Bool | TagKind::Null | TagKind::Timestamp => {
            let resolved = resolve_plain(text, tag == TagKind::Timestamp);
            refuse_non_finite(&resolved, text)?;
            let found = resolved.tag();
            if found == tag {
                return Ok((resolved.into_value(text), None));
            }
            if tag == TagKind::Float {
                match resolved {
                    Resolved::Int(i) => return Ok((Resolved::Float(i as f64).into_value(text), None)),
                    Resolved::Uint(u) => return Ok((Resolved::Float(u as f64).into_value(text), None)),
                    _ => {}
                }
            }
            Err(format!("cannot decode {} `{}` as a {}", found.name(), text, tag.name()))
        }
    }
}

/// The value of one scalar as written (its text, style and tag), typed as go-yaml v3 types it in
/// block context: the resolver every reader of scalar events goes through.
pub fn scalar_value(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    resolve_scalar(text, style, TagKind::of(tag)).map(|(block, _)| block)
}

/// Whether go-yaml v3 reads `text`, written plain, as a string (its encoder quotes it otherwise).
pub(crate) fn plain_is_string(text: &str) -> bool {
    matches!(resolve_plain(text, true), Resolved::Str)
}

/// `.inf` and `.nan` are floats JSON cannot hold: kustomize fails on them as Go's JSON encoder
/// does, and so does the parser (a quoted `".nan"` is a string and fine).
fn refuse_non_finite(resolved: &Resolved, text: &str) -> Result<(), String> {
    if *resolved != Resolved::NonFinite {
        return Ok(());
    }
    let value = match text.as_bytes()[0] {
        b'-' => "-Inf",
        _ if text.to_ascii_lowercase().ends_with("nan") => "NaN",
        _ => "+Inf",
    };
    Err(format!("json: unsupported value: {value}"))
}

/// The Go value go-yaml v3 reads from `text` as a plain mapping key, when that is a boolean or
/// a number (`None` for a string, a null or a timestamp).
pub fn plain_key_as_go(text: &str) -> Option<GoKey> {
    // Only these start a number or a boolean (`true`, `False`); most keys are looked at no further.
    if !matches!(text.as_bytes().first(), Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b't' | b'T' | b'f' | b'F')) {
        return None;
    }
    Some(match resolve_plain(text, true) {
        Resolved::Bool(b) => GoKey::Bool(b),
        Resolved::Int(i) => GoKey::Int(i),
        Resolved::Uint(u) => GoKey::Uint(u),
        Resolved::Float(f) => GoKey::Float(f),
        Resolved::NonFinite => GoKey::Float(if text.to_ascii_lowercase().contains("nan") {
            f64::NAN
        } else if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        Resolved::Null | Resolved::Timestamp(_) | Resolved::Str => return None,
    })
}

/// go-yaml v3's `resolve` for an untagged plain scalar (or one tagged with a resolvable tag).
pub(super) fn resolve_plain(text: &str, allow_timestamp: bool) -> Resolved {
    let hint = match text.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return Resolved::Str,
    };
    match text {
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf"
        | "-.INF" => return Resolved::NonFinite,
        _ => {}
    }
    match hint {
        b'.' => {
            if super::go_underscore_ok(text.as_bytes()) {
                let digits = text.replace('_', "");
                if is_dot_float(&digits) {
                    if let Some(f) = parse_finite(&digits) {
                        return Resolved::Float(f);
                    }
                }
            }
            Resolved::Str
        }
        b'D' | b'S' => {
            if allow_timestamp {
                if let Some(t) = parse_timestamp(text) {
                    return Resolved::Timestamp(t);
                }
            }
            let plain: Cow<'_, str> = if text.contains('_') { Cow::Owned(text.replace('_', "")) } else { Cow::Borrowed(text) };
            if let Some(i) = go_parse_int(&plain) {
                return Resolved::Int(i);
            }
            if let Some(u) = go_parse_uint(plain.as_bytes()) {
                return Resolved::Uint(u);
            }
            if is_yaml_float(&plain) {
                if let Some(f) = parse_finite(&plain) {
                    return Resolved::Float(f);
                }
            }
            Resolved::Str
        }
        _ => Resolved::Str,
    }
}

/// Go's strconv.ParseFloat, for text already checked to be a decimal float: out of range is an error.
fn parse_finite(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    exponent_to_end(b, i)
}

/// `^\.[0-9]+([eE][-+]?[0-9]+)?$`: what Go's ParseFloat takes from text starting with a dot.
fn is_dot_float(text: &str) -> bool {
    let b = text.as_bytes();
    if b.first() != Some(&b'.') {
        return false;
    }
    let mut i = 1;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i > 1 && exponent_to_end(b, i)
}

/// An optional `[eE][-+]?[0-9]+` from `i` to the end.
fn exponent_to_end(b: &[u8], mut i: usize) -> bool {
    if i == b.len() {
        return true;
    }
    if !matches!(b[i], b'e' | b'E') {
        return false;
    }
    i += 1;
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i > start && i == b.len()
}


/// Go's `strconv.ParseInt(s, 0, 64)` (without underscores, which were removed before).
fn go_parse_int(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let (negative, digits) = match b.first()? {
        b'+' => (false, &b[1..]),
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let magnitude = go_parse_uint(digits)?;
    if negative {
        if magnitude <= 1 << 63 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: `0x`, `0o`, `0b` prefixes and `0`-led octal.
fn go_parse_uint(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    let (base, digits) = if b[0] == b'0' {
        match b.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if b.len() >= 3 => (2, &b[2..]),
            Some(b'o') if b.len() >= 3 => (8, &b[2..]),
            Some(b'x') if b.len() >= 3 => (16, &b[2..]),
            _ => (8, &b[1..]),
        }
    } else {
        (10, b)
    };
    let mut n: u64 = 0;
    for &c in digits {
        let d = (c as char).to_digit(36)?;
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// go-yaml v3's timestamp formats, as Go's JSON encoder then writes the time (RFC 3339 with
/// nanoseconds): `2006-1-2T15:4:5.999999999Z07:00` (`T` or `t`), `2006-1-2 15:4:5.999999999`
/// (UTC) and `2006-1-2` (midnight UTC).
fn parse_timestamp(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let year = b[..4].iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let mut i = 5;
    let month = go_getnum(b, &mut i)?;
    expect(b, &mut i, b'-')?;
    let day = go_getnum(b, &mut i)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, year) {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if i == b.len() {
        return Some(format!("{date}T00:00:00Z"));
    }
    let separator = b[i];
    if !matches!(separator, b'T' | b't' | b' ') {
        return None;
    }
    i += 1;
    let hour = go_getnum(b, &mut i)?;
    expect(b, &mut i, b':')?;
    let minute = go_getnum(b, &mut i)?;
    expect(b, &mut i, b':')?;
    let second = go_getnum(b, &mut i)?;
    if hour >= 24 || minute >= 60 || second >= 60 {
        return None;
    }
    let mut nanos = 0u32;
    if i + 1 < b.len() && matches!(b[i], b'.' | b',') && b[i + 1].is_ascii_digit() {
        i += 1;
        let mut scale = 100_000_000;
        while i < b.len() && b[i].is_ascii_digit() {
            nanos += u32::from(b[i] - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let zone = if separator == b' ' {
        String::from("Z")
    } else if b.get(i) == Some(&b'Z') {
        i += 1;
        String::from("Z")
    } else {
        let z = b.get(i..i + 6)?;
        if !matches!(z[0], b'+' | b'-') || z[3] != b':' || !z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit) {
            return None;
        }
        let hours = u32::from(z[1] - b'0') * 10 + u32::from(z[2] - b'0');
        let minutes = u32::from(z[4] - b'0') * 10 + u32::from(z[5] - b'0');
        if hours > 24 || minutes > 60 {
            return None;
        }
        i += 6;
        let offset = hours * 60 + minutes;
        if offset == 0 {
            String::from("Z")
        } else {
            format!("{}{:02}:{:02}", z[0] as char, offset / 60, offset % 60)
        }
    };
    if i != b.len() {
        return None;
    }
    let mut fraction = String::new();
    if nanos != 0 {
        fraction = format!(".{nanos:09}");
        while fraction.ends_with('0') {
            fraction.pop();
        }
    }
    Some(format!("{date}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}"))
}

/// Go's time-parsing `getnum(s, false)`: one or two digits.
fn go_getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    let first = *b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    let mut n = u32::from(first - b'0');
    if let Some(&second) = b.get(*i).filter(|c| c.is_ascii_digit()) {
        n = n * 10 + u32::from(second - b'0');
        *i += 1;
    }
    Some(n)
}

fn expect(b: &[u8], i: &mut usize, c: u8) -> Option<()> {
    if b.get(*i) == Some(&c) {
        *i += 1;
        Some(())
    } else {
        None
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `!!binary`: base64 (line breaks ignored, as Go's decoder does), the bytes as text with each
/// byte that is not UTF-8 replaced by U+FFFD, as Go's JSON encoder does.
fn decode_binary(text: &str) -> Result<Value, String> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine;
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let bytes = GO_STD.decode(compact).map_err(|_| String::from("!!binary value contains invalid base64 data"))?;
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes.as_slice();
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                out.extend(std::iter::repeat_n('\u{FFFD}', bad));
                rest = &after[bad..];
            }
        }
    }
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_keys_read_as_go_values_print_and_sort_as_go_does() {
        let keys = ["true", "1.5", "18446744073709551615", "2", "-2", ".inf", "false", "0.5", "-.inf", ".nan", "0x1F"];
        let mut go: Vec<GoKey> = keys.iter().map(|k| plain_key_as_go(k).unwrap()).collect();
        go.sort_by(|a, b| a.go_order(*b));
        let printed: Vec<String> = go.into_iter().map(GoKey::sharp_v).collect();
        assert_eq!(printed, ["0xffffffffffffffff", "-2", "2", "31", "NaN", "-Inf", "0.5", "1.5", "+Inf", "false", "true"]);
        for string in ["yes", "on", "~", "null", "", "1x", "2001-12-14", "0o", "+"] {
            assert_eq!(plain_key_as_go(string), None, "{string}");
        }
    }

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
