//! The YAML parser never panics, and every document it returns prints (with kustomize's emitter)
//! to text that parses back to the same value. Numbers compare by value: a float with no
//! fraction prints as Go's JSON prints it (`0.0` as `0`) and comes back an integer, in kustomize too.
//! Left out: a value the build refuses to print (`emit::find_unencodable`: characters kustomize's
//! reader rejects, a key holding U+0085), and a string holding U+0085 (NEL), which kustomize
//! writes raw and so reads back folded to a space: the emitter reproduces that on purpose. Also
//! left out, as a known difference of the parser (README): U+2028 and U+2029, which go-yaml
//! reads as line breaks inside a quoted scalar and the parser reads as characters.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::yaml::{emit, parse};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(docs) = parse::parse_documents(text) else { return };
    for doc in docs.iter().filter(|d| !d.is_null() && emit::find_unencodable(d).is_none() && !holds_nel(d)) {
        let printed = emit::emit_stream([doc]);
        let again = parse::parse_document(&printed)
            .unwrap_or_else(|e| panic!("emitted text does not parse: {e}\n--- input\n{text}\n--- emitted\n{printed}"));
        assert!(same(&again, doc), "emitted text parses to another value\n--- input\n{text}\n--- emitted\n{printed}\n--- {again:?}\n--- {doc:?}");
    }
});

/// Whether a string or key below `v` holds U+0085, U+2028 or U+2029 (YAML 1.1 line breaks).
fn holds_nel(v: &Value) -> bool {
    let breaks = |s: &str| s.contains(['\u{85}', '\u{2028}', '\u{2029}']);
    match v {
        Value::String(s) => breaks(s),
        Value::Array(items) => items.iter().any(holds_nel),
        Value::Object(map) => map.iter().any(|(k, v)| breaks(k) || holds_nel(v)),
        _ => false,
    }
}

/// Equal, with numbers compared by their value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}
