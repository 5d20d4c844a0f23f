//! `check-settings`: the settings an overlay renders into `peer-pods-cm`, checked against what
//! the adaptor of the chosen provider reads.
//!
//! The overlay's kustomization graph is walked in kustomize's order (resources, then the
//! kustomization's own generators, then its components), collecting every `KEY=value` that a
//! `peer-pods-cm` generator takes from an env file or a literal, with its file and line. The last
//! `CLOUD_PROVIDER` names the provider. Reported:
//!
//! - a key that provider's adaptor does not read (a typo, or another provider's key);
//! - a key the adaptor requires whose final value is empty or that is never set;
//! - an env-file value that carries a ` # comment`, quotes or blanks at either end: kustomize
//!   keeps them, so they become part of the value;
//! - a value that is not of the key's type (boolean, integer, number, duration);
//! - credentials in the ConfigMap (they belong in the Secret `peer-pods-secret`);
//! - a setting added after `components/settings-rollout` ran: that change would not roll the
//!   DaemonSet, so the rollout component must come last.
//!
//! An identity component (`components/azure-workload-identity`, `components/alibabacloud-rrsa`)
//! takes its settings from a `peer-pods-identity` ConfigMap that the build keeps to itself; a key
//! its env file marks `# required` and that ends up empty is reported too.
//!
//! A `peer-pods-secret` generator (`components/credentials-env`, or one of your own) is read the
//! same way: its keys must be ones the adaptor reads, and its env files carry no comments or
//! quotes in values. Required credentials are not demanded, since the Secret may be created
//! beforehand.
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::env_file::EnvFile;
use super::table::{SettingsTable, ValueType};
use crate::kustomization::Kustomization;

/// The ConfigMap the adaptor reads its settings from.
pub const SETTINGS_CONFIGMAP: &str = "peer-pods-cm";
/// The component that copies the final settings into the hashed copy that rolls the DaemonSet.
pub const ROLLOUT_COMPONENT: &str = "settings-rollout";
/// The Secret the adaptor reads its credentials from.
pub const CREDENTIALS_SECRET: &str = "peer-pods-secret";
/// The build-local ConfigMap the identity components read their settings from.
pub const IDENTITY_CONFIGMAP: &str = "peer-pods-identity";

/// What a setting feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// `peer-pods-cm`, the adaptor's settings.
    Settings,
    /// `peer-pods-secret`, its credentials.
    Secret,
    /// `peer-pods-identity`, an identity component's settings.
    Identity,
}

/// One problem, at a place in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub file: PathBuf,
    pub line: usize,
    /// The provider whose adaptor the setting was checked against.
    pub provider: String,
    pub key: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}: {}: {}", self.file.display(), self.line, self.provider, self.key, self.message)
    }
}

/// Why an overlay could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error("{dir}: no kustomization.yaml, kustomization.yml or Kustomization")]
    NoKustomization { dir: PathBuf },
    #[error("{dir}: renders no CLOUD_PROVIDER into {SETTINGS_CONFIGMAP}, so there is no provider to check against")]
    NoProvider { dir: PathBuf },
}

/// Where a setting comes from.
#[derive(Clone, Debug)]
struct Source {
    key: String,
    /// None: an env-file line without `=`.
    value: Option<String>,
    file: PathBuf,
    line: usize,
    from_env_file: bool,
    target: Target,
    /// Marked `# required` in its env file.
    marked_required: bool,
}

/// The result of checking one overlay.
#[derive(Debug)]
pub struct Report {
    pub provider: String,
    /// Settings lines read (env-file lines and literals).
    pub checked: usize,
    pub findings: Vec<Finding>,
}

