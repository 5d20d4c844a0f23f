//! kustomize's content hash for generated names (`name-<hash>`).
use serde_json::Value;

use crate::resource::ResMap;
use crate::yaml::go_json_text::go_json;
use sha2::{Digest, Sha256};

/// The ten-character suffix kustomize appends to a ConfigMap's or Secret's name.
///
/// kustomize hashes a JSON encoding of only some fields: for a ConfigMap `data` and `binaryData`,
/// for a Secret `data`, `stringData` and `type`; the name is looked up under a path kyaml does not
/// resolve, so it is always empty, and `immutable` is not included. Other kinds hash the whole object.
pub fn content_hash(resource: &Value) -> String {
    let field = |k: &str| resource.get(k);
    let encoded = match resource.get("kind").and_then(Value::as_str) {
        Some("ConfigMap") => {
            let mut m = serde_json::Map::new();
            m.insert("data".into(), map_or_empty(field("data")));
            m.insert("kind".into(), Value::String("ConfigMap".into()));
            m.insert("name".into(), Value::String(String::new()));
            if let Some(b @ Value::Object(_)) = field("binaryData") {
                m.insert("binaryData".into(), b.clone());
            }
            go_json(&Value::Object(m))
        }
        Some("Secret") => {
            let mut m = serde_json::Map::new();
            m.insert("data".into(), map_or_empty(field("data")));
            m.insert("kind".into(), Value::String("Secret".into()));
            m.insert("name".into(), Value::String(String::new()));
            m.insert("type".into(), field("type").cloned().map(scalar_or_empty).unwrap_or(Value::String(String::new())));
            if let Some(s @ Value::Object(_)) = field("stringData") {
                m.insert("stringData".into(), s.clone());
            }
            go_json(&Value::Object(m))
        }
        _ => go_json(resource),
    };
    let digest = Sha256::digest(encoded.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    hex.chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect()
}

fn map_or_empty(v: Option<&Value>) -> Value {
    match v {
        Some(m @ Value::Object(_)) => m.clone(),
        _ => Value::String(String::new()),
    }
}

fn scalar_or_empty(v: Value) -> Value {
    match v {
        Value::Object(_) | Value::Array(_) | Value::Null => Value::String(String::new()),
        other => other,
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

    #[test]
    fn go_json_escapes_html_characters_and_sorts_keys() {
        assert_eq!(go_json(&json!({"b": "<&>", "a": 1})), r#"{"a":1,"b":"\u003c\u0026\u003e"}"#);
    }
}
