//! `edit fix`: deprecated fields rewritten as their replacements, as kustomize v5.8.1's
//! `FixKustomization` and `FixKustomizationPreMarshalling` rewrite them, in place: `bases` and
//! `imageTags` are appended to `resources` and `images`, a generator's `env` to its `envs`,
//! `patchesJson6902` and `patchesStrategicMerge` to `patches` (a strategic merge entry naming a
//! file becomes `path:`, another `patch:`), `commonLabels` to a `labels` entry with
//! `includeSelectors: true`; a missing `apiVersion` and `kind` are added.
use std::path::Path;

use serde_json::{Map, Value};

use super::document::{Document, Placement, Step};
use super::lists::append_items;
use super::{create_field, EditError, EditResult};

/// What `edit fix --vars` prints, as kustomize does.
pub const FIXED_FIELDS_AND_VARS: &str = "
Fixed fields:
  patchesJson6902 -> patches
  patchesStrategicMerge -> patches
  commonLabels -> labels
  vars -> replacements";

/// What `edit fix` prints, as kustomize does (without `--vars`).
pub const FIXED_FIELDS: &str = "
Fixed fields:
  patchesJson6902 -> patches
  patchesStrategicMerge -> patches
  commonLabels -> labels
To convert vars -> replacements, run the command `kustomize edit fix --vars`
WARNING: Converting vars to replacements will potentially overwrite many resource files 
and the resulting files may not produce the same output when `kustomize build` is run. 
We recommend doing this in a clean git repository where the change is easy to undo.";

fn values(doc: &Document) -> Value {
    crate::yaml::parse::parse_document(doc.text()).unwrap_or(Value::Null)
}

/// The key a field is written with (matched without regard to case, as kustomize decodes).
fn key_of(doc: &Document, field: &str) -> Option<String> {
    doc.root().ok().flatten().and_then(|root| root.field(field).map(|e| e.key.clone()))
}

/// The value of `field` (case-insensitive), if the file has it.
fn field_value(doc: &Document, field: &str) -> Option<Value> {
    let key = key_of(doc, field)?;
    values(doc).get(&key).cloned()
}

/// Moves the items of the list `from` (each made `convert`'s) to the end of the list `to`,
/// and removes `from`.
fn move_items(doc: &mut Document, from: &'static str, to: &'static str, convert: impl Fn(Value) -> Value) -> EditResult {
    let Some(key) = key_of(doc, from) else { return Ok(()) };
    let items = match field_value(doc, from) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    doc.remove_entry(&[], &key)?;
    append_items(doc, to, items.into_iter().map(convert).collect())
}

/// The fix; with `vars`, also `vars` to `replacements`, the resource files that rewrites
/// going to `files` (written with the kustomization, or not at all).
pub(super) fn fix(doc: &mut Document, dir: &Path, vars: bool, files: &mut Vec<(std::path::PathBuf, String)>) -> EditResult {
    add_kind(doc)?;
    move_items(doc, "bases", "resources", |v| v)?;
    move_items(doc, "imageTags", "images", |v| v)?;
    for generator in ["configMapGenerator", "secretGenerator"] {
        env_to_envs(doc, generator)?;
    }
    move_items(doc, "patchesJson6902", "patches", |v| v)?;
    move_items(doc, "patchesStrategicMerge", "patches", |v| {
        let text = match &v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let key = if crate::bounded_read::read_regular_file(&dir.join(&text), crate::bounded_read::Links::Follow, crate::bounded_read::MAX_FILE_BYTES).is_ok() { "path" } else { "patch" };
        Value::Object([(key.to_string(), Value::String(text))].into_iter().collect())
    })?;
    common_labels_to_labels(doc)?;
    if vars {
        vars_to_replacements(doc, dir, files)?;
    }
    Ok(())
}

/// `--vars`: the converted replacements after those the file has, `vars` removed.
fn vars_to_replacements(doc: &mut Document, dir: &Path, files: &mut Vec<(std::path::PathBuf, String)>) -> EditResult {
    let Some(key) = key_of(doc, "vars") else { return Ok(()) };
    let Some(conversion) = super::vars::convert(dir, &values(doc))? else { return Ok(()) };
    doc.remove_entry(&[], &key)?;
    files.extend(conversion.files);
    match field_value(doc, "replacements") {
        Some(Value::Array(items)) if !items.is_empty() => append_items(doc, "replacements", conversion.replacements),
        Some(_) => {
            let existing = key_of(doc, "replacements").unwrap_or_else(|| "replacements".into());
            doc.remove_entry(&[], &existing)?;
            create_field(doc, "replacements", Value::Array(conversion.replacements))
        }
        None if conversion.replacements.is_empty() => Ok(()),
        None => create_field(doc, "replacements", Value::Array(conversion.replacements)),
    }
}

