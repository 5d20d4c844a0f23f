//! Remote bases: `resources`/`components` entries that are git URLs (fetched with the `git`
//! program into a cache, one entry per repository and commit) or HTTP(S) files.
//!
//! Nothing here runs unless a kustomization names a URL. A tag or branch costs one
//! `git ls-remote` per build; a full commit id, or `--offline`, none.
pub mod cache;
pub mod git;
pub mod go_url;
pub mod http;
pub mod progress;
pub mod redirects;
pub mod url;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use cache::Cache;
pub use url::RepoSpec;

/// How remote bases are fetched.
#[derive(Clone, Debug, Default)]
pub struct RemoteOptions {
    /// `--cache-dir` (else `$PEERPODS_BUILD_CACHE`, else the platform cache folder).
    pub cache_dir: Option<PathBuf>,
    /// `--offline`: build only from the cache; fail naming the entry that is missing.
    pub offline: bool,
    /// Whether a slow fetch prints its line on stderr (`--progress`, `--quiet`).
    pub progress: progress::Progress,
}

/// The build's reader of files named by URL ([`crate::kustomization::loader::UrlReader`]):
/// downloaded as kustomize's loader downloads them, a slow download saying so, none under
/// `--offline` (HTTP files are not cached).
pub fn url_reader(options: &RemoteOptions) -> crate::kustomization::loader::UrlReader {
    let (offline, progress) = (options.offline, options.progress);
    crate::kustomization::loader::UrlReader(std::sync::Arc::new(move |name: &str| {
        if !url::is_http_url(name) {
            return None;
        }
        let shown = redact_password(name);
        let read = match offline {
            true => Err(format!("{shown}: --offline: HTTP files are not cached")),
            false => progress::while_fetching(progress, &shown, || http::get_file(name)).map_err(|e| e.replace(name, &shown)),
        };
        Some((shown, read))
    }))
}

/// A fetch that failed: the URL, what went wrong, and the details.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{url}: {what}: {detail}")]
pub struct RemoteError {
    pub url: String,
    /// A short name for the failure: `unknown host`, `repository not found`, `ref not found`,
    /// `authentication failed`, `timed out`, `not in the cache (--offline)`, ...
    pub what: String,
    pub detail: String,
}

impl RemoteError {
    /// An error about `url`; a password written in a URL (`https://user:token@host/...`) is
    /// shown as `***`, here and in the details.
    pub fn new(url: &str, what: &str, detail: impl Into<String>) -> Self {
        let detail = detail.into().replace(url, &redact_password(url));
        RemoteError { url: redact_password(url), what: what.to_string(), detail }
    }
}

/// `scheme://user:secret@host/...` as `scheme://user:***@host/...`.
pub fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@').and_then(|at| rest[..at].find(':').map(|colon| (colon, at))) {
        Some((colon, at)) => format!("{scheme}://{}:***{}", &rest[..colon], &rest[at..]),
        None => url.to_string(),
    }
}

/// The checked-out files of `spec`'s repository (the whole tree; the kustomization folder is
/// `spec.kust_root()` inside it), from the cache or fetched into it.
pub fn checkout(spec: &RepoSpec, options: &RemoteOptions) -> Result<PathBuf, RemoteError> {
    // One resolution per repository, ref and submodule choice per build: a base and a
    // component from the same repository cost one `ls-remote`.
    static RESOLVED: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let key = format!("{}\n{}\n{}\n{:?}", spec.clone_spec(), spec.git_ref, spec.submodules, options.cache_dir);
    let mut resolved = RESOLVED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tree) = resolved.get_or_insert_with(HashMap::new).get(&key) {
        if tree.is_dir() {
            return Ok(tree.clone());
        }
    }
    let what = redact_password(&spec.raw);
    let tree = progress::while_fetching(options.progress, &what, || checkout_uncached(spec, options))?;
    resolved.get_or_insert_with(HashMap::new).insert(key, tree.clone());
    Ok(tree)
}

fn checkout_uncached(spec: &RepoSpec, options: &RemoteOptions) -> Result<PathBuf, RemoteError> {
    let url = spec.clone_spec();
    let git_ref = if spec.git_ref.is_empty() { "HEAD" } else { spec.git_ref.as_str() };
    git::check_ref(&url, git_ref)?;
    if let Some(message) = &spec.invalid_timeout {
        return Err(RemoteError::new(&url, "invalid timeout", message.clone()));
    }
    let cache_root = Cache::locate(options.cache_dir.as_deref()).root().to_path_buf();
    let cache = Cache::open(options.cache_dir.as_deref())
        .map_err(|e| RemoteError::new(&url, "cache error", format!("{}: {e}", cache_root.display())))?;
    let io_error = |e: std::io::Error| RemoteError::new(&url, "cache error", format!("{}: {e}", cache.root().display()));
    let commit = if git::is_commit_id(git_ref) {
        git_ref.to_string()
    } else if options.offline {
        cache.remembered(&url, git_ref).ok_or_else(|| {
            RemoteError::new(&url, "not in the cache (--offline)", format!("ref '{git_ref}' was never fetched into {}", cache.root().display()))
        })?
    } else {
        // While the server answers, check the entry the ref named last time: usually it still does.
        let remembered = cache.remembered(&url, git_ref);
        let (listing, remembered_tree) = std::thread::scope(|scope| {
            let check = scope.spawn(|| remembered.as_deref().and_then(|commit| cache.entry(&url, commit, spec.submodules)));
            let listing = git::run(cache.root(), &["ls-remote", "--end-of-options", &url, git_ref], &url, spec.timeout);
            (listing, check.join().ok().flatten())
        });
        let commit = git::commit_in_listing(&listing?, git_ref)
            .ok_or_else(|| RemoteError::new(&url, "ref not found", format!("the repository has no branch or tag '{git_ref}'")))?;
        if let (Some(tree), true) = (remembered_tree, remembered.as_deref() == Some(commit.as_str())) {
            return Ok(tree);
        }
        commit
    };
    if let Some(tree) = cache.entry(&url, &commit, spec.submodules) {
        // The ref resolved to a commit cached under another name: `--offline` must know it too.
        if !options.offline && !git::is_commit_id(git_ref) {
            cache.remember(&url, git_ref, &commit).map_err(io_error)?;
        }
        return Ok(tree);
    }
    if options.offline {
        return Err(RemoteError::new(
            &url,
            "not in the cache (--offline)",
            format!("commit {commit} (ref '{git_ref}') is not in {}", cache.root().display()),
        ));
    }
    let temp = cache.begin(&url).map_err(io_error)?;
    let fetched = fetch(spec, &url, git_ref, &temp.join("tree"));
    let commit = match fetched {
        Ok(commit) => commit,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(e);
        }
    };
    let tree = cache.finish(&temp, &url, &commit, spec.submodules).map_err(io_error)?;
    if !git::is_commit_id(git_ref) {
        cache.remember(&url, git_ref, &commit).map_err(io_error)?;
    }
    Ok(tree)
}

