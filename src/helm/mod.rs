//! `helmCharts`: charts inflated by running `helm template`, as kustomize v5.8.1's
//! HelmChartInflationGenerator runs it (`api/internal/builtins/HelmChartInflationGenerator.go`):
//! the same argv, environment, temporary values file, version check, pull and error wording.
//! Beyond kustomize, a rendering is kept in a cache keyed by everything that decides it
//! ([`cache`]), so a repeated build does not run helm.
pub mod cache;
mod values;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::process::{Program, ProcessError};
use crate::resource::Resource;

/// The annotation kustomize puts on every resource a chart rendered (removed from the output);
/// the namespace transformer leaves such resources alone.
pub use crate::resource::HELM_GENERATED;
/// kustomize's default chart folder, below the kustomization root.
const DEFAULT_CHART_HOME: &str = "charts";
/// How long one helm call may run.
const HELM_TIMEOUT: Duration = Duration::from_secs(300);

/// The build's helm flags (`--enable-helm`, `--helm-command`, `--helm-kube-version`,
/// `--helm-api-versions`, `--helm-debug`) and the render cache.
#[derive(Clone, Debug)]
pub struct HelmOptions {
    pub enabled: bool,
    pub command: String,
    pub kube_version: String,
    pub api_versions: Vec<String>,
    pub debug: bool,
    /// Where renderings are cached; `None` renders every time.
    pub cache: Option<cache::RenderCache>,
    /// `--offline`: use the cache only, never run helm.
    pub offline: bool,
    /// Whether a slow `helm pull` prints its `fetching ...` line (`--progress`, `--quiet`).
    pub progress: crate::remote::progress::Progress,
}

impl Default for HelmOptions {
    fn default() -> Self {
        HelmOptions {
            enabled: false,
            command: "helm".into(),
            kube_version: String::new(),
            api_versions: Vec::new(),
            debug: false,
            cache: None,
            offline: false,
            progress: Default::default(),
        }
    }
}

/// kustomize's `HelmGlobals`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HelmGlobals {
    pub chart_home: String,
    pub config_home: String,
}

/// kustomize's `HelmChart`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HelmChart {
    pub name: String,
    pub version: String,
    pub repo: String,
    pub release_name: String,
    pub namespace: String,
    pub additional_values_files: Vec<String>,
    pub values_file: String,
    pub values_inline: Map<String, Value>,
    pub values_merge: String,
    #[serde(rename = "includeCRDs")]
    pub include_crds: bool,
    pub skip_hooks: bool,
    pub api_versions: Vec<String>,
    pub kube_version: String,
    pub name_template: String,
    pub skip_tests: bool,
    pub debug: bool,
    pub devel: bool,
}

/// kustomize's deprecated `HelmChartArgs` (`helmChartInflationGenerator:`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct HelmChartArgs {
    chart_name: String,
    chart_version: String,
    #[serde(rename = "chartRepoUrl")]
    chart_repo_url: String,
    chart_home: String,
    helm_home: String,
    values: String,
    values_local: Map<String, Value>,
    values_merge: String,
    release_name: String,
}

/// The charts of one kustomization with the globals they share: `helmCharts` and `helmGlobals`,
/// with the deprecated `helmChartInflationGenerator` folded in as kustomize's `FixKustomization`
/// folds it (its charts after the others; its homes only when `helmGlobals` is absent, the last
/// one given winning).
pub fn charts_of(helm_globals: Option<&Value>, helm_charts: &[Value], old: &[Value], file: &Path) -> Result<(HelmGlobals, Vec<HelmChart>)> {
    let decode_error = |e: serde_json::Error| Error::noted(format!("invalid Kustomization: {e}"), format!("at {}", file.display()));
    let mut globals: Option<HelmGlobals> = helm_globals.filter(|v| !v.is_null()).map(|v| serde_json::from_value(v.clone())).transpose().map_err(decode_error)?;
    let mut charts: Vec<HelmChart> = helm_charts.iter().map(|v| serde_json::from_value(v.clone())).collect::<std::result::Result<_, _>>().map_err(decode_error)?;
    let mut old_globals = HelmGlobals::default();
    for value in old {
        let args: HelmChartArgs = serde_json::from_value(value.clone()).map_err(decode_error)?;
        if !args.helm_home.is_empty() {
            old_globals.config_home = args.helm_home.clone();
        }
        if !args.chart_home.is_empty() {
            old_globals.chart_home = args.chart_home.clone();
        }
        charts.push(HelmChart {
            name: args.chart_name,
            version: args.chart_version,
            repo: args.chart_repo_url,
            values_file: args.values,
            values_inline: args.values_local,
            values_merge: args.values_merge,
            release_name: args.release_name,
            ..Default::default()
        });
    }
    if globals.is_none() && (!old_globals.chart_home.is_empty() || !old_globals.config_home.is_empty()) {
        globals = Some(old_globals);
    }
    Ok((globals.unwrap_or_default(), charts))
}

