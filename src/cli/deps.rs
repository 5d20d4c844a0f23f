//! `deps DIR...` (what a build of each folder reads) and `affected [DIR...]` (which folders a
//! change touches).
use std::io::BufRead;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use peerpods_build::deps::{self, changes, format, roots};
use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::BuildOptions;

pub const DEPS_EXAMPLES: &str = "Examples:
  peerpods-build deps overlays/gcp                       # every file, folder and remote it reads
  peerpods-build deps --format make --target out/gcp.yaml overlays/gcp > out/gcp.d
  peerpods-build deps --format argocd overlays/gcp       # the manifest-generate-paths annotation
  peerpods-build deps --format mermaid overlays/*        # which kustomization includes which";

pub const AFFECTED_EXAMPLES: &str = "Examples:
  peerpods-build affected --base main                    # every root of the checkout the change touches
  peerpods-build affected --base HEAD~1 overlays/*       # which of these
  git diff --name-only main | peerpods-build affected --changed -";

#[derive(Clone, Copy, ValueEnum)]
pub enum DepsFormat {
    Text,
    Json,
    Make,
    Argocd,
    Mermaid,
}

/// The flags that change what a build reads.
#[derive(Args, Clone)]
pub struct ReadArgs {
    /// LoadRestrictionsRootOnly (files must stay inside each kustomization's folder) or LoadRestrictionsNone.
    #[arg(long, alias = "load_restrictor", default_value = "LoadRestrictionsRootOnly")]
    load_restrictor: String,
    #[command(flatten)]
    remote: super::cache::RemoteArgs,
}

impl ReadArgs {
    fn options(&self) -> Result<BuildOptions, String> {
        let load_restrictor = match self.load_restrictor.as_str() {
            "LoadRestrictionsRootOnly" | "rootOnly" => LoadRestrictor::RootOnly,
            "LoadRestrictionsNone" | "none" => LoadRestrictor::None,
            other => return Err(format!("illegal value for --load-restrictor: '{other}' (LoadRestrictionsRootOnly or LoadRestrictionsNone)")),
        };
        Ok(BuildOptions { load_restrictor, remote: self.remote.options(), ..Default::default() })
    }
}

#[derive(Args)]
pub struct DepsArgs {
    /// text (one path a line), json, make (a dependency file, as `cc -MD -MP` writes), argocd
    /// (the manifest-generate-paths value, relative to each DIR), mermaid (the include graph).
    #[arg(long, value_enum, default_value = "text")]
    format: DepsFormat,
    /// With --format make: the rule's target (default: the DIR).
    #[arg(long, value_name = "NAME")]
    target: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
    /// Kustomization directories.
    #[arg(required = true, num_args = 1..)]
    dirs: Vec<PathBuf>,
}

pub fn run(args: &DepsArgs) -> Result<(), super::Failure> {
    let options = args.read.options().map_err(super::Failure::Usage)?;
    let cwd = cwd()?;
    let found = deps::deps_of(&args.dirs, &options);
    let text = match args.format {
        DepsFormat::Text => format::text(&found, &cwd),
        DepsFormat::Json => format::json(&found, &cwd),
        DepsFormat::Make => format::make(&found, &cwd, args.target.as_deref()),
        DepsFormat::Argocd => format::argocd(&found),
        DepsFormat::Mermaid => format::mermaid(&found, &cwd),
    };
    super::stdout::print(text.as_bytes())?;
    let failed: Vec<String> = found.iter().filter_map(|d| Some(format!("{}: {}", d.dir.display(), d.error.as_ref()?))).collect();
    match failed.is_empty() {
        true => Ok(()),
        false => Err(super::Failure::Failed(format!("the build failed; what it read until then is listed\n{}", failed.join("\n")))),
    }
}

#[derive(Args)]
pub struct AffectedArgs {
    /// The git revision the work tree is compared with (`git diff --name-status REV`, and files
    /// git does not track nor ignore).
    #[arg(long, value_name = "REV", required_unless_present = "changed")]
    base: Option<String>,
    /// A file changed, added or deleted (repeatable), instead of asking git; `-` reads the list
    /// from stdin, one path a line.
    #[arg(long, value_name = "FILE", conflicts_with = "base")]
    changed: Vec<String>,
    /// text (one folder a line) or json.
    #[arg(long, value_enum, default_value = "text")]
    format: AffectedFormat,
    #[command(flatten)]
    read: ReadArgs,
    /// Kustomization directories (default: every root of the checkout, a folder no other
    /// kustomization includes).
    dirs: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum AffectedFormat {
    Text,
    Json,
}

pub fn run_affected(args: &AffectedArgs) -> Result<(), super::Failure> {
    let options = args.read.options().map_err(super::Failure::Usage)?;
    let cwd = cwd()?;
    let changed = match &args.base {
        Some(rev) => changes::since(&changes::toplevel(&cwd)?, rev)?,
        None => changes::given(&changed_list(&args.changed)?, &cwd),
    };
    let top = match &args.base {
        Some(_) => changes::toplevel(&cwd)?,
        None => changes::toplevel(&cwd).unwrap_or_else(|_| cwd.clone()),
    };
    let (dirs, hits) = affected_dirs(&args.dirs, &changed, &top, &cwd, &options);
    let affected: Vec<&PathBuf> = dirs.iter().zip(&hits).filter(|(_, hit)| **hit).map(|(d, _)| d).collect();
    let text = match args.format {
        AffectedFormat::Text => affected.iter().map(|d| format!("{}\n", d.display())).collect::<String>(),
        AffectedFormat::Json => {
            let list: Vec<String> = affected.iter().map(|d| d.display().to_string()).collect();
            format!("{}\n", serde_json::to_string_pretty(&list).unwrap_or_default())
        }
    };
    super::stdout::print(text.as_bytes()).map_err(super::Failure::from)
}

/// The folders looked at (the ones given, or every root below `top`, shown relative to `cwd`)
/// and whether each is affected.
pub fn affected_dirs(given: &[PathBuf], changed: &[PathBuf], top: &Path, cwd: &Path, options: &BuildOptions) -> (Vec<PathBuf>, Vec<bool>) {
    let dirs: Vec<PathBuf> = if given.is_empty() {
        roots::discover(top, changed).iter().map(|root| deps::relative(root, cwd)).collect()
    } else {
        given.to_vec()
    };
    let hits = deps::affected(&dirs, changed, options);
    (dirs, hits)
}

/// The `--changed` values, with `-` read from stdin.
fn changed_list(values: &[String]) -> Result<Vec<String>, String> {
    let mut list = Vec::new();
    for value in values {
        if value == "-" {
            for line in std::io::stdin().lock().lines() {
                list.push(line.map_err(|e| format!("reading the changed files from stdin: {e}"))?);
            }
        } else {
            list.push(value.clone());
        }
    }
    Ok(list)
}

fn cwd() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}
