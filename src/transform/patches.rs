//! The patch transformers: `patchesStrategicMerge`, `patches` and `patchesJson6902`, choosing their
//! targets as kustomize does and handing the merge itself to [`crate::patch`].
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::select::CompiledSelector;
use super::steps::{Outcome, ResourceStep};
use crate::budget::Budget;
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::fast_hash::{digest, Digester};
use crate::kustomization::types::{scalar_text, Patch, Selector};
use crate::kustomization::Loader;
use crate::patch::json6902::reports_changes;
use crate::patch::{apply_json6902_within, strategic_merge, Schema};
use crate::resource::nodes::PARENT_MARK;
use crate::resource::{ResId, ResMap, Resource};
use crate::yaml::memo::TextMemo;
use crate::kustomization::go_json::json_kind;
use crate::yaml::go_syntax::quote as go_quote;
use crate::yaml::parse::{parse_documents_with_metadata_texts, MetadataMap, MetadataText};

/// A patch read from a file or written inline.
#[derive(Clone)]
pub enum LoadedPatch {
    /// Strategic merge patches (each a partial object); none for a patch holding no document.
    Strategic(Vec<StrategicPatch>),
    /// An RFC 6902 operation list.
    Json6902(Value),
    /// Neither (a scalar, or mappings mixed with other values): its first document, which each
    /// plugin refuses in its own words.
    Other(Value),
}

/// One strategic merge patch: the partial object, and the texts of its label and annotation
/// values that do not read as strings, for [`labels_and_annotations_as_strings`].
#[derive(Clone)]
pub struct StrategicPatch {
    pub value: Value,
    pub metadata_texts: Vec<MetadataText>,
}

impl LoadedPatch {
    /// The strategic merge patches; none for the other kinds.
    fn strategic(&self) -> &[StrategicPatch] {
        match self {
            LoadedPatch::Strategic(patches) => patches,
            _ => &[],
        }
    }
}

/// Parses patch text, telling a strategic merge patch (mappings) from a JSON 6902 one (a list).
/// A patch text that comes back (a component's patch, applied by every app) is parsed once and
/// shared: only a merge, which consumes the patch, copies it.
pub fn parse_patch_text(text: &str, origin: &str) -> Result<Arc<LoadedPatch>> {
    static PARSED: TextMemo<Arc<LoadedPatch>> = TextMemo::new();
    PARSED.get_or_parse(text, |text| parse_patch_text_once(text, origin).map(Arc::new))
}

fn parse_patch_text_once(text: &str, origin: &str) -> Result<LoadedPatch> {
    // kustomize reads a patch file as it reads resources (kyaml), in the same words when it fails.
    let docs = parse_documents_with_metadata_texts(text).map_err(|e| crate::resource::decode::parse_error(std::path::Path::new(origin), text, e))?;
    let mut docs: Vec<(Value, Vec<MetadataText>)> = docs.into_iter().filter(|(d, _)| !d.is_null()).collect();
    Ok(match docs.first() {
        // Nothing, or only comments: kustomize v5.8 skips such a `patches` entry; the other fields refuse it.
        None => LoadedPatch::Strategic(Vec::new()),
        // kustomize reads a JSON 6902 patch as one document (later documents are ignored),
        // written in YAML as sigs.k8s.io/yaml reads it (go-yaml v2: `value: y` is true).
        Some((Value::Array(_), _)) => LoadedPatch::Json6902(as_go_yaml_v2(text).unwrap_or_else(|| docs.swap_remove(0).0)),
        Some(_) if docs.iter().all(|(d, _)| d.is_object()) => {
            LoadedPatch::Strategic(docs.into_iter().map(|(value, metadata_texts)| StrategicPatch { value, metadata_texts }).collect())
        }
        Some(_) => LoadedPatch::Other(docs.swap_remove(0).0),
    })
}

/// The one document of `text` as sigs.k8s.io/yaml's `YAMLToJSON` reads it (go-yaml v2's YAML
/// 1.1 booleans), unless `text` is JSON; None for several documents.
fn as_go_yaml_v2(text: &str) -> Option<Value> {
    if text.trim_start().starts_with('[') {
        return None;
    }
    crate::yaml::parse::parse_document_last_key_wins(text).ok()
}

/// A patch plugin as kustomize configures it, for the words of a configuration it refuses.
pub struct PluginConfig<'a> {
    /// The builtin plugin: `PatchTransformer`, `PatchStrategicMergeTransformer`, `PatchJson6902Transformer`.
    pub plugin: &'static str,
    pub from: ConfigFrom<'a>,
}

