//! The localized kustomization file as kustomize writes it: its typed `Kustomization` marshalled
//! through JSON to YAML (`sigs.k8s.io/yaml`, go-yaml v2, which the project's emitter reproduces,
//! key order included), so empty fields are dropped (`omitempty`) and the few fields without
//! `omitempty` are always written. Unknown fields cannot occur: decoding has refused them before.
use serde_json::{Map, Value};

/// Fields whose values are user maps, written as they are (only sorted): a `false`, `""` or
/// empty value inside them is data, not an unset field.
const USER_MAPS: &[&str] = &["annotations", "commonAnnotations", "commonLabels", "labels", "openapi", "pairs", "valuesInline", "valuesLocal"];

/// Field names of the types under `Kustomization` that the decoder's canonical names
/// (`kustomization::types`) leave out: Go's decoder matches them case-insensitively, and the
/// marshal writes them as spelled here (`fieldpath:` comes out as `fieldPath:`).
const MORE_FIELD_NAMES: &[&str] = &[
    "additionalValuesFiles", "apiVersions", "chartHome", "chartName", "chartRepoName", "chartRepoUrl", "chartVersion",
    "configHome", "debug", "delimiter", "devel", "encoding", "extraArgs", "fieldPath", "fieldPaths", "fieldref",
    "helmBin", "helmHome", "includeCRDs", "index", "kubeVersion", "nameTemplate", "objref", "order", "reject",
    "releaseName", "releaseNamespace", "repo", "select", "skipHooks", "skipTests", "source", "sourceValue", "targets",
    "values", "valuesFile", "valuesInline", "valuesLocal", "valuesMerge",
];

/// A struct field's zero value.
type Zero = fn() -> Value;

/// Lists of structs whose entries have a field without `omitempty`, and that field's zero value.
const ALWAYS_WRITTEN: &[(&str, &str, Zero)] = &[
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
/// writes it: struct fields at their zero value dropped. (The emitter orders keys as go-yaml v2.)
fn as_typed(value: &Value, field: &str, user_map: bool) -> Value {
    match value {
        Value::Object(_) if user_map => value.clone(),
        Value::Object(map) => {
            let mut fields: Vec<(String, Value)> = Vec::new();
            for (key, v) in map {
                let key = MORE_FIELD_NAMES.iter().find(|n| n.eq_ignore_ascii_case(key)).map_or(key.as_str(), |n| n);
                let inner_user_map = USER_MAPS.contains(&key) || (key == "options" && matches!(field, "patches" | "patchesJson6902"));
                let typed = as_typed(v, key, inner_user_map && v.is_object());
                if is_zero(&typed) && !always_written(field, key) {
                    continue;
                }
                fields.push((key.to_string(), typed));
            }
            for (list, key, zero) in ALWAYS_WRITTEN {
                if *list == field && !fields.iter().any(|(k, _)| k == key) {
                    fields.push((key.to_string(), as_typed(&zero(), key, false)));
                }
            }
            Value::Object(fields.into_iter().collect())
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
    fn field_names_are_written_as_go_spells_them() {
        let k = json!({"vars": [{"name": "A", "objref": {"kind": "Bee", "name": "b"}, "FieldRef": {"fieldpath": "spec.x"}}],
            "helmCharts": [{"name": "c", "valuesinline": {"fieldpath": 1}}]});
        assert_eq!(
            kustomization_yaml(&k),
            "helmCharts:\n- name: c\n  valuesInline:\n    fieldpath: 1\nvars:\n- fieldref:\n    fieldPath: spec.x\n  name: A\n  objref:\n    kind: Bee\n    name: b\n"
        );
    }

    #[test]
    fn patch_options_are_a_map_and_keep_false() {
        let k = json!({"patches": [{"path": "p.yaml", "options": {"allowNameChange": false}}]});
        assert_eq!(kustomization_yaml(&k), "patches:\n- options:\n    allowNameChange: false\n  path: p.yaml\n");
    }

    #[test]
    fn keys_come_out_in_go_yaml_v2_order_and_an_empty_kustomization_is_braces() {
        let k = json!({"b": {"a10": "x", "a2": "y", "A": "z", "_x": "w"}, "a": "1"});
        assert_eq!(kustomization_yaml(&k), "a: \"1\"\nb:\n  _x: w\n  A: z\n  a2: \"y\"\n  a10: x\n");
        assert_eq!(kustomization_yaml(&json!({})), "{}\n");
    }
}
