//! `edit`: every `kustomize edit set|add|remove|fix` and `create`, with kustomize v5.8.1's
//! semantics and refusals, made in place. The scalar fields, images, replicas, labels,
//! annotations and components are here; list fields (`resources`, `patches`, `buildMetadata`,
//! ...) in [`lists`], generator entries in [`generators`], `fix` in [`fix`] and [`vars`],
//! `create` in [`create`].
//!
//! kustomize decodes the file, changes the value and writes the whole file again (its own key
//! order, its own quoting, comments only where it can guess their place). Here only the text
//! of what changes is replaced or inserted, in the style kustomize would write it: a release
//! bump is a one-line diff, and an edit that finds its value already there changes nothing.
pub mod args;
pub mod create;
pub mod document;
pub mod fix;
pub mod generators;
mod kustfile;
pub mod lists;
pub mod vars;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use args::ImageOverride;
use document::{item_name, Document, DocumentError, Placement, Step};


/// One edit, as the command line names it.
#[derive(Clone, Debug)]
pub enum Edit {
    /// `set nameprefix`
    SetNamePrefix(String),
    /// `set namesuffix`
    SetNameSuffix(String),
    /// `set namespace`
    SetNamespace(String),
    /// `set image`: one override per image name.
    SetImages(Vec<ImageOverride>),
    /// `set replicas`: name and count.
    SetReplicas(Vec<(String, i64)>),
    /// `add label`: into `commonLabels`, or with `without_selector` into a `labels` entry.
    AddLabels { pairs: Vec<(String, String)>, force: bool, without_selector: bool, include_templates: bool },
    /// `add annotation`: into `commonAnnotations`.
    AddAnnotations { pairs: Vec<(String, String)>, force: bool },
    /// `add component`: paths or glob patterns, relative to the kustomization folder.
    AddComponents(Vec<String>),
    /// `add resource|generator|transformer|configuration`: paths or glob patterns into `field`; with
    /// `verify` off (`--no-verify`), taken as written.
    AddPaths { field: &'static str, what: &'static str, patterns: Vec<String>, verify: bool },
    /// `add base A,B`: folders appended to `resources`.
    AddBases(Vec<String>),
    /// `add patch`.
    AddPatch(lists::PatchEntry),
    /// `add configmap|secret`.
    AddGenerator(generators::GeneratorKind, generators::AddGenerator),
    /// `add buildmetadata`.
    AddBuildMetadata(Vec<String>),
    /// `set label`: `commonLabels` entries, existing ones overwritten.
    SetLabels(Vec<(String, String)>),
    /// `set annotation`: `commonAnnotations` entries, existing ones overwritten.
    SetAnnotations(Vec<(String, String)>),
    /// `set buildmetadata`: the whole list.
    SetBuildMetadata(Vec<String>),
    /// `set configmap|secret`.
    SetGenerator(generators::GeneratorKind, generators::SetGenerator),
    /// `remove resource|transformer|component`: entries matching the patterns.
    RemovePaths { field: &'static str, patterns: Vec<String> },
    /// `remove patch`.
    RemovePatch(lists::PatchEntry),
    /// `remove configmap|secret NAME,...` in a namespace.
    RemoveGenerators { kind: generators::GeneratorKind, names: Vec<String>, namespace: String },
    /// `remove label|annotation`: keys of `commonLabels`/`commonAnnotations`; `ignore` (`-i`)
    /// accepts missing ones.
    RemoveKeys { field: &'static str, kind: &'static str, keys: Vec<String>, ignore: bool },
    /// `remove buildmetadata`.
    RemoveBuildMetadata(Vec<String>),
    /// `fix`: deprecated fields as their replacements; `vars` asks for `vars` too.
    Fix { vars: bool },
}

/// Why an edit was refused; nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Arguments kustomize refuses, with its message.
    #[error("{0}")]
    Usage(String),
    #[error("Missing kustomization file 'kustomization.yaml'.")]
    MissingFile,
    #[error("Found multiple kustomization file: [{}]", .0.join(" "))]
    MultipleFiles(Vec<String>),
    #[error("{0} should be a file")]
    NotAFile(String),
    /// `add label`/`add annotation` without `--force` for a key the file already has.
    #[error("{kind} {key} already in kustomization file. Use --force to override.")]
    AlreadyPresent { kind: &'static str, key: String },
    /// A component path or pattern that names nothing.
    #[error("{pattern} has no match: {reason}")]
    NoMatch { pattern: String, reason: String },
    /// The file cannot be read or written, or is not a kustomization kustomize would read.
    #[error(transparent)]
    File(#[from] crate::error::Error),
    /// The file's layout where the change goes is one this editor does not change.
    #[error("{file}:{}:{}: {}", .at.line, .at.column, .at.message)]
    Layout { file: String, at: DocumentError },
}

/// What an edit did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The kustomization file.
    pub file: PathBuf,
    /// Whether the file changed (an edit that finds everything in place writes nothing).
    pub changed: bool,
    /// Things said on the way, as kustomize logs them (an item already present).
    pub notes: Vec<String>,
}

/// Applies `edit` to the kustomization file in `dir`, writing it only if it changes.
pub fn edit(dir: &Path, edit: &Edit) -> Result<Outcome, EditError> {
    // kustomize checks the paths to add before it looks for the kustomization file.
    let mut notes = Vec::new();
    let paths = match edit {
        Edit::AddComponents(patterns) => Some(kustfile::expand_components(dir, patterns)?),
        Edit::AddPaths { what, patterns, .. } if patterns.is_empty() => {
            return Err(EditError::Usage(match *what {
                "resource" => "must specify a resource file".to_string(),
                "configuration" => "must specify a yaml file which contains a configuration resource".to_string(),
                plugin => format!("must specify a yaml file which contains a {plugin} plugin resource"),
            }));
        }
        Edit::AddPaths { patterns, verify: false, .. } => Some(patterns.clone()),
        Edit::AddPaths { field: "resources", patterns, .. } => Some(kustfile::expand_paths(dir, patterns, "resources")?),
        // Generator, transformer and configuration files: a pattern without a match is logged
        // and left out, as kustomize's `GlobPatterns` does.
        Edit::AddPaths { patterns, .. } => Some(kustfile::glob_each(dir, patterns, &mut notes)?),
        _ => None,
    };
    let file = kustfile::find_kustomization_file(dir)?;
    let original = kustfile::read(&file)?;
    let in_file = |e: EditError| match e {
        EditError::Layout { at, .. } => EditError::Layout { file: file.display().to_string(), at },
        other => other,
    };
    let mut doc = Document::new(original.clone()).map_err(|at| in_file(at.into()))?;
    let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let paths = paths.as_deref().unwrap_or_default();
    // Files besides the kustomization the edit rewrites (`fix --vars`), written with it.
    let mut other_files = Vec::new();
    let mut edit_notes = Vec::new();
    apply(&mut doc, edit, dir, paths, &file_name, &mut edit_notes, &mut other_files).map_err(in_file)?;
    if kustomize_writes(edit, paths, doc.text() != original) {
        // kustomize fills in a missing `apiVersion` and `kind` as it reads the file, and writes
        // the fields the file did not have after those it had, in its field order: the two
        // come before any field the edit adds, so the edit is made again after them.
        let mut with_kind = Document::new(original.clone()).map_err(|at| in_file(at.into()))?;
        fix::add_kind(&mut with_kind).map_err(in_file)?;
        if with_kind.text() != original {
            edit_notes.clear();
            other_files.clear();
            apply(&mut with_kind, edit, dir, paths, &file_name, &mut edit_notes, &mut other_files).map_err(in_file)?;
            doc = with_kind;
        }
        fix::drop_empty_fields(&mut doc).map_err(in_file)?;
    }
    notes.extend(edit_notes);
    let text = doc.into_text();
    let changed = text != original;
    if changed {
        kustfile::write_with(&file, &text, &other_files)?;
    }
    Ok(Outcome { file, changed, notes })
}

type EditResult = Result<(), EditError>;

/// Makes `edit` in `doc` (`paths`: those to add, already expanded).
fn apply(
    doc: &mut Document,
    edit: &Edit,
    dir: &Path,
    paths: &[String],
    file_name: &str,
    notes: &mut Vec<String>,
    other_files: &mut Vec<(PathBuf, String)>,
) -> EditResult {
    match edit {
        Edit::SetNamePrefix(value) => set_field(doc, "namePrefix", value),
        Edit::SetNameSuffix(value) => set_field(doc, "nameSuffix", value),
        Edit::SetNamespace(value) => set_field(doc, "namespace", value),
        Edit::SetImages(images) => set_images(doc, images),
        Edit::SetReplicas(replicas) => set_replicas(doc, replicas),
        Edit::AddLabels { pairs, force, without_selector: false, .. } => {
            add_pairs(doc, &[Step::Field("commonLabels")], None, pairs, *force, "label")
        }
        Edit::AddLabels { pairs, force, without_selector: true, include_templates } => {
            add_labels_without_selector(doc, pairs, *force, *include_templates)
        }
        Edit::AddAnnotations { pairs, force } => {
            add_pairs(doc, &[Step::Field("commonAnnotations")], None, pairs, *force, "annotation")
        }
        Edit::AddComponents(_) => add_components(doc, paths, file_name, notes),
        Edit::AddPaths { field, what, .. } => {
            lists::add_paths(doc, field, what, paths, file_name, notes)
        }
        Edit::AddBases(bases) => lists::add_bases(doc, dir, bases),
        Edit::AddPatch(patch) => lists::add_patch(doc, patch, notes),
        Edit::AddGenerator(kind, flags) => generators::add(doc, dir, *kind, flags, notes),
        Edit::AddBuildMetadata(options) => lists::add_build_metadata(doc, options),
        Edit::SetLabels(pairs) => add_pairs(doc, &[Step::Field("commonLabels")], None, pairs, true, "label"),
        Edit::SetAnnotations(pairs) => add_pairs(doc, &[Step::Field("commonAnnotations")], None, pairs, true, "annotation"),
        Edit::SetBuildMetadata(options) => lists::set_build_metadata(doc, options),
        Edit::SetGenerator(kind, flags) => generators::set(doc, *kind, flags),
        Edit::RemovePaths { field, patterns } => lists::remove_paths(doc, field, patterns),
        Edit::RemovePatch(patch) => lists::remove_patch(doc, patch, notes),
        Edit::RemoveGenerators { kind, names, namespace } => generators::remove(doc, *kind, names, namespace, file_name, notes),
        Edit::RemoveKeys { field, kind, keys, ignore } => lists::remove_keys(doc, field, kind, keys, *ignore),
        Edit::RemoveBuildMetadata(options) => lists::remove_build_metadata(doc, options),
        Edit::Fix { vars } => fix::fix(doc, dir, *vars, other_files),
    }
}

/// Whether kustomize writes the file again after `edit` (which then gets a missing `apiVersion`
/// and `kind`): always, but where its command returns early, having nothing to do (no path to
/// add; a patch already there or not there to remove; no entry matching a removal).
fn kustomize_writes(edit: &Edit, paths: &[String], changed: bool) -> bool {
    match edit {
        Edit::AddComponents(_) | Edit::AddPaths { .. } => !paths.is_empty(),
        Edit::AddPatch(_) | Edit::RemovePatch(_) | Edit::RemovePaths { .. } => changed,
        _ => true,
    }
}

impl From<DocumentError> for EditError {
    /// The file is named where the edit started.
    fn from(at: DocumentError) -> Self {
        EditError::Layout { file: String::new(), at }
    }
}

/// `namePrefix`, `nameSuffix`, `namespace`: set, or added at the end of the file.
fn set_field(doc: &mut Document, field: &'static str, value: &str) -> EditResult {
    let path = [Step::Field(field)];
    let value = Value::String(value.to_string());
    match doc.node(&path)? {
        None => doc.append_field(field, &value),
        Some(_) => doc.set_scalar(&path, &value).map(drop),
    }?;
    Ok(())
}

/// Puts `value` (a whole list or map) at the field `field`, which is missing or null.
fn create_field(doc: &mut Document, field: &'static str, value: Value) -> EditResult {
    match doc.node(&[Step::Field(field)])? {
        None => doc.append_field(field, &value),
        Some(_) => doc.fill_null(&[Step::Field(field)], &value),
    }?;
    Ok(())
}

/// The sequence at `field`, or None when the field is missing or null.
fn list_field(doc: &Document, field: &'static str) -> Result<Option<Vec<document::Node>>, DocumentError> {
    match doc.node(&[Step::Field(field)])? {
        None => Ok(None),
        Some(node) if node.is_null() => Ok(None),
        Some(node) => match node.items() {
            Some(items) => Ok(Some(items.to_vec())),
            None => Err(DocumentError { line: node.line + 1, column: node.column + 1, message: format!("{field} is not a list") }),
        },
    }
}

fn text_of(item: &document::Node, key: &str) -> String {
    item.get(key).and_then(|e| e.value.scalar()).and_then(crate::kustomization::types::scalar_text).unwrap_or_default()
}

fn object<'a>(fields: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())
}

