//! Writing a build's output: one stream, or one file per resource, never half-written.
use std::path::Path;

/// One file per resource, named as kustomize names them: `[group_]version_kind_name.yaml`, with the
/// namespace (`default` for none) in front when the namespaced resources span several namespaces.
pub fn write_individual_files(dir: &Path, result: &peerpods_build::Build) -> Result<(), String> {
    use peerpods_build::resource::scope::is_namespaced;
    let namespace_of = |r: &peerpods_build::resource::Resource| match r.namespace() {
        "" => "default".to_string(),
        ns => ns.to_string(),
    };
    let namespaces: std::collections::BTreeSet<String> =
        result.resources.iter().filter(|r| is_namespaced(r.api_version(), r.kind())).map(namespace_of).collect();
    for r in result.resources.iter() {
        let gvk = r.gvk();
        let mut name = [gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str(), r.name()]
            .iter()
            .filter(|part| !part.is_empty())
            .map(|part| part.to_lowercase())
            .collect::<Vec<_>>()
            .join("_");
        name.push_str(".yaml");
        if namespaces.len() > 1 && is_namespaced(r.api_version(), r.kind()) {
            name = format!("{}_{name}", namespace_of(r).to_lowercase());
        }
        write_atomically(&dir.join(name), &peerpods_build::yaml::emit::emit_stream([&r.value]))?;
    }
    Ok(())
}

/// Writes through a temporary file, so a failure never leaves a half-written output.
pub fn write_atomically(path: &Path, content: &str) -> Result<(), String> {
    let tmp = path.with_extension("peerpods-build.tmp");
    std::fs::write(&tmp, content).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("writing {}: {e}", path.display()))
}
