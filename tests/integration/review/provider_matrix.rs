//! docs/providers.md, generated from the tree: every setting key with each provider's rendered
//! value (or "default"), every component each provider's build reaches, and the patches each
//! provider's own kustomizations apply. Nothing here names a provider, a component or a setting:
//! providers are the folders of `overlays/` with a kustomization, settings are the keys of the
//! `configMapGenerator`s their builds reach (literals, env files and the `# KEY=value` lines that
//! document optional keys), values come from the rendered ConfigMaps.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use peerpods_build::kustomization::loader::{normalize, KUSTOMIZATION_FILE_NAMES};
use serde_json::Value;

/// The committed table, relative to the tree's root.
pub const MATRIX_PATH: &str = "docs/providers.md";
/// The one command that rewrites it.
pub const REGENERATE: &str = "UPDATE_MATRIX=1 cargo test provider_matrix";


/// Fails, saying how to regenerate, when the committed table differs from a fresh one.
pub fn check(root: &Path) -> Result<(), String> {
    let fresh = generate(root)?;
    let path = root.join(MATRIX_PATH);
    let committed = fs::read_to_string(&path).unwrap_or_default();
    if committed == fresh {
        return Ok(());
    }
    let first_difference = committed
        .lines()
        .zip(fresh.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| format!("line {}: committed `{a}`, fresh `{b}`", i + 1))
        .unwrap_or_else(|| format!("{} lines committed, {} fresh", committed.lines().count(), fresh.lines().count()));
    Err(format!("{MATRIX_PATH} differs from the tree ({first_difference}); regenerate it with `{REGENERATE}`"))
}

/// Writes a fresh table.
pub fn update(root: &Path) -> Result<(), String> {
    let fresh = generate(root)?;
    let path = root.join(MATRIX_PATH);
    fs::create_dir_all(path.parent().expect("a folder")).map_err(|e| format!("{}: {e}", path.display()))?;
    fs::write(&path, fresh).map_err(|e| format!("{}: {e}", path.display()))
}

/// One kustomization of a provider's build graph.
struct Node {
    /// Its folder, relative to the root (`overlays/aws`, `base`).
    folder: String,
    is_component: bool,
    kustomization: Value,
}

/// What one provider's build reaches and renders.
struct Provider {
    name: String,
    nodes: Vec<Node>,
    rendered: Vec<Value>,
}

/// The whole document.
pub fn generate(root: &Path) -> Result<String, String> {
    let providers: Vec<Provider> = provider_names(root)?.into_iter().map(|name| load_provider(root, name)).collect::<Result<_, _>>()?;
    let mut out = String::new();
    out.push_str("# Provider matrix\n\n");
    let _ = writeln!(
        out,
        "Generated from `base/`, `components/` and `overlays/` by `{REGENERATE}`; a test fails when this \
         file differs from a fresh one, so do not edit it by hand.\n"
    );
    write_tree(&mut out, root, &providers)?;
    write_settings(&mut out, root, &providers)?;
    write_components(&mut out, root, &providers)?;
    write_patches(&mut out, &providers);
    Ok(out)
}

/// The include graph of every provider's overlay, as `peerpods-build deps --format mermaid`
/// draws it (GitHub renders the block): the command's own output, so the drawing is checked
/// with the rest of the page.
fn write_tree(out: &mut String, root: &Path, providers: &[Provider]) -> Result<(), String> {
    let folders: Vec<String> = providers.iter().map(|p| format!("overlays/{}", p.name)).collect();
    let mut args = vec!["deps", "--format", "mermaid"];
    args.extend(folders.iter().map(String::as_str));
    let run = crate::common::ours(&args, root);
    if !run.success() {
        return Err(format!("peerpods-build {}: {}", args.join(" "), run.stderr));
    }
    out.push_str("## The tree\n\nWhich kustomization includes which (components as hexagons), drawn by `peerpods-build deps --format mermaid overlays/*`:\n\n");
    let _ = writeln!(out, "```mermaid\n{}```\n", run.stdout);
    Ok(())
}

