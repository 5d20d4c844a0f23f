//! The adaptor-settings check a build runs on its own output: when the output holds the peer
//! pods ConfigMap (`peer-pods-cm` with `CLOUD_PROVIDER`), every setting `check-settings` would
//! report becomes a warning of the build, so that `peerpods-build overlays/gcp | kubectl apply -f -`
//! on a fresh clone says which required settings are still empty instead of deploying an
//! adaptor that cannot start.
use std::path::Path;

use super::check::{check_settings, CheckError, SETTINGS_CONFIGMAP};
use super::table::SettingsTable;
use crate::Build;

/// Whether the output holds the adaptor's settings: a ConfigMap `peer-pods-cm` with `CLOUD_PROVIDER`.
pub fn renders_adaptor_settings(build: &Build) -> bool {
    build.resources.as_slice().iter().any(|resource| {
        resource.kind() == "ConfigMap"
            && resource.name() == SETTINGS_CONFIGMAP
            && resource.value.get("data").and_then(|data| data.get("CLOUD_PROVIDER")).is_some()
    })
}

/// The warnings of the settings check of the kustomization in `dir`, one per problem, or none
/// when the output holds no adaptor settings or `dir` is a URL. A kustomization graph the check
/// cannot read gives one warning saying so.
pub fn settings_warnings(dir: &Path, build: &Build) -> Vec<String> {
    // `build URL`: the settings come from a repository the check cannot walk. The output is
    // looked at first: most builds hold no adaptor settings, and need not look at the disk.
    if !renders_adaptor_settings(build) || !dir.is_dir() {
        return Vec::new();
    }
    let table = SettingsTable::embedded();
    match check_settings(dir, table) {
        Ok(report) => report.findings.iter().map(|finding| format!("Warning: {finding}")).collect(),
        // The output holds peer-pods-cm, but not from an overlay this check can walk (a remote base, say).
        Err(CheckError::NoProvider { .. }) => Vec::new(),
        Err(error) => vec![format!("Warning: the adaptor settings could not be checked: {error}")],
    }
}

/// The line that follows the warnings: what to do about them.
pub fn settings_hint(dir: &Path, count: usize) -> String {
    let problems = if count == 1 { "1 adaptor setting".to_owned() } else { format!("{count} adaptor settings") };
    format!(
        "Warning: {problems} missing or invalid: set them before applying (`peerpods-build \
         check-settings {}` lists the same)",
        dir.display()
    )
}
