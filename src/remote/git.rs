//! The `git` program, run as kustomize runs it: the user's environment (credentials, ssh
//! config, proxies, CA settings) passes through, each command has a timeout.
use std::path::Path;
use std::time::Duration;

use crate::process::{Program, ProcessError};

use super::RemoteError;

/// Variables that would point git at another repository than the one it works on (Argo CD and
/// CI jobs run builds inside a checkout, sometimes with these set); everything else, `GIT_SSH_COMMAND`,
/// `GIT_ASKPASS`, `GIT_CONFIG_*`, `GIT_SSL_*`, proxies, passes through.
const REPOSITORY_VARIABLES: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// Runs `git args...` in `dir` for the repository `url`, with a timeout; returns stdout.
///
/// `dir` is a folder of ours (the cache root, or a checkout being made): git's discovery stops
/// there (`GIT_CEILING_DIRECTORIES`), so a repository around the cache, with its configuration
/// (`core.sshCommand`, hooks, ...), is never read. Callers put `--end-of-options` before user text.
pub fn run(dir: &Path, args: &[&str], url: &str, timeout: Duration) -> Result<String, RemoteError> {
    let mut program = pinned(Program::new("git").args(args), dir).timeout(timeout);
    // A password prompt would wait for the timeout; fail at once unless the user asked for prompts.
    if std::env::var_os("GIT_TERMINAL_PROMPT").is_none() {
        program = program.env("GIT_TERMINAL_PROMPT", "0");
    }
    let shown = format!("git {}", args.join(" "));
    let finished = program.run().map_err(|error| match error {
        ProcessError::NotFound { .. } => RemoteError::new(url, "no 'git' program on PATH", error.to_string()),
        ProcessError::TimedOut { .. } => {
            RemoteError::new(url, "timed out", format!("'{shown}' took more than {timeout:?} (set ?timeout= in the URL)"))
        }
        other => RemoteError::new(url, "git failed", other.to_string()),
    })?;
    if finished.success() {
        Ok(String::from_utf8_lossy(&finished.stdout).into_owned())
    } else {
        let err = finished.stderr_text();
        Err(RemoteError::new(url, classify(&err), format!("'{shown}': {err}")))
    }
}

/// `program` run in `dir` with git's repository discovery pinned to `dir` (it looks for `dir/.git`
/// and never above) and without the variables that point git at another repository.
pub fn pinned(mut program: Program, dir: &Path) -> Program {
    for name in REPOSITORY_VARIABLES {
        program = program.env_remove(name);
    }
    // A ceiling stops the search before entering it: the parent of `dir` (a ceiling equal to the
    // working folder would not count).
    let real = dir.canonicalize().unwrap_or_else(|_| std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
    let ceiling = real.parent().unwrap_or(&real).to_path_buf();
    program.current_dir(dir).env("GIT_CEILING_DIRECTORIES", ceiling)
}

/// Refuses a ref git could read as an option (`--upload-pack=...`): no branch, tag or commit
/// id starts with `-` (git's `check-ref-format` refuses such names too).
pub fn check_ref(url: &str, git_ref: &str) -> Result<(), RemoteError> {
    if git_ref.starts_with('-') {
        return Err(RemoteError::new(url, "invalid ref", format!("'{git_ref}' starts with '-' (a branch, tag or commit id never does)")));
    }
    Ok(())
}

/// What went wrong, from git's message: the words users search for.
fn classify(stderr: &str) -> &'static str {
    let lower = stderr.to_ascii_lowercase();
    let any = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if any(&["could not resolve host", "name or service not known", "temporary failure in name resolution", "nodename nor servname"]) {
        "unknown host"
    } else if any(&["authentication failed", "could not read username", "could not read password", "permission denied (publickey", "terminal prompts disabled", "access denied", "returned error: 401", "returned error: 403"]) {
        "authentication failed"
    } else if any(&["couldn't find remote ref", "not our ref", "unadvertised object"]) {
        "ref not found"
    } else if any(&["repository not found", "does not appear to be a git repository", "not found", "returned error: 404"]) {
        "repository not found"
    } else if any(&["connection refused", "failed to connect", "couldn't connect", "connection timed out", "network is unreachable"]) {
        "cannot connect"
    } else {
        "git failed"
    }
}

/// The commit `git_ref` names in `git ls-remote` output, by git's own lookup order
/// (`refs/<ref>`, `refs/tags/<ref>`, `refs/heads/<ref>`, ...), annotated tags peeled.
pub fn commit_in_listing(listing: &str, git_ref: &str) -> Option<String> {
    let refs: Vec<(&str, &str)> = listing.lines().filter_map(|line| line.split_once('\t')).map(|(id, name)| (name.trim(), id.trim())).collect();
    let find = |name: &str| refs.iter().find(|(n, _)| *n == name).map(|(_, id)| id.to_string());
    let candidates = [
        git_ref.to_string(),
        format!("refs/{git_ref}"),
        format!("refs/tags/{git_ref}"),
        format!("refs/heads/{git_ref}"),
        format!("refs/remotes/{git_ref}"),
        format!("refs/remotes/{git_ref}/HEAD"),
    ];
    let found = candidates.iter().find(|name| (git_ref == "HEAD" || name.starts_with("refs/")) && find(name).is_some())?;
    find(&format!("{found}^{{}}")).or_else(|| find(found))
}

/// Whether a ref is a full commit id (SHA-1 or SHA-256), which never moves.
pub fn is_commit_id(git_ref: &str) -> bool {
    (git_ref.len() == 40 || git_ref.len() == 64) && git_ref.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "1111111111111111111111111111111111111111\tHEAD\n\
        2222222222222222222222222222222222222222\trefs/heads/v1\n\
        3333333333333333333333333333333333333333\trefs/tags/v1\n\
        4444444444444444444444444444444444444444\trefs/tags/v1^{}\n\
        5555555555555555555555555555555555555555\trefs/heads/feature/v1\n";

    #[test]
    fn refs_resolve_in_gits_order_with_tags_peeled() {
        assert_eq!(commit_in_listing(LISTING, "v1").unwrap(), "4".repeat(40));
        assert_eq!(commit_in_listing(LISTING, "heads/v1").unwrap(), "2".repeat(40));
        assert_eq!(commit_in_listing(LISTING, "HEAD").unwrap(), "1".repeat(40));
        assert_eq!(commit_in_listing(LISTING, "feature/v1").unwrap(), "5".repeat(40));
        assert_eq!(commit_in_listing(LISTING, "v2"), None);
    }

    #[test]
    fn git_messages_are_named() {
        assert_eq!(classify("fatal: unable to access 'https://x/': Could not resolve host: x"), "unknown host");
        assert_eq!(classify("fatal: '/nope' does not appear to be a git repository"), "repository not found");
        assert_eq!(classify("fatal: couldn't find remote ref v9"), "ref not found");
        assert_eq!(classify("fatal: could not read Username for 'https://x': terminal prompts disabled"), "authentication failed");
        assert!(is_commit_id(&"a".repeat(40)) && !is_commit_id("v1") && !is_commit_id(&"A".repeat(40)));
    }
}
