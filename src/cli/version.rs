//! `version`: the program's version, and the kustomize version it reproduces, in kustomize's
//! forms (`--short`, `-o yaml`, `-o json`).
use clap::Args;

use super::{Failure, KUSTOMIZE_COMPATIBLE};

pub const EXAMPLES: &str = "Examples:
  peerpods-build version             # v5.8.3+peerpods-build.X.Y.Z: kustomize's version, ours as build metadata
  peerpods-build version --short     # the same, the form Argo CD parses
  peerpods-build version -o json";

#[derive(Args)]
pub struct VersionArgs {
    /// Print only the semantic version: kustomize's, with peerpods-build's as build metadata
    /// (Argo CD parses this).
    #[arg(long)]
    short: bool,
    /// Print kustomize's version record as `yaml` or `json`.
    #[arg(short, long, value_parser = ["yaml", "json"])]
    output: Option<String>,
}

/// `v5.8.3+peerpods-build.X.Y.Z`: a semantic version whose core is the kustomize release
/// whose output this build reproduces, so tools that choose their calls by kustomize's version
/// choose right, and whose build metadata (which semver ordering ignores) names this program.
pub fn semver() -> String {
    format!("{KUSTOMIZE_COMPATIBLE}+peerpods-build.{}", env!("CARGO_PKG_VERSION"))
}

pub fn run(args: &VersionArgs) -> Result<(), Failure> {
    if args.short && args.output.is_some() {
        return Err(Failure::Usage("--short and --output are mutually exclusive".into()));
    }
    // As kustomize: plain and `--short` print the semantic version (scripts compare it);
    // `peerpods-build --version` names the program.
    match args.output.as_deref() {
        Some(format) => super::stdout::print(record(format).as_bytes())?,
        None => super::stdout::print(format!("{}\n", semver()).as_bytes())?,
    }
    Ok(())
}

/// kustomize's provenance record (`version`, `gitCommit`, `buildDate`, `goOs`, `goArch`), as
/// `kustomize version -o yaml|json` prints it: YAML followed by an empty line, JSON indented by
/// two spaces. `goVersion` is left out (kustomize omits empty fields): no Go built this.
fn record(format: &str) -> String {
    let fields = [
        ("version", semver()),
        ("gitCommit", "unknown".to_string()),
        ("buildDate", "unknown".to_string()),
        ("goOs", go_os().to_string()),
        ("goArch", go_arch().to_string()),
    ];
    if format == "json" {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("  \"{k}\": {}", serde_json::Value::String(v.clone()))).collect();
        format!("{{\n{}\n}}\n", body.join(",\n"))
    } else {
        // In the record's field order, each line with the emitter's quoting.
        let lines: String =
            fields.iter().map(|(k, v)| peerpods_build::edit::document::render_entry(k, &serde_json::Value::String(v.clone()))).collect();
        lines + "\n"
    }
}

/// Go's name of the operating system (`GOOS`).
fn go_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    }
}

/// Go's name of the architecture (`GOARCH`).
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        "s390x" => "s390x",
        other => other,
    }
}
