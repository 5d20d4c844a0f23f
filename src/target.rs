//! One kustomization, accumulated: its resources, generators, components and transformers, in
//! kustomize's order (`api/internal/target/kusttarget.go`).
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::build_metadata;
use crate::diagnostics::Diagnostics;
use crate::file_memo::FileMemo;
use crate::error::{Error, Result};
use crate::generate::{self, GeneratedKind};
use crate::kustomization::types::{Kustomization, Label};
use crate::kustomization::{LoadRestrictor, Loader, Looked};
use crate::patch::Schema;
use crate::explain::Recorder;
use crate::resource::provenance::{self, StepRecord};
use crate::resource::decode::{parse_file, resources_from_file, stringify_values};
use crate::resource::{Behavior, ResMap, Resource};
use crate::transform::fieldspec::{FieldSpec, SpecPaths};
use crate::transform::fieldspec_tables::{merge_field_specs, FieldSpecTables};
use crate::transform::metadata_maps::MapEntries;
use crate::transform::name_affix::NameAffixes;
use crate::transform::namespace::{NamespaceMove, NamespaceOptions};
use crate::transform::steps::{run_together, ResourceStep};
use crate::transform::{builtin_plugins, images, metadata_maps, name_affix, namespace, patches, replicas};
use crate::yaml::memo::TextMemo;
use crate::yaml::go_syntax::quote as go_quote;

mod remote_entries;
#[cfg(test)]
mod gathered_steps;
use remote_entries::{accumulate_git_entry, accumulate_http_entry, in_remote_origin, remote_base};

/// The most text of resource files kept decoded for the next build that reads them
/// ([`FileMemo`]): the bases of the last few dozen apps of a monorepo.
const MEMO_TEXT_BYTES: usize = 256 * 1024;

/// What one kustomization (and everything below it) contributes.
pub struct Accumulated {
    pub resources: ResMap,
    /// Field specs: each level's (the builtin ones, or them with its `configurations`), plus
    /// `crds`, merged up the tree; `None` before any level has added its own. Borrowed while they
    /// are just the builtin ones, which most kustomizations never change.
    pub tables: Option<Cow<'static, FieldSpecTables>>,
    /// `vars` declared in this tree.
    pub vars: Vec<Value>,
}

impl Default for Accumulated {
    fn default() -> Self {
        Accumulated { resources: ResMap::new(), tables: None, vars: Vec::new() }
    }
}

impl Accumulated {
    /// The field specs in force (the builtin ones when nothing was added).
    pub fn tables(&self) -> &FieldSpecTables {
        self.tables.as_deref().unwrap_or_else(|| FieldSpecTables::builtin())
    }

    /// kustomize's `MergeConfig`: merging the builtin tables into themselves changes nothing,
    /// so that case stays borrowed.
    fn merge_tables(&mut self, other: Cow<'static, FieldSpecTables>) -> Result<()> {
        match &mut self.tables {
            // The builtin tables are stored merged already; anything else goes through `merge`,
            // which sorts and resolves overlapping specs as kustomize does.
            None if matches!(other, Cow::Borrowed(_)) => self.tables = Some(other),
            None => {
                let mut merged = FieldSpecTables::default();
                merged.merge(other.into_owned())?;
                self.tables = Some(Cow::Owned(merged));
            }
            Some(Cow::Borrowed(mine)) if matches!(other, Cow::Borrowed(theirs) if std::ptr::eq(*mine, theirs)) => {}
            Some(mine) => mine.to_mut().merge(other.into_owned())?,
        }
        Ok(())
    }
}

/// State shared by every kustomization of one build.
pub struct Context {
    pub restrictor: LoadRestrictor,
    pub diagnostics: Diagnostics,
    /// A custom OpenAPI schema (`openapi: {path: ...}`), which replaces the builtin one, as in kustomize.
    pub custom_schema: Option<Schema>,
    /// Roots being accumulated, to refuse cycles.
    visiting: Vec<PathBuf>,
    /// The top-level kustomization folder: origins are written relative to it.
    top_root: PathBuf,
    /// Whether an `openapi` field has chosen the schema already.
    schema_chosen: bool,
    /// Whether kustomize tracks origins (the top-level kustomization has any `buildMetadata`),
    /// which makes it write every resource's annotations anew after each transformer and
    /// record each transformer run on them (printed only for `transformerAnnotations`, but
    /// sent to plugins and shown in errors that print a resource).
    pub tracks_origins: bool,
    /// Errors kustomize meets only once every resource is read (see [`resources_from_file`]).
    pub deferred_errors: Vec<Error>,
    /// How remote bases are fetched (`--cache-dir`, `--offline`).
    pub remote: crate::remote::RemoteOptions,
    /// The helm flags and render cache.
    pub helm: crate::helm::HelmOptions,
    /// The namespace charts without one are rendered in: this kustomization's, else the
    /// nearest one above it (kustomize v5.8's `helmRootNamespace`).
    helm_namespace: String,
    /// Which plugin programs may run.
    pub plugins: crate::functions::PluginOptions,
    /// Present only in an `explain` build: records where each field came from.
    pub recorder: Option<Arc<Recorder>>,
    /// A loading walk (`deps`, `affected`): every file the kustomizations name is read through
    /// the loader, and nothing is transformed (no resource parsed, no patch applied, no chart rendered).
    pub load_only: bool,
    /// Set by a loading walk that met what only a build can tell (a builtin transformer config,
    /// which reads its files when applied to resources).
    pub needs_build: bool,
    /// A loading walk's read sets of the folders walked so far in this run, shared by the roots.
    pub memo: Option<Arc<crate::kustomization::reads::Memo>>,
    /// Resource files are decoded through the process's [`FileMemo`] (other builds read them too).
    pub shared_files: bool,
}

impl Context {
    pub fn new(restrictor: LoadRestrictor, top: &Loader) -> Self {
        Context {
            restrictor,
            diagnostics: Diagnostics::default(),
            custom_schema: None,
            visiting: Vec::new(),
            top_root: top.root().to_path_buf(),
            schema_chosen: false,
            tracks_origins: false,
            deferred_errors: Vec::new(),
            remote: Default::default(),
            helm: Default::default(),
            helm_namespace: String::new(),
            plugins: Default::default(),
            recorder: None,
            load_only: false,
            needs_build: false,
            memo: None,
            shared_files: false,
        }
    }

    /// A fresh context for a folder built apart: same root, restrictor, schema choice and stack.
    fn fork(&self) -> Context {
        Context {
            restrictor: self.restrictor,
            diagnostics: Diagnostics::default(),
            custom_schema: None,
            visiting: self.visiting.clone(),
            top_root: self.top_root.clone(),
            schema_chosen: self.schema_chosen,
            tracks_origins: self.tracks_origins,
            deferred_errors: Vec::new(),
            remote: self.remote.clone(),
            helm: self.helm.clone(),
            helm_namespace: self.helm_namespace.clone(),
            plugins: self.plugins.clone(),
            recorder: self.recorder.clone(),
            load_only: self.load_only,
            needs_build: false,
            memo: self.memo.clone(),
            shared_files: self.shared_files,
        }
    }

    /// A path as origin annotations write it: relative to the top-level kustomization.
    fn relative(&self, path: &Path) -> String {
        build_metadata::relative_path(path, &self.top_root)
    }
}

/// A kustomization file, read and checked.
pub struct Target {
    pub loader: Loader,
    pub kustomization: Kustomization,
    /// The kustomization file, for messages.
    pub file: PathBuf,
}

impl Target {
    /// Reads the kustomization in `loader`'s root.
    /// `shared`: many builds of this process read the same kustomizations (`build DIR DIR...`),
    /// so a file unchanged since an earlier build read it is not read again.
    pub fn load(loader: Loader, shared: bool, diagnostics: &mut Diagnostics) -> Result<Target> {
        static TEXTS: FileMemo<String> = FileMemo::new(MEMO_TEXT_BYTES);
        let (file, text) = match shared {
            true => loader.read_kustomization_shared(&TEXTS)?,
            false => loader.read_kustomization_file().map(|(file, text)| (file, Arc::new(text)))?,
        };
        // Components and shared bases are read many times in a big build: parse each text once,
        // but print its deprecation warnings each time, as kustomize does.
        static PARSED: TextMemo<(Vec<String>, Kustomization, bool)> = TextMemo::new();
        let (warnings, mut kustomization, empty) = PARSED.get_or_parse(&text, |text| parse_kustomization(text, &file))?;
        for warning in warnings {
            diagnostics.notice(warning);
        }
        fix_deprecated_fields(&mut kustomization);
        if empty {
            return Err(Error::noted("kustomization.yaml is empty", format!("at {}", file.display())));
        }
        for what in ignored_settings(&kustomization) {
            diagnostics.unmatched(&file.display().to_string(), &what);
        }
        check_kind(&kustomization, loader.root(), &file)?;
        loader.note_kind(&kustomization.kind);
        Ok(Target { loader, kustomization, file })
    }

