//! `diff`: what a change does to each rendering (`--base REV DIR...`), or how two overlays'
//! renderings differ (`DIR_A DIR_B`). Exit status as `diff`'s: 0 same, 1 different, 2 trouble.
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use peerpods_build::diff::{self, git, DiffError, Rendering};
use peerpods_build::kustomization::loader::normalize;
use peerpods_build::explain::Recorder;
use peerpods_build::BuildOptions;
use std::sync::Arc;
use rayon::prelude::*;

#[derive(Args)]
pub struct DiffArgs {
    /// Compare each DIR as it is at this git revision (read from the repository, not checked
    /// out) with DIR as it is now. Without it, exactly two DIRs are compared with each other.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// One line per differing resource instead of the unified diffs.
    #[arg(long)]
    stat: bool,
    /// For each differing field, the file:line:column and the step that set it on each side
    /// (with --stat: one line per field).
    #[arg(long)]
    explain: bool,
    /// Kustomization directories. With --base, only those a change since REV affects are
    /// rendered (the others are named as skipped); with --base and none, every kustomization
    /// root of the checkout the change affects (`affected --base REV`).
    #[arg(num_args = 0..)]
    dirs: Vec<PathBuf>,
}

/// One comparison: the two sides' labels and folders.
struct Pair {
    old_label: String,
    new_label: String,
    old_dir: PathBuf,
    new_dir: PathBuf,
    /// With --explain: file names are printed relative to these folders, the old side's
    /// after this prefix (`REV:`).
    old_base: PathBuf,
    new_base: PathBuf,
    old_prefix: String,
}

pub fn run(args: &DiffArgs) -> ExitCode {
    match compare_all(args) {
        Ok(report) => {
            match super::stdout::print(report.text.as_bytes()) {
                Err(e) => fail(&e),
                Ok(()) if report.differs => ExitCode::from(1),
                Ok(()) => ExitCode::SUCCESS,
            }
        }
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(2)
}

struct Report {
    text: String,
    differs: bool,
}

fn compare_all(args: &DiffArgs) -> Result<Report, String> {
    // Kept alive until every build has read its files.
    let mut snapshots: HashMap<PathBuf, git::Snapshot> = HashMap::new();
    let pairs: Vec<Pair> = match &args.base {
        Some(rev) => {
            let mut pairs = Vec::new();
            let mut folders: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
            for dir in &affected_only(&args.dirs, rev)? {
                let absolute = absolute(dir)?;
                let known: Vec<&Path> = snapshots.keys().map(PathBuf::as_path).collect();
                let top = git::toplevel_among(&absolute, &known).map_err(|e| e.to_string())?;
                let relative = absolute
                    .strip_prefix(&top)
                    .map_err(|_| format!("{}: not inside the git work tree {}", dir.display(), top.display()))?
                    .to_path_buf();
                if !snapshots.contains_key(&top) {
                    let snapshot = git::snapshot(&top, rev).map_err(|e| e.to_string())?;
                    snapshots.insert(top.clone(), snapshot);
                }
                folders.entry(top.clone()).or_default().push(relative.clone());
                pairs.push(Pair {
                    old_label: format!("{rev}:{}", dir.display()),
                    new_label: dir.display().to_string(),
                    old_dir: snapshots[&top].root().join(relative),
                    new_dir: dir.clone(),
                    old_base: snapshots[&top].root().to_path_buf(),
                    new_base: top.clone(),
                    old_prefix: format!("{rev}:"),
                });
            }
            for (top, folders) in &folders {
                let snapshot = snapshots.get_mut(top).expect("a snapshot per top level");
                snapshot.extract_builds_of(folders).map_err(|e| e.to_string())?;
            }
            // A folder added or removed since REV renders as all-added or all-removed; one on
            // neither side is a typo, not "no change".
            if let Some(pair) = pairs.iter().find(|p| !p.old_dir.is_dir() && !p.new_dir.is_dir()) {
                return Err(format!("'{}': no such folder, neither in the work tree nor at {rev}", pair.new_label));
            }
            pairs
        }
        None => match args.dirs.as_slice() {
            [a, b] => {
                if let Some(missing) = [a, b].into_iter().find(|d| !d.is_dir()) {
                    return Err(format!("'{}': no such folder", missing.display()));
                }
                let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
                vec![Pair {
                    old_label: a.display().to_string(),
                    new_label: b.display().to_string(),
                    old_dir: a.clone(),
                    new_dir: b.clone(),
                    old_base: cwd.clone(),
                    new_base: cwd,
                    old_prefix: String::new(),
                }]
            }
            _ => return Err("without --base, diff compares exactly two directories: diff DIR_A DIR_B".into()),
        },
    };
    let options = |base: &Path, prefix: &str| {
        let recorder = args.explain.then(|| Arc::new(Recorder::with_prefix(base.to_path_buf(), prefix)));
        BuildOptions { recorder, ..Default::default() }
    };
    // Deep documents need the build's large stack: rendering, comparing and dropping the
    // renderings all happen on it (a 3,000-deep value overflows the main thread's).
    peerpods_build::stack::on_large_stack(|| {
        let rendered: Vec<Result<(Rendering, Rendering), DiffError>> = pairs
            .par_iter()
            .map(|pair| {
                let (old_options, new_options) = (options(&pair.old_base, &pair.old_prefix), options(&pair.new_base, ""));
                let (old, new) = rayon::join(
                    || diff::render(&pair.old_dir, &pair.old_label, &old_options),
                    || diff::render(&pair.new_dir, &pair.new_label, &new_options),
                );
                Ok((old?, new?))
            })
            .collect();
        let mut report = Report { text: String::new(), differs: false };
        for (pair, sides) in pairs.iter().zip(rendered) {
            let (old, new) = sides.map_err(|e| e.to_string())?;
            let changes = diff::compare(&old, &new);
            if changes.is_empty() {
                continue;
            }
            report.differs = true;
            if args.stat && args.explain {
                write_stat_explained(&mut report.text, pair, &changes);
            } else if args.stat {
                write_stat(&mut report.text, pair, &changes);
            } else {
                write_full(&mut report.text, pair, &changes);
            }
        }
        Ok(report)
    })?
}

/// The folders a change since `rev` affects, of `dirs` (or of every root of the checkout): those
/// left out are named on stderr, with how many were rendered.
fn affected_only(given: &[PathBuf], rev: &str) -> Result<Vec<PathBuf>, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let top = peerpods_build::deps::changes::toplevel(&cwd)?;
    let changed = peerpods_build::deps::changes::since(&top, rev)?;
    let (dirs, hits) = super::deps::affected_dirs(given, &changed, &top, &cwd, &BuildOptions::default());
    let mut affected = Vec::new();
    for (dir, hit) in dirs.iter().zip(&hits) {
        // A folder on neither side is for the comparison to report.
        if *hit || !dir.exists() {
            affected.push(dir.clone());
        } else if !given.is_empty() {
            eprintln!("diff: {}: skipped, unaffected by the change since {rev}", dir.display());
        }
    }
    if given.is_empty() {
        eprintln!("diff: rendering {} of {} kustomization roots; the others are unaffected by the change since {rev}", affected.len(), dirs.len());
    }
    Ok(affected)
}