/// Where a patch plugin's configuration comes from.
pub enum ConfigFrom<'a> {
    /// A kustomization field: kustomize hands the plugin the entry as this value (made only for
    /// an error).
    Field(&'a dyn Fn() -> Value),
    /// A `transformers` entry: the plugin's configuration resource.
    Transformer(&'a Value),
}

impl PluginConfig<'_> {
    /// The configuration as the plugin receives it: sigs.k8s.io/yaml's text of it.
    fn text(&self) -> String {
        let made;
        let value = match &self.from {
            ConfigFrom::Field(make) => {
                made = make();
                &made
            }
            ConfigFrom::Transformer(config) => *config,
        };
        let mut out = String::new();
        crate::yaml::emit::emit_document(value, &mut out);
        out
    }

    /// kustomize's words around an error of the plugin's `Config` step.
    fn fails(&self, e: Error) -> Error {
        match &self.from {
            ConfigFrom::Field(_) => e.context(format!("trouble configuring builtin {} with config: `\n{}`", self.plugin, self.text())),
            ConfigFrom::Transformer(config) => e.context(format!("plugin {} fails configuration", ResId::of_value(config))),
        }
    }
}

/// The configuration kustomize makes of a `patches` entry (`jsonOp` instead of `patch` for a
/// `patchesJson6902` one): its fields that are set, as Go's `omitempty` leaves them.
pub fn patch_field_config(entry: &Patch, json6902: bool) -> Value {
    let mut config = serde_json::Map::new();
    if !entry.path.is_empty() {
        config.insert("path".into(), Value::String(entry.path.clone()));
    }
    if !entry.patch.is_empty() {
        config.insert((if json6902 { "jsonOp" } else { "patch" }).into(), Value::String(entry.patch.clone()));
    }
    if let Some(t) = &entry.target {
        let fields = [
            ("group", &t.group),
            ("version", &t.version),
            ("kind", &t.kind),
            ("name", &t.name),
            ("namespace", &t.namespace),
            ("labelSelector", &t.label_selector),
            ("annotationSelector", &t.annotation_selector),
        ];
        let target = fields.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| ((*k).to_owned(), Value::String((*v).clone()))).collect();
        config.insert("target".into(), Value::Object(target));
    }
    let options: serde_json::Map<String, Value> = entry.options.iter().filter(|(_, on)| **on).map(|(k, _)| (k.clone(), Value::Bool(true))).collect();
    if !options.is_empty() {
        config.insert("options".into(), Value::Object(options));
    }
    Value::Object(config)
}

/// The configuration kustomize makes of `patchesStrategicMerge`.
pub fn strategic_merge_field_config(entries: &[String]) -> Value {
    serde_json::json!({ "paths": entries })
}

/// `[path: "..."]` or `[patch: "..."]`, as PatchTransformer's messages name a configured
/// patch (made only for a message).
fn source(entry: &Patch) -> String {
    match entry.path.is_empty() {
        false => format!("[path: {}]", go_quote(&entry.path)),
        true => format!("[patch: {}]", go_quote(entry.patch.trim())),
    }
}

/// PatchTransformer's `Config`: one of `path` and `patch`, read and parsed.
fn configure_patch(entry: &Patch, loader: &Loader, config: &PluginConfig) -> Result<Arc<LoadedPatch>> {
    let inline = entry.patch.trim();
    let (text, origin) = match (entry.path.is_empty(), inline.is_empty()) {
        (true, true) => return Err(Error::msg(format!("must specify one of patch and path in\n{}", config.text()))),
        (false, false) => return Err(Error::msg(format!("patch and path can't be set at the same time\n{}", config.text()))),
        (false, true) => {
            let (file, text) = loader.read(&entry.path).map_err(|e| e.context(format!("failed to get the patch file from path({})", entry.path)))?;
            (text, file.display().to_string())
        }
        (true, false) => (inline.to_owned(), "inline patch".to_owned()),
    };
    let unparsable = || format!("unable to parse SM or JSON patch from {}", source(entry));
    match parse_patch_text(&text, &origin) {
        Ok(loaded) if matches!(*loaded, LoadedPatch::Other(_)) => Err(Error::msg(unparsable())),
        Err(e) => Err(Error::noted(unparsable(), e.to_string())),
        Ok(loaded) => Ok(loaded),
    }
}

/// For a loading walk: reads every patch file the three patch fields name, as applying them
/// would, without applying anything.
pub fn read_patch_files(strategic_merge: &[String], patches: &[Patch], json6902: &[Patch], loader: &Loader) -> Result<()> {
    for entry in strategic_merge {
        if names_a_patch_file(entry, loader) {
            loader.read(entry)?;
        }
    }
    for entry in patches.iter().chain(json6902).filter(|p| !p.path.is_empty()) {
        loader.read(&entry.path)?;
    }
    Ok(())
}

