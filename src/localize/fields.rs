//! Which fields of a kustomization name files or roots, and how each is localized
//! (kustomize's `localizeNativeFields` and `builtinplugins.go`).
use std::path::Path;

use serde_json::{Map, Value};

use super::Localizer;

/// The kustomization file decoded as kustomize decodes it (unknown fields refused, field names
/// matched case-insensitively), as a mapping of canonical field names.
pub fn decode(text: &str, file: &Path) -> Result<Value, String> {
    crate::target::parse_kustomization(text, file).map_err(|e| kustomize_words(e.to_string(), file))?;
    let value = crate::yaml::parse::parse_document_last_key_wins(text).map_err(|e| format!("invalid Kustomization: {}: {}", file.display(), e.message))?;
    let value = if value.is_null() { Value::Object(Map::new()) } else { value };
    Ok(crate::kustomization::types::canonicalize_field_names(value))
}

/// kustomize's message whole (`invalid Kustomization: json: ...`), with the place in the file
/// we know on a line of its own after it.
fn kustomize_words(message: String, file: &Path) -> String {
    let prefix = format!("invalid Kustomization: {}:", file.display());
    if let Some(rest) = message.strip_prefix(&prefix) {
        let mut parts = rest.splitn(3, ':');
        if let (Some(line), Some(column), Some(words)) = (parts.next(), parts.next(), parts.next()) {
            if line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok() {
                return format!("invalid Kustomization: {}\n  at {}:{line}:{column}", words.trim_start(), file.display());
            }
        }
    }
    message
}

/// Replaces each string of the list `field` (or the string itself) by `localize`'s result.
fn each_path(map: &mut Map<String, Value>, field: &str, mut localize: impl FnMut(&str) -> Result<String, String>) -> Result<(), String> {
    match map.get_mut(field) {
        Some(Value::Array(items)) => {
            for item in items.iter_mut() {
                if let Value::String(path) = item {
                    *path = localize(path)?;
                }
            }
        }
        Some(Value::String(path)) => *path = localize(path)?,
        _ => {}
    }
    Ok(())
}

/// kustomize's prefix for an error in an entry of `field`.
fn wrap(field: &'static str) -> impl Fn(String) -> String {
    move |e| format!("unable to localize {field} entry: {e}")
}

/// The mappings of the list `field`.
fn entries<'a>(map: &'a mut Map<String, Value>, field: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(field).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

