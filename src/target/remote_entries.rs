//! The hook for remote bases: `resources`/`components` entries that are git URLs or HTTP(S)
//! files, accumulated like local folders and files, with kustomize's origins.
use std::path::{Path, PathBuf};

use super::{accumulate_directory, Accumulated, Context, Target};
use crate::resource::decode::resources_from_file;
use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::remote::RepoSpec;

/// A `resources`/`components` entry that is a git URL: its spec and its checkout (fetched or
/// from the cache).
pub(super) fn remote_base(ctx: &mut Context, from: &Loader, entry: &str) -> Result<Option<(RepoSpec, PathBuf)>> {
    let Ok(spec) = RepoSpec::parse(entry) else { return Ok(None) };
    if entry.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("git::")) {
        ctx.diagnostics.notice(crate::remote::url::FORCED_GIT_WARNING);
    }
    let checkout = crate::remote::checkout(&spec, &ctx.remote).map_err(|e| Error::msg(e.to_string()))?;
    let commit = crate::remote::cache::commit_of_checkout(&checkout).unwrap_or_default();
    from.note_remote_include(format!("{}@{commit}", crate::remote::redact_password(entry)));
    Ok(Some((spec, checkout)))
}

/// A git URL in `resources`: the kustomization in its checkout, confined to the checkout.
pub(super) fn accumulate_git_entry(ctx: &mut Context, from: &Loader, entry: &str) -> Result<Accumulated> {
    let (spec, checkout) = remote_base(ctx, from, entry)?.ok_or_else(|| Error::msg(format!("'{entry}' is not a git URL")))?;
    let loader = Loader::in_repository(&checkout, &spec.kust_root())?.with_urls(from.urls().cloned());
    let root = loader.root().to_path_buf();
    let mut acc = Accumulated::default();
    in_remote_origin(ctx, &root, &spec, &mut acc, |ctx, acc| {
        *acc = accumulate_directory(ctx, loader)?;
        Ok(())
    })?;
    Ok(acc)
}

/// Runs `accumulate` for a remote kustomization rooted at `root`, then gives the origins it
/// recorded (paths relative to `root`) kustomize's form: the path in the repository, `repo`, `ref`.
pub(super) fn in_remote_origin(
    ctx: &mut Context,
    root: &Path,
    spec: &RepoSpec,
    acc: &mut Accumulated,
    accumulate: impl FnOnce(&mut Context, &mut Accumulated) -> Result<()>,
) -> Result<()> {
    if let Some(recorder) = &ctx.recorder {
        recorder.enter_remote(root, &format!("{}{}", spec.host, spec.repo_path), &spec.git_ref, &spec.kust_root_path);
    }
    let recorded_before: Vec<usize> = acc.resources.iter_mut().map(|r| r.transformations.len()).collect();
    let top_root = std::mem::replace(&mut ctx.top_root, root.to_path_buf());
    let result = accumulate(ctx, acc);
    ctx.top_root = top_root;
    for (i, resource) in acc.resources.iter_mut().enumerate() {
        let first_new = recorded_before.get(i).copied();
        if let (None, Some(origin)) = (first_new, &mut resource.origin) {
            crate::remote::stamp_origin(origin, spec);
        }
        for run in resource.transformations.iter_mut().skip(first_new.unwrap_or(0)) {
            crate::remote::stamp_origin(run, spec);
        }
    }
    result
}

/// An `http(s)://` entry: one YAML file, as kustomize reads it first; when that fails and the
/// URL is also a git URL, the repository. URLs with a git marker (`//`, `_git/`, `.git`) go to
/// git at once, and `--offline` never downloads.
pub(super) fn accumulate_http_entry(ctx: &mut Context, target: &Target, entry: &str) -> Result<Accumulated> {
    let is_git = RepoSpec::parse(entry).is_ok();
    let as_git = |ctx: &mut Context| accumulate_git_entry(ctx, &target.loader, entry).map_err(|e| e.context(format!("accumulating resources from '{entry}'")));
    if is_git && (ctx.remote.offline || crate::remote::url::has_git_marker(entry)) {
        return as_git(ctx);
    }
    let failed = |reason: String| Error::msg(format!("accumulating resources: accumulating resources from '{entry}': {reason}"));
    if ctx.remote.offline {
        return Err(failed("--offline: HTTP files are not cached".into()));
    }
    target.loader.note_remote_include(crate::remote::redact_password(entry));
    if ctx.load_only {
        return Ok(Accumulated::default());
    }
    let fetched = crate::remote::progress::while_fetching(ctx.remote.progress, &crate::remote::redact_password(entry), || {
        crate::remote::http::get(entry)
    });
    let file_error = match fetched {
        Ok(text) => match resources_from_file(Path::new(entry), &text) {
            Ok((resources, invalid)) => {
                ctx.deferred_errors.extend(invalid);
                let here = serde_json::json!({ "path": ctx.relative(target.loader.root()) });
                let origin = crate::remote::append_origin(&here, entry);
                let mut acc = Accumulated::default();
                for mut resource in resources {
                    resource.origin = Some(origin.clone());
                    acc.resources.append(resource).map_err(|e| e.context("accumulating resources"))?;
                }
                return Ok(acc);
            }
            // Whatever the message quotes of the answer, only its start is shown.
            Err(e) => crate::error::bounded(&e.to_string(), 400),
        },
        Err(e) => e.to_string(),
    };
    match is_git {
        true => as_git(ctx).map_err(|e| e.context(format!("read as a file: {file_error}; read as a git repository"))),
        false => Err(failed(file_error)),
    }
}
