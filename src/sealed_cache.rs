//! The cache folder and its sealed entries, shared by remote checkouts (`remote/cache.rs`) and
//! helm renderings (`helm/cache.rs`). The cache is attacker-reachable (another process of the
//! user, a damaged disk, a planted link), so its rules live here, once:
//!
//! - the folder is made with mode 0700 and refused when it belongs to another user or others
//!   may write it ([`crate::beneath::private_folder`]);
//! - builds hold its `lock` shared, `cache clear` exclusively ([`CacheFolder::exclusively`]);
//! - an entry is written into a temporary folder ([`begin_in`]), sealed with a digest of its
//!   `tree/` written last and renamed into place ([`seal_into`]);
//! - an entry is used only while its files match the digest ([`sealed_tree`]); a damaged one is
//!   moved aside and removed;
//! - clearing removes only what carries our marker ([`is_sealed_entry`], [`is_ours_temporary`]).
//!
//! ```text
//! <entry>/tree/       the files
//! <entry>/complete    "peerpods-build cache entry 3\n<digest of tree/>\n", written last
//! ```
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// The environment variable that moves the cache.
pub const CACHE_ENV: &str = "PEERPODS_BUILD_CACHE";
const MARKER: &str = "complete";
const MARKER_HEADER: &str = "peerpods-build cache entry 3\n";
/// A temporary folder older than this belongs to a writer that was killed.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// The cache folder, as `--cache-dir`, `$PEERPODS_BUILD_CACHE` or the platform choose it.
#[derive(Clone, Debug)]
pub struct CacheFolder {
    root: PathBuf,
}

impl CacheFolder {
    /// `--cache-dir`, else `$PEERPODS_BUILD_CACHE`, else the platform cache folder.
    pub fn locate(explicit: Option<&Path>) -> CacheFolder {
        let root = explicit.map(Path::to_path_buf).or_else(|| std::env::var_os(CACHE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from)).unwrap_or_else(|| {
            let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache"));
            // Without either, a folder of the shared temporary folder named for our user.
            xdg.or(home).map(|dir| dir.join("peerpods-build")).unwrap_or_else(|| std::env::temp_dir().join(shared_name()))
        });
        CacheFolder { root }
    }

    /// The cache a build uses: located, made private when missing and checked to be ours
    /// alone, and held (shared, until the process ends) so that `cache clear` waits for it.
    pub fn open(explicit: Option<&Path>) -> std::io::Result<CacheFolder> {
        let folder = CacheFolder::locate(explicit);
        crate::beneath::private_folder(&folder.root)?;
        hold_shared(&folder.root)?;
        Ok(folder)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs `clear` once the builds using the cache have ended (builds starting meanwhile wait
    /// for it), after checking that the folder is ours alone.
    pub fn exclusively<T>(&self, clear: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        crate::beneath::private_folder(&self.root)?;
        let _lock = lock(&self.root, true)?;
        clear()
    }
}

/// What clearing did: the entries it removed, and what it left because it carries no marker
/// of ours.
#[derive(Debug, Default)]
pub struct Cleared {
    pub removed: usize,
    pub kept: Vec<PathBuf>,
}

/// Whether `dir` is an entry we sealed: a folder (not a link) whose `complete` file starts
/// with our marker header.
pub fn is_sealed_entry(dir: &Path) -> bool {
    fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) && sealed_digest(dir).is_some()
}

/// The digest an entry's marker records: read bounded, never through a link, and only from a
/// marker that starts with our header.
fn sealed_digest(dir: &Path) -> Option<String> {
    let bytes = crate::bounded_read::read_regular_file(&dir.join(MARKER), crate::bounded_read::Links::Refuse, 4096).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix(MARKER_HEADER).map(|digest| digest.trim().to_string())
}

/// Whether `dir` holds a complete entry (intact or not), for listings.
pub fn is_complete(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

/// Whether `name` is one of the temporary folders we make beside entries.
pub fn is_ours_temporary(name: &str) -> bool {
    name.starts_with(".tmp-") || name.starts_with(".discarded-") || name.starts_with(".clearing-")
}

/// The `tree/` of the sealed entry `dir`, if it is complete and its files are unchanged since
/// it was sealed; a damaged entry is moved aside and removed.
pub fn sealed_tree(dir: &Path) -> Option<PathBuf> {
    let tree = dir.join("tree");
    match sealed_digest(dir) {
        Some(digest) if tree_digest(&tree).ok().as_deref() == Some(digest.as_str()) => Some(tree),
        None if !dir.exists() => None,
        _ => {
            discard(dir);
            None
        }
    }
}

/// Whether `dir` is a sealed entry whose files still match its digest (nothing is removed).
pub fn is_intact(dir: &Path) -> bool {
    sealed_digest(dir).is_some_and(|digest| Some(digest) == tree_digest(&dir.join("tree")).ok())
}

/// A fresh temporary folder in `parent` to write an entry into, after removing what killed
/// writers left behind there.
pub fn begin_in(parent: &Path) -> std::io::Result<PathBuf> {
    fs::create_dir_all(parent)?;
    for leftover in fs::read_dir(parent)?.flatten() {
        let name = leftover.file_name().to_string_lossy().into_owned();
        let old = leftover.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age > STALE_AFTER);
        if (name.starts_with(".tmp-") && old) || name.starts_with(".discarded-") {
            let _ = fs::remove_dir_all(leftover.path());
        }
    }
    let temp = parent.join(format!(".tmp-{}-{}", std::process::id(), nanos()));
    fs::create_dir(&temp)?;
    Ok(temp)
}

/// Seals the entry written in `temp` (the digest of its `tree/`, written last) and renames it
/// to `dir`; when another build got there first, its entry is used and this copy dropped.
/// Returns the entry's `tree/`.
pub fn seal_into(temp: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    let digest = tree_digest(&temp.join("tree"))?;
    crate::beneath::create_new(&temp.join(MARKER), format!("{MARKER_HEADER}{digest}\n").as_bytes())?;
    if fs::rename(temp, dir).is_err() {
        let _ = fs::remove_dir_all(temp);
        if let Some(tree) = sealed_tree(dir) {
            return Ok(tree);
        }
        // A damaged entry was in the way and has been moved aside: nothing to use; write again.
        return Err(std::io::Error::other(format!("could not move the new entry into {}", dir.display())));
    }
    Ok(dir.join("tree"))
}

/// Removes `root/name`, renamed first (under a name of its own) so that a build running now
/// never sees a half-removed entry; what an earlier removal that was killed left goes too.
pub fn remove_folder(root: &Path, name: &str) -> std::io::Result<()> {
    let folder = root.join(name);
    let prefix = format!(".clearing-{name}-");
    if folder.exists() {
        let aside = root.join(format!("{prefix}{}-{}", std::process::id(), nanos()));
        fs::rename(&folder, &aside)?;
    }
    for leftover in read_dir_sorted(root) {
        if leftover.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)) {
            fs::remove_dir_all(&leftover)?;
        }
    }
    Ok(())
}