/// A `generators:` entry of kind HelmChartInflationGenerator: its globals and chart, inline.
pub fn chart_of_generator_config(config: &Value) -> Result<(HelmGlobals, HelmChart)> {
    let globals = serde_json::from_value(config.clone()).map_err(|e| Error::msg(format!("builtin HelmChartInflationGenerator config: {e}")))?;
    let chart = serde_json::from_value(config.clone()).map_err(|e| Error::msg(format!("builtin HelmChartInflationGenerator config: {e}")))?;
    Ok((globals, chart))
}

/// kustomize's loader wording for a file it cannot read (the path cleaned as Go cleans it).
fn loader_words(error: Error) -> String {
    match error {
        Error::Io { path, message } => crate::transform::replacements::loader_message(Error::Io { path: crate::kustomization::loader::normalize(&path), message }),
        other => other.to_string(),
    }
}

/// One chart ready to inflate: kustomize's plugin after `Config` (paths made absolute, defaults
/// filled in, the flags applied).
struct Plugin<'a> {
    chart: HelmChart,
    chart_home: String,
    config_home: String,
    options: &'a HelmOptions,
    loader: &'a Loader,
    /// `kustomize-helm-*`, made on first need and removed when the plugin is dropped.
    temp: Option<tempfile::TempDir>,
}

/// For a loading walk: checks the chart's settings and records what rendering it reads (the
/// chart's folder, read whole by helm, and the values files), without running helm. A chart
/// pulled from a repository is recorded as that remote.
pub fn note_reads(globals: &HelmGlobals, chart: &HelmChart, options: &HelmOptions, loader: &Loader) -> Result<()> {
    let plugin = Plugin::configure(globals, chart, options, loader)?;
    plugin.note_reads();
    Ok(())
}

/// Inflates one chart: the resources `helm template` prints, marked helm-generated.
pub fn inflate(globals: &HelmGlobals, chart: &HelmChart, options: &HelmOptions, loader: &Loader) -> Result<Vec<Resource>> {
    let configured = if !options.enabled {
        Err(Error::msg("must specify --enable-helm"))
    } else if options.command.is_empty() {
        Err(Error::msg("must specify --helm-command"))
    } else {
        Plugin::configure(globals, chart, options, loader)
    };
    let mut plugin = configured.map_err(|e| {
        Error::msg(format!("trouble configuring builtin HelmChartInflationGenerator with config: `\n{}`: {e}", config_yaml(globals, chart)))
    })?;
    let stream = plugin.generate()?;
    parse_stream(&stream)
}