    fn is_component(&self) -> bool {
        self.kustomization.kind == "Component"
    }

    fn name(&self) -> String {
        self.file.display().to_string()
    }

    /// The kustomization file and the entry that names a remote resource, put before an error
    /// about it (kustomize's own message names only the URL): `k/kustomization.yaml: resources[2] 'URL'`.
    fn entry(&self, field: &str, position: usize, entry: &str) -> String {
        // Named from the current folder, where the user typed the build.
        let here = std::env::current_dir().and_then(|d| d.canonicalize()).unwrap_or_default();
        let file = self.file.strip_prefix(&here).unwrap_or(&self.file);
        format!("{}: {field}[{position}] '{}'", file.display(), crate::remote::redact_password(entry))
    }
}

/// The text of a kustomization file, decoded as kustomize decodes it, with the deprecation
/// warnings its fields call for and whether it is empty (kustomize refuses an empty one).
pub fn parse_kustomization(text: &str, file: &Path) -> Result<(Vec<String>, Kustomization, bool)> {
    let value = crate::yaml::parse::parse_document_last_key_wins(text).map_err(|e| {
        Error::noted(format!("invalid Kustomization: {}", e.go_yaml_v2()), format!("at {}:{}:{}", file.display(), e.line, e.column))
    })?;
    let value = match value {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => value,
        // Named by type only: the text may be any file a symlink points at.
        other => {
            return Err(Error::noted(
                format!("invalid Kustomization: json: cannot unmarshal {} into Go value of type types.Kustomization", crate::kustomization::go_json::json_kind(&other)),
                format!("at {}", file.display()),
            ))
        }
    };
    let value = crate::kustomization::go_json::decode_kustomization(value)
        .map_err(|e| e.error(file, Some(text), "invalid Kustomization: "))?;
    let warnings = deprecated_field_warnings(&value);
    let empty = crate::kustomization::types::is_empty_kustomization(&value);
    let kustomization: Kustomization = serde_json::from_value(value)
        .map_err(|e| Error::noted(format!("invalid Kustomization: {e}"), format!("at {}", file.display())))?;
    Ok((warnings, kustomization, empty))
}

/// Settings kustomize accepts and then does nothing with (or that this build does not apply):
/// each is said, as a rule that matched nothing (`--strict` refuses them).
fn ignored_settings(k: &Kustomization) -> Vec<String> {
    let mut ignored = Vec::new();
    for key in k.openapi.keys().filter(|key| !["path", "version"].contains(&key.as_str())) {
        ignored.push(format!("openapi: '{key}' is neither 'path' nor 'version' and has no effect"));
    }
    for option in &k.build_metadata {
        match option.as_str() {
            "originAnnotations" | "transformerAnnotations" | "managedByLabel" => {}
            other => ignored.push(format!("buildMetadata: '{other}' is not an option and has no effect")),
        }
    }
    if k.helm_globals.is_some() && k.helm_charts.is_empty() {
        ignored.push("helmGlobals has no effect without helmCharts".into());
    }
    ignored
}

/// kustomize's `EnforceFields`, after `FixKustomization` gave an empty kind `Kustomization`: every
/// complaint on its own line, under the folder's name.
fn check_kind(k: &Kustomization, root: &Path, file: &Path) -> Result<()> {
    let kind = if k.kind.is_empty() { "Kustomization" } else { k.kind.as_str() };
    let mut complaints = Vec::new();
    if kind != "Kustomization" && kind != "Component" {
        complaints.push("kind should be Kustomization or Component".to_owned());
    }
    let required = if kind == "Component" { "kustomize.config.k8s.io/v1alpha1" } else { "kustomize.config.k8s.io/v1beta1" };
    if !k.api_version.is_empty() && k.api_version != required {
        complaints.push(format!("apiVersion for {kind} should be {required}"));
    }
    if complaints.is_empty() {
        return Ok(());
    }
    Err(Error::noted(format!("Failed to read kustomization file under {}:\n{}", root.display(), complaints.join("\n")), format!("at {}", file.display())))
}

/// Deprecated fields and what replaces them, in the order kustomize warns about them.
const DEPRECATED_FIELDS: [(&str, &str); 6] = [
    ("bases", "'resources' instead."),
    ("commonLabels", "'labels' instead."),
    ("imageTags", "'images' instead."),
    ("patchesJson6902", "'patches' instead."),
    ("patchesStrategicMerge", "'patches' instead."),
    ("vars", "'replacements' instead. [EXPERIMENTAL]"),
];

/// kustomize's warnings for deprecated fields: printed whenever the field is written, even empty.
fn deprecated_field_warnings(raw: &Value) -> Vec<String> {
    DEPRECATED_FIELDS
        .iter()
        .filter(|(field, _)| crate::fast_hash::get(raw, field).is_some())
        .map(|(field, instead)| {
            format!("# Warning: '{field}' is deprecated. Please use {instead} Run 'kustomize edit fix' to update your Kustomization automatically.")
        })
        .collect()
}

/// kustomize's `FixKustomization`: old field names folded into the new ones.
fn fix_deprecated_fields(k: &mut Kustomization) {
    let bases = std::mem::take(&mut k.bases);
    k.resources.extend(bases);
    let tags = std::mem::take(&mut k.image_tags);
    k.images.extend(tags);
}

/// Accumulates a kustomization into `acc` (kustomize's `accumulateTarget`).
pub fn accumulate(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    let namespace = &target.kustomization.namespace;
    let inherited = if namespace.is_empty() { None } else { Some(std::mem::replace(&mut ctx.helm_namespace, namespace.clone())) };
    let result = accumulate_here(ctx, target, acc);
    if let Some(inherited) = inherited {
        ctx.helm_namespace = inherited;
    }
    result
}

