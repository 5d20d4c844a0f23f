//! peerpods-build: `kustomize build`, byte for byte, in Rust.
//!
//! [`build`] is the whole pipeline, in kustomize's order: accumulate the kustomization tree
//! ([`target`]), then, at the top level only, add hash suffixes, fix name references, resolve
//! vars, drop local-config resources and sort.
pub mod adaptor_settings;
pub mod allocator;
pub mod beneath;
pub mod bounded_read;
pub mod budget;
pub mod build_metadata;
pub mod deps;
pub mod diagnostics;
pub mod diff;
pub mod edit;
pub mod error;
pub mod explain;
pub mod fast_hash;
pub mod file_memo;
pub mod functions;
pub mod generate;
pub mod helm;
pub mod kustomization;
pub mod localize;
pub mod patch;
pub mod process;
pub mod remote;
pub mod resource;
pub mod safe_write;
pub mod sealed_cache;
pub mod stack;
pub mod target;
pub mod transform;
pub mod yaml;

use std::path::Path;

use diagnostics::Diagnostics;
use error::{Error, Result};
use kustomization::{LoadRestrictor, Loader};
use resource::ResMap;
use transform::sort;

/// `--reorder`: the deprecated output order flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reorder {
    Legacy,
    None,
}

/// How to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    pub load_restrictor: LoadRestrictor,
    /// `--reorder`, when given; otherwise the kustomization's `sortOptions` (default legacy) decide.
    pub reorder: Option<Reorder>,
    /// Where remote bases are cached, and whether to build from the cache alone.
    pub remote: remote::RemoteOptions,
    /// `--enable-managedby-label`: label every resource `app.kubernetes.io/managed-by`, as
    /// `buildMetadata: [managedByLabel]` in the top kustomization does.
    pub managed_by_label: bool,
    /// The helm flags (`--enable-helm` and the others) and the render cache.
    pub helm: helm::HelmOptions,
    /// Which plugin programs may run (`--enable-alpha-plugins`, `--enable-exec`, container flags).
    pub plugins: functions::PluginOptions,
    /// Set by `explain`: record where each field came from (a plain build has none).
    pub recorder: Option<std::sync::Arc<explain::Recorder>>,
    /// Set by `deps` and `affected`: record every file, folder and remote the build reads.
    pub reads: Option<std::sync::Arc<kustomization::reads::Reads>>,
    /// Set where many builds of one process read the same files (`build DIR DIR...`): a
    /// resource file is decoded once and kept for the next build that reads it ([`file_memo`]),
    /// and what a path is (a file, a folder, nothing) is looked at once for the run, whose builds share
    /// this ([`kustomization::looks`]).
    pub shared_files: Option<std::sync::Arc<kustomization::looks::RunLooks>>,
    /// Set where the output is printed whole (stdout, one file): the build's last check, which
    /// must look at every value before anything is printed, is the emit itself, and the text
    /// is kept for [`Build::write_to`] and [`Build::to_yaml`] (held once more in memory, as
    /// text, about an eighth of the values it comes from).
    pub render: bool,
}

/// The kustomize release whose `build` this program follows: v5.8.3, the newest (docs/clients.md
/// names the shared regression cases that keep v5.8.1's output and why).
pub const KUSTOMIZE_COMPATIBLE: &str = "v5.8.3";

/// The label `--enable-managedby-label` and `buildMetadata: [managedByLabel]` add, and its value
/// (kustomize writes its own version; peerpods-build writes the version it reproduces).
pub const MANAGED_BY_LABEL: (&str, &str) = ("app.kubernetes.io/managed-by", "kustomize-v5.8.1");

/// The result of a build: the resources to print and the warnings to show.
pub struct Build {
    pub resources: ResMap,
    pub diagnostics: Diagnostics,
    /// The output, in pieces, when the build made it ([`BuildOptions::render`]).
    rendered: Option<Vec<String>>,
}

impl Build {
    /// The output, byte for byte as `kustomize build` prints it.
    pub fn to_yaml(&self) -> String {
        if let Some(pieces) = &self.rendered {
            return pieces.concat();
        }
        let mut out = String::new();
        self.emit_in_batches(|text| {
            out.push_str(text);
            Ok::<_, std::convert::Infallible>(())
        })
        .unwrap_or_else(|never| match never {});
        out
    }