fn image_entry(image: &ImageOverride) -> Value {
    object(image.fields().into_iter().map(|(k, v)| (k, Value::String(v.to_string()))))
}

/// `set image`: an entry with the image's name is rewritten to the argument (`*` keeping the
/// file's value, fields the argument leaves out removed, as kustomize replaces the entry);
/// other images get a new entry, in name order. kustomize folds the deprecated `imageTags`
/// into `images` as it edits; here an `imageTags` entry of the name is rewritten in place, so
/// that it cannot undo the new one.
fn set_images(doc: &mut Document, images: &[ImageOverride]) -> EditResult {
    let mut missing = Vec::new();
    for image in images {
        let mut found = false;
        for field in ["images", "imageTags"] {
            let items = list_field(doc, field)?.unwrap_or_default();
            for (i, item) in items.iter().enumerate() {
                if item_name(item).as_deref() == Some(image.name.as_str()) {
                    found = true;
                    rewrite_image_entry(doc, &[Step::Field(field), Step::Index(i)], item, image)?;
                }
            }
        }
        if !found {
            missing.push(image_entry(&image.merged_with("", "", "")));
        }
    }
    if list_field(doc, "images")?.is_none() {
        return if missing.is_empty() { Ok(()) } else { create_field(doc, "images", Value::Array(missing)) };
    }
    for entry in missing {
        doc.insert_item(&[Step::Field("images")], &entry, Placement::Sorted)?;
    }
    Ok(())
}

