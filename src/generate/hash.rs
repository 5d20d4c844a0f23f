//! kustomize's content hash for generated names (`name-<hash>`).
use serde_json::Value;

use crate::resource::ResMap;
use crate::yaml::go_json_text::{go_json_into, JsonSink};
use sha2::{Digest, Sha256};

/// Feeds the JSON encoding straight into SHA-256, without building the text.
struct Digesting(Sha256);

impl JsonSink for Digesting {
    fn put(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }
}

/// The ten-character suffix kustomize appends to a ConfigMap's or Secret's name.
///
/// kustomize hashes a JSON encoding of only some fields: for a ConfigMap `data` and `binaryData`,
/// for a Secret `data`, `stringData` and `type`; the name is looked up under a path kyaml does not
/// resolve, so it is always empty, and `immutable` is not included. Other kinds hash the whole object.
/// The encoded object's keys are written in Go's sorted order.
pub fn content_hash(resource: &Value) -> String {
    let field = |k: &str| resource.get(k);
    let mut out = Digesting(Sha256::new());
    match resource.get("kind").and_then(Value::as_str) {
        Some("ConfigMap") => {
            out.put("{");
            if let Some(b @ Value::Object(_)) = field("binaryData") {
                out.put("\"binaryData\":");
                go_json_into(b, &mut out);
                out.put(",");
            }
            out.put("\"data\":");
            map_or_empty(field("data"), &mut out);
            out.put(",\"kind\":\"ConfigMap\",\"name\":\"\"}");
        }
        Some("Secret") => {
            out.put("{\"data\":");
            map_or_empty(field("data"), &mut out);
            out.put(",\"kind\":\"Secret\",\"name\":\"\"");
            if let Some(s @ Value::Object(_)) = field("stringData") {
                out.put(",\"stringData\":");
                go_json_into(s, &mut out);
            }
            out.put(",\"type\":");
            match field("type") {
                None | Some(Value::Object(_) | Value::Array(_) | Value::Null) => out.put("\"\""),
                Some(scalar) => go_json_into(scalar, &mut out),
            }
            out.put("}");
        }
        _ => go_json_into(resource, &mut out),
    }
    // kustomize's hex digits with 0, 1, 3, a and e swapped for letters.
    const DIGITS: &[u8; 16] = b"gh2k456789mbcdtf";
    out.0.finalize()[..5]
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 0xf)] as char])
        .collect()
}

/// A map as itself, anything else as an empty string.
fn map_or_empty(v: Option<&Value>, out: &mut Digesting) {
    match v {
        Some(m @ Value::Object(_)) => go_json_into(m, out),
        _ => out.put("\"\""),
    }
}

/// Generated ConfigMaps and Secrets get `-<hash of their final content>` appended to their names.
pub(crate) fn add_hash_suffixes(resources: &mut ResMap) {
    let _ = resources.try_update_parallel(|r| {
        if !r.needs_hash_suffix {
            return Ok(false);
        }
        let hash = content_hash(&r.value);
        let name = format!("{}-{hash}", r.name());
        r.set_name(&name);
        r.needs_hash_suffix = false;
        Ok::<bool, std::convert::Infallible>(true)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::go_json_text::go_json;
    use serde_json::json;

    // Expected suffixes produced by kustomize v5.6.0 for the same generator input.
    #[test]
    fn configmap_hash_ignores_name_and_immutable() {
        let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}});
        let b = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"x": "1"}, "immutable": true});
        assert_eq!(content_hash(&a), "hmg6f82fh6");
        assert_eq!(content_hash(&b), "hmg6f82fh6");
    }

    #[test]
    fn configmap_without_data_hashes_an_empty_string() {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty"}});
        assert_eq!(content_hash(&v), "6ct58987ht");
    }

    #[test]
    fn secret_hash_includes_type() {
        let opaque = json!({"kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque", "data": {"x": "MQ=="}});
        let tls = json!({"kind": "Secret", "metadata": {"name": "s2"}, "type": "kubernetes.io/tls", "data": {"x": "MQ=="}});
        assert_eq!(content_hash(&opaque), "bf2648c599");
        assert_eq!(content_hash(&tls), "79cg2k2tfk");
    }

    // kustomize v5.8.1 named these `esc-b7gmb7bf86` and `sec-d8bm4bdbg9` (configMapGenerator and
    // secretGenerator literals, keys given out of order): escapes, U+2028/U+2029 and sorting.
    #[test]
    fn hash_of_escaped_unsorted_data_is_kustomizes() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "esc"},
            "data": {"z": "<a> & b", "ctl": "tab\there\u{1}\u{8}q\"\\", "ls": "x\u{2028}y\u{2029}z é"}});
        assert_eq!(content_hash(&cm), "b7gmb7bf86");
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec"},
            "type": "kubernetes.io/tls", "data": {"tls.key": "PGs+", "tls.crt": "YyY="}});
        assert_eq!(content_hash(&secret), "d8bm4bdbg9");
    }

    #[test]
    fn go_json_escapes_html_characters_and_sorts_keys() {
        assert_eq!(go_json(&json!({"b": "<&>", "a": 1})), r#"{"a":1,"b":"\u003c\u0026\u003e"}"#);
    }
}