/// Whether a `patchesStrategicMerge` entry names a file (kustomize reads the entry as a patch
/// first, then as a file): a file there, a URL, or a line that cannot be a patch.
fn names_a_patch_file(entry: &str, loader: &Loader) -> bool {
    crate::remote::url::is_http_url(entry) || loader.is_file(entry) || !entry.contains('\n') && !entry.contains(':')
}

/// The single resource a patch without target applies to, matched by any of its ids.
fn unique_target(resources: &ResMap, id: &ResId) -> Result<usize> {
    let mut found = resources.positions_named(&id.name);
    found.retain(|&i| resources.get(i).all_ids().iter().any(|other| other.same_as(id)));
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::msg(format!("no matches for Id {id}; failed to find unique target for patch {id}"))),
        _ => Err(Error::msg(format!("multiple matches for Id {id}; failed to find unique target for patch {id}"))),
    }
}

/// The id a strategic merge patch names.
fn patch_id(patch: &Value) -> ResId {
    ResId::of_value(patch)
}

/// Merges one strategic merge patch into `r`; returns false when the patch deleted the
/// resource, and whether the resource changed (when kept).
fn merge_into(r: &mut Resource, patch: Value, allow_name_change: bool, allow_kind_change: bool, schema: &Schema) -> Result<(bool, bool)> {
    let (name, namespace, kind) = (r.name().to_string(), r.namespace().to_string(), r.kind().to_string());
    if allow_name_change || allow_kind_change {
        r.store_previous_id();
    }
    // The walk drops the target's empty nulls; those it does not reach stay as they are.
    let empty_nulls = r.empty_nulls.take();
    let mut changed = r.write_replacing(|value| strategic_merge(value, patch, schema, empty_nulls.as_deref(), Some(PARENT_MARK)))?;
    let Resource { value, nodes, .. } = r;
    changed |= nodes.quote_untagged_non_strings(value);
    if r.value.as_object().is_none_or(|m| m.is_empty()) {
        return Ok((false, true));
    }
    // Set back as they were; a change only where they were not so.
    let mut set = |map: &mut Map<String, Value>, key: &str, text: String| {
        let text = Value::String(text);
        changed |= map.insert(key.to_owned(), text.clone()).as_ref() != Some(&text);
    };
    if !allow_kind_change {
        set(r.map_mut(), "kind", kind);
    }
    if !allow_name_change {
        set(r.metadata_mut(), "name", name);
    }
    if namespace.is_empty() {
        changed |= r.metadata_mut().shift_remove("namespace").is_some();
    } else {
        set(r.metadata_mut(), "namespace", namespace);
    }
    Ok((true, changed))
}

/// The patch as merged into `r`, and whether the merge's own report of a change is to be
/// trusted (else the resource is compared before and after).
///
/// The patch takes the target's apiVersion, as kustomize's ApplySmPatch does. The name (unless
/// it may change) and the namespace are set back after the merge, so they are left out of the
/// patch: the merge's report then leaves them out too. The report is not used where the merge
/// and what is set back after it could cancel out: a patch with `$patch` directives (a map
/// replaced without its name), a `metadata` that is not a map, a kind that is set back.
fn patch_for(r: &Resource, patch: &StrategicPatch, allow_name_change: bool, allow_kind_change: bool, copy_merge: bool) -> (Value, bool) {
    let texts = &patch.metadata_texts;
    let mut patch = patch.value.clone();
    if copy_merge {
        labels_and_annotations_as_strings(&mut patch, texts);
    }
    let Value::Object(map) = &mut patch else { return (patch, false) };
    // The target's apiVersion (kustomize's `SetGvk`), none where the target has none.
    match r.api_version() {
        "" => map.shift_remove("apiVersion"),
        api_version => map.insert("apiVersion".into(), Value::String(api_version.to_string())),
    };
    let kind_kept = allow_kind_change || crate::fast_hash::field(map, "kind").is_none_or(|k| Some(k) == crate::fast_hash::get(&r.value, "kind"));
    let exact = kind_kept && !has_directive(map);
    match crate::fast_hash::field_mut(map, "metadata") {
        Some(Value::Object(metadata)) if exact => {
            if !allow_name_change {
                metadata.shift_remove("name");
            }
            metadata.shift_remove("namespace");
            (patch, true)
        }
        None => (patch, exact),
        _ => (patch, false),
    }
}

