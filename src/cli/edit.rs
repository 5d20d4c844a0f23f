//! `edit`: kustomize's `edit set|add|remove|fix|alpha-list-builtin-plugin`, on the
//! kustomization file in the current folder, made in place (see `peerpods_build::edit`).
use clap::{Args, Subcommand};
use peerpods_build::edit::generators::{AddGenerator, GeneratorKind, SetGenerator};
use peerpods_build::edit::lists::{parse_build_metadata, parse_keys, PatchEntry};
use peerpods_build::edit::{args, edit, Edit, EditError};

use super::Failure;

pub const EXAMPLES: &str = "Examples:
  peerpods-build edit set image app=registry.example.com/app:v2
  peerpods-build edit set namespace -- prod
  peerpods-build edit add resource deployment.yaml service.yaml
  peerpods-build edit add patch --path patch.yaml --kind Deployment --name web
  peerpods-build edit add configmap settings --from-literal=LOG_LEVEL=debug
  peerpods-build edit remove resource 'old-*.yaml'
  peerpods-build edit fix                  # deprecated fields as their replacements";

#[derive(Args)]
pub struct EditArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Set a field of the kustomization file.
    #[command(after_help = "Examples:\n  peerpods-build edit set image nginx=nginx:1.27\n  peerpods-build edit set replicas web=3\n  peerpods-build edit set label env:prod\n  peerpods-build edit set configmap settings --from-literal=LOG_LEVEL=info")]
    Set {
        #[command(subcommand)]
        what: SetCommand,
    },
    /// Add to a field of the kustomization file.
    #[command(after_help = "Examples:\n  peerpods-build edit add resource '*.yaml'\n  peerpods-build edit add component ../../components/tls\n  peerpods-build edit add secret creds --from-env-file=creds.env\n  peerpods-build edit add buildmetadata originAnnotations")]
    Add {
        #[command(subcommand)]
        what: AddCommand,
    },
    /// Remove from a field of the kustomization file.
    #[command(after_help = "Examples:\n  peerpods-build edit remove resource old.yaml\n  peerpods-build edit remove label -i team,tier\n  peerpods-build edit remove configmap settings --namespace prod")]
    Remove {
        #[command(subcommand)]
        what: RemoveCommand,
    },
    /// Rewrite deprecated fields as their replacements (bases, imageTags, patchesStrategicMerge,
    /// patchesJson6902, commonLabels), then check that the build is unchanged.
    #[command(after_help = "Example:\n  peerpods-build edit fix")]
    Fix {
        /// Also convert vars to replacements: `$(VAR)` in the files becomes `VAR_PLACEHOLDER`,
        /// which a replacement sets. Best done in a clean git checkout, easy to undo.
        #[arg(long)]
        vars: bool,
    },
    /// [Alpha] List the builtin plugins.
    #[command(name = "alpha-list-builtin-plugin")]
    ListBuiltinPlugin,
}

/// The flags every patch selector takes.
#[derive(Args)]
struct PatchFlags {
    /// Path to the patch file. Cannot be used with --patch at the same time.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    path: String,
    /// Literal string of patch content. Cannot be used with --path at the same time.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    patch: String,
    /// API group in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    group: String,
    /// API version in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    version: String,
    /// Resource kind in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    kind: String,
    /// Resource name in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    name: String,
    /// Resource namespace in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
    /// annotationSelector in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    annotation_selector: String,
    /// labelSelector in patch target
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    label_selector: String,
}

impl PatchFlags {
    fn entry(&self) -> PatchEntry {
        PatchEntry {
            path: self.path.clone(),
            patch: self.patch.clone(),
            target: vec![
                ("group", self.group.clone()),
                ("version", self.version.clone()),
                ("kind", self.kind.clone()),
                ("name", self.name.clone()),
                ("namespace", self.namespace.clone()),
                ("annotationSelector", self.annotation_selector.clone()),
                ("labelSelector", self.label_selector.clone()),
            ],
        }
    }
}