/// kustomize's clone (`init`, `remote add`, `fetch --depth=1 URL REF`, `checkout FETCH_HEAD`,
/// submodules), into `tree`; returns the commit, and leaves plain files (no `.git`).
fn fetch(spec: &RepoSpec, url: &str, git_ref: &str, tree: &Path) -> Result<String, RemoteError> {
    std::fs::create_dir_all(tree).map_err(|e| RemoteError::new(url, "cache error", e.to_string()))?;
    let run = |args: &[&str]| git::run(tree, args, url, spec.timeout);
    run(&["init", "--quiet"])?;
    // Relative submodule URLs are resolved against `origin`.
    run(&["remote", "add", "--end-of-options", "origin", url])?;
    run(&["fetch", "--quiet", "--depth=1", "--end-of-options", url, git_ref])?;
    // FETCH_HEAD is ours, not user text; git before 2.43 takes `--end-of-options` here as a path.
    run(&["checkout", "--quiet", "--detach", "FETCH_HEAD"])?;
    if spec.submodules {
        run(&["submodule", "--quiet", "update", "--init", "--recursive"])?;
    }
    let commit = run(&["rev-parse", "HEAD"])?.trim().to_string();
    cache::remove_git_metadata(tree).map_err(|e| RemoteError::new(url, "cache error", e.to_string()))?;
    Ok(commit)
}

/// For `build URL`: the spec and checkout when `dir` is no local path but a git URL.
pub fn top_level_repository(dir: &Path, options: &RemoteOptions) -> Option<crate::error::Result<(RepoSpec, PathBuf)>> {
    let text = dir.to_str()?;
    if dir.exists() {
        return None;
    }
    let spec = RepoSpec::parse(text).ok()?;
    Some(checkout(&spec, options).map(|tree| (spec, tree)).map_err(|e| crate::error::Error::msg(e.to_string())))
}

/// kustomize's origin for an entry met while at `current` (`Origin.Append`): a repository
/// URL starts a new origin (`repo`, `ref`, the folder inside it); anything else is joined to the
/// current path.
pub fn append_origin(current: &serde_json::Value, entry: &str) -> serde_json::Value {
    let mut origin = current.clone();
    let serde_json::Value::Object(map) = &mut origin else { return origin };
    match RepoSpec::parse(entry) {
        Ok(spec) => {
            map.insert("path".into(), spec.origin_path().into());
            map.insert("repo".into(), spec.clone_spec().into());
            if spec.git_ref.is_empty() {
                map.remove("ref");
            } else {
                map.insert("ref".into(), spec.git_ref.into());
            }
        }
        Err(_) => {
            let path = map.get("path").and_then(|p| p.as_str()).unwrap_or("").to_string();
            map.insert("path".into(), url::join_path(&[&path, entry]).into());
        }
    }
    origin
}

/// Origins recorded inside a remote kustomization are relative to its folder; this makes them
/// kustomize's: the path joined to the folder's place in the repository, plus `repo` and `ref`.
/// Origins that already name a repository (a remote inside the remote) are left alone.
pub fn stamp_origin(origin: &mut serde_json::Value, spec: &RepoSpec) {
    let serde_json::Value::Object(map) = origin else { return };
    if map.contains_key("repo") {
        return;
    }
    let prefix = spec.origin_path();
    for key in ["path", "configuredIn"] {
        if let Some(path) = map.get(key).and_then(|p| p.as_str()).map(str::to_string) {
            map.insert(key.into(), url::join_path(&[&prefix, &path]).into());
        }
    }
    map.insert("repo".into(), spec.clone_spec().into());
    if !spec.git_ref.is_empty() {
        map.insert("ref".into(), spec.git_ref.clone().into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_are_not_shown() {
        assert_eq!(redact_password("https://me:s3cret@git.example.com/o/r.git"), "https://me:***@git.example.com/o/r.git");
        assert_eq!(redact_password("https://me@git.example.com/o/r.git"), "https://me@git.example.com/o/r.git");
        assert_eq!(redact_password("ssh://git@host:22/o/r"), "ssh://git@host:22/o/r");
        let e = RemoteError::new("https://u:p@h/o/r", "git failed", "'git ls-remote https://u:p@h/o/r HEAD': boom");
        assert!(!e.to_string().contains(":p@"), "{e}");
    }
}
