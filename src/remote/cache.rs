//! The cache of remote bases: one entry per repository and commit, written under a temporary
//! name and renamed into place, with a fingerprint of its files written last.
//!
//! ```text
//! <cache>/git/<repository key>/url                 the URL git fetched
//! <cache>/git/<repository key>/refs/<key>          "<ref>\n<commit>\n": the last commit a tag or branch named
//! <cache>/git/<repository key>/<commit>/tree/      the files (no .git)
//! <cache>/git/<repository key>/<commit>/complete   fingerprint of tree/, written last
//! <cache>/git/<repository key>/.tmp-*              a fetch under way (or killed)
//! <cache>/lock                                     held shared by builds, exclusively by `cache clear`
//! ```
//!
//! The cache folder is made with mode 0700 and refused when it belongs to another user or
//! others may write it ([`crate::beneath::private_folder`]); every file in it is created new
//! (`O_EXCL`, no link followed) and renamed into place.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// The environment variable that moves the cache.
pub const CACHE_ENV: &str = "PEERPODS_BUILD_CACHE";
const MARKER: &str = "complete";
const MARKER_HEADER: &str = "peerpods-build cache entry 3\n";
/// A temporary folder older than this belongs to a fetch that was killed.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// The cache folder.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
}

/// One cached checkout, for `cache list`.
#[derive(Debug)]
pub struct ListedEntry {
    pub url: String,
    pub commit: String,
    pub submodules: bool,
    /// Tags and branches last seen at this commit.
    pub refs: Vec<String>,
    pub path: PathBuf,
    /// Whether the entry's files still match its digest.
    pub intact: bool,
}