fn provider_names(root: &Path) -> Result<Vec<String>, String> {
    let overlays = root.join("overlays");
    let mut names: Vec<String> = fs::read_dir(&overlays)
        .map_err(|e| format!("{}: {e}", overlays.display()))?
        .filter_map(Result::ok)
        .filter(|entry| kustomization_file(&entry.path()).is_some())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

fn kustomization_file(folder: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILE_NAMES.iter().map(|name| folder.join(name)).find(|path| path.is_file())
}

fn load_provider(root: &Path, name: String) -> Result<Provider, String> {
    let overlay = root.join("overlays").join(&name);
    let mut nodes = Vec::new();
    walk(root, &overlay, &mut nodes)?;
    let built = peerpods_build::build(&overlay, &Default::default()).map_err(|f| format!("overlays/{name}: {}", f.error))?;
    let rendered = built.resources.iter().map(|r| r.value.clone()).collect();
    Ok(Provider { name, nodes, rendered })
}

/// Every kustomization the build of `folder` reads, depth first, each once.
fn walk(root: &Path, folder: &Path, nodes: &mut Vec<Node>) -> Result<(), String> {
    let relative = relative(root, folder);
    if nodes.iter().any(|n| n.folder == relative) {
        return Ok(());
    }
    let Some(file) = kustomization_file(folder) else { return Ok(()) };
    let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let kustomization = peerpods_build::yaml::parse::parse_document(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let is_component = kustomization.get("kind").and_then(Value::as_str) == Some("Component");
    let children: Vec<PathBuf> = ["resources", "bases", "components"]
        .iter()
        .flat_map(|field| strings(&kustomization, field))
        .map(|entry| normalize(&folder.join(entry)))
        .filter(|path| path.is_dir())
        .collect();
    nodes.push(Node { folder: relative, is_component, kustomization });
    for child in children {
        walk(root, &child, nodes)?;
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    let normalized = normalize(path);
    normalized.strip_prefix(root).unwrap_or(&normalized).to_string_lossy().replace('\\', "/")
}

fn strings(value: &Value, field: &str) -> Vec<String> {
    value.get(field).and_then(Value::as_array).map(|items| items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// The keys a `configMapGenerator` entry names, in its literals, its env files (set or
/// documented as `# KEY=value`) and its files.
fn generator_keys(root: &Path, folder: &str, generator: &Value) -> Result<Vec<String>, String> {
    let mut keys = Vec::new();
    for literal in strings(generator, "literals") {
        keys.extend(literal.split_once('=').map(|(k, _)| k.trim().to_string()));
    }
    for env in strings(generator, "envs").into_iter().chain(strings(generator, "env")) {
        let path = root.join(folder).join(&env);
        let env_file = peerpods_build::adaptor_settings::EnvFile::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        keys.extend(env_file.entries.into_iter().map(|entry| entry.key));
    }
    for file in strings(generator, "files") {
        let key = match file.split_once('=') {
            Some((key, _)) => key.to_string(),
            None => file.rsplit('/').next().unwrap_or(&file).to_string(),
        };
        keys.push(key);
    }
    Ok(keys)
}

fn write_settings(out: &mut String, root: &Path, providers: &[Provider]) -> Result<(), String> {
    // Per provider, ConfigMap name -> the keys its build's generators name for it.
    let mut named: Vec<BTreeMap<String, BTreeSet<String>>> = Vec::new();
    for provider in providers {
        let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for node in &provider.nodes {
            for generator in node.kustomization.get("configMapGenerator").and_then(Value::as_array).into_iter().flatten() {
                let Some(name) = generator.get("name").and_then(Value::as_str) else { continue };
                keys.entry(name.to_string()).or_default().extend(generator_keys(root, &node.folder, generator)?);
            }
        }
        named.push(keys);
    }
    let mut every: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for keys in &named {
        for (config_map, names) in keys {
            every.entry(config_map).or_default().extend(names);
        }
    }
    out.push_str("## Settings\n\n");
    out.push_str(
        "Each provider's value as rendered; *default* where its settings name the key but leave it \
         out, so the adaptor uses its default (the settings files document it); empty where its \
         settings do not name the key. `\"\"` is a key rendered empty.\n",
    );
    for (config_map, keys) in every {
        let _ = writeln!(out, "\n### ConfigMap `{config_map}`\n");
        write_header(out, "setting", providers);
        for key in keys {
            let cells: Vec<String> = providers
                .iter()
                .zip(&named)
                .map(|(provider, names)| match setting_value(provider, config_map, key) {
                    Some(value) => value,
                    None if names.get(config_map).is_some_and(|n| n.contains(key)) => "*default*".to_string(),
                    None => String::new(),
                })
                .collect();
            let _ = writeln!(out, "| `{key}` | {} |", cells.join(" | "));
        }
    }
    out.push('\n');
    Ok(())
}

fn write_header(out: &mut String, first: &str, providers: &[Provider]) {
    let names: Vec<&str> = providers.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(out, "| {first} | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|{}", ":---:|".repeat(providers.len()));
}

/// The value of `key` in the provider's rendered ConfigMap `name` (or its hash-suffixed name).
fn setting_value(provider: &Provider, name: &str, key: &str) -> Option<String> {
    let is_it = |r: &&Value| {
        let rendered_name = r.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        r.get("kind").and_then(Value::as_str) == Some("ConfigMap")
            && (rendered_name == name || rendered_name.strip_prefix(name).is_some_and(|rest| rest.starts_with('-') && rest.len() == 11))
    };
    let value = provider.rendered.iter().filter(is_it).find_map(|r| r.pointer(&format!("/data/{}", key.replace('~', "~0").replace('/', "~1"))));
    Some(match value?.as_str().unwrap_or_default() {
        "" => "`\"\"`".to_string(),
        text if text.contains('\n') => format!("({} lines)", text.lines().count()),
        text => format!("`{}`", text.replace('|', "\\|")),
    })
}

fn write_components(out: &mut String, root: &Path, providers: &[Provider]) -> Result<(), String> {
    // Every component folder in the tree, and any other a build reaches.
    let mut components: BTreeSet<String> = BTreeSet::new();
    let folder = root.join("components");
    if folder.is_dir() {
        for entry in fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?.filter_map(Result::ok) {
            if kustomization_file(&entry.path()).is_some() {
                components.insert(relative(root, &entry.path()));
            }
        }
    }
    for provider in providers {
        components.extend(provider.nodes.iter().filter(|n| n.is_component).map(|n| n.folder.clone()));
    }
    out.push_str("## Components\n\nThe components each provider's build includes (directly or through another kustomization).\n\n");
    write_header(out, "component", providers);
    for component in &components {
        let cells: Vec<&str> =
            providers.iter().map(|p| if p.nodes.iter().any(|n| n.is_component && &n.folder == component) { "yes" } else { "" }).collect();
        let _ = writeln!(out, "| `{component}` | {} |", cells.join(" | "));
    }
    out.push('\n');
    Ok(())
}

/// The patches of each provider's own kustomizations (those of components are the components').
fn write_patches(out: &mut String, providers: &[Provider]) {
    out.push_str("## Patches\n\nThe patches each provider's kustomizations apply, besides those of its components.\n\n");
    out.push_str("| provider | patch | target |\n|---|---|---|\n");
    for provider in providers {
        for node in provider.nodes.iter().filter(|n| !n.is_component) {
            for (patch, target) in patches(node) {
                let _ = writeln!(out, "| {} | {patch} | {target} |", provider.name);
            }
        }
    }
}

/// `(patch, target)` for each entry of `patches`, `patchesStrategicMerge` and `patchesJson6902`.
fn patches(node: &Node) -> Vec<(String, String)> {
    let k = &node.kustomization;
    let mut out = Vec::new();
    for field in ["patches", "patchesJson6902"] {
        for entry in k.get(field).and_then(Value::as_array).into_iter().flatten() {
            let patch = match entry.get("path").and_then(Value::as_str) {
                Some(path) => format!("`{}`", relative_to_folder(&node.folder, path)),
                None => format!("inline in `{}`", node.folder),
            };
            let target = entry.get("target").map(describe_target).unwrap_or_else(|| "its own kind and name".to_string());
            out.push((patch, target));
        }
    }
    for path in strings(k, "patchesStrategicMerge") {
        out.push((format!("`{}`", relative_to_folder(&node.folder, &path)), "its own kind and name".to_string()));
    }
    out
}

fn relative_to_folder(folder: &str, path: &str) -> String {
    normalize(&Path::new(folder).join(path)).to_string_lossy().replace('\\', "/")
}

/// `Kind/name`, with group, namespace and selectors when given.
fn describe_target(target: &Value) -> String {
    let field = |name: &str| target.get(name).and_then(Value::as_str).unwrap_or("");
    let mut parts = Vec::new();
    let kind = match (field("group"), field("kind")) {
        ("", kind) => kind.to_string(),
        (group, kind) => format!("{kind}.{group}"),
    };
    let id: Vec<&str> = [kind.as_str(), field("namespace"), field("name")].into_iter().filter(|p| !p.is_empty()).collect();
    if !id.is_empty() {
        parts.push(format!("`{}`", id.join("/")));
    }
    for selector in ["labelSelector", "annotationSelector"] {
        if !field(selector).is_empty() {
            parts.push(format!("{selector} `{}`", field(selector)));
        }
    }
    if parts.is_empty() {
        "every resource".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use peerpods_build::adaptor_settings::EnvFile;
    use std::path::Path;

    fn env_key(line: &str) -> Option<String> {
        EnvFile::parse(Path::new("settings.env"), line).entries.into_iter().next().map(|entry| entry.key)
    }

    #[test]
    fn env_keys_set_and_documented() {
        assert_eq!(env_key("PODVM_AMI_ID="), Some("PODVM_AMI_ID".to_string()));
        assert_eq!(env_key("# TAGS=a=b"), Some("TAGS".to_string()));
        assert_eq!(env_key("# Tags of the pod VMs, key1=value1"), None);
        assert_eq!(env_key("# required, unless USE_PODVM_LAUNCHTEMPLATE=true"), None);
    }
}