/// The `images` entry at `path` (read as `item`) made the argument's.
fn rewrite_image_entry(doc: &mut Document, path: &[Step], item: &document::Node, image: &ImageOverride) -> EditResult {
    let merged = image.merged_with(&text_of(item, "newName"), &text_of(item, "newTag"), &text_of(item, "digest"));
    let fields: Vec<(&str, Value)> = merged.fields().into_iter().map(|(k, v)| (k, Value::String(v.to_string()))).collect();
    for key in ["digest", "newName", "newTag", "tagSuffix"] {
        if !fields.iter().any(|(k, _)| *k == key) {
            doc.remove_entry(path, key)?;
        }
    }
    set_entries(doc, path, &fields)
}

/// Gives the mapping at `path` each of `fields`: existing keys get the value, new ones are
/// inserted in key order.
fn set_entries(doc: &mut Document, path: &[Step], fields: &[(&str, Value)]) -> EditResult {
    for (key, value) in fields {
        let mut at = path.to_vec();
        at.push(Step::Key(key.to_string()));
        match doc.node(&at)? {
            Some(_) => doc.set_scalar(&at, value).map(drop)?,
            None => doc.insert_entry(path, key, value, Placement::Sorted)?,
        }
    }
    Ok(())
}

/// `set replicas`: the count of an entry with the name is replaced; other names get a new
/// entry, in name order.
fn set_replicas(doc: &mut Document, replicas: &[(String, i64)]) -> EditResult {
    let entry = |name: &str, count: i64| object([("count", Value::from(count)), ("name", Value::String(name.to_string()))]);
    let Some(_) = list_field(doc, "replicas")? else {
        return create_field(doc, "replicas", Value::Array(replicas.iter().map(|(n, c)| entry(n, *c)).collect()));
    };
    for (name, count) in replicas {
        let items = list_field(doc, "replicas")?.unwrap_or_default();
        let matching: Vec<usize> = (0..items.len()).filter(|&i| item_name(&items[i]).as_deref() == Some(name.as_str())).collect();
        if matching.is_empty() {
            doc.insert_item(&[Step::Field("replicas")], &entry(name, *count), Placement::Sorted)?;
        }
        for i in matching {
            set_entries(doc, &[Step::Field("replicas"), Step::Index(i)], &[("count", Value::from(*count))])?;
        }
    }
    Ok(())
}