fn accumulate_here(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    let k = &target.kustomization;
    load_openapi(ctx, target)?;
    accumulate_resources(ctx, target, acc)?;
    // kustomize's tables for this level: the builtin ones, with `configurations` merged over them.
    let mut files = Vec::new();
    for path in &k.configurations {
        let (file, text) = target.loader.read(path)?;
        let docs = parse_file(&file, &text)?;
        let single = docs.len() == 1;
        for doc in docs {
            use crate::kustomization::go_json::{decode_document, TRANSFORMER_CONFIG};
            let value = decode_document(doc.value, &TRANSFORMER_CONFIG)
                .map_err(|e| e.error(&file, Some(text.as_str()).filter(|_| single), "error unmarshaling JSON: while decoding JSON: "))?;
            files.push(FieldSpecTables::from_config_value(&value)?);
        }
    }
    let level = if files.is_empty() {
        Cow::Borrowed(FieldSpecTables::builtin())
    } else {
        Cow::Owned(FieldSpecTables::for_configurations(files)?)
    };
    acc.merge_tables(level)?;
    // kustomize's words: `loading CRDs [a.yaml b.yaml]: ...`, and what could not be decoded named.
    let loading_crds = || format!("loading CRDs [{}]", k.crds.join(" "));
    for path in &k.crds {
        let (file, text) = target.loader.read(path).map_err(|e| e.context(loading_crds()))?;
        for doc in parse_file(&file, &text)? {
            let tables = FieldSpecTables::from_crd(&doc.value, text.starts_with('{'))
                .map_err(|e| e.context(format!("unable to parse open API definition from '{path}'")).context(loading_crds()))?;
            acc.merge_tables(Cow::Owned(tables))?;
        }
    }
    run_generators(ctx, target, acc)?;
    for (position, component) in k.components.iter().enumerate() {
        let remote = remote_base(ctx, &target.loader, component).map_err(|e| e.context(target.entry("components", position, component)))?;
        let loader = match &remote {
            Some((spec, checkout)) => Loader::in_repository(checkout, &spec.kust_root()).map(|l| l.with_urls(target.loader.urls().cloned())),
            None => target.loader.child(component),
        };
        let loader = loader.map_err(|e| e.map_message(|inner| format!("accumulating components: loader.New {}", go_quote(inner))))?;
        if let Some(cycle) = cycle_error(ctx, loader.root()) {
            return Err(Error::msg(format!("accumulating components: loader.New {}", go_quote(&cycle))));
        }
        remembered(ctx, loader, true, acc, |ctx, loader, acc| {
            let root = loader.root().display().to_string();
            let sub = Target::load(loader, ctx.shared_files, &mut ctx.diagnostics).map_err(|e| {
                e.context(format!("couldn't make target for path '{root}'"))
                    .map_message(|inner| format!("accumulating components: accumulateDirectory: {}", go_quote(inner)))
            })?;
            if !sub.is_component() {
                return Err(Error::msg(format!(
                    "accumulating components: accumulateDirectory: \"expected kind 'Component' for path '{}' but got '{}'\"",
                    sub.loader.root().display(),
                    if sub.kustomization.kind.is_empty() { "Kustomization" } else { &sub.kustomization.kind }
                )));
            }
            enter(ctx, &sub);
            let result = match &remote {
                Some((spec, _)) => {
                    let root = sub.loader.root().to_path_buf();
                    in_remote_origin(ctx, &root, spec, acc, |ctx, acc| accumulate(ctx, &sub, acc))
                }
                None => accumulate(ctx, &sub, acc),
            };
            ctx.visiting.pop();
            result.map_err(|e| {
                e.context(format!("recursed accumulation of path '{}'", sub.loader.root().display()))
                    .map_message(|inner| format!("accumulating components: accumulateDirectory: {}", go_quote(inner)))
            })?;
            // kustomize merges what the component made back into an empty map: two resources
            // its patches gave one id are refused there.
            match acc.resources.first_repeated_id() {
                None => Ok(()),
                Some(id) => {
                    let inner = format!("recursed merging from path '{}': may not add resource with an already registered id: {id}", sub.loader.root().display());
                    Err(Error::msg(format!("accumulating components: accumulateDirectory: {}", go_quote(&inner))))
                }
            }
        })?;
    }
    if ctx.load_only {
        return load_transformer_files(ctx, target);
    }
    run_transformers(ctx, target, acc)?;
    crate::transform::vars::merge_vars(&acc.resources, &mut acc.vars, &k.vars)?;
    if let Some(recorder) = &ctx.recorder {
        recorder.declare_vars(&target.file, &k.vars);
    }
    Ok(())
}

/// `openapi: {path}` loads a custom schema; `openapi: {version}` may only name the builtin one.
/// The outermost kustomization that sets either wins, as kustomize sets its schema once.
fn load_openapi(ctx: &mut Context, target: &Target) -> Result<()> {
    let openapi = &target.kustomization.openapi;
    if openapi.is_empty() || ctx.schema_chosen {
        return Ok(());
    }
    ctx.schema_chosen = true;
    if let Some(path) = openapi.get("path") {
        if openapi.contains_key("version") {
            return Err(Error::msg("builtin version and custom schema provided, cannot use both"));
        }
        let (file, text) = target.loader.read(path)?;
        let doc = crate::yaml::parse::parse_document(&text).map_err(|e| Error::Parse {
            file: file.display().to_string(),
            line: e.line,
            column: e.column,
            message: e.message.clone(),
        })?;
        ctx.custom_schema = Some(Schema::with_custom(&doc)?);
    } else if let Some(version) = openapi.get("version") {
        if version != crate::patch::BUILTIN_VERSION {
            return Err(Error::msg(format!("the specified OpenAPI version is not built in: {version}")));
        }
    }
    Ok(())
}

/// Notes that `target`'s folder is being built, for [`cycle_error`].
pub fn enter(ctx: &mut Context, target: &Target) {
    ctx.visiting.push(target.loader.root().to_path_buf());
}

/// kustomize's loader refuses a folder at or above any folder on the way to it (a kustomization
/// in it, the one that named it, and so on up to the top): such a base would contain, or be,
/// one being built. The message names the nearest such folder.
fn cycle_error(ctx: &Context, candidate: &Path) -> Option<String> {
    let visited = ctx.visiting.iter().rev().find(|root| root.starts_with(candidate))?;
    Some(format!("cycle detected: candidate root '{}' contains visited root '{}'", candidate.display(), visited.display()))
}

/// Builds a sub-kustomization (a folder in `resources`) into its own accumulator, with
/// kustomize's words for what fails.
pub fn accumulate_directory(ctx: &mut Context, loader: Loader) -> Result<Accumulated> {
    if let Some(cycle) = cycle_error(ctx, loader.root()) {
        return Err(Error::msg(cycle));
    }
    let mut acc = Accumulated::default();
    remembered(ctx, loader, false, &mut acc, |ctx, loader, acc| {
        let root = loader.root().display().to_string();
        let sub = Target::load(loader, ctx.shared_files, &mut ctx.diagnostics)
            .map_err(|e| e.context(format!("couldn't make target for path '{root}'")))?;
        if sub.is_component() {
            return Err(Error::msg(format!("expected kind != 'Component' for path '{root}'")));
        }
        enter(ctx, &sub);
        let result = accumulate(ctx, &sub, acc);
        ctx.visiting.pop();
        result.map_err(|e| e.context(format!("recursed accumulation of path '{root}'")))
    })?;
    Ok(acc)
}

/// A loading walk's memo of included folders ([`crate::kustomization::reads::Memo`]): a local
/// folder walked before in this run, from any root, is not walked again; its read set is added
/// to the includer's. A folder is remembered only where its walk depends on nothing but the
/// folder: it succeeded, chose no openapi schema (the outermost choice wins, so an includer's
/// choice changes what the folder reads), and added only the builtin field specs. It is reused
/// only where it is of the kind wanted and enters no folder the cycle check refuses here.
fn remembered(
    ctx: &mut Context,
    loader: Loader,
    component: bool,
    acc: &mut Accumulated,
    walk: impl FnOnce(&mut Context, Loader, &mut Accumulated) -> Result<()>,
) -> Result<()> {
    let (Some(memo), Some(parent)) = (ctx.memo.clone(), loader.reads().cloned()) else {
        return walk(ctx, loader, acc);
    };
    if !ctx.load_only || ctx.schema_chosen {
        return walk(ctx, loader, acc);
    }
    let root = loader.root().to_path_buf();
    let builtin = FieldSpecTables::builtin();
    if let Some(walked) = memo.get(&root) {
        let kind_fits = walked.set.roots.get(&root).is_some_and(|kind| (kind == "Component") == component);
        if kind_fits && walked.set.roots.keys().all(|folder| cycle_error(ctx, folder).is_none()) {
            parent.merge(&walked.set);
            ctx.needs_build |= walked.needs_build;
            return acc.merge_tables(Cow::Borrowed(builtin));
        }
    }
    let own = Arc::new(crate::kustomization::reads::Reads::default());
    let outer_needs_build = std::mem::take(&mut ctx.needs_build);
    let mut mine = Accumulated::default();
    let result = walk(ctx, loader.with_reads(own.clone()), &mut mine);
    let set = own.snapshot();
    parent.merge(&set);
    let only_builtin = match &mine.tables {
        None => true,
        Some(Cow::Borrowed(tables)) => std::ptr::eq(*tables, builtin),
        Some(Cow::Owned(_)) => false,
    };
    let needs_build = ctx.needs_build;
    ctx.needs_build |= outer_needs_build;
    result?;
    if only_builtin && mine.vars.is_empty() && mine.resources.is_empty() && !ctx.schema_chosen {
        memo.put(root, crate::kustomization::reads::Walked { set, needs_build });
    }
    absorb_sub(acc, mine)
}

/// From this many `resources` entries on, they are looked at in parallel.
const MANY_ENTRIES: usize = 32;

