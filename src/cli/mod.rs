//! The command line: parse flags, call the library, print, exit codes. One module per command.

mod build;
mod build_args;
mod cache;
mod check;
mod check_settings;
mod completions;
mod create;
mod deps;
mod diff;
mod edit;
mod explain;
mod localize;
mod man;
mod openapi;
mod output;
mod output_record;
mod stdout;
mod version;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use peerpods_build::KUSTOMIZE_COMPATIBLE;

/// What the exit statuses mean, for every `--help` and manual page.
macro_rules! exit_status {
    () => {
        "Exit status:
  0  success
  1  the build, edit or check failed (the error is on stderr, nothing on stdout)
  2  usage: an unknown command, flag or value
  diff: 0 nothing differs, 1 something differs, 2 an error"
    };
}
pub(crate) use exit_status;

const ABOUT: &str = "Build a kustomization target, byte for byte as `kustomize build` does";

const TOP_HELP: &str = concat!(
    "`peerpods-build DIR` is short for `peerpods-build build DIR` (as `kubectl kustomize DIR`).

Examples:
  peerpods-build overlays/gcp | kubectl apply -f -
  peerpods-build build overlays/aws -o out/ --strict
  peerpods-build edit set image app=registry.example.com/app:v2
  peerpods-build diff --base HEAD~1 overlays/aws

",
    exit_status!()
);

#[derive(Parser)]
#[command(
    name = "peerpods-build",
    version,
    about = ABOUT,
    after_help = TOP_HELP,
    override_usage = "peerpods-build [DIR]...        (the same as: peerpods-build build [DIR]...)\n       peerpods-build <COMMAND>"
)]
pub struct Cli {
    /// Accepted for kustomize's command line; errors are always printed in full.
    #[arg(long, global = true, hide = true)]
    stack_trace: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a kustomization target from a directory (the default command).
    #[command(after_help = build::EXAMPLES)]
    Build(build_args::BuildArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Example:\n  peerpods-build completions bash > /etc/bash_completion.d/peerpods-build")]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), of the program or of one command (`man edit set`).
    #[command(after_help = "Examples:\n  peerpods-build man | man -l -\n  peerpods-build man edit set | man -l -")]
    Man {
        /// The command whose page to print, e.g. `build`, or `edit set`.
        command: Vec<String>,
    },
    /// Edit the kustomization file in the current folder (`edit set ...`, `edit add ...`), in place.
    #[command(after_help = edit::EXAMPLES)]
    Edit(edit::EditArgs),
    /// Create a kustomization file in the current folder (`--resources`, `--autodetect`, ...).
    #[command(after_help = create::EXAMPLES)]
    Create(create::CreateArgs),
    /// Check the settings an overlay renders into peer-pods-cm against what the adaptor reads.
    #[command(after_help = "Examples:\n  peerpods-build check-settings overlays/aws\n  peerpods-build check-settings overlays/my-aws   # your overlay on top of it")]
    CheckSettings(check_settings::CheckSettingsArgs),
    /// Compare renderings: each DIR at a git revision with DIR now (`--base REV DIR...`), or two
    /// overlays (`DIR_A DIR_B`); exit 0 when nothing differs, 1 when something does, 2 on error.
    #[command(after_help = "Examples:\n  peerpods-build diff --base main overlays/gcp\n  peerpods-build diff --base HEAD~1 --stat overlays/*\n  peerpods-build diff overlays/aws overlays/libvirt\n\nExit status: 0 nothing differs, 1 something differs, 2 an error")]
    Diff(diff::DiffArgs),
    /// List every file, folder and remote a build of each DIR reads (`--format text|json|make|argocd|mermaid`).
    #[command(after_help = deps::DEPS_EXAMPLES)]
    Deps(deps::DepsArgs),
    /// List the kustomization roots a change touches: those whose build reads a file changed,
    /// added or deleted since `--base REV` (or listed with `--changed`).
    #[command(after_help = deps::AFFECTED_EXAMPLES)]
    Affected(deps::AffectedArgs),
    /// Build, and say for every field the file:line:column and the step that set it.
    Explain(explain::ExplainArgs),
    /// List or clear the cache of remote bases.
    #[command(after_help = "Examples:\n  peerpods-build cache list\n  peerpods-build cache clear")]
    Cache(cache::CacheArgs),
    /// Copy a kustomization target into a new folder with remote bases and HTTP files made local
    /// (`localize [TARGET [DESTINATION]]`), then check that both build the same.
    Localize(localize::LocalizeArgs),
    /// Print the version (`--short`: the semantic version Argo CD parses; `-o yaml|json`).
    #[command(after_help = version::EXAMPLES)]
    Version(version::VersionArgs),
    /// Information about the OpenAPI data the build uses (`openapi info`).
    Openapi(openapi::OpenapiArgs),
}

/// The names that are commands (and help), read from the definition (`program`); any other
/// first argument is a directory for `build`.
fn is_command_or_help(program: &clap::Command, first: &str) -> bool {
    ["help", "-h", "--help", "-V", "--version"].contains(&first)
        || program.get_subcommands().any(|c| c.get_name() == first || c.get_all_aliases().any(|a| a == first))
}

/// A first word that is no command and no existing path (and has no `/`, so it is no URL
/// either): the command of `program` closest to it, when one is close, else None.
fn mistyped_command(program: &clap::Command, first: &str) -> Option<Option<String>> {
    if first.starts_with('-') || first.contains('/') || std::path::Path::new(first).exists() {
        return None;
    }
    let closest = program
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .map(|name| (strsim::jaro_winkler(first, &name), name))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name);
    Some(closest)
}

