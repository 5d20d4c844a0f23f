//! Plugins that are other programs: KRM functions (a container run by `docker`, or an exec
//! function) and kustomize's old-style exec plugins, for the `generators`, `transformers` and
//! `validators` fields. Nothing runs unless the command line allows it
//! (`--enable-alpha-plugins`, and `--enable-exec` for exec functions); every program starts
//! through [`crate::process`].
//!
//! The protocol is data ([`resource_list`]); which program, with which argv and environment,
//! is [`spec`] and [`exec_plugin`]; this module runs the call and maps the answer back onto the
//! resources as kustomize does (`api/internal/plugins/utils.UpdateResMapValues`).
mod exec_plugin;
pub mod resource_list;
pub mod spec;
mod state;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::process::{Program, ProcessError};
use crate::resource::{Behavior, ResId, ResMap, Resource};
use resource_list::ResourceList;
use spec::FunctionSpec;

/// What the command line allows plugins to do (kustomize's `--enable-alpha-plugins`,
/// `--enable-exec` and container flags), and how long one may run.
#[derive(Clone, Debug)]
pub struct PluginOptions {
    /// Plugins other than the builtin ones may run at all.
    pub enable_alpha_plugins: bool,
    /// Exec functions may run (otherwise they are skipped, as kustomize skips them).
    pub enable_exec: bool,
    /// A container function that asks for the network gets the host's.
    pub network: bool,
    /// `--network-name`: accepted as kustomize accepts it, which does not use it either.
    pub network_name: String,
    /// `--mount` flags, added to every container function.
    pub mounts: Vec<String>,
    /// `-e/--env` flags: `NAME=value` or `NAME` (passed through).
    pub env: Vec<String>,
    /// Run containers as our uid:gid instead of `nobody`.
    pub as_current_user: bool,
    /// The longest one plugin program may run (`None`: no limit).
    pub timeout: Option<Duration>,
}

/// The default `--function-timeout`: generous, since kustomize has none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for PluginOptions {
    fn default() -> Self {
        PluginOptions {
            enable_alpha_plugins: false,
            enable_exec: false,
            network: false,
            network_name: "bridge".into(),
            mounts: Vec::new(),
            env: Vec::new(),
            as_current_user: false,
            timeout: Some(DEFAULT_TIMEOUT),
        }
    }
}

/// `--function-timeout`'s value: seconds, or a number with `s`, `m` or `h`; 0 for no limit.
pub fn parse_timeout(text: &str) -> std::result::Result<Option<Duration>, String> {
    let (number, unit) = match text.trim().char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.trim().split_at(at),
        None => (text.trim(), "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("invalid --function-timeout '{text}': a number of seconds, or one ending in s, m or h")),
    };
    let n: u64 = number.parse().map_err(|_| format!("invalid --function-timeout '{text}': a number of seconds, or one ending in s, m or h"))?;
    Ok((n > 0).then(|| Duration::from_secs(n * scale)))
}

/// Whether a `generators`/`transformers`/`validators` config names a plugin that is another
/// program (everything but kustomize's builtin ones).
pub fn is_external(config: &Value) -> bool {
    config.get("apiVersion").and_then(Value::as_str) != Some("builtin")
}

/// One plugin config in one kustomization, ready to run.
pub struct Plugin<'a> {
    pub options: &'a PluginOptions,
    pub config: &'a Value,
    pub loader: &'a Loader,
    /// The kustomization file, for messages.
    pub kustomization: String,
    /// `generators`, `transformers` or `validators`.
    pub field: &'static str,
    /// Whether the build tracks origins (any `buildMetadata`): they travel as annotations then.
    pub tracks_origins: bool,
    /// The file the config came from, relative to the top kustomization (for its origin).
    pub source: String,
}

/// How a config's program is called.
enum Call {
    /// A KRM function (container or exec), speaking the ResourceList protocol.
    Function(Program),
    /// An old-style exec plugin: YAML streams in and out; its config file lives as long as the call.
    ExecPlugin { program: Program, _config_file: tempfile::TempPath },
}

