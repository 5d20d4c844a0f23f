//! Transformers: each one a small filter over resources, driven by field spec tables.
pub mod builtin_plugins;
pub mod fieldspec;
pub mod images;
pub mod metadata_maps;
pub mod name_affix;
pub mod namespace;
pub mod replicas;
pub mod select;
pub mod patches;
pub mod path;
pub mod sort;
pub mod steps;
pub mod fieldspec_tables;
pub mod namereference;
pub mod replacements;
pub mod vars;

/// Table tests' fixtures: resources from YAML text, and a field of one of them.
#[cfg(test)]
pub(crate) mod table {
    use serde_json::Value;

    use crate::resource::ResMap;

    pub fn resources(yaml: &str) -> ResMap {
        let (resources, deferred) = crate::resource::decode::resources_from_file(std::path::Path::new("table.yaml"), yaml).expect("the table's YAML");
        assert!(deferred.is_none());
        ResMap::from_vec(resources)
    }

    /// The field at the dotted `path` (list positions as numbers) of the resource of `kind` whose
    /// name is, or was, `name`.
    pub fn field<'r>(resources: &'r ResMap, kind: &str, name: &str, path: &str) -> Option<&'r Value> {
        let resource = resources.iter().find(|r| r.kind() == kind && r.all_ids().iter().any(|id| id.name == name))?;
        path.split('.').try_fold(&resource.value, |node, part| match part.parse::<usize>() {
            Ok(i) => node.get(i),
            Err(_) => node.get(part),
        })
    }
}