/// SHA-256 of `bytes`, in hexadecimal: the names of entries and notes.
pub fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A small file of ours in the cache (a URL, a remembered ref or version): read bounded, never
/// through a link; `None` when missing, too long or not text.
pub fn read_note(path: &Path) -> Option<String> {
    let bytes = crate::bounded_read::read_regular_file(path, crate::bounded_read::Links::Refuse, 64 * 1024).ok()?;
    String::from_utf8(bytes).ok()
}

/// The `file` of an entry's `tree/` (a rendering), read bounded and never through a link.
pub fn read_entry_file(tree: &Path, file: &str) -> Option<String> {
    let bytes = crate::bounded_read::read_regular_file(&tree.join(file), crate::bounded_read::Links::Refuse, crate::bounded_read::MAX_FILE_BYTES).ok()?;
    String::from_utf8(bytes).ok()
}

pub fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    paths.sort();
    paths
}

/// Through an exclusively created temporary file of random name (no planted link is followed).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::safe_write::write_bytes_atomically(path, bytes).map_err(std::io::Error::other)
}

/// A fingerprint of the files below `tree`: SHA-256 over every path in sorted order with its
/// kind and content (a symlink: its target). Taken when the entry is sealed from what was
/// written, and again on its first use in a process: a file changed, added, removed or cut
/// short since (whatever its size and time say) changes it. Files are read bounded; a FIFO, a
/// device or a socket in an entry is an error (the entry is then damaged).
pub fn tree_digest(tree: &Path) -> std::io::Result<String> {
    // Names are hashed relative to the folder walked, each followed by a 0 byte: a path is the
    // sequence of names with `d`/`u` marking the way down and up.
    fn walk(dir: &Path, hasher: &mut Sha256) -> std::io::Result<()> {
        let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            // DirEntry::metadata does not follow symlinks and needs no path lookup.
            let meta = entry.metadata()?;
            if meta.file_type().is_symlink() {
                hasher.update(b"l");
                hasher.update(name.as_encoded_bytes());
                hasher.update([0]);
                hasher.update(fs::read_link(entry.path())?.as_os_str().as_encoded_bytes());
                hasher.update([0]);
            } else if meta.is_dir() {
                hasher.update(b"d");
                hasher.update(name.as_encoded_bytes());
                hasher.update([0]);
                walk(&entry.path(), hasher)?;
                hasher.update(b"u");
            } else {
                let content = crate::bounded_read::read_regular_file(&entry.path(), crate::bounded_read::Links::Refuse, crate::bounded_read::MAX_FILE_BYTES)?;
                hasher.update(b"f");
                hasher.update(name.as_encoded_bytes());
                hasher.update([0]);
                hasher.update((content.len() as u64).to_le_bytes());
                hasher.update(Sha256::digest(&content));
            }
        }
        Ok(())
    }
    let mut hasher = Sha256::new();
    walk(tree, &mut hasher)?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Moves a damaged entry aside (atomic, so no build reads it half-deleted), then removes it.