/// `DIR  changed  Kind/namespace/name  +A -R  field, field`.
fn write_stat(out: &mut String, pair: &Pair, changes: &[diff::ResourceChange]) {
    for change in changes {
        let (added, removed) = change.line_counts();
        let _ = write!(out, "{}\t{}\t{}\t+{added} -{removed}", pair.new_label, change.kind, change.key);
        if !change.fields.is_empty() {
            let _ = write!(out, "\t{}", change.fields.join(", "));
        }
        out.push('\n');
    }
}

/// A summary line per directory, then per resource a header naming the differing fields and
/// the unified diff of its YAML.
fn write_full(out: &mut String, pair: &Pair, changes: &[diff::ResourceChange]) {
    let count = |kind| changes.iter().filter(|c| c.kind == kind).count();
    let _ = writeln!(
        out,
        "=== {} -> {}: {} changed, {} added, {} removed",
        pair.old_label,
        pair.new_label,
        count(diff::ChangeKind::Changed),
        count(diff::ChangeKind::Added),
        count(diff::ChangeKind::Removed)
    );
    for change in changes {
        let _ = write!(out, "{} {}", change.kind, change.key);
        if !change.fields.is_empty() {
            let _ = write!(out, ": {}", change.fields.join(", "));
        }
        out.push('\n');
        for set_by in &change.set_by {
            let field = if set_by.field.is_empty() { "resource" } else { &set_by.field };
            let _ = writeln!(out, "  {field}: {} -> {}", side(&set_by.old), side(&set_by.new));
        }
        out.push_str(&change.unified_diff(&pair.old_label, &pair.new_label));
    }
}

/// What set a field on one side, or `(absent)`.
fn side(set_by: &Option<String>) -> &str {
    set_by.as_deref().unwrap_or("(absent)")
}

/// `--stat --explain`: `DIR  change  Kind/namespace/name  field  old-side  new-side`, one line
/// per differing field (`resource` for an added or removed resource).
fn write_stat_explained(out: &mut String, pair: &Pair, changes: &[diff::ResourceChange]) {
    for change in changes {
        for set_by in &change.set_by {
            let field = if set_by.field.is_empty() { "resource" } else { &set_by.field };
            let _ = writeln!(out, "{}\t{}\t{}\t{field}\t{}\t{}", pair.new_label, change.kind, change.key, side(&set_by.old), side(&set_by.new));
        }
    }
}

/// `dir` as an absolute path without `.`/`..` (real when it exists, so symlinks match git's).
fn absolute(dir: &Path) -> Result<PathBuf, String> {
    if let Ok(real) = dir.canonicalize() {
        return Ok(real);
    }
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    Ok(normalize(&cwd.join(dir)))
}
