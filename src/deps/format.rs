//! `deps` output: text, JSON, a make dependency file, Argo CD's `manifest-generate-paths`
//! annotation, and a mermaid graph of which kustomization includes which.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{absolute, relative, Deps};
use crate::kustomization::reads::Include;

/// Paths shown relative to `cwd` (absolute, real), `/` between parts.
fn shown(path: &Path, cwd: &Path) -> String {
    relative(path, cwd).to_string_lossy().into_owned()
}

/// One line per file read, then per folder (kustomization folders and folders read whole,
/// each ending in `/`), program and remote; of every DIR together.
pub fn text(deps: &[Deps], cwd: &Path) -> String {
    let mut lines = BTreeSet::new();
    let mut folders = BTreeSet::new();
    let mut remotes = BTreeSet::new();
    for d in deps {
        lines.extend(d.reads.files.iter().chain(&d.reads.programs).map(|f| shown(f, cwd)));
        folders.extend(d.reads.roots.keys().chain(&d.reads.trees).map(|f| format!("{}/", shown(f, cwd).trim_end_matches('/'))));
        remotes.extend(d.reads.remotes.iter().cloned());
    }
    let mut out = String::new();
    for line in lines.iter().chain(&folders).chain(&remotes) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// One object per DIR: `dir`, `files`, `folders`, `trees`, `programs`, `remotes`, `includes`, `error`.
pub fn json(deps: &[Deps], cwd: &Path) -> String {
    let list: Vec<serde_json::Value> = deps
        .iter()
        .map(|d| {
            let paths = |set: &BTreeSet<PathBuf>| set.iter().map(|p| shown(p, cwd)).collect::<Vec<_>>();
            let includes: Vec<serde_json::Value> = d
                .reads
                .includes
                .iter()
                .map(|(from, what)| match what {
                    Include::Folder(to) => json!({ "from": shown(from, cwd), "folder": shown(to, cwd) }),
                    Include::Remote(url) => json!({ "from": shown(from, cwd), "remote": url }),
                })
                .collect();
            let folders: Vec<serde_json::Value> =
                d.reads.roots.iter().map(|(root, kind)| json!({ "path": shown(root, cwd), "kind": kind })).collect();
            json!({
                "dir": d.dir.to_string_lossy(),
                "files": paths(&d.reads.files),
                "folders": folders,
                "trees": paths(&d.reads.trees),
                "programs": paths(&d.reads.programs),
                "remotes": d.reads.remotes.iter().collect::<Vec<_>>(),
                "includes": includes,
                "error": d.error,
            })
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&list).unwrap_or_default();
    out.push('\n');
    out
}

/// A make rule per DIR as C compilers write with `-MD -MP`: `TARGET: file file ...`, then an
/// empty rule per file so that a deleted file does not stop make. `target` names each rule
/// (default: the DIR as given).
pub fn make(deps: &[Deps], cwd: &Path, target: Option<&str>) -> String {
    let escape = |p: &str| p.replace('$', "$$").replace(' ', "\\ ").replace('#', "\\#");
    let mut out = String::new();
    let mut all = BTreeSet::new();
    for d in deps {
        let files: Vec<String> = d.reads.files.iter().chain(&d.reads.programs).map(|f| escape(&shown(f, cwd))).collect();
        let name = target.map(str::to_string).unwrap_or_else(|| d.dir.to_string_lossy().into_owned());
        let _ = write!(out, "{}:", escape(&name));
        for f in &files {
            let _ = write!(out, " \\\n {f}");
        }
        out.push('\n');
        all.extend(files);
    }
    for f in all {
        let _ = write!(out, "\n{f}:\n");
    }
    out
}

/// Argo CD's `argocd.argoproj.io/manifest-generate-paths` value for each DIR (one line each):
/// the files and folders read, relative to the DIR (the Application's path), `;` between them.
pub fn argocd(deps: &[Deps]) -> String {
    let mut out = String::new();
    for d in deps {
        let app = absolute(&d.dir);
        let paths: BTreeSet<String> =
            d.reads.files.iter().chain(&d.reads.trees).chain(&d.reads.programs).map(|f| shown(f, &app)).collect();
        out.push_str(&paths.into_iter().collect::<Vec<_>>().join(";"));
        out.push('\n');
    }
    out
}

/// A mermaid graph (`graph TD`) of which kustomization includes which, of every DIR together:
/// kustomizations as boxes, components as hexagons, remotes as rounded boxes.
pub fn mermaid(deps: &[Deps], cwd: &Path) -> String {
    let mut nodes: BTreeMap<String, String> = BTreeMap::new();
    let mut edges = BTreeSet::new();
    for d in deps {
        for (root, kind) in &d.reads.roots {
            nodes.insert(shown(root, cwd), kind.clone());
        }
    }
    for d in deps {
        for (from, what) in &d.reads.includes {
            let to = match what {
                Include::Folder(to) => shown(to, cwd),
                Include::Remote(url) => {
                    nodes.entry(url.clone()).or_insert_with(|| "remote".into());
                    url.clone()
                }
            };
            edges.insert((shown(from, cwd), to));
        }
    }
    let ids: BTreeMap<&String, String> = nodes.keys().enumerate().map(|(i, name)| (name, format!("n{i}"))).collect();
    let label = |name: &str| name.replace('"', "#quot;");
    let mut out = String::from("graph TD\n");
    for (name, kind) in &nodes {
        let id = &ids[name];
        let _ = match kind.as_str() {
            "Component" => writeln!(out, "  {id}{{{{\"{}\"}}}}", label(name)),
            "remote" => writeln!(out, "  {id}(\"{}\")", label(name)),
            _ => writeln!(out, "  {id}[\"{}\"]", label(name)),
        };
    }
    for (from, to) in &edges {
        if let (Some(a), Some(b)) = (ids.get(from), ids.get(to)) {
            let _ = writeln!(out, "  {a} --> {b}");
        }
    }
    out
}