/// The plugin's config as kustomize prints it in errors (sigs.k8s.io/yaml: keys sorted, empty
/// fields left out).
fn config_yaml(globals: &HelmGlobals, chart: &HelmChart) -> String {
    fn sorted(value: Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    let mut map = Map::new();
    let mut text = |key: &str, value: &str| {
        if !value.is_empty() {
            map.insert(key.into(), Value::String(value.into()));
        }
    };
    text("chartHome", &globals.chart_home);
    text("configHome", &globals.config_home);
    let c = chart;
    for (key, value) in [("name", &c.name), ("version", &c.version), ("repo", &c.repo), ("releaseName", &c.release_name), ("namespace", &c.namespace), ("valuesFile", &c.values_file), ("valuesMerge", &c.values_merge), ("kubeVersion", &c.kube_version), ("nameTemplate", &c.name_template)] {
        text(key, value);
    }
    for (key, list) in [("additionalValuesFiles", &c.additional_values_files), ("apiVersions", &c.api_versions)] {
        if !list.is_empty() {
            map.insert(key.into(), Value::Array(list.iter().cloned().map(Value::String).collect()));
        }
    }
    if !c.values_inline.is_empty() {
        map.insert("valuesInline".into(), Value::Object(c.values_inline.clone()));
    }
    for (key, on) in [("includeCRDs", c.include_crds), ("skipHooks", c.skip_hooks), ("skipTests", c.skip_tests), ("debug", c.debug), ("devel", c.devel)] {
        if on {
            map.insert(key.into(), Value::Bool(true));
        }
    }
    let mut out = String::new();
    crate::yaml::emit::emit_document(&sorted(Value::Object(map)), &mut out);
    out
}

impl<'a> Plugin<'a> {
    fn configure(globals: &HelmGlobals, chart: &HelmChart, options: &'a HelmOptions, loader: &'a Loader) -> Result<Plugin<'a>> {
        let mut chart = chart.clone();
        // The flags apply where the chart sets nothing: kustomize sets them, then decodes the
        // chart's config over them (v5.6.0 and v5.8.1 alike, whatever its comment says).
        if !options.kube_version.is_empty() && chart.kube_version.is_empty() {
            chart.kube_version = options.kube_version.clone();
        }
        if !options.api_versions.is_empty() && chart.api_versions.is_empty() {
            chart.api_versions = options.api_versions.clone();
        }
        if options.debug {
            chart.debug = true;
        }
        let mut plugin = Plugin {
            chart,
            chart_home: globals.chart_home.clone(),
            config_home: globals.config_home.clone(),
            options,
            loader,
            temp: None,
        };
        plugin.validate()?;
        Ok(plugin)
    }

    /// kustomize's `validateArgs`.
    fn validate(&mut self) -> Result<()> {
        if self.chart.name.is_empty() {
            return Err(Error::msg("chart name cannot be empty"));
        }
        // helm would read a word starting with '-' where it expects a name as a flag; kustomize
        // v5.8.3 refuses both, the release name first.
        for (what, word) in [("releaseName", &self.chart.release_name), ("chart name", &self.chart.name)] {
            if word.starts_with('-') {
                return Err(Error::msg(format!("{what} must not start with '-', got {}", crate::yaml::go_syntax::quote(word))));
            }
        }
        // Each of these becomes (part of) one path component: the chart's folder, the values
        // file's name, `helm pull --untardir`'s `<name>-<version>` folder. A separator, `.` or
        // `..` there would carry a read or a write out of the root or the temporary folder.
        for (what, word) in [("chart name", &self.chart.name), ("releaseName", &self.chart.release_name), ("version", &self.chart.version)] {
            if !word.is_empty() && !is_one_path_component(word) {
                return Err(Error::msg(format!("{what} '{}' must be one path component (no '/', '\\', '.', '..' or NUL)", word.escape_debug())));
            }
        }
        if self.chart_home.is_empty() {
            self.chart_home = DEFAULT_CHART_HOME.into();
        }
        if self.chart.values_file.is_empty() {
            self.chart.values_file = self.abs_chart_home().join(&self.chart.name).join("values.yaml").display().to_string();
        }
        let root = self.loader.root().to_path_buf();
        for file in &mut self.chart.additional_values_files {
            self.loader.read_bytes(file).map_err(|e| Error::msg(format!("could not load additionalValuesFile: {}", loader_words(e))))?;
            *file = root.join(&*file).display().to_string();
        }
        match self.chart.values_merge.as_str() {
            "" => self.chart.values_merge = "override".into(),
            "merge" | "override" | "replace" => {}
            _ => return Err(Error::msg("valuesMerge must be one of [merge override replace]")),
        }
        if self.config_home.is_empty() {
            let temp = self.temp_dir().map_err(|e| Error::msg(format!("unable to create tmp dir for HELM_CONFIG_HOME: {e}")))?;
            self.config_home = temp.join("helm").display().to_string();
        }
        Ok(())
    }

    /// Records the chart's folder and its values file (`additionalValuesFiles` were read by
    /// [`Plugin::validate`]).
    fn note_reads(&self) {
        let chart_dir = self.abs_chart_home().join(&self.chart.name);
        self.loader.note_tree(&chart_dir);
        if !self.chart.repo.is_empty() {
            if let Some(reads) = self.loader.reads() {
                reads.remote(format!("{} {} {}", self.chart.repo, self.chart.name, self.chart.version).trim_end().to_string());
            }
        }
        if Path::new(&self.chart.values_file).starts_with(&chart_dir) {
            return;
        }
        let _ = self.loader.read_bytes(&self.chart.values_file);
    }

    fn temp_dir(&mut self) -> std::io::Result<PathBuf> {
        if self.temp.is_none() {
            self.temp = Some(tempfile::Builder::new().prefix("kustomize-helm-").tempdir()?);
        }
        Ok(self.temp.as_ref().map(|t| t.path().to_path_buf()).unwrap_or_default())
    }

    /// `{root}/{chartHome}`, and below it `{name}-{version}` for a chart pulled from a repo.
    fn abs_chart_home(&self) -> PathBuf {
        let home = self.loader.root().join(&self.chart_home);
        if !self.chart.version.is_empty() && !self.chart.repo.is_empty() {
            return home.join(format!("{}-{}", self.chart.name, self.chart.version));
        }
        home
    }

    fn environment(&self) -> [(String, String); 3] {
        [
            ("HELM_CONFIG_HOME".into(), self.config_home.clone()),
            ("HELM_CACHE_HOME".into(), format!("{}/.cache", self.config_home)),
            ("HELM_DATA_HOME".into(), format!("{}/.data", self.config_home)),
        ]
    }

    /// kustomize's `Generate`: version check, pull when the chart folder is missing, the
    /// values file, then `helm template`; returns helm's stdout. With the render cache, a
    /// rendering made before from the same chart files, values, arguments and helm is reused
    /// without running helm (the version of an unchanged helm binary is remembered too).
    fn generate(&mut self) -> Result<String> {
        self.note_reads();
        let chart_dir = self.abs_chart_home().join(&self.chart.name);
        let offline = self.options.offline;
        if offline && !chart_dir.is_dir() {
            return Err(Error::msg(format!("--offline: chart '{}' is not in {} and would have to be pulled", self.chart.name, chart_dir.display())));
        }
        let cache = self.options.cache.clone();
        if let Some(cache) = &cache {
            cache.open().map_err(|e| Error::msg(format!("the helm render cache {}: {e}", cache.root().display())))?;
        }
        let version = match cache.as_ref().and_then(|c| c.remembered_helm_version(&self.options.command, offline)) {
            Some(version) => version,
            None if offline => return Err(Error::msg(format!("--offline: no helm version is remembered for '{}'; build once without --offline", self.options.command))),
            None => {
                let version = self.check_helm_version()?;
                if let Some(cache) = &cache {
                    let _ = cache.remember_helm_version(&self.options.command, &version);
                }
                version
            }
        };
        if !chart_dir.is_dir() {
            if self.chart.repo.is_empty() {
                // kustomize names the path only when something that is not a folder is there.
                let shown = if chart_dir.exists() { chart_dir.display().to_string() } else { String::new() };
                return Err(Error::msg(format!("no repo specified for pull, no chart found at '{shown}'")));
            }
            let what = format!("chart {} {} from {}", self.chart.name, self.chart.version, self.chart.repo);
            crate::remote::progress::while_fetching(self.options.progress, &what, || self.run_helm(&self.pull_args()))?;
        }
        let Some(cache) = cache else { return self.template() };
        let Some(key) = self.cache_key(&chart_dir, version.clone())? else {
            if offline {
                return Err(Error::msg(format!("--offline: the values of chart '{}' cannot be read", self.chart.name)));
            }
            return self.template();
        };
        if let Some(stream) = cache.get(&key) {
            return Ok(stream);
        }
        if offline {
            return Err(Error::msg(format!(
                "--offline: chart '{}' has no rendering in the cache {} for these values and arguments; build once without --offline",
                self.chart.name,
                cache.root().display()
            )));
        }
        let stream = self.template()?;
        let chart = if self.chart.version.is_empty() { self.chart.name.clone() } else { format!("{} {}", self.chart.name, self.chart.version) };
        let about = format!("{chart} release={} helm={version}", self.chart.release_name);
        cache.put(&key, &stream, &about).map_err(|e| Error::msg(format!("writing the helm render cache {}: {e}", cache.root().display())))?;
        Ok(stream)
    }

    /// Writes the values file and runs `helm template`.
    fn template(&mut self) -> Result<String> {
        let values_path = self.write_values_file()?;
        self.chart.values_file = values_path.display().to_string();
        let stdout = self.run_helm(&self.template_args())?;
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }

    /// The key of this rendering: the chart's files, the values kustomize would pass, the
    /// template arguments (with the values file's contents instead of its temporary path) and
    /// the helm version. `None` when the values cannot be read (helm then reports it).
    fn cache_key(&self, chart_dir: &Path, helm_version: String) -> Result<Option<String>> {
        let Ok(values) = self.values_bytes() else { return Ok(None) };
        let mut additional = Vec::new();
        for file in &self.chart.additional_values_files {
            match crate::bounded_read::read_regular_file(Path::new(file), crate::bounded_read::Links::Follow, crate::bounded_read::MAX_FILE_BYTES) {
                Ok(bytes) => additional.push(bytes),
                Err(_) => return Ok(None),
            }
        }
        let chart = cache::chart_digest(chart_dir).map_err(|e| Error::Io { path: chart_dir.to_path_buf(), message: e.to_string() })?;
        // A helm we cannot read and hash is keyed by its command: an offline build has nothing else.
        let helm_program = cache::program_digest(&self.options.command).unwrap_or_else(|| format!("command {}", self.options.command));
        Ok(Some(cache::key(&cache::KeyParts { chart, values, additional, args: self.template_args(), helm_version, helm_program })))
    }

    /// `helm version --short`, checked for major version 3 or 4; returns the version text.
    fn check_helm_version(&self) -> Result<String> {
        let stdout = self.run_helm(&["version".to_string(), "--short".to_string()])?;
        let text = String::from_utf8_lossy(&stdout);
        let pattern = regex::Regex::new(r"v?\d+(\.\d+)+").expect("a valid pattern");
        let Some(found) = pattern.find(&text) else {
            return Err(Error::msg(format!("cannot find version string in {text}")));
        };
        let version = found.as_str().trim_start_matches('v');
        let major = version.split('.').next().unwrap_or_default();
        if major != "3" && major != "4" {
            return Err(Error::msg(format!("this plugin requires helm V3 or V4 but got v{version}")));
        }
        Ok(found.as_str().to_string())
    }

    /// kustomize's `pullCommand`.
    fn pull_args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec!["pull".into(), "--untar".into(), "--untardir".into(), self.abs_chart_home().display().to_string()];
        if self.chart.repo.starts_with("oci://") {
            args.push(format!("{}/{}", self.chart.repo.trim_end_matches('/'), self.chart.name));
        } else {
            if !self.chart.repo.is_empty() {
                args.extend(["--repo".to_string(), self.chart.repo.clone()]);
            }
            args.push(self.chart.name.clone());
        }
        if !self.chart.version.is_empty() {
            args.extend(["--version".to_string(), self.chart.version.clone()]);
        }
        if self.chart.devel {
            args.push("--devel".into());
        }
        args
    }

    /// kustomize's `AsHelmArgs`.
    fn template_args(&self) -> Vec<String> {
        let c = &self.chart;
        let mut args: Vec<String> = vec!["template".into()];
        if c.release_name.is_empty() {
            args.push("--generate-name".into());
        } else {
            args.push(c.release_name.clone());
        }
        args.push(self.abs_chart_home().join(&c.name).display().to_string());
        let mut pair = |flag: &str, value: &str| args.extend([flag.to_string(), value.to_string()]);
        if !c.namespace.is_empty() {
            pair("--namespace", &c.namespace);
        }
        if !c.name_template.is_empty() {
            pair("--name-template", &c.name_template);
        }
        if !c.values_file.is_empty() {
            pair("-f", &c.values_file);
        }
        for file in &c.additional_values_files {
            pair("-f", file);
        }
        for version in &c.api_versions {
            pair("--api-versions", version);
        }
        if !c.kube_version.is_empty() {
            pair("--kube-version", &c.kube_version);
        }
        for (on, flag) in [(c.include_crds, "--include-crds"), (c.skip_tests, "--skip-tests"), (c.skip_hooks, "--no-hooks"), (c.debug, "--debug"), (c.devel, "--devel")] {
            if on {
                args.push(flag.into());
            }
        }
        args
    }

    /// The values file kustomize hands helm: the chart's (or `valuesFile`) as is, or, with
    /// `valuesInline`, the inline values merged with it per `valuesMerge`.
    fn values_bytes(&self) -> Result<Vec<u8>> {
        if self.chart.values_inline.is_empty() {
            return Ok(self.loader.read_bytes(&self.chart.values_file)?.1);
        }
        let inline = Value::Object(self.chart.values_inline.clone());
        let merged = match self.chart.values_merge.as_str() {
            "replace" => inline,
            mode => {
                let (file, text) = self.loader.read(&self.chart.values_file)?;
                let from_file = crate::yaml::parse::parse_document(&text).map_err(|e| {
                    Error::msg(format!("could not parse values file into rnode: {}:{}:{}: {}", file.display(), e.line, e.column, e.message))
                })?;
                if mode == "override" {
                    values::merge(inline, from_file)
                } else {
                    values::merge(from_file, inline)
                }
            }
        };
        // JSON is YAML: helm reads the file as values, whatever its layout.
        let mut text = serde_json::to_string_pretty(&values::as_map(merged)).unwrap_or_default();
        text.push('\n');
        Ok(text.into_bytes())
    }

    /// Writes the values file directly inside the temporary folder, never through a link.
    fn write_values_file(&mut self) -> Result<PathBuf> {
        let bytes = self.values_bytes()?;
        let dir = self.temp_dir().map_err(|_| Error::msg("cannot create tmp dir to write helm values"))?;
        let name = format!("{}-kustomize-values.yaml", self.chart.name);
        crate::beneath::Beneath::open(&dir)
            .and_then(|mut beneath| beneath.write_new(&name, &bytes, 0o644))
            .map_err(|e| Error::msg(format!("failed to write values file: {e}")))?;
        Ok(dir.join(name))
    }

    /// kustomize's `runHelmCommand`: helm's stderr, then what was run, with which environment.
    fn run_helm(&self, args: &[String]) -> Result<Vec<u8>> {
        let env = self.environment();
        let mut program = Program::new(&self.options.command).args(args).timeout(HELM_TIMEOUT);
        for (name, value) in &env {
            program = program.env(name, value);
        }
        let env_text = format!("[{}]", env.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(" "));
        let helm = &self.options.command;
        let failed = |stderr: String, stdout: &[u8], cause: String| {
            let output = if args.iter().any(|a| a == "--debug") {
                format!(" Helm stack trace:\n{stderr}\nHelm template:\n{}\n: ", String::from_utf8_lossy(stdout))
            } else if stderr.is_empty() {
                stderr
            } else {
                format!("{stderr}: ")
            };
            Error::msg(format!("{output}unable to run: '{helm} {}' with env={env_text} (is '{helm}' installed?): {cause}", args.join(" ")))
        };
        match program.run() {
            Ok(done) if done.success() => Ok(done.stdout),
            Ok(done) => {
                let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
                Err(failed(stderr, &done.stdout, done.status_text()))
            }
            Err(ProcessError::NotFound { .. }) => {
                let cause = if helm.contains('/') {
                    format!("fork/exec {helm}: no such file or directory")
                } else {
                    format!("exec: \"{helm}\": executable file not found in $PATH")
                };
                Err(failed(String::new(), &[], cause))
            }
            Err(other) => Err(failed(String::new(), &[], other.to_string())),
        }
    }
}