/// kustomize's `CopyMergeMetaDataFieldsFrom`, made on the copy of a patch it applies to each
/// resource a target (or `patchesStrategicMerge`) selects: the patch's labels and annotations
/// set again as strings, each the text of its value (`1.10` stays `1.10`; `~` is the string
/// `"~"`, which no longer deletes), a mapping or list the empty string; a map left empty, or no
/// map, goes.
fn labels_and_annotations_as_strings(patch: &mut Value, texts: &[MetadataText]) {
    let Some(metadata) = patch.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    for (field, which) in [("labels", MetadataMap::Labels), ("annotations", MetadataMap::Annotations)] {
        match metadata.get_mut(field) {
            None => continue,
            Some(Value::Object(entries)) if !entries.is_empty() => {
                for (key, value) in entries.iter_mut() {
                    if value.is_string() {
                        continue;
                    }
                    let text = match texts.iter().find(|t| t.map == which && t.key == *key) {
                        Some(written) => written.text.clone(),
                        None => scalar_text(value).unwrap_or_default(),
                    };
                    *value = Value::String(text);
                }
            }
            Some(_) => {
                metadata.shift_remove(field);
            }
        }
    }
}

/// Whether a patch holds a `$patch` directive anywhere.
fn has_directive(map: &Map<String, Value>) -> bool {
    fn any(value: &Value) -> bool {
        match value {
            Value::Object(m) => has_directive(m),
            Value::Array(items) => items.iter().any(any),
            _ => false,
        }
    }
    map.contains_key("$patch") || map.values().any(any)
}

/// Applies a strategic merge patch to the resources at `indices`, dropping the ones it deletes;
/// returns the ids of the resources the patch left exactly as they were.
fn merge_selected(
    resources: &mut ResMap,
    indices: &[usize],
    patch: &StrategicPatch,
    options: (bool, bool),
    copy_merge: bool,
    schema: &Schema,
) -> Result<Vec<ResId>> {
    // The patch is copied into each resource it selects.
    crate::budget::current().charge_copies(&patch.value, indices.len()).map_err(|e| Error::msg(e.to_string()))?;
    // Whether the patch changed anything (for the "changes nothing" warning) is the merge's
    // report; where that cannot be trusted, a digest of the resource before and after tells (a
    // collision, about 2^-64, would only warn wrongly).
    let digester = Digester::new();
    let outcomes = resources.map_positions_mut(indices, |_, r| merge_one(r, patch, options, copy_merge, schema, &digester));
    let mut deleted = Vec::new();
    let mut unchanged = Vec::new();
    for (&i, outcome) in indices.iter().zip(outcomes) {
        let (kept, same) = outcome?;
        if !kept {
            deleted.push(i);
        }
        unchanged.extend(same);
    }
    resources.remove_positions(&deleted);
    Ok(unchanged)
}

/// Merges `patch` into the one resource `r`: whether the patch kept it, and its id when the patch
/// left it exactly as it was (for the warning).
fn merge_one(r: &mut Resource, patch: &StrategicPatch, options: (bool, bool), copy_merge: bool, schema: &Schema, digester: &Digester) -> Result<(bool, Option<ResId>)> {
    let (patch, exact) = patch_for(r, patch, options.0, options.1, copy_merge);
    let before = (!exact).then(|| digest(&r.value, digester));
    let without_api_version = copy_merge && r.api_version().is_empty();
    let (kept, changed) = merge_into(r, patch, options.0, options.1, schema)?;
    // kyaml's `SetGvk` gives the patch copy an empty apiVersion node, which the merge adds
    // to such a target as a null.
    if kept && without_api_version {
        r.map_mut().insert("apiVersion".into(), Value::Null);
    }
    let changed = match before {
        Some(before) => digest(&r.value, digester) != before,
        None => changed,
    };
    Ok((kept, (kept && !changed).then(|| r.current_id())))
}

/// A patch that changes nothing is as suspicious as one that selects nothing: say so.
/// `described` names the patch (made only when there is something to say).
fn warn_unchanged(unchanged: Vec<ResId>, diagnostics: &mut Diagnostics, kustomization: &str, described: impl FnOnce() -> String) {
    if unchanged.is_empty() {
        return;
    }
    let described = described();
    for id in unchanged {
        diagnostics.unmatched(kustomization, &format!("patch {described} changes nothing in {id}"));
    }
}