impl Plugin<'_> {
    /// kustomize's name for the plugin (`api: x/v1, kind: K, name: n`).
    fn name(&self) -> String {
        let field = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        format!(
            "api: {}, kind: {}, name: {}",
            field(self.config.get("apiVersion")),
            field(self.config.get("kind")),
            field(self.config.pointer("/metadata/name"))
        )
    }

    /// The config as a function reads it: with its origin, which kustomize keeps on it as an
    /// annotation while it tracks origins.
    fn function_config(&self) -> std::borrow::Cow<'_, Value> {
        if !self.tracks_origins {
            return std::borrow::Cow::Borrowed(self.config);
        }
        let origin = crate::build_metadata::origin_text(&crate::build_metadata::file_origin(&self.source));
        std::borrow::Cow::Owned(resource_list::with_annotation(self.config.clone(), crate::build_metadata::ORIGIN, &origin))
    }

    /// Where the plugin is configured, for messages (`.../kustomization.yaml: transformers`).
    fn context(&self) -> String {
        format!("{}: {}", self.kustomization, self.field)
    }

    /// kustomize's words for a plugin program without `--enable-alpha-plugins`.
    fn refused(&self) -> Error {
        let kind = self.config.get("kind").and_then(Value::as_str).unwrap_or("");
        let loading = if self.field == "generators" { "loading generator plugins: failed to load generator: " } else { "" };
        Error::msg(format!(
            "{}: {loading}external plugins disabled; unable to load external plugin '{kind}' (it runs only with --enable-alpha-plugins)",
            self.context()
        ))
    }

    /// `error` as met with this plugin: naming the kustomization, the field and the plugin.
    pub fn error(&self, error: Error) -> Error {
        self.fail(error)
    }

    fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::msg(format!("{}: plugin {}: {what}", self.context(), self.name()))
    }

    /// The program to call, or `None` for an exec function without `--enable-exec`.
    fn call(&self, input: &[u8], diagnostics: &mut Diagnostics) -> Result<Option<Call>> {
        if !self.options.enable_alpha_plugins {
            return Err(self.refused());
        }
        let root = self.loader.root();
        let spec = spec::function_spec(self.config).map_err(|e| self.fail(format!("loader: failed to get FunctionSpec: {e}")))?;
        let Some(spec) = spec else {
            return self.exec_plugin_call(input).map(Some);
        };
        spec::check_mounts(&spec, &self.name()).map_err(|e| Error::msg(format!("{}: {e}", self.context())))?;
        let program = match &spec {
            FunctionSpec { container, .. } if !container.image.is_empty() => {
                let args = spec::docker_args(container, self.options, root).map_err(|e| self.fail(e))?;
                Program::new("docker").args(args)
            }
            FunctionSpec { exec, .. } if !exec.path.is_empty() && self.options.enable_exec => {
                self.loader.note_program(&exec_path(&exec.path, root));
                Program::new(exec_path(&exec.path, root)).args(&exec.args).envs(spec::exec_env(&exec.envs, &self.options.env))
            }
            FunctionSpec { exec, .. } if !exec.path.is_empty() => {
                diagnostics.unmatched(
                    &self.context(),
                    &format!("exec function '{}' ({}) was skipped: it runs only with --enable-exec", exec.path, self.name()),
                );
                return Ok(None);
            }
            // A spec naming neither: kyaml runs nothing.
            _ => return Ok(None),
        };
        Ok(Some(Call::Function(self.limits(program.stdin(input.to_vec())))))
    }

    /// For a loading walk: records the program this plugin would run and reads the files it
    /// names (`argsFromFile`), without running anything. What the program itself reads is its own.
    pub fn note_reads(&self) -> Result<()> {
        let root = self.loader.root();
        match spec::function_spec(self.config).map_err(|e| self.fail(format!("loader: failed to get FunctionSpec: {e}")))? {
            Some(FunctionSpec { exec, .. }) if !exec.path.is_empty() => self.loader.note_program(&exec_path(&exec.path, root)),
            Some(_) => {}
            None => {
                if let Ok(path) = exec_plugin::locate(self.config) {
                    self.loader.note_program(&path);
                }
                exec_plugin::arguments(self.config, self.loader).map_err(|e| self.fail(e))?;
            }
        }
        Ok(())
    }

    fn exec_plugin_call(&self, input: &[u8]) -> Result<Call> {
        let path = exec_plugin::locate(self.config).map_err(|e| self.fail(e))?;
        self.loader.note_program(&path);
        let args = exec_plugin::arguments(self.config, self.loader).map_err(|e| self.fail(e))?;
        let config_text = crate::yaml::emit::emit_stream([self.config]);
        let file = tempfile::Builder::new()
            .prefix("kust-plugin-config-")
            .tempfile()
            .and_then(|mut f| std::io::Write::write_all(&mut f, config_text.as_bytes()).map(|_| f.into_temp_path()))
            .map_err(|e| self.fail(format!("writing its config to a temporary file: {e}")))?;
        let program = Program::new(&path)
            .arg(file.as_os_str())
            .args(args)
            .envs(exec_plugin::environment(&config_text, self.loader.root()))
            .stdin(input.to_vec());
        Ok(Call::ExecPlugin { program: self.limits(program), _config_file: file })
    }

    fn limits(&self, program: Program) -> Program {
        let program = program.current_dir(self.loader.root());
        match self.options.timeout {
            Some(limit) => program.timeout(limit),
            None => program,
        }
    }

    /// Runs the call; its stdout, or an error with the program's words.
    fn run(&self, call: &Call, diagnostics: &mut Diagnostics, may_be_empty: bool) -> Result<String> {
        let program = match call {
            Call::Function(p) | Call::ExecPlugin { program: p, .. } => p,
        };
        let finished = program.run().map_err(|e| match e {
            ProcessError::TimedOut { after, stderr, .. } => {
                self.fail(format!("'{}' ran longer than --function-timeout ({after:?}) and was stopped{}", program.display(), tail(&stderr)))
            }
            other => self.fail(other),
        })?;
        let stderr = finished.stderr_text();
        if !finished.success() {
            return Err(self.fail(format!("'{}' failed: {}{}", program.display(), finished.status_text(), tail(&stderr))));
        }
        if !stderr.is_empty() {
            diagnostics.notice(stderr.clone());
        }
        let stdout = String::from_utf8(finished.stdout).map_err(|_| self.fail(format!("'{}' printed output that is not UTF-8", program.display())))?;
        if stdout.trim().is_empty() && !may_be_empty {
            return Err(self.fail(format!("'{}' printed nothing (a ResourceList was expected){}", program.display(), tail(&stderr))));
        }
        Ok(stdout)
    }

    /// The objects in a program's answer, with the bookkeeping annotations taken off.
    fn answer(&self, call: &Call, stdout: &str) -> Result<Vec<Resource>> {
        let what = match call {
            Call::Function(p) | Call::ExecPlugin { program: p, .. } => p.display(),
        };
        let invalid = |message: String| self.fail(format!("the output of '{what}' is not valid: {message}"));
        let objects = resource_list::decode_output(stdout).map_err(|e| invalid(format!("{}:{}: {}", e.line, e.column, e.message)))?;
        // Read as a resource file is read (lists expanded, metadata checked), from our text of it.
        let origin = PathBuf::from(format!("the output of {}", self.name()));
        let text = crate::yaml::emit::emit_stream(objects.iter());
        let (resources, deferred) = crate::resource::decode::resources_from_file(&origin, &text).map_err(|e| invalid(e.to_string()))?;
        match deferred {
            Some(e) => Err(invalid(e.to_string())),
            None => Ok(resources),
        }
    }

    /// A generator: the resources it makes (kustomize's `Generate` and `UpdateResourceOptions`).
    pub fn generate(&self, diagnostics: &mut Diagnostics) -> Result<Vec<Resource>> {
        let is_function = spec::function_spec(self.config).ok().flatten().is_some();
        let input = if is_function { ResourceList::for_generator(&self.function_config()).encode() } else { Vec::new() };
        let Some(call) = self.call(&input, diagnostics)? else { return Ok(Vec::new()) };
        let stdout = self.run(&call, diagnostics, matches!(call, Call::ExecPlugin { .. }))?;
        let mut generated = self.answer(&call, &stdout)?;
        for resource in &mut generated {
            state::take_state(resource, false);
            let behavior = take_annotation(resource, "kustomize.config.k8s.io/behavior");
            let needs_hash = match take_annotation(resource, "kustomize.config.k8s.io/needs-hash") {
                None => false,
                Some(text) => parse_go_bool(&text).ok_or_else(|| {
                    self.fail(format!("the annotation \"kustomize.config.k8s.io/needs-hash\" contains an invalid value (\"{text}\")"))
                })?,
            };
            resource.needs_hash_suffix = needs_hash;
            resource.generated = true;
            resource.behavior = Behavior::from_text(behavior.as_deref().unwrap_or_default());
        }
        Ok(generated)
    }

    /// A transformer: `resources` become what it returns, matched by id (kustomize's
    /// `UpdateResMapValues`: a known id keeps its place, a new one is appended, a missing one
    /// is removed).
    pub fn transform(&self, resources: &mut ResMap, diagnostics: &mut Diagnostics) -> Result<()> {
        let items: Vec<Value> = resources.iter().map(|r| resource_list::with_id_annotation(state::with_state(r, self.tracks_origins), &r.current_id())).collect();
        let is_function = spec::function_spec(self.config).ok().flatten().is_some();
        let input = if is_function { ResourceList::new(&self.function_config(), items).encode() } else { resource_list::encode_stream(&items) };
        let Some(call) = self.call(&input, diagnostics)? else { return Ok(()) };
        let stdout = self.run(&call, diagnostics, false)?;
        let output = self.answer(&call, &stdout)?;
        self.merge_back(resources, output)
    }

    fn merge_back(&self, resources: &mut ResMap, output: Vec<Resource>) -> Result<()> {
        let mut kept = HashSet::new();
        for mut resource in output {
            state::take_state(&mut resource, self.tracks_origins);
            let id = resource.current_id();
            if !kept.insert(id_key(&id)) {
                return Err(self.fail(format!("generated duplicate resource: {}", id_json(&id))));
            }
            let at = resources.positions_named(&id.name).into_iter().find(|&i| id_key(&resources.get(i).current_id()) == id_key(&id));
            match at {
                // kustomize's `ResetRNode`: the object and the state it carries are replaced
                // (origins too, when the build tracks them: they are annotations then).
                Some(i) => {
                    let old = resources.get_mut(i);
                    state::keep_affixes_of(&mut resource, old);
                    if !self.tracks_origins {
                        resource.origin = old.origin.take();
                        resource.transformations = std::mem::take(&mut old.transformations);
                    }
                    *old = resource;
                }
                None => resources.append(resource).map_err(|e| self.fail(e))?,
            }
        }
        resources.retain(|r| kept.contains(&id_key(&r.current_id())));
        Ok(())
    }

    /// A validator: runs as a transformer, which must leave the resources as they were but for
    /// a `validated-by` label, which stays (kustomize's `runValidators`). kustomize v5.8.1
    /// compares the YAML nodes themselves, line numbers included, so every validator that
    /// answers fails there; here the objects are compared.
    pub fn validate(&self, resources: &mut ResMap, diagnostics: &mut Diagnostics) -> Result<()> {
        let before: Vec<(String, Value)> = resources.iter().map(|r| (id_key(&r.current_id()), r.value.clone())).collect();
        self.transform(resources, diagnostics)?;
        let mut after: Vec<(String, Value)> = resources
            .iter()
            .map(|r| {
                let mut value = r.value.clone();
                if let Some(labels) = value.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
                    labels.shift_remove("validated-by");
                    if labels.is_empty() {
                        value["metadata"].as_object_mut().map(|m| m.shift_remove("labels"));
                    }
                }
                (id_key(&r.current_id()), value)
            })
            .collect();
        let mut before = before;
        before.sort_by(|a, b| a.0.cmp(&b.0));
        after.sort_by(|a, b| a.0.cmp(&b.0));
        if before != after {
            let changed = before.iter().map(|b| &b.0).chain(after.iter().map(|a| &a.0)).find(|id| {
                before.iter().find(|b| &b.0 == *id).map(|b| &b.1) != after.iter().find(|a| &a.0 == *id).map(|a| &a.1)
            });
            let which = changed.map(|id| format!(" (first difference: {id})")).unwrap_or_default();
            return Err(self.fail(format!("validator shouldn't modify the resource map{which}")));
        }
        Ok(())
    }
}

