//! The serde types of `kustomization.yaml` (kustomize v5's `Kustomization`, also used for `Component`).
//! Go's types and decoding rules for the same fields, and the checks made with them before these
//! types are filled, are in [`super::go_json`]: a field added here is a line in its table too.
use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A string-to-string map. A kustomization reaches these types through [`super::go_json`],
/// which refuses a number or boolean value as kustomize does; the builtin plugin configs read
/// through them still take such a value as its text.
pub type StringMap = IndexMap<String, String>;

/// Every field of kustomize v5's Kustomization; unknown fields are rejected.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Kustomization {
    #[serde(default, deserialize_with = "lenient_string")]
    pub api_version: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub kind: String,
    #[serde(default)]
    pub metadata: Option<Value>,
    #[serde(default, deserialize_with = "lenient_map")]
    pub openapi: StringMap,
    #[serde(default, deserialize_with = "lenient_string")]
    pub name_prefix: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub name_suffix: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub namespace: String,
    #[serde(default, deserialize_with = "lenient_map")]
    pub common_labels: StringMap,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub labels: Vec<Label>,
    #[serde(default, deserialize_with = "lenient_map")]
    pub common_annotations: StringMap,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub patches_strategic_merge: Vec<String>,
    #[serde(default, rename = "patchesJson6902", deserialize_with = "nullable_vec")]
    pub patches_json6902: Vec<Patch>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub patches: Vec<Patch>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub images: Vec<Image>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub image_tags: Vec<Image>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub replacements: Vec<Value>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub replicas: Vec<Replica>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub vars: Vec<Value>,
    #[serde(default)]
    pub sort_options: Option<SortOptions>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub resources: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub components: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub crds: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub bases: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub config_map_generator: Vec<GeneratorArgs>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub secret_generator: Vec<GeneratorArgs>,
    #[serde(default)]
    pub helm_globals: Option<Value>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub helm_charts: Vec<Value>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub helm_chart_inflation_generator: Vec<Value>,
    #[serde(default)]
    pub generator_options: Option<GeneratorOptions>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub configurations: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub generators: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub transformers: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub validators: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub build_metadata: Vec<String>,
}

/// One entry of `labels`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Label {
    #[serde(default, deserialize_with = "lenient_map")]
    pub pairs: StringMap,
    #[serde(default)]
    pub include_selectors: bool,
    #[serde(default)]
    pub include_templates: bool,
    #[serde(default)]
    pub include_volume_claim_templates: bool,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub fields: Vec<Value>,
}

/// One entry of `patches` or `patchesJson6902`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Patch {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub patch: String,
    #[serde(default)]
    pub target: Option<Selector>,
    #[serde(default)]
    pub options: IndexMap<String, bool>,
}

/// A patch target: every part optional; name and namespace are anchored regular expressions.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Selector {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub label_selector: String,
    #[serde(default)]
    pub annotation_selector: String,
}

/// One entry of `images`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Image {
    #[serde(default, deserialize_with = "lenient_string")]
    pub name: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub new_name: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub new_tag: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub digest: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub tag_suffix: String,
}

/// One entry of `replicas`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replica {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub count: i64,
}

/// `sortOptions`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SortOptions {
    #[serde(default)]
    pub order: String,
    #[serde(default)]
    pub legacy_sort_options: Option<LegacySortOptions>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LegacySortOptions {
    #[serde(default, deserialize_with = "nullable_vec")]
    pub order_first: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub order_last: Vec<String>,
}

/// One entry of `configMapGenerator` or `secretGenerator` (`type` only for secrets).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GeneratorArgs {
    #[serde(default, deserialize_with = "lenient_string")]
    pub namespace: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub name: String,
    #[serde(default)]
    pub behavior: String,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub literals: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub files: Vec<String>,
    #[serde(default, deserialize_with = "nullable_vec")]
    pub envs: Vec<String>,
    #[serde(default)]
    pub env: String,
    #[serde(default)]
    pub options: Option<GeneratorOptions>,
    #[serde(default, rename = "type")]
    pub secret_type: String,
}