/// PatchStrategicMergeTransformer (the deprecated `patchesStrategicMerge`, each entry a file or
/// inline YAML, and a plugin's inline `patches`): each patch names its target.
#[allow(clippy::too_many_arguments)]
pub fn apply_patches_strategic_merge(
    resources: &mut ResMap,
    entries: &[String],
    inline: &str,
    loader: &Loader,
    schema: &Schema,
    diagnostics: &mut Diagnostics,
    kustomization: &str,
    config: &PluginConfig,
) -> Result<()> {
    let loaded = configure_strategic_merge(entries, inline, loader).map_err(|e| config.fails(e))?;
    for (patches, described) in &loaded {
        for patch in patches.strategic() {
            let target = unique_target(resources, &patch_id(&patch.value))?;
            let unchanged = merge_selected(resources, &[target], patch, (false, false), true, schema)?;
            warn_unchanged(unchanged, diagnostics, kustomization, || described.clone());
        }
    }
    Ok(())
}

/// kustomize's refusal of a `patches` entry with a target whose text holds several strategic
/// merge patches.
fn several_with_a_target(entry: &Patch) -> Error {
    Error::msg(format!("Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}", source(entry)))
}

/// PatchStrategicMergeTransformer's `Config`: the patches of each of its files and of its inline
/// text (each [`LoadedPatch::Strategic`]), with how warnings name them.
fn configure_strategic_merge(entries: &[String], inline: &str, loader: &Loader) -> Result<Vec<(Arc<LoadedPatch>, String)>> {
    if entries.is_empty() && inline.is_empty() {
        return Err(Error::msg("empty file path and empty patch content"));
    }
    let mut loaded = Vec::new();
    for entry in entries {
        let (text, origin) = if names_a_patch_file(entry, loader) {
            let (file, text) = loader.read(entry)?;
            (text, file.display().to_string())
        } else {
            (entry.clone(), "inline patch".to_string())
        };
        let parsed = parse_patch_text(&text, &origin).map_err(|e| match e.is_malformed_yaml() {
            true => e.map_message(|message| format!("{message} in File: {entry}")),
            false => e,
        })?;
        match &*parsed {
            LoadedPatch::Strategic(_) => loaded.push((parsed, format!("'{entry}'"))),
            LoadedPatch::Json6902(_) => return Err(Error::msg(format!("{origin}: a patchesStrategicMerge entry must be a strategic merge patch, not a list"))),
            LoadedPatch::Other(_) => return Err(Error::msg("missing Resource metadata")),
        }
    }
    if !inline.is_empty() {
        let parsed = parse_patch_text(inline, "inline patch")?;
        match &*parsed {
            LoadedPatch::Strategic(_) => loaded.push((parsed, "(inline)".to_owned())),
            LoadedPatch::Json6902(_) => return Err(Error::msg("a strategic merge patch must be a mapping, not a list")),
            LoadedPatch::Other(_) => return Err(Error::msg("missing Resource metadata")),
        }
    }
    if loaded.iter().all(|(patches, _)| patches.strategic().is_empty()) {
        return Err(Error::msg(format!("patch appears to be empty; files=[{}], Patch={inline}", entries.join(" "))));
    }
    Ok(loaded)
}

/// One `patches` entry (strategic merge or JSON 6902, with or without a target).
pub fn apply_patch(
    resources: &mut ResMap,
    entry: &Patch,
    loader: &Loader,
    schema: &Schema,
    diagnostics: &mut Diagnostics,
    kustomization: &str,
    config: &PluginConfig,
) -> Result<()> {
    let described = || describe(entry);
    let loaded = configure_patch(entry, loader, config).map_err(|e| config.fails(e))?;
    let allow = (
        entry.options.get("allowNameChange").copied().unwrap_or(false),
        entry.options.get("allowKindChange").copied().unwrap_or(false),
    );
    match &*loaded {
        LoadedPatch::Strategic(patches) if patches.is_empty() => {
            diagnostics.unmatched(kustomization, &format!("patch {} holds no document and has no effect", described()));
            Ok(())
        }
        LoadedPatch::Strategic(patches) => match &entry.target {
            Some(target) => {
                if patches.len() > 1 {
                    return Err(several_with_a_target(entry));
                }
                let selected = select(resources, target)?;
                if selected.is_empty() {
                    diagnostics.unmatched(kustomization, &format!("patch {} selects no resource", described()));
                }
                let unchanged = merge_selected(resources, &selected, &patches[0], allow, true, schema)?;
                warn_unchanged(unchanged, diagnostics, kustomization, described);
                Ok(())
            }
            None => {
                for patch in patches {
                    // kustomize's PatchTransformer names the patch by its id first.
                    let id = patch_id(&patch.value);
                    let target = unique_target(resources, &id).map_err(|e| e.context(format!("no resource matches strategic merge patch \"{id}\"")))?;
                    // Applied to its one target as it is (kustomize's `Resource.ApplySmPatch`).
                    let unchanged = merge_selected(resources, &[target], patch, allow, false, schema)?;
                    warn_unchanged(unchanged, diagnostics, kustomization, described);
                }
                Ok(())
            }
        },
        LoadedPatch::Json6902(ops) => {
            let Some(target) = &entry.target else {
                return Err(Error::msg(format!("must specify a target for JSON patch {}", source(entry))));
            };
            apply_json6902_to_selected(resources, target, ops, diagnostics, kustomization, described)
        }
        LoadedPatch::Other(_) => unreachable!("configure_patch refuses it"),
    }
}

