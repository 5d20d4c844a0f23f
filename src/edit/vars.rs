//! `edit fix --vars`: each of `vars` becomes a `replacements` entry, as kustomize v5.8.1's
//! `ConvertVarsToReplacements` makes it. Every file the kustomization reaches (its resources,
//! the resources of the kustomizations in the folders it lists, its patch files) is searched
//! for `$(NAME)`: each field holding it becomes a target (with a delimiter and an index when
//! the var is part of the value), and `$(NAME)` is rewritten `NAME_PLACEHOLDER` in the file, so
//! the replacement has a value to replace. Where kustomize differs from its own intent this
//! keeps the intent: replacements already in the file are kept (kustomize drops them), and a
//! kustomization two folders down is searched at its own path.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::EditError;

/// What the conversion makes: the replacements to add, and the files to rewrite (path, text).
pub struct Conversion {
    pub replacements: Vec<Value>,
    pub files: Vec<(PathBuf, String)>,
}

/// A patch file's entry, for the targets found in it.
#[derive(Clone)]
struct PatchTarget {
    target: Map<String, Value>,
    allow_name_change: bool,
    allow_kind_change: bool,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value.and_then(Value::as_array).map_or_else(Vec::new, |items| items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect())
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Go's `path.Join` of a folder prefix and an entry, cleaned.
fn join(prefix: &str, entry: &str) -> String {
    crate::remote::url::clean_path(&if prefix.is_empty() { entry.to_string() } else { format!("{prefix}/{entry}") })
}

/// The files the kustomization `k` (in `dir`/`prefix`) reaches, in kustomize's order.
fn files_touched(dir: &Path, k: &Value, prefix: &str, patches: &mut BTreeMap<String, PatchTarget>, out: &mut Vec<String>) {
    let mut resources = strings(k.get("resources"));
    resources.extend(strings(k.get("bases")));
    for r in resources {
        let folder = dir.join(prefix).join(&r);
        let mut names: Vec<String> = std::fs::read_dir(&folder)
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned())).collect())
            .unwrap_or_default();
        names.sort();
        for name in names.iter().filter(|n| crate::kustomization::loader::KUSTOMIZATION_FILE_NAMES.contains(&n.as_str())) {
            let Ok(text) = crate::bounded_read::read_text(&folder.join(name)) else { continue };
            let Ok(sub) = crate::yaml::parse::parse_document(&text) else { continue };
            files_touched(dir, &sub, &join(prefix, &r), patches, out);
        }
        out.push(join(prefix, &r));
    }
    for patch in k.get("patches").and_then(Value::as_array).into_iter().flatten() {
        let path = text(patch, "path");
        if path.is_empty() {
            continue;
        }
        let file = join(prefix, path);
        let options = patch.get("options");
        let flag = |key: &str| options.and_then(|o| o.get(key)).and_then(Value::as_bool).unwrap_or(false);
        let target = patch.get("target").and_then(Value::as_object).cloned().unwrap_or_default();
        patches.insert(file.clone(), PatchTarget { target, allow_name_change: flag("allowNameChange"), allow_kind_change: flag("allowKindChange") });
        out.push(file);
    }
}

/// kustomize's `ParseGroupVersion`.
fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// The field paths holding `$(name)` in `node`, with their options (delimiter and index, or none).
fn find_var(node: &Value, var: &str, path: &mut Vec<String>, found: &mut Vec<(String, Option<(String, usize)>)>) -> Result<(), EditError> {
    match node {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                find_var(item, var, path, found)?;
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                let key = key.trim();
                path.push(if key.contains('.') { format!("[{key}]") } else { key.to_string() });
                find_var(value, var, path, found)?;
                path.pop();
            }
        }
        Value::String(value) if value.contains(var) => found.push((path.join("."), field_options(value, var)?)),
        _ => {}
    }
    Ok(())
}

