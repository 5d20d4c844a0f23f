//! The patch transformers: `patchesStrategicMerge`, `patches` and `patchesJson6902`, choosing their
//! targets as kustomize does and handing the merge itself to [`crate::patch`].
use serde_json::Value;

use super::select::{same_id, CompiledSelector};
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::kustomization::types::{Patch, Selector};
use crate::kustomization::Loader;
use crate::patch::{apply_json6902_within, strategic_merge, Schema};
use crate::resource::{ResId, ResMap, Resource};
use crate::yaml::memo::TextMemo;
use crate::yaml::parse::parse_documents;

/// A patch read from a file or written inline.
#[derive(Clone)]
pub enum LoadedPatch {
    /// Strategic merge patches (each a partial object); none for a patch holding no document.
    Strategic(Vec<Value>),
    /// An RFC 6902 operation list.
    Json6902(Value),
}

/// Parses patch text, telling a strategic merge patch (mappings) from a JSON 6902 one (a list).
pub fn parse_patch_text(text: &str, origin: &str) -> Result<LoadedPatch> {
    static PARSED: TextMemo<LoadedPatch> = TextMemo::new();
    PARSED.get_or_parse(text, |text| parse_patch_text_once(text, origin))
}

fn parse_patch_text_once(text: &str, origin: &str) -> Result<LoadedPatch> {
    let docs = parse_documents(text).map_err(|e| Error::Parse {
        file: origin.to_string(),
        line: e.line,
        column: e.column,
        message: e.message.clone(),
    })?;
    let docs: Vec<Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    match docs.first() {
        // Nothing, or only comments: kustomize v5.8 skips such a `patches` entry; the other fields refuse it.
        None => Ok(LoadedPatch::Strategic(Vec::new())),
        // kustomize reads a JSON 6902 patch as one document: later documents are ignored.
        Some(Value::Array(_)) => Ok(LoadedPatch::Json6902(docs.into_iter().next().unwrap())),
        Some(_) if docs.iter().all(Value::is_object) => Ok(LoadedPatch::Strategic(docs)),
        Some(Value::String(_)) => Err(Error::msg(format!(
            "unable to parse SM or JSON patch from {text}: json: cannot unmarshal string into Go value of type jsonpatch.Patch"
        ))),
        Some(_) => Err(Error::msg(format!("unable to parse SM or JSON patch from {text}"))),
    }
}

/// The text of a `patches`/`patchesJson6902` entry: its file or its inline `patch`.
fn patch_text(path: &str, inline: &str, loader: &Loader, entry: &str) -> Result<(String, String)> {
    let inline = inline.trim();
    match (path.is_empty(), inline.is_empty()) {
        (true, true) => Err(Error::msg(format!("must specify one of patch and path in\n{entry}"))),
        (false, false) => Err(Error::msg(format!("patch and path can't be set at the same time\n{entry}"))),
        (false, true) => {
            let (file, text) = loader.read(path)?;
            Ok((text, file.display().to_string()))
        }
        (true, false) => Ok((inline.to_string(), "inline patch".to_string())),
    }
}

/// For a loading walk: reads every patch file the three patch fields name, as applying them
/// would, without applying anything.
pub fn read_patch_files(strategic_merge: &[String], patches: &[Patch], json6902: &[Patch], loader: &Loader) -> Result<()> {
    for entry in strategic_merge {
        if loader.is_file(entry) || !entry.contains('\n') && !entry.contains(':') {
            loader.read(entry)?;
        }
    }
    for entry in patches.iter().chain(json6902).filter(|p| !p.path.is_empty()) {
        loader.read(&entry.path)?;
    }
    Ok(())
}

/// The single resource a patch without target applies to, matched by any of its ids.
fn unique_target(resources: &ResMap, id: &ResId) -> Result<usize> {
    let mut found = resources.positions_named(&id.name);
    found.retain(|&i| resources.get(i).all_ids().iter().any(|other| same_id(other, id)));
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::msg(format!("no matches for Id {id}; failed to find unique target for patch {id}"))),
        _ => Err(Error::msg(format!("multiple matches for Id {id}; failed to find unique target for patch {id}"))),
    }
}

/// The id a strategic merge patch names.
fn patch_id(patch: &Value) -> ResId {
    Resource::new(patch.clone()).current_id()
}