/// Where an error of a `patches` entry comes from (`in KUSTOMIZATION: patches[INDEX]`, as the
/// kustomization's other steps note theirs), worded only for an error.
#[derive(Clone, Copy)]
pub struct EntryNote<'a> {
    pub kustomization: &'a str,
    pub index: usize,
}

impl std::fmt::Display for EntryNote<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "in {}: patches[{}]", self.kustomization, self.index)
    }
}

/// A `patches` entry with a target, ready to run resource by resource among the other steps of
/// its kustomization ([`super::steps`]). Whether the patch selects a resource depends on that
/// resource alone, as it is when the patch's turn comes; what the patch has to say (it selects
/// nothing, it changes nothing in a resource) is said once the pass is over, as [`apply_patch`]
/// says it.
pub struct TargetedPatch<'a> {
    selector: CompiledSelector,
    /// One strategic merge patch or a JSON patch.
    loaded: Arc<LoadedPatch>,
    /// `allowNameChange` and `allowKindChange`, for a strategic merge patch.
    allow: (bool, bool),
    /// Whether a JSON patch says itself whether it changed a resource.
    reported: bool,
    schema: &'a Schema,
    budget: Arc<Budget>,
    digester: Digester,
    /// The entry, which the warnings name (worded only when there is one to give).
    entry: &'a Patch,
    /// Which entry of which kustomization the patch's errors come from.
    note: EntryNote<'a>,
    selected: AtomicBool,
    /// The resources the patch left as they were, with their positions in the pass.
    unchanged: Mutex<Vec<(usize, ResId)>>,
}

impl<'a> TargetedPatch<'a> {
    /// `entry`'s patch read and its target compiled, failing as [`apply_patch`] fails before it
    /// patches anything. Made on the build's thread, whose budget the copies of the patch are
    /// charged to. `None` for an entry that runs on its own ([`apply_patch`]): one without a
    /// target, whose patches find their targets by their names among all the resources, and
    /// an empty strategic merge patch, which only warns.
    pub fn new(entry: &'a Patch, loader: &Loader, schema: &'a Schema, config: &PluginConfig, note: EntryNote<'a>) -> Result<Option<Self>> {
        let Some(target) = &entry.target else { return Ok(None) };
        let loaded = configure_patch(entry, loader, config).map_err(|e| config.fails(e))?;
        match &*loaded {
            LoadedPatch::Strategic(patches) if patches.is_empty() => return Ok(None),
            LoadedPatch::Strategic(patches) if patches.len() > 1 => return Err(several_with_a_target(entry)),
            LoadedPatch::Strategic(_) | LoadedPatch::Json6902(_) => {}
            LoadedPatch::Other(_) => unreachable!("configure_patch refuses it"),
        }
        let option = |name: &str| entry.options.get(name).copied().unwrap_or(false);
        let reported = match &*loaded {
            LoadedPatch::Json6902(ops) => json6902_reports_changes(ops),
            _ => false,
        };
        Ok(Some(TargetedPatch {
            selector: CompiledSelector::new(target)?,
            allow: (option("allowNameChange"), option("allowKindChange")),
            loaded,
            reported,
            schema,
            budget: crate::budget::current(),
            digester: Digester::new(),
            entry,
            note,
            selected: AtomicBool::new(false),
            unchanged: Mutex::new(Vec::new()),
        }))
    }

