//! Files read by many builds of one process (a base shared by the overlays of a monorepo, a
//! component every app uses), parsed once: what parsing a file made, kept by its real path and
//! by its identity on disk (device, inode, size, modification and change times), and handed out
//! shared. A file edited, replaced or re-permissioned since has another identity and is read
//! and parsed again; the caller still resolves the path under its checks and records the read,
//! hit or miss (`kustomization::Loader::read_parsed`). The roots of one run (`build DIR DIR...`)
//! take a file's identity from what the run first saw (`kustomization::looks`): they all see
//! one version of each file.
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file as it is on disk now: any write, rename over it, or change of its mode changes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Identity {
    /// The identity of a regular file of at most `limit` bytes, from its `lstat`: anything else
    /// (a link, a folder, a device, a file too large) has none and is never served from memory.
    pub fn of(meta: &Metadata, limit: u64) -> Option<Identity> {
        if !meta.file_type().is_file() || meta.len() > limit {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Identity {
                device: meta.dev(),
                inode: meta.ino(),
                size: meta.len(),
                modified: (meta.mtime(), meta.mtime_nsec()),
                changed: (meta.ctime(), meta.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// [`Identity::of`] the file at `path`, not following a link there.
    pub fn at(path: &Path, limit: u64) -> Option<Identity> {
        Identity::of(&std::fs::symlink_metadata(path).ok()?, limit)
    }
}

/// The memo: real path to the identity the file had when read and what parsing it made. It
/// holds at most `limit` bytes of the files' texts (what they parsed into is a small multiple
/// of that), the most recently used kept: the builds of one run name a shared base one after
/// another, so memory stays bounded however many files the run reads.
pub struct FileMemo<T> {
    limit: usize,
    slots: Mutex<Option<Slots<T>>>,
}

struct Slots<T> {
    entries: HashMap<PathBuf, Entry<T>>,
    /// The texts' bytes held.
    held: usize,
    /// Counts uses: an entry's `used` says how recently it was asked for.
    clock: u64,
}

struct Entry<T> {
    identity: Identity,
    parsed: Arc<T>,
    bytes: usize,
    used: u64,
}

impl<T> FileMemo<T> {
    /// A memo holding at most `limit` bytes of text.
    pub const fn new(limit: usize) -> Self {
        FileMemo { limit, slots: Mutex::new(None) }
    }

    /// What parsing `path` made, when it was read with the identity it has now.
    pub fn get(&self, path: &Path, identity: Identity) -> Option<Arc<T>> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slots = slots.as_mut()?;
        slots.clock += 1;
        let entry = slots.entries.get_mut(path).filter(|entry| entry.identity == identity)?;
        entry.used = slots.clock;
        Some(entry.parsed.clone())
    }

    /// Keeps what parsing `path` (a text of `bytes` bytes) made, read with `identity` (taken
    /// before the read: a file changed during the read has another identity by now, and is
    /// read again next time). The least recently used entries make room.
    pub fn put(&self, path: PathBuf, identity: Identity, parsed: Arc<T>, bytes: usize) {
        if bytes > self.limit {
            return;
        }
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slots = slots.get_or_insert_with(|| Slots { entries: HashMap::new(), held: 0, clock: 0 });
        slots.clock += 1;
        let entry = Entry { identity, parsed, bytes, used: slots.clock };
        if let Some(old) = slots.entries.insert(path, entry) {
            slots.held -= old.bytes;
        }
        slots.held += bytes;
        while slots.held > self.limit {
            let Some(oldest) = slots.entries.iter().min_by_key(|(_, entry)| entry.used).map(|(path, _)| path.clone()) else { break };
            if let Some(gone) = slots.entries.remove(&oldest) {
                slots.held -= gone.bytes;
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_in_place_or_replaced_is_not_served_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let memo: FileMemo<String> = FileMemo::new(1024);
        let first = Identity::at(&file, 1024).unwrap();
        memo.put(file.clone(), first, Arc::new("a: 1".into()), 5);
        assert_eq!(memo.get(&file, Identity::at(&file, 1024).unwrap()).as_deref().map(String::as_str), Some("a: 1"));

        // Same size, written again: the change time moves even where the clock is coarse.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "a: 2\n").unwrap();
        let edited = Identity::at(&file, 1024).unwrap();
        assert_ne!(edited, first);
        assert!(memo.get(&file, edited).is_none(), "an edited file was served stale");

        // Replaced by another file (a rename over it): another inode.
        let other = dir.path().join("b.yaml");
        std::fs::write(&other, "a: 1\n").unwrap();
        memo.put(file.clone(), edited, Arc::new("a: 2".into()), 5);
        std::fs::rename(&other, &file).unwrap();
        assert!(memo.get(&file, Identity::at(&file, 1024).unwrap()).is_none(), "a replaced file was served stale");

        // A mode change alone (the file may no longer be readable): read again.
        let now = Identity::at(&file, 1024).unwrap();
        memo.put(file.clone(), now, Arc::new("a: 1".into()), 5);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        assert!(memo.get(&file, Identity::at(&file, 1024).unwrap()).is_none(), "a re-permissioned file was served from memory");
    }

    #[test]
    fn links_folders_and_large_files_have_no_identity() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link")).unwrap();
        assert!(Identity::at(&dir.path().join("link"), 1024).is_none());
        assert!(Identity::at(dir.path(), 1024).is_none());
        assert!(Identity::at(&file, 3).is_none(), "a file past the bound");
        assert!(Identity::at(&dir.path().join("missing"), 1024).is_none());
    }

    #[test]
    fn the_least_recently_used_files_make_room() {
        let dir = tempfile::tempdir().unwrap();
        let memo: FileMemo<usize> = FileMemo::new(10);
        let files: Vec<(PathBuf, Identity)> = (0..3)
            .map(|i| {
                let file = dir.path().join(format!("{i}.yaml"));
                std::fs::write(&file, "abcd").unwrap();
                let identity = Identity::at(&file, 1024).unwrap();
                (file, identity)
            })
            .collect();
        memo.put(files[0].0.clone(), files[0].1, Arc::new(0), 4);
        memo.put(files[1].0.clone(), files[1].1, Arc::new(1), 4);
        assert!(memo.get(&files[0].0, files[0].1).is_some());
        // 12 bytes do not fit in 10: the file used longest ago (1) goes.
        memo.put(files[2].0.clone(), files[2].1, Arc::new(2), 4);
        assert!(memo.get(&files[1].0, files[1].1).is_none());
        assert_eq!(memo.get(&files[0].0, files[0].1).as_deref(), Some(&0));
        assert_eq!(memo.get(&files[2].0, files[2].1).as_deref(), Some(&2));
        // A text larger than the whole memo is never kept.
        memo.put(files[1].0.clone(), files[1].1, Arc::new(1), 11);
        assert!(memo.get(&files[1].0, files[1].1).is_none());
        assert!(memo.get(&files[0].0, files[0].1).is_some());
    }

    #[test]
    fn another_path_is_another_entry() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let memo: FileMemo<u8> = FileMemo::new(1024);
        let identity = Identity::at(&file, 1024).unwrap();
        memo.put(file.clone(), identity, Arc::new(1), 5);
        assert!(memo.get(&dir.path().join("b.yaml"), identity).is_none());
    }
}