/// Adds `pairs` to the string map at `path` (`commonLabels`, `commonAnnotations`, a
/// `labels` entry's `pairs`). A key already there is refused without `force`. A missing map
/// is created: at the end of the file for a field, or as the key `pairs` of the `labels`
/// entry at `owner`.
fn add_pairs(
    doc: &mut Document,
    path: &[Step],
    owner: Option<&[Step]>,
    pairs: &[(String, String)],
    force: bool,
    kind: &'static str,
) -> EditResult {
    let existing = doc.node(path)?;
    if let Some(map) = existing.as_ref().filter(|n| !n.is_null()) {
        if map.entries().is_some() && !force {
            if let Some((key, _)) = pairs.iter().find(|(key, _)| map.get(key).is_some()) {
                return Err(EditError::AlreadyPresent { kind, key: key.clone() });
            }
        }
    }
    let values = || Value::Object(pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect());
    match existing {
        None => match (owner, path) {
            (Some(owner), _) => doc.insert_entry(owner, "pairs", &values(), Placement::Sorted)?,
            (None, [Step::Field(field)]) => doc.append_field(field, &values())?,
            (None, _) => unreachable!("a map without an owner is a field"),
        },
        Some(node) if node.is_null() => doc.fill_null(path, &values())?,
        Some(_) => {
            let fields: Vec<(&str, Value)> = pairs.iter().map(|(k, v)| (k.as_str(), Value::String(v.clone()))).collect();
            set_entries(doc, path, &fields)?
        }
    }
    Ok(())
}