    /// [`Self::to_yaml`] written to `out`: the text the build made, or emitted as it is written,
    /// without the whole text in memory.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        match &self.rendered {
            Some(pieces) => pieces.iter().try_for_each(|text| out.write_all(text.as_bytes())),
            None => self.emit_in_batches(|text| out.write_all(text.as_bytes())),
        }
    }

    /// The output in order, a batch of documents at a time. The documents of a batch are emitted
    /// in parallel, a run of them into each text, on the build's threads, which have room for
    /// deep documents (a single thread's emit where those cannot be had); only one batch's text
    /// is held at once.
    fn emit_in_batches<E>(&self, mut sink: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        const BATCH: usize = 1024;
        let large = self.resources.is_large();
        for (b, batch) in self.resources.as_slice().chunks(BATCH).enumerate() {
            let emit = || emit_runs(batch, b * BATCH, large, |start, run| emit_run(start, run, false));
            let pieces = stack::on_large_stack(emit).unwrap_or_else(|_| emit());
            for text in pieces.expect("an unchecked emit does not fail") {
                sink(&text)?;
            }
        }
        Ok(())
    }
}

/// Documents emitted together into one text.
const RUN: usize = 16;

/// `emit` of each run of `resources` (the documents from `start` on of the output) with the
/// position of its first document, in order; on the build's threads when `parallel` (a small
/// build's on its own thread: splitting costs more than it saves, and would keep the pool's
/// other threads spinning while the builds of `build DIR DIR...` run side by side). The first
/// failure in output order wins.
fn emit_runs(resources: &[resource::Resource], start: usize, parallel: bool, emit: impl Fn(usize, &[resource::Resource]) -> Result<String> + Sync) -> Result<Vec<String>> {
    use rayon::prelude::*;
    // One run per task (see `resource::resmap::LEAF`): the last ones end together.
    let pieces: Vec<Result<String>> = match parallel {
        true => resources.par_chunks(RUN).with_max_len(1).enumerate().map(|(k, run)| emit(start + k * RUN, run)).collect(),
        false => resources.chunks(RUN).enumerate().map(|(k, run)| emit(start + k * RUN, run)).collect(),
    };
    pieces.into_iter().collect()
}

/// The documents of `run`, the first of them document `start` of the output, as one text; when
/// `checked`, refusing what kustomize refuses to print ([`refused`]) as it goes: a value is
/// looked at closely only when its text held a byte of 0x7F or above.
fn emit_run(start: usize, run: &[resource::Resource], checked: bool) -> Result<String> {
    let mut text = String::new();
    for (i, r) in run.iter().enumerate() {
        if checked {
            refuse_plain_keys(r)?;
        }
        if start + i > 0 {
            text.push_str("---\n");
        }
        let high_bytes = yaml::emit::emit_document_noting_high_bytes(&r.value, &mut text);
        if let Some(error) = (checked && high_bytes).then(|| unencodable(r)).flatten() {
            return Err(error);
        }
    }
    Ok(text)
}

/// A failed build: the error, and the warnings met before it (kustomize prints both).
#[derive(Debug)]
pub struct BuildFailure {
    pub error: Error,
    pub diagnostics: Diagnostics,
}

impl Drop for Build {
    fn drop(&mut self) {
        // Deep values drop recursively: where the stack is large.
        stack::drop_on_large_stack(std::mem::take(&mut self.resources));
    }
}

/// Builds the kustomization in `dir`, as `kustomize build DIR` does, on a thread with a stack
/// large enough for the deepest document the parser accepts ([`stack`]).
/// `dir` may also be a git URL (`kustomize build URL`), when no such local path exists.
pub fn build(dir: &Path, options: &BuildOptions) -> Result<Build, BuildFailure> {
    build_resolved(dir, None, options)
}

/// [`build`] of a local `dir` whose real path (`dir.canonicalize()`) the caller resolved
/// already, as `build DIR DIR...` does for each directory to name its file: not resolved again.
pub fn build_resolved(dir: &Path, real: Option<&Path>, options: &BuildOptions) -> Result<Build, BuildFailure> {
    stack::on_large_stack(|| build_here(dir, real, options))
        .unwrap_or_else(|e| Err(BuildFailure { error: Error::msg(e), diagnostics: Diagnostics::default() }))
}

