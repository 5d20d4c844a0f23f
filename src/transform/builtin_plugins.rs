//! The `transformers:` and `generators:` fields: builtin plugin configs (`apiVersion: builtin`),
//! each running the same code as the kustomization field it stands for. Plugins that are other
//! programs (KRM functions, exec plugins) are run by [`crate::functions`], never from here.
use serde::Deserialize;
use serde_json::Value;

use super::fieldspec::FieldSpec;
use super::namespace::{NamespaceOptions, SubjectsMode};
use super::{images, metadata_maps, name_affix, namespace, patches, replicas};
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::generate::{self, GeneratedKind};
use crate::kustomization::types::{canonicalize_field_names, lenient_map, GeneratorArgs, Image, Patch, Replica, Selector, StringMap};
use crate::kustomization::Loader;
use crate::patch::Schema;
use crate::resource::{ResMap, Resource};

/// Reads the plugin configs named by one `transformers`/`generators` entry: a file, inline YAML,
/// or (for a folder) the resources a sub-kustomization builds, through `build_dir`.
pub fn load_configs(
    entry: &str,
    loader: &Loader,
    build_dir: &mut dyn FnMut(Loader) -> Result<ResMap>,
) -> Result<Vec<Value>> {
    if loader.is_dir(entry) {
        return Ok(build_dir(loader.child(entry)?)?.into_vec().into_iter().map(|r| r.value).collect());
    }
    let (text, origin) = if loader.is_file(entry) || !(entry.contains('\n') || entry.contains(": ")) {
        let (file, text) = loader.read(entry)?;
        (text, file.display().to_string())
    } else {
        (entry.to_string(), "inline plugin config".to_string())
    };
    let docs = crate::yaml::parse::parse_documents(&text)
        .map_err(|e| Error::Parse { file: origin, line: e.line, column: e.column, message: e.message.clone() })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

fn plugin_kind(config: &Value) -> Result<(&str, &str)> {
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version != "builtin" {
        // kustomize's words for a plugin program (run by `crate::functions` only under
        // --enable-alpha-plugins), for KRM functions and Go/exec plugins alike.
        return Err(Error::msg(format!("external plugins disabled; unable to load external plugin '{kind}'")));
    }
    Ok((api_version, kind))
}

/// Deserializes a config after dropping the plugin's own apiVersion/kind/metadata.
fn config_fields<T: for<'de> Deserialize<'de>>(config: &Value, kind: &str) -> Result<T> {
    let mut fields = config.as_object().cloned().unwrap_or_default();
    for k in ["apiVersion", "kind", "metadata"] {
        fields.shift_remove(k);
    }
    serde_json::from_value(canonicalize_field_names(Value::Object(fields))).map_err(|e| Error::msg(format!("unable to load builtin {kind}: {e}")))
}

fn metadata_str<'a>(config: &'a Value, key: &str) -> &'a str {
    config.get("metadata").and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or("")
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct MapConfig {
    #[serde(default, deserialize_with = "lenient_map")]
    labels: StringMap,
    #[serde(default, deserialize_with = "lenient_map")]
    annotations: StringMap,
    #[serde(default)]
    field_specs: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AffixConfig {
    #[serde(default)]
    prefix: String,
    #[serde(default)]
    suffix: String,
    #[serde(default)]
    field_specs: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct NamespaceConfig {
    #[serde(default)]
    field_specs: Vec<Value>,
    #[serde(default)]
    unset_only: bool,
    #[serde(default)]
    set_role_binding_subjects: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ImageConfig {
    #[serde(default)]
    image_tag: Image,
    #[serde(default)]
    field_specs: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReplicaConfig {
    #[serde(default)]
    replica: Replica,
    #[serde(default)]
    field_specs: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SmpConfig {
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    patches: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Json6902Config {
    #[serde(default)]
    target: Option<Selector>,
    #[serde(default)]
    path: String,
    #[serde(default)]
    json_op: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ReplacementConfig {
    #[serde(default)]
    replacements: Vec<Value>,
}

fn specs(values: &[Value]) -> Result<Vec<FieldSpec>> {
    values.iter().map(FieldSpec::from_value).collect()
}

/// Runs one builtin transformer config over `resources`; `tracks_origins` says whether the
/// build keeps origins and transformer runs (an error that prints a resource shows them).
pub fn run_transformer(
    config: &Value,
    resources: &mut ResMap,
    loader: &Loader,
    schema: &Schema,
    diagnostics: &mut Diagnostics,
    kustomization: &str,
    tracks_origins: bool,
) -> Result<()> {
    let (_, kind) = plugin_kind(config)?;
    match kind {
        "AnnotationsTransformer" | "LabelTransformer" => {
            let c: MapConfig = config_fields(config, kind)?;
            let entries = if kind == "LabelTransformer" { c.labels } else { c.annotations };
            metadata_maps::add_map_entries(resources, &entries, &specs(&c.field_specs)?)
        }
        "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
            let c: AffixConfig = config_fields(config, kind)?;
            name_affix::add_name_affixes(resources, &c.prefix, &c.suffix, &specs(&c.field_specs)?)
        }
        "NamespaceTransformer" => {
            let c: NamespaceConfig = config_fields(config, kind)?;
            let subjects = match c.set_role_binding_subjects.as_str() {
                "" | "defaultOnly" => SubjectsMode::DefaultOnly,
                "allServiceAccounts" => SubjectsMode::AllServiceAccounts,
                "none" => SubjectsMode::None,
                other => return Err(Error::msg(format!("invalid value for setRoleBindingSubjects: '{other}'"))),
            };
            let options = NamespaceOptions {
                namespace: metadata_str(config, "namespace").to_string(),
                field_specs: specs(&c.field_specs)?,
                unset_only: c.unset_only,
                subjects,
                tracks_origins,
            };
            namespace::set_namespace(resources, &options)
        }
        "ImageTagTransformer" => {
            let c: ImageConfig = config_fields(config, kind)?;
            let matched = images::set_images(resources, std::slice::from_ref(&c.image_tag), &specs(&c.field_specs)?)?;
            if matched.iter().any(|m| !m) {
                diagnostics.unmatched(kustomization, &format!("ImageTagTransformer '{}' matches no image", c.image_tag.name));
            }
            Ok(())
        }
        "ReplicaCountTransformer" => {
            let c: ReplicaConfig = config_fields(config, kind)?;
            replicas::set_replicas(resources, &c.replica, &specs(&c.field_specs)?)
        }
        "PatchStrategicMergeTransformer" => {
            let c: SmpConfig = config_fields(config, kind)?;
            let from = patches::PluginConfig { plugin: "PatchStrategicMergeTransformer", from: patches::ConfigFrom::Transformer(config) };
            patches::apply_patches_strategic_merge(resources, &c.paths, &c.patches, loader, schema, diagnostics, kustomization, &from)
        }
        "PatchJson6902Transformer" => {
            let c: Json6902Config = config_fields(config, kind)?;
            let entry = Patch { path: c.path, patch: c.json_op, target: c.target, options: Default::default() };
            let from = patches::PluginConfig { plugin: "PatchJson6902Transformer", from: patches::ConfigFrom::Transformer(config) };
            patches::apply_patch_json6902(resources, &entry, loader, diagnostics, kustomization, &from)
        }
        "PatchTransformer" => {
            let entry: Patch = config_fields(config, kind)?;
            let from = patches::PluginConfig { plugin: "PatchTransformer", from: patches::ConfigFrom::Transformer(config) };
            patches::apply_patch(resources, &entry, loader, schema, diagnostics, kustomization, &from)
        }
        "ReplacementTransformer" => {
            let c: ReplacementConfig = config_fields(config, kind)?;
            super::replacements::apply_replacements(resources, &c.replacements, loader)
        }
        "ValueAddTransformer" => add_value(config, resources, loader),
        "HashTransformer" => {
            crate::generate::hash::add_hash_suffixes(resources);
            Ok(())
        }
        // kustomize only sorts at the top level, through `sortOptions`; as a plugin it fails to load.
        "SortOrderTransformer" => Err(Error::msg(format!(
            "unable to load builtin SortOrderTransformer.builtin.[noGrp]/{}.[noNs]: use the kustomization's sortOptions field instead",
            metadata_str(config, "name")
        ))),
        other => Err(Error::msg(format!("builtin transformer {other} is not supported"))),
    }
}

/// Runs one builtin generator config, returning what it makes.
pub fn run_generator(config: &Value, loader: &Loader) -> Result<Vec<Resource>> {
    let (_, kind) = plugin_kind(config).map_err(|e| e.context("loading generator plugins: failed to load generator"))?;
    let generated = match kind {
        "ConfigMapGenerator" | "SecretGenerator" => {
            // Plugin configs are decoded leniently: unknown fields (such as `labels`) are ignored.
            let known = ["namespace", "name", "behavior", "literals", "files", "envs", "env", "options", "type"];
            let mut trimmed = config.clone();
            if let Some(map) = trimmed.as_object_mut() {
                map.retain(|k, _| known.contains(&k.as_str()) || matches!(k.as_str(), "apiVersion" | "kind" | "metadata"));
            }
            let mut args: GeneratorArgs = config_fields(&trimmed, kind)?;
            // The config's own `name`/`namespace` win over its metadata's.
            if args.name.is_empty() {
                args.name = metadata_str(config, "name").to_string();
            }
            if args.namespace.is_empty() {
                args.namespace = metadata_str(config, "namespace").to_string();
            }
            let kind = if kind == "ConfigMapGenerator" { GeneratedKind::ConfigMap } else { GeneratedKind::Secret };
            generate::generate(kind, &args, None, loader, false)?
        }
        "IAMPolicyGenerator" => iam_policy_service_account(config)?,
        other => return Err(Error::msg(format!("builtin generator {other} is not supported"))),
    };
    Ok(vec![generated])
}

/// IAMPolicyGenerator (GKE workload identity): a ServiceAccount annotated with the Google service
/// account it acts as.
fn iam_policy_service_account(config: &Value) -> Result<Resource> {
    let text = |path: &[&str]| -> String {
        let mut v = config;
        for key in path {
            v = match v.get(key) {
                Some(next) => next,
                None => return String::new(),
            };
        }
        v.as_str().map(str::to_string).unwrap_or_default()
    };
    let cloud = text(&["cloud"]);
    if cloud != "gke" {
        return Err(Error::msg(format!("IAMPolicyGenerator: cloud '{cloud}' is not supported (only gke)")));
    }
    let (name, namespace) = (text(&["kubernetesService", "name"]), text(&["kubernetesService", "namespace"]));
    let account = format!("{}@{}.iam.gserviceaccount.com", text(&["serviceAccount", "name"]), text(&["serviceAccount", "projectId"]));
    let mut metadata = serde_json::Map::new();
    metadata.insert("annotations".into(), serde_json::json!({ "iam.gke.io/gcp-service-account": account }));
    metadata.insert("name".into(), Value::String(name));
    if !namespace.is_empty() {
        metadata.insert("namespace".into(), Value::String(namespace));
    }
    Ok(Resource::new(serde_json::json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata })))
}

/// ValueAddTransformer: writes `value` at each target's field path (created when missing), or, with
/// `filePathPosition: N`, inserts it as the N-th segment of the slash-separated path already there.
fn add_value(config: &Value, resources: &mut ResMap, loader: &Loader) -> Result<()> {
    let value = config.get("value").and_then(Value::as_str).unwrap_or("").to_string();
    let targets = match config.get("targetFilePath").and_then(Value::as_str) {
        Some(path) => {
            let (file, text) = loader.read(path)?;
            crate::yaml::parse::parse_document(&text)
                .map_err(|e| Error::Parse { file: file.display().to_string(), line: e.line, column: e.column, message: e.message.clone() })?
                .get("targets")
                .cloned()
        }
        None => config.get("targets").cloned(),
    };
    for target in targets.as_ref().and_then(Value::as_array).into_iter().flatten() {
        let selector: Option<Selector> = match target.get("selector") {
            Some(s) => Some(serde_json::from_value(canonicalize_field_names(s.clone())).map_err(|e| Error::msg(format!("ValueAddTransformer selector: {e}")))?),
            None => None,
        };
        let field_path = target.get("fieldPath").and_then(Value::as_str).unwrap_or("");
        let position = target.get("filePathPosition").and_then(Value::as_u64).unwrap_or(0) as usize;
        let selected = match &selector {
            Some(s) => patches::select(resources, s)?,
            None => (0..resources.len()).collect(),
        };
        let spec = FieldSpec { gvk: Default::default(), path: field_path.to_string(), create: true };
        for i in selected {
            let r = resources.get_mut(i);
            super::fieldspec::walk(&mut r.value, &spec.path_parts(), true, super::fieldspec::CreateKind::Scalar, &mut |node| {
                let current = node.as_str().unwrap_or("").to_string();
                *node = Value::String(if position == 0 || current.is_empty() {
                    value.clone()
                } else {
                    let mut parts: Vec<&str> = current.split('/').collect();
                    parts.insert((position - 1).min(parts.len()), &value);
                    parts.join("/")
                });
                Ok(())
            })?;
        }
    }
    resources.reindex();
    Ok(())
}
