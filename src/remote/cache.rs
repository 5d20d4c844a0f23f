//! The cache of remote bases: one entry per repository and commit, sealed as every entry of
//! the cache folder is ([`crate::sealed_cache`]: written under a temporary name, renamed into
//! place, a fingerprint of its files written last, used only while intact).
//!
//! ```text
//! <cache>/git/<repository key>/url                 the URL git fetched
//! <cache>/git/<repository key>/refs/<key>          "<ref>\n<commit>\n": the last commit a tag or branch named
//! <cache>/git/<repository key>/<commit>/tree/      the files (no .git)
//! <cache>/git/<repository key>/<commit>/complete   fingerprint of tree/, written last
//! <cache>/git/<repository key>/.tmp-*              a fetch under way (or killed)
//! <cache>/lock                                     held shared by builds, exclusively by `cache clear`
//! ```
use std::fs;
use std::path::{Path, PathBuf};

use crate::sealed_cache::{begin_in, hex_digest, is_complete, is_intact, is_ours_temporary, is_sealed_entry, read_dir_sorted, read_note, remove_folder, seal_into, sealed_tree, write_atomically, CacheFolder, Cleared};

/// The remote checkouts of a cache folder.
#[derive(Clone, Debug)]
pub struct Cache {
    folder: CacheFolder,
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
    /// The checkouts of the cache folder `--cache-dir` and friends name (nothing is made).
    pub fn locate(explicit: Option<&Path>) -> Cache {
        Cache { folder: CacheFolder::locate(explicit) }
    }

    /// The checkouts of the cache folder a build uses ([`CacheFolder::open`]).
    pub fn open(explicit: Option<&Path>) -> std::io::Result<Cache> {
        Ok(Cache { folder: CacheFolder::open(explicit)? })
    }

    pub fn folder(&self) -> &CacheFolder {
        &self.folder
    }

    pub fn root(&self) -> &Path {
        self.folder.root()
    }

    fn repository_dir(&self, url: &str) -> PathBuf {
        let readable: String = url.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
        let readable = readable.trim_matches('_');
        // The end of the URL (the repository's name) is the part worth reading; the hash keeps it unique.
        let readable = &readable[readable.len().saturating_sub(60)..];
        self.root().join("git").join(format!("{readable}-{}", &hex_digest(url.as_bytes())[..16]))
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
        let text = read_note(&self.repository_dir(url).join("refs").join(ref_key(git_ref)))?;
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
        for repo in read_dir_sorted(&self.root().join("git")) {
            let Some(url) = read_note(&repo.join("url")) else { continue };
            let refs: Vec<(String, String)> = read_dir_sorted(&repo.join("refs"))
                .iter()
                .filter_map(|f| read_note(f))
                .filter_map(|t| t.trim_end().split_once('\n').map(|(r, c)| (r.to_string(), c.to_string())))
                .collect();
            for dir in read_dir_sorted(&repo) {
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if name.starts_with('.') || !is_complete(&dir) {
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

    /// Removes every checkout, the caller holding the folder ([`CacheFolder::exclusively`]).
    /// Only what carries the cache's own marker goes (an entry sealed by us, a repository
    /// folder with its `url`, our temporary folders): a `git/` that is something else (a
    /// project's own folder, when `--cache-dir` names a project) is left and reported.
    pub fn clear(&self) -> std::io::Result<Cleared> {
        let mut cleared = Cleared::default();
        let git = self.root().join("git");
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
}

fn ref_key(git_ref: &str) -> String {
    hex_digest(git_ref.as_bytes())[..24].to_string()
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
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        Cache::locate(Some(&std::env::temp_dir().join(format!("ppb-cache-{label}-{}-{nanos}", std::process::id()))))
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
