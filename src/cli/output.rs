//! Writing a build's output: one stream, or one file per resource, never half-written
//! (through `peerpods_build::safe_write`).
use std::path::{Component, Path, PathBuf};

pub use peerpods_build::safe_write::write_atomically;
use peerpods_build::safe_write::{commit, stage, NewFolder};

/// One file per resource, named as kustomize names them: `[group_]version_kind_name.yaml`, with the
/// namespace (`default` for none) in front when the namespaced resources span several namespaces.
/// Every name is checked before anything is written: a name that would leave `dir` (a `/` or
/// `..` from an apiVersion, kind, name or namespace) is an error, and nothing is written. The
/// folder is created if missing; files an earlier build wrote there and this one does not are
/// removed (see `output_record`).
pub fn write_individual_files(dir: &Path, result: &peerpods_build::Build) -> Result<(), String> {
    use peerpods_build::resource::scope::is_namespaced;
    let namespace_of = |r: &peerpods_build::resource::Resource| match r.namespace() {
        "" => "default".to_string(),
        ns => ns.to_string(),
    };
    let namespaces: std::collections::BTreeSet<String> =
        result.resources.iter().filter(|r| is_namespaced(r.api_version(), r.kind())).map(namespace_of).collect();
    let mut files = Vec::new();
    for r in result.resources.iter() {
        let mut name = individual_file_name(r.api_version(), r.kind(), r.name());
        if namespaces.len() > 1 && is_namespaced(r.api_version(), r.kind()) {
            name = format!("{}_{name}", namespace_of(r).to_lowercase());
        }
        let path = file_in(dir, &name).map_err(|why| {
            format!("{} {} '{}': cannot be written to {}: {why}", r.api_version(), r.kind(), r.name(), dir.display())
        })?;
        files.push((path, peerpods_build::yaml::emit::emit_stream([&r.value])));
    }
    // Each file's content by name: of two resources whose names differ only in case, and so
    // share a file, the later is kept, as kustomize keeps it.
    let by_name: std::collections::BTreeMap<String, &str> =
        files.iter().map(|(path, content)| (path.file_name().unwrap_or_default().to_string_lossy().into_owned(), content.as_str())).collect();
    let written = by_name.keys().cloned().collect();
    // A folder that is not there yet is made whole beside it and renamed into place.
    if let Some(folder) = NewFolder::stage(dir)? {
        for (name, content) in &by_name {
            folder.write(name, content)?;
        }
        return super::output_record::record_and_commit(folder, &written);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    // All temporary files first, then the renames: a failure while writing leaves the folder as it was.
    let staged = files.iter().map(|(path, content)| stage(path, content)).collect::<Result<Vec<_>, _>>()?;
    for (staged, (path, _)) in staged.into_iter().zip(&files) {
        commit(staged, path)?;
    }
    super::output_record::sweep(dir, &written)
}

/// kustomize's file name for a resource: the non-empty parts of group, version and kind, then
/// the name, lower-cased and joined with `_`; the apiVersion splits at its first `/`.
fn individual_file_name(api_version: &str, kind: &str, name: &str) -> String {
    let (group, version) = peerpods_build::resource::split_api_version(api_version);
    let gvk: Vec<&str> = [group, version, kind].into_iter().filter(|part| !part.is_empty()).collect();
    format!("{}_{}.yaml", gvk.join("_").to_lowercase(), name.to_lowercase())
}

/// `dir/name`, provided `name` is one plain file name: no separator, no `..`, and the joined
/// path's parent is `dir` itself.
fn file_in(dir: &Path, name: &str) -> Result<PathBuf, String> {
    if name.chars().any(|c| c == '/' || std::path::is_separator(c)) {
        return Err(format!("the file name '{name}' would contain a path separator"));
    }
    if name.contains("..") {
        return Err(format!("the file name '{name}' would contain '..'"));
    }
    let path = dir.join(name);
    let plain = matches!(Path::new(name).components().collect::<Vec<_>>()[..], [Component::Normal(_)]);
    if !plain || path.parent() != Some(dir) {
        return Err(format!("the file name '{name}' is not a plain file name"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_split_the_api_version_at_the_first_slash() {
        assert_eq!(individual_file_name("apps/v1", "Deployment", "Web"), "apps_v1_deployment_web.yaml");
        assert_eq!(individual_file_name("v1", "ConfigMap", "a"), "v1_configmap_a.yaml");
        assert_eq!(individual_file_name("a/b/c", "X", "n"), "a_b/c_x_n.yaml");
    }

    #[test]
    fn only_plain_names_are_joined() {
        let dir = Path::new("out");
        assert_eq!(file_in(dir, "v1_configmap_a.yaml").unwrap(), Path::new("out/v1_configmap_a.yaml"));
        for bad in ["_/tmp/x_v1_configmap_a.yaml", "v1_configmap_../../b.yaml", "a/b.yaml", "..", "x..y.yaml"] {
            assert!(file_in(dir, bad).is_err(), "{bad}");
        }
    }
}
