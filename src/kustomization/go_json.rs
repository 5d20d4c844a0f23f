//! The kustomization decoded as kustomize decodes it: YAML to JSON, then Go's `encoding/json` into
//! `types.Kustomization` with unknown fields disallowed. This layer holds Go's types of every
//! field ([`KUSTOMIZATION`], data) and Go's rules over them, once for every field:
//!
//! * a key names a field exactly, else case-insensitively (`nameprefix:` sets `namePrefix`); a key
//!   that names none is `json: unknown field "key"`, with the closest field name as a hint;
//! * a string field takes a string only: a number or a boolean (`newTag: 1.30`, a YAML 1.1 `yes`)
//!   is refused, never turned into text; an integer field takes a number without a fraction
//!   (`3.0` is 3, as go-yaml hands `3` to the JSON decoder); `null` leaves any field unset;
//! * a value of the wrong shape is `json: cannot unmarshal <kind> into Go struct field
//!   <Struct>.<path> of type <type>`, Go's words, for the first mismatch in document order.
//!
//! The result has every key spelled as its field, ready for the serde types of [`super::types`].
//! A field added there is one line in a table here (use [`GoType::Any`] for a value another
//! decoder checks, as `replacements` and `vars` are).
use serde_json::{Map, Number, Value};

use crate::yaml::locate::Step;

