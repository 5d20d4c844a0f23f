//! The files a change touches: `git diff --name-status REV` (renames as a delete and an add)
//! and the untracked files git does not ignore, or a list the caller gives.
use std::path::{Path, PathBuf};

use crate::process::Program;

/// The top level of the git work tree holding `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    let out = git(dir, &["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches('\n'));
    top.canonicalize().map_err(|e| format!("{}: {e}", top.display()))
}

/// Every file changed, added or deleted in the work tree at `top` since `rev`, absolute.
pub fn since(top: &Path, rev: &str) -> Result<Vec<PathBuf>, String> {
    let diff = git(top, &["diff", "--name-status", "--no-renames", "-z", "--end-of-options", rev, "--"])
        .map_err(|e| format!("unknown git revision '{rev}' ({e})"))?;
    let mut files = Vec::new();
    // `-z`: status NUL path NUL, pairs.
    let mut fields = diff.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let (Some(_status), Some(path)) = (fields.next(), fields.next()) {
        files.push(top.join(String::from_utf8_lossy(path).as_ref()));
    }
    let untracked = git(top, &["ls-files", "-z", "--others", "--exclude-standard"])?;
    files.extend(untracked.split(|b| *b == 0).filter(|f| !f.is_empty()).map(|f| top.join(String::from_utf8_lossy(f).as_ref())));
    files.sort();
    files.dedup();
    Ok(files)
}

/// Paths as a user or a CI system lists them (relative to the current folder, or absolute),
/// made absolute without resolving links: a deleted file has none to resolve.
pub fn given(paths: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = paths
        .iter()
        .map(|p| p.trim_end_matches('\r'))
        .filter(|p| !p.is_empty())
        .map(|p| {
            let path = crate::kustomization::loader::normalize(&cwd.join(p));
            // A file that exists is named by its real folder, as the build records it.
            match (path.parent().and_then(|d| d.canonicalize().ok()), path.file_name()) {
                (Some(parent), Some(name)) => parent.join(name),
                _ => path,
            }
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Runs `git -C dir args...`; its stdout, or its stderr as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Program::new("git").arg("-C").arg(dir).args(args).run().map_err(|e| e.to_string())?;
    if out.success() {
        Ok(out.stdout)
    } else {
        Err(format!("git {}: {}", args.join(" "), out.stderr_text().trim_end()))
    }
}
