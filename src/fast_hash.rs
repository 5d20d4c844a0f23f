//! Fast hashing for what a build indexes: the maps and sets keyed by ids, names and paths, and a
//! digest of a JSON value that tells whether a write changed it.
//!
//! std's default hasher (SipHash) resists keys chosen to collide even by someone who sees the
//! output; foldhash is several times faster on the short strings a build hashes. Its seed is
//! random per process, so colliding keys cannot be prepared in advance, and every key hashed here
//! comes from the files of the build itself, whose size the budget bounds: at worst a crafted
//! tree makes its own build slower. SipHash stays where the keys are not the build's own
//! (serde_json's `Map`, which we do not choose).
use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::Value;

/// The hasher of every map and set below.
pub type FastState = foldhash::fast::RandomState;
pub type FastHashMap<K, V> = std::collections::HashMap<K, V, FastState>;
pub type FastHashSet<K> = std::collections::HashSet<K, FastState>;
pub type FastIndexMap<K, V> = indexmap::IndexMap<K, V, FastState>;
pub type FastIndexSet<K> = indexmap::IndexSet<K, FastState>;

/// A digest of `value` that is equal for equal values (`==`: a mapping's key order does not
/// count, a list's order does) and, but for a chance of about 2^-64 per pair, differs for
/// different ones. It reads the value without copying any of it.
pub fn digest(value: &Value, state: &Digester) -> u64 {
    let mut h = state.0.build_hasher();
    feed(value, &state.0, &mut h);
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

fn feed(value: &Value, state: &foldhash::quality::RandomState, h: &mut impl Hasher) {
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
        Value::Array(items) => {
            h.write_u8(6);
            h.write_usize(items.len());
            for item in items {
                feed(item, state, h);
            }
        }
        // Each entry digested on its own and the digests added: the sum does not depend on the
        // order of the entries, as the map's equality does not.
        Value::Object(map) => {
            h.write_u8(7);
            h.write_usize(map.len());
            let mut sum = 0u64;
            for (key, item) in map {
                let mut entry = state.build_hasher();
                key.hash(&mut entry);
                feed(item, state, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
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
    fn zero_and_negative_zero_are_equal_as_serde_json_says() {
        let (a, b) = (json!(0.0), json!(-0.0));
        assert_eq!(a, b);
        assert!(same(&a, &b));
    }
}
