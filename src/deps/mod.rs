//! `deps` and `affected`: what a build of a folder reads (recorded by its loader, see
//! [`crate::kustomization::reads`]), printed for people, make, Argo CD and mermaid, and which
//! kustomization roots a change touches.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::kustomization::reads::{Memo, ReadSet};
use crate::BuildOptions;

pub mod changes;
pub mod format;
pub mod roots;

/// What a build of one folder read, and the error that stopped it.
pub struct Deps {
    /// The folder as given.
    pub dir: PathBuf,
    pub reads: ReadSet,
    pub error: Option<String>,
}

/// The read sets of `dirs`, computed in parallel.
pub fn deps_of(dirs: &[PathBuf], options: &BuildOptions) -> Vec<Deps> {
    let memo = Arc::new(Memo::in_folder(current_folder()));
    crate::stack::on_large_stack(|| {
        dirs.par_iter()
            .map(|dir| {
                let (reads, result) = crate::read_set(dir, options, &memo);
                Deps { dir: dir.clone(), reads, error: result.err().map(|e| e.to_string()) }
            })
            .collect()
    })
    .unwrap_or_default()
}

/// Which of `dirs` a change to the files `changed` (absolute paths: changed, added or deleted)
/// can affect. A folder's build is a function of the files and paths it looks at: it reads and
/// looks at the same things in both trees until it meets the first path that differs, and that
/// path is in the set the work tree's build records (read, or looked at and found missing). So a
/// build whose set at the work tree holds no changed path reads exactly the same at the base, and
/// renders the same bytes; a folder that no longer exists is affected when a change lies in it.
pub fn affected(dirs: &[PathBuf], changed: &[PathBuf], options: &BuildOptions) -> Vec<bool> {
    if changed.is_empty() {
        return vec![false; dirs.len()];
    }
    let mut changed: Vec<PathBuf> = changed.to_vec();
    changed.sort();
    let cwd = current_folder();
    let memo = Arc::new(Memo::in_folder(cwd.clone()));
    crate::stack::on_large_stack(|| {
        dirs.par_iter()
            .map(|dir| {
                let absolute = absolute_from(dir, &cwd);
                if !absolute.is_dir() {
                    return changed.iter().any(|c| c.starts_with(&absolute));
                }
                let (reads, _) = crate::read_set(dir, options, &memo);
                changed.iter().any(|c| reads.touched_by(c))
            })
            .collect()
    })
    .unwrap_or_else(|_| vec![true; dirs.len()])
}

/// `dir` as an absolute path, real when it exists (recorded paths are real).
pub fn absolute(dir: &Path) -> PathBuf {
    absolute_from(dir, &current_folder())
}

/// The current folder, real.
fn current_folder() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    cwd.canonicalize().unwrap_or(cwd)
}

/// [`absolute`] for `dir` named from `cwd`, a real folder.
fn absolute_from(dir: &Path, cwd: &Path) -> PathBuf {
    // `..` after a link is resolved as `canonicalize` resolves it, as the loader does for a DIR.
    let real = match dir.components().any(|c| c == std::path::Component::ParentDir) {
        true => cwd.join(dir).canonicalize(),
        false => crate::kustomization::loader::real_path_below(cwd, dir),
    };
    real.unwrap_or_else(|_| crate::kustomization::loader::normalize(&cwd.join(dir)))
}

/// `path` relative to `base` (both absolute, without `.` or `..`): `../../x` when needed.
pub fn relative(path: &Path, base: &Path) -> PathBuf {
    let (mut p, mut b) = (path.components().peekable(), base.components().peekable());
    while let (Some(x), Some(y)) = (p.peek(), b.peek()) {
        if x != y {
            break;
        }
        p.next();
        b.next();
    }
    let mut out: PathBuf = b.map(|_| std::path::Component::ParentDir).collect();
    out.extend(p);
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_and_descend() {
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a/d")), Path::new("../b/c"));
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b")), Path::new("."));
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a/b")), Path::new("c"));
        assert_eq!(relative(Path::new("/x"), Path::new("/a/b")), Path::new("../../x"));
    }
}