/// The flags of `add configmap` and `add secret`.
#[derive(Args)]
struct GeneratorFlags {
    /// The generated object's name.
    #[arg(value_name = "NAME")]
    name: String,
    /// Key file can be specified using its file path, in which case file basename will be used
    /// as configmap key, or optionally with a key and file path, in which case the given key
    /// will be used. Specifying a directory will iterate each named file in the directory whose
    /// basename is a valid configmap key.
    #[arg(long)]
    from_file: Vec<String>,
    /// Specify a key and literal value to insert in configmap (i.e. mykey=somevalue)
    #[arg(long)]
    from_literal: Vec<String>,
    /// Specify the path to a file to read lines of key=val pairs to create a configmap (i.e. a
    /// Docker .env file).
    #[arg(long, default_value = "")]
    from_env_file: String,
    /// Disable the name suffix hash.
    #[arg(long = "disableNameSuffixHash")]
    disable_name_suffix_hash: bool,
    /// Specify the behavior for config map generation: create, merge or replace.
    #[arg(long, default_value = "")]
    behavior: String,
    /// Specify the namespace of the object.
    #[arg(long, default_value = "")]
    namespace: String,
}

impl GeneratorFlags {
    fn add(&self, secret_type: &str) -> AddGenerator {
        AddGenerator {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            from_file: self.from_file.clone(),
            from_literal: self.from_literal.clone(),
            from_env_file: self.from_env_file.clone(),
            behavior: self.behavior.clone(),
            disable_name_suffix_hash: self.disable_name_suffix_hash,
            secret_type: secret_type.to_string(),
        }
    }
}

/// The flags of `set configmap` and `set secret`.
#[derive(Args)]
struct SetGeneratorFlags {
    #[arg(value_name = "NAME")]
    name: String,
    /// Specify an existing key and a new value to update (i.e. mykey=newvalue)
    #[arg(long)]
    from_literal: Vec<String>,
    /// Current namespace of the target object
    #[arg(long, default_value = "")]
    namespace: String,
    /// New namespace value for the target object
    #[arg(long, default_value = "")]
    new_namespace: String,
}