fn build_here(dir: &Path, real: Option<&Path>, options: &BuildOptions) -> Result<Build, BuildFailure> {
    budget::within(std::sync::Arc::new(budget::Budget::default()), || build_with_budget(dir, real, options))
}

fn build_with_budget(dir: &Path, real: Option<&Path>, options: &BuildOptions) -> Result<Build, BuildFailure> {
    // A folder that resolved is there: not a URL.
    let remote = || real.is_none().then(|| remote::top_level_repository(dir, &options.remote)).flatten();
    let loader = match (real, remote()) {
        (_, Some(checkout)) => checkout.and_then(|(spec, tree)| Loader::in_repository(&tree, &spec.kust_root())),
        (Some(real), None) => Loader::resolved(dir, real, options.load_restrictor),
        (None, None) => Loader::new(dir, options.load_restrictor),
    };
    let loader = loader
        .map_err(|error| BuildFailure { error, diagnostics: Diagnostics::default() })?
        .with_urls(Some(remote::url_reader(&options.remote)))
        .with_looks(options.shared_files.clone());
    let loader = match &options.reads {
        Some(reads) => loader.with_reads(reads.clone()),
        None => loader,
    };
    let mut ctx = target::Context::new(options.load_restrictor, &loader);
    ctx.remote = options.remote.clone();
    ctx.helm = options.helm.clone();
    ctx.plugins = options.plugins.clone();
    ctx.recorder = options.recorder.clone();
    ctx.shared_files = options.shared_files.is_some();
    let built = build_in(&mut ctx, loader, options).and_then(|resources| {
        let rendered = check_output(&resources, options.render)?;
        Ok((resources, rendered))
    });
    match built {
        Ok((resources, rendered)) => Ok(Build { resources, diagnostics: ctx.diagnostics, rendered }),
        Err(error) => Err(BuildFailure { error, diagnostics: ctx.diagnostics }),
    }
}

/// What a build of `dir` reads, as its loader records it (`deps`, `affected`), with the error
/// that stopped it (the set then holds what was read up to the failure). A loading walk
/// (kustomizations and every file they name read, nothing parsed as resources, nothing
/// transformed) records the same set as a build at a fraction of its cost; a builtin transformer
/// config, which reads its files only when applied, makes it a whole build. What a plugin
/// program reads on its own is not seen: the program is. `memo` keeps the sets of included
/// folders across the calls of one run ([`kustomization::reads::Memo`]).
pub fn read_set(dir: &Path, options: &BuildOptions, memo: &std::sync::Arc<kustomization::reads::Memo>) -> (kustomization::reads::ReadSet, Result<()>) {
    use kustomization::reads::Reads;
    let reads = std::sync::Arc::new(Reads::default());
    let walked = stack::on_large_stack(|| walk(dir, options, &reads, memo)).unwrap_or_else(|e| Err(Error::msg(e)));
    match walked {
        Ok(false) => (reads.snapshot(), Ok(())),
        Err(error) => (reads.snapshot(), Err(error)),
        Ok(true) => {
            let reads = std::sync::Arc::new(Reads::default());
            let options = BuildOptions { reads: Some(reads.clone()), recorder: None, ..options.clone() };
            let built = build(dir, &options).map(drop).map_err(|failure| failure.error);
            (reads.snapshot(), built)
        }
    }
}

