//! The arguments of a build: what `build` runs with and `build --check` renders again.
use std::path::{Path, PathBuf};

use clap::Args;
use peerpods_build::functions::{parse_timeout, PluginOptions};

#[derive(Args, Clone)]
pub struct BuildArgs {
    /// The kustomization directory; with several, each is built into `OUTPUT/<its path, `/` as `_`>.yaml`.
    #[arg(default_value = ".", num_args = 1..)]
    pub(super) dirs: Vec<PathBuf>,
    /// Write to this file, or, given as a folder (`DIR/`, or one that exists, created if missing),
    /// one file per resource (with several directories: one file per directory). Files an earlier
    /// build wrote into the folder and this one no longer renders are removed.
    #[arg(short, long)]
    pub(super) output: Option<PathBuf>,
    /// Write nothing: compare the existing --output with a fresh render, list the stale files
    /// (changed, added, removed) and exit 1 when they differ.
    #[arg(long, requires = "output")]
    pub(super) check: bool,
    /// LoadRestrictionsRootOnly (files must stay inside each kustomization's folder) or LoadRestrictionsNone.
    #[arg(long, alias = "load_restrictor", default_value = "LoadRestrictionsRootOnly")]
    pub(super) load_restrictor: String,
    /// Label every resource `app.kubernetes.io/managed-by: kustomize-v5.8.1` (also with
    /// KUSTOMIZE_ENABLE_MANAGEDBY_LABEL=on), as `buildMetadata: [managedByLabel]` does.
    #[arg(long)]
    pub(super) enable_managedby_label: bool,
    /// Deprecated kustomize flag: `legacy` or `none` output order.
    #[arg(long)]
    pub(super) reorder: Option<String>,
    /// Fail when a rule matches or changes nothing (a patch, an images entry, a setting without
    /// effect), instead of warning.
    #[arg(long)]
    pub(super) strict: bool,
    /// Inflate helmCharts by running helm (`helm template`, and `helm pull` for a chart with a repo).
    #[arg(long)]
    pub(super) enable_helm: bool,
    /// The helm program (a path, or a name looked up on PATH).
    #[arg(long, default_value = "helm", value_name = "COMMAND")]
    pub(super) helm_command: String,
    /// Kubernetes version for helm's Capabilities.KubeVersion (wins over a chart's kubeVersion).
    #[arg(long, value_name = "VERSION", default_value = "")]
    pub(super) helm_kube_version: String,
    /// Kubernetes API versions for helm's Capabilities.APIVersions (repeatable; wins over a chart's apiVersions).
    #[arg(long, value_name = "VERSION")]
    pub(super) helm_api_versions: Vec<String>,
    /// Pass --debug to helm template (its stderr and output shown when it fails).
    #[arg(long)]
    pub(super) helm_debug: bool,
    /// Run plugins that are other programs: KRM functions in containers (`docker run`) and
    /// old-style exec plugins from the plugin home.
    #[arg(long)]
    pub(super) enable_alpha_plugins: bool,
    /// With --enable-alpha-plugins, also run exec KRM functions (`exec: {path}`); without it
    /// they are skipped with a warning, as kustomize skips them.
    #[arg(long)]
    pub(super) enable_exec: bool,
    /// Give container functions that ask for it (`network: true`) the host's network.
    #[arg(long)]
    pub(super) network: bool,
    /// Accepted as kustomize accepts it (which does not use it either).
    #[arg(long, default_value = "bridge")]
    pub(super) network_name: String,
    /// A storage mount for every container function (`type=bind,src=DIR,dst=PATH[,rw=true]`; repeatable).
    #[arg(long = "mount")]
    pub(super) mounts: Vec<String>,
    /// An environment variable for functions, `NAME=value` or `NAME` to pass ours (repeatable).
    #[arg(short = 'e', long = "env")]
    pub(super) env: Vec<String>,
    /// Run container functions with our uid:gid instead of `nobody`.
    #[arg(long)]
    pub(super) as_current_user: bool,
    /// Stop a plugin program running longer than this (seconds, or with s/m/h; 0: no limit).
    /// kustomize has no such limit.
    #[arg(long, default_value = "10m")]
    pub(super) function_timeout: String,
    #[command(flatten)]
    pub(super) remote: super::cache::RemoteArgs,
}

impl BuildArgs {
    /// What the plugin flags allow.
    pub(super) fn plugin_options(&self) -> Result<PluginOptions, String> {
        Ok(PluginOptions {
            enable_alpha_plugins: self.enable_alpha_plugins,
            enable_exec: self.enable_exec,
            network: self.network,
            network_name: self.network_name.clone(),
            mounts: self.mounts.clone(),
            env: self.env.clone(),
            as_current_user: self.as_current_user,
            timeout: parse_timeout(&self.function_timeout)?,
        })
    }

    /// The same build, written to `output` instead (for `--check`).
    pub(super) fn rendering_into(&self, output: &Path) -> BuildArgs {
        BuildArgs { output: Some(output.to_path_buf()), check: false, ..self.clone() }
    }
}

/// Whether `--output` is written as a folder: given with a trailing `/`, or an existing folder.
pub(super) fn writes_folder(args: &BuildArgs) -> bool {
    args.output.as_deref().is_some_and(|output| args.dirs.len() > 1 || output.is_dir() || names_a_folder(output))
}

pub(super) fn names_a_folder(output: &Path) -> bool {
    let text = output.to_string_lossy();
    text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR)
}
