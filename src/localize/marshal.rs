//! The localized kustomization file as kustomize writes it: its typed `Kustomization` marshalled
//! through JSON to YAML (`sigs.k8s.io/yaml`), so every mapping's keys come out in go-yaml v2's
//! order, empty fields are dropped (`omitempty`) and the few fields without `omitempty` are
//! always written. Unknown fields cannot occur: decoding has refused them before.
use serde_json::{Map, Value};

/// Fields whose values are user maps, written as they are (only sorted): a `false`, `""` or
/// empty value inside them is data, not an unset field.
const USER_MAPS: &[&str] = &["annotations", "commonAnnotations", "commonLabels", "labels", "openapi", "pairs", "valuesInline", "valuesLocal"];

/// Lists of structs whose entries have a field without `omitempty`, and that field's zero value.
const ALWAYS_WRITTEN: &[(&str, &str, fn() -> Value)] = &[
    ("replicas", "count", || Value::from(0)),
    ("targets", "select", || Value::Null),
    ("vars", "name", || Value::from("")),
    ("vars", "objref", || Value::Object(Map::new())),
    ("vars", "fieldref", || Value::Object(Map::new())),
    ("legacySortOptions", "orderFirst", || Value::Null),
    ("legacySortOptions", "orderLast", || Value::Null),
    ("objref", "name", || Value::from("")),
];

/// The YAML text of a kustomization (a mapping of canonical field names).
pub fn kustomization_yaml(kustomization: &Value) -> String {
    let mut out = String::new();
    let typed = as_typed(kustomization, "", false);
    let typed = if typed.is_null() { Value::Object(Map::new()) } else { typed };
    if typed.as_object().is_some_and(Map::is_empty) {
        return "{}\n".into();
    }
    crate::yaml::emit::emit_document(&typed, &mut out);
    out
}

/// `value` (the field `field` of a struct, or an entry of that field's list) as Go's marshal
/// writes it: struct fields at their zero value dropped, keys in go-yaml v2's order.
fn as_typed(value: &Value, field: &str, user_map: bool) -> Value {
    match value {
        Value::Object(map) if user_map => Value::Object(sorted(map.iter().map(|(k, v)| (k.clone(), sort_keys(v))).collect())),
        Value::Object(map) => {
            let mut fields: Vec<(String, Value)> = Vec::new();
            for (key, v) in map {
                let inner_user_map = USER_MAPS.contains(&key.as_str()) || (key == "options" && matches!(field, "patches" | "patchesJson6902"));
                let typed = as_typed(v, key, inner_user_map && v.is_object());
                if is_zero(&typed) && !always_written(field, key) {
                    continue;
                }
                fields.push((key.clone(), typed));
            }
            for (list, key, zero) in ALWAYS_WRITTEN {
                if *list == field && !fields.iter().any(|(k, _)| k == key) {
                    fields.push((key.to_string(), as_typed(&zero(), key, false)));
                }
            }
            Value::Object(sorted(fields))
        }
        // A list's entries are of the list field's type.
        Value::Array(items) => Value::Array(items.iter().map(|item| as_typed(item, field, false)).collect()),
        other => other.clone(),
    }
}

fn always_written(field: &str, key: &str) -> bool {
    ALWAYS_WRITTEN.iter().any(|(list, k, _)| *list == field && *k == key)
}

/// Go's `omitempty` zero: null, `false`, 0, `""`, an empty list or map. (A struct held by value
/// is never empty in Go; those fields are all in [`ALWAYS_WRITTEN`].)
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(sorted(map.iter().map(|(k, v)| (k.clone(), sort_keys(v))).collect())),
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

fn sorted(mut fields: Vec<(String, Value)>) -> Map<String, Value> {
    fields.sort_by(|(a, _), (b, _)| go_yaml_v2_key_order(a, b));
    fields.into_iter().collect()
}

/// go-yaml v2's order of string keys (`keyList.Less`): letters after other characters, runs of
/// digits compared as numbers.
pub fn go_yaml_v2_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let less = |x: bool| if x { Ordering::Less } else { Ordering::Greater };
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return less(bl);
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            // A zero inside a number is a digit like any other.
            if ar[..i].iter().rev().take_while(|c| c.is_ascii_digit()).any(|&c| c != '0') {
                an = 1;
                bn = 1;
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_come_out_sorted_and_empty_ones_dropped() {
        let k = json!({"resources": ["a.yaml"], "kind": "Kustomization", "namePrefix": "", "components": [],
            "apiVersion": "v1", "commonLabels": {"z": "", "a": "1"}});
        assert_eq!(kustomization_yaml(&k), "apiVersion: v1\ncommonLabels:\n  a: \"1\"\n  z: \"\"\nkind: Kustomization\nresources:\n- a.yaml\n");
    }

    #[test]
    fn fields_without_omitempty_are_always_written() {
        let k = json!({"replicas": [{"name": "app"}], "replacements": [{"source": {"name": "x"}, "targets": [{"fieldPaths": ["a"]}]}]});
        assert_eq!(
            kustomization_yaml(&k),
            "replacements:\n- source:\n    name: x\n  targets:\n  - fieldPaths:\n    - a\n    select: null\nreplicas:\n- count: 0\n  name: app\n"
        );
    }

    #[test]
    fn patch_options_are_a_map_and_keep_false() {
        let k = json!({"patches": [{"path": "p.yaml", "options": {"allowNameChange": false}}]});
        assert_eq!(kustomization_yaml(&k), "patches:\n- options:\n    allowNameChange: false\n  path: p.yaml\n");
    }

    #[test]
    fn keys_sort_as_go_yaml_v2_sorts_them() {
        let mut keys = vec!["b", "a10", "a2", "A", "_x", "a"];
        keys.sort_by(|a, b| go_yaml_v2_key_order(a, b));
        assert_eq!(keys, ["_x", "A", "a", "a2", "a10", "b"]);
        assert_eq!(kustomization_yaml(&json!({})), "{}\n");
    }
}
