//! `edit add|set|remove configmap|secret`: entries of `configMapGenerator` and
//! `secretGenerator`, found by name and namespace (none is `default`), as kustomize v5.8.1
//! finds, merges and checks them.
use std::path::Path;

use serde_json::{Map, Value};

use super::document::{Document, Placement, Step};
use super::lists::{append_items, remove_items};
use super::{list_field, EditError, EditResult};

/// Which generator list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratorKind {
    ConfigMap,
    Secret,
}

impl GeneratorKind {
    fn field(self) -> &'static str {
        match self {
            GeneratorKind::ConfigMap => "configMapGenerator",
            GeneratorKind::Secret => "secretGenerator",
        }
    }

    /// The word kustomize's messages use (`configmap`, `secret`).
    fn word(self) -> &'static str {
        match self {
            GeneratorKind::ConfigMap => "configmap",
            GeneratorKind::Secret => "secret",
        }
    }

    /// The kind, as in `unable to find ConfigMap with name ...`.
    fn kind(self) -> &'static str {
        match self {
            GeneratorKind::ConfigMap => "ConfigMap",
            GeneratorKind::Secret => "Secret",
        }
    }
}

/// The flags of `add configmap|secret NAME`.
#[derive(Clone, Debug, Default)]
pub struct AddGenerator {
    pub name: String,
    pub namespace: String,
    pub from_file: Vec<String>,
    pub from_literal: Vec<String>,
    pub from_env_file: String,
    pub behavior: String,
    pub disable_name_suffix_hash: bool,
    /// `--type` of a secret (kustomize's default: Opaque).
    pub secret_type: String,
}

/// The flags of `set configmap|secret NAME`.
#[derive(Clone, Debug, Default)]
pub struct SetGenerator {
    pub name: String,
    pub namespace: String,
    pub from_literal: Vec<String>,
    pub new_namespace: String,
}

/// kustomize's `NamespaceEqual`: no namespace is `default`.
fn namespace_equal(a: &str, b: &str) -> bool {
    let or_default = |n: &str| if n.is_empty() { "default".to_string() } else { n.to_string() };
    or_default(a) == or_default(b)
}

