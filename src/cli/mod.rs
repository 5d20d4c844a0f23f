//! The command line: parse flags, call the library, print, exit codes. One module per command.

mod build;
mod cache;
mod check;
mod check_settings;
mod completions;
mod diff;
mod edit;
mod localize;
mod man;
mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The kustomize version whose output this build reproduces byte for byte.
pub const KUSTOMIZE_COMPATIBLE: &str = "v5.6.0";

#[derive(Parser)]
#[command(name = "peerpods-build", version, about = "Build a kustomization target, byte for byte as `kustomize build` does")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a kustomization target from a directory (the default command).
    Build(build::BuildArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), of the program or of one command.
    Man {
        /// The command whose page to print, e.g. `build`.
        command: Option<String>,
    },
    /// Edit the kustomization file in the current folder (`edit set ...`, `edit add ...`), in place.
    Edit(edit::EditArgs),
    /// Check the settings an overlay renders into peer-pods-cm against what the adaptor reads.
    CheckSettings(check_settings::CheckSettingsArgs),
    /// Compare renderings: each DIR at a git revision with DIR now (`--base REV DIR...`), or two
    /// overlays (`DIR_A DIR_B`); exit 0 when nothing differs, 1 when something does, 2 on error.
    Diff(diff::DiffArgs),
    /// List or clear the cache of remote bases.
    Cache(cache::CacheArgs),
    /// Copy a kustomization target into a new folder with remote bases and HTTP files made local
    /// (`localize [TARGET [DESTINATION]]`), then check that both build the same.
    Localize(localize::LocalizeArgs),
    /// Print the version.
    Version {
        /// Print only the semantic version (Argo CD parses this).
        #[arg(long)]
        short: bool,
    },
}

/// The names that are commands; any other first argument is a directory for `build`.
const COMMAND_NAMES: &[&str] = &[
    "build",
    "cache",
    "check-settings",
    "completions",
    "diff",
    "edit",
    "localize",
    "man",
    "version",
    "help",
    "-h",
    "--help",
    "-V",
    "--version",
];

pub fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    // `peerpods-build DIR` means `peerpods-build build DIR`, as with `kubectl kustomize DIR`.
    let is_command_or_help = args.get(1).is_some_and(|first| COMMAND_NAMES.contains(&first.as_str()));
    if !is_command_or_help {
        args.insert(1, "build".into());
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Version { short } => {
            print_version(short);
            Ok(())
        }
        Command::Build(args) => build::run(&args),
        Command::Completions { shell } => completions::run(shell),
        Command::Man { command } => man::run(command.as_deref()),
        Command::Edit(args) => edit::run(&args),
        Command::CheckSettings(args) => check_settings::run(&args),
        // diff's exit status says whether anything differs, as `diff`'s does.
        Command::Diff(args) => return diff::run(&args),
        Command::Cache(args) => cache::run(&args),
        Command::Localize(args) => localize::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn print_version(short: bool) {
    let ours = env!("CARGO_PKG_VERSION");
    if short {
        println!("{KUSTOMIZE_COMPATIBLE}+peerpods-build.{ours}");
    } else {
        println!("peerpods-build {ours} (output compatible with kustomize {KUSTOMIZE_COMPATIBLE})");
    }
}