impl SetGeneratorFlags {
    fn set(&self) -> SetGenerator {
        SetGenerator {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            from_literal: self.from_literal.clone(),
            new_namespace: self.new_namespace.clone(),
        }
    }
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
    /// Set commonLabels KEY:VALUE (existing keys overwritten).
    Label {
        #[arg(value_name = "KEY:VALUE")]
        pairs: Vec<String>,
    },
    /// Set commonAnnotations KEY:VALUE (existing keys overwritten).
    Annotation {
        #[arg(value_name = "KEY:VALUE")]
        pairs: Vec<String>,
    },
    /// Set buildMetadata to these options (comma-separated: originAnnotations,
    /// transformerAnnotations, managedByLabel), replacing the list.
    Buildmetadata {
        #[arg(value_name = "OPTION,...")]
        options: Vec<String>,
    },
    /// Set values of existing literal keys (and the namespace) of a configMapGenerator entry.
    #[command(after_help = "Examples:\n  peerpods-build edit set configmap settings --from-literal=LOG_LEVEL=info\n  peerpods-build edit set configmap settings --namespace=old --new-namespace=new")]
    Configmap(SetGeneratorFlags),
    /// Set values of existing literal keys (and the namespace) of a secretGenerator entry.
    Secret(SetGeneratorFlags),
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
    /// Add resources (files or folders, or glob patterns, relative to the kustomization folder).
    Resource {
        /// Add the paths as written, without checking that they exist (remote URLs need it).
        #[arg(long)]
        no_verify: bool,
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
    /// Add bases (folders, comma-separated) to resources.
    Base {
        #[arg(value_name = "PATH,...")]
        paths: Vec<String>,
    },
    /// Add an item to patches: a file (--path) or inline (--patch), with an optional target.
    #[command(after_help = "Examples:\n  peerpods-build edit add patch --path replicas.yaml\n  peerpods-build edit add patch --path json-patch.yaml --group apps --version v1 --kind Deployment --name web")]
    Patch(PatchFlags),
    /// Add a configMapGenerator entry, or sources to the one with that name and namespace.
    #[command(after_help = "Examples:\n  peerpods-build edit add configmap settings --from-literal=LOG_LEVEL=debug --from-literal=MODE=fast\n  peerpods-build edit add configmap settings --from-file=app.properties --behavior=merge\n  peerpods-build edit add configmap env --from-env-file=app.env --disableNameSuffixHash")]
    Configmap(GeneratorFlags),
    /// Add a secretGenerator entry, or sources to the one with that name and namespace.
    #[command(after_help = "Examples:\n  peerpods-build edit add secret creds --from-env-file=creds.env\n  peerpods-build edit add secret tls --from-file=tls.crt --from-file=tls.key --type=kubernetes.io/tls")]
    Secret {
        #[command(flatten)]
        flags: GeneratorFlags,
        /// Specify the secret type this can be 'Opaque' (default), or 'kubernetes.io/tls'
        #[arg(long = "type", default_value = "Opaque")]
        secret_type: String,
    },
    /// Add generator configuration files (paths or glob patterns).
    Generator {
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
    /// Add transformer configuration files (paths or glob patterns).
    Transformer {
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
    /// Add configuration files (field specs for names, prefixes, variables ...; paths or glob patterns).
    Configuration {
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
    },
    /// Add buildMetadata options (comma-separated: originAnnotations, transformerAnnotations, managedByLabel).
    Buildmetadata {
        #[arg(value_name = "OPTION,...")]
        options: Vec<String>,
    },
}

#[derive(Subcommand)]
enum RemoveCommand {
    /// Remove resources matching the patterns (`*` stops at `/`).
    Resource {
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
    },
    /// Remove components matching the patterns (`*` stops at `/`).
    Component {
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
    },
    /// Remove the patches entry the flags describe exactly.
    Patch(PatchFlags),
    /// Remove transformers matching the patterns.
    Transformer {
        #[arg(value_name = "PATTERN")]
        patterns: Vec<String>,
    },
    /// Remove buildMetadata options (comma-separated).
    Buildmetadata {
        #[arg(value_name = "OPTION,...")]
        options: Vec<String>,
    },
    /// Remove configMapGenerator entries (names comma-separated) in a namespace.
    #[command(after_help = "Examples:\n  peerpods-build edit remove configmap settings\n  peerpods-build edit remove configmap a,b --namespace=apps")]
    Configmap {
        #[arg(value_name = "NAME,...")]
        names: Vec<String>,
        /// The namespace of the entries (none: default).
        #[arg(long, default_value = "")]
        namespace: String,
    },
    /// Remove secretGenerator entries (names comma-separated) in a namespace.
    Secret {
        #[arg(value_name = "NAME,...")]
        names: Vec<String>,
        /// The namespace of the entries (none: default).
        #[arg(long, default_value = "")]
        namespace: String,
    },
    /// Remove commonLabels keys (comma-separated).
    Label {
        /// Ignore error if the given label doesn't exist
        #[arg(short = 'i', long)]
        ignore_non_existence: bool,
        #[arg(value_name = "KEY,...")]
        keys: Vec<String>,
    },
    /// Remove commonAnnotations keys (comma-separated).
    Annotation {
        /// Ignore error if the given annotation doesn't exist
        #[arg(short = 'i', long)]
        ignore_non_existence: bool,
        #[arg(value_name = "KEY,...")]
        keys: Vec<String>,
    },
}

/// kustomize's builtin plugins: its generators, then its transformers.
const BUILTIN_PLUGINS: &[&str] = &[
    "ConfigMapGenerator",
    "IAMPolicyGenerator",
    "SecretGenerator",
    "HelmChartInflationGenerator",
    "AnnotationsTransformer",
    "HashTransformer",
    "ImageTagTransformer",
    "LabelTransformer",
    "NamespaceTransformer",
    "PatchJson6902Transformer",
    "PatchStrategicMergeTransformer",
    "PatchTransformer",
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "SuffixTransformer",
    "ReplacementTransformer",
    "ReplicaCountTransformer",
    "ValueAddTransformer",
];

pub fn run(edit_args: &EditArgs) -> Result<(), Failure> {
    let here = std::path::Path::new(".");
    match &edit_args.action {
        Action::ListBuiltinPlugin => {
            let list: String = BUILTIN_PLUGINS.iter().map(|plugin| format!(" * {plugin}\n")).collect();
            return super::stdout::print(format!("Builtin plugins:\n\n{list}").as_bytes()).map_err(Failure::from);
        }
        Action::Fix { vars } => return fix(here, *vars),
        _ => {}
    }
    let edit_to_make = to_edit(&edit_args.action).map_err(|e| Failure::Failed(e.to_string()))?;
    let outcome = edit(here, &edit_to_make).map_err(|e| Failure::Failed(e.to_string()))?;
    for note in &outcome.notes {
        eprintln!("{note}");
    }
    Ok(())
}

/// `edit fix`, then the check kustomize makes: the fixed kustomization must build as before.
fn fix(dir: &std::path::Path, vars: bool) -> Result<(), Failure> {
    let options = peerpods_build::BuildOptions::default();
    let before = peerpods_build::build(dir, &options).map(|b| b.to_yaml());
    edit(dir, &Edit::Fix { vars }).map_err(|e| Failure::Failed(e.to_string()))?;
    let summary = if vars { peerpods_build::edit::fix::FIXED_FIELDS_AND_VARS } else { peerpods_build::edit::fix::FIXED_FIELDS };
    super::stdout::print(format!("{summary}\n").as_bytes())?;
    match (before, peerpods_build::build(dir, &options)) {
        (_, Err(failure)) => {
            eprintln!("Warning: 'Fixed' kustomization now produces the error when running `kustomize build`: {}", failure.error)
        }
        (Ok(before), Ok(after)) if before != after.to_yaml() => eprintln!(
            "Warning: 'Fixed' kustomization now produces different output when running `kustomize build`:\n...{}...",
            after.to_yaml()
        ),
        _ => {}
    }
    Ok(())
}

fn exactly_one(values: &[String], what: &str) -> Result<String, EditError> {
    match values {
        [value] => Ok(value.clone()),
        _ => Err(EditError::Usage(format!("must specify exactly one {what} value"))),
    }
}

/// `add patch`'s check: a file or a text, not both.
fn patch_entry(flags: &PatchFlags, required: bool) -> Result<PatchEntry, EditError> {
    if !flags.patch.is_empty() && !flags.path.is_empty() {
        return Err(EditError::Usage("patch and path can't be set at the same time".into()));
    }
    if required && flags.patch.is_empty() && flags.path.is_empty() {
        return Err(EditError::Usage("must provide either patch or path".into()));
    }
    Ok(flags.entry())
}

fn to_edit(action: &Action) -> Result<Edit, EditError> {
    Ok(match action {
        Action::Set { what } => match what {
            SetCommand::Nameprefix { values } => Edit::SetNamePrefix(exactly_one(values, "prefix")?),
            SetCommand::Namesuffix { values } => Edit::SetNameSuffix(exactly_one(values, "suffix")?),
            SetCommand::Namespace { values } => Edit::SetNamespace(exactly_one(values, "namespace")?),
            SetCommand::Image { images } => Edit::SetImages(args::parse_images(images)?),
            SetCommand::Replicas { replicas } => Edit::SetReplicas(args::parse_replicas(replicas)?),
            SetCommand::Label { pairs } => Edit::SetLabels(args::parse_metadata(pairs, "label")?),
            SetCommand::Annotation { pairs } => Edit::SetAnnotations(args::parse_metadata(pairs, "annotation")?),
            SetCommand::Buildmetadata { options } => Edit::SetBuildMetadata(parse_build_metadata(options)?),
            SetCommand::Configmap(flags) => Edit::SetGenerator(GeneratorKind::ConfigMap, flags.set()),
            SetCommand::Secret(flags) => Edit::SetGenerator(GeneratorKind::Secret, flags.set()),
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
            AddCommand::Resource { no_verify, paths } => {
                Edit::AddPaths { field: "resources", what: "resource", patterns: paths.clone(), verify: !*no_verify }
            }
            AddCommand::Base { paths } => match &paths[..] {
                [one] => Edit::AddBases(one.split(',').map(str::to_string).collect()),
                _ => return Err(EditError::Usage("must specify a base directory".into())),
            },
            AddCommand::Patch(flags) => Edit::AddPatch(patch_entry(flags, true)?),
            AddCommand::Configmap(flags) => Edit::AddGenerator(GeneratorKind::ConfigMap, flags.add("")),
            AddCommand::Secret { flags, secret_type } => Edit::AddGenerator(GeneratorKind::Secret, flags.add(secret_type)),
            AddCommand::Generator { paths } => {
                Edit::AddPaths { field: "generators", what: "generator", patterns: paths.clone(), verify: true }
            }
            AddCommand::Transformer { paths } => {
                Edit::AddPaths { field: "transformers", what: "transformer", patterns: paths.clone(), verify: true }
            }
            AddCommand::Configuration { paths } => {
                Edit::AddPaths { field: "configurations", what: "configuration", patterns: paths.clone(), verify: true }
            }
            AddCommand::Buildmetadata { options } => Edit::AddBuildMetadata(parse_build_metadata(options)?),
        },
        Action::Remove { what } => match what {
            RemoveCommand::Resource { patterns } if patterns.is_empty() => {
                return Err(EditError::Usage("must specify a resource file".into()))
            }
            RemoveCommand::Resource { patterns } => Edit::RemovePaths { field: "resources", patterns: patterns.clone() },
            RemoveCommand::Transformer { patterns } if patterns.is_empty() => {
                return Err(EditError::Usage("must specify a transformer file".into()))
            }
            RemoveCommand::Transformer { patterns } => Edit::RemovePaths { field: "transformers", patterns: patterns.clone() },
            RemoveCommand::Component { patterns } if patterns.is_empty() => {
                return Err(EditError::Usage("must specify a component file".into()))
            }
            RemoveCommand::Component { patterns } => Edit::RemovePaths { field: "components", patterns: patterns.clone() },
            RemoveCommand::Patch(flags) => Edit::RemovePatch(patch_entry(flags, false)?),
            RemoveCommand::Buildmetadata { options } => Edit::RemoveBuildMetadata(parse_build_metadata(options)?),
            RemoveCommand::Configmap { names, namespace } => Edit::RemoveGenerators {
                kind: GeneratorKind::ConfigMap,
                names: peerpods_build::edit::generators::parse_names(names, GeneratorKind::ConfigMap)?,
                namespace: namespace.clone(),
            },
            RemoveCommand::Secret { names, namespace } => Edit::RemoveGenerators {
                kind: GeneratorKind::Secret,
                names: peerpods_build::edit::generators::parse_names(names, GeneratorKind::Secret)?,
                namespace: namespace.clone(),
            },
            RemoveCommand::Label { ignore_non_existence, keys } => Edit::RemoveKeys {
                field: "commonLabels",
                kind: "label",
                keys: parse_keys(keys, "label")?,
                ignore: *ignore_non_existence,
            },
            // kustomize's `remove annotation` checks its arguments with the words of `label`.
            RemoveCommand::Annotation { ignore_non_existence, keys } => Edit::RemoveKeys {
                field: "commonAnnotations",
                kind: "annotation",
                keys: parse_keys(keys, "label")?,
                ignore: *ignore_non_existence,
            },
        },
        Action::Fix { vars } => Edit::Fix { vars: *vars },
        Action::ListBuiltinPlugin => unreachable!("listed before any edit"),
    })
}