    /// Whether the patch may change what the namespace step reads of the resources to tell
    /// whether two could come to share an id: the id itself, or the annotation that marks a
    /// resource a chart rendered. (A strategic merge patch without `allowNameChange` or
    /// `allowKindChange` keeps the name, kind and namespace, and gives the target's apiVersion;
    /// one that deletes its targets can only leave fewer resources to share an id.)
    pub fn may_change_id(&self) -> bool {
        match &*self.loaded {
            LoadedPatch::Strategic(patches) => {
                let Value::Object(patch) = &patches[0].value else { return true };
                if self.allow.0 || self.allow.1 || patch.get("$patch").is_some_and(|d| d != "delete") {
                    return true;
                }
                let metadata = match patch.get("metadata") {
                    None => return false,
                    Some(Value::Object(metadata)) => metadata,
                    Some(_) => return true,
                };
                metadata.contains_key("$patch")
                    || match metadata.get("annotations") {
                        None => false,
                        Some(Value::Object(annotations)) => annotations.contains_key(crate::resource::HELM_GENERATED) || annotations.contains_key("$patch"),
                        Some(_) => true,
                    }
            }
            LoadedPatch::Json6902(ops) => ops.as_array().is_none_or(|ops| {
                ops.iter().any(|op| {
                    let paths = ["path", "from"].map(|key| op.get(key));
                    paths[0].and_then(Value::as_str).is_none() || paths.into_iter().flatten().any(|path| path.as_str().is_none_or(writes_id_or_chart_mark))
                })
            }),
            LoadedPatch::Other(_) => true,
        }
    }
}

/// Whether a JSON patch writing (or moving from) `path` may change a resource's id or the
/// annotation that marks a resource a chart rendered.
fn writes_id_or_chart_mark(path: &str) -> bool {
    const CHART_MARK: &str = "/metadata/annotations/config.kubernetes.io~1helm-generated";
    let at_or_below = |field: &str| path == field || path.strip_prefix(field).is_some_and(|rest| rest.starts_with('/'));
    !path.starts_with('/')
        || matches!(path, "/metadata" | "/metadata/annotations")
        || ["/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", CHART_MARK].into_iter().any(at_or_below)
}

impl ResourceStep for TargetedPatch<'_> {
    fn apply(&self, at: usize, r: &mut Resource) -> Result<Outcome> {
        if !self.selector.matches(r) {
            return Ok(Outcome::Kept);
        }
        self.selected.store(true, Ordering::Relaxed);
        let noted = |e: Error| e.note(self.note);
        let (kept, unchanged) = match &*self.loaded {
            LoadedPatch::Strategic(patches) => {
                let patch = &patches[0];
                // The patch is copied into each resource it selects.
                self.budget.charge_copies(&patch.value, 1).map_err(|e| noted(Error::msg(e.to_string())))?;
                merge_one(r, patch, self.allow, true, self.schema, &self.digester).map_err(noted)?
            }
            LoadedPatch::Json6902(ops) => (true, json6902_one(r, ops, self.reported, &self.budget, &self.digester).map_err(noted)?),
            LoadedPatch::Other(_) => unreachable!("configure_patch refuses it"),
        };
        if let Some(id) = unchanged {
            self.unchanged.lock().unwrap_or_else(|e| e.into_inner()).push((at, id));
        }
        Ok(if kept { Outcome::Kept } else { Outcome::Deleted })
    }

    fn report(&self, diagnostics: &mut Diagnostics, kustomization: &str) {
        if !self.selected.load(Ordering::Relaxed) {
            diagnostics.unmatched(kustomization, &format!("patch {} selects no resource", describe(self.entry)));
        }
        let mut unchanged = std::mem::take(&mut *self.unchanged.lock().unwrap_or_else(|e| e.into_inner()));
        unchanged.sort_unstable_by_key(|(at, _)| *at);
        warn_unchanged(unchanged.into_iter().map(|(_, id)| id).collect(), diagnostics, kustomization, || describe(self.entry));
    }
}

/// PatchJson6902Transformer (the deprecated `patchesJson6902`).
pub fn apply_patch_json6902(resources: &mut ResMap, entry: &Patch, loader: &Loader, diagnostics: &mut Diagnostics, kustomization: &str, config: &PluginConfig) -> Result<()> {
    let described = describe(entry);
    let Some(target) = &entry.target else {
        return Err(Error::msg(format!("must specify a target for patch {described}")));
    };
    let ops = configure_json6902(entry, target, loader, &described).map_err(|e| config.fails(e))?;
    apply_json6902_to_selected(resources, target, &ops, diagnostics, kustomization, || described.clone())
}

