//! `localize [target [destination]]`: a copy of a kustomization in which remote bases and HTTP
//! files are local, then (unless `--no-verify`) both built and compared.
use std::path::Path;

use clap::Args;
use peerpods_build::localize::{localize, LocalizeOptions};
use peerpods_build::{build, BuildOptions};

#[derive(Args, Clone)]
pub struct LocalizeArgs {
    /// The kustomization folder, or a git URL with `?ref=` (default: the current folder).
    #[arg(default_value = ".")]
    target: String,
    /// The new folder to create, inside an existing one (default: `localized-<target>` here).
    destination: Option<String>,
    /// The folder local references must stay in; the copy mirrors it. Not for a remote target,
    /// whose scope is its repository. Default: the target.
    #[arg(long, value_name = "DIR")]
    scope: Option<String>,
    /// Do not build the target and its copy to check that they render the same.
    #[arg(long)]
    no_verify: bool,
    #[command(flatten)]
    remote: super::cache::RemoteArgs,
}

/// kustomize's error for a reference outside the scope, followed by the way out: the scope
/// defaults to the target, and `--scope` widens it.
fn with_scope_hint(message: String, scope_given: bool) -> String {
    if !message.contains("outside localize scope") {
        return message;
    }
    let default = if scope_given { "" } else { "the scope defaults to the target's folder; " };
    format!("{message}\n  {default}--scope DIR widens it to a folder holding every file and folder the target uses (`--scope .` for the repository's top)")
}

pub fn run(args: &LocalizeArgs) -> Result<(), String> {
    let options = LocalizeOptions { target: args.target.clone(), scope: args.scope.clone(), dest: args.destination.clone(), remote: args.remote.options() };
    let localized = localize(&options).map_err(|e| with_scope_hint(e, args.scope.is_some()))?;
    let dest = localized.dest.display().to_string();
    if !args.no_verify {
        let build_options = BuildOptions { remote: args.remote.options(), ..BuildOptions::default() };
        let original = render(Path::new(&args.target), &build_options)?;
        let copy = render(&localized.target_copy, &build_options)?;
        if original != copy {
            eprint!("{}", similar::TextDiff::from_lines(&original, &copy).unified_diff().header(&args.target, &dest));
            return Err(format!("VERIFICATION FAILED: `kustomize build` for {} and {dest} are different after localization.", args.target));
        }
        eprintln!("VERIFICATION SUCCESS: `kustomize build` for {} and {dest} are the same after localization.", args.target);
    }
    eprintln!("SUCCESS: localized {:?} to directory {dest}", args.target);
    Ok(())
}

/// The build of `dir`, for the comparison.
fn render(dir: &Path, options: &BuildOptions) -> Result<String, String> {
    match build(dir, options) {
        Ok(rendered) => Ok(rendered.to_yaml()),
        Err(failure) => {
            eprintln!(
                "If your target directory requires flags to build: \n1. Add executable permissions for the downloaded exec binaries in '{}'. \n2. Run kustomize build with the necessary flags and self-verify the outputs.",
                dir.display()
            );
            Err(failure.error.to_string())
        }
    }
}
