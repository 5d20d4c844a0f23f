//! The command line: parse flags, call the library, print, exit codes.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::{build, BuildOptions, Reorder};

/// Builds allocate many small values from several threads at once; mimalloc serves those
/// without the lock and page-protection traffic of the system allocator's per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The kustomize version whose output this build reproduces byte for byte.
const KUSTOMIZE_COMPATIBLE: &str = "v5.6.0";

#[derive(Parser)]
#[command(name = "peerpods-build", version, about = "Build a kustomization target, byte for byte as `kustomize build` does")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a kustomization target from a directory (the default command).
    Build(BuildArgs),
    /// Print the version.
    Version {
        /// Print only the semantic version (Argo CD parses this).
        #[arg(long)]
        short: bool,
    },
}

#[derive(Args)]
struct BuildArgs {
    /// The kustomization directory; with several, each is built into `OUTPUT/<directory name>.yaml`.
    #[arg(default_value = ".", num_args = 1..)]
    dirs: Vec<PathBuf>,
    /// Write to this file, or, if it is an existing directory, one file per resource (with
    /// several directories: the folder for one file per directory, created if missing).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// LoadRestrictionsRootOnly (files must stay inside each kustomization's folder) or LoadRestrictionsNone.
    #[arg(long, default_value = "LoadRestrictionsRootOnly")]
    load_restrictor: String,
    /// Deprecated kustomize flag: `legacy` or `none` output order.
    #[arg(long)]
    reorder: Option<String>,
    /// Fail when a patch target or an images entry matches nothing (otherwise a warning).
    #[arg(long)]
    strict: bool,
    /// Inflate helmCharts (runs `helm`): not supported yet.
    #[arg(long)]
    enable_helm: bool,
    /// Run KRM function plugins: not supported yet.
    #[arg(long)]
    enable_alpha_plugins: bool,
    /// Run exec plugins: not supported yet.
    #[arg(long)]
    enable_exec: bool,
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    // `peerpods-build DIR` means `peerpods-build build DIR`, as with `kubectl kustomize DIR`.
    let first = args.get(1).map(String::as_str);
    let is_command_or_help = matches!(first, Some("build" | "version" | "help" | "-h" | "--help" | "-V" | "--version"));
    if !is_command_or_help {
        args.insert(1, "build".into());
    }
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::Version { short } => {
            let ours = env!("CARGO_PKG_VERSION");
            if short {
                println!("{KUSTOMIZE_COMPATIBLE}+peerpods-build.{ours}");
            } else {
                println!("peerpods-build {ours} (output compatible with kustomize {KUSTOMIZE_COMPATIBLE})");
            }
            ExitCode::SUCCESS
        }
        Command::Build(b) => match run_build(&b) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("Error: {message}");
                ExitCode::FAILURE
            }
        },
    }
}

fn run_build(args: &BuildArgs) -> Result<(), String> {
    for (on, flag) in [(args.enable_helm, "--enable-helm"), (args.enable_alpha_plugins, "--enable-alpha-plugins"), (args.enable_exec, "--enable-exec")] {
        if on {
            return Err(format!("{flag} is not supported yet: peerpods-build never runs other programs"));
        }
    }
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
    let options = BuildOptions { load_restrictor, reorder };
    if args.dirs.len() > 1 {
        return run_builds(args, &options);
    }
    let result = match build(&args.dirs[0], &options) {
        Ok(result) => result,
        Err(failure) => {
            for warning in &failure.diagnostics.warnings {
                eprintln!("{warning}");
            }
            return Err(failure.error.to_string());
        }
    };
    for warning in &result.diagnostics.warnings {
        eprintln!("{warning}");
    }
    if args.strict && !result.diagnostics.unmatched.is_empty() {
        return Err(format!("--strict: {} rule(s) matched nothing", result.diagnostics.unmatched.len()));
    }
    let written = match &args.output {
        None => {
            let yaml = result.to_yaml();
            std::io::stdout().lock().write_all(yaml.as_bytes()).map_err(|e| format!("writing output: {e}"))
        }
        Some(dir) if dir.is_dir() => write_individual_files(dir, &result),
        Some(file) => write_atomically(file, &result.to_yaml()),
    };
    // The process ends next: freeing every resource one by one would only cost time.
    std::mem::forget(result);
    written
}

/// Several builds in one run, each written to `OUTPUT/<directory name>.yaml`; warnings and
/// errors are printed in the order the directories were given, and a failed build does not
/// stop the others.
fn run_builds(args: &BuildArgs, options: &BuildOptions) -> Result<(), String> {
    let out_dir = args.output.as_ref().ok_or("building several directories needs --output DIR, the folder for their files")?;
    let mut names = std::collections::BTreeSet::new();
    for dir in &args.dirs {
        let name = output_name(dir)?;
        if !names.insert(name.clone()) {
            return Err(format!("two directories would both be written to {name}.yaml"));
        }
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    let mut failed = 0;
    for dir in &args.dirs {
        // One build at a time (each is parallel inside): only one build's resources in memory.
        let written = build(dir, options)
            .map_err(|failure| {
                for warning in &failure.diagnostics.warnings {
                    eprintln!("{warning}");
                }
                failure.error.to_string()
            })
            .and_then(|result| {
            for warning in &result.diagnostics.warnings {
                eprintln!("{warning}");
            }
            if args.strict && !result.diagnostics.unmatched.is_empty() {
                return Err(format!("--strict: {} rule(s) matched nothing", result.diagnostics.unmatched.len()));
            }
            let file = out_dir.join(format!("{}.yaml", output_name(dir)?));
            write_atomically(&file, &result.to_yaml())
        });
        if let Err(message) = written {
            eprintln!("Error: {}: {message}", dir.display());
            failed += 1;
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(format!("{n} of {} builds failed", args.dirs.len())),
    }
}

/// The name of a directory's output file: its last component (of its real path, for `.`).
fn output_name(dir: &Path) -> Result<String, String> {
    let real = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    real.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| format!("{}: a directory with no name", dir.display()))
}

/// One file per resource, named as kustomize names them: `[group_]version_kind_name.yaml`, with the
/// namespace (`default` for none) in front when the namespaced resources span several namespaces.
fn write_individual_files(dir: &Path, result: &peerpods_build::Build) -> Result<(), String> {
    use peerpods_build::resource::scope::is_namespaced;
    let namespace_of = |r: &peerpods_build::resource::Resource| match r.namespace() {
        "" => "default".to_string(),
        ns => ns.to_string(),
    };
    let namespaces: std::collections::BTreeSet<String> =
        result.resources.iter().filter(|r| is_namespaced(r.api_version(), r.kind())).map(namespace_of).collect();
    for r in result.resources.iter() {
        let gvk = r.gvk();
        let mut name = [gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str(), r.name()]
            .iter()
            .filter(|part| !part.is_empty())
            .map(|part| part.to_lowercase())
            .collect::<Vec<_>>()
            .join("_");
        name.push_str(".yaml");
        if namespaces.len() > 1 && is_namespaced(r.api_version(), r.kind()) {
            name = format!("{}_{name}", namespace_of(r).to_lowercase());
        }
        write_atomically(&dir.join(name), &peerpods_build::yaml::emit::emit_stream([&r.value]))?;
    }
    Ok(())
}

/// Writes through a temporary file, so a failure never leaves a half-written output.
fn write_atomically(path: &Path, content: &str) -> Result<(), String> {
    let tmp = path.with_extension("peerpods-build.tmp");
    std::fs::write(&tmp, content).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("writing {}: {e}", path.display()))
}