/// `apiVersion` and `kind`, as kustomize's edit writes them when missing: its `Read` fills them
/// in, and its `Write` puts the fields the file did not have after those it had, so they come
/// after the file's last field (`create` starts a file with them instead).
pub(super) fn add_kind(doc: &mut Document) -> EditResult {
    let kind = field_value(doc, "kind").and_then(|k| k.as_str().map(str::to_string)).unwrap_or_default();
    if key_of(doc, "apiVersion").is_none() {
        let version = if kind == "Component" { "kustomize.config.k8s.io/v1alpha1" } else { "kustomize.config.k8s.io/v1beta1" };
        doc.append_field("apiVersion", &Value::String(version.into()))?;
    }
    if key_of(doc, "kind").is_none() {
        doc.append_field("kind", &Value::String("Kustomization".into()))?;
    }
    Ok(())
}

/// Top-level fields left empty (null, `""`, `[]`, `{}`) go, as kustomize's `Write` leaves out
/// every empty field.
pub(super) fn drop_empty_fields(doc: &mut Document) -> EditResult {
    let Value::Object(fields) = values(doc) else { return Ok(()) };
    for (key, value) in fields {
        let empty = match &value {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Array(items) => items.is_empty(),
            Value::Object(map) => map.is_empty(),
            _ => false,
        };
        if empty {
            doc.remove_entry(&[], &key)?;
        }
    }
    Ok(())
}

/// A generator's deprecated `env` goes to the end of its `envs`.
fn env_to_envs(doc: &mut Document, field: &'static str) -> EditResult {
    let Some(Value::Array(generators)) = field_value(doc, field) else { return Ok(()) };
    for (i, generator) in generators.iter().enumerate() {
        let Some(env) = generator.get("env").and_then(Value::as_str).filter(|e| !e.is_empty()) else { continue };
        let at = [Step::Field(field), Step::Index(i)];
        let envs_path = [Step::Field(field), Step::Index(i), Step::Key("envs".into())];
        let env = Value::String(env.to_string());
        match doc.node(&envs_path)? {
            Some(node) if node.items().is_some_and(|items| !items.is_empty()) => doc.insert_item(&envs_path, &env, Placement::End)?,
            Some(_) => {
                doc.remove_entry(&at, "envs")?;
                doc.insert_entry(&at, "envs", &Value::Array(vec![env]), Placement::Sorted)?;
            }
            None => doc.insert_entry(&at, "envs", &Value::Array(vec![env]), Placement::Sorted)?,
        }
        doc.remove_entry(&at, "env")?;
    }
    Ok(())
}

/// `commonLabels` becomes a `labels` entry that includes selectors; a key in both is refused.
fn common_labels_to_labels(doc: &mut Document) -> EditResult {
    let Some(key) = key_of(doc, "commonLabels") else { return Ok(()) };
    let pairs = field_value(doc, "commonLabels").and_then(|v| v.as_object().cloned()).unwrap_or_default();
    if pairs.is_empty() {
        return Ok(doc.remove_entry(&[], &key)?);
    }
    if let Some(Value::Array(labels)) = field_value(doc, "labels") {
        for label in &labels {
            if let Some(existing) = label.get("pairs").and_then(Value::as_object) {
                if let Some(both) = existing.keys().find(|k| pairs.contains_key(*k)) {
                    return Err(EditError::Usage(format!("label name '{both}' exists in both commonLabels and labels")));
                }
            }
        }
    }
    let mut entry = Map::new();
    entry.insert("includeSelectors".into(), Value::Bool(true));
    entry.insert("pairs".into(), Value::Object(pairs));
    doc.remove_entry(&[], &key)?;
    match field_value(doc, "labels") {
        Some(Value::Array(items)) if !items.is_empty() => append_items(doc, "labels", vec![Value::Object(entry)]),
        Some(_) => {
            let labels_key = key_of(doc, "labels").unwrap_or_else(|| "labels".into());
            doc.remove_entry(&[], &labels_key)?;
            create_field(doc, "labels", Value::Array(vec![Value::Object(entry)]))
        }
        None => create_field(doc, "labels", Value::Array(vec![Value::Object(entry)])),
    }
}
