//! RFC 6902 JSON patches, applied as kustomize v5.6.0 does with evanphx/json-patch v4
//! (`DecodePatch` + `Apply`, default options):
//! - array indexes may be negative (`-1` is the last element; for `add`, `-1` inserts
//!   before the end position, i.e. appends); `-` appends on `add`;
//! - `add` on an index equal to the length appends; beyond it is an error;
//! - `remove` of a missing key or index is an error, as are `replace` of a missing
//!   index and `add` under a missing parent; `replace` of a missing key adds it; `test` compares numbers by value (1 == 1.0);
//! - a missing `value` counts as `null`.
//!
//! kustomize round-trips the whole object through JSON (`float64` numbers) around the
//! patch, so after applying, every number is normalized the same way: whole numbers
//! become integers (`1.0` -> `1`) and integers beyond 2^53 lose precision.
use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::PatchError;

/// Apply the operations `ops` (a parsed JSON array, from JSON or YAML text) to `target`.
/// Returns whether the operations changed `target`, a sure answer when [`reports_changes`]
/// holds for `ops`.
pub fn apply_json6902(target: &mut Value, ops: &Value) -> Result<bool, PatchError> {
    apply_json6902_within(target, ops, &crate::budget::current())
}

/// Whether [`apply_json6902`]'s answer to "did it change the target" is sure: the operations
/// cannot undo one another. Each is an `add`, `remove`, `replace` or `test` (a `move` or
/// `copy` reads one place and writes another), and no two write in one list (indexes shift)
/// or one within the other; each then compares what it writes with what it writes over.
pub fn reports_changes(ops: &Value) -> bool {
    let Value::Array(list) = ops else { return false };
    let mut written: Vec<&str> = Vec::with_capacity(list.len());
    for op in list {
        let Some(op) = op.as_object() else { return false };
        match op.get("op").and_then(Value::as_str) {
            Some("add" | "remove" | "replace") => {}
            Some("test") => continue,
            _ => return false,
        }
        let Some(path) = op.get("path").and_then(Value::as_str) else { return false };
        written.push(path);
    }
    // A single write (the usual patch) has nothing to interfere with.
    if written.len() < 2 {
        return true;
    }
    let mut paths: Vec<Vec<Cow<str>>> = written.iter().map(|path| path.split('/').map(decode_key_cow).collect()).collect();
    // A path within another sorts right after it, or after one within it.
    paths.sort_unstable();
    if paths.windows(2).any(|w| w[1].starts_with(&w[0])) {
        return false;
    }
    // Two writes under one parent interfere when either is a list index.
    let mut parents: crate::fast_hash::FastHashMap<&[Cow<str>], bool> = Default::default();
    for path in &paths {
        let Some((last, parent)) = path.split_last() else { return false };
        let indexed = last == "-" || last.parse::<i64>().is_ok();
        if let Some(other_indexed) = parents.insert(parent, indexed) {
            if indexed || other_indexed {
                return false;
            }
        }
    }
    true
}

/// [`apply_json6902`], charging what it copies (each `add`/`replace` value, each `copy`) to
/// `budget` first: 40 `copy /data -> /data/cN` operations would make a resource 2^40 times larger.
pub fn apply_json6902_within(target: &mut Value, ops: &Value, budget: &crate::budget::Budget) -> Result<bool, PatchError> {
    let Value::Array(list) = ops else {
        return Err(PatchError::new(format!(
            "json patch must be a list of operations, got: {}",
            serde_json::to_string(ops).unwrap_or_default()
        )));
    };
    let mut changed = false;
    for (i, op) in list.iter().enumerate() {
        let Value::Object(op) = op else {
            return Err(PatchError::new(format!("json patch operation {i} is not a map")));
        };
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("unknown");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("unknown");
        changed |= apply_one(target, kind, path, op, budget).map_err(|e| {
            PatchError::new(format!("json patch operation {i} ({kind} {path}): {e}"))
        })?;
    }
    changed |= normalize_numbers(target);
    Ok(changed)
}