/// kustomize's `constructFieldOptions`: where in a delimited value the var is.
fn field_options(value: &str, var: &str) -> Result<Option<(String, usize)>, EditError> {
    if value == var {
        return Ok(None);
    }
    let i = value.find(var).expect("the value holds the var");
    let char_at = |at: usize| value[at..].chars().next().map(String::from).unwrap_or_default();
    let char_before = |at: usize| value[..at].chars().next_back().map(String::from).unwrap_or_default();
    let (delimiter, index) = if i == 0 {
        (char_at(var.len()), 0)
    } else if i + var.len() >= value.len() {
        let delimiter = char_before(i);
        let index = value.split(delimiter.as_str()).count() - 1;
        (delimiter, index)
    } else {
        let (pre, post) = (char_before(i), char_at(i + var.len()));
        if pre != post {
            return Err(EditError::Usage(format!("cannot convert all vars to replacements; {var} is not delimited")));
        }
        let index = value.split(pre.as_str()).position(|part| part == var).ok_or_else(|| {
            EditError::Usage(format!("internal error: could not get index of var {var}"))
        })?;
        (pre, index)
    };
    Ok(Some((delimiter, index)))
}

fn options_value(options: &Option<(String, usize)>) -> Option<Value> {
    let (delimiter, index) = options.as_ref().filter(|(d, _)| !d.is_empty())?;
    let mut map = Map::new();
    map.insert("delimiter".into(), Value::String(delimiter.clone()));
    if *index != 0 {
        map.insert("index".into(), Value::from(*index));
    }
    Some(Value::Object(map))
}

/// The target for one field of `node` found in `file`.
fn target(node: &Value, file: &str, field_path: &str, options: &Option<(String, usize)>, patches: &BTreeMap<String, PatchTarget>) -> Value {
    let metadata = node.get("metadata").cloned().unwrap_or(Value::Null);
    let mut select: BTreeMap<String, Value> = BTreeMap::new();
    let put = |select: &mut BTreeMap<String, Value>, key: &str, value: &str| {
        if !value.is_empty() {
            select.insert(key.to_string(), Value::String(value.to_string()));
        }
    };
    match patches.get(file).filter(|p| !p.allow_name_change || !p.allow_kind_change) {
        Some(patch) => {
            for (key, value) in &patch.target {
                if let Some(value) = value.as_str() {
                    put(&mut select, key, value);
                }
            }
            if patch.allow_name_change {
                put(&mut select, "name", text(&metadata, "name"));
            }
            if patch.allow_kind_change {
                put(&mut select, "kind", text(node, "kind"));
            }
            put(&mut select, "namespace", text(&metadata, "namespace"));
        }
        None => {
            put(&mut select, "name", text(&metadata, "name"));
            put(&mut select, "namespace", text(&metadata, "namespace"));
            put(&mut select, "kind", text(node, "kind"));
            let (group, version) = group_version(text(node, "apiVersion"));
            put(&mut select, "group", group);
            put(&mut select, "version", version);
        }
    }
    let mut entry = Map::new();
    entry.insert("fieldPaths".into(), Value::Array(vec![Value::String(field_path.to_string())]));
    if let Some(options) = options_value(options) {
        entry.insert("options".into(), options);
    }
    entry.insert("select".into(), Value::Object(select.into_iter().collect()));
    Value::Object(entry)
}

