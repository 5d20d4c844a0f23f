//! What the builds of one run (`build DIR DIR...`) saw on disk: the `lstat` of a path that was a
//! regular file or a folder, or that nothing was there. The roots of a monorepo name the same bases,
//! components and generator sources; each path is looked at once per run, not once per root.
//! A run sees each file as it was the first time one of its builds looked, as it sees a shared
//! base's text as it was when first read ([`crate::file_memo`]). Only what a path *is* is kept:
//! each loader still checks what it was told against its own root and restrictor.
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::Path;
use std::sync::RwLock;

use crate::fast_hash::FastHashMap;

/// Enough for the files of the roots a run builds side by side (a dozen or so per app); past
/// it the run looks again. About 300 bytes each.
const MOST: usize = 1024;

/// What a path was when the run first looked at it.
#[derive(Clone, Debug)]
pub enum Seen {
    /// A regular file or a folder, not a link: its `lstat`.
    Is(Metadata),
    /// Nothing at all, not even a link.
    Absent,
}

/// The run's looks, keyed by path: each a real folder (every folder on the way found real)
/// joined with a last part, as [`super::Loader`] builds the paths it asks about. Kept as the
/// path's bytes, which hash in one pass (a `Path` hashes part by part).
#[derive(Default)]
pub struct RunLooks {
    seen: RwLock<FastHashMap<OsString, Seen>>,
}

impl std::fmt::Debug for RunLooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunLooks")
    }
}

impl RunLooks {
    /// What the run saw at `path`, when it looked.
    pub fn get(&self, path: &Path) -> Option<Seen> {
        self.seen.read().ok()?.get(path.as_os_str()).cloned()
    }

    /// Keeps what the run saw at `path` when `meta` is the `lstat` of a regular file or a folder
    /// (anything else is looked at again each time, for its checks to say what they say).
    pub fn note(&self, path: &Path, meta: &Metadata) {
        if meta.is_file() || meta.is_dir() {
            self.keep(path, Seen::Is(meta.clone()));
        }
    }

    /// Keeps `seen` at `path`, forgetting everything else first when the run holds its bound.
    fn keep(&self, path: &Path, seen: Seen) {
        if let Ok(mut map) = self.seen.write() {
            if map.len() >= MOST {
                map.clear();
            }
            map.insert(path.as_os_str().to_os_string(), seen);
        }
    }

    /// `std::fs::symlink_metadata(path)`, from what the run saw when it looked already.
    pub fn lstat(&self, path: &Path) -> std::io::Result<Metadata> {
        match self.get(path) {
            Some(Seen::Is(meta)) => Ok(meta),
            Some(Seen::Absent) => Err(std::io::ErrorKind::NotFound.into()),
            None => {
                let looked = std::fs::symlink_metadata(path);
                match &looked {
                    Ok(meta) => self.note(path, meta),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.keep(path, Seen::Absent),
                    Err(_) => {}
                }
                looked
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_looked_at_once_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        let absent = dir.path().join("Kustomization");
        std::fs::write(&file, "a: 1\n").unwrap();
        let run = RunLooks::default();
        assert_eq!(run.lstat(&file).unwrap().len(), 5);
        assert_eq!(run.lstat(&absent).unwrap_err().kind(), std::io::ErrorKind::NotFound);

        // Changed on disk during the run: the run keeps what it saw; a new run sees the change.
        std::fs::write(&file, "a: 12\n").unwrap();
        std::fs::write(&absent, "kind: Kustomization\n").unwrap();
        assert_eq!(run.lstat(&file).unwrap().len(), 5);
        assert!(run.lstat(&absent).is_err());
        let next = RunLooks::default();
        assert_eq!(next.lstat(&file).unwrap().len(), 6);
        assert!(next.lstat(&absent).unwrap().is_file());
    }

    #[test]
    fn links_are_looked_at_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.yaml");
        let link = dir.path().join("link.yaml");
        std::fs::write(&target, "a: 1\n").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let run = RunLooks::default();
        assert!(run.lstat(&link).unwrap().file_type().is_symlink());
        assert!(run.get(&link).is_none(), "a link was kept");
        assert!(run.lstat(dir.path()).unwrap().is_dir());
        assert!(run.get(dir.path()).is_some(), "a folder was not kept");

        // The link replaced by a file: seen as the file it now is.
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, "b: 2\n").unwrap();
        assert!(run.lstat(&link).unwrap().is_file());
    }

    #[test]
    fn the_run_forgets_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunLooks::default();
        for i in 0..=MOST {
            run.keep(&dir.path().join(i.to_string()), Seen::Absent);
        }
        assert!(run.get(&dir.path().join("0")).is_none(), "kept past the bound");
        assert!(run.get(&dir.path().join(MOST.to_string())).is_some());
        assert_eq!(run.seen.read().unwrap().len(), 1);
    }
}