/// The loading walk of [`read_set`]; says whether a whole build is needed.
fn walk(
    dir: &Path,
    options: &BuildOptions,
    reads: &std::sync::Arc<kustomization::reads::Reads>,
    memo: &std::sync::Arc<kustomization::reads::Memo>,
) -> Result<bool> {
    // From the run's real current folder, as `new` resolves it (`..` is resolved after links
    // there: such a folder goes to `new`, and so does the error of a folder that is not there).
    let climbs = dir.components().any(|c| c == std::path::Component::ParentDir);
    let loader = match memo.cwd() {
        Some(cwd) if !climbs => Loader::new_below(cwd, dir, options.load_restrictor).or_else(|_| Loader::new(dir, options.load_restrictor)),
        _ => Loader::new(dir, options.load_restrictor),
    };
    let loader = loader?.with_reads(reads.clone()).with_urls(Some(remote::url_reader(&options.remote)));
    let mut ctx = target::Context::new(options.load_restrictor, &loader);
    ctx.remote = options.remote.clone();
    ctx.helm = options.helm.clone();
    ctx.plugins = options.plugins.clone();
    ctx.load_only = true;
    ctx.memo = Some(memo.clone());
    let top = target::Target::load(loader, ctx.shared_files, &mut ctx.diagnostics)?;
    let mut acc = target::Accumulated::default();
    target::enter(&mut ctx, &top);
    target::accumulate(&mut ctx, &top, &mut acc)?;
    Ok(ctx.needs_build)
}

fn build_in(ctx: &mut target::Context, loader: Loader, options: &BuildOptions) -> Result<ResMap> {
    let top = target::Target::load(loader, ctx.shared_files, &mut ctx.diagnostics)?;
    ctx.tracks_origins = !top.kustomization.build_metadata.is_empty();
    let mut acc = target::Accumulated::default();
    target::enter(ctx, &top);
    target::accumulate(ctx, &top, &mut acc)?;
    if !ctx.deferred_errors.is_empty() {
        return Err(ctx.deferred_errors.swap_remove(0));
    }
    let mut resources = std::mem::take(&mut acc.resources);
    let tables = acc.tables();

    let recorder = ctx.recorder.as_deref();
    let tracks_origins = ctx.tracks_origins;
    let file = &top.file;
    target::recorded(recorder, &mut resources, |r| r.hash_step(file), |resources| {
        generate::hash::add_hash_suffixes(resources);
        Ok(())
    })?;
    let references = |r: &explain::Recorder| r.name_reference_step(file, &resources);
    let references = recorder.map(references);
    target::recorded(recorder, &mut resources, |_| references.expect("made with the recorder"), |resources| {
        transform::namereference::resolve_name_references(resources, &tables.name_reference, tracks_origins)
    })?;
    target::recorded(recorder, &mut resources, |r| r.vars_step(file), |resources| {
        transform::vars::resolve_vars(resources, &acc.vars, &tables.var_reference)
    })?;
    // kustomize drops its build annotations last, setting every resource's annotations again as
    // strings: a boolean or a number a patch wrote there prints as text.
    transform::replacements::stringify_annotations(&mut resources);
    if recorder.is_some() {
        resource::provenance::settle(&mut resources);
    }
    resources.retain_parallel(|r| !r.is_local_config());
    helm::remove_generated_marks(&mut resources);
    target::recorded(recorder, &mut resources, |r| r.step(file, "buildMetadata", None, None), |resources| {
        build_metadata::annotate(resources, &top.kustomization.build_metadata);
        Ok(())
    })?;
    order(&mut resources, &top.kustomization, options)?;
    if options.managed_by_label || top.kustomization.build_metadata.iter().any(|b| b == "managedByLabel") {
        add_managed_by_label(&mut resources)?;
    }
    Ok(resources)
}

/// The build's last check, that kustomize can print every resource ([`refused`]), first
/// failure in output order; with `render`, made by emitting the output, which is returned.
fn check_output(resources: &ResMap, render: bool) -> Result<Option<Vec<String>>> {
    if render {
        return emit_runs(resources.as_slice(), 0, resources.is_large(), |start, run| emit_run(start, run, true)).map(Some);
    }
    refuse_unencodable(resources)?;
    Ok(None)
}

/// kustomize fails to print a resource holding characters its YAML encoder refuses (see
/// [`yaml::emit::find_unencodable`]); so does the build, with the YAML library's words.
fn refuse_unencodable(resources: &ResMap) -> Result<()> {
    use rayon::prelude::*;
    // Each resource is looked at on its own: a large build's on all threads, the first refused
    // in output order reported.
    let first = match resources.is_large() {
        true => resources.as_slice().par_iter().find_map_first(refused),
        false => resources.iter().find_map(refused),
    };
    first.map_or(Ok(()), Err)
}