impl Cache {
    /// `--cache-dir`, else `$PEERPODS_BUILD_CACHE`, else the platform cache folder.
    pub fn locate(explicit: Option<&Path>) -> Cache {
        let root = explicit.map(Path::to_path_buf).or_else(|| std::env::var_os(CACHE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from)).unwrap_or_else(|| {
            let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache"));
            // Without either, a folder of the shared temporary folder named for our user.
            xdg.or(home).map(|dir| dir.join("peerpods-build")).unwrap_or_else(|| std::env::temp_dir().join(shared_name()))
        });
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn repository_dir(&self, url: &str) -> PathBuf {
        let readable: String = url.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
        let readable = readable.trim_matches('_');
        // The end of the URL (the repository's name) is the part worth reading; the hash keeps it unique.
        let readable = &readable[readable.len().saturating_sub(60)..];
        self.root.join("git").join(format!("{readable}-{}", &hex_digest(url.as_bytes())[..16]))
    }

    fn entry_dir(&self, url: &str, commit: &str, submodules: bool) -> PathBuf {
        let name = if submodules { commit.to_string() } else { format!("{commit}-nosubmodules") };
        self.repository_dir(url).join(name)
    }

    /// The files of a complete, intact entry. A damaged entry (files changed or missing since it
    /// was written) is moved away so that it is fetched again.
    pub fn entry(&self, url: &str, commit: &str, submodules: bool) -> Option<PathBuf> {
        sealed_tree(&self.entry_dir(url, commit, submodules))
    }

    /// The commit a tag or branch named when it was last resolved.
    pub fn remembered(&self, url: &str, git_ref: &str) -> Option<String> {
        let text = fs::read_to_string(self.repository_dir(url).join("refs").join(ref_key(git_ref))).ok()?;
        let (stored_ref, commit) = text.trim_end().split_once('\n')?;
        (stored_ref == git_ref).then(|| commit.to_string())
    }

    /// Records that `git_ref` names `commit`.
    pub fn remember(&self, url: &str, git_ref: &str, commit: &str) -> std::io::Result<()> {
        let refs = self.repository_dir(url).join("refs");
        fs::create_dir_all(&refs)?;
        write_atomically(&refs.join(ref_key(git_ref)), format!("{git_ref}\n{commit}\n").as_bytes())
    }

    /// A fresh folder to fetch into (its `tree/` is made by the caller), after removing what
    /// killed fetches left behind.
    pub fn begin(&self, url: &str) -> std::io::Result<PathBuf> {
        let repo = self.repository_dir(url);
        fs::create_dir_all(&repo)?;
        write_atomically(&repo.join("url"), url.as_bytes())?;
        begin_in(&repo)
    }

    /// Seals a fetched folder (digest written last) and renames it into place; when another
    /// build got there first, its entry is used and this copy dropped.
    pub fn finish(&self, temp: &Path, url: &str, commit: &str, submodules: bool) -> std::io::Result<PathBuf> {
        seal_into(temp, &self.entry_dir(url, commit, submodules))
    }

    /// Every entry, sorted by URL then commit.
    pub fn list(&self) -> Vec<ListedEntry> {
        let mut out = Vec::new();
        for repo in read_dir_sorted(&self.root.join("git")) {
            let Ok(url) = fs::read_to_string(repo.join("url")) else { continue };
            let refs: Vec<(String, String)> = read_dir_sorted(&repo.join("refs"))
                .iter()
                .filter_map(|f| fs::read_to_string(f).ok())
                .filter_map(|t| t.trim_end().split_once('\n').map(|(r, c)| (r.to_string(), c.to_string())))
                .collect();
            for dir in read_dir_sorted(&repo) {
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if name.starts_with('.') || !dir.join(MARKER).is_file() {
                    continue;
                }
                let (commit, submodules) = match name.strip_suffix("-nosubmodules") {
                    Some(commit) => (commit.to_string(), false),
                    None => (name.clone(), true),
                };
                let intact = is_intact(&dir);
                let refs = refs.iter().filter(|(_, c)| *c == commit).map(|(r, _)| r.clone()).collect();
                out.push(ListedEntry { url: url.clone(), commit, submodules, refs, path: dir.join("tree"), intact });
            }
        }
        out
    }

    /// Removes every entry, once the builds using the cache have ended (builds starting
    /// meanwhile wait for it). Only what carries the cache's own marker goes (an entry sealed
    /// by us, a repository folder with its `url`, our temporary folders): a `git/` that is
    /// something else (a project's own folder, when `--cache-dir` names a project) is left as
    /// it is and reported.
    pub fn clear(&self) -> std::io::Result<Cleared> {
        crate::beneath::private_folder(&self.root)?;
        let _lock = lock(&self.root, true)?;
        let mut cleared = Cleared::default();
        let git = self.root.join("git");
        for repo in read_dir_sorted(&git) {
            let is_repository = fs::symlink_metadata(&repo).is_ok_and(|m| m.is_dir()) && fs::symlink_metadata(repo.join("url")).is_ok_and(|m| m.is_file());
            if !is_repository {
                cleared.kept.push(repo);
                continue;
            }
            let mut kept_here = false;
            for child in read_dir_sorted(&repo) {
                let name = child.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if name == "url" || name == "refs" {
                    continue;
                }
                if is_ours_temporary(&name) {
                    fs::remove_dir_all(&child)?;
                } else if is_sealed_entry(&child) {
                    remove_folder(&repo, &name)?;
                    cleared.removed += 1;
                } else {
                    cleared.kept.push(child);
                    kept_here = true;
                }
            }
            if !kept_here {
                let refs = repo.join("refs");
                if fs::symlink_metadata(&refs).is_ok_and(|m| m.is_dir()) {
                    fs::remove_dir_all(&refs)?;
                }
                fs::remove_file(repo.join("url"))?;
                let _ = fs::remove_dir(&repo);
            }
        }
        let _ = fs::remove_dir(&git);
        Ok(cleared)
    }

    /// The cache a build uses: located, made private when missing and checked to be ours
    /// alone, and held (shared, until the process ends) so that `cache clear` waits for it.
    pub fn open(explicit: Option<&Path>) -> std::io::Result<Cache> {
        let cache = Cache::locate(explicit);
        crate::beneath::private_folder(&cache.root)?;
        hold_shared(&cache.root)?;
        Ok(cache)
    }
}

/// What `cache clear` did: the entries it removed, and what it left because it carries no
/// marker of ours.
#[derive(Debug, Default)]
pub struct Cleared {
    pub removed: usize,
    pub kept: Vec<PathBuf>,
}

/// Whether `dir` is an entry we sealed: a folder (not a link) whose `complete` file starts
/// with our marker header.
pub(crate) fn is_sealed_entry(dir: &Path) -> bool {
    if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let marker = crate::bounded_read::read_regular_file(&dir.join(MARKER), crate::bounded_read::Links::Refuse, 4096);
    marker.is_ok_and(|bytes| bytes.starts_with(MARKER_HEADER.as_bytes()))
}

/// Whether `name` is one of the temporary folders we make beside entries.
pub(crate) fn is_ours_temporary(name: &str) -> bool {
    name.starts_with(".tmp-") || name.starts_with(".discarded-") || name.starts_with(".clearing-")
}

/// The `tree/` of the sealed entry `dir`, if it is complete and its files are unchanged since
/// it was sealed; a damaged entry is moved aside and removed.
pub(crate) fn sealed_tree(dir: &Path) -> Option<PathBuf> {
    let marker = fs::read_to_string(dir.join(MARKER)).ok();
    let tree = dir.join("tree");
    match marker {
        Some(text) if text.strip_prefix(MARKER_HEADER).map(str::trim) == tree_digest(&tree).ok().as_deref() => Some(tree),
        None if !dir.exists() => None,
        _ => {
            discard(dir);
            None
        }
    }
}

/// Removes `root/name`, renamed first (under a name of its own) so that a build running now
/// never sees a half-removed entry; what an earlier removal that was killed left goes too.
pub(crate) fn remove_folder(root: &Path, name: &str) -> std::io::Result<()> {
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
/// files of an entry are read long after the checkout is found).
fn hold_shared(root: &Path) -> std::io::Result<()> {
    static HELD: std::sync::Mutex<Vec<(PathBuf, fs::File)>> = std::sync::Mutex::new(Vec::new());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if !held.iter().any(|(r, _)| r == root) {
        let file = lock(root, false)?;
        held.push((root.to_path_buf(), file));
    }
    Ok(())
}

/// Whether `dir` is a sealed entry whose files still match its digest (nothing is removed).
pub(crate) fn is_intact(dir: &Path) -> bool {
    fs::read_to_string(dir.join(MARKER)).ok().and_then(|t| t.strip_prefix(MARKER_HEADER).map(|d| d.trim().to_string())) == tree_digest(&dir.join("tree")).ok()
}

/// A fresh temporary folder in `parent` to write an entry into, after removing what killed
/// writers left behind there.
pub(crate) fn begin_in(parent: &Path) -> std::io::Result<PathBuf> {
    fs::create_dir_all(parent)?;
    for leftover in fs::read_dir(parent)?.flatten() {
        let name = leftover.file_name().to_string_lossy().into_owned();
        let old = leftover.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age > STALE_AFTER);
        if (name.starts_with(".tmp-") && old) || name.starts_with(".discarded-") {
            let _ = fs::remove_dir_all(leftover.path());
        }
    }
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let temp = parent.join(format!(".tmp-{}-{nanos}", std::process::id()));
    fs::create_dir(&temp)?;
    Ok(temp)
}

/// Seals the entry written in `temp` (the digest of its `tree/`, written last) and renames it
/// to `dir`; when another build got there first, its entry is used and this copy dropped.
/// Returns the entry's `tree/`.
pub(crate) fn seal_into(temp: &Path, dir: &Path) -> std::io::Result<PathBuf> {
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

fn ref_key(git_ref: &str) -> String {
    hex_digest(git_ref.as_bytes())[..24].to_string()
}

pub(crate) fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Moves a damaged entry aside (atomic, so no build reads it half-deleted), then removes it.
fn discard(dir: &Path) {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let aside = dir.with_file_name(format!(".discarded-{}-{nanos}", std::process::id()));
    if fs::rename(dir, &aside).is_ok() {
        let _ = fs::remove_dir_all(&aside);
    }
}

pub(crate) fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    paths.sort();
    paths
}

/// Through an exclusively created temporary file of random name (no planted link is followed).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::safe_write::write_bytes_atomically(path, bytes).map_err(std::io::Error::other)
}

