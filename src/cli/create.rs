//! `create` (alias `init`): a new kustomization file in the current folder, as `kustomize create`
//! writes it.
use clap::Args;
use peerpods_build::edit::create::{create, CreateOptions};

use super::Failure;

pub const EXAMPLES: &str = "Examples:
  peerpods-build create --resources ../base                 # a new overlay of ../base
  peerpods-build create --autodetect                        # the resource files in this folder
  peerpods-build create --resources deployment.yaml,service.yaml,../base --namespace staging --nameprefix acme-";

#[derive(Args)]
#[command(visible_alias = "init")]
pub struct CreateArgs {
    /// Name of a file containing a file to add to the kustomization file (comma-separated).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    resources: String,
    /// Set the value of the namespace field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
    /// Add one or more common annotations (KEY:VALUE, comma-separated).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    annotations: String,
    /// Add one or more common labels (KEY:VALUE, comma-separated).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    labels: String,
    /// Sets the value of the namePrefix field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    nameprefix: String,
    /// Sets the value of the nameSuffix field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namesuffix: String,
    /// Search for kubernetes resources in the current directory to be added to the kustomization file.
    #[arg(long)]
    autodetect: bool,
    /// Enable recursive directory searching for resource auto-detection.
    #[arg(long)]
    recursive: bool,
}

pub fn run(args: &CreateArgs) -> Result<(), Failure> {
    let options = CreateOptions {
        resources: args.resources.clone(),
        namespace: args.namespace.clone(),
        annotations: args.annotations.clone(),
        labels: args.labels.clone(),
        name_prefix: args.nameprefix.clone(),
        name_suffix: args.namesuffix.clone(),
        autodetect: args.autodetect,
        recursive: args.recursive,
    };
    create(std::path::Path::new("."), &options).map(drop).map_err(|e| Failure::Failed(e.to_string()))
}