/// A Go type of a kustomization field, as `encoding/json` sees it.
#[derive(Clone, Copy, Debug)]
pub enum GoType {
    /// A string, or a named string type (`types.PatchStrategicMerge`).
    Str(&'static str),
    Int64,
    Bool,
    /// `map[string]<elem>`.
    Map(&'static GoType),
    /// `[]<elem>`.
    List(&'static GoType),
    /// A struct, or a pointer to one.
    Struct(&'static GoStruct),
    /// Anything (`interface{}`), or a value decoded and checked by its own decoder.
    Any,
}

/// A Go struct: its name and its JSON fields (those of embedded structs included).
#[derive(Debug)]
pub struct GoStruct {
    /// The type's name (`Image`), as Go names the struct in a field error.
    pub name: &'static str,
    /// The type as Go names it in "of type" (`types.Image`).
    pub qualified: &'static str,
    pub fields: &'static [GoField],
}

/// One JSON field of a [`GoStruct`].
#[derive(Debug)]
pub struct GoField {
    /// The JSON name.
    pub json: &'static str,
    /// The Go field path, with the embedded structs it is promoted from (`TypeMeta.kind`).
    pub path: &'static str,
    pub ty: GoType,
}

const fn field(json: &'static str, path: &'static str, ty: GoType) -> GoField {
    GoField { json, path, ty }
}

const STRING: GoType = GoType::Str("string");
const STRINGS: GoType = GoType::List(&STRING);
const STRING_MAP: GoType = GoType::Map(&STRING);

const OBJECT_META: GoStruct = GoStruct {
    name: "ObjectMeta",
    qualified: "types.ObjectMeta",
    fields: &[
        field("name", "name", STRING),
        field("namespace", "namespace", STRING),
        field("labels", "labels", STRING_MAP),
        field("annotations", "annotations", STRING_MAP),
    ],
};

const FIELD_SPEC: GoStruct = GoStruct {
    name: "FieldSpec",
    qualified: "types.FieldSpec",
    fields: &[
        field("group", "Gvk.group", STRING),
        field("version", "Gvk.version", STRING),
        field("kind", "Gvk.kind", STRING),
        field("path", "path", STRING),
        field("create", "create", GoType::Bool),
    ],
};

const LABEL: GoStruct = GoStruct {
    name: "Label",
    qualified: "types.Label",
    fields: &[
        field("pairs", "pairs", STRING_MAP),
        field("includeSelectors", "includeSelectors", GoType::Bool),
        field("includeTemplates", "includeTemplates", GoType::Bool),
        field("includeVolumeClaimTemplates", "includeVolumeClaimTemplates", GoType::Bool),
        field("fields", "fields", GoType::List(&GoType::Struct(&FIELD_SPEC))),
    ],
};

const SELECTOR: GoStruct = GoStruct {
    name: "Selector",
    qualified: "types.Selector",
    fields: &[
        field("group", "ResId.Gvk.group", STRING),
        field("version", "ResId.Gvk.version", STRING),
        field("kind", "ResId.Gvk.kind", STRING),
        field("name", "ResId.name", STRING),
        field("namespace", "ResId.namespace", STRING),
        field("annotationSelector", "annotationSelector", STRING),
        field("labelSelector", "labelSelector", STRING),
    ],
};

const PATCH_ARGS: GoStruct = GoStruct {
    name: "PatchArgs",
    qualified: "types.PatchArgs",
    fields: &[field("allowNameChange", "allowNameChange", GoType::Bool), field("allowKindChange", "allowKindChange", GoType::Bool)],
};

const PATCH: GoStruct = GoStruct {
    name: "Patch",
    qualified: "types.Patch",
    fields: &[
        field("path", "path", STRING),
        field("patch", "patch", STRING),
        field("target", "target", GoType::Struct(&SELECTOR)),
        field("options", "options", GoType::Struct(&PATCH_ARGS)),
    ],
};

const IMAGE: GoStruct = GoStruct {
    name: "Image",
    qualified: "types.Image",
    fields: &[
        field("name", "name", STRING),
        field("newName", "newName", STRING),
        field("tagSuffix", "tagSuffix", STRING),
        field("newTag", "newTag", STRING),
        field("digest", "digest", STRING),
    ],
};

const REPLICA: GoStruct = GoStruct {
    name: "Replica",
    qualified: "types.Replica",
    fields: &[field("name", "name", STRING), field("count", "count", GoType::Int64)],
};

const LEGACY_SORT_OPTIONS: GoStruct = GoStruct {
    name: "LegacySortOptions",
    qualified: "types.LegacySortOptions",
    fields: &[field("orderFirst", "orderFirst", STRINGS), field("orderLast", "orderLast", STRINGS)],
};

const SORT_OPTIONS: GoStruct = GoStruct {
    name: "SortOptions",
    qualified: "types.SortOptions",
    fields: &[
        field("order", "order", GoType::Str("types.SortOrder")),
        field("legacySortOptions", "legacySortOptions", GoType::Struct(&LEGACY_SORT_OPTIONS)),
    ],
};

const GENERATOR_OPTIONS: GoStruct = GoStruct {
    name: "GeneratorOptions",
    qualified: "types.GeneratorOptions",
    fields: &[
        field("labels", "labels", STRING_MAP),
        field("annotations", "annotations", STRING_MAP),
        field("disableNameSuffixHash", "disableNameSuffixHash", GoType::Bool),
        field("immutable", "immutable", GoType::Bool),
    ],
};

/// `GeneratorArgs` (with `KvPairSources`) embedded in `ConfigMapArgs` and `SecretArgs`.
macro_rules! generator_args {
    ($($extra:expr),*) => {
        &[
            field("namespace", "GeneratorArgs.namespace", STRING),
            field("name", "GeneratorArgs.name", STRING),
            field("behavior", "GeneratorArgs.behavior", STRING),
            field("literals", "GeneratorArgs.KvPairSources.literals", STRINGS),
            field("files", "GeneratorArgs.KvPairSources.files", STRINGS),
            field("envs", "GeneratorArgs.KvPairSources.envs", STRINGS),
            field("env", "GeneratorArgs.KvPairSources.env", STRING),
            field("options", "GeneratorArgs.options", GoType::Struct(&GENERATOR_OPTIONS)),
            $($extra),*
        ]
    };
}

const CONFIG_MAP_ARGS: GoStruct = GoStruct { name: "ConfigMapArgs", qualified: "types.ConfigMapArgs", fields: generator_args!() };

const SECRET_ARGS: GoStruct =
    GoStruct { name: "SecretArgs", qualified: "types.SecretArgs", fields: generator_args!(field("type", "type", STRING)) };

const HELM_GLOBALS: GoStruct = GoStruct {
    name: "HelmGlobals",
    qualified: "types.HelmGlobals",
    fields: &[field("chartHome", "chartHome", STRING), field("configHome", "configHome", STRING)],
};

const HELM_CHART: GoStruct = GoStruct {
    name: "HelmChart",
    qualified: "types.HelmChart",
    fields: &[
        field("name", "name", STRING),
        field("version", "version", STRING),
        field("repo", "repo", STRING),
        field("releaseName", "releaseName", STRING),
        field("namespace", "namespace", STRING),
        field("additionalValuesFiles", "additionalValuesFiles", STRINGS),
        field("valuesFile", "valuesFile", STRING),
        field("valuesInline", "valuesInline", GoType::Map(&GoType::Any)),
        field("valuesMerge", "valuesMerge", STRING),
        field("includeCRDs", "includeCRDs", GoType::Bool),
        field("skipHooks", "skipHooks", GoType::Bool),
        field("apiVersions", "apiVersions", STRINGS),
        field("kubeVersion", "kubeVersion", STRING),
        field("nameTemplate", "nameTemplate", STRING),
        field("skipTests", "skipTests", GoType::Bool),
        field("debug", "debug", GoType::Bool),
        field("devel", "devel", GoType::Bool),
    ],
};

const HELM_CHART_ARGS: GoStruct = GoStruct {
    name: "HelmChartArgs",
    qualified: "types.HelmChartArgs",
    fields: &[
        field("chartName", "chartName", STRING),
        field("chartVersion", "chartVersion", STRING),
        field("chartRepoUrl", "chartRepoUrl", STRING),
        field("chartHome", "chartHome", STRING),
        field("chartRepoName", "chartRepoName", STRING),
        field("helmBin", "helmBin", STRING),
        field("helmHome", "helmHome", STRING),
        field("values", "values", STRING),
        field("valuesLocal", "valuesLocal", GoType::Map(&GoType::Any)),
        field("valuesMerge", "valuesMerge", STRING),
        field("releaseName", "releaseName", STRING),
        field("releaseNamespace", "releaseNamespace", STRING),
        field("extraArgs", "extraArgs", STRINGS),
    ],
};

/// kustomize v5.8.1's `types.Kustomization` (also read for a `Component`).
pub const KUSTOMIZATION: GoStruct = GoStruct {
    name: "Kustomization",
    qualified: "types.Kustomization",
    fields: &[
        field("kind", "TypeMeta.kind", STRING),
        field("apiVersion", "TypeMeta.apiVersion", STRING),
        field("metadata", "metadata", GoType::Struct(&OBJECT_META)),
        field("openapi", "openapi", STRING_MAP),
        field("namePrefix", "namePrefix", STRING),
        field("nameSuffix", "nameSuffix", STRING),
        field("namespace", "namespace", STRING),
        field("commonLabels", "commonLabels", STRING_MAP),
        field("labels", "labels", GoType::List(&GoType::Struct(&LABEL))),
        field("commonAnnotations", "commonAnnotations", STRING_MAP),
        field("patchesStrategicMerge", "patchesStrategicMerge", GoType::List(&GoType::Str("types.PatchStrategicMerge"))),
        field("patchesJson6902", "patchesJson6902", GoType::List(&GoType::Struct(&PATCH))),
        field("patches", "patches", GoType::List(&GoType::Struct(&PATCH))),
        field("images", "images", GoType::List(&GoType::Struct(&IMAGE))),
        field("imageTags", "imageTags", GoType::List(&GoType::Struct(&IMAGE))),
        // Decoded, with Go's wording, by `transform::replacements` and `transform::vars`.
        field("replacements", "replacements", GoType::Any),
        field("replicas", "replicas", GoType::List(&GoType::Struct(&REPLICA))),
        field("vars", "vars", GoType::Any),
        field("sortOptions", "sortOptions", GoType::Struct(&SORT_OPTIONS)),
        field("resources", "resources", STRINGS),
        field("components", "components", STRINGS),
        field("crds", "crds", STRINGS),
        field("bases", "bases", STRINGS),
        field("configMapGenerator", "configMapGenerator", GoType::List(&GoType::Struct(&CONFIG_MAP_ARGS))),
        field("secretGenerator", "secretGenerator", GoType::List(&GoType::Struct(&SECRET_ARGS))),
        field("helmGlobals", "helmGlobals", GoType::Struct(&HELM_GLOBALS)),
        field("helmCharts", "helmCharts", GoType::List(&GoType::Struct(&HELM_CHART))),
        field("helmChartInflationGenerator", "helmChartInflationGenerator", GoType::List(&GoType::Struct(&HELM_CHART_ARGS))),
        field("generatorOptions", "generatorOptions", GoType::Struct(&GENERATOR_OPTIONS)),
        field("configurations", "configurations", STRINGS),
        field("generators", "generators", STRINGS),
        field("transformers", "transformers", STRINGS),
        field("validators", "validators", STRINGS),
        field("buildMetadata", "buildMetadata", STRINGS),
    ],
};

const FIELD_SPECS: GoType = GoType::List(&GoType::Struct(&FIELD_SPEC));

const NAME_BACK_REFERENCES: GoStruct = GoStruct {
    name: "NameBackReferences",
    qualified: "builtinconfig.NameBackReferences",
    fields: &[
        field("group", "Gvk.group", STRING),
        field("version", "Gvk.version", STRING),
        field("kind", "Gvk.kind", STRING),
        field("fieldSpecs", "fieldSpecs", FIELD_SPECS),
    ],
};

/// kustomize's `builtinconfig.TransformerConfig`, the document of a `configurations` file.
pub const TRANSFORMER_CONFIG: GoStruct = GoStruct {
    name: "TransformerConfig",
    qualified: "builtinconfig.TransformerConfig",
    fields: &[
        field("namePrefix", "namePrefix", FIELD_SPECS),
        field("nameSuffix", "nameSuffix", FIELD_SPECS),
        field("namespace", "namespace", FIELD_SPECS),
        field("commonLabels", "commonLabels", FIELD_SPECS),
        field("labels", "labels", FIELD_SPECS),
        field("templateLabels", "templateLabels", FIELD_SPECS),
        field("commonAnnotations", "commonAnnotations", FIELD_SPECS),
        field("nameReference", "nameReference", GoType::List(&GoType::Struct(&NAME_BACK_REFERENCES))),
        field("varReference", "varReference", FIELD_SPECS),
        field("images", "images", FIELD_SPECS),
        field("replicas", "replicas", FIELD_SPECS),
    ],
};

/// Why a value does not decode, and where.
#[derive(Debug, PartialEq)]
pub struct DecodeError {
    /// Go's message (`json: unknown field "namePrefx"`).
    pub message: String,
    /// For an unknown key, the closest field name.
    pub suggestion: Option<&'static str>,
    /// The path of the offending key or item in the document.
    pub at: Vec<Step>,
}

impl DecodeError {
    /// The error: `<prefix><Go's message>` as kustomize says it, and after it, on a line of its
    /// own, the file with the line and column (found in `text`, when `text` holds this one
    /// document) and the closest field as a hint.
    pub fn error(&self, file: &std::path::Path, text: Option<&str>, prefix: &str) -> crate::error::Error {
        let at = match text.and_then(|text| crate::yaml::locate::position(text, &self.at)) {
            Some((line, column)) => format!("{}:{line}:{column}", file.display()),
            None => file.display().to_string(),
        };
        let hint = self.suggestion.map(|name| format!(" (did you mean \"{name}\"?)")).unwrap_or_default();
        crate::error::Error::noted(format!("{prefix}{}", self.message), format!("at {at}{hint}"))
    }
}

impl GoType {
    /// The type as Go prints it in an unmarshal error.
    fn go_name(&self) -> String {
        match self {
            GoType::Str(name) => (*name).to_owned(),
            GoType::Int64 => "int64".to_owned(),
            GoType::Bool => "bool".to_owned(),
            GoType::Map(elem) => format!("map[string]{}", elem.go_name()),
            GoType::List(elem) => format!("[]{}", elem.go_name()),
            GoType::Struct(s) => s.qualified.to_owned(),
            GoType::Any => "interface {}".to_owned(),
        }
    }
}

/// What `encoding/json` calls a JSON value in "cannot unmarshal <kind>".
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where the decoder is: the innermost struct and the Go field path from the top. Where it is
/// in the document is not followed: a failure collects its steps on the way out.
struct Context<'a> {
    strukt: &'static str,
    fields: &'a mut Vec<&'static str>,
}

impl Context<'_> {
    fn type_error(&self, value: &Value, ty: &GoType) -> DecodeError {
        let kind = match (value, ty) {
            (Value::Number(n), GoType::Int64) => format!("number {}", crate::yaml::go_number_json(n)),
            _ => json_kind(value).to_owned(),
        };
        DecodeError {
            message: format!(
                "json: cannot unmarshal {kind} into Go struct field {}.{} of type {}",
                self.strukt,
                self.fields.join("."),
                ty.go_name()
            ),
            suggestion: None,
            at: Vec::new(),
        }
    }
}

/// A failure below `step`, on its way out: `step` joins its path (innermost first until
/// [`decode_document`] turns it around).
fn below(step: impl FnOnce() -> Step) -> impl FnOnce(DecodeError) -> DecodeError {
    move |mut e| {
        e.at.push(step());
        e
    }
}

/// Decodes `value` (a kustomization document) as `types.Kustomization`: the value with every key
/// spelled as its field, or the first error in document order.
pub fn decode_kustomization(value: Value) -> Result<Value, DecodeError> {
    decode_document(value, &KUSTOMIZATION)
}

/// Decodes one document as the Go struct `strukt` (a `configurations` file as
/// [`TRANSFORMER_CONFIG`]); a document that is not a mapping is returned as it is, for the
/// caller's own wording.
pub fn decode_document(value: Value, strukt: &'static GoStruct) -> Result<Value, DecodeError> {
    let object = match value {
        Value::Object(object) => object,
        other => return Ok(other),
    };
    decode_struct(object, strukt, &mut Context { strukt: strukt.name, fields: &mut Vec::new() }).map_err(|mut e| {
        e.at.reverse();
        e
    })
}

/// The field of `strukt` that `key` names exactly.
fn exact_field(strukt: &'static GoStruct, key: &str) -> Option<&'static GoField> {
    strukt.fields.iter().find(|f| f.json == key)
}

fn decode_struct(object: Map<String, Value>, strukt: &'static GoStruct, outer: &mut Context) -> Result<Value, DecodeError> {
    // Every key spelled as its field (the usual case): the values are decoded in place and the
    // mapping is kept, not built again.
    if object.keys().all(|key| exact_field(strukt, key).is_some()) {
        let mut object = object;
        for (key, value) in object.iter_mut() {
            let field = exact_field(strukt, key).expect("checked above");
            *value = decode_field(std::mem::take(value), field, strukt, outer).map_err(below(|| Step::Key(key.clone())))?;
        }
        return Ok(Value::Object(object));
    }
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        let found = exact_field(strukt, &key).or_else(|| strukt.fields.iter().find(|f| f.json.eq_ignore_ascii_case(&key)));
        let Some(field) = found else {
            return Err(DecodeError {
                message: format!("json: unknown field \"{key}\""),
                suggestion: closest(&key, strukt.fields.iter().map(|f| f.json)),
                at: vec![Step::Key(key)],
            });
        };
        let decoded = decode_field(value, field, strukt, outer).map_err(below(|| Step::Key(key.clone())))?;
        out.insert(field.json.to_owned(), decoded);
    }
    Ok(Value::Object(out))
}

/// The value of `field` of `strukt`.
fn decode_field(value: Value, field: &GoField, strukt: &'static GoStruct, outer: &mut Context) -> Result<Value, DecodeError> {
    outer.fields.push(field.path);
    let decoded = decode(value, &field.ty, &mut Context { strukt: strukt.name, fields: outer.fields })?;
    outer.fields.pop();
    Ok(decoded)
}

fn decode(value: Value, ty: &GoType, cx: &mut Context) -> Result<Value, DecodeError> {
    match (ty, value) {
        (GoType::Any, value) | (_, value @ Value::Null) => Ok(value),
        (GoType::Str(_), value @ Value::String(_)) | (GoType::Bool, value @ Value::Bool(_)) => Ok(value),
        (GoType::Int64, Value::Number(n)) => whole_number(&n).map(|i| Value::Number(i.into())).ok_or_else(|| cx.type_error(&Value::Number(n), ty)),
        // Keys stay as written: the values are decoded in place.
        (GoType::Map(elem), Value::Object(mut object)) => {
            for (key, item) in object.iter_mut() {
                *item = decode(std::mem::take(item), elem, cx).map_err(below(|| Step::Key(key.clone())))?;
            }
            Ok(Value::Object(object))
        }
        (GoType::List(elem), Value::Array(mut items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                *item = decode(std::mem::take(item), elem, cx).map_err(below(|| Step::Index(i)))?;
            }
            Ok(Value::Array(items))
        }
        (GoType::Struct(strukt), Value::Object(object)) => decode_struct(object, strukt, cx),
        (_, value) => Err(cx.type_error(&value, ty)),
    }
}

/// A number Go's decoder puts in an `int64`: no fraction once go-yaml has written it as JSON.
fn whole_number(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18).map(|f| f as i64))
}

