//! `man [COMMAND]`: a manual page (roff), generated from the command-line definition:
//! `peerpods-build.1`, or `peerpods-build-COMMAND.1` for one command.
use std::io::Write;

use clap::CommandFactory;

use super::Cli;

/// Prints the page of the program, or of `subcommand`, on stdout.
pub fn run(subcommand: Option<&str>) -> Result<(), String> {
    let mut program = Cli::command();
    // Building sets each command's full names (`peerpods-build-build`, `peerpods-build build`),
    // which the page's title and synopsis use.
    program.build();
    let command = match subcommand {
        None => program,
        Some(name) => {
            let sub = program.find_subcommand(name).ok_or_else(|| format!("no command named {name:?}"))?;
            sub.clone().version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page).map_err(|e| format!("writing the manual page: {e}"))?;
    std::io::stdout().lock().write_all(&page).map_err(|e| format!("writing the manual page: {e}"))
}