/// PatchJson6902Transformer's `Config`: the operations of its file or `jsonOp`, decoded as
/// `jsonpatch.DecodePatch` decodes them (YAML first turned into JSON).
fn configure_json6902(entry: &Patch, target: &Selector, loader: &Loader, described: &str) -> Result<Value> {
    if target.name.is_empty() {
        return Err(Error::noted("must specify the target name", format!("in patch {described}")));
    }
    let (text, origin) = match (entry.path.is_empty(), entry.patch.is_empty()) {
        (true, true) => return Err(Error::msg("empty file path and empty jsonOp")),
        (false, false) => return Err(Error::msg("must specify a file path or jsonOp, not both")),
        (false, true) => {
            let (file, text) = loader.read(&entry.path)?;
            if text.is_empty() {
                return Err(Error::msg(format!("patch file '{}' empty seems to be empty", entry.path)));
            }
            (text, file.display().to_string())
        }
        (true, false) => (entry.patch.clone(), "inline patch".to_owned()),
    };
    let loaded = parse_patch_text(&text, &origin).map_err(|e| match crate::yaml::parse::parse_document_last_key_wins(&text) {
        // sigs.k8s.io/yaml's words (go-yaml v2's lines) where kustomize turns the YAML into JSON.
        Err(syntax) if !text.starts_with('[') => e.map_message(|_| syntax.go_yaml_v2()),
        _ => e,
    })?;
    // What the decoder read: the text itself when it starts as a JSON list, else its JSON.
    let json = |first: &Value| match text.starts_with('[') {
        true => text.clone(),
        false => serde_json::to_string(&as_go_yaml_v2(&text).unwrap_or_else(|| first.clone())).unwrap_or_default(),
    };
    let refused = |first: &Value| Error::msg(format!("decoding {}: json: cannot unmarshal {} into Go value of type jsonpatch.Patch", json(first), json_kind(first)));
    match &*loaded {
        LoadedPatch::Json6902(ops) if ops.as_array().is_some_and(Vec::is_empty) => {
            Err(Error::msg(format!("patch appears to be empty; file={}, JsonOp={}", entry.path, json(ops))))
        }
        LoadedPatch::Json6902(ops) => Ok(ops.clone()),
        LoadedPatch::Strategic(docs) => match docs.first() {
            Some(first) => Err(refused(&first.value)),
            None => Err(Error::msg(format!("patch appears to be empty; file={}, JsonOp=null", entry.path))),
        },
        LoadedPatch::Other(first) => Err(refused(first)),
    }
}

fn apply_json6902_to_selected(
    resources: &mut ResMap,
    target: &Selector,
    ops: &Value,
    diagnostics: &mut Diagnostics,
    kustomization: &str,
    described: impl Fn() -> String,
) -> Result<()> {
    let selected = select(resources, target)?;
    if selected.is_empty() {
        diagnostics.unmatched(kustomization, &format!("patch {} selects no resource", described()));
    }
    // Taken here, on the build's thread: the patch runs on the pool's.
    let budget = crate::budget::current();
    let reported = json6902_reports_changes(ops);
    let digester = Digester::new();
    let results = resources.map_positions_mut(&selected, |_, r| json6902_one(r, ops, reported, &budget, &digester));
    let mut unchanged = Vec::new();
    for result in results {
        unchanged.extend(result?);
    }
    warn_unchanged(unchanged, diagnostics, kustomization, described);
    Ok(())
}

/// Whether the JSON patch `ops` says itself whether it changed a resource (and no operation
/// writes the annotations map added for it, [`with_annotations_present`]); else a digest of the
/// resource before and after tells.
fn json6902_reports_changes(ops: &Value) -> bool {
    let touches_annotations_map = ops.as_array().into_iter().flatten().any(|op| {
        matches!(op.get("path").and_then(Value::as_str), Some("" | "/metadata" | "/metadata/annotations"))
    });
    reports_changes(ops) && !touches_annotations_map
}

/// Applies the JSON patch `ops` to the one resource `r`: its id when the patch left it exactly
/// as it was (for the warning).
fn json6902_one(r: &mut Resource, ops: &Value, reported: bool, budget: &Budget, digester: &Digester) -> Result<Option<ResId>> {
    // kustomize applies JSON patches to the resource as JSON, which a key that is no string
    // cannot be.
    if r.holds_plain_key() {
        return Err(Error::msg(crate::resource::UNENCODABLE_MAP));
    }
    r.store_previous_id();
    let before = (!reported).then(|| digest(&r.value, digester));
    // kustomize applies JSON patches to the resource as JSON: a null is `null` from then on.
    r.empty_nulls = None;
    r.quoted = None;
    let changed = with_annotations_present(&mut r.value, |value| apply_json6902_within(value, ops, budget))
        .map_err(|e| Error::msg(format!("{e} (patching {})", r.previous_ids.last().expect("just stored"))))?;
    // kustomize rebuilds the patched resource from JSON: no node is shared any more, and
    // every key is a string.
    r.nodes.forget_all();
    r.plain_keys.clear();
    let changed = match before {
        Some(before) => digest(&r.value, digester) != before,
        None => changed,
    };
    Ok((!changed).then(|| r.current_id()))
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