fn accumulate_resources(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    let entries = &target.kustomization.resources;
    // Each entry is looked at once (a file? a folder?), for the prebuild and for the loop.
    // A build that reads each file itself (not through the memo of decoded files) leaves a
    // usual file's name unchecked until its turn: reading it then says it is a file.
    let one_by_one = !ctx.shared_files || ctx.recorder.is_some() || ctx.load_only;
    let kind_of = |entry: &String| EntryKind::of(&target.loader, entry, one_by_one);
    // Many entries (an environment naming every app) are looked at on every thread: each look
    // walks the disk.
    let (kinds, mut looks): (Vec<EntryKind>, Vec<Option<Looked>>) = match entries.len() >= MANY_ENTRIES {
        true => {
            use rayon::prelude::*;
            entries.par_iter().with_max_len(4).map(kind_of).unzip()
        }
        false => entries.iter().map(kind_of).unzip(),
    };
    let mut prebuilt = prebuild_directories(ctx, target, &kinds);
    let prebuilt_resources = prebuilt.iter().flatten().map(|(sub, _)| sub.as_ref().map_or(0, |sub| sub.resources.len())).sum();
    acc.resources.reserve(prebuilt_resources);
    for (position, entry) in entries.iter().enumerate() {
        let mut read_at_once = None;
        let kind = match kinds[position] {
            EntryKind::Unchecked => match target.loader.read_if_plain_file(entry) {
                Some(read) => {
                    read_at_once = Some(read);
                    EntryKind::File
                }
                None => EntryKind::checked(&target.loader, entry).0,
            },
            kind => kind,
        };
        if kind == EntryKind::Http {
            let sub = accumulate_http_entry(ctx, target, entry).map_err(|e| e.context(target.entry("resources", position, entry)))?;
            absorb_sub(acc, sub)?;
        } else if kind == EntryKind::File {
            // kustomize then tries the entry as a folder, which a file is not, and says both.
            let read_failed = |e: Error| {
                e.map_message(|inner| {
                    format!(
                        "accumulating resources: accumulation err='accumulating resources from '{entry}': {inner}': must build at directory: '{}': file is not directory",
                        target.loader.display_relative(entry)
                    )
                })
            };
            // kustomize then tries the file as a kustomization folder, unless its YAML is malformed.
            let parse_failed = |file: &Path, e: Error| match e {
                e if crate::resource::decode::is_go_map_error(&e) => e,
                e if e.is_malformed_yaml() => e.map_message(|inner| format!("accumulating resources: accumulating resources from '{entry}': {inner} in File: {entry}")),
                other => other.map_message(|inner| {
                    format!(
                        "accumulating resources: accumulation err='accumulating resources from '{entry}': {inner}': must build at directory: '{}': file is not directory",
                        file.display()
                    )
                }),
            };
            let mut read_plainly = || read_at_once.take().unwrap_or_else(|| target.loader.read(entry));
            if ctx.load_only {
                read_plainly().map_err(read_failed)?;
                continue;
            }
            let (file, resources) = if !ctx.shared_files || ctx.recorder.is_some() {
                // `explain` keeps the text of each file, to point into it.
                let (file, text) = read_plainly().map_err(read_failed)?;
                let (mut resources, invalid) = resources_from_file(&file, &text).map_err(|e| parse_failed(&file, e))?;
                ctx.deferred_errors.extend(invalid);
                if let Some(recorder) = &ctx.recorder {
                    recorder.loaded(&file, &text, &mut resources);
                }
                (file, Arc::new(resources))
            } else {
                // A file many kustomizations name (a shared base's) is decoded once per process,
                // while it is among the files read last.
                static DECODED: FileMemo<Vec<Resource>> = FileMemo::new(MEMO_TEXT_BYTES);
                let (mut invalid, mut unparsed) = (None, None);
                let looked = looks[position].take();
                let read = target.loader.read_parsed_looked(entry, looked, &DECODED, |file, text| match resources_from_file(file, &text) {
                    Ok((resources, deferred)) => {
                        let keep = deferred.is_none();
                        invalid = deferred;
                        Ok((resources, keep))
                    }
                    Err(e) => {
                        let e = parse_failed(file, e);
                        unparsed = Some(e);
                        Err(Error::msg("unparsed"))
                    }
                });
                if let Some(e) = unparsed {
                    return Err(e);
                }
                let read = read.map_err(read_failed)?;
                ctx.deferred_errors.extend(invalid);
                read
            };
            // Origins are kept only for a build that writes them (`buildMetadata`).
            let origin = ctx.tracks_origins.then(|| build_metadata::file_origin(&ctx.relative(&file)));
            // kustomize reads the file into a map of its own (a repeated id is an error there), merges
            // that into the level's, and on any error tries the file as a folder, and says both.
            let failed = |stage: &str, e: Error| {
                e.map_message(|inner| {
                    format!(
                        "accumulating resources: accumulation err='{stage} resources from '{entry}': {inner}': must build at directory: '{}': file is not directory",
                        file.display()
                    )
                })
            };
            let mut own = ResMap::default();
            // Taken as decoded when this build alone holds them (the parse gives a resource's
            // keys their exact length); copied, at exact sizes, when the memo of shared files
            // keeps them for the next build.
            let resources = match Arc::try_unwrap(resources) {
                Ok(resources) => resources,
                Err(shared) => shared.iter().map(Resource::copy_exact).collect(),
            };
            for mut resource in resources {
                resource.origin = origin.clone();
                own.append(resource).map_err(|e| failed("accumulating", e))?;
            }
            acc.resources.append_all(own).map_err(|e| failed("merging", e))?;
        } else if kind == EntryKind::Folder {
            // kustomize tried the entry as a file first and quotes why that failed. The words
            // are made only for an error: an environment absorbs hundreds of folders in a row.
            let joined = || target.loader.display_relative(entry);
            let failed = || {
                let not_a_file = match target.loader.restrictor() {
                    LoadRestrictor::RootOnly => format!("'{}' must resolve to a file", joined()),
                    LoadRestrictor::None => format!("read {}: is a directory", joined()),
                };
                format!("accumulating resources: accumulation err='accumulating resources from '{entry}': {not_a_file}'")
            };
            let sub = match prebuilt[position].take() {
                // Valid unless an earlier entry installed a custom schema, which it would have used.
                Some((sub, sub_ctx)) if ctx.custom_schema.is_none() => {
                    ctx.adopt(sub_ctx);
                    sub
                }
                _ => accumulate_directory(ctx, target.loader.child(entry).map_err(|e| e.context(failed()))?),
            };
            let sub = sub.map_err(|e| e.context(failed()))?;
            // A resource id the folder brings again names the folder that brought it.
            let merging = |e: Error| e.context(format!("{}: recursed merging from path '{}'", failed(), joined()));
            acc.resources.append_all(sub.resources).map_err(merging)?;
            absorb_sub(acc, Accumulated { resources: ResMap::default(), ..sub }).map_err(merging)?;
        } else if kind == EntryKind::Git {
            let sub = accumulate_git_entry(ctx, &target.loader, entry)
                .map_err(|e| e.context(format!("accumulating resources from '{entry}'")).context(target.entry("resources", position, entry)))?;
            absorb_sub(acc, sub)?;
        } else {
            let shown = target.loader.display_relative(entry);
            let reason = target.loader.missing_reason(entry);
            // kustomize reads the entry as a file, then tries it as a folder, and says both.
            let message = match target.loader.restrictor() {
                LoadRestrictor::RootOnly if reason == "no such file or directory" => {
                    let missing = crate::error::evalsymlink_failure(Path::new(&shown));
                    let as_folder = if Path::new(entry).is_absolute() {
                        format!("new root '{entry}' cannot be absolute")
                    } else if let Some(ambiguous) = crate::kustomization::loader::ambiguous_root(entry) {
                        ambiguous
                    } else {
                        format!("must build at directory: not a valid directory: {missing}")
                    };
                    format!("accumulating resources: accumulation err='accumulating resources from '{entry}': {missing}': {as_folder}")
                }
                _ => format!("accumulating resources: accumulation err='accumulating resources from '{entry}': open {shown}: {reason}'"),
            };
            return Err(Error::msg(message));
        }
    }
    Ok(())
}