/// Merges one strategic merge patch into `r`; returns false when the patch deleted the resource.
fn merge_into(r: &mut Resource, patch: &Value, allow_name_change: bool, allow_kind_change: bool, schema: &Schema) -> Result<bool> {
    let (name, namespace, kind) = (r.name().to_string(), r.namespace().to_string(), r.kind().to_string());
    if allow_name_change || allow_kind_change {
        r.remember_current_id();
    }
    // The walk drops the target's empty nulls; those it does not reach stay as they are.
    let empty_nulls = r.empty_nulls.take();
    r.write_replacing(|value| strategic_merge(value, patch, schema, empty_nulls.as_deref()))?;
    let Resource { value, nodes, .. } = r;
    nodes.quote_untagged_non_strings(value);
    if r.value.as_object().is_none_or(|m| m.is_empty()) {
        return Ok(false);
    }
    if !allow_kind_change {
        r.map_mut().insert("kind".into(), Value::String(kind));
    }
    if !allow_name_change {
        r.metadata_mut().insert("name".into(), Value::String(name));
    }
    if namespace.is_empty() {
        r.metadata_mut().shift_remove("namespace");
    } else {
        r.metadata_mut().insert("namespace".into(), Value::String(namespace));
    }
    Ok(true)
}

/// Applies strategic merge patches to the resources at `indices`, dropping the ones a patch deletes.
/// Applies a strategic merge patch to the resources at `indices`, dropping the ones it deletes;
/// returns the ids of the resources the patch left exactly as they were.
fn merge_selected(resources: &mut ResMap, indices: &[usize], patch: &Value, options: (bool, bool), schema: &Schema) -> Result<Vec<ResId>> {
    // The patch is copied into each resource it selects.
    crate::budget::current().charge_copies(patch, indices.len()).map_err(|e| Error::msg(e.to_string()))?;
    let outcomes = resources.map_positions_mut(indices, |r| {
        let before = r.value.clone();
        let mut copy = patch.clone();
        // The patch takes the target's apiVersion, as kustomize's ApplySmPatch does.
        if let (Some(obj), api) = (copy.as_object_mut(), r.api_version().to_string()) {
            obj.insert("apiVersion".into(), Value::String(api));
        }
        let kept = merge_into(r, &copy, options.0, options.1, schema)?;
        Ok::<_, Error>((kept, kept && r.value == before, r.current_id()))
    });
    let mut deleted = Vec::new();
    let mut unchanged = Vec::new();
    for (&i, outcome) in indices.iter().zip(outcomes) {
        let (kept, same, id) = outcome?;
        if !kept {
            deleted.push(i);
        } else if same {
            unchanged.push(id);
        }
    }
    if !deleted.is_empty() {
        let mut index = 0;
        resources.retain(|_| {
            index += 1;
            deleted.binary_search(&(index - 1)).is_err()
        });
    }
    Ok(unchanged)
}

/// A patch that changes nothing is as suspicious as one that selects nothing: say so.
fn warn_unchanged(unchanged: Vec<ResId>, diagnostics: &mut Diagnostics, kustomization: &str, described: &str) {
    for id in unchanged {
        diagnostics.unmatched(kustomization, &format!("patch {described} changes nothing in {id}"));
    }
}

/// The deprecated `patchesStrategicMerge`: each entry a file or inline YAML; each patch names its target.
pub fn apply_patches_strategic_merge(
    resources: &mut ResMap,
    entries: &[String],
    loader: &Loader,
    schema: &Schema,
    diagnostics: &mut Diagnostics,
    kustomization: &str,
) -> Result<()> {
    for entry in entries {
        let (text, origin) = if loader.is_file(entry) || !entry.contains('\n') && !entry.contains(':') {
            let (file, text) = loader.read(entry).map_err(|e| match e {
                Error::Io { .. } | Error::Missing { .. } => Error::msg(format!(
                    "trouble configuring builtin PatchStrategicMergeTransformer with config: `\npaths:\n- {entry}\n`: {e}"
                )),
                other => other,
            })?;
            (text, file.display().to_string())
        } else {
            (entry.clone(), "inline patch".to_string())
        };
        let LoadedPatch::Strategic(patches) = parse_patch_text(&text, &origin)? else {
            return Err(Error::msg(format!("{origin}: a patchesStrategicMerge entry must be a strategic merge patch, not a list")));
        };
        if patches.is_empty() {
            return Err(empty_patch(&origin));
        }
        for patch in patches {
            let target = unique_target(resources, &patch_id(&patch))?;
            let unchanged = merge_selected(resources, &[target], &patch, (false, false), schema)?;
            warn_unchanged(unchanged, diagnostics, kustomization, &format!("'{entry}'"));
        }
    }
    Ok(())
}

