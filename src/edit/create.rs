//! `create`: a new `kustomization.yaml` in a folder, as `kustomize create` writes it (fields in
//! kustomize's order), with `--autodetect` finding the resource files (and, `--recursive`, the
//! kustomization folders) below it.
use std::path::Path;

use serde_json::Value;

use super::document::Document;
use super::{args, kustfile, EditError, Outcome};

/// `create`'s flags (comma-separated lists as written).
#[derive(Clone, Debug, Default)]
pub struct CreateOptions {
    pub resources: String,
    pub namespace: String,
    pub annotations: String,
    pub labels: String,
    pub name_prefix: String,
    pub name_suffix: String,
    pub autodetect: bool,
    pub recursive: bool,
}

/// Creates `dir/kustomization.yaml`; an existing kustomization file (any name) is refused.
pub fn create(dir: &Path, options: &CreateOptions) -> Result<Outcome, EditError> {
    let split = |list: &str| -> Vec<String> { if list.is_empty() { Vec::new() } else { list.split(',').map(str::to_string).collect() } };
    let mut resources = match split(&options.resources) {
        patterns if patterns.is_empty() => Vec::new(),
        patterns => kustfile::expand_paths(dir, &patterns, "resources")?,
    };
    if !matches!(kustfile::find_kustomization_file(dir), Err(EditError::MissingFile)) {
        return Err(EditError::Usage("kustomization file already exists".into()));
    }
    if options.autodetect {
        for found in detect_resources(dir, Path::new(""), options.recursive)? {
            if !resources.contains(&found) {
                resources.push(found);
            }
        }
    }
    let pairs = |list: &str, kind: &str| -> Result<Vec<(String, String)>, EditError> {
        match split(list) {
            items if items.is_empty() => Ok(Vec::new()),
            items => args::parse_metadata(&items, kind),
        }
    };
    let annotations = pairs(&options.annotations, "annotation")?;
    let labels = pairs(&options.labels, "label")?;
    let mut doc = Document::new("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n".into())?;
    let string = |s: &str| Value::String(s.to_string());
    let map = |pairs: &[(String, String)]| Value::Object(pairs.iter().map(|(k, v)| (k.clone(), string(v))).collect());
    if !resources.is_empty() {
        doc.append_field("resources", &Value::Array(resources.iter().map(|r| string(r)).collect()))?;
    }
    for (field, value) in [("namePrefix", &options.name_prefix), ("nameSuffix", &options.name_suffix), ("namespace", &options.namespace)] {
        if !value.is_empty() {
            doc.append_field(field, &string(value))?;
        }
    }
    if !labels.is_empty() {
        doc.append_field("commonLabels", &map(&labels))?;
    }
    if !annotations.is_empty() {
        doc.append_field("commonAnnotations", &map(&annotations))?;
    }
    let file = dir.join("kustomization.yaml");
    kustfile::write_new(&file, doc.text())?;
    Ok(Outcome { file, changed: true, notes: Vec::new() })
}

/// The files under `dir/relative` that read as Kubernetes resources, in name order, as
/// kustomize's walk finds them; with `recursive`, folders below too, a folder with a
/// kustomization file being listed itself instead of its files.
fn detect_resources(dir: &Path, relative: &Path, recursive: bool) -> Result<Vec<String>, EditError> {
    let folder = dir.join(relative);
    let io = |e: std::io::Error| EditError::Usage(format!("{}: {e}", folder.display()));
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(&folder).map_err(io)?.collect::<Result<_, _>>().map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    let mut found = Vec::new();
    for entry in entries {
        let path = relative.join(entry.file_name());
        let text = path.to_string_lossy().into_owned();
        if entry.file_type().map_err(io)?.is_dir() {
            if !recursive {
                continue;
            }
            if crate::kustomization::loader::KUSTOMIZATION_FILE_NAMES.iter().any(|n| dir.join(&path).join(n).exists()) {
                found.push(text);
            } else {
                found.extend(detect_resources(dir, &path, recursive)?);
            }
            continue;
        }
        if reads_as_resources(&dir.join(&path)) {
            found.push(text);
        }
    }
    Ok(found)
}

/// Whether the file reads as kustomize's resource factory reads resources: YAML whose documents
/// are all objects with an `apiVersion` and a `kind` (an empty file is no error either).
fn reads_as_resources(file: &Path) -> bool {
    let Ok(text) = crate::bounded_read::read_text(file) else { return false };
    let Ok(documents) = crate::yaml::parse::parse_documents(&text) else { return false };
    documents.iter().filter(|d| !d.is_null()).all(|d| {
        let field = |k: &str| d.get(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        field("apiVersion") && field("kind")
    })
}