/// Prints `message` as every error is printed (`Error: ...`, as kustomize prints its errors).
pub(crate) fn print_error(message: &str) {
    eprintln!("Error: {message}");
}

/// A usage error: printed in the one error style, exit status 2.
fn usage_error(message: &str) -> ExitCode {
    print_error(message);
    ExitCode::from(2)
}

pub fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    // Made once: the definition of every command takes longer to make than a small build.
    let program = Cli::command();
    // `peerpods-build DIR` means `peerpods-build build DIR`, as with `kubectl kustomize DIR`;
    // the first word is the first after the global flags.
    let first_word = args.iter().skip(1).position(|a| a != "--stack-trace").map(|i| i + 1);
    if let Some(first) = first_word.and_then(|i| args.get(i)).filter(|first| !is_command_or_help(&program, first)) {
        if let Some(closest) = mistyped_command(&program, first) {
            let hint = match closest {
                Some(name) => format!("; did you mean '{name}'?"),
                None => String::new(),
            };
            return usage_error(&format!(
                "'{first}' is neither a command nor a folder{hint}\n\nUsage: peerpods-build [COMMAND] [DIR]...\n\nFor more information, try '--help'."
            ));
        }
    }
    let at = first_word.unwrap_or(args.len());
    if !args.get(at).is_some_and(|first| is_command_or_help(&program, first)) {
        args.insert(at, "build".into());
    }
    let cli = match program.try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let _ = cli.stack_trace;
    let result = match cli.command {
        Command::Version(args) => version::run(&args),
        Command::Build(args) => build::run(&args),
        Command::Completions { shell } => completions::run(shell).map_err(Failure::from),
        Command::Man { command } => man::run(&command),
        Command::Edit(args) => edit::run(&args),
        Command::Create(args) => create::run(&args),
        Command::CheckSettings(args) => check_settings::run(&args).map_err(Failure::from),
        // diff's exit status says whether anything differs, as `diff`'s does.
        Command::Diff(args) => return diff::run(&args),
        Command::Cache(args) => cache::run(&args).map_err(Failure::from),
        Command::Deps(args) => deps::run(&args),
        Command::Affected(args) => deps::run_affected(&args),
        Command::Explain(args) => explain::run(&args).map_err(Failure::from),
        Command::Openapi(args) => openapi::run(&args).map_err(Failure::from),
        Command::Localize(args) => localize::run(&args).map_err(Failure::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => usage_error(&message),
        Err(Failure::Failed(message)) => {
            print_error(&message);
            ExitCode::FAILURE
        }
    }
}

/// clap's own outcome: help and version on stdout (exit 0), a usage error in the one error
/// style (`Error: ...`, exit 2).
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("Error: {text}");
            ExitCode::from(2)
        }
    }
}

/// Why a command failed: its arguments (exit 2) or its work (exit 1).
#[derive(Debug)]
pub enum Failure {
    Usage(String),
    Failed(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Failed(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Failed(message.to_string())
    }
}
