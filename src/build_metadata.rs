//! `buildMetadata`: where each resource came from (`originAnnotations`) and which transformers
//! touched it (`transformerAnnotations`), written as annotations at the end of the build.
use std::path::{Component, Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::resource::{ResMap, Resource};

pub const ORIGIN: &str = "config.kubernetes.io/origin";
pub const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";

/// kustomize's annotations for what it knows of a resource while it builds (its `utils.BuildAnnotation*`).
pub const INTERNAL: &str = "internal.config.kubernetes.io/";
pub const PREVIOUS_KINDS: &str = "internal.config.kubernetes.io/previousKinds";
pub const PREVIOUS_NAMES: &str = "internal.config.kubernetes.io/previousNames";
pub const PREVIOUS_NAMESPACES: &str = "internal.config.kubernetes.io/previousNamespaces";
pub const PREFIXES: &str = "internal.config.kubernetes.io/prefixes";
pub const SUFFIXES: &str = "internal.config.kubernetes.io/suffixes";
pub const BEHAVIOR: &str = "internal.config.kubernetes.io/generatorBehavior";
pub const NEEDS_HASH: &str = "internal.config.kubernetes.io/needsHashSuffix";

/// `value` (a state of `resource`) with the annotations kustomize keeps on a resource while it
/// builds: earlier ids, affixes and generator settings, and, with `tracks_origins`, the origin
/// and the transformer runs so far. kustomize sends these to a plugin and shows them when it
/// prints a resource in an error. Its annotations are a sorted map, and so are these.
pub fn with_build_annotations(resource: &Resource, value: &Value, tracks_origins: bool) -> Value {
    let mut state = Map::new();
    if tracks_origins {
        if let Some(origin) = &resource.origin {
            state.insert(ORIGIN.into(), Value::String(origin_text(origin)));
        }
        if !resource.transformations.is_empty() {
            state.insert(TRANSFORMATIONS.into(), Value::String(transformations_text(&resource.transformations)));
        }
    }
    let join = |parts: Vec<&str>| Value::String(parts.join(","));
    if resource.generated {
        state.insert(BEHAVIOR.into(), Value::String(resource.behavior.as_str().into()));
    }
    if resource.needs_hash_suffix {
        state.insert(NEEDS_HASH.into(), Value::String("enabled".into()));
    }
    if let Some(prefixes) = affixes_text(&resource.prefixes) {
        state.insert(PREFIXES.into(), Value::String(prefixes));
    }
    if !resource.previous_ids.is_empty() {
        let ids = &resource.previous_ids;
        state.insert(PREVIOUS_KINDS.into(), join(ids.iter().map(|id| id.gvk.kind.as_str()).collect()));
        state.insert(PREVIOUS_NAMES.into(), join(ids.iter().map(|id| id.name.as_str()).collect()));
        // As kustomize stored each: the id's effective namespace then.
        state.insert(PREVIOUS_NAMESPACES.into(), join(ids.iter().map(|id| id.effective_namespace()).collect()));
    }
    if let Some(suffixes) = affixes_text(&resource.suffixes) {
        state.insert(SUFFIXES.into(), Value::String(suffixes));
    }
    let mut value = value.clone();
    if state.is_empty() {
        return value;
    }
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            let mut merged: Vec<(String, Value)> = std::mem::take(annotations).into_iter().chain(state).collect();
            merged.sort_by(|a, b| a.0.cmp(&b.0));
            annotations.extend(merged);
        }
    }
    value
}

/// Affixes as kustomize lists them: the empty ones (a prefix run that added no suffix) are
/// not written.
pub fn affixes_text(affixes: &[String]) -> Option<String> {
    let written: Vec<&str> = affixes.iter().map(String::as_str).filter(|a| !a.is_empty()).collect();
    (!written.is_empty()).then(|| written.join(","))
}

/// `path` relative to `base`, with `..` where needed (both absolute, symlinks resolved).
pub fn relative_path(path: &Path, base: &Path) -> String {
    relative_path_buf(path, base).display().to_string()
}

