//! `check-settings`: the settings of one or more peer pods overlays, checked against the table
//! of settings the pinned cloud-api-adaptor reads.
use std::path::PathBuf;

use clap::Args;
use peerpods_build::adaptor_settings::{check_settings, SettingsTable};

#[derive(Args)]
pub struct CheckSettingsArgs {
    /// Overlay directories (for example `overlays/aws`, or an overlay of your own on top of it).
    #[arg(required = true, num_args = 1..)]
    dirs: Vec<PathBuf>,
}

pub fn run(args: &CheckSettingsArgs) -> Result<(), String> {
    let table = SettingsTable::embedded();
    let mut problems = 0;
    for dir in &args.dirs {
        let report = check_settings(dir, table).map_err(|e| e.to_string())?;
        // Findings are diagnostics: stderr, like every error of this program; stdout stays
        // empty when the command fails.
        for finding in &report.findings {
            eprintln!("{finding}");
        }
        problems += report.findings.len();
        eprintln!(
            "{}: {} settings lines of the {} provider checked against cloud-api-adaptor {}: {}",
            dir.display(),
            report.checked,
            report.provider,
            table.commit,
            match report.findings.len() {
                0 => "no problem".to_owned(),
                1 => "1 problem".to_owned(),
                n => format!("{n} problems"),
            }
        );
    }
    if problems > 0 {
        Err(format!("{problems} settings problem(s) found"))
    } else {
        Ok(())
    }
}