/// Strategic merge patches written inline (a PatchStrategicMergeTransformer's `patches`).
pub fn apply_inline_strategic_merge(resources: &mut ResMap, text: &str, schema: &Schema, diagnostics: &mut Diagnostics, kustomization: &str) -> Result<()> {
    let LoadedPatch::Strategic(list) = parse_patch_text(text, "inline patch")? else {
        return Err(Error::msg("a strategic merge patch must be a mapping, not a list"));
    };
    if list.is_empty() {
        return Err(empty_patch("inline patch"));
    }
    for patch in list {
        let target = unique_target(resources, &patch_id(&patch))?;
        let unchanged = merge_selected(resources, &[target], &patch, (false, false), schema)?;
        warn_unchanged(unchanged, diagnostics, kustomization, "(inline)");
    }
    Ok(())
}

/// One `patches` entry (strategic merge or JSON 6902, with or without a target).
pub fn apply_patch(resources: &mut ResMap, entry: &Patch, loader: &Loader, schema: &Schema, diagnostics: &mut Diagnostics, kustomization: &str) -> Result<()> {
    let described = describe(entry);
    let (text, origin) = patch_text(&entry.path, &entry.patch, loader, &described).map_err(|e| match e {
        Error::Io { .. } | Error::Missing { .. } => plugin_config_error("PatchTransformer", entry, format!("failed to get the patch file from path({}): {e}", entry.path)),
        other => other,
    })?;
    let allow = (
        entry.options.get("allowNameChange").copied().unwrap_or(false),
        entry.options.get("allowKindChange").copied().unwrap_or(false),
    );
    match parse_patch_text(&text, &origin)? {
        LoadedPatch::Strategic(patches) if patches.is_empty() => {
            diagnostics.unmatched(kustomization, &format!("patch {described} holds no document and has no effect"));
            Ok(())
        }
        LoadedPatch::Strategic(patches) => match &entry.target {
            Some(target) => {
                if patches.len() > 1 {
                    return Err(Error::msg(format!(
                        "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}",
                        entry.path
                    )));
                }
                let selected = select(resources, target)?;
                if selected.is_empty() {
                    diagnostics.unmatched(kustomization, &format!("patch {described} selects no resource"));
                }
                let unchanged = merge_selected(resources, &selected, &patches[0], allow, schema)?;
                warn_unchanged(unchanged, diagnostics, kustomization, &described);
                Ok(())
            }
            None => {
                for patch in &patches {
                    // kustomize's PatchTransformer names the patch by its id first.
                    let id = patch_id(patch);
                    let target = unique_target(resources, &id).map_err(|e| e.context(format!("no resource matches strategic merge patch \"{id}\"")))?;
                    let unchanged = merge_selected(resources, &[target], patch, allow, schema)?;
                    warn_unchanged(unchanged, diagnostics, kustomization, &described);
                }
                Ok(())
            }
        },
        LoadedPatch::Json6902(ops) => {
            let Some(target) = &entry.target else {
                return Err(Error::msg(format!("must specify a target for JSON patch {text}")));
            };
            apply_json6902_to_selected(resources, target, &ops, diagnostics, kustomization, &described)
        }
    }
}

/// One deprecated `patchesJson6902` entry.
pub fn apply_patch_json6902(resources: &mut ResMap, entry: &Patch, loader: &Loader, diagnostics: &mut Diagnostics, kustomization: &str) -> Result<()> {
    let described = describe(entry);
    let Some(target) = &entry.target else {
        return Err(Error::msg(format!("must specify a target for patch {described}")));
    };
    if target.name.is_empty() {
        return Err(Error::msg(format!("must specify the target name in patchesJson6902 entry {described}")));
    }
    let (text, origin) = match (entry.path.is_empty(), entry.patch.trim().is_empty()) {
        (true, true) => return Err(Error::msg("empty file path and empty jsonOp")),
        (false, false) => return Err(Error::msg("must specify a file path or jsonOp, not both")),
        _ => patch_text(&entry.path, &entry.patch, loader, &described).map_err(|e| match e {
            Error::Io { .. } | Error::Missing { .. } => plugin_config_error("PatchJson6902Transformer", entry, e.to_string()),
            other => other,
        })?,
    };
    let ops = match parse_patch_text(&text, &origin)? {
        LoadedPatch::Json6902(ops) => ops,
        LoadedPatch::Strategic(_) => {
            return Err(Error::msg(format!(
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch ({origin}: cannot unmarshal string into Go value of type jsonpatch.Patch)"
            )))
        }
    };
    apply_json6902_to_selected(resources, target, &ops, diagnostics, kustomization, &described)
}

