//! `build`: one kustomization, or several into one folder.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::safe_write::{Batch, NewFolder};
use peerpods_build::{build, Build, BuildFailure, BuildOptions, Reorder};

use super::build_args::{names_a_folder, writes_folder, BuildArgs};
use super::check;
use super::output::{write_atomically, write_individual_files};
use super::Failure;

pub const EXAMPLES: &str = "Examples:
  peerpods-build build overlays/aws                      # the same as: peerpods-build overlays/aws
  peerpods-build build overlays/aws -o aws.yaml          # one file, written only if the build succeeds
  peerpods-build build overlays/aws -o out/              # one file per resource (out/ created if missing)
  peerpods-build build overlays/aws complete/aws -o out/ # out/overlays_aws.yaml, out/complete_aws.yaml
  peerpods-build build --strict .                        # a rule that matches or changes nothing fails
  peerpods-build build github.com/org/repo//deploy?ref=v1.2.0";

pub fn run(args: &BuildArgs) -> Result<(), Failure> {
    if args.check {
        return check::run(args, run_build).map_err(Failure::from);
    }
    check_output(args)?;
    run_build(args).map_err(Failure::from)
}

/// Refuses, before any build, an `--output` that cannot be written: several directories need a
/// folder (`DIR/`, or one that exists); one build's file or folder must be in an existing folder.
fn check_output(args: &BuildArgs) -> Result<(), Failure> {
    let Some(output) = &args.output else {
        if args.dirs.len() > 1 {
            return Err(Failure::Usage("building several directories needs --output DIR/, the folder for their files".into()));
        }
        return Ok(());
    };
    let text = output.to_string_lossy();
    let names_a_folder = names_a_folder(output);
    if args.dirs.len() > 1 && !names_a_folder && !output.is_dir() {
        return Err(Failure::Usage(format!(
            "building several directories writes one file per directory into a folder: write --output {text}/ (not a file name)"
        )));
    }
    if args.dirs.len() == 1 && !names_a_folder && !output.is_dir() {
        let parent = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(Failure::Failed(format!("cannot write {text}: the folder {} does not exist", parent.display())));
        }
    }
    Ok(())
}


fn run_build(args: &BuildArgs) -> Result<(), String> {
    let load_restrictor = match args.load_restrictor.as_str() {
        "LoadRestrictionsRootOnly" | "rootOnly" => LoadRestrictor::RootOnly,
        "LoadRestrictionsNone" | "none" => LoadRestrictor::None,
        other => return Err(format!("illegal value for --load-restrictor: '{other}' (LoadRestrictionsRootOnly or LoadRestrictionsNone)")),
    };
    let reorder = match args.reorder.as_deref() {
        None => None,
        Some("legacy") => Some(Reorder::Legacy),
        Some("none") => Some(Reorder::None),
        Some(other) => return Err(format!("illegal value for --reorder: '{other}' (legacy or none)")),
    };
    let managed_by_label =
        args.enable_managedby_label || std::env::var("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL").is_ok_and(|v| v == "on");
    let options = BuildOptions {
        load_restrictor,
        reorder,
        remote: args.remote.options(),
        helm: helm_options(args),
        plugins: args.plugin_options()?,
        recorder: None,
        reads: None,
        managed_by_label,
        // Several builds in one run share the files they all read.
        shared_files: (args.dirs.len() > 1).then(Default::default),
        // The output is printed whole unless it goes to one file per resource.
        render: args.dirs.len() > 1 || args.output.is_none() || !writes_folder(args),
    };
    if args.dirs.len() > 1 {
        return run_builds(args, &options);
    }
    let mut said = String::new();
    let reviewed = review(args, &args.dirs[0], build(&args.dirs[0], &options), &mut said);
    eprint!("{said}");
    let result = reviewed?;
    let written = match &args.output {
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            super::stdout::quiet_when_closed(result.write_to(&mut stdout).and_then(|()| stdout.flush())).map_err(|e| format!("writing output: {e}"))
        }
        Some(dir) if writes_folder(args) => write_individual_files(dir, &result),
        Some(file) => write_atomically(file, &result.to_yaml()),
    };
    // The process ends next: freeing every resource one by one would only cost time.
    std::mem::forget(result);
    written
}

