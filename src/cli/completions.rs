//! `completions SHELL`: a shell completion script, generated from the command-line definition.
use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Prints the completion script for `shell` on stdout.
pub fn run(shell: Shell) -> Result<(), String> {
    let mut command = Cli::command();
    let name = command.get_name().to_string();
    // Into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut script);
    super::stdout::print(&script)
}
