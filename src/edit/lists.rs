//! The list and map fields the `edit add`, `edit set` and `edit remove` commands change
//! (`resources`, `patches`, generators, `buildMetadata`, `commonLabels`, ...), in place, with
//! kustomize v5.8.1's checks and messages. New entries are written with their keys in the order
//! kustomize's edit writes them (sorted).
use serde_json::{Map, Value};

use super::document::{Document, Placement, Step};
use super::{create_field, list_field, EditError, EditResult};

/// kustomize's `buildMetadata` options.
pub const BUILD_METADATA_OPTIONS: &[&str] = &["originAnnotations", "transformerAnnotations", "managedByLabel"];

/// The kustomization as values (to compare entries), read from the document's current text.
fn values(doc: &Document) -> Value {
    crate::yaml::parse::parse_document(doc.text()).unwrap_or(Value::Null)
}

/// The items of the list `field`, as values (empty when the field is missing or null).
fn items(doc: &Document, field: &str) -> Vec<Value> {
    match values(doc).get(field_key(doc, field)) {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

/// The text of a scalar item (`- ../base`), as kustomize decodes a string list.
fn item_text(item: &Value) -> Option<String> {
    match item {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Appends `new` to the list `field`, which is created (at the end of the file) if missing.
pub(super) fn append_items(doc: &mut Document, field: &'static str, new: Vec<Value>) -> EditResult {
    if new.is_empty() {
        return Ok(());
    }
    if list_field(doc, field)?.is_none() {
        return create_field(doc, field, Value::Array(new));
    }
    for item in new {
        doc.insert_item(&[Step::Field(field)], &item, Placement::End)?;
    }
    Ok(())
}

/// Removes the items of the list `field` whose index `remove` selects; a list left empty goes
/// with its field, as kustomize leaves an empty list out.
pub(super) fn remove_items(doc: &mut Document, field: &'static str, remove: impl Fn(usize, &Value) -> bool) -> EditResult {
    let all = items(doc, field);
    let doomed: Vec<usize> = all.iter().enumerate().filter(|(i, item)| remove(*i, item)).map(|(i, _)| i).collect();
    if doomed.is_empty() {
        return Ok(());
    }
    if doomed.len() == all.len() {
        return Ok(doc.remove_entry(&[], &field_key(doc, field))?);
    }
    // From the last, so the indexes before stay right.
    for i in doomed.into_iter().rev() {
        doc.remove_item(&[Step::Field(field)], i)?;
    }
    Ok(())
}

/// The key a field is written with in the file (kustomize matches field names without regard to case).
fn field_key(doc: &Document, field: &str) -> String {
    doc.root().ok().flatten().and_then(|root| root.field(field).map(|e| e.key.clone())).unwrap_or_else(|| field.to_string())
}

/// `add resource|generator|transformer` (paths already expanded): each path not yet listed is
/// appended; one listed is noted, as kustomize logs it; the kustomization file itself never is.
pub(super) fn add_paths(doc: &mut Document, field: &'static str, what: &str, paths: &[String], file_name: &str, notes: &mut Vec<String>) -> EditResult {
    let mut listed: Vec<String> = items(doc, field).iter().filter_map(item_text).collect();
    // kustomize reads the deprecated `bases` into `resources` first.
    if field == "resources" {
        listed.extend(items(doc, "bases").iter().filter_map(item_text));
    }
    let mut new = Vec::new();
    for path in paths.iter().filter(|p| p.as_str() != file_name) {
        if listed.contains(path) {
            notes.push(format!("{what} {path} already in kustomization file"));
            continue;
        }
        listed.push(path.clone());
        new.push(Value::String(path.clone()));
    }
    append_items(doc, field, new)
}

/// `add base A,B`: each must exist and not be listed in `resources` yet.
pub(super) fn add_bases(doc: &mut Document, dir: &std::path::Path, bases: &[String]) -> EditResult {
    // kustomize reads the deprecated `bases` into `resources` first.
    let listed: Vec<String> = items(doc, "resources").iter().chain(&items(doc, "bases")).filter_map(item_text).collect();
    let mut new = Vec::new();
    for base in bases {
        if dir.join(base).symlink_metadata().is_err() {
            return Err(EditError::Usage(format!("{base} does not exist")));
        }
        if listed.contains(base) || new.contains(&Value::String(base.clone())) {
            return Err(EditError::Usage(format!("base {base} already in kustomization file")));
        }
        new.push(Value::String(base.clone()));
    }
    append_items(doc, "resources", new)
}

/// `remove resource|transformer PATTERN...`: the entries a pattern matches as Go's
/// `filepath.Match` does (`*` stops at `/`) go; nothing matched writes nothing.
pub(super) fn remove_paths(doc: &mut Document, field: &'static str, patterns: &[String]) -> EditResult {
    let mut compiled = Vec::new();
    for pattern in patterns {
        compiled.push(glob::Pattern::new(pattern).map_err(|_| EditError::Usage("syntax error in pattern".into()))?);
    }
    let options = glob::MatchOptions { case_sensitive: true, require_literal_separator: true, require_literal_leading_dot: false };
    remove_items(doc, field, |_, item| item_text(item).is_some_and(|text| compiled.iter().any(|p| p.matches_with(&text, options))))
}

/// Checks `buildMetadata` options as kustomize does: one argument, comma-separated, each known.
pub fn parse_build_metadata(args: &[String]) -> Result<Vec<String>, EditError> {
    match args {
        [] => Err(EditError::Usage("must specify a buildMetadata option".into())),
        [one] => {
            let options: Vec<String> = one.split(',').map(str::to_string).collect();
            match options.iter().find(|o| !BUILD_METADATA_OPTIONS.contains(&o.as_str())) {
                Some(bad) => Err(EditError::Usage(format!("invalid buildMetadata option: {bad}"))),
                None => Ok(options),
            }
        }
        _ => Err(EditError::Usage(format!(
            "too many arguments: [{}]; to provide multiple buildMetadata options, please separate options by comma",
            args.join(" ")
        ))),
    }
}

/// `add buildmetadata`: an option already there is refused.
pub(super) fn add_build_metadata(doc: &mut Document, options: &[String]) -> EditResult {
    let listed: Vec<String> = items(doc, "buildMetadata").iter().filter_map(item_text).collect();
    if let Some(there) = options.iter().find(|o| listed.contains(o)) {
        return Err(EditError::Usage(format!("buildMetadata option {there} already in kustomization file")));
    }
    append_items(doc, "buildMetadata", options.iter().cloned().map(Value::String).collect())
}

/// `set buildmetadata`: the list becomes `options` (unchanged when it already is).
pub(super) fn set_build_metadata(doc: &mut Document, options: &[String]) -> EditResult {
    let listed: Vec<String> = items(doc, "buildMetadata").iter().filter_map(item_text).collect();
    if listed == options {
        return Ok(());
    }
    if doc.node(&[Step::Field("buildMetadata")])?.is_some() {
        doc.remove_entry(&[], &field_key(doc, "buildMetadata"))?;
    }
    create_field(doc, "buildMetadata", Value::Array(options.iter().cloned().map(Value::String).collect()))
}

/// `remove buildmetadata`.
pub(super) fn remove_build_metadata(doc: &mut Document, options: &[String]) -> EditResult {
    remove_items(doc, "buildMetadata", |_, item| item_text(item).is_some_and(|t| options.contains(&t)))
}

/// One `patches` entry, as `add patch` and `remove patch` take it from their flags.
#[derive(Clone, Debug, Default)]
pub struct PatchEntry {
    pub path: String,
    pub patch: String,
    /// Target selector fields (`group`, `version`, `kind`, `name`, `namespace`,
    /// `annotationSelector`, `labelSelector`) that were given.
    pub target: Vec<(&'static str, String)>,
}

impl PatchEntry {
    /// The entry as kustomize writes it: keys sorted, no empty field, no empty target.
    pub fn to_value(&self) -> Value {
        let mut entry = Map::new();
        if !self.patch.is_empty() {
            entry.insert("patch".into(), Value::String(self.patch.clone()));
        }
        if !self.path.is_empty() {
            entry.insert("path".into(), Value::String(self.path.clone()));
        }
        let mut target: Vec<(&str, String)> = self.target.iter().filter(|(_, v)| !v.is_empty()).cloned().collect();
        target.sort();
        if !target.is_empty() {
            entry.insert("target".into(), Value::Object(target.into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect()));
        }
        Value::Object(entry)
    }

    /// kustomize's `Patch.Equals`: same path, patch text, target fields and options (none).
    fn equals(&self, item: &Value) -> bool {
        let text = |v: Option<&Value>| v.and_then(item_text).unwrap_or_default();
        let Some(map) = item.as_object() else { return false };
        let options_empty = map.get("options").is_none_or(|o| o.as_object().is_some_and(Map::is_empty) || o.is_null());
        let target = map.get("target").and_then(Value::as_object);
        let same_target = ["group", "version", "kind", "name", "namespace", "annotationSelector", "labelSelector"].iter().all(|key| {
            let ours = self.target.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or_default();
            ours == text(target.and_then(|t| t.get(*key)))
        });
        text(map.get("path")) == self.path && text(map.get("patch")) == self.patch && same_target && options_empty
    }

    fn describe(&self) -> &str {
        if self.path.is_empty() {
            &self.patch
        } else {
            &self.path
        }
    }
}

/// `add patch`: appended unless an equal entry is there (noted, nothing written).
pub(super) fn add_patch(doc: &mut Document, patch: &PatchEntry, notes: &mut Vec<String>) -> EditResult {
    if items(doc, "patches").iter().any(|item| patch.equals(item)) {
        notes.push(format!("patch {} already in kustomization file", patch.describe()));
        return Ok(());
    }
    append_items(doc, "patches", vec![patch.to_value()])
}

/// `remove patch`: every equal entry goes; none is noted.
pub(super) fn remove_patch(doc: &mut Document, patch: &PatchEntry, notes: &mut Vec<String>) -> EditResult {
    if !items(doc, "patches").iter().any(|item| patch.equals(item)) {
        notes.push(format!("patch {} doesn't exist in kustomization file", patch.describe()));
        return Ok(());
    }
    remove_items(doc, "patches", |_, item| patch.equals(item))
}

/// `remove label|annotation KEY,...` from `commonLabels`/`commonAnnotations`; with `ignore`
/// (`-i`) a missing map or key is no error. A map left empty goes with its field.
pub(super) fn remove_keys(doc: &mut Document, field: &'static str, kind: &str, keys: &[String], ignore: bool) -> EditResult {
    let map = values(doc).get(field_key(doc, field)).and_then(Value::as_object).cloned();
    let Some(map) = map else {
        return if ignore { Ok(()) } else { Err(EditError::Usage(format!("{field} is not defined in kustomization file"))) };
    };
    if let Some(missing) = keys.iter().find(|k| !map.contains_key(*k)) {
        if !ignore {
            return Err(EditError::Usage(format!("{kind} {missing} is not defined in kustomization file")));
        }
    }
    let present: Vec<&String> = keys.iter().filter(|k| map.contains_key(*k)).collect();
    if present.is_empty() {
        return Ok(());
    }
    if map.keys().all(|k| keys.contains(k)) {
        return Ok(doc.remove_entry(&[], &field_key(doc, field))?);
    }
    for key in present {
        doc.remove_entry(&[Step::Field(field)], key)?;
    }
    Ok(())
}

/// `remove label|annotation` arguments: one, comma-separated, no empty name.
pub fn parse_keys(args: &[String], kind: &str) -> Result<Vec<String>, EditError> {
    match args {
        [] => Err(EditError::Usage(format!("must specify {kind}"))),
        [one] => one
            .split(',')
            .map(|k| match k {
                "" => Err(EditError::Usage(format!("invalid {kind}: '' (name is empty)"))),
                k => Ok(k.to_string()),
            })
            .collect(),
        _ => Err(EditError::Usage(format!("{kind}s must be comma-separated, with no spaces"))),
    }
}