fn text(map: &Map<String, Value>, key: &str) -> String {
    match map.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The index and value of the generator entry with `name` in `namespace`.
fn find(doc: &Document, kind: GeneratorKind, name: &str, namespace: &str) -> Option<(usize, Map<String, Value>)> {
    let values = crate::yaml::parse::parse_document(doc.text()).ok()?;
    let items = values.get(kind.field())?.as_array()?;
    items.iter().enumerate().find_map(|(i, item)| {
        let map = item.as_object()?;
        (text(map, "name") == name && namespace_equal(&text(map, "namespace"), namespace)).then(|| (i, map.clone()))
    })
}

/// `--from-file` sources expanded as kustomize expands them: `KEY=PATTERN` must match one file,
/// a pattern matching nothing is skipped (kustomize logs it).
fn expand_file_sources(dir: &Path, sources: &[String], notes: &mut Vec<String>) -> Result<Vec<String>, EditError> {
    let mut expanded = Vec::new();
    for source in sources {
        let parts: Vec<&str> = source.split('=').collect();
        let (key, pattern) = match parts[..] {
            [key, pattern] => (Some(key), pattern),
            _ => (None, parts[0]),
        };
        let matches = super::kustfile::glob_matches(dir, pattern)?;
        if matches.is_empty() {
            notes.push(format!("{pattern} has no match"));
            continue;
        }
        match key {
            Some(_) if matches.len() != 1 => {
                return Err(EditError::Usage(format!(
                    "failed to expand file source: 'pattern '{source}' catches files [{}], should catch only one",
                    matches.join(" ")
                )))
            }
            Some(key) => expanded.push(format!("{key}={}", matches[0])),
            None => expanded.extend(matches),
        }
    }
    Ok(expanded)
}

/// A `--from-literal` as kustomize reads it when it makes the generator: `key=value`.
fn check_literal(literal: &str) -> Result<(), EditError> {
    match literal.split_once('=') {
        Some((key, _)) if !key.is_empty() => Ok(()),
        _ => Err(EditError::Usage(format!("invalid literal source {literal}, expected key=value"))),
    }
}

/// `add configmap|secret NAME`: the sources are added to the entry with that name and namespace,
/// or to a new entry at the end.
pub(super) fn add(doc: &mut Document, dir: &Path, kind: GeneratorKind, flags: &AddGenerator, notes: &mut Vec<String>) -> EditResult {
    let failed = |e: EditError| EditError::Usage(format!("failed to validate flags: {e}"));
    let files = expand_file_sources(dir, &flags.from_file, notes)?;
    if flags.from_env_file.is_empty() && files.is_empty() && flags.from_literal.is_empty() {
        return Err(failed(EditError::Usage("at least from-env-file, or from-file or from-literal must be set".into())));
    }
    if !flags.from_env_file.is_empty() && (!files.is_empty() || !flags.from_literal.is_empty()) {
        return Err(failed(EditError::Usage("from-env-file cannot be combined with from-file or from-literal".into())));
    }
    if !flags.behavior.is_empty() && !["create", "merge", "replace"].contains(&flags.behavior.as_str()) {
        return Err(failed(EditError::Usage(r#"invalid behavior: must be one of "create", "merge", or "replace""#.into())));
    }
    let make_failed = |e: EditError| EditError::Usage(format!("failed to create {}: {e}", kind.word()));
    // kustomize loads the sources to check them; its loader names the list a bad literal is in.
    for literal in &flags.from_literal {
        check_literal(literal)
            .map_err(|e| make_failed(EditError::Usage(format!("loading KV pairs: literal sources [{}]: {e}", flags.from_literal.join(" ")))))?;
    }
    if !flags.from_env_file.is_empty() && !dir.join(&flags.from_env_file).is_file() {
        return Err(make_failed(EditError::Usage(format!("env source file {} not found", flags.from_env_file))));
    }
    let lists: Vec<(&str, Vec<String>)> = [
        ("envs", if flags.from_env_file.is_empty() { Vec::new() } else { vec![flags.from_env_file.clone()] }),
        ("files", files),
        ("literals", flags.from_literal.clone()),
    ]
    .into_iter()
    .filter(|(_, l)| !l.is_empty())
    .collect();
    let strings = |l: &[String]| Value::Array(l.iter().cloned().map(Value::String).collect());
    let options = || Value::Object([("disableNameSuffixHash".to_string(), Value::Bool(true))].into_iter().collect());
    let Some((i, existing)) = find(doc, kind, &flags.name, &flags.namespace) else {
        let mut entry = Map::new();
        if !flags.behavior.is_empty() {
            entry.insert("behavior".into(), Value::String(flags.behavior.clone()));
        }
        for (key, list) in &lists {
            entry.insert(key.to_string(), strings(list));
        }
        entry.insert("name".into(), Value::String(flags.name.clone()));
        if !flags.namespace.is_empty() {
            entry.insert("namespace".into(), Value::String(flags.namespace.clone()));
        }
        if flags.disable_name_suffix_hash {
            entry.insert("options".into(), options());
        }
        if kind == GeneratorKind::Secret && !flags.secret_type.is_empty() {
            entry.insert("type".into(), Value::String(flags.secret_type.clone()));
        }
        return append_items(doc, kind.field(), vec![Value::Object(entry)]);
    };
    let at = [Step::Field(kind.field()), Step::Index(i)];
    for (key, list) in &lists {
        let mut path = at.to_vec();
        path.push(Step::Key(key.to_string()));
        match doc.node(&path)? {
            Some(node) if node.items().is_some_and(|items| !items.is_empty()) => {
                for value in list {
                    doc.insert_item(&path, &Value::String(value.clone()), Placement::End)?;
                }
            }
            Some(_) => {
                doc.remove_entry(&at, key)?;
                doc.insert_entry(&at, key, &strings(list), Placement::Sorted)?;
            }
            None => doc.insert_entry(&at, key, &strings(list), Placement::Sorted)?,
        }
    }
    if flags.disable_name_suffix_hash && existing.get("options") != Some(&options()) {
        if existing.contains_key("options") {
            doc.remove_entry(&at, "options")?;
        }
        doc.insert_entry(&at, "options", &options(), Placement::Sorted)?;
    }
    if !flags.behavior.is_empty() {
        set_key(doc, &at, "behavior", &flags.behavior)?;
    }
    Ok(())
}

/// The string `key` of the mapping at `at` set to `value` (inserted in order when missing).
fn set_key(doc: &mut Document, at: &[Step], key: &str, value: &str) -> EditResult {
    let mut path = at.to_vec();
    path.push(Step::Key(key.to_string()));
    let value = Value::String(value.to_string());
    match doc.node(&path)? {
        Some(_) => doc.set_scalar(&path, &value).map(drop)?,
        None => doc.insert_entry(at, key, &value, Placement::Sorted)?,
    }
    Ok(())
}

/// `set configmap|secret NAME`: the values of literal keys the entry has, and its namespace.
pub(super) fn set(doc: &mut Document, kind: GeneratorKind, flags: &SetGenerator) -> EditResult {
    if flags.from_literal.is_empty() && flags.new_namespace.is_empty() {
        return Err(EditError::Usage(
            "failed to validate flags: at least one of [--from-literal, --new-namespace] must be specified".into(),
        ));
    }
    let failed = |message: String| EditError::Usage(format!("failed to create {}: {message}", kind.word()));
    let Some((i, existing)) = find(doc, kind, &flags.name, &flags.namespace) else {
        return Err(failed(format!("could not set new {} value: unable to find {} with name \"{}\"", kind.kind(), kind.kind(), flags.name)));
    };
    let at = [Step::Field(kind.field()), Step::Index(i)];
    let literals: Vec<String> = existing.get("literals").and_then(Value::as_array).map_or_else(Vec::new, |l| {
        l.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect()
    });
    let key_value = |literal: &str| -> Result<(String, String), EditError> {
        match literal.matches('=').count() {
            1 => literal.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).ok_or_else(|| unreachable!()),
            _ => Err(failed(
                "failed to update literal sources: failed to update resource: invalid format: literal values must be specified in the key=value format"
                    .into(),
            )),
        }
    };
    let existing_keys = literals.iter().map(|l| key_value(l).map(|(k, _)| k)).collect::<Result<Vec<_>, _>>()?;
    for literal in &flags.from_literal {
        let (key, _) = key_value(literal)?;
        let Some(index) = existing_keys.iter().rposition(|k| *k == key) else {
            return Err(failed(format!("failed to update literal sources: key '{key}' not found in resource")));
        };
        let mut path = at.to_vec();
        path.extend([Step::Key("literals".into()), Step::Index(index)]);
        doc.set_scalar(&path, &Value::String(literal.clone()))?;
    }
    if !flags.new_namespace.is_empty() {
        set_key(doc, &at, "namespace", &flags.new_namespace)?;
    }
    Ok(())
}

/// `remove configmap|secret NAME,...`: the entries with those names in the namespace go; none
/// found is an error, a name not found is noted.
pub(super) fn remove(doc: &mut Document, kind: GeneratorKind, names: &[String], namespace: &str, file_name: &str, notes: &mut Vec<String>) -> EditResult {
    let mut found = Vec::new();
    for name in names {
        if find(doc, kind, name, namespace).is_some() {
            found.push(name.clone());
        }
    }
    if found.is_empty() {
        return Err(EditError::Usage(format!("no specified {}(s) were found in the {file_name} file", kind.word())));
    }
    for name in names.iter().filter(|n| !found.contains(n)) {
        notes.push(format!("{} {name} doesn't exist in kustomization file", kind.word()));
    }
    let _ = list_field(doc, kind.field())?;
    remove_items(doc, kind.field(), |_, item| {
        item.as_object().is_some_and(|map| found.contains(&text(map, "name")) && namespace_equal(&text(map, "namespace"), namespace))
    })
}

/// `remove configmap|secret` arguments: one, comma-separated.
pub fn parse_names(args: &[String], kind: GeneratorKind) -> Result<Vec<String>, EditError> {
    let word = kind.word();
    match args {
        [] => Err(EditError::Usage(format!("at least one {word} name must be specified"))),
        [one] => Ok(one.split(',').map(str::to_string).collect()),
        _ => Err(EditError::Usage(format!(
            "too many arguments: [{}]; to provide multiple {word}s to remove, please separate {word} names by commas",
            args.join(" ")
        ))),
    }
}
