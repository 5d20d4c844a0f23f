//! Fast hashing for what a build indexes: the maps and sets keyed by ids, names and paths, a
//! digest of a JSON value that tells whether a write changed it, and key lookups in a JSON
//! mapping that hash only when the mapping is large.
//!
//! std's default hasher (SipHash) resists keys chosen to collide even by someone who sees the
//! output; foldhash is several times faster on the short strings a build hashes. Its seed is
//! random per process, so colliding keys cannot be prepared in advance, and every key hashed here
//! comes from the files of the build itself, whose size the budget bounds: at worst a crafted
//! tree makes its own build slower. serde_json's `Map` hashes with foldhash too: built without
//! its `std` feature, it takes foldhash's state instead of std's (Cargo.toml).
use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::{Map, Value};

/// The hasher of every map and set below.
pub type FastState = foldhash::fast::RandomState;
pub type FastHashMap<K, V> = std::collections::HashMap<K, V, FastState>;
pub type FastHashSet<K> = std::collections::HashSet<K, FastState>;
pub type FastIndexMap<K, V> = indexmap::IndexMap<K, V, FastState>;
pub type FastIndexSet<K> = indexmap::IndexSet<K, FastState>;

/// Mappings up to this size are searched key by key: serde_json's `Map` hashes a key for every
/// lookup, which costs more than comparing a few short keys, foldhash or not (the 500-app build
/// hashing every lookup: 2,577 M instructions, against 2,471 M).
pub const SCAN: usize = 8;

/// `map.get(key)`, without hashing `key` when the mapping is small.
#[inline]
pub fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    match map.len() {
        0..=SCAN => map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v),
        _ => map.get(key),
    }
}

/// `map.get_mut(key)`, without hashing `key` when the mapping is small.
#[inline]
pub fn field_mut<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    match map.len() {
        0..=SCAN => map.iter_mut().find(|(k, _)| k.as_str() == key).map(|(_, v)| v),
        _ => map.get_mut(key),
    }
}

/// `value.get(key)` for a mapping (None for anything else), as [`field`].
#[inline]
pub fn get<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object().and_then(|map| field(map, key))
}

/// A digest of `value` that is equal for equal values (`==`: a mapping's key order does not
/// count, a list's order does) and, but for a chance of about 2^-64 per pair, differs for
/// different ones. It reads the value without copying any of it.
pub fn digest(value: &Value, state: &Digester) -> u64 {
    let mut h = state.0.build_hasher();
    feed(value, &state.0, None, &mut h);
    h.finish()
}

/// [`digest`] of a list held as `items`, its mappings read without their entries named
/// `skipped` at any depth: equal digests for lists equal but for those entries.
pub fn digest_items(items: &[Value], state: &Digester, skipped: Option<&str>) -> u64 {
    let mut h = state.0.build_hasher();
    feed_items(items, &state.0, skipped, &mut h);
    h.finish()
}

/// The seed one digest comparison uses (both sides must use the same).
pub struct Digester(foldhash::quality::RandomState);

impl Digester {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Digester(foldhash::quality::RandomState::default())
    }
}

fn feed_items(items: &[Value], state: &foldhash::quality::RandomState, skipped: Option<&str>, h: &mut impl Hasher) {
    h.write_u8(6);
    h.write_usize(items.len());
    for item in items {
        feed(item, state, skipped, h);
    }
}

