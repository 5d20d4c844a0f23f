//! The command line: parse flags, call the library, print, exit codes. One module per command.

mod build;
mod cache;
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
    /// List or clear the cache of remote bases.
    Cache(cache::CacheArgs),
    /// Print the version.
    Version {
        /// Print only the semantic version (Argo CD parses this).
        #[arg(long)]
        short: bool,
    },
}

/// The names that are commands; any other first argument is a directory for `build`.
const COMMAND_NAMES: &[&str] = &["build", "cache", "version", "help", "-h", "--help", "-V", "--version"];

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
        Command::Cache(args) => cache::run(&args),
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
