//! Which program a plugin config names, and the exact call kustomize makes for it: kyaml's
//! `FunctionSpec` (the `config.kubernetes.io/function` annotation), the `docker run` argv of a
//! container function, the environment of an exec function.
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::PluginOptions;
use crate::error::{Error, Result};

/// The function annotations, newest first (kyaml's `functionAnnotationKeys`).
const FUNCTION_ANNOTATIONS: [&str; 2] = ["config.kubernetes.io/function", "config.k8s.io/function"];
/// The oldest spelling: just an image.
const CONTAINER_ANNOTATION: &str = "config.kubernetes.io/container";

/// kyaml's `FunctionSpec`, decoded strictly as kyaml decodes it.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FunctionSpec {
    #[serde(default)]
    pub defer_failure: bool,
    #[serde(default)]
    pub container: ContainerSpec,
    #[serde(default)]
    pub exec: ExecSpec,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContainerSpec {
    #[serde(default)]
    pub image: String,
    #[serde(default)]
    pub network: bool,
    #[serde(default)]
    pub mounts: Vec<StorageMount>,
    #[serde(default)]
    pub envs: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExecSpec {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub envs: Vec<String>,
}

/// A `--mount` of a container function.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StorageMount {
    #[serde(default, rename = "type")]
    pub mount_type: String,
    #[serde(default)]
    pub src: String,
    #[serde(default)]
    pub dst: String,
    #[serde(default)]
    pub rw: bool,
}

impl StorageMount {
    /// The `--mount` flag's text (`type=bind,src=a,dst=/b,rw=true`), as kyaml reads it.
    pub fn parse(text: &str) -> StorageMount {
        let mut mount = StorageMount::default();
        let options: BTreeMap<&str, &str> = text.split(',').filter_map(|o| o.split_once('=')).collect();
        for (key, value) in options {
            match key {
                "type" => mount.mount_type = value.into(),
                "src" | "source" => mount.src = value.into(),
                "dst" | "target" => mount.dst = value.into(),
                "rw" if value == "true" => mount.rw = true,
                _ => {}
            }
        }
        mount
    }

    fn docker_flag(&self, root: &Path) -> String {
        // Go's `filepath.Join` cleans the joined path.
        let src = if Path::new(&self.src).is_absolute() { self.src.clone() } else { crate::kustomization::loader::normalize(&root.join(&self.src)).display().to_string() };
        let mode = if self.rw { "" } else { ",readonly" };
        format!("type={},source={},target={}{mode}", self.mount_type, src, self.dst)
    }
}

/// The function spec a config declares, if any (kyaml's `GetFunctionSpec`).
pub fn function_spec(config: &Value) -> Result<Option<FunctionSpec>> {
    let metadata = config.get("metadata");
    let annotation = |key: &str| metadata.and_then(|m| m.get("annotations")).and_then(|a| a.get(key)).and_then(Value::as_str).filter(|s| !s.is_empty());
    let decode = |value: Value, what: &str| {
        serde_json::from_value::<FunctionSpec>(value).map(Some).map_err(|e| Error::msg(format!("{what} unmarshal error: {e}")))
    };
    for key in FUNCTION_ANNOTATIONS {
        if let Some(text) = annotation(key) {
            let value = crate::yaml::parse::parse_document(text).map_err(|e| Error::msg(format!("{key} unmarshal error: {}", e.message)))?;
            return decode(if value.is_null() { Value::Object(Default::default()) } else { value }, key);
        }
    }
    if let Some(config_fn) = metadata.and_then(|m| m.get("configFn")).filter(|v| !v.is_null()) {
        return decode(config_fn.clone(), "configFn");
    }
    Ok(annotation(CONTAINER_ANNOTATION).map(|image| FunctionSpec { container: ContainerSpec { image: image.into(), ..Default::default() }, ..Default::default() }))
}

/// kustomize's loader refuses a mount outside the kustomization (absolute, or climbing out).
pub fn check_mounts(spec: &FunctionSpec, plugin: &str) -> Result<()> {
    for mount in &spec.container.mounts {
        if Path::new(&mount.src).is_absolute() {
            return Err(Error::msg(format!(
                "plugin {plugin} with mount path '{}' is not permitted; mount paths must be relative to the current kustomization directory",
                mount.src
            )));
        }
        if climbs_out(&mount.src) {
            return Err(Error::msg(format!(
                "plugin {plugin} with mount path '{}' is not permitted; mount paths must be under the current kustomization directory",
                mount.src
            )));
        }
    }
    Ok(())
}

/// Whether a relative path, cleaned as Go's `filepath.Clean` cleans it, starts with `..`.
fn climbs_out(path: &str) -> bool {
    let mut depth = 0usize;
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            if depth == 0 {
                return true;
            }
            depth -= 1;
        } else if depth == 0 && part.starts_with("..") {
            return true;
        } else {
            depth += 1;
        }
    }
    false
}

/// `docker run`'s arguments for a container function, exactly as kyaml builds them.
pub fn docker_args(spec: &ContainerSpec, options: &PluginOptions, root: &Path) -> Result<Vec<String>> {
    // The image is the one argument docker takes after its options: one that looks like an
    // option would be read as one (`--privileged`), so it is refused.
    if spec.image.starts_with('-') {
        return Err(Error::msg(format!("container image '{}' may not start with '-'", spec.image)));
    }
    if spec.network && !options.network {
        return Err(Error::msg("network required but not enabled with --network"));
    }
    let network = if spec.network { "host" } else { "none" };
    let user = if options.as_current_user { current_user() } else { "nobody".to_string() };
    let mut args: Vec<String> =
        ["run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR", "--network", network, "--user", &user, "--security-opt=no-new-privileges"]
            .map(String::from)
            .to_vec();
    for mount in spec.mounts.iter().cloned().chain(options.mounts.iter().map(|m| StorageMount::parse(m))) {
        args.push("--mount".into());
        args.push(mount.docker_flag(root));
    }
    args.extend(container_env_flags(&spec.envs, &options.env));
    args.push(spec.image.clone());
    Ok(args)
}