fn feed(value: &Value, state: &foldhash::quality::RandomState, skipped: Option<&str>, h: &mut impl Hasher) {
    match value {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => {
            h.write_u8(1);
            b.hash(h);
        }
        // serde_json's numbers are equal when they are the same variant with the same value
        // (5 and 5.0 differ; 0.0 and -0.0 do not).
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => {
                h.write_u8(2);
                h.write_u64(u);
            }
            (None, Some(i), _) => {
                h.write_u8(3);
                h.write_i64(i);
            }
            (None, None, f) => {
                h.write_u8(4);
                let f = f.unwrap_or_default();
                h.write_u64(if f == 0.0 { 0 } else { f.to_bits() });
            }
        },
        Value::String(s) => {
            h.write_u8(5);
            s.hash(h);
        }
        Value::Array(items) => feed_items(items, state, skipped, h),
        // Each entry digested on its own and the digests added: the sum does not depend on the
        // order of the entries, as the map's equality does not.
        Value::Object(map) => {
            h.write_u8(7);
            let mut sum = 0u64;
            let mut len = 0usize;
            for (key, item) in map.iter().filter(|(key, _)| Some(key.as_str()) != skipped) {
                let mut entry = state.build_hasher();
                key.hash(&mut entry);
                feed(item, state, skipped, &mut entry);
                sum = sum.wrapping_add(entry.finish());
                len += 1;
            }
            h.write_usize(len);
            h.write_u64(sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same(a: &Value, b: &Value) -> bool {
        let d = Digester::new();
        digest(a, &d) == digest(b, &d)
    }

    /// serde_json does not say which hasher its `Map` has, but the hasher is part of the map's
    /// layout, and foldhash's is half the size of std's. A dependency that turns on serde_json's
    /// `std` feature brings SipHash back to every mapping of every resource.
    #[test]
    fn serde_jsons_map_hashes_with_foldhash() {
        use std::mem::size_of;
        type WithFoldhash = indexmap::IndexMap<String, Value, FastState>;
        type WithSipHash = indexmap::IndexMap<String, Value, std::hash::RandomState>;
        assert_ne!(size_of::<WithFoldhash>(), size_of::<WithSipHash>(), "the two hashers no longer differ in size");
        assert_eq!(size_of::<Map<String, Value>>(), size_of::<WithFoldhash>(), "serde_json's Map hashes with SipHash: is its `std` feature on?");
    }

    #[test]
    fn equal_values_have_equal_digests_whatever_their_key_order() {
        let a = json!({"a": 1, "b": {"x": [1, 2], "y": null}});
        let b: Value = serde_json::from_str(r#"{"b": {"y": null, "x": [1, 2]}, "a": 1}"#).unwrap();
        assert_eq!(a, b);
        assert!(same(&a, &b));
    }

    #[test]
    fn different_values_have_different_digests() {
        let cases = [
            (json!([1, 2]), json!([2, 1])),
            (json!({"a": 1}), json!({"a": 1.0})),
            (json!({"a": 1}), json!({"a": -1})),
            (json!({"a": "1"}), json!({"a": 1})),
            (json!({"a": null}), json!({})),
            (json!({"a": {"b": 1}, "c": 2}), json!({"a": {"b": 2}, "c": 1})),
            (json!({"a": 1, "b": 2}), json!({"a": 2, "b": 1})),
            (json!({"a": [{"b": "x"}]}), json!({"a": [{"b": "y"}]})),
            (json!([[], [1]]), json!([[1], []])),
            (json!({"ab": "c"}), json!({"a": "bc"})),
            (json!(false), json!(null)),
        ];
        for (a, b) in cases {
            assert_ne!(a, b);
            assert!(!same(&a, &b), "{a} and {b} have the same digest");
        }
    }

    #[test]
    fn a_lists_digest_leaves_out_the_skipped_key_at_any_depth_and_nothing_else() {
        let d = Digester::new();
        let items = |v: Value| v.as_array().unwrap().clone();
        let digest_of = |v: Value, skipped| digest_items(&items(v), &d, skipped);
        let plain = json!([{"name": "a", "ports": [{"port": 1}]}, "x"]);
        let marked = json!([{"name": "a", "$mark": 1, "ports": [{"port": 1, "$mark": {"b": 2}}]}, "x"]);
        assert_eq!(digest_of(plain.clone(), Some("$mark")), digest_of(marked.clone(), Some("$mark")));
        assert_ne!(digest_of(plain.clone(), None), digest_of(marked, None));
        // A list's digest is its value's as a list.
        assert_eq!(digest_of(plain.clone(), None), digest(&plain, &d));
        let changed = [
            json!([{"name": "a", "ports": [{"port": 2}]}, "x"]),
            json!(["x", {"name": "a", "ports": [{"port": 1}]}]),
            json!([{"name": "a", "ports": [{"port": 1}]}]),
            json!([{"name": "a", "$marks": 1, "ports": [{"port": 1}]}, "x"]),
        ];
        for other in changed {
            assert_ne!(digest_of(plain.clone(), Some("$mark")), digest_of(other.clone(), Some("$mark")), "{other}");
        }
    }

    #[test]
    fn lookups_find_what_the_map_finds_small_or_large() {
        for size in [0, 1, 2, 8, 9, 40] {
            let mut map: Map<String, Value> = (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            for key in ["k0", "k7", "k8", "k39", "missing", ""] {
                assert_eq!(field(&map, key), map.get(key), "{size} {key}");
                let expected = map.get(key).cloned();
                assert_eq!(field_mut(&mut map, key).map(|v| v.clone()), expected, "{size} {key}");
                let value = Value::Object(map.clone());
                assert_eq!(get(&value, key), value.get(key), "{size} {key}");
            }
        }
        assert_eq!(get(&json!([1]), "k0"), None);
    }

    #[test]
    fn zero_and_negative_zero_are_equal_as_serde_json_says() {
        let (a, b) = (json!(0.0), json!(-0.0));
        assert_eq!(a, b);
        assert!(same(&a, &b));
    }
}