/// `add label --without-selector`: into the first `labels` entry whose settings match
/// (`includeSelectors` off, `includeTemplates` as asked), or a new entry at the end.
fn add_labels_without_selector(
    doc: &mut Document,
    pairs: &[(String, String)],
    force: bool,
    include_templates: bool,
) -> EditResult {
    let mut entry = Map::new();
    if include_templates {
        entry.insert("includeTemplates".into(), Value::Bool(true));
    }
    entry.insert("pairs".into(), Value::Object(pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()));
    let Some(items) = list_field(doc, "labels")? else {
        return create_field(doc, "labels", Value::Array(vec![Value::Object(entry)]));
    };
    let flag = |item: &document::Node, key: &str| item.get(key).and_then(|e| e.value.scalar()) == Some(&Value::Bool(true));
    let matching = items.iter().position(|item| {
        item.entries().is_some() && !flag(item, "includeSelectors") && flag(item, "includeTemplates") == include_templates
    });
    match matching {
        None => Ok(doc.insert_item(&[Step::Field("labels")], &Value::Object(entry), Placement::End)?),
        Some(i) => {
            let owner = [Step::Field("labels"), Step::Index(i)];
            let path = [Step::Field("labels"), Step::Index(i), Step::Key("pairs".into())];
            add_pairs(doc, &path, Some(&owner), pairs, force, "label")
        }
    }
}