/// `generatorOptions`, and the per-generator `options`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GeneratorOptions {
    #[serde(default, deserialize_with = "lenient_map")]
    pub labels: StringMap,
    #[serde(default, deserialize_with = "lenient_map")]
    pub annotations: StringMap,
    #[serde(default)]
    pub disable_name_suffix_hash: Option<bool>,
    #[serde(default)]
    pub immutable: bool,
}

/// Field names of the kustomization and builtin plugin config structs. kustomize decodes them with
/// Go's `encoding/json`, which matches keys case-insensitively (`nameprefix:` sets `namePrefix`).
const FIELD_NAMES: &[&str] = &[
    "annotationSelector", "annotations", "apiVersion", "bases", "behavior", "buildMetadata", "commonAnnotations",
    "commonLabels", "components", "configMapGenerator", "configurations", "count", "create", "crds", "digest",
    "disableNameSuffixHash", "env", "envs", "fieldSpecs", "fields", "files", "generatorOptions", "generators",
    "group", "helmChartInflationGenerator", "helmCharts", "helmGlobals", "imageTag", "imageTags", "images",
    "immutable", "includeSelectors", "includeTemplates", "includeVolumeClaimTemplates", "jsonOp", "kind",
    "labelSelector", "labels", "legacySortOptions", "literals", "metadata", "name", "namePrefix", "nameSuffix",
    "namespace", "newName", "newTag", "openapi", "options", "orderFirst", "orderLast", "pairs", "patch",
    "patches", "patchesJson6902", "patchesStrategicMerge", "path", "paths", "prefix", "replacements", "replica",
    "replicas", "resources", "secretGenerator", "setRoleBindingSubjects", "sortOptions", "suffix", "tagSuffix",
    "target", "transformers", "type", "unsetOnly", "validators", "vars", "version",
];

/// Fields whose values are user maps: their keys are data, never renamed.
const MAP_FIELDS: &[&str] = &["annotations", "commonAnnotations", "commonLabels", "labels", "metadata", "openapi", "pairs"];

/// Renames keys that match a known field name case-insensitively to that name, as Go's decoder
/// would match them, without touching the keys of user maps (labels, annotations...).
pub fn canonicalize_field_names(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = FIELD_NAMES.iter().find(|n| n.eq_ignore_ascii_case(&k)).map_or(k, |n| n.to_string());
                    let v = if MAP_FIELDS.contains(&key.as_str()) { v } else { canonicalize_field_names(v) };
                    (key, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(canonicalize_field_names).collect()),
        other => other,
    }
}

/// kustomize's `CheckEmpty`: nothing set but `apiVersion` and `kind`. As in Go, a field holding
/// its zero value (`""`, `false`, 0) is unset, one holding an empty list or map is set
/// (`resources: []`), except the deprecated `bases` and `imageTags` and
/// `helmChartInflationGenerator`, which kustomize moves elsewhere and so leaves unset when empty.
pub fn is_empty_kustomization(value: &Value) -> bool {
    let Some(map) = value.as_object() else { return false };
    map.iter().all(|(key, v)| match (key.as_str(), v) {
        ("apiVersion" | "kind", _) | (_, Value::Null) => true,
        (_, Value::String(s)) => s.is_empty(),
        (_, Value::Bool(b)) => !b,
        (_, Value::Number(n)) => n.as_f64() == Some(0.0),
        ("bases" | "imageTags" | "helmChartInflationGenerator", Value::Array(items)) => items.is_empty(),
        _ => false,
    })
}

/// The text kustomize gives a scalar written where a string is expected.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = Value::deserialize(d)?;
    scalar_text(&v).ok_or_else(|| serde::de::Error::custom(format!("expected a string, got {v}")))
}

pub fn lenient_map<'de, D: Deserializer<'de>>(d: D) -> Result<StringMap, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(StringMap::new()),
        Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| {
                scalar_text(&v)
                    .map(|s| (k, s))
                    .ok_or_else(|| serde::de::Error::custom(format!("expected a string value, got {v}")))
            })
            .collect(),
        other => Err(serde::de::Error::custom(format!("expected a map, got {other}"))),
    }
}

fn nullable_vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}