/// Checks the settings the kustomization in `dir` renders into `peer-pods-cm`.
pub fn check_settings(dir: &Path, table: &SettingsTable) -> Result<Report, CheckError> {
    let mut sources = Vec::new();
    let mut visited = BTreeSet::new();
    let mut rolled_out_at = None;
    collect(dir, &mut sources, &mut visited, &mut rolled_out_at)?;
    let provider = sources
        .iter()
        .rev()
        .find(|s| s.key == "CLOUD_PROVIDER" && s.target == Target::Settings)
        .and_then(|s| s.value.clone())
        .ok_or_else(|| CheckError::NoProvider { dir: dir.to_owned() })?;
    let mut findings = Vec::new();
    let mut finding = |source: &Source, message: String| {
        findings.push(Finding {
            file: source.file.clone(),
            line: source.line,
            provider: provider.clone(),
            key: source.key.clone(),
            message,
        })
    };
    if !table.providers().contains(&provider.as_str()) {
        let last = sources.iter().rev().find(|s| s.key == "CLOUD_PROVIDER").unwrap();
        finding(
            last,
            format!(
                "`{provider}` is not a provider of the cloud-api-adaptor at {} (it has: {})",
                table.commit,
                table.providers().join(", ")
            ),
        );
        return Ok(Report { provider, checked: sources.len(), findings });
    }
    for source in sources.iter().filter(|s| s.target != Target::Identity) {
        let Some(value) = &source.value else {
            finding(source, "no `=`: kustomize takes the value from the environment of whoever builds".to_owned());
            continue;
        };
        let Some(setting) = table.lookup(&provider, &source.key) else {
            let hint = match table.closest(&provider, &source.key) {
                Some(close) => format!("; did you mean {close}?"),
                None => String::new(),
            };
            finding(source, format!("not a setting the {provider} adaptor reads{hint}"));
            continue;
        };
        if setting.secret && source.target == Target::Settings {
            finding(source, "a credential: put it in the Secret peer-pods-secret, not in the ConfigMap".to_owned());
        }
        if source.from_env_file {
            if let Some(at) = value.find(" #").or_else(|| value.find("\t#")) {
                finding(
                    source,
                    format!("`{}` becomes part of the value (env files have no trailing comments)", value[at..].trim()),
                );
                continue;
            }
            if value.starts_with(['"', '\'']) || value.ends_with(['"', '\'']) {
                finding(source, "the quotes become part of the value (write it without quotes)".to_owned());
                continue;
            }
            if value.trim() != value {
                finding(source, "blanks at the start or end become part of the value".to_owned());
                continue;
            }
        }
        if !value.is_empty() {
            if let Some(expected) = type_mismatch(setting.value_type, value) {
                finding(source, format!("`{value}` is not {expected}"));
            }
        }
    }
    // Settings changed after the last settings-rollout do not reach the pod template.
    if let Some(mark) = rolled_out_at {
        if let Some(late) = sources[mark..].iter().find(|s| s.target == Target::Settings) {
            finding(
                late,
                format!(
                    "set after components/{ROLLOUT_COMPONENT} ran, so changing it does not roll the \
                     DaemonSet: list {ROLLOUT_COMPONENT} as the last component of the overlay that sets it"
                ),
            );
        }
    }
    // Required keys: judged on the value that wins.
    for setting in table.for_provider(&provider).filter(|s| s.requirement.is_required() && !s.secret) {
        match sources.iter().rev().find(|s| s.key == setting.key && s.target == Target::Settings) {
            Some(last) if last.value.as_deref().is_some_and(str::is_empty) => {
                finding(last, "required by the adaptor, but empty".to_owned())
            }
            Some(_) => {}
            None => {
                let top = Source {
                    key: setting.key.clone(),
                    value: None,
                    file: kustomization_file(dir)?,
                    line: 1,
                    from_env_file: false,
                    target: Target::Settings,
                    marked_required: false,
                };
                finding(&top, format!("required by the adaptor, but {SETTINGS_CONFIGMAP} never sets it"))
            }
        }
    }
    // An identity component's required settings: judged on the value that wins.
    let identity: Vec<&Source> = sources.iter().filter(|s| s.target == Target::Identity).collect();
    for (index, source) in identity.iter().enumerate() {
        let wins = !identity[index + 1..].iter().any(|later| later.key == source.key);
        if wins && source.marked_required && source.value.as_deref().is_none_or(str::is_empty) {
            finding(source, "required by the identity component that reads it, but empty".to_owned());
        }
    }
    Ok(Report { provider, checked: sources.len(), findings })
}

