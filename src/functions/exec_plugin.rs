//! kustomize's old-style exec plugins: a program found by the config's group, version and
//! kind under the plugin home, called with the config in a file and optional arguments.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::resource::split_api_version;

/// The first plugin home that exists (kustomize's `DefaultAbsPluginHome`).
fn plugin_home() -> Result<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = env("HOME");
    let candidates = [
        ("$KUSTOMIZE_PLUGIN_HOME", env("KUSTOMIZE_PLUGIN_HOME")),
        ("$XDG_CONFIG_HOME", env("XDG_CONFIG_HOME").map(|root| root.join("kustomize/plugin"))),
        ("the default $XDG_CONFIG_HOME", home.as_ref().map(|h| h.join(".config/kustomize/plugin"))),
        ("the home directory", home.as_ref().map(|h| h.join("kustomize/plugin"))),
    ];
    let mut tried = Vec::new();
    for (note, dir) in candidates {
        match dir {
            Some(dir) if dir.is_dir() => return Ok(dir),
            Some(dir) => tried.push(format!("'{}' ({note})", dir.display())),
            None => {}
        }
    }
    Err(Error::msg(format!("no plugin home found; tried {}", tried.join(", "))))
}

/// Where the exec plugin for `config` lives: `<home>/<group>/<version>/<kind lower-cased>/<Kind>`.
/// Group, version and kind are each one path component (an absolute kind or a `//` in the
/// apiVersion would otherwise replace the home), and the program, once its links are
/// resolved, lies beneath the home.
pub fn locate(config: &Value) -> Result<PathBuf> {
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = split_api_version(api_version);
    for (what, part, may_be_empty) in [("group", group, true), ("version", version, false), ("kind", kind, false)] {
        if (part.is_empty() && !may_be_empty) || (!part.is_empty() && (matches!(part, "." | "..") || part.contains(['/', '\\', '\0']))) {
            return Err(Error::msg(format!(
                "exec plugin apiVersion '{}', kind '{}': the {what} must be one path component (no '/', '\\', '.', '..' or NUL)",
                api_version.escape_debug(),
                kind.escape_debug()
            )));
        }
    }
    let home = plugin_home()?;
    let path = home.join(group).join(version).join(kind.to_lowercase()).join(kind);
    if let (Ok(real_home), Ok(real)) = (home.canonicalize(), path.canonicalize()) {
        if !real.starts_with(&real_home) {
            return Err(Error::msg(format!(
                "exec plugin {} leads to {}, outside the plugin home {}",
                path.display(),
                real.display(),
                real_home.display()
            )));
        }
    }
    match std::fs::metadata(&path) {
        // The resolved program runs: the one checked above, not a link swapped in after.
        Ok(meta) if is_executable(&meta) => Ok(path.canonicalize().unwrap_or(path)),
        Ok(_) => Err(Error::msg(format!("plugin {} is not executable", path.display()))),
        Err(_) => Err(Error::msg(format!(
            "no exec plugin for apiVersion '{api_version}', kind '{kind}': {} does not exist (Go plugins are not supported)",
            path.display()
        ))),
    }
}

fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

/// The arguments after the config file: `argsOneLiner` split as a shell would (no shell runs),
/// then the lines of `argsFromFile` (read through the loader, so the load restrictor holds).
pub fn arguments(config: &Value, loader: &Loader) -> Result<Vec<String>> {
    let mut args = Vec::new();
    if let Some(line) = config.get("argsOneLiner").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        args = shlex::split(line).ok_or_else(|| Error::msg(format!("failed to parse argsOneLiner: '{line}'")))?;
    }
    if let Some(file) = config.get("argsFromFile").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        let (_, text) = loader.read(file)?;
        args.extend(text.split('\n').map(|l| l.trim_start_matches(' ')).filter(|l| !l.is_empty()).map(String::from));
    }
    Ok(args)
}

/// kustomize leaves out a variable longer than this (with a log line).
const MAX_ENV_LENGTH: usize = 131071;

/// The variables an exec plugin gets on top of ours.
pub fn environment(config_text: &str, root: &Path) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    let root = root.display().to_string();
    for (name, value) in [("KUSTOMIZE_PLUGIN_CONFIG_STRING", config_text.to_string()), ("KUSTOMIZE_PLUGIN_CONFIG_ROOT", root)] {
        if name.len() + 1 + value.len() <= MAX_ENV_LENGTH {
            env.push((name, value));
        }
    }
    env
}