/// [`relative_path`] as a path: empty when `path` is `base`.
pub fn relative_path_buf(path: &Path, base: &Path) -> PathBuf {
    let path: Vec<Component> = path.components().collect();
    let base: Vec<Component> = base.components().collect();
    let common = path.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let mut out: PathBuf = base[common..].iter().map(|_| "..").collect();
    out.extend(&path[common..]);
    out
}

/// The origin of a resource read from a file.
pub fn file_origin(relative: &str) -> Value {
    json!({ "path": relative })
}

/// The origin of a generated resource, or the record of a transformer run: the file that
/// configured it and the plugin (`apiVersion: builtin`, its kind, and its name when it has one).
pub fn configured(configured_in: &str, kind: &str, name: Option<&str>) -> Value {
    let mut by = Map::new();
    by.insert("apiVersion".into(), json!("builtin"));
    by.insert("kind".into(), json!(kind));
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        by.insert("name".into(), json!(name));
    }
    json!({ "configuredIn": configured_in, "configuredBy": Value::Object(by) })
}

/// The same for a plugin config (`transformers:`/`generators:` entries): its apiVersion and
/// kind, and the name and namespace of its metadata.
pub fn configured_by_config(configured_in: &str, config: &Value) -> Value {
    let meta = |k: &str| config.get("metadata").and_then(|m| m.get(k)).and_then(Value::as_str);
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut entry = configured(configured_in, kind, meta("name"));
    if let Some(Value::Object(by)) = entry.get_mut("configuredBy") {
        if let Some(api_version) = config.get("apiVersion").and_then(Value::as_str) {
            by.insert("apiVersion".into(), json!(api_version));
        }
        if let Some(ns) = meta("namespace") {
            by.insert("namespace".into(), json!(ns));
        }
    }
    entry
}

/// After each transformer, kustomize records it on every resource when the top-level
/// kustomization has any `buildMetadata`, writing every resource's annotations anew.
pub fn transformer_ran(resources: &mut ResMap, run: &Value) {
    for r in resources.iter_mut() {
        r.rewrite_annotations();
        r.transformations.push(run.clone());
    }
}

/// Writes the annotations the top-level `buildMetadata` asks for, and drops empty ones.
pub fn annotate(resources: &mut ResMap, build_metadata: &[String]) {
    let origins = build_metadata.iter().any(|b| b == "originAnnotations");
    let transformations = build_metadata.iter().any(|b| b == "transformerAnnotations");
    if !(origins && transformations) {
        // kustomize removes the annotations it does not keep by setting each resource's
        // annotations again.
        let _ = resources.try_update_parallel(|r| Ok::<bool, std::convert::Infallible>(reset_annotations(r)));
    }
    if !origins && !transformations {
        return;
    }
    for r in resources.iter_mut() {
        if origins {
            if let Some(origin) = r.origin.as_ref().map(origin_text) {
                r.set_metadata_entry("annotations", ORIGIN, Some(&origin));
            }
        }
        if transformations && !r.transformations.is_empty() {
            let text = transformations_text(&r.transformations);
            r.set_metadata_entry("annotations", TRANSFORMATIONS, Some(&text));
        }
    }
}

/// The text of an origin annotation.
pub fn origin_text(origin: &Value) -> String {
    format_entry(origin, "")
}

/// The text of a transformations annotation.
pub fn transformations_text(runs: &[Value]) -> String {
    runs.iter().map(|t| format_entry(t, "- ")).collect()
}

/// A plugin program ran over `resources` (kustomize's `AddTransformerAnnotation`): a resource
/// with no origin yet is taken to be one it made, and gets `run` as its origin; the others
/// record the run.
pub fn plugin_ran(resources: &mut ResMap, run: &Value) {
    for r in resources.iter_mut() {
        r.rewrite_annotations();
        if r.origin.is_none() {
            r.origin = Some(run.clone());
        } else {
            r.transformations.push(run.clone());
        }
    }
}