/// Whether `word` is one plain path component: not `.` or `..`, no separator, no NUL.
fn is_one_path_component(word: &str) -> bool {
    !matches!(word, "." | "..") && !word.contains(['/', '\\', '\0'])
}

/// helm's output as resources, each marked helm-generated. kustomize reads the whole stream, or,
/// when that fails, what follows helm's messages before the first `---`.
fn parse_stream(stream: &str) -> Result<Vec<Resource>> {
    let source = Path::new("helm template");
    let parsed = crate::resource::decode::resources_from_file(source, stream).or_else(|first| {
        match stream.find("\n---") {
            Some(at) => crate::resource::decode::resources_from_file(source, &stream[at + 1..]),
            None => Err(first),
        }
    });
    let (mut resources, deferred) = parsed.map_err(|e| Error::msg(format!("error reading helm output: {e}")))?;
    if let Some(error) = deferred {
        return Err(error);
    }
    for resource in &mut resources {
        let metadata = resource.metadata_mut();
        let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Some(map) = annotations.as_object_mut() {
            map.insert(HELM_GENERATED.into(), Value::String("true".into()));
        }
    }
    Ok(resources)
}

/// Whether a resource came out of a chart (the namespace transformer leaves it alone).
pub fn is_helm_generated(resource: &Resource) -> bool {
    resource.is_helm_generated()
}

/// Removes the helm-generated mark before printing, as kustomize removes its build annotations
/// (an `annotations` map left empty goes too).
pub fn remove_generated_marks(resources: &mut crate::resource::ResMap) {
    let _ = resources.try_update_parallel(|r| {
        if !is_helm_generated(r) {
            return Ok(false);
        }
        let metadata = r.metadata_mut();
        let empty = metadata.get_mut("annotations").and_then(Value::as_object_mut).is_some_and(|map| {
            map.shift_remove(HELM_GENERATED);
            map.is_empty()
        });
        if empty {
            metadata.shift_remove("annotations");
        }
        Ok::<bool, std::convert::Infallible>(true)
    });
}