/// What a value should have been, when it is not of `value_type`.
fn type_mismatch(value_type: ValueType, value: &str) -> Option<&'static str> {
    let ok = match value_type {
        ValueType::String | ValueType::List => true,
        ValueType::Bool => matches!(value.to_ascii_lowercase().as_str(), "true" | "false" | "1" | "0"),
        ValueType::ExactTrue => matches!(value, "true" | "false"),
        ValueType::Int => {
            let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
        ValueType::Uint => value.bytes().all(|b| b.is_ascii_digit()),
        ValueType::Float => value.parse::<f64>().is_ok_and(f64::is_finite),
        ValueType::Duration => is_go_duration(value),
    };
    (!ok).then(|| match value_type {
        ValueType::Bool => "a boolean (true or false; anything else means false)",
        ValueType::ExactTrue => "`true` or `false` (only the exact word `true` switches it on)",
        ValueType::Int => "an integer (the adaptor ignores it and keeps its default)",
        ValueType::Uint => "a non-negative integer (the adaptor ignores it and keeps its default)",
        ValueType::Float => "a number (the adaptor ignores it and keeps its default)",
        ValueType::Duration => "a duration such as 90s, 5m or 1h30m (the adaptor keeps its default)",
        ValueType::String | ValueType::List => unreachable!(),
    })
}

/// Go's `time.ParseDuration` syntax: `0`, or a sequence of decimal numbers with units.
fn is_go_duration(value: &str) -> bool {
    let rest = value.strip_prefix(['-', '+']).unwrap_or(value);
    if rest == "0" {
        return true;
    }
    let mut rest = rest;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
        let number = &rest[..number_end];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[number_end..];
        let Some(unit) = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"].iter().find(|u| rest.starts_with(**u)) else {
            return false;
        };
        // `ms` before `m`, `ns`/`us` before `s`: the list order already prefers the longer unit.
        rest = &rest[unit.len()..];
    }
    true
}

fn kustomization_file(dir: &Path) -> Result<PathBuf, CheckError> {
    ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| CheckError::NoKustomization { dir: dir.to_owned() })
}

fn is_remote(reference: &str) -> bool {
    reference.contains("://") || reference.starts_with("github.com/") || reference.starts_with("git@")
}

/// Collects the `peer-pods-cm` and `peer-pods-secret` sources of the kustomization in `dir` and everything it includes,
/// in the order kustomize applies them.
/// `rolled_out_at` is set to the number of sources collected when a `settings-rollout` component
/// ran last.
fn collect(
    dir: &Path,
    sources: &mut Vec<Source>,
    visited: &mut BTreeSet<PathBuf>,
    rolled_out_at: &mut Option<usize>,
) -> Result<(), CheckError> {
    let file = kustomization_file(dir)?;
    let unreadable = |path: &Path, message: String| CheckError::Unreadable { path: path.to_owned(), message };
    let text = crate::bounded_read::read_text(&file).map_err(|e| unreadable(&file, e.to_string()))?;
    if !visited.insert(std::fs::canonicalize(&file).unwrap_or(file.clone())) {
        return Ok(());
    }
    let value = crate::yaml::parse::parse_document_last_key_wins(&text)
        .map_err(|e| unreadable(&file, format!("line {}:{}: {}", e.line, e.column, e.message)))?;
    let value = if value.is_null() { serde_json::Value::Object(Default::default()) } else { value };
    let value = crate::kustomization::types::canonicalize_field_names(value);
    let kustomization: Kustomization =
        serde_json::from_value(value).map_err(|e| unreadable(&file, format!("invalid Kustomization: {e}")))?;

    for resource in kustomization.resources.iter().chain(&kustomization.bases) {
        if !is_remote(resource) && dir.join(resource).is_dir() {
            collect(&tidy(&dir.join(resource)), sources, visited, rolled_out_at)?;
        }
    }
    let mut used_lines = BTreeSet::new();
    let generators = kustomization
        .config_map_generator
        .iter()
        .filter_map(|g| match g.name.as_str() {
            SETTINGS_CONFIGMAP => Some((g, Target::Settings)),
            IDENTITY_CONFIGMAP => Some((g, Target::Identity)),
            _ => None,
        })
        .chain(kustomization.secret_generator.iter().filter(|g| g.name == CREDENTIALS_SECRET).map(|g| (g, Target::Secret)));
    for (generator, target) in generators {
        if generator.behavior == "replace" {
            sources.retain(|s| s.target != target);
        }
        let env_files = generator.envs.iter().chain(std::iter::once(&generator.env).filter(|e| !e.is_empty()));
        for env in env_files {
            let path = dir.join(env);
            let env_file = EnvFile::read(&path).map_err(|e| unreadable(&path, e.to_string()))?;
            for entry in env_file.active() {
                sources.push(Source {
                    key: entry.key.clone(),
                    value: entry.value.clone(),
                    file: path.clone(),
                    line: entry.line,
                    from_env_file: true,
                    target,
                    marked_required: entry.marked_required,
                });
            }
        }
        for literal in &generator.literals {
            let (key, value) = literal.split_once('=').unwrap_or((literal, ""));
            let line = literal_line(&text, literal, &mut used_lines);
            sources.push(Source {
                key: key.to_owned(),
                value: Some(strip_literal_quotes(value).to_owned()),
                file: file.clone(),
                line,
                from_env_file: false,
                target,
                marked_required: false,
            });
        }
    }
    for component in &kustomization.components {
        if !is_remote(component) {
            let component = tidy(&dir.join(component));
            collect(&component, sources, visited, rolled_out_at)?;
            if component.file_name().is_some_and(|name| name == ROLLOUT_COMPONENT) {
                *rolled_out_at = Some(sources.len());
            }
        }
    }
    Ok(())
}

