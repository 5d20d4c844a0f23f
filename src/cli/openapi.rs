//! `openapi info`: which Kubernetes OpenAPI data the build's merge keys come from, printed as
//! kustomize prints it.
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct OpenapiArgs {
    #[command(subcommand)]
    action: OpenapiCommand,
}

#[derive(Subcommand)]
enum OpenapiCommand {
    /// Print the `info` field of the Kubernetes OpenAPI data built in (kustomize's, v1.21.2).
    #[command(after_help = "Example:\n  peerpods-build openapi info      # {title:Kubernetes,version:v1.21.2}")]
    Info,
}

/// The `info` of the schema kustomize v5.8.1 builds in, whose merge keys `patch/schema_table.txt` holds.
pub const INFO: &str = "{title:Kubernetes,version:v1.21.2}";

pub fn run(args: &OpenapiArgs) -> Result<(), String> {
    match args.action {
        OpenapiCommand::Info => super::stdout::print(format!("{INFO}\n").as_bytes())?,
    }
    Ok(())
}