/// Folders in `resources` are independent builds: when there are several, they are built in
/// parallel, each with a context of its own, and then taken in order as if built one after
/// another (their warnings appended in order; an error counts where its entry stands).
fn prebuild_directories(ctx: &Context, target: &Target, kinds: &[EntryKind]) -> Vec<Option<(Result<Accumulated>, Context)>> {
    use rayon::prelude::*;
    let entries = &target.kustomization.resources;
    // A custom schema changes how later folders build: those keep to the sequential order.
    if ctx.custom_schema.is_some() || kinds.iter().filter(|k| **k == EntryKind::Folder).count() < 2 {
        return entries.iter().map(|_| None).collect();
    }
    entries
        .par_iter()
        // One folder per task: a long run of folders would end alone.
        .with_max_len(1)
        .zip(kinds)
        .map(|(entry, kind)| {
            if *kind != EntryKind::Folder {
                return None;
            }
            let loader = target.loader.child(entry).ok()?;
            let mut sub_ctx = ctx.fork();
            let sub = accumulate_directory(&mut sub_ctx, loader).map(|mut sub| {
                sub.resources.settle();
                sub
            });
            Some((sub, sub_ctx))
        })
        .collect()
}

/// Adds a sub-kustomization's resources, field specs and vars.
fn absorb_sub(acc: &mut Accumulated, sub: Accumulated) -> Result<()> {
    acc.resources.append_all(sub.resources).map_err(|e| e.context("accumulating resources"))?;
    if let Some(tables) = sub.tables {
        acc.merge_tables(tables)?;
    }
    merge_vars(&mut acc.vars, sub.vars)
}

/// What a `resources` entry names, in kustomize's order: an HTTP(S) URL is first read as a file,
/// then a local file, then a git URL, then a local folder.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Http,
    File,
    Git,
    Folder,
    Missing,
    /// Named as a file usually is (`deployment.yaml`, below the folder), and not looked at yet:
    /// [`Loader::read_if_plain_file`] says, when its turn comes, whether it is a file, else
    /// [`EntryKind::checked`].
    Unchecked,
}

impl EntryKind {
    /// What `entry` names; [`EntryKind::Unchecked`] for what is likely a file, when the build
    /// reads its files one by one. With a file, what the look at it saw, for its read.
    fn of(loader: &Loader, entry: &str, one_by_one: bool) -> (EntryKind, Option<Looked>) {
        let file_like = [".yaml", ".yml", ".json"].iter().any(|suffix| entry.ends_with(suffix));
        if one_by_one && file_like && loader.opens_at_once(entry) {
            return (EntryKind::Unchecked, None);
        }
        EntryKind::checked(loader, entry)
    }

    /// What `entry` names, looked at now; with a file, what the look saw.
    fn checked(loader: &Loader, entry: &str) -> (EntryKind, Option<Looked>) {
        if crate::remote::url::is_http_url(entry) {
            return (EntryKind::Http, None);
        }
        let (kind, looked) = loader.look(entry).unzip();
        let looked = looked.flatten();
        if kind.is_some_and(|k| k.is_file()) {
            (EntryKind::File, looked)
        } else if crate::remote::RepoSpec::parse(entry).is_ok() {
            (EntryKind::Git, None)
        } else if kind.is_some_and(|k| k.is_dir()) {
            (EntryKind::Folder, None)
        } else {
            (EntryKind::Missing, None)
        }
    }
}

impl Context {
    /// Takes in what a context of a folder built apart has collected.
    fn adopt(&mut self, other: Context) {
        self.diagnostics.warnings.extend(other.diagnostics.warnings);
        self.diagnostics.unmatched.extend(other.diagnostics.unmatched);
        self.deferred_errors.extend(other.deferred_errors);
        self.needs_build |= other.needs_build;
        if other.schema_chosen && !self.schema_chosen {
            self.schema_chosen = true;
            self.custom_schema = other.custom_schema;
        }
    }
}

fn merge_vars(into: &mut Vec<Value>, more: Vec<Value>) -> Result<()> {
    for var in more {
        let name = var.get("name").and_then(Value::as_str).unwrap_or("");
        if into.iter().any(|v| v.get("name").and_then(Value::as_str) == Some(name)) {
            return Err(Error::msg(format!("var '{name}' already encountered")));
        }
        into.push(var);
    }
    Ok(())
}

/// The configs a `transformers`/`generators` entry names; a folder is built as a kustomization.
fn load_plugin_configs(ctx: &mut Context, target: &Target, entry: &str) -> Result<Vec<Value>> {
    builtin_plugins::load_configs(entry, &target.loader, &mut |loader| Ok(accumulate_directory(ctx, loader)?.resources))
}

fn run_generators(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    let k = &target.kustomization;
    let global = k.generator_options.as_ref();
    let configmaps = k.config_map_generator.iter().enumerate().map(|(i, a)| (GeneratedKind::ConfigMap, "configMapGenerator", i, a));
    let secrets = k.secret_generator.iter().enumerate().map(|(i, a)| (GeneratedKind::Secret, "secretGenerator", i, a));
    // Where the generators were configured: for the origins of a build that keeps them, and
    // as what names a `generators` entry that is no file.
    let configured_in = if ctx.tracks_origins || !k.generators.is_empty() { ctx.relative(&target.file) } else { String::new() };
    let recorder = ctx.recorder.clone();
    for (kind, field, index, args) in configmaps.chain(secrets) {
        let mut generated = generate::generate(kind, args, global, &target.loader, ctx.shared_files)?;
        if ctx.load_only {
            continue;
        }
        let plugin = if kind == GeneratedKind::ConfigMap { "ConfigMapGenerator" } else { "SecretGenerator" };
        generated.origin = ctx.tracks_origins.then(|| build_metadata::configured(&configured_in, plugin, None));
        let step = |r: &Recorder| r.generator_step(&target.file, field, index, target.loader.root().to_path_buf());
        recorded(recorder.as_deref(), &mut acc.resources, step, |resources| absorb(resources, generated))?;
    }
    if !k.helm_charts.is_empty() || !k.helm_chart_inflation_generator.is_empty() {
        let (globals, charts) = crate::helm::charts_of(k.helm_globals.as_ref(), &k.helm_charts, &k.helm_chart_inflation_generator, &target.file)?;
        let origin = ctx.tracks_origins.then(|| build_metadata::configured(&configured_in, "HelmChartInflationGenerator", None));
        for (index, mut chart) in charts.into_iter().enumerate() {
            if chart.namespace.is_empty() {
                chart.namespace = ctx.helm_namespace.clone();
            }
            if ctx.load_only {
                crate::helm::note_reads(&globals, &chart, &ctx.helm, &target.loader)
                    .map_err(|e| e.context(format!("{}: helmCharts '{}'", target.name(), chart.name)))?;
                continue;
            }
            let inflated = crate::helm::inflate(&globals, &chart, &ctx.helm, &target.loader)
                .map_err(|e| e.context(format!("{}: helmCharts '{}'", target.name(), chart.name)))?;
            for mut generated in inflated {
                generated.origin = origin.clone();
                let step = |r: &Recorder| r.step(&target.file, "helmCharts", Some(index), None);
                recorded(recorder.as_deref(), &mut acc.resources, step, |resources| absorb(resources, generated))?;
            }
        }
    }
    for (index, entry) in k.generators.iter().enumerate() {
        let source = if target.loader.is_file(entry) { ctx.relative(&target.loader.resolve(entry)?) } else { configured_in.clone() };
        for config in load_plugin_configs(ctx, target, entry)? {
            let origin = build_metadata::configured_by_config(&source, &config);
            let plugin = external_plugin(&ctx.plugins, ctx.tracks_origins, target, &config, &source, "generators");
            if ctx.load_only {
                load_generator_files(&ctx.helm, target, &config, plugin.as_ref())?;
                continue;
            }
            let generated = if config.get("kind").and_then(Value::as_str) == Some("HelmChartInflationGenerator") {
                let (globals, chart) = crate::helm::chart_of_generator_config(&config)?;
                crate::helm::inflate(&globals, &chart, &ctx.helm, &target.loader)
                    .map_err(|e| e.context(format!("{source}: HelmChartInflationGenerator '{}'", chart.name)))?
            } else {
                match &plugin {
                    Some(plugin) => plugin.generate(&mut ctx.diagnostics)?,
                    None => builtin_plugins::run_generator(&config, &target.loader)?,
                }
            };
            for mut generated in generated {
                generated.origin = Some(origin.clone());
                let step = |r: &Recorder| r.step(&target.file, "generators", Some(index), None);
                recorded(recorder.as_deref(), &mut acc.resources, step, |resources| absorb(resources, generated)).map_err(|e| match &plugin {
                    Some(plugin) => plugin.error(e),
                    None => e,
                })?;
            }
        }
    }
    Ok(())
}