/// Why kustomize would not print `r`: a key it reads back as no string, or a character its
/// YAML encoder refuses.
fn refused(r: &resource::Resource) -> Option<Error> {
    refuse_plain_keys(r).err().or_else(|| unencodable(r))
}

/// The error for a character in `r` kustomize's YAML encoder refuses, if it holds one.
fn unencodable(r: &resource::Resource) -> Option<Error> {
    // kustomize names the resource by its decoded map, printed by Go's `%#v`.
    let said = match yaml::emit::find_unencodable(&r.value)? {
        '\u{85}' => "yaml: line 1: did not find expected ',' or '}'",
        _ => "yaml: control characters are not allowed",
    };
    Some(Error::msg(format!("{}: {said}", yaml::go_syntax::sharp_v(&r.value))))
}

/// A key that go-yaml reads as a boolean or a number, written so in a resource file or added
/// untagged by a kustomization's string map (labels, annotations; `on` in the kustomization is
/// the key "true"): kustomize decodes the resource into a map with a non-string key, and fails
/// to encode it as JSON, naming the resource as Go's `%#v` prints it.
fn refuse_plain_keys(r: &resource::Resource) -> Result<()> {
    use resource::nodes::Step;
    use yaml::go_syntax::At;
    let live: Vec<&[Step]> = r.live_plain_keys().map(Vec::as_slice).collect();
    if live.is_empty() {
        return Ok(());
    }
    let plain = |at: &[At<'_>], key: &str| -> Option<yaml::go_syntax::GoKey> {
        let hit = live.iter().any(|path| {
            let (Some(Step::Key(last)), parent) = (path.last(), &path[..path.len() - 1]) else { return false };
            last == key
                && parent.len() == at.len()
                && parent.iter().zip(at).all(|(s, a)| match (s, a) {
                    (Step::Key(k), At::Key(a)) => k == a,
                    (Step::Index(i), At::Index(a)) => i == a,
                    _ => false,
                })
        });
        hit.then(|| yaml::scalar::plain_key_as_go(key)).flatten()
    };
    Err(Error::msg(format!("{}: {}", yaml::go_syntax::sharp_v_with_plain_keys(&r.value, &plain), resource::UNENCODABLE_MAP)))
}

/// kustomize's last transformer, after sorting: `metadata/labels` of every resource, created.
fn add_managed_by_label(resources: &mut ResMap) -> Result<()> {
    let (key, value) = MANAGED_BY_LABEL;
    let entries: kustomization::types::StringMap = [(key.to_string(), value.to_string())].into_iter().collect();
    let spec = transform::fieldspec::FieldSpec { gvk: Default::default(), path: "metadata/labels".into(), create: true };
    transform::metadata_maps::add_map_entries(resources, &entries, &[spec])
}

/// The output order: `--reorder` when given, else `sortOptions`, else kustomize's legacy order.
fn order(resources: &mut ResMap, k: &kustomization::Kustomization, options: &BuildOptions) -> Result<()> {
    match (options.reorder, &k.sort_options) {
        (Some(Reorder::None), _) => Ok(()),
        (Some(Reorder::Legacy), _) | (None, None) => {
            sort::legacy_sort(resources, &sort::default_order_first(), &sort::default_order_last());
            Ok(())
        }
        (None, Some(sort_options)) => apply_sort_options(resources, sort_options),
    }
}

/// `sortOptions`: `fifo` keeps the input order; `legacy` sorts, with the given first/last kinds.
fn apply_sort_options(resources: &mut ResMap, sort_options: &kustomization::types::SortOptions) -> Result<()> {
    match sort_options.order.as_str() {
        "fifo" if sort_options.legacy_sort_options.is_some() => Err(Error::msg(
            "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
        )),
        "fifo" => Ok(()),
        "legacy" => {
            let legacy = sort_options.legacy_sort_options.clone().unwrap_or_default();
            let unset = legacy.order_first.is_empty() && legacy.order_last.is_empty();
            let first = if unset { sort::default_order_first() } else { legacy.order_first };
            let last = if unset { sort::default_order_last() } else { legacy.order_last };
            sort::legacy_sort(resources, &first, &last);
            Ok(())
        }
        other => Err(Error::msg(format!("the field 'sortOptions.order' must be one of [fifo, legacy], got '{other}'"))),
    }
}