impl Localizer<'_> {
    /// The fields kustomize itself reads files or roots from.
    pub(super) fn localize_native_fields(&self, kustomization: &mut Value) -> Result<(), String> {
        let Some(k) = kustomization.as_object_mut() else { return Ok(()) };
        if let Some(openapi) = k.get_mut("openapi").and_then(Value::as_object_mut) {
            each_path(openapi, "path", |p| self.localize_file(p)).map_err(|e| format!("unable to localize openapi path: {e}"))?;
        }
        each_path(k, "bases", |p| self.localize_root(p)).map_err(wrap("bases"))?;
        each_path(k, "components", |p| self.localize_root(p)).map_err(wrap("components"))?;
        each_path(k, "configurations", |p| self.localize_file(p)).map_err(wrap("configurations"))?;
        each_path(k, "crds", |p| self.localize_file(p)).map_err(wrap("crds"))?;
        each_path(k, "resources", |p| self.localize_resource(p)).map_err(wrap("resources"))?;
        for (field, kind) in [("configMapGenerator", "configMapGenerator"), ("secretGenerator", "secretGenerator")] {
            for generator in entries(k, field) {
                self.localize_generator(generator).map_err(|e| format!("unable to localize {kind}: {e}"))?;
            }
        }
        for (i, chart) in entries(k, "helmChartInflationGenerator").enumerate() {
            each_path(chart, "values", |p| self.localize_file(p)).map_err(|e| format!("unable to localize helmChartInflationGenerator entry {i} values: {e}"))?;
            let home = chart.get("chartHome").and_then(Value::as_str).unwrap_or("").to_string();
            let loc = self.copy_chart_home_entry(&home).map_err(|e| format!("unable to copy helmChartInflationGenerator entry {i}: {e}"))?;
            if chart.contains_key("chartHome") || !loc.is_empty() {
                chart.insert("chartHome".into(), loc.into());
            }
        }
        let mut charts = 0;
        for (i, chart) in entries(k, "helmCharts").enumerate() {
            charts += 1;
            each_path(chart, "valuesFile", |p| self.localize_file(p)).map_err(|e| format!("unable to localize helmCharts entry {i} valuesFile: {e}"))?;
            each_path(chart, "additionalValuesFiles", |p| self.localize_file(p))
                .map_err(|e| format!("unable to localize helmCharts entry {i} additionalValuesFiles: {e}"))?;
        }
        match k.get_mut("helmGlobals").and_then(Value::as_object_mut) {
            Some(globals) => {
                let home = globals.get("chartHome").and_then(Value::as_str).unwrap_or("").to_string();
                let loc = self.copy_chart_home_entry(&home).map_err(|e| format!("unable to copy helmGlobals: {e}"))?;
                globals.insert("chartHome".into(), loc.into());
            }
            None if charts > 0 => {
                self.copy_chart_home_entry("").map_err(|e| format!("unable to copy default chart home: {e}"))?;
            }
            None => {}
        }
        for (field, what) in [("patches", "patches"), ("patchesJson6902", "patchesJson6902")] {
            for patch in entries(k, field) {
                each_path(patch, "path", |p| self.localize_file(p)).map_err(|e| format!("unable to localize {what}: {e}"))?;
            }
        }
        each_path(k, "patchesStrategicMerge", |p| self.localize_k8s_resource(p)).map_err(wrap("patchesStrategicMerge"))?;
        for replacement in entries(k, "replacements") {
            each_path(replacement, "path", |p| self.localize_file(p)).map_err(wrap("replacements"))?;
        }
        Ok(())
    }

    /// `env`, `envs` and `files` of a configMap or secret generator.
    fn localize_generator(&self, generator: &mut Map<String, Value>) -> Result<(), String> {
        each_path(generator, "env", |p| self.localize_file(p)).map_err(|e| format!("unable to localize generator env file: {e}"))?;
        each_path(generator, "envs", |p| self.localize_file(p)).map_err(|e| format!("unable to localize generator envs file: {e}"))?;
        each_path(generator, "files", |p| self.localize_file_source(p))
    }

    /// A `patchesStrategicMerge` entry: a file is copied, an inline patch kept.
    fn localize_k8s_resource(&self, entry: &str) -> Result<String, String> {
        let (_, is_file) = self.load_k8s_resource(entry)?;
        if is_file {
            self.localize_file(entry)
        } else {
            Ok(entry.to_string())
        }
    }

    /// An entry that is inline resources or a file of them: its documents, and whether it is a file.
    fn load_k8s_resource(&self, entry: &str) -> Result<(Vec<Value>, bool), String> {
        let inline = resource_documents(Path::new(entry), entry);
        let inline_error = match inline {
            Ok(docs) => return Ok((docs, false)),
            Err(e) => e,
        };
        let from_file = self.ldr.load(self.args, entry).and_then(|content| resource_documents(Path::new(entry), &String::from_utf8_lossy(&content)));
        match from_file {
            Ok(docs) => Ok((docs, true)),
            Err(file_error) => Err(format!(
                "unable to load resource entry {entry:?}: when parsing as inline received error: {inline_error}\nwhen parsing as filepath received error: {file_error}"
            )),
        }
    }

    /// `generators`, `transformers`, `validators`: each entry's built-in plugin configurations get
    /// their paths localized; a file entry is rewritten into the destination, an inline one in place.
    pub(super) fn localize_builtin_plugins(&self, kustomization: &mut Value) -> Result<(), String> {
        let Some(k) = kustomization.as_object_mut() else { return Ok(()) };
        for field in ["generators", "transformers", "validators"] {
            let Some(Value::Array(items)) = k.get_mut(field) else { continue };
            for item in items.iter_mut() {
                let Value::String(entry) = item else { continue };
                let (mut docs, is_file) = self.load_k8s_resource(entry).map_err(|e| format!("unable to load {field} entry: {e}"))?;
                for doc in &mut docs {
                    self.localize_plugin(doc)?;
                }
                let text = crate::yaml::emit::emit_stream(docs.iter());
                *entry = if is_file {
                    self.localize_file_with_content(entry, text.as_bytes()).map_err(|e| format!("unable to localize {field} entry: {e}"))?
                } else {
                    text
                };
            }
        }
        Ok(())
    }

    /// The paths of one built-in plugin's configuration (`apiVersion: builtin`).
    fn localize_plugin(&self, doc: &mut Value) -> Result<(), String> {
        let Some(map) = doc.as_object_mut() else { return Ok(()) };
        if map.get("apiVersion").and_then(Value::as_str) != Some("builtin") {
            return Ok(());
        }
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        let id = plugin_id(map, &kind);
        let file = |p: &str| self.localize_file(p);
        let file_source = |p: &str| self.localize_file_source(p);
        let resource = |p: &str| self.localize_k8s_resource(p);
        let fields: &[(&str, &LocalizePath)] = match kind.as_str() {
            "ConfigMapGenerator" | "SecretGenerator" => &[("env", &file), ("envs", &file), ("files", &file_source)],
            "HelmChartInflationGenerator" => &[("valuesFile", &file), ("additionalValuesFiles", &file)],
            "PatchTransformer" | "PatchJson6902Transformer" => &[("path", &file)],
            "PatchStrategicMergeTransformer" => &[("paths", &resource)],
            "ReplacementTransformer" => {
                for replacement in entries(map, "replacements") {
                    localize_plugin_field(replacement, "path", &file).map_err(|e| format!("considering field 'replacements/path' of object {id}: {e}"))?;
                }
                &[]
            }
            _ => &[],
        };
        for (field, localize) in fields {
            localize_plugin_field(map, field, localize).map_err(|e| format!("considering field '{field}' of object {id}: {e}"))?;
        }
        if kind == "HelmChartInflationGenerator" {
            let home = match map.get("chartHome") {
                None => self.copy_chart_home_entry("").map(|_| None),
                Some(Value::String(home)) => self.copy_chart_home_entry(home).map(Some),
                Some(_) => Err("expected a scalar chartHome".to_string()),
            }
            .map_err(|e| format!("plugin {id}: {e}"))?;
            if let Some(home) = home {
                map.insert("chartHome".into(), home.into());
            }
        }
        Ok(())
    }
}