/// Adds a generated resource, or merges it into / replaces the one of the same id from a lower layer.
fn absorb(resources: &mut ResMap, mut generated: Resource) -> Result<()> {
    let id = generated.current_id();
    let mut matches = resources.positions_named(&id.name);
    matches.retain(|&i| resources.get(i).all_ids().iter().any(|other| other.same_as(&id)));
    match (matches.as_slice(), generated.behavior) {
        ([], Behavior::Create | Behavior::Unspecified) => resources.append(generated),
        ([], _) => Err(Error::msg(format!("id {id} does not exist; cannot merge or replace"))),
        ([i], Behavior::Merge | Behavior::Replace) => {
            let old = std::mem::replace(resources.get_mut(*i), Resource::new(Value::Null));
            if generated.behavior == Behavior::Merge {
                let is_secret = generated.value.get("apiVersion").and_then(Value::as_str) == Some("v1")
                    && generated.value.get("kind").and_then(Value::as_str) == Some("Secret");
                let old_data = if is_secret {
                    secret_data_with_string_data(&old.value).map_err(|e| Error::msg(format!("failed to normalize stringData for {id}: {e}")))?
                } else {
                    None
                };
                merge_string_map_from(&mut generated.value, old_data.as_ref().unwrap_or(&old.value), "data");
                merge_string_map_from(&mut generated.value, &old.value, "binaryData");
                // kustomize merges into the old resource's nodes: its data keys stay as read.
                let in_data = |path: &&crate::resource::NodePath| {
                    matches!(path.first(), Some(crate::resource::Step::Key(field)) if field == "data" || field == "binaryData")
                };
                generated.plain_keys.extend(old.plain_keys.iter().filter(in_data).cloned());
            }
            copy_merge_metadata(&mut generated, &old);
            // The merged resource keeps the history of the one it replaces (explain only).
            generated.provenance = old.provenance;
            resources.replace(*i, generated);
            Ok(())
        }
        ([_], create) => {
            let behavior = if create == Behavior::Create { "create" } else { "unspecified" };
            Err(Error::msg(format!("id {id} exists; can not use behavior: '{behavior}', behavior must be merge or replace")))
        }
        (_, _) => Err(Error::msg(format!("found multiple objects that could accept merge of {id}"))),
    }
}

/// `CopyMergeMetaDataFieldsFrom`: labels and annotations merged (new wins) and set again, a
/// map left empty removed (kyaml's `SetLabels`); name and namespace of the old.
fn copy_merge_metadata(new: &mut Resource, old: &Resource) {
    for field in ["labels", "annotations"] {
        let (old_map, new_map) = (old.metadata_map(field), new.metadata_map(field));
        if old_map.is_none() && new_map.is_none() {
            continue;
        }
        let mut merged = old_map.cloned().unwrap_or_default();
        if let Some(new_map) = new_map {
            merged.extend(new_map.clone());
        }
        stringify_values(&mut merged);
        match merged.is_empty() {
            true => new.metadata_mut().shift_remove(field),
            false => new.metadata_mut().insert(field.into(), Value::Object(merged)),
        };
    }
    let (name, ns) = (old.name().to_string(), old.namespace().to_string());
    new.metadata_mut().insert("name".into(), Value::String(name));
    if ns.is_empty() {
        new.metadata_mut().shift_remove("namespace");
    } else {
        new.metadata_mut().insert("namespace".into(), Value::String(ns));
    }
    // A hash only when both layers want one: a merge into a plain ConfigMap, or an overlay that
    // disables the hash, gives none.
    new.needs_hash_suffix = old.needs_hash_suffix && new.needs_hash_suffix;
    new.previous_ids = old.previous_ids.clone();
    if new.behavior == Behavior::Merge {
        new.origin = old.origin.clone();
    }
    new.transformations = old.transformations.clone();
    new.prefixes = old.prefixes.clone();
    new.suffixes = old.suffixes.clone();
}

/// kustomize v5.8.3's `normalizeSecretStringData`: a Secret's `data` with its `stringData`
/// encoded into it (a `stringData` key wins over the same key of `data`), as the API server
/// would store it; None when the Secret has no `stringData`.
fn secret_data_with_string_data(secret: &Value) -> Result<Option<Value>> {
    let Some(string_data) = secret.get("stringData").filter(|v| !v.is_null()) else { return Ok(None) };
    let Some(string_data) = string_data.as_object() else {
        return Err(Error::msg("read stringData: wrong node kind: expected MappingNode"));
    };
    let mut data = secret.get("data").and_then(Value::as_object).cloned().unwrap_or_default();
    for (key, value) in string_data {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => String::new(),
            _ => return Err(Error::msg(format!("read stringData: stringData value for key {} must be a scalar", go_quote(key)))),
        };
        data.insert(key.clone(), Value::String(generate::wrapped_base64(text.as_bytes())));
    }
    Ok(Some(serde_json::json!({ "data": data })))
}

fn merge_string_map_from(new: &mut Value, old: &Value, field: &str) {
    let Some(old_map) = old.get(field).and_then(Value::as_object) else { return };
    let mut merged = old_map.clone();
    if let Some(new_map) = new.get(field).and_then(Value::as_object) {
        merged.extend(new_map.clone());
    }
    new.as_object_mut().unwrap().insert(field.into(), Value::Object(merged));
}

/// The split paths of a labels pass's field specs: the builtin tables' are split once for the
/// build, others once per pass.
enum PassSpecs<'t> {
    Builtin(&'static SpecPaths<'static>),
    Merged(Cow<'t, [FieldSpec]>),
}

impl<'t> PassSpecs<'t> {
    /// The split paths, made in `split` when they are not the builtin ones.
    fn paths<'a>(&'a self, split: &'a mut Option<SpecPaths<'a>>) -> &'a SpecPaths<'a> {
        match self {
            PassSpecs::Builtin(paths) => paths,
            PassSpecs::Merged(specs) => split.insert(SpecPaths::new(specs)),
        }
    }
}

/// The `commonLabels` table of `tables`, or with `annotations` its `commonAnnotations` table.
fn common_map_specs<'t>(tables: &'t FieldSpecTables, annotations: bool) -> PassSpecs<'t> {
    static BUILTIN: OnceLock<[SpecPaths<'static>; 2]> = OnceLock::new();
    let builtin = FieldSpecTables::builtin();
    if std::ptr::eq(tables, builtin) {
        let both = BUILTIN.get_or_init(|| [SpecPaths::new(&builtin.common_labels), SpecPaths::new(&builtin.common_annotations)]);
        return PassSpecs::Builtin(&both[usize::from(annotations)]);
    }
    PassSpecs::Merged(Cow::Borrowed(if annotations { &tables.common_annotations } else { &tables.common_labels }))
}

/// Where a `labels` entry sets its pairs: its own `fields`, then, with selectors, the
/// commonLabels table; without, the template tables it asks for, `metadata/labels` and the
/// `labels` table (merged as kustomize's `MergeAll` merges them).
fn label_field_specs<'t>(tables: &'t FieldSpecTables, label: &Label) -> Result<PassSpecs<'t>> {
    let builtin = FieldSpecTables::builtin();
    if !label.fields.is_empty() || !std::ptr::eq(tables, builtin) {
        return merge_label_field_specs(tables, label).map(|specs| PassSpecs::Merged(Cow::Owned(specs)));
    }
    // Entries without `fields` over the builtin tables: merged and split once per choice of
    // options, not once per entry (a merge that failed is made again, to report its error).
    // The eight merged tables live as long as the program.
    static BUILTIN: OnceLock<[Option<SpecPaths<'static>>; 8]> = OnceLock::new();
    let options = |n: usize| Label {
        include_selectors: n & 1 != 0,
        include_templates: n & 2 != 0,
        include_volume_claim_templates: n & 4 != 0,
        ..Label::default()
    };
    let memo = BUILTIN.get_or_init(|| {
        std::array::from_fn(|n| merge_label_field_specs(builtin, &options(n)).ok().map(|specs| SpecPaths::new(specs.leak())))
    });
    let n = usize::from(label.include_selectors)
        | (usize::from(label.include_templates) << 1)
        | (usize::from(label.include_volume_claim_templates) << 2);
    match &memo[n] {
        Some(paths) => Ok(PassSpecs::Builtin(paths)),
        None => merge_label_field_specs(tables, label).map(|specs| PassSpecs::Merged(Cow::Owned(specs))),
    }
}

