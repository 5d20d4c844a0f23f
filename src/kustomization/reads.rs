//! What a build reads: every file the loader opens, every path it looks at, every kustomization
//! folder it enters and what includes it, every remote it uses. Recorded where the loader reads
//! (a [`Reads`] carried by each [`super::Loader`] of the build), so every field that names a file
//! is covered by construction; `deps` and `affected` print and compare these sets.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The sets one build recorded. Paths are absolute.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSet {
    /// Files read, symlinks resolved.
    pub files: BTreeSet<PathBuf>,
    /// Paths looked at as written (before symlinks are resolved), read or not: a file tried and
    /// missing, each name a kustomization file may have, a symlink on the way to a file. A change
    /// at one of these (or at a folder above one) can change what the build reads.
    pub probed: BTreeSet<PathBuf>,
    /// Folders read whole by a program (a helm chart): any change below them matters.
    pub trees: BTreeSet<PathBuf>,
    /// Programs run (exec plugins, exec functions).
    pub programs: BTreeSet<PathBuf>,
    /// Kustomization folders entered, with their kind (`Kustomization` or `Component`).
    pub roots: BTreeMap<PathBuf, String>,
    /// Which folder includes which (`resources`, `components`, plugin folders): the includer and
    /// the included folder, or the remote it names.
    pub includes: BTreeSet<(PathBuf, Include)>,
    /// Remotes: `git URL@commit` or an HTTP(S) URL.
    pub remotes: BTreeSet<String>,
}

/// What a kustomization includes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Include {
    Folder(PathBuf),
    Remote(String),
}

/// The recorder a build's loaders share.
#[derive(Debug, Default)]
pub struct Reads {
    set: Mutex<ReadSet>,
}

impl Reads {
    fn with(&self, f: impl FnOnce(&mut ReadSet)) {
        f(&mut self.set.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// What was recorded so far.
    pub fn snapshot(&self) -> ReadSet {
        self.set.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(super) fn file(&self, real: &Path, as_written: &Path) {
        self.with(|s| {
            s.files.insert(real.to_path_buf());
            if real != as_written {
                s.probed.insert(as_written.to_path_buf());
            }
        });
    }

    pub(super) fn probe(&self, as_written: &Path) {
        self.with(|s| {
            s.probed.insert(as_written.to_path_buf());
        });
    }

    pub(super) fn root(&self, root: &Path) {
        self.with(|s| {
            s.roots.entry(root.to_path_buf()).or_default();
        });
    }

    pub(super) fn kind(&self, root: &Path, kind: &str) {
        self.with(|s| {
            s.roots.insert(root.to_path_buf(), kind.to_string());
        });
    }

    pub(super) fn include(&self, from: &Path, what: Include) {
        self.with(|s| {
            s.includes.insert((from.to_path_buf(), what));
        });
    }

    pub(super) fn tree(&self, folder: &Path) {
        self.with(|s| {
            s.trees.insert(folder.to_path_buf());
        });
    }

    pub(super) fn program(&self, program: &Path) {
        self.with(|s| {
            s.programs.insert(program.to_path_buf());
        });
    }

    /// A remote used: a git URL with the commit it resolved to, or an HTTP(S) URL.
    pub fn remote(&self, remote: String) {
        self.with(|s| {
            s.remotes.insert(remote);
        });
    }

    /// Adds what a walk of an included folder read (see [`Memo`]).
    pub fn merge(&self, other: &ReadSet) {
        self.with(|s| {
            s.files.extend(other.files.iter().cloned());
            s.probed.extend(other.probed.iter().cloned());
            s.trees.extend(other.trees.iter().cloned());
            s.programs.extend(other.programs.iter().cloned());
            for (root, kind) in &other.roots {
                let entry = s.roots.entry(root.clone()).or_default();
                if entry.is_empty() {
                    entry.clone_from(kind);
                }
            }
            s.includes.extend(other.includes.iter().cloned());
            s.remotes.extend(other.remotes.iter().cloned());
        });
    }
}

/// The read sets of the kustomization folders walked so far in one run of `deps` or
/// `affected`, by real path. What a folder's walk reads depends only on the folder and the load
/// restrictor (the same for the whole run), not on which root includes it: a base shared by many
/// roots is walked once, and each root's set is the union of its own reads and its folders' sets.
/// It holds the run's current folder, resolved once, which the roots are named from.
#[derive(Debug, Default)]
pub struct Memo {
    folders: Mutex<HashMap<PathBuf, Arc<Walked>>>,
    cwd: Option<PathBuf>,
}

/// One folder's walk, as [`Memo`] keeps it.
#[derive(Debug)]
pub struct Walked {
    /// Everything the folder and the folders below it read.
    pub set: ReadSet,
    /// The walk met what only a build can tell (see `read_set`).
    pub needs_build: bool,
}

impl Memo {
    /// A memo for a run whose roots are named from `cwd`, a real folder.
    pub fn in_folder(cwd: PathBuf) -> Self {
        Memo { folders: Mutex::default(), cwd: Some(cwd) }
    }

    /// The run's current folder, real.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    pub fn get(&self, folder: &Path) -> Option<Arc<Walked>> {
        self.folders.lock().unwrap_or_else(|e| e.into_inner()).get(folder).cloned()
    }

    pub fn put(&self, folder: PathBuf, walked: Walked) {
        self.folders.lock().unwrap_or_else(|e| e.into_inner()).insert(folder, Arc::new(walked));
    }
}

impl ReadSet {
    /// Whether a change at `changed` (an absolute path: a file changed, added or deleted) can
    /// change what a build that recorded this set reads: it is a file read or a path looked at,
    /// lies on the way to one (a symlink or a file replacing a folder), or lies in a folder read whole.
    pub fn touched_by(&self, changed: &Path) -> bool {
        let at_or_below = |set: &BTreeSet<PathBuf>| {
            set.range(changed.to_path_buf()..).take_while(|p| p.starts_with(changed)).next().is_some()
        };
        at_or_below(&self.files)
            || at_or_below(&self.probed)
            || at_or_below(&self.programs)
            || self.trees.iter().any(|tree| changed.starts_with(tree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_touches_a_file_read_a_path_looked_at_a_link_on_the_way_or_a_tree() {
        let reads = Reads::default();
        reads.file(Path::new("/r/base/real.yaml"), Path::new("/r/o/link/real.yaml"));
        reads.probe(Path::new("/r/o/kustomization.yml"));
        reads.tree(Path::new("/r/o/charts/app"));
        let set = reads.snapshot();
        assert!(set.touched_by(Path::new("/r/base/real.yaml")));
        assert!(set.touched_by(Path::new("/r/o/link")), "the link on the way");
        assert!(set.touched_by(Path::new("/r/o/kustomization.yml")), "a name looked at");
        assert!(set.touched_by(Path::new("/r/o/charts/app/templates/a.yaml")));
        assert!(!set.touched_by(Path::new("/r/base/other.yaml")));
        assert!(!set.touched_by(Path::new("/r/base/real.yaml.bak")));
        assert!(!set.touched_by(Path::new("/r/o/charts/application")));
    }
}