/// Applies one operation; returns whether it changed what it wrote over (for `move` and
/// `copy`, always true: [`reports_changes`] leaves them out).
fn apply_one(doc: &mut Value, kind: &str, path: &str, op: &Map<String, Value>, budget: &crate::budget::Budget) -> Result<bool, String> {
    // Written as the number normalization at the end leaves it, so that what it writes over
    // is compared with what stays.
    let value = || {
        let mut value = op.get("value").cloned().unwrap_or(Value::Null);
        normalize_numbers(&mut value);
        value
    };
    if matches!(kind, "add" | "replace") {
        budget.charge_copies(op.get("value").unwrap_or(&Value::Null), 1).map_err(|e| e.to_string())?;
    }
    match kind {
        "add" => {
            let (parent, key) = find_object(doc, path)
                .ok_or_else(|| format!("add operation does not apply: doc is missing path: \"{path}\": missing value"))?;
            add(parent, &key, value()).map_err(|e| format!("error in add for path: '{path}': {e}"))
        }
        "remove" => {
            let (parent, key) = find_object(doc, path)
                .ok_or_else(|| format!("remove operation does not apply: doc is missing path: \"{path}\": missing value"))?;
            remove(parent, &key).map(|_| true).map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "replace" => {
            let (parent, key) = find_object(doc, path)
                .ok_or_else(|| format!("replace operation does not apply: doc is missing path: {path}: missing value"))?;
            // evanphx v4 sets a missing object key; only a bad array index fails
            let missing = || format!("replace operation does not apply: doc is missing key: {path}: missing value");
            let new = value();
            let old = match parent {
                Value::Object(m) => m.insert(key.clone(), new),
                _ => Some(std::mem::replace(get_mut(parent, &key).map_err(|_| missing())?.ok_or_else(missing)?, new)),
            };
            let written = get_mut(parent, &key).ok().flatten();
            Ok(old.as_ref() != written.as_deref())
        }
        "move" | "copy" => {
            let from = op.get("from").and_then(Value::as_str).unwrap_or("unknown");
            let (parent, key) = find_object(doc, from)
                .ok_or_else(|| format!("{kind} operation does not apply: doc is missing from path: {from}: missing value"))?;
            let val = if kind == "move" {
                remove(parent, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?
            } else {
                // a missing object key copies as null, as in evanphx v4
                let found = get_mut(parent, &key).map_err(|e| format!("error in copy for from: '{from}': {e}"))?;
                if let Some(found) = &found {
                    budget.charge_copies(found, 1).map_err(|e| e.to_string())?;
                }
                found.cloned().unwrap_or(Value::Null)
            };
            let (parent, key) = find_object(doc, path)
                .ok_or_else(|| format!("{kind} operation does not apply: doc is missing destination path: {path}: missing value"))?;
            add(parent, &key, val).map(|_| true).map_err(|e| format!("error in add for path: '{path}': {e}"))
        }
        "test" => {
            let (parent, key) = find_object(doc, path)
                .ok_or_else(|| format!("test operation does not apply: is missing path: {path}: missing value"))?;
            let have = get_mut(parent, &key).ok().flatten().map(|v| &*v);
            let want = op.get("value").unwrap_or(&Value::Null);
            let ok = match have {
                None | Some(Value::Null) => want.is_null(),
                Some(v) => json_equal(v, want),
            };
            if ok {
                Ok(false)
            } else {
                Err(format!("testing value {path} failed: test failed"))
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn decode_key(part: &str) -> String {
    decode_key_cow(part).into_owned()
}

/// [`decode_key`] without a copy for the usual key, which holds no `~`.
fn decode_key_cow(part: &str) -> Cow<'_, str> {
    match part.contains('~') {
        true => Cow::Owned(part.replace("~1", "/").replace("~0", "~")),
        false => Cow::Borrowed(part),
    }
}

/// evanphx `findObject`: the container holding the last path segment, and that segment.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let (parents, last) = path.rsplit_once('/')?;
    let key = decode_key(last);
    let mut cur = doc;
    // The segments before the last one, past the empty one before the leading `/`.
    for part in parents.split('/').skip(1) {
        let part = decode_key_cow(part);
        let next = match cur {
            Value::Object(m) => crate::fast_hash::field_mut(m, &part)?,
            Value::Array(a) => {
                let i = array_index(&part, a.len(), false).ok()?;
                a.get_mut(i)?
            }
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        cur = next;
    }
    if !(cur.is_object() || cur.is_array()) {
        return None;
    }
    Some((cur, key))
}

/// An array index as evanphx reads it; negative counts from the end (of `len`).
fn array_index(key: &str, len: usize, for_add: bool) -> Result<usize, String> {
    let idx: i64 = key.parse().map_err(|_| format!("value was not a proper array index: '{key}'"))?;
    let size = if for_add { len as i64 + 1 } else { len as i64 };
    let invalid = || format!("Unable to access invalid index: {idx}: invalid index referenced");
    let idx = if idx < 0 {
        if idx < -size {
            return Err(invalid());
        }
        idx + size
    } else {
        idx
    };
    if idx >= size {
        return Err(invalid());
    }
    Ok(idx as usize)
}

/// Returns whether the add changed `parent` (an insertion into a list always does).
fn add(parent: &mut Value, key: &str, val: Value) -> Result<bool, String> {
    match parent {
        Value::Object(m) => {
            let old = m.insert(key.to_string(), val);
            Ok(old.as_ref() != m.get(key))
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(val);
                return Ok(true);
            }
            let i = array_index(key, a.len(), true)?;
            a.insert(i, val);
            Ok(true)
        }
        _ => Err(format!("add operation does not apply: doc is missing path: \"{key}\": missing value")),
    }
}

fn remove(parent: &mut Value, key: &str) -> Result<Value, String> {
    match parent {
        Value::Object(m) => m
            .shift_remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Value::Array(a) => {
            let i = array_index(key, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(format!("Unable to remove nonexistent key: {key}: missing value")),
    }
}

fn get_mut<'a>(parent: &'a mut Value, key: &str) -> Result<Option<&'a mut Value>, String> {
    match parent {
        Value::Object(m) => Ok(m.get_mut(key)),
        Value::Array(a) => {
            let i = array_index(key, a.len(), false)?;
            Ok(a.get_mut(i))
        }
        _ => Ok(None),
    }
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The number every value becomes after kustomize's JSON round trip (float64, printed
/// as Go's encoding/json does, read back as YAML): integral values are integers. Returns
/// whether a number changed.
fn normalize_numbers(v: &mut Value) -> bool {
    match v {
        // An integer float64 holds exactly (up to 2^53) reads back as itself.
        Value::Number(n) if n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53) || n.as_u64().is_some_and(|u| u <= 1 << 53) => false,
        Value::Number(n) => {
            let Some(f) = n.as_f64() else { return false };
            let normalized = if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 {
                // shortest digits, as Go prints a float64, then read back as an integer
                let text = format!("{f}");
                match (text.parse::<u64>(), text.parse::<i64>()) {
                    (Ok(u), _) => Some(Number::from(u)),
                    (_, Ok(i)) => Some(Number::from(i)),
                    _ => Number::from_f64(f),
                }
            } else {
                Number::from_f64(f)
            };
            match normalized {
                Some(x) if x != *n => {
                    *n = x;
                    true
                }
                _ => false,
            }
        }
        Value::Array(a) => a.iter_mut().fold(false, |changed, v| normalize_numbers(v) | changed),
        Value::Object(m) => m.values_mut().fold(false, |changed, v| normalize_numbers(v) | changed),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Expected results and error texts were checked with kustomize v5.6.0
    //! (`patches:` with a target and an inline JSON 6902 patch).
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
               "data": {"a": "1"}, "l": [1, 2, 3], "n": 1.0, "m": {"x": ["a", "b"]}})
    }

    fn apply(ops: Value) -> Result<Value, PatchError> {
        let mut d = doc();
        apply_json6902(&mut d, &ops).map(|_| d)
    }

    #[test]
    fn add_appends_with_dash_length_and_minus_one() {
        for path in ["/l/-", "/l/3", "/l/-1"] {
            assert_eq!(apply(json!([{"op": "add", "path": path, "value": 4}])).unwrap()["l"], json!([1, 2, 3, 4]));
        }
        assert_eq!(apply(json!([{"op": "add", "path": "/l/-4", "value": 4}])).unwrap()["l"], json!([4, 1, 2, 3]));
    }

    #[test]
    fn escaped_segments_are_decoded_along_the_whole_path() {
        // RFC 6901: `~1` is `/` and `~0` is `~`, in the parents' segments as in the last one.
        let d = apply(json!([
            {"op": "add", "path": "/a~1b", "value": {"x~y": {}}},
            {"op": "add", "path": "/a~1b/x~0y/c~1d", "value": 1},
        ]))
        .unwrap();
        assert_eq!(d["a/b"], json!({"x~y": {"c/d": 1}}));
        // An unescaped `/` is a separator: there is no `a` to add into.
        assert!(apply(json!([{"op": "add", "path": "/a/b/c", "value": 1}])).is_err());
    }

    #[test]
    fn add_beyond_the_end_is_an_error() {
        let e = apply(json!([{"op": "add", "path": "/l/4", "value": 4}])).unwrap_err();
        assert!(e.0.ends_with("error in add for path: '/l/4': Unable to access invalid index: 4: invalid index referenced"), "{e}");
        assert!(e.0.starts_with("json patch operation 0 (add /l/4)"), "{e}");
    }

    #[test]
    fn remove_missing_key_is_an_error_with_the_path() {
        let e = apply(json!([{"op": "remove", "path": "/data/zz"}])).unwrap_err();
        assert!(e.0.ends_with("error in remove for path: '/data/zz': Unable to remove nonexistent key: zz: missing value"), "{e}");
        assert_eq!(apply(json!([{"op": "remove", "path": "/l/-1"}])).unwrap()["l"], json!([1, 2]));
    }

    /// evanphx v4 `replace` sets a missing object key but rejects a missing index.
    #[test]
    fn replace_missing_key_adds_it_but_missing_index_fails() {
        assert_eq!(apply(json!([{"op": "replace", "path": "/data/zz", "value": 1}])).unwrap()["data"], json!({"a": "1", "zz": 1}));
        let e = apply(json!([{"op": "replace", "path": "/l/5", "value": 1}])).unwrap_err();
        assert!(e.0.ends_with("replace operation does not apply: doc is missing key: /l/5: missing value"), "{e}");
    }

    #[test]
    fn add_under_missing_parent_is_an_error() {
        let e = apply(json!([{"op": "add", "path": "/x/y", "value": 1}])).unwrap_err();
        assert!(e.0.ends_with("add operation does not apply: doc is missing path: \"/x/y\": missing value"), "{e}");
    }

    #[test]
    fn test_op_compares_numbers_by_value() {
        assert!(apply(json!([{"op": "test", "path": "/n", "value": 1}])).is_ok());
        let e = apply(json!([{"op": "test", "path": "/n", "value": 2}])).unwrap_err();
        assert!(e.0.ends_with("testing value /n failed: test failed"));
        assert!(apply(json!([{"op": "test", "path": "/nope", "value": null}])).is_ok());
    }

    #[test]
    fn move_and_copy() {
        let d = apply(json!([{"op": "move", "from": "/m/x", "path": "/data/x"}])).unwrap();
        assert_eq!(d["data"]["x"], json!(["a", "b"]));
        assert_eq!(d["m"], json!({}));
        let d = apply(json!([{"op": "copy", "from": "/m/x/0", "path": "/m/x/-"}])).unwrap();
        assert_eq!(d["m"]["x"], json!(["a", "b", "a"]));
    }

    #[test]
    fn unknown_op_is_an_error() {
        let e = apply(json!([{"op": "bogus", "path": "/a"}])).unwrap_err();
        assert!(e.0.ends_with("Unexpected kind: bogus"));
    }

    /// Where its answer is sure, the patch says exactly whether it changed the target.
    #[test]
    fn the_patch_reports_exactly_whether_it_changed_the_target() {
        let sure = [
            json!([]),
            json!([{"op": "replace", "path": "/data/a", "value": "1"}]),
            json!([{"op": "replace", "path": "/data/a", "value": "2"}]),
            json!([{"op": "add", "path": "/data/a", "value": "1"}, {"op": "add", "path": "/data/b", "value": "2"}]),
            json!([{"op": "add", "path": "/data/a", "value": "1"}, {"op": "test", "path": "/data/a", "value": "1"}]),
            json!([{"op": "remove", "path": "/data/a"}]),
            json!([{"op": "add", "path": "/l/-", "value": 4}]),
            json!([{"op": "replace", "path": "/l/0", "value": 1}, {"op": "replace", "path": "/m/x/1", "value": "b"}]),
            json!([{"op": "replace", "path": "/l/0", "value": 1.0}]),
            json!([{"op": "replace", "path": "/l/0", "value": 2}]),
            json!([{"op": "replace", "path": "/m", "value": {"x": ["a", "b"]}}]),
            json!([{"op": "add", "path": "/m/y", "value": null}]),
        ];
        // As doc(), with a whole number the round trip leaves as it is.
        let before = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
               "data": {"a": "1"}, "l": [1, 2, 3], "n": 1, "m": {"x": ["a", "b"]}});
        let mut unchanged = 0;
        for ops in sure {
            assert!(reports_changes(&ops), "{ops}");
            let mut after = before.clone();
            let changed = apply_json6902(&mut after, &ops).unwrap();
            assert_eq!(changed, after != before, "{ops}: the report differs from the truth");
            unchanged += usize::from(!changed);
        }
        assert_eq!(unchanged, 6, "cases that change nothing");
        // A float the round trip makes whole changes the target even where no operation writes.
        let mut d = json!({"n": 1.0, "a": "x"});
        assert!(apply_json6902(&mut d, &json!([{"op": "replace", "path": "/a", "value": "x"}])).unwrap());
        // Operations that could undo one another: the caller compares instead.
        for ops in [
            json!([{"op": "add", "path": "/data/a", "value": "2"}, {"op": "replace", "path": "/data/a", "value": "1"}]),
            json!([{"op": "add", "path": "/l/0", "value": 0}, {"op": "remove", "path": "/l/1"}]),
            json!([{"op": "replace", "path": "/l/0", "value": 0}, {"op": "replace", "path": "/l/1", "value": 1}]),
            json!([{"op": "add", "path": "/m", "value": {}}, {"op": "add", "path": "/m/x", "value": 1}]),
            json!([{"op": "move", "from": "/data/a", "path": "/data/b"}]),
            json!([{"op": "copy", "from": "/data/a", "path": "/data/b"}]),
            json!({"op": "add"}),
        ] {
            assert!(!reports_changes(&ops), "{ops}");
        }
    }

    /// kustomize round-trips the object through float64 JSON: 1.0 -> 1, big ints lose digits.
    #[test]
    fn numbers_go_through_float64() {
        let mut d = json!({"h": 1.0, "r": 1000000, "big": 12345678901234567890u64, "f": 0.5});
        apply_json6902(&mut d, &json!([])).unwrap();
        assert_eq!(d, json!({"h": 1, "r": 1000000, "big": 12345678901234567000u64, "f": 0.5}));
        // 2^53 is the last integer a float64 holds with its neighbours; 2^53 + 1 rounds to even.
        let mut d = json!([9007199254740992u64, 9007199254740993u64, -9007199254740992i64, -9007199254740993i64, -7, 0]);
        apply_json6902(&mut d, &json!([])).unwrap();
        assert_eq!(d, json!([9007199254740992u64, 9007199254740992u64, -9007199254740992i64, -9007199254740992i64, -7, 0]));
    }
}