fn apply_json6902_to_selected(resources: &mut ResMap, target: &Selector, ops: &Value, diagnostics: &mut Diagnostics, kustomization: &str, described: &str) -> Result<()> {
    let selected = select(resources, target)?;
    if selected.is_empty() {
        diagnostics.unmatched(kustomization, &format!("patch {described} selects no resource"));
    }
    // Taken here, on the build's thread: the patch runs on the pool's.
    let budget = crate::budget::current();
    let results = resources.map_positions_mut(&selected, |r| {
        r.remember_current_id();
        let before = r.value.clone();
        // kustomize applies JSON patches to the resource as JSON: a null is `null` from then on.
        r.empty_nulls = None;
        r.quoted = None;
        with_annotations_present(&mut r.value, |value| apply_json6902_within(value, ops, &budget))
            .map_err(|e| Error::msg(format!("{e} (patching {})", r.previous_ids.last().expect("just remembered"))))?;
        // kustomize rebuilds the patched resource from JSON: no node is shared any more.
        r.nodes.forget_all();
        Ok::<_, Error>((r.value == before).then(|| r.current_id()))
    });
    let mut unchanged = Vec::new();
    for result in results {
        unchanged.extend(result?);
    }
    warn_unchanged(unchanged, diagnostics, kustomization, described);
    Ok(())
}

/// Runs `patch` on a resource whose `metadata.annotations` exists: while kustomize patches, every
/// resource carries its internal `internal.config.kubernetes.io/previous*` annotations, so a JSON
/// patch can `add /metadata/annotations/x` to a resource that has none. The map added for it is
/// removed again when it stays empty, as kustomize drops an empty map with its internal entries.
fn with_annotations_present<T>(value: &mut Value, patch: impl FnOnce(&mut Value) -> T) -> T {
    let metadata = value.get_mut("metadata").and_then(Value::as_object_mut);
    let added = match metadata {
        Some(m) if !m.contains_key("annotations") => m.insert("annotations".to_owned(), Value::Object(Default::default())).is_none(),
        _ => false,
    };
    let result = patch(value);
    if added {
        if let Some(m) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            if m.get("annotations").and_then(Value::as_object).is_some_and(|a| a.is_empty()) {
                m.remove("annotations");
            }
        }
    }
    result
}

/// Positions of the resources a selector picks, in build order.
pub fn select(resources: &ResMap, target: &Selector) -> Result<Vec<usize>> {
    let compiled = CompiledSelector::new(target)?;
    // A plain name narrows the candidates to the resources that have or had that name.
    if let Some(name) = compiled.literal_name() {
        let mut found = resources.positions_named(name);
        found.retain(|&i| compiled.matches(resources.get(i)));
        return Ok(found);
    }
    if resources.is_large() {
        use rayon::prelude::*;
        return Ok(resources.as_slice().par_iter().enumerate().filter(|(_, r)| compiled.matches(r)).map(|(i, _)| i).collect());
    }
    Ok(resources.iter().enumerate().filter(|(_, r)| compiled.matches(r)).map(|(i, _)| i).collect())
}

fn empty_patch(origin: &str) -> Error {
    Error::msg(format!("patch appears to be empty; {origin}"))
}

/// kustomize's error for a patch plugin it could not configure: the entry as the plugin's
/// YAML config (keys sorted, empty fields left out), then the cause.
fn plugin_config_error(plugin: &str, entry: &Patch, cause: String) -> Error {
    let mut config = String::new();
    let true_options: Vec<&String> = entry.options.iter().filter(|(_, on)| **on).map(|(name, _)| name).collect();
    if !true_options.is_empty() {
        config.push_str("options:\n");
        let mut sorted = true_options;
        sorted.sort();
        for name in sorted {
            config.push_str(&format!("  {name}: true\n"));
        }
    }
    config.push_str(&format!("path: {}\n", entry.path));
    if let Some(t) = &entry.target {
        config.push_str("target:\n");
        let fields = [
            ("annotationSelector", &t.annotation_selector),
            ("group", &t.group),
            ("kind", &t.kind),
            ("labelSelector", &t.label_selector),
            ("name", &t.name),
            ("namespace", &t.namespace),
            ("version", &t.version),
        ];
        for (key, value) in fields.iter().filter(|(_, v)| !v.is_empty()) {
            config.push_str(&format!("  {key}: {value}\n"));
        }
    }
    Error::msg(format!("trouble configuring builtin {plugin} with config: `\n{config}`: {cause}"))
}

/// A short description of a patch entry for messages.
fn describe(entry: &Patch) -> String {
    let mut d = if entry.path.is_empty() { "(inline)".to_string() } else { format!("'{}'", entry.path) };
    if let Some(t) = &entry.target {
        let parts: Vec<String> = [("group", &t.group), ("version", &t.version), ("kind", &t.kind), ("name", &t.name), ("namespace", &t.namespace), ("labelSelector", &t.label_selector), ("annotationSelector", &t.annotation_selector)]
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        d.push_str(&format!(" with target {}", parts.join(",")));
    }
    d
}