fn discard(dir: &Path) {
    let aside = dir.with_file_name(format!(".discarded-{}-{}", std::process::id(), nanos()));
    if fs::rename(dir, &aside).is_ok() {
        let _ = fs::remove_dir_all(&aside);
    }
}

/// `peerpods-build-<uid>`: the cache's name in the shared temporary folder.
fn shared_name() -> String {
    #[cfg(unix)]
    return format!("peerpods-build-{}", rustix::process::geteuid().as_raw());
    #[cfg(not(unix))]
    return "peerpods-build".to_string();
}

fn nanos() -> u128 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// The cache's lock file, locked shared (builds) or exclusive (`cache clear`), waiting for it.
fn lock(root: &Path, exclusive: bool) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    }
    let file = options.open(root.join("lock"))?;
    #[cfg(unix)]
    {
        use rustix::fs::FlockOperation;
        rustix::fs::flock(&file, if exclusive { FlockOperation::LockExclusive } else { FlockOperation::LockShared })?;
    }
    Ok(file)
}

/// Takes the shared lock of the cache at `root` once per process, kept until it ends (the
/// files of an entry are read long after the entry is found).
fn hold_shared(root: &Path) -> std::io::Result<()> {
    static HELD: std::sync::Mutex<Vec<(PathBuf, fs::File)>> = std::sync::Mutex::new(Vec::new());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if !held.iter().any(|(r, _)| r == root) {
        let file = lock(root, false)?;
        held.push((root.to_path_buf(), file));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_used_only_once_sealed_and_while_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("e");
        let temp = begin_in(dir.path()).unwrap();
        fs::create_dir_all(temp.join("tree/sub")).unwrap();
        fs::write(temp.join("tree/sub/x.yaml"), "a: 1\n").unwrap();
        assert_eq!(sealed_tree(&entry), None, "nothing is used before it is sealed");
        let tree = seal_into(&temp, &entry).unwrap();
        assert!(is_sealed_entry(&entry) && is_intact(&entry));
        assert_eq!(sealed_tree(&entry), Some(tree.clone()));
        fs::write(tree.join("sub/x.yaml"), "a: 22\n").unwrap();
        assert!(!is_intact(&entry), "a changed file is seen");
        assert_eq!(sealed_tree(&entry), None);
        assert!(!entry.exists(), "and the damaged entry is removed");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_huge_marker_planted_in_an_entry_makes_it_damaged_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("e");
        let temp = begin_in(dir.path()).unwrap();
        fs::create_dir_all(temp.join("tree")).unwrap();
        fs::write(temp.join("tree/f"), "x\n").unwrap();
        let tree = seal_into(&temp, &entry).unwrap();
        fs::remove_file(tree.join("f")).unwrap();
        let fifo = std::ffi::CString::new(tree.join("f").as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(!is_intact(&entry));
        assert_eq!(sealed_tree(&entry), None);

        let other = dir.path().join("o");
        let temp = begin_in(dir.path()).unwrap();
        fs::create_dir_all(temp.join("tree")).unwrap();
        seal_into(&temp, &other).unwrap();
        let marker = fs::read_to_string(other.join(MARKER)).unwrap();
        fs::write(other.join(MARKER), format!("{marker}{}", " ".repeat(1 << 20))).unwrap();
        assert!(!is_sealed_entry(&other), "a marker is read bounded");
    }

    #[test]
    fn a_second_writer_of_the_same_entry_uses_the_first_ones() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("e");
        let (first, second) = (begin_in(dir.path()).unwrap(), begin_in(dir.path()).unwrap());
        for temp in [&first, &second] {
            fs::create_dir_all(temp.join("tree")).unwrap();
            fs::write(temp.join("tree/f"), "same\n").unwrap();
        }
        let tree = seal_into(&first, &entry).unwrap();
        assert_eq!(seal_into(&second, &entry).unwrap(), tree);
        assert!(!second.exists(), "the second copy is dropped");
    }

    #[test]
    fn only_what_carries_our_marker_counts_as_ours() {
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join("charts");
        fs::create_dir_all(foreign.join("tree")).unwrap();
        fs::write(foreign.join(MARKER), "something else\n").unwrap();
        assert!(!is_sealed_entry(&foreign));
        assert!(is_ours_temporary(".tmp-1-2") && !is_ours_temporary("tmp"));
        remove_folder(dir.path(), "charts").unwrap();
        assert!(!foreign.exists());
    }
}