/// An exec function's path: relative to the kustomization when it names a file there.
fn exec_path(path: &str, root: &Path) -> PathBuf {
    if path.contains('/') && !Path::new(path).is_absolute() {
        root.join(path)
    } else {
        PathBuf::from(path)
    }
}

fn tail(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends:\n{stderr}")
    }
}

/// A resource id compared as kustomize compares current ids (the namespace as effective).
fn id_key(id: &ResId) -> String {
    format!("{}|{}|{}|{}|{}", id.gvk.group, id.gvk.version, id.gvk.kind, id.effective_namespace(), id.name)
}

/// Go's `json.Marshal` of a ResId, for kustomize's duplicate message.
fn id_json(id: &ResId) -> String {
    let mut fields = serde_json::Map::new();
    for (key, value) in [("group", &id.gvk.group), ("version", &id.gvk.version), ("kind", &id.gvk.kind), ("name", &id.name), ("namespace", &id.namespace)] {
        if !value.is_empty() {
            fields.insert(key.into(), Value::String(value.clone()));
        }
    }
    Value::Object(fields).to_string()
}

fn take_annotation(resource: &mut Resource, key: &str) -> Option<String> {
    let annotations = resource.value.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut)?;
    let value = annotations.shift_remove(key)?;
    if annotations.is_empty() {
        resource.metadata_mut().shift_remove("annotations");
    }
    Some(match value {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_as_seconds_minutes_or_hours() {
        assert_eq!(parse_timeout("90").unwrap(), Some(Duration::from_secs(90)));
        assert_eq!(parse_timeout("2m").unwrap(), Some(Duration::from_secs(120)));
        assert_eq!(parse_timeout("1h").unwrap(), Some(Duration::from_secs(3600)));
        assert_eq!(parse_timeout("0").unwrap(), None);
        assert!(parse_timeout("soon").is_err());
        assert!(parse_timeout("5d").is_err());
    }

    #[test]
    fn go_bools() {
        assert_eq!(parse_go_bool("T"), Some(true));
        assert_eq!(parse_go_bool("0"), Some(false));
        assert_eq!(parse_go_bool("yes"), None);
    }

    #[test]
    fn builtin_configs_are_not_external() {
        assert!(!is_external(&serde_json::json!({"apiVersion": "builtin", "kind": "LabelTransformer"})));
        assert!(is_external(&serde_json::json!({"apiVersion": "example.com/v1", "kind": "X"})));
    }
}