/// The name among `names` closest to `key` (for "did you mean"), if any is close.
pub fn closest(key: &str, names: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    names
        .map(|name| (strsim::levenshtein(&key, &name.to_ascii_lowercase()), name))
        .filter(|(distance, name)| *distance <= (name.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(value: Value) -> String {
        decode_kustomization(value).unwrap_err().message
    }

    #[test]
    fn strings_refuse_numbers_and_booleans_with_gos_wording() {
        assert_eq!(
            error(json!({"images": [{"name": "nginx", "newTag": 1.3}]})),
            "json: cannot unmarshal number into Go struct field Image.images.newTag of type string"
        );
        assert_eq!(
            error(json!({"commonAnnotations": {"z": true}})),
            "json: cannot unmarshal bool into Go struct field Kustomization.commonAnnotations of type string"
        );
        assert_eq!(error(json!({"kind": 1})), "json: cannot unmarshal number into Go struct field Kustomization.TypeMeta.kind of type string");
        assert_eq!(
            error(json!({"configMapGenerator": [{"literals": [1]}]})),
            "json: cannot unmarshal number into Go struct field ConfigMapArgs.configMapGenerator.GeneratorArgs.KvPairSources.literals of type string"
        );
        assert_eq!(
            error(json!({"patches": [{"target": {"kind": 1}}]})),
            "json: cannot unmarshal number into Go struct field Selector.patches.target.ResId.Gvk.kind of type string"
        );
    }

    #[test]
    fn shapes_name_the_go_type() {
        assert_eq!(error(json!({"patches": ["p.yaml"]})), "json: cannot unmarshal string into Go struct field Kustomization.patches of type types.Patch");
        assert_eq!(error(json!({"patches": "p.yaml"})), "json: cannot unmarshal string into Go struct field Kustomization.patches of type []types.Patch");
        assert_eq!(
            error(json!({"commonAnnotations": ["a"]})),
            "json: cannot unmarshal array into Go struct field Kustomization.commonAnnotations of type map[string]string"
        );
        assert_eq!(
            error(json!({"sortOptions": {"order": 1}})),
            "json: cannot unmarshal number into Go struct field SortOptions.sortOptions.order of type types.SortOrder"
        );
    }

    /// A value of the wrong type is found where it is, below keys spelled exactly and below
    /// keys matched case-insensitively alike.
    #[test]
    fn a_type_error_names_where_the_value_is() {
        let at = |value: Value| decode_kustomization(value).unwrap_err().at;
        let expected = vec![Step::Key("images".into()), Step::Index(1), Step::Key("newTag".into())];
        assert_eq!(at(json!({"resources": [], "images": [{"name": "a"}, {"newTag": 1}]})), expected);
        let expected = vec![Step::Key("Images".into()), Step::Index(1), Step::Key("NEWTAG".into())];
        assert_eq!(at(json!({"Images": [{"name": "a"}, {"NEWTAG": 1}]})), expected);
        let expected = vec![Step::Key("commonLabels".into()), Step::Key("b".into())];
        assert_eq!(at(json!({"commonLabels": {"a": "x", "b": 2}})), expected);
    }

    #[test]
    fn integers_take_whole_numbers_only() {
        assert_eq!(decode_kustomization(json!({"replicas": [{"count": 3.0}]})).unwrap(), json!({"replicas": [{"count": 3}]}));
        assert_eq!(error(json!({"replicas": [{"count": 3.5}]})), "json: cannot unmarshal number 3.5 into Go struct field Replica.replicas.count of type int64");
        assert_eq!(error(json!({"replicas": [{"count": "3"}]})), "json: cannot unmarshal string into Go struct field Replica.replicas.count of type int64");
    }

    #[test]
    fn keys_match_case_insensitively_and_unknown_keys_suggest_the_closest_field() {
        assert_eq!(decode_kustomization(json!({"NamePrefix": "a-", "null": null})).unwrap_err().at, vec![Step::Key("null".into())]);
        assert_eq!(decode_kustomization(json!({"NAMEPREFIX": "a-"})).unwrap(), json!({"namePrefix": "a-"}));
        let e = decode_kustomization(json!({"resources": [], "namePrefx": "a-"})).unwrap_err();
        assert_eq!(e.message, "json: unknown field \"namePrefx\"");
        assert_eq!(e.suggestion, Some("namePrefix"));
        assert_eq!(e.at, vec![Step::Key("namePrefx".into())]);
        assert_eq!(decode_kustomization(json!({"zzzzzz": 1})).unwrap_err().suggestion, None);
        let e = decode_kustomization(json!({"images": [{"name": "a"}, {"newtags": "1"}]})).unwrap_err();
        assert_eq!((e.suggestion, e.at), (Some("newTag"), vec![Step::Key("images".into()), Step::Index(1), Step::Key("newtags".into())]));
    }

    #[test]
    fn configurations_decode_as_transformer_configs() {
        let config = json!({"namespace": [{"path": "subjects/namespace", "kind": "RoleBinding", "apiGroup": "x"}]});
        assert_eq!(decode_document(config, &TRANSFORMER_CONFIG).unwrap_err().message, "json: unknown field \"apiGroup\"");
        let config = json!({"namePrefix": [{"path": "spec/x", "version": 1}]});
        assert_eq!(
            decode_document(config, &TRANSFORMER_CONFIG).unwrap_err().message,
            "json: cannot unmarshal number into Go struct field FieldSpec.namePrefix.Gvk.version of type string"
        );
        let config = json!({"NAMEREFERENCE": [{"Kind": "Secret", "fieldspecs": [{"path": "spec/x"}]}]});
        assert_eq!(decode_document(config, &TRANSFORMER_CONFIG).unwrap(), json!({"nameReference": [{"kind": "Secret", "fieldSpecs": [{"path": "spec/x"}]}]}));
    }

    #[test]
    fn nulls_and_user_maps_pass_unchanged() {
        let v = json!({"commonLabels": {"App": "x"}, "namespace": null, "vars": [{"Name": 1}]});
        assert_eq!(decode_kustomization(v.clone()).unwrap(), v);
    }
}