/// How one kind of path is localized: the entry as written to the entry as rewritten.
type LocalizePath<'a> = dyn Fn(&str) -> Result<String, String> + 'a;

/// One path field of a plugin configuration: a string or a list of them.
fn localize_plugin_field(map: &mut Map<String, Value>, field: &str, localize: &LocalizePath) -> Result<(), String> {
    match map.get(field) {
        None | Some(Value::String(_)) | Some(Value::Array(_)) => each_path(map, field, localize),
        Some(Value::Object(_)) => Err("expected sequence or scalar node".into()),
        Some(_) => Ok(()),
    }
}

/// kustomize's id of a plugin configuration in messages: `Kind.version.[noGrp]/name.[noNs]`.
fn plugin_id(map: &Map<String, Value>, kind: &str) -> String {
    let metadata = map.get("metadata").and_then(Value::as_object);
    let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let namespace = metadata.and_then(|m| m.get("namespace")).and_then(Value::as_str).filter(|n| !n.is_empty()).unwrap_or("[noNs]");
    format!("{kind}.builtin.[noGrp]/{name}.{namespace}")
}

/// The documents of `text` when it is resources (kustomize's `NewResMapFromBytes`).
fn resource_documents(file: &Path, text: &str) -> Result<Vec<Value>, String> {
    crate::resource::decode::resources_from_file(file, text).map_err(|e| e.to_string())?;
    let docs = crate::yaml::parse::parse_documents(text).map_err(|e| e.message.clone())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}