/// The path without `.` parts and with `x/..` pairs removed, so that findings
/// name files as a person would (`overlays/aws/settings.env`, not
/// `mine/../overlays/aws/settings.env`); leading `..` parts stay.
fn tidy(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// kustomize drops one pair of matching quotes around a literal's value.
fn strip_literal_quotes(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

/// The line of the kustomization file that writes `literal` (the first not yet claimed).
fn literal_line(text: &str, literal: &str, used: &mut BTreeSet<usize>) -> usize {
    let key = literal.split('=').next().unwrap_or(literal);
    let found = text
        .lines()
        .enumerate()
        .find(|(index, line)| !used.contains(index) && line.contains(literal))
        .or_else(|| text.lines().enumerate().find(|(index, line)| !used.contains(index) && line.contains(key)));
    match found {
        Some((index, _)) => {
            used.insert(index);
            index + 1
        }
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_paths_keep_leading_parent_parts() {
        assert_eq!(tidy(Path::new("mine/../overlays/./aws")), Path::new("overlays/aws"));
        assert_eq!(tidy(Path::new("../x/../y")), Path::new("../y"));
    }

    #[test]
    fn durations_follow_go_syntax() {
        for good in ["0", "5m", "1h30m", "1.5s", "300ms", "-2h"] {
            assert!(is_go_duration(good), "{good}");
        }
        for bad in ["", "5", "m", "5 minutes", "1.2.3s", "5M"] {
            assert!(!is_go_duration(bad), "{bad}");
        }
    }

    #[test]
    fn types_are_checked_as_the_adaptor_parses_them() {
        assert_eq!(type_mismatch(ValueType::Bool, "TRUE"), None);
        assert!(type_mismatch(ValueType::Bool, "yes").is_some());
        assert!(type_mismatch(ValueType::ExactTrue, "1").is_some());
        assert!(type_mismatch(ValueType::Int, "30GiB").is_some());
        assert_eq!(type_mismatch(ValueType::Int, "-3"), None);
        assert!(type_mismatch(ValueType::Uint, "-3").is_some());
        assert_eq!(type_mismatch(ValueType::Float, "0.5"), None);
    }

    #[test]
    fn literal_quotes_are_stripped_as_kustomize_does() {
        assert_eq!(strip_literal_quotes("\"a b\""), "a b");
        assert_eq!(strip_literal_quotes("'x'"), "x");
        assert_eq!(strip_literal_quotes("\"x"), "\"x");
    }
}
