//! `edit`: the kustomization edits of `kustomize edit set ...` and `kustomize edit add ...`,
//! in the current folder, as Argo CD runs them.
use clap::{Args, Subcommand};
use peerpods_build::edit::{args, edit, Edit, EditError};

#[derive(Args)]
pub struct EditArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Set a field of the kustomization file.
    Set {
        #[command(subcommand)]
        what: SetCommand,
    },
    /// Add to a field of the kustomization file.
    Add {
        #[command(subcommand)]
        what: AddCommand,
    },
}

#[derive(Subcommand)]
enum SetCommand {
    /// Set namePrefix.
    Nameprefix {
        #[arg(value_name = "PREFIX")]
        values: Vec<String>,
    },
    /// Set nameSuffix (`set namesuffix -- -suffix`).
    Namesuffix {
        #[arg(value_name = "SUFFIX")]
        values: Vec<String>,
    },
    /// Set namespace.
    Namespace {
        #[arg(value_name = "NAMESPACE")]
        values: Vec<String>,
    },
    /// Set images: NAME=NEWNAME[:TAG][@DIGEST], NAME:TAG[@DIGEST] or NAME@DIGEST; `*` keeps the file's value.
    Image {
        #[arg(value_name = "IMAGE")]
        images: Vec<String>,
    },
    /// Set replica counts: NAME=COUNT.
    Replicas {
        #[arg(value_name = "NAME=COUNT")]
        replicas: Vec<String>,
    },
}

#[derive(Subcommand)]
enum AddCommand {
    /// Add commonLabels KEY:VALUE (or, with --without-selector, a labels entry).
    Label {
        /// Overwrite a label the file already has.
        #[arg(short, long)]
        force: bool,
        /// Add to `labels` with includeSelectors off instead of `commonLabels`.
        #[arg(long)]
        without_selector: bool,
        /// Also label pod templates (requires --without-selector).
        #[arg(long)]
        include_templates: bool,
        #[arg(value_name = "KEY:VALUE")]
        pairs: Vec<String>,
    },
    /// Add commonAnnotations KEY:VALUE.
    Annotation {
        /// Overwrite an annotation the file already has.
        #[arg(short, long)]
        force: bool,
        #[arg(value_name = "KEY:VALUE")]
        pairs: Vec<String>,
    },
    /// Add components (paths or glob patterns, relative to the kustomization folder).
    Component {
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
}

pub fn run(edit_args: &EditArgs) -> Result<(), String> {
    let edit_to_make = to_edit(&edit_args.action).map_err(|e| e.to_string())?;
    let outcome = edit(std::path::Path::new("."), &edit_to_make).map_err(|e| e.to_string())?;
    for note in &outcome.notes {
        eprintln!("{note}");
    }
    Ok(())
}

fn exactly_one(values: &[String], what: &str) -> Result<String, EditError> {
    match values {
        [value] => Ok(value.clone()),
        _ => Err(EditError::Usage(format!("must specify exactly one {what} value"))),
    }
}

fn to_edit(action: &Action) -> Result<Edit, EditError> {
    Ok(match action {
        Action::Set { what } => match what {
            SetCommand::Nameprefix { values } => Edit::SetNamePrefix(exactly_one(values, "prefix")?),
            SetCommand::Namesuffix { values } => Edit::SetNameSuffix(exactly_one(values, "suffix")?),
            SetCommand::Namespace { values } => Edit::SetNamespace(exactly_one(values, "namespace")?),
            SetCommand::Image { images } => Edit::SetImages(args::parse_images(images)?),
            SetCommand::Replicas { replicas } => Edit::SetReplicas(args::parse_replicas(replicas)?),
        },
        Action::Add { what } => match what {
            AddCommand::Label { force, without_selector, include_templates, pairs } => {
                if *include_templates && !*without_selector {
                    return Err(EditError::Usage("--without-selector flag must be specified for --include-templates to work".into()));
                }
                let pairs = args::parse_metadata(pairs, "label")?;
                Edit::AddLabels { pairs, force: *force, without_selector: *without_selector, include_templates: *include_templates }
            }
            AddCommand::Annotation { force, pairs } => {
                Edit::AddAnnotations { pairs: args::parse_metadata(pairs, "annotation")?, force: *force }
            }
            AddCommand::Component { paths } => Edit::AddComponents(paths.clone()),
        },
    })
}
