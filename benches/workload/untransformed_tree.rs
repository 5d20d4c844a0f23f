//! The benchmark's tree with every transformer taken out of its kustomizations, for
//! `--untransformed` (untransformed.rs): only `resources`, `components` and the generators that
//! make new objects stay.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use peerpods_build::yaml::{emit::emit_stream, parse::parse_documents};
use serde_json::Value;

/// The kustomization fields kept: what gathers resources and what generates new ones.
pub const KEPT: [&str; 6] = ["apiVersion", "kind", "resources", "components", "configMapGenerator", "secretGenerator"];

/// Copies `tree` to `to` with each kustomization cut down to [`KEPT`]: generators that merge
/// into an existing object go, and the lists naming a component left with nothing to add no
/// longer name it (kustomize refuses a kustomization with no content).
pub fn write_untransformed(tree: &Path, to: &Path) {
    if to.exists() {
        std::fs::remove_dir_all(to).expect("removing the last untransformed tree");
    }
    let mut empty_components = BTreeSet::new();
    let mut kustomizations = Vec::new();
    copy_tree(tree, to, &mut kustomizations);
    let cut: Vec<(PathBuf, Value)> = kustomizations
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("a kustomization");
            let doc = parse_documents(&text).expect("a kustomization parses").into_iter().next().unwrap_or(Value::Null);
            let Value::Object(mut fields) = doc else { panic!("{}: not a mapping", file.display()) };
            fields.retain(|key, _| KEPT.contains(&key.as_str()));
            for generator in ["configMapGenerator", "secretGenerator"] {
                if let Some(Value::Array(list)) = fields.get_mut(generator) {
                    list.retain(|g| g.get("behavior").is_none());
                    if list.is_empty() {
                        fields.shift_remove(generator);
                    }
                }
            }
            if fields.get("kind").and_then(Value::as_str) == Some("Component") && fields.len() == 2 {
                empty_components.insert(file.parent().expect("a folder").canonicalize().expect("the component's folder"));
            }
            (file, Value::Object(fields))
        })
        .collect();
    for (file, mut doc) in cut {
        let folder = file.parent().expect("a folder").to_path_buf();
        if let Some(Value::Array(components)) = doc.get_mut("components") {
            components.retain(|c| c.as_str().is_none_or(|c| folder.join(c).canonicalize().map_or(true, |p| !empty_components.contains(&p))));
        }
        std::fs::write(&file, emit_stream([&doc])).expect("writing a kustomization");
    }
}

/// Copies the files under `from` to `to`, noting each kustomization copied.
fn copy_tree(from: &Path, to: &Path, kustomizations: &mut Vec<PathBuf>) {
    std::fs::create_dir_all(to).expect("creating a folder");
    for entry in std::fs::read_dir(from).expect("reading a folder") {
        let entry = entry.expect("a folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("an entry's type").is_dir() {
            copy_tree(&entry.path(), &target, kustomizations);
        } else {
            std::fs::copy(entry.path(), &target).expect("copying a file");
            if entry.file_name() == "kustomization.yaml" {
                kustomizations.push(target);
            }
        }
    }
}