/// The replacement for one var: its source from the var's `objref` and `fieldref`.
fn source(var: &Value) -> Value {
    let objref = var.get("objref").cloned().unwrap_or(Value::Null);
    let (group, version) = group_version(text(&objref, "apiVersion"));
    let mut source: BTreeMap<&str, Value> = BTreeMap::new();
    for (key, value) in [
        ("fieldPath", var.get("fieldref").map_or("", |f| text(f, "fieldPath"))),
        ("group", group),
        ("kind", text(&objref, "kind")),
        ("name", text(&objref, "name")),
        ("namespace", text(&objref, "namespace")),
        ("version", version),
    ] {
        if !value.is_empty() {
            source.insert(key, Value::String(value.to_string()));
        }
    }
    Value::Object(source.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Converts the `vars` of the kustomization `k` in `dir`; None when it has none.
pub fn convert(dir: &Path, k: &Value) -> Result<Option<Conversion>, EditError> {
    let Some(vars) = k.get("vars").and_then(Value::as_array) else { return Ok(None) };
    let mut patches = BTreeMap::new();
    let mut files = Vec::new();
    files_touched(dir, k, "", &mut patches, &mut files);
    // The files' texts as the conversion rewrites them, var after var.
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    for file in &files {
        let path = dir.join(file);
        if path.symlink_metadata().is_ok_and(|m| m.is_file()) {
            if let Ok(text) = crate::bounded_read::read_text(&path) {
                texts.insert(file.clone(), text);
            }
        }
    }
    let mut replacements = Vec::new();
    for var in vars {
        let name = text(var, "name");
        let placeholder = format!("$({name})");
        let mut targets = Vec::new();
        for file in &files {
            let Some(content) = texts.get(file) else { continue };
            let Ok(documents) = crate::yaml::parse::parse_documents(content) else { continue };
            for node in documents.iter().filter(|d| !d.is_null()) {
                let mut found = Vec::new();
                find_var(node, &placeholder, &mut Vec::new(), &mut found)
                    .map_err(|e| EditError::Usage(format!("error with {file}: {e}")))?;
                for (field_path, options) in &found {
                    targets.push(target(node, file, field_path, options, &patches));
                }
            }
        }
        for content in texts.values_mut() {
            *content = content.replace(&placeholder, &format!("{name}_PLACEHOLDER"));
        }
        let mut replacement = Map::new();
        replacement.insert("source".into(), source(var));
        if !targets.is_empty() {
            replacement.insert("targets".into(), Value::Array(targets));
        }
        replacements.push(Value::Object(replacement));
    }
    let changed: Vec<(PathBuf, String)> = texts
        .into_iter()
        .filter(|(file, text)| crate::bounded_read::read_text(&dir.join(file)).ok().as_deref() != Some(text.as_str()))
        .map(|(file, text)| (dir.join(file), text))
        .collect();
    // Only files inside this kustomization's folder are rewritten (links resolved): a tree
    // cannot make the fix write through `..`, an absolute path or a link elsewhere.
    let root = dir.canonicalize().map_err(|e| EditError::Usage(format!("{}: {e}", dir.display())))?;
    for (path, _) in &changed {
        let inside = path.canonicalize().is_ok_and(|real| real.starts_with(&root));
        if !inside {
            return Err(EditError::Usage(format!(
                "edit fix --vars would rewrite {}, which is outside this kustomization's folder; nothing written (run it where every file it reaches is inside)",
                path.display()
            )));
        }
    }
    Ok(Some(Conversion { replacements, files: changed }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kustomize's `TestFixVarsDelimiter*` cases: where the var sits in the value.
    #[test]
    fn a_var_in_a_delimited_value_is_found_by_delimiter_and_index() {
        let var = "$(SOME_SECRET_NAME)";
        let cases = [
            ("$(SOME_SECRET_NAME)", None),
            ("$(SOME_SECRET_NAME)/secret/path", Some(("/".to_string(), 0))),
            ("my/path/$(SOME_SECRET_NAME)", Some(("/".to_string(), 2))),
            ("my/path/$(SOME_SECRET_NAME)/secret/path", Some(("/".to_string(), 2))),
            ("a=b,$(SOME_SECRET_NAME),c", Some((",".to_string(), 1))),
        ];
        for (value, want) in cases {
            assert_eq!(field_options(value, var).unwrap(), want, "{value}");
        }
        assert!(field_options("a-$(SOME_SECRET_NAME)/b", var).unwrap_err().to_string().contains("is not delimited"));
    }

    #[test]
    fn field_paths_index_lists_and_bracket_dotted_keys() {
        let node = crate::yaml::parse::parse_document(
            "metadata:\n  annotations:\n    a.b/c: $(V)\nspec:\n  args: [x, \"--name=$(V)\"]\n",
        )
        .unwrap();
        let mut found = Vec::new();
        find_var(&node, "$(V)", &mut Vec::new(), &mut found).unwrap();
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["metadata.annotations.[a.b/c]", "spec.args.1"]);
        assert_eq!(found[1].1, Some(("=".to_string(), 1)));
    }
}