/// kyaml's `SetAnnotations` with the annotations a resource has: creates a missing `metadata`
/// and drops an empty or null `annotations:`.
/// Whether it changed the resource.
fn reset_annotations(r: &mut Resource) -> bool {
    let Some(map) = r.value.as_object_mut() else { return false };
    // Looked up before it is made: an entry would allocate its key for every resource.
    let Some(meta) = map.get_mut("metadata") else {
        map.insert("metadata".to_string(), Value::Object(Map::new()));
        return true;
    };
    let Some(meta) = meta.as_object_mut() else { return false };
    if meta.get("annotations").is_some_and(|a| a.is_null() || a.as_object().is_some_and(|m| m.is_empty())) {
        meta.shift_remove("annotations");
        return true;
    }
    false
}

/// kyaml's rendering of an origin: `path`, or `configuredIn` then `configuredBy`, in that order.
fn format_entry(entry: &Value, first_prefix: &str) -> String {
    let indent = " ".repeat(first_prefix.len());
    let mut lines: Vec<String> = Vec::new();
    let str_of = |k: &str| v3_scalar(entry.get(k).and_then(Value::as_str).unwrap_or(""));
    // Remote origins add `repo` and `ref` after the path (before `configuredIn`), as kyaml orders the fields.
    let remote = ["repo", "ref"].into_iter().filter(|k| entry.get(k).is_some()).map(|k| format!("{k}: {}", str_of(k)));
    if entry.get("path").is_some() {
        lines.push(format!("path: {}", str_of("path")));
        lines.extend(remote);
    } else {
        lines.extend(remote);
        lines.push(format!("configuredIn: {}", str_of("configuredIn")));
        lines.push("configuredBy:".into());
        if let Some(Value::Object(by)) = entry.get("configuredBy") {
            for key in ["apiVersion", "kind", "name", "namespace"] {
                if let Some(v) = by.get(key).and_then(Value::as_str) {
                    lines.push(format!("  {key}: {}", v3_scalar(v)));
                }
            }
        }
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(if i == 0 { first_prefix } else { &indent });
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A string as kyaml (go-yaml v3) writes it: plain, or double-quoted when plain would read as
/// another type (`1.0`, `0123`, `true`, `yes`, `1:20`), or single-quoted when plain cannot hold it.
fn v3_scalar(s: &str) -> String {
    const OLD_BOOLS: [&str; 16] = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"];
    if !crate::yaml::scalar::plain_is_string(s) || OLD_BOOLS.contains(&s) || crate::yaml::emit::is_base60_float(s) {
        return format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    }
    let first = s.chars().next().unwrap_or(' ');
    let needs_quotes = "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.starts_with(' ')
        || s.ends_with(' ');
    if needs_quotes { format!("'{}'", s.replace('\'', "''")) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_out_of_the_top_folder() {
        assert_eq!(relative_path(Path::new("/a/base/x.yaml"), Path::new("/a/prod")), "../base/x.yaml");
        assert_eq!(relative_path(Path::new("/a/prod/x.yaml"), Path::new("/a/prod")), "x.yaml");
    }

    #[test]
    fn values_that_would_read_as_other_types_are_quoted() {
        assert_eq!(v3_scalar("1.0"), "\"1.0\"");
        assert_eq!(v3_scalar("0123"), "\"0123\"");
        assert_eq!(v3_scalar("yes"), "\"yes\"");
        assert_eq!(v3_scalar("v1.0"), "v1.0");
        assert_eq!(v3_scalar("file:///r.git"), "file:///r.git");
    }

    #[test]
    fn entries_render_as_kustomize_writes_them() {
        assert_eq!(format_entry(&file_origin("svc.yaml"), ""), "path: svc.yaml\n");
        assert_eq!(
            format_entry(&configured("kustomization.yaml", "PrefixTransformer", None), "- "),
            "- configuredIn: kustomization.yaml\n  configuredBy:\n    apiVersion: builtin\n    kind: PrefixTransformer\n"
        );
    }
}