fn merge_label_field_specs(tables: &FieldSpecTables, label: &Label) -> Result<Vec<FieldSpec>> {
    let mut specs: Vec<FieldSpec> = label.fields.iter().map(FieldSpec::from_value).collect::<Result<_>>()?;
    if label.include_selectors {
        merge_field_specs(&mut specs, tables.common_labels.clone())?;
    } else {
        if label.include_templates {
            merge_field_specs(&mut specs, tables.template_labels.clone())?;
        }
        if label.include_volume_claim_templates {
            merge_field_specs(&mut specs, tables.volume_claim_template_labels.clone())?;
        }
        merge_field_specs(&mut specs, vec![FieldSpec { gvk: Default::default(), path: "metadata/labels".into(), create: true }])?;
        // The `labels` table of `configurations` files extends where plain labels go.
        merge_field_specs(&mut specs, tables.labels.clone())?;
    }
    Ok(specs)
}

/// The builtin transformers, in kustomize's fixed order, then the `transformers` field.
fn run_transformers(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    let k = &target.kustomization;
    let name = target.name();
    // Where the transformers were configured, for the records of a build that keeps them.
    let configured_in = if ctx.tracks_origins { ctx.relative(&target.file) } else { String::new() };
    let Accumulated { resources, tables, .. } = &mut *acc;
    let tables: &FieldSpecTables = tables.as_deref().unwrap_or_else(|| FieldSpecTables::builtin());
    let tracks = ctx.tracks_origins;
    let ran = |resources: &mut ResMap, kind: &str| {
        if tracks {
            build_metadata::transformer_ran(resources, &build_metadata::configured(&configured_in, kind, None));
        }
    };
    // The builtin schema is read on first use: a build without patches does without it.
    let schema = || ctx.custom_schema.as_ref().unwrap_or_else(|| Schema::builtin());
    let recorder = ctx.recorder.clone();
    let recorder = recorder.as_deref();
    let file = &target.file;
    let patch_text = |path: &str| (!path.is_empty()).then(|| target.loader.read(path).ok()).flatten();
    if !k.patches_strategic_merge.is_empty() {
        let step = |r: &Recorder| {
            let each = k.patches_strategic_merge.iter().enumerate();
            StepRecord::any_of(each.map(|(i, p)| r.patch_step(file, "patchesStrategicMerge", i, patch_text(p))).collect())
        };
        recorded(recorder, resources, step, |resources| {
            let make = || patches::strategic_merge_field_config(&k.patches_strategic_merge);
            let config = patches::PluginConfig { plugin: "PatchStrategicMergeTransformer", from: patches::ConfigFrom::Field(&make) };
            patches::apply_patches_strategic_merge(resources, &k.patches_strategic_merge, "", &target.loader, schema(), &mut ctx.diagnostics, &name, &config)
                .map_err(|e| e.note(format!("in {name}: patchesStrategicMerge")))?;
            ran(resources, "PatchStrategicMergeTransformer");
            Ok(())
        })?;
    }
    // The `patches` entries with a target, and from `namespace` to `commonAnnotations` (and
    // `images`, when no JSON 6902 patch or replica count comes between): each transformer
    // changes each resource on its own. Where nothing records each one's run, consecutive ones
    // are gathered and run as one pass (`transform::steps`).
    let together = recorder.is_none() && !tracks;
    let namespace_options = (!k.namespace.is_empty())
        .then(|| NamespaceOptions { namespace: k.namespace.clone(), field_specs: tables.namespace.clone(), tracks_origins: tracks, ..Default::default() });
    let namespace_specs = namespace_options.as_ref().filter(|_| together).map(namespace::walked_field_specs).unwrap_or_default();
    // A `labels` entry whose field specs do not merge fails when its turn comes.
    let mut label_error = None;
    let label_specs: Vec<PassSpecs> = k.labels.iter().map_while(|label| label_field_specs(tables, label).map_err(|e| label_error = Some(e)).ok()).collect();
    let mut label_splits: Vec<Option<SpecPaths>> = label_specs.iter().map(|_| None).collect();
    let (common_labels_specs, common_annotations_specs) = (common_map_specs(tables, false), common_map_specs(tables, true));
    let [mut common_labels_split, mut common_annotations_split] = [None, None];
    let images_together = (together && k.patches_json6902.is_empty() && k.replicas.is_empty() && !k.images.is_empty())
        .then(|| images::ImageRewrites::new(&k.images, &tables.images));
    let mut gathered: Vec<Box<dyn ResourceStep + '_>> = Vec::new();
    // Whether a gathered patch may change what the namespace step's check reads.
    let mut gathered_may_change_ids = false;
    for (i, patch) in k.patches.iter().enumerate() {
        let make = || patches::patch_field_config(patch, false);
        let config = patches::PluginConfig { plugin: "PatchTransformer", from: patches::ConfigFrom::Field(&make) };
        let note = patches::EntryNote { kustomization: &name, index: i };
        if together {
            match patches::TargetedPatch::new(patch, &target.loader, schema(), &config, note) {
                Ok(Some(step)) => {
                    gathered_may_change_ids |= step.may_change_id();
                    gathered.push(Box::new(step));
                    continue;
                }
                Ok(None) => {
                    run_together(resources, &std::mem::take(&mut gathered), &mut ctx.diagnostics, &name)?;
                    gathered_may_change_ids = false;
                }
                Err(e) => {
                    run_together(resources, &gathered, &mut ctx.diagnostics, &name)?;
                    return Err(e.note(note));
                }
            }
        }
        recorded(recorder, resources, |r| r.patch_step(file, "patches", i, patch_text(&patch.path)), |resources| {
            patches::apply_patch(resources, patch, &target.loader, schema(), &mut ctx.diagnostics, &name, &config).map_err(|e| e.note(note))?;
            ran(resources, "PatchTransformer");
            Ok(())
        })?;
    }
    if let Some(options) = &namespace_options {
        // Whether two resources could come to share an id is told from the resources as they
        // are before the move: the gathered patches run first where they may change that.
        if gathered_may_change_ids {
            run_together(resources, &std::mem::take(&mut gathered), &mut ctx.diagnostics, &name)?;
        }
        match together.then(|| NamespaceMove::new(options, &namespace_specs)).filter(|step| !step.may_conflict(resources)) {
            Some(step) => gathered.push(Box::new(step)),
            None => {
                run_together(resources, &std::mem::take(&mut gathered), &mut ctx.diagnostics, &name)?;
                recorded(recorder, resources, |r| r.value_step(file, "namespace"), |resources| {
                    namespace::set_namespace(resources, options)?;
                    ran(resources, "NamespaceTransformer");
                    Ok(())
                })?
            }
        }
    }
    for (affix, prefix, suffix, specs, kind) in [
        ("namePrefix", k.name_prefix.as_str(), "", &tables.name_prefix, "PrefixTransformer"),
        ("nameSuffix", "", k.name_suffix.as_str(), &tables.name_suffix, "SuffixTransformer"),
    ] {
        if prefix.is_empty() && suffix.is_empty() {
            continue;
        }
        match together {
            true => gathered.push(Box::new(NameAffixes::new(prefix, suffix, specs))),
            false => recorded(recorder, resources, |r| r.value_step(file, affix), |resources| {
                name_affix::add_name_affixes(resources, prefix, suffix, specs)?;
                ran(resources, kind);
                Ok(())
            })?,
        }
    }
    for (i, ((label, specs), split)) in k.labels.iter().zip(&label_specs).zip(&mut label_splits).enumerate() {
        let paths = specs.paths(split);
        match together {
            true => gathered.push(Box::new(MapEntries::new(&label.pairs, paths))),
            false => recorded(recorder, resources, |r| r.keyed_step(file, "labels", Some(i), "pairs"), |resources| {
                metadata_maps::add_map_entries_at(resources, &label.pairs, paths)?;
                ran(resources, "LabelTransformer");
                Ok(())
            })?,
        }
    }
    if let Some(error) = label_error {
        run_together(resources, &gathered, &mut ctx.diagnostics, &name)?;
        return Err(error);
    }
    for (field, entries, specs, split, kind) in [
        ("commonLabels", &k.common_labels, &common_labels_specs, &mut common_labels_split, "LabelTransformer"),
        ("commonAnnotations", &k.common_annotations, &common_annotations_specs, &mut common_annotations_split, "AnnotationsTransformer"),
    ] {
        if entries.is_empty() {
            continue;
        }
        let paths = specs.paths(split);
        match together {
            true => gathered.push(Box::new(MapEntries::new(entries, paths))),
            false => recorded(recorder, resources, |r| r.keyed_step(file, field, None, ""), |resources| {
                metadata_maps::add_map_entries_at(resources, entries, paths)?;
                ran(resources, kind);
                Ok(())
            })?,
        }
    }
    if let Some(step) = &images_together {
        gathered.push(Box::new(step));
    }
    run_together(resources, &gathered, &mut ctx.diagnostics, &name)?;
    drop(gathered);
    for (i, patch) in k.patches_json6902.iter().enumerate() {
        recorded(recorder, resources, |r| r.patch_step(file, "patchesJson6902", i, patch_text(&patch.path)), |resources| {
            let make = || patches::patch_field_config(patch, true);
            let config = patches::PluginConfig { plugin: "PatchJson6902Transformer", from: patches::ConfigFrom::Field(&make) };
            patches::apply_patch_json6902(resources, patch, &target.loader, &mut ctx.diagnostics, &name, &config)
                .map_err(|e| e.note(format!("in {name}: patchesJson6902[{i}]")))?;
            ran(resources, "PatchJson6902Transformer");
            Ok(())
        })?;
    }
    for (i, replica) in k.replicas.iter().enumerate() {
        recorded(recorder, resources, |r| r.replicas_step(file, i), |resources| {
            replicas::set_replicas(resources, replica, &tables.replicas)?;
            ran(resources, "ReplicaCountTransformer");
            Ok(())
        })?;
    }
    if !k.images.is_empty() {
        let matched = match &images_together {
            Some(step) => step.matched(),
            None => recorded(recorder, resources, |r| r.images_step(file), |resources| {
                let matched = images::set_images(resources, &k.images, &tables.images)?;
                ran(resources, "ImageTagTransformer");
                Ok(matched)
            })?,
        };
        for (image, hit) in k.images.iter().zip(matched) {
            if !hit {
                let why = if images::is_valid_name(&image.name) { "" } else { " (its name is no valid regular expression)" };
                ctx.diagnostics.unmatched(&name, &format!("images entry '{}' matches no image{why}", image.name));
            }
        }
    }
    if !k.replacements.is_empty() {
        let step = recorder.map(|r| r.replacements_step(file, resources));
        recorded(recorder, resources, |_| step.expect("made with the recorder"), |resources| {
            crate::transform::replacements::apply_replacements(resources, &k.replacements, &target.loader)?;
            ran(resources, "ReplacementTransformer");
            Ok(())
        })?;
    }
    for (index, entry) in k.transformers.iter().enumerate() {
        let source = if target.loader.is_file(entry) { ctx.relative(&target.loader.resolve(entry)?) } else { ctx.relative(&target.file) };
        let configs = load_plugin_configs(ctx, target, entry)?;
        let Accumulated { resources, .. } = acc;
        for config in configs {
            let step = |r: &Recorder| r.step(file, "transformers", Some(index), None);
            match external_plugin(&ctx.plugins, ctx.tracks_origins, target, &config, &source, "transformers") {
                Some(plugin) => recorded(recorder, resources, step, |resources| {
                    plugin.transform(resources, &mut ctx.diagnostics)?;
                    if ctx.tracks_origins {
                        let run = build_metadata::configured_by_config(&source, &config);
                        build_metadata::plugin_ran(resources, &run);
                    }
                    Ok(())
                })?,
                None => {
                    let schema = ctx.custom_schema.as_ref().unwrap_or_else(|| Schema::builtin());
                    recorded(recorder, resources, step, |resources| {
                        builtin_plugins::run_transformer(&config, resources, &target.loader, schema, &mut ctx.diagnostics, &name, ctx.tracks_origins)?;
                        if ctx.tracks_origins {
                            build_metadata::transformer_ran(resources, &build_metadata::configured_by_config(&source, &config));
                        }
                        Ok(())
                    })?
                }
            }
        }
    }
    run_validators(ctx, target, acc)
}