/// Several builds in one run, each written to `OUTPUT/<path with `_` for `/`>.yaml` as soon as
/// it is built, so only the builds in progress are held in memory: into an existing folder,
/// staged beside its destination and renamed into place with the others after one sync at the
/// end ([`peerpods_build::safe_write::Batch`] says why); into a new one, written into a hidden
/// folder beside it, renamed to the destination after one sync
/// ([`peerpods_build::safe_write::NewFolder`]). The builds run in parallel,
/// in the order given (each thread takes the next directory); warnings and errors are printed in
/// the order the directories were given, each build's as soon as every earlier one's is out, and
/// a failed build does not stop the others.
fn run_builds(args: &BuildArgs, options: &BuildOptions) -> Result<(), String> {
    let out_dir = args.output.as_ref().ok_or("building several directories needs --output DIR/, the folder for their files")?;
    let here = std::env::current_dir().and_then(|d| d.canonicalize()).unwrap_or_default();
    // Each directory resolved once: for its file's name, and as its build's root.
    let reals = args.dirs.iter().map(|dir| real_dir(&here, dir)).collect::<Result<Vec<_>, _>>()?;
    let names = args.dirs.iter().zip(&reals).map(|(dir, real)| output_name_from(&here, dir, real)).collect::<Result<Vec<_>, _>>()?;
    let mut unique = std::collections::BTreeSet::new();
    for name in &names {
        if !unique.insert(name.clone()) {
            return Err(format!("two directories would both be written to {name}.yaml: {}", args.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" ")));
        }
    }
    // A folder that is not there yet is made whole beside it and renamed into place at the end.
    let new_folder = NewFolder::stage(out_dir)?;
    if new_folder.is_none() {
        std::fs::create_dir_all(out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    }
    let printer = InOrder::new();
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let staged = Mutex::new(Batch::default());
    // One worker per thread of the build pool; each build's own parallel steps share the pool.
    let threads = args.dirs.len().min(peerpods_build::stack::threads());
    // Each worker takes a few directories in a row: the overlays of one app sit side by side
    // (`apps/*/overlays/*`) and share their base, which the first of them decodes and the next
    // find in memory; taken one by one, two workers would decode it side by side. A few, so
    // that the last ones still spread over the workers.
    let run_length = (args.dirs.len() / (threads.max(1) * 16)).clamp(1, 8);
    let work = || {
        let mut mine = Batch::default();
        loop {
            let first = next.fetch_add(run_length, Ordering::Relaxed);
            if first >= args.dirs.len() {
                break;
            }
            for (i, dir) in args.dirs.iter().enumerate().skip(first).take(run_length) {
                let mut said = String::new();
                let file = match &new_folder {
                    Some(folder) => Output::InNew(folder, format!("{}.yaml", names[i])),
                    None => Output::Staged(out_dir.join(format!("{}.yaml", names[i])), &mut mine),
                };
                if let Err(message) = build_one(args, options, dir, &reals[i], file, &mut said) {
                    said.push_str(&format!("Error: {}: {message}\n", dir.display()));
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                printer.done(i, said);
            }
        }
        staged.lock().unwrap_or_else(|e| e.into_inner()).append(mine);
    };
    let run = || rayon::scope(|s| (0..threads).for_each(|_| s.spawn(|_| work())));
    if peerpods_build::stack::on_large_stack(run).is_err() {
        work();
    }
    let rendered = names.iter().map(|name| format!("{name}.yaml")).collect();
    match new_folder {
        Some(folder) => super::output_record::record_and_commit(folder, &rendered)?,
        None => {
            // A file that could not be renamed into place fails its build.
            for (_, why) in staged.into_inner().unwrap_or_else(|e| e.into_inner()).commit() {
                eprintln!("Error: {why}");
                failed.fetch_add(1, Ordering::Relaxed);
            }
            // A failed build keeps its earlier file: only directories no longer given lose theirs.
            super::output_record::sweep(out_dir, &rendered)?;
        }
    }
    match failed.into_inner() {
        0 => Ok(()),
        n => Err(format!("{n} of {} builds failed", args.dirs.len())),
    }
}

/// Where [`run_builds`] writes one build.
enum Output<'a> {
    /// This file name in the new folder.
    InNew(&'a NewFolder, String),
    /// This file of the existing folder, staged in this batch.
    Staged(PathBuf, &'a mut Batch),
}

/// One build of [`run_builds`], written to `file`; what it would print to stderr goes to `said`.
fn build_one(args: &BuildArgs, options: &BuildOptions, dir: &Path, real: &Path, file: Output, said: &mut String) -> Result<(), String> {
    let result = review(args, dir, peerpods_build::build_resolved(dir, Some(real), options), said)?;
    match file {
        Output::InNew(folder, name) => folder.write(&name, &result.to_yaml()),
        // A file that holds this build already is left as it is.
        Output::Staged(path, staged) => staged.stage_if_changed(&path, &result.to_yaml()).map(drop),
    }
}

/// What the builds of [`run_builds`] print, put in the order the directories were given: each
/// build's text is printed once every earlier build's is.
struct InOrder {
    state: Mutex<(usize, BTreeMap<usize, String>)>,
}

impl InOrder {
    fn new() -> Self {
        InOrder { state: Mutex::new((0, BTreeMap::new())) }
    }

    fn done(&self, index: usize, text: String) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (next, waiting) = &mut *state;
        waiting.insert(index, text);
        let mut stderr = std::io::stderr().lock();
        while let Some(text) = waiting.remove(next) {
            let _ = stderr.write_all(text.as_bytes());
            *next += 1;
        }
    }
}

/// What a build says on stderr, written to `said`: its warnings, then, when the output holds the
/// peer pods settings, each setting the adaptor would not start with (`check-settings`' findings)
/// and a hint. The build, unless it failed or `--strict` makes a rule that matched nothing or a
/// setting missing an error.
fn review(args: &BuildArgs, dir: &Path, outcome: Result<Build, BuildFailure>, said: &mut String) -> Result<Build, String> {
    use peerpods_build::adaptor_settings::{settings_hint, settings_warnings};
    use std::fmt::Write;
    let diagnostics = match &outcome {
        Ok(result) => &result.diagnostics,
        Err(failure) => &failure.diagnostics,
    };
    for warning in &diagnostics.warnings {
        let _ = writeln!(said, "{warning}");
    }
    let result = outcome.map_err(|failure| failure.error.to_string())?;
    if args.strict && !result.diagnostics.unmatched.is_empty() {
        return Err(format!("--strict: {} rule(s) matched nothing", result.diagnostics.unmatched.len()));
    }
    let settings = settings_warnings(dir, &result);
    if settings.is_empty() {
        return Ok(result);
    }
    for line in &settings {
        let _ = writeln!(said, "{line}");
    }
    let _ = writeln!(said, "{}", settings_hint(dir, settings.len()));
    match args.strict {
        true => Err(format!("--strict: {} adaptor setting(s) missing or invalid", settings.len())),
        false => Ok(result),
    }
}

/// `dir.canonicalize()`, from the run's real current folder `here` for a path that does not
/// climb (`..` is resolved after links: such a path goes to `canonicalize`), so that the parts
/// of `here` are not read again for every directory.
fn real_dir(here: &Path, dir: &Path) -> Result<PathBuf, String> {
    let climbs = dir.components().any(|c| c == std::path::Component::ParentDir);
    let real = match here.as_os_str().is_empty() || climbs {
        true => dir.canonicalize(),
        false => peerpods_build::kustomization::loader::real_path_below(here, dir),
    };
    real.map_err(|e| format!("{}: {e}", dir.display()))
}

/// The name of a directory's output file: its path from the current folder (else from the root),
/// each `/` written `_` (`overlays/aws` -> `overlays_aws`), so any set of folders can be written
/// into one; the current folder itself is named by its last component.
fn output_name_from(here: &Path, dir: &Path, real: &Path) -> Result<String, String> {
    let relative = match real.strip_prefix(here) {
        Ok(inside) if !inside.as_os_str().is_empty() => inside.to_path_buf(),
        Ok(_) => PathBuf::from(real.file_name().unwrap_or_default()),
        Err(_) => real.components().filter(|c| matches!(c, std::path::Component::Normal(_))).collect(),
    };
    let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    match parts.join("_") {
        name if name.is_empty() => Err(format!("{}: a directory with no name", dir.display())),
        name => Ok(name),
    }
}


/// The helm flags, with the render cache in the build's cache folder.
fn helm_options(args: &BuildArgs) -> peerpods_build::helm::HelmOptions {
    let cache = peerpods_build::remote::Cache::locate(args.remote.cache_dir.as_deref());
    peerpods_build::helm::HelmOptions {
        enabled: args.enable_helm,
        command: args.helm_command.clone(),
        kube_version: args.helm_kube_version.clone(),
        api_versions: args.helm_api_versions.clone(),
        debug: args.helm_debug,
        cache: Some(peerpods_build::helm::cache::RenderCache::in_folder(cache.folder())),
        offline: args.remote.offline,
        progress: args.remote.options().progress,
    }
}