/// A fingerprint of the files below `tree`: SHA-256 over every path in sorted order with its
/// kind and content (a symlink: its target). Taken when the entry is sealed from what was
/// written, and again on its first use in a process: a file changed, added, removed or cut
/// short since (whatever its size and time say) changes it.
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
                let content = fs::read(entry.path())?;
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

/// Removes every `.git` file or folder below `tree` (the clone's own and its submodules'):
/// a cached copy is plain files, and a kustomization cannot read git's configuration.
pub fn remove_git_metadata(tree: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(tree)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if entry.file_name() == ".git" {
            if kind.is_dir() { fs::remove_dir_all(entry.path())? } else { fs::remove_file(entry.path())? }
        } else if kind.is_dir() {
            remove_git_metadata(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_cache(label: &str) -> Cache {
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
        Cache { root: std::env::temp_dir().join(format!("ppb-cache-{label}-{}-{nanos}", std::process::id())) }
    }

    #[test]
    fn an_entry_is_used_only_when_sealed_and_unchanged() {
        let cache = temp_cache("seal");
        let url = "file:///r.git";
        let commit = "a".repeat(40);
        let temp = cache.begin(url).unwrap();
        fs::create_dir_all(temp.join("tree/dir")).unwrap();
        fs::write(temp.join("tree/dir/x.yaml"), "a: 1\n").unwrap();
        // Not renamed into place yet: nothing to use.
        assert!(cache.entry(url, &commit, true).is_none());
        let tree = cache.finish(&temp, url, &commit, true).unwrap();
        assert_eq!(cache.entry(url, &commit, true), Some(tree.clone()));
        assert!(cache.entry(url, &commit, false).is_none());
        fs::write(tree.join("dir/x.yaml"), "a: 22\n").unwrap();
        assert!(cache.entry(url, &commit, true).is_none(), "a changed file is detected");
        assert!(!tree.exists(), "and the damaged entry is gone");
        let _ = fs::remove_dir_all(cache.root());
    }

    #[test]
    fn refs_are_remembered_per_repository() {
        let cache = temp_cache("refs");
        cache.remember("file:///r.git", "v1", "abc").unwrap();
        assert_eq!(cache.remembered("file:///r.git", "v1").as_deref(), Some("abc"));
        assert_eq!(cache.remembered("file:///other.git", "v1"), None);
        assert_eq!(cache.remembered("file:///r.git", "v2"), None);
        let _ = fs::remove_dir_all(cache.root());
    }
}

/// The commit a checkout (an entry's `tree`, as [`Cache::entry`] gives it) holds: the entry's
/// folder is named after it.
pub fn commit_of_checkout(tree: &Path) -> Option<String> {
    let name = tree.parent()?.file_name()?.to_str()?;
    let commit = name.strip_suffix("-nosubmodules").unwrap_or(name);
    crate::remote::git::is_commit_id(commit).then(|| commit.to_string())
}
