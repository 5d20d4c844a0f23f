//! The kustomization roots of a tree: folders holding a kustomization file that no other
//! kustomization of the tree includes. One walk of the tree (hidden folders and cache folders
//! marked `CACHEDIR.TAG` left out, links not followed), each kustomization file parsed once.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::kustomization::loader::{normalize, KUSTOMIZATION_FILE_NAMES};

/// The roots below `top` (absolute, real), sorted; with the roots a change deleted: a folder
/// whose kustomization file is among `deleted` and that no kustomization of the work tree includes.
pub fn discover(top: &Path, changed: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    walk(top, &mut folders);
    let known: HashSet<&Path> = folders.iter().map(PathBuf::as_path).collect();
    let included: HashSet<PathBuf> = folders.par_iter().flat_map_iter(|folder| included_by(folder, &known).into_iter()).collect();
    let mut roots: Vec<PathBuf> = folders.iter().filter(|f| !included.contains(*f)).cloned().collect();
    let gone = changed.iter().filter(|c| {
        c.file_name().is_some_and(|name| KUSTOMIZATION_FILE_NAMES.iter().any(|k| name == *k)) && !c.exists()
    });
    for folder in gone.filter_map(|c| c.parent()) {
        let now = KUSTOMIZATION_FILE_NAMES.iter().any(|k| folder.join(k).exists());
        if !now && !included.contains(folder) && !roots.iter().any(|r| r == folder) {
            roots.push(folder.to_path_buf());
        }
    }
    roots.sort();
    roots
}

/// Every folder below `dir` with a kustomization file.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut subfolders = Vec::new();
    let mut has_kustomization = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else { continue };
        let text = name.to_string_lossy();
        if kind.is_dir() && !text.starts_with('.') {
            subfolders.push(entry.path());
        } else if KUSTOMIZATION_FILE_NAMES.contains(&text.as_ref()) || text == "CACHEDIR.TAG" {
            if text == "CACHEDIR.TAG" {
                return;
            }
            has_kustomization = true;
        }
    }
    if has_kustomization {
        out.push(dir.to_path_buf());
    }
    subfolders.sort();
    for folder in subfolders {
        walk(&folder, out);
    }
}

/// The folders `folder`'s kustomization names (`resources`, `bases`, `components`, and plugin
/// folders in `generators`, `transformers`, `validators`), absolute; links resolved. `..` is
/// taken lexically, as the loader takes it; a folder the walk found (`known`, reached without
/// following a link) is its own real path, a file is left out, anything else is resolved.
fn included_by(folder: &Path, known: &HashSet<&Path>) -> Vec<PathBuf> {
    let Some(text) = KUSTOMIZATION_FILE_NAMES.iter().find_map(|name| crate::bounded_read::read_text(&folder.join(name)).ok()) else {
        return Vec::new();
    };
    let Ok(kustomization) = crate::yaml::parse::parse_document(&text) else { return Vec::new() };
    ["resources", "bases", "components", "generators", "transformers", "validators"]
        .iter()
        .filter_map(|field| kustomization.get(field)?.as_array())
        .flatten()
        .filter_map(Value::as_str)
        .filter(|entry| !entry.contains("://") && !entry.contains('\n'))
        .filter_map(|entry| {
            let path = normalize(&folder.join(entry));
            if known.contains(path.as_path()) {
                return Some(path);
            }
            // A file (a resource) includes no folder; anything else is resolved.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_file() => None,
                _ => Some(path.canonicalize().unwrap_or(path)),
            }
        })
        .collect()
}