fn current_user() -> String {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    format!("{uid}:{gid}")
}

/// kyaml's `ContainerEnv`: `NAME=value` pairs (with its two defaults) and names to export.
#[derive(Default)]
struct ContainerEnv {
    values: BTreeMap<String, String>,
    exported: Vec<String>,
}

impl ContainerEnv {
    fn from_list(list: &[String]) -> ContainerEnv {
        let mut env = ContainerEnv::default();
        env.values.insert("LOG_TO_STDERR".into(), "true".into());
        env.values.insert("STRUCTURED_RESULTS".into(), "true".into());
        for entry in list {
            match entry.split_once('=') {
                Some((name, value)) => {
                    env.values.insert(name.into(), value.into());
                }
                None => env.export(entry),
            }
        }
        env
    }

    fn export(&mut self, name: &str) {
        if !self.exported.iter().any(|n| n == name) {
            self.exported.push(name.into());
        }
    }
}

/// The `-e` flags: the annotation's variables under the command line's (`-e` wins, and brings
/// the defaults back), sorted by name, then the exported names.
fn container_env_flags(declared: &[String], flags: &[String]) -> Vec<String> {
    let mut env = ContainerEnv::from_list(declared);
    let imperative = ContainerEnv::from_list(flags);
    env.values.extend(imperative.values);
    for name in &imperative.exported {
        env.export(name);
    }
    let pairs = env.values.iter().map(|(name, value)| format!("{name}={value}"));
    pairs.chain(env.exported.iter().cloned()).flat_map(|flag| ["-e".to_string(), flag]).collect()
}

/// The variables an exec function gets on top of ours: the annotation's and the command
/// line's `NAME=value` pairs (the command line wins), sorted; kyaml drops an entry whose value
/// holds another `=`, and so do we.
pub fn exec_env(declared: &[String], flags: &[String]) -> Vec<(String, String)> {
    let mut env = BTreeMap::new();
    for entry in declared.iter().chain(flags) {
        let parts: Vec<&str> = entry.split('=').collect();
        if let [name, value] = parts.as_slice() {
            env.insert(name.to_string(), value.to_string());
        }
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(annotation: &str) -> Value {
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "annotations": {"config.kubernetes.io/function": annotation}}})
    }

    #[test]
    fn spec_is_read_from_the_annotation_strictly() {
        let spec = function_spec(&config("container:\n  image: img:1\n  network: true\n")).unwrap().unwrap();
        assert_eq!(spec.container.image, "img:1");
        assert!(spec.container.network);
        let unknown = function_spec(&config("container:\n  image: img\n  nosuch: 1\n")).unwrap_err().to_string();
        assert!(unknown.contains("config.kubernetes.io/function unmarshal error") && unknown.contains("nosuch"), "{unknown}");
        assert_eq!(function_spec(&json!({"kind": "K", "metadata": {"name": "n"}})).unwrap(), None);
    }

    #[test]
    fn docker_args_are_kyamls() {
        let spec = ContainerSpec { image: "img".into(), envs: vec!["B=2".into(), "EXPORTED".into()], ..Default::default() };
        let options = PluginOptions { env: vec!["A=1".into()], ..Default::default() };
        let args = docker_args(&spec, &options, Path::new("/k")).unwrap().join(" ");
        assert_eq!(
            args,
            "run --rm -i -a STDIN -a STDOUT -a STDERR --network none --user nobody --security-opt=no-new-privileges \
             -e A=1 -e B=2 -e LOG_TO_STDERR=true -e STRUCTURED_RESULTS=true -e EXPORTED img"
        );
    }

    #[test]
    fn network_needs_the_flag_and_mounts_are_made_absolute() {
        let spec = ContainerSpec {
            image: "img".into(),
            network: true,
            mounts: vec![StorageMount { mount_type: "bind".into(), src: "data".into(), dst: "/d".into(), rw: false }],
            ..Default::default()
        };
        assert!(docker_args(&spec, &PluginOptions::default(), Path::new("/k")).is_err());
        let options = PluginOptions { network: true, ..Default::default() };
        let args = docker_args(&spec, &options, Path::new("/k")).unwrap().join(" ");
        assert!(args.contains("--network host") && args.contains("--mount type=bind,source=/k/data,target=/d,readonly"), "{args}");
    }

    #[test]
    fn an_image_that_reads_as_an_option_is_refused() {
        let spec = ContainerSpec { image: "--privileged".into(), ..Default::default() };
        assert!(docker_args(&spec, &PluginOptions::default(), Path::new("/k")).unwrap_err().to_string().contains("may not start with '-'"));
    }

    #[test]
    fn mounts_outside_the_kustomization_are_refused() {
        let mut spec = FunctionSpec::default();
        spec.container.mounts.push(StorageMount { src: "../x".into(), ..Default::default() });
        assert!(check_mounts(&spec, "p").unwrap_err().to_string().contains("must be under"));
        spec.container.mounts[0].src = "/etc".into();
        assert!(check_mounts(&spec, "p").unwrap_err().to_string().contains("must be relative"));
    }

    #[test]
    fn exec_env_drops_values_with_equals_signs() {
        let env = exec_env(&["B=2".into(), "C=x=y".into()], &["A=1".into(), "B=3".into()]);
        assert_eq!(env, vec![("A".into(), "1".into()), ("B".into(), "3".into())]);
    }
}