/// `validators`: plugins that may only look (kustomize has no builtin one).
fn run_validators(ctx: &mut Context, target: &Target, acc: &mut Accumulated) -> Result<()> {
    for entry in &target.kustomization.validators {
        let source = if target.loader.is_file(entry) { ctx.relative(&target.loader.resolve(entry)?) } else { ctx.relative(&target.file) };
        for config in load_plugin_configs(ctx, target, entry)? {
            let Some(plugin) = external_plugin(&ctx.plugins, ctx.tracks_origins, target, &config, &source, "validators") else {
                let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
                return Err(Error::msg(format!("{}: validators: builtin plugin '{kind}' is not supported as a validator", target.name())));
            };
            plugin.validate(&mut acc.resources, &mut ctx.diagnostics)?;
        }
    }
    Ok(())
}

/// The plugin program a `generators`/`transformers`/`validators` config names, unless it is
/// a builtin one.
fn external_plugin<'a>(
    options: &'a crate::functions::PluginOptions,
    tracks_origins: bool,
    target: &'a Target,
    config: &'a Value,
    source: &str,
    field: &'static str,
) -> Option<crate::functions::Plugin<'a>> {
    crate::functions::is_external(config).then(|| crate::functions::Plugin {
        options,
        config,
        loader: &target.loader,
        kustomization: target.name(),
        field,
        tracks_origins,
        source: source.to_string(),
    })
}

/// Runs one step of the build; in an `explain` build (a recorder present), the writes it makes
/// are recorded as `step` describes the step. A plain build runs `run` and nothing else.
pub fn recorded<T>(
    recorder: Option<&Recorder>,
    resources: &mut ResMap,
    step: impl FnOnce(&Recorder) -> StepRecord,
    run: impl FnOnce(&mut ResMap) -> Result<T>,
) -> Result<T> {
    let Some(recorder) = recorder else { return run(resources) };
    let step = step(recorder);
    let out = run(resources)?;
    provenance::end_step(resources, &step);
    Ok(out)
}

/// A loading walk's stand-in for the transformers: the files `patches`, `patchesStrategicMerge`,
/// `patchesJson6902`, `replacements`, `transformers` and `validators` name are read through the
/// loader; nothing is applied. A builtin transformer config reads its files only when applied:
/// the walk then says a build is needed.
fn load_transformer_files(ctx: &mut Context, target: &Target) -> Result<()> {
    let k = &target.kustomization;
    let name = target.name();
    patches::read_patch_files(&k.patches_strategic_merge, &k.patches, &k.patches_json6902, &target.loader)
        .map_err(|e| e.context(format!("{name}: patches")))?;
    crate::transform::replacements::read_replacement_files(&k.replacements, &target.loader)?;
    for (field, entries) in [("transformers", &k.transformers), ("validators", &k.validators)] {
        for entry in entries {
            let source = ctx.relative(&target.file);
            for config in load_plugin_configs(ctx, target, entry)? {
                match external_plugin(&ctx.plugins, ctx.tracks_origins, target, &config, &source, field) {
                    Some(plugin) => plugin.note_reads()?,
                    None => ctx.needs_build = true,
                }
            }
        }
    }
    Ok(())
}

/// A loading walk's stand-in for one `generators` config: a builtin generator runs (it reads
/// its sources and needs no resource), a chart is noted, a program is noted, not run.
fn load_generator_files(helm: &crate::helm::HelmOptions, target: &Target, config: &Value, plugin: Option<&crate::functions::Plugin>) -> Result<()> {
    if config.get("kind").and_then(Value::as_str) == Some("HelmChartInflationGenerator") {
        let (globals, chart) = crate::helm::chart_of_generator_config(config)?;
        return crate::helm::note_reads(&globals, &chart, helm, &target.loader);
    }
    match plugin {
        Some(plugin) => plugin.note_reads(),
        None => builtin_plugins::run_generator(config, &target.loader).map(drop),
    }
}