/// `add component`: each path not yet listed is appended to `components` (the kustomization
/// file itself never is); one already listed is noted, as kustomize logs it.
fn add_components(doc: &mut Document, components: &[String], file_name: &str, notes: &mut Vec<String>) -> EditResult {
    let items = list_field(doc, "components")?.unwrap_or_default();
    let already: Vec<String> =
        items.iter().filter_map(|i| i.scalar().and_then(crate::kustomization::types::scalar_text)).collect();
    let mut new = Vec::new();
    for component in components {
        if component == file_name {
            continue;
        }
        if already.contains(component) || new.contains(component) {
            notes.push(format!("component {component} already in kustomization file"));
            continue;
        }
        new.push(component.clone());
    }
    if new.is_empty() {
        return Ok(());
    }
    if list_field(doc, "components")?.is_none() {
        return create_field(doc, "components", Value::Array(new.into_iter().map(Value::String).collect()));
    }
    for component in new {
        doc.insert_item(&[Step::Field("components")], &Value::String(component), Placement::End)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A scratch kustomization folder, removed on drop. Its file starts with [`HEAD`] (an edit
    /// adds the two lines where they are missing, as kustomize does), which `edit` leaves out
    /// of what it returns.
    struct Folder(PathBuf);

    const HEAD: &str = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";

    impl Folder {
        fn with(text: &str) -> Folder {
            static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let dir = std::env::temp_dir().join(format!("ppb-edit-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("kustomization.yaml"), format!("{HEAD}{text}")).unwrap();
            Folder(dir)
        }

        fn edit(&self, e: Edit) -> String {
            edit(&self.0, &e).unwrap_or_else(|err| panic!("{err}"));
            self.text()
        }

        fn text(&self) -> String {
            let text = std::fs::read_to_string(self.0.join("kustomization.yaml")).unwrap();
            text.strip_prefix(HEAD).unwrap_or_else(|| panic!("the head is gone:\n{text}")).to_string()
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn images(args: &[&str]) -> Edit {
        Edit::SetImages(args::parse_images(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn an_image_argument_replaces_the_whole_entry_as_kustomize_does() {
        let f = Folder::with("images:\n- name: a\n  newName: b   # mirror\n  tagSuffix: -x\n  newTag: c\n");
        assert_eq!(f.edit(images(&["a:v1"])), "images:\n- name: a\n  newTag: v1\n");
        assert_eq!(f.edit(images(&["a=*@sha256:1"])), "images:\n- digest: sha256:1\n  name: a\n");
        // The argument gives no digest (`*` would keep it): the entry loses it.
        assert_eq!(f.edit(images(&["a=m/a:*"])), "images:\n- name: a\n  newName: m/a\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_written_through_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let f = Folder::with("namePrefix: p-\n");
        let real = f.0.join("real.yaml");
        std::fs::rename(f.0.join("kustomization.yaml"), &real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink("real.yaml", f.0.join("kustomization.yaml")).unwrap();
        assert_eq!(f.edit(Edit::SetNamespace("ns".into())), "namePrefix: p-\nnamespace: ns\n");
        assert!(f.0.join("kustomization.yaml").symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
        let leftovers: Vec<_> = std::fs::read_dir(&f.0).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers.len(), 2, "no temporary file left: {leftovers:?}");
    }

    #[test]
    fn a_deprecated_image_tags_entry_is_rewritten_too() {
        let f = Folder::with("imageTags:\n- name: a\n  newTag: v1\n");
        assert_eq!(f.edit(images(&["a:v2", "b:v3"])), "imageTags:\n- name: a\n  newTag: v2\nimages:\n- name: b\n  newTag: v3\n");
    }

    #[test]
    fn a_star_with_nothing_to_keep_writes_nothing() {
        let f = Folder::with("namePrefix: p-\n");
        assert_eq!(f.edit(images(&["a=*:v1", "b=n/b:*"])), "namePrefix: p-\nimages:\n- name: a\n  newTag: v1\n- name: b\n  newName: n/b\n");
    }

    /// As kustomize v5.8.3 edits the same file: an empty field the edit fills keeps its place,
    /// the other empty fields are dropped (kustomize writes its struct back, empty fields omitted).
    #[test]
    fn an_empty_field_is_filled_in_place_and_the_others_dropped() {
        let f = Folder::with("images:\nreplicas: ~\nresources: []\n");
        let text = f.edit(images(&["a:1"]));
        assert_eq!(text, "images:\n- name: a\n  newTag: \"1\"\n");
        let text = f.edit(Edit::SetReplicas(vec![("web".into(), 2)]));
        assert_eq!(text, "images:\n- name: a\n  newTag: \"1\"\nreplicas:\n- count: 2\n  name: web\n");
    }

    #[test]
    fn labels_without_selector_go_to_the_first_entry_with_the_same_settings() {
        let f = Folder::with("labels:\n- pairs:\n    a: \"1\"\n  includeSelectors: true\n- pairs:\n    b: \"2\"\n");
        let add = |force, include_templates, list: &[(&str, &str)]| Edit::AddLabels {
            pairs: pairs(list),
            force,
            without_selector: true,
            include_templates,
        };
        // includeSelectors differs from the first entry: the second one takes the label.
        assert_eq!(
            f.edit(add(false, false, &[("a", "x"), ("c", "3")])),
            "labels:\n- pairs:\n    a: \"1\"\n  includeSelectors: true\n- pairs:\n    a: x\n    b: \"2\"\n    c: \"3\"\n"
        );
        // No entry includes templates: a new one at the end.
        assert_eq!(
            f.edit(add(false, true, &[("d", "4")])),
            "labels:\n- pairs:\n    a: \"1\"\n  includeSelectors: true\n- pairs:\n    a: x\n    b: \"2\"\n    c: \"3\"\n- includeTemplates: true\n  pairs:\n    d: \"4\"\n"
        );
        let refused = edit(&f.0, &add(false, false, &[("b", "9")])).unwrap_err();
        assert_eq!(refused.to_string(), "label b already in kustomization file. Use --force to override.");
    }

    #[test]
    fn a_labels_entry_without_pairs_gets_them() {
        let f = Folder::with("labels:\n- includeTemplates: true\n  fields:\n  - path: spec/x\n    create: true\n");
        let text = f.edit(Edit::AddLabels { pairs: pairs(&[("k", "v")]), force: false, without_selector: true, include_templates: true });
        assert_eq!(text, "labels:\n- includeTemplates: true\n  fields:\n  - path: spec/x\n    create: true\n  pairs:\n    k: v\n");
    }

    #[test]
    fn components_are_appended_once_and_the_file_itself_never() {
        let f = Folder::with("components:\n- ../a\n");
        for folder in ["../a", "../b", "../c"] {
            std::fs::create_dir_all(f.0.join(folder)).unwrap();
        }
        let patterns = vec!["../a".to_string(), "../[bc]".to_string(), "kustomization.yaml".to_string()];
        let outcome = edit(&f.0, &Edit::AddComponents(patterns)).unwrap();
        assert_eq!(outcome.notes, vec!["component ../a already in kustomization file"]);
        assert_eq!(f.text(), "components:\n- ../a\n- ../b\n- ../c\n");
        for folder in ["../a", "../b", "../c"] {
            let _ = std::fs::remove_dir_all(f.0.join(folder));
        }
    }

    #[test]
    fn values_are_written_with_go_yaml_quoting() {
        let f = Folder::with("namePrefix: p-\n");
        let text = f.edit(Edit::AddAnnotations {
            pairs: pairs(&[("a", "true"), ("b", "012"), ("c", "multi\nline"), ("d", "1:20"), ("e", "")]),
            force: false,
        });
        assert_eq!(text, "namePrefix: p-\ncommonAnnotations:\n  a: \"true\"\n  b: \"012\"\n  c: |-\n    multi\n    line\n  d: \"1:20\"\n  e: \"\"\n");
        let text = f.edit(Edit::AddAnnotations { pairs: pairs(&[("a", "two\nlines")]), force: true });
        assert!(text.contains("  a: |-\n    two\n    lines\n  b:"), "{text}");
    }
}
