//! Round trip of kustomize's own output: every `expected.yaml` of the shared suites is
//! read back into `serde_json::Value`s and emitted again; the bytes must not change.
//!
//! The loader types plain scalars the way go-yaml v2 printed them (null, booleans,
//! integers, floats; anything else is a string) and quoted or block scalars as
//! strings, so the emitter sees exactly the values kustomize had.

use peerpods_build::yaml::emit::emit_stream;
use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Number, Value};
use std::path::{Path, PathBuf};

fn plain_scalar(s: &str) -> Value {
    match s {
        "null" => return Value::Null,
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::Number(i.into());
    }
    if let Ok(u) = s.parse::<u64>() {
        return Value::Number(u.into());
    }
    let looks_float = s
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        && s.bytes().any(|c| c.is_ascii_digit());
    if looks_float {
        if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(s.to_string())
}

/// Parses a multi-document YAML stream into values.
fn load_stream(text: &str) -> Vec<Value> {
    enum Frame {
        Seq(Vec<Value>),
        Map(Map<String, Value>, Option<String>),
    }
    fn push(stack: &mut [Frame], docs: &mut Vec<Value>, v: Value) {
        match stack.last_mut() {
            None => docs.push(v),
            Some(Frame::Seq(items)) => items.push(v),
            Some(Frame::Map(map, key)) => match key.take() {
                None => {
                    let k = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    *key = Some(k);
                }
                Some(k) => {
                    map.insert(k, v);
                }
            },
        }
    }
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for ev in Parser::new_from_str(text) {
        let (ev, _) = ev.expect("expected.yaml parses");
        match ev {
            Event::Scalar(s, style, _, _) => {
                let v = match style {
                    ScalarStyle::Plain => plain_scalar(&s),
                    _ => Value::String(s.into_owned()),
                };
                push(&mut stack, &mut docs, v);
            }
            Event::SequenceStart(..) => stack.push(Frame::Seq(Vec::new())),
            Event::MappingStart(..) => stack.push(Frame::Map(Map::new(), None)),
            Event::SequenceEnd => {
                let Some(Frame::Seq(items)) = stack.pop() else {
                    panic!("unbalanced")
                };
                push(&mut stack, &mut docs, Value::Array(items));
            }
            Event::MappingEnd => {
                let Some(Frame::Map(map, _)) = stack.pop() else {
                    panic!("unbalanced")
                };
                push(&mut stack, &mut docs, Value::Object(map));
            }
            _ => {}
        }
    }
    docs
}

fn expected_files(shared: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for suite in ["conformance/krusty", "realworld/cases"] {
        let Ok(dir) = std::fs::read_dir(shared.join(suite)) else {
            continue;
        };
        for case in dir.flatten() {
            let f = case.path().join("expected.yaml");
            if f.is_file() {
                files.push(f);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn expected_outputs_round_trip() {
    let Some(shared) = crate::common::shared_dir("expected_outputs_round_trip") else { return };
    let files = expected_files(&shared);
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let docs = load_stream(&text);
        let got = emit_stream(docs.iter());
        if got != text {
            let line = got
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| got.lines().count().min(text.lines().count()));
            failures.push(format!(
                "{}: first difference at line {}\n  want: {:?}\n  got:  {:?}",
                f.display(),
                line + 1,
                text.lines().nth(line).unwrap_or(""),
                got.lines().nth(line).unwrap_or("")
            ));
        }
    }
    println!(
        "{} of {} expected.yaml files round-trip exactly",
        files.len() - failures.len(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
