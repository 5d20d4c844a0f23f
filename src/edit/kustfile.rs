//! The kustomization file an edit changes: found, read and checked as `kustomize edit` finds
//! and reads it, and written whole or not at all.
use std::path::{Path, PathBuf};

use super::EditError;
use crate::error::Error;
use crate::kustomization::loader::KUSTOMIZATION_FILE_NAMES;
use crate::remote::url::clean_path;

/// The one kustomization file in `dir` (any of kustomize's names; a folder by that name is refused).
pub(super) fn find_kustomization_file(dir: &Path) -> Result<PathBuf, EditError> {
    let found: Vec<&str> = KUSTOMIZATION_FILE_NAMES.iter().copied().filter(|name| dir.join(name).exists()).collect();
    match found[..] {
        [] => Err(EditError::MissingFile),
        [name] if dir.join(name).is_dir() => Err(EditError::NotAFile(name.to_string())),
        [name] => Ok(dir.join(name)),
        _ => Err(EditError::MultipleFiles(found.iter().map(|n| n.to_string()).collect())),
    }
}

/// The file's text, refused when kustomize would not read it as a kustomization.
pub(super) fn read(file: &Path) -> Result<String, EditError> {
    let text = crate::bounded_read::read_text(file).map_err(|e| Error::Io { path: file.to_path_buf(), message: e.to_string() })?;
    crate::target::parse_kustomization(&text, file)?;
    Ok(text)
}

/// Writes `text` over `file` (through a symlink, keeping the file's permissions), after
/// checking it still reads as a kustomization; never half-written ([`crate::safe_write`]).
/// Together with `others` (regular files the edit rewrites): every file is staged
/// before any is renamed into place, so either all change or, on an error, none.
pub(super) fn write_with(file: &Path, text: &str, others: &[(PathBuf, String)]) -> Result<(), EditError> {
    crate::target::parse_kustomization(text, file)
        .map_err(|e| Error::msg(format!("the edit would leave {} unreadable, nothing written: {e}", file.display())))?;
    let real = |path: &Path| std::fs::canonicalize(path).map_err(|e| Error::Io { path: path.to_path_buf(), message: e.to_string() });
    let mut writes = vec![(real(file)?, text)];
    for (path, content) in others {
        writes.push((real(path)?, content.as_str()));
    }
    let staged = writes
        .iter()
        .map(|(path, content)| crate::safe_write::stage(path, content))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::msg)?;
    for (staged, (path, _)) in staged.into_iter().zip(&writes) {
        crate::safe_write::commit(staged, path).map_err(Error::msg)?;
    }
    Ok(())
}

/// Component paths as `kustomize edit add component` takes them: a pattern with `*`, `?` or
/// `[` is expanded (matches in name order, paths cleaned as Go's `filepath.Glob` returns them),
/// another path must exist. Remote components are not fetched, so they are refused.
pub(super) fn expand_components(dir: &Path, patterns: &[String]) -> Result<Vec<String>, EditError> {
    if patterns.is_empty() {
        return Err(EditError::Usage("must specify a component file".into()));
    }
    expand_paths(dir, patterns, "components")
}

/// Paths as `kustomize edit add resource|generator|transformer` take them: as
/// [`expand_components`], `what` naming them in messages.
pub(super) fn expand_paths(dir: &Path, patterns: &[String], what: &str) -> Result<Vec<String>, EditError> {
    let mut found = Vec::new();
    for pattern in patterns {
        if pattern.contains("://") || pattern.starts_with("git@") || pattern.starts_with("github.com/") {
            let reason = format!("remote {what} are not fetched; peerpods-build never uses the network to edit");
            return Err(EditError::NoMatch { pattern: pattern.clone(), reason });
        }
        let matches = glob_matches(dir, pattern)?;
        if matches.is_empty() {
            // kustomize names the path from the root, as its loader made it absolute.
            let joined = dir.join(pattern);
            let absolute = clean_path(&std::path::absolute(&joined).unwrap_or(joined).to_string_lossy());
            let reason = format!(
                "must build at directory: not a valid directory: evalsymlink failure on '{absolute}' : lstat {absolute}: no such file or directory"
            );
            return Err(EditError::NoMatch { pattern: pattern.clone(), reason });
        }
        found.extend(matches);
    }
    Ok(found)
}

/// Paths as `kustomize edit add generator|transformer|configuration` take them: each
/// pattern's matches, a pattern matching nothing noted (`P has no match`) and left out.
pub(super) fn glob_each(dir: &Path, patterns: &[String], notes: &mut Vec<String>) -> Result<Vec<String>, EditError> {
    let mut found = Vec::new();
    for pattern in patterns {
        let matches = glob_matches(dir, pattern)?;
        if matches.is_empty() {
            notes.push(format!("{pattern} has no match"));
        }
        found.extend(matches);
    }
    Ok(found)
}

/// The matches of `pattern`, relative to `dir` as the pattern is.
fn glob_relative(dir: &Path, pattern: &str) -> Result<Vec<String>, EditError> {
    let bad = |e: String| EditError::Usage(format!("error checking the filesystem: {e}"));
    let base = glob::Pattern::escape(&dir.to_string_lossy());
    let full = format!("{base}/{pattern}");
    let mut found = Vec::new();
    for path in glob::glob(&full).map_err(|e| bad(e.to_string()))? {
        let path = path.map_err(|e| bad(e.to_string()))?;
        let relative = path.strip_prefix(dir).map_or_else(|_| path.to_string_lossy().into_owned(), |p| p.to_string_lossy().into_owned());
        found.push(clean_path(&relative));
    }
    found.sort();
    Ok(found)
}

/// What Go's `filepath.Glob` returns for `pattern` under `dir`: the matches (relative, in name
/// order), or the path itself when it has no pattern characters and exists.
pub(super) fn glob_matches(dir: &Path, pattern: &str) -> Result<Vec<String>, EditError> {
    if pattern.contains(['*', '?', '[']) {
        glob_relative(dir, pattern)
    } else if dir.join(pattern).symlink_metadata().is_ok() {
        Ok(vec![pattern.to_string()])
    } else {
        Ok(Vec::new())
    }
}

/// Writes a new kustomization file, refused (nothing written) if the text would not read as one.
pub(super) fn write_new(file: &Path, text: &str) -> Result<(), EditError> {
    crate::target::parse_kustomization(text, file).map_err(|e| Error::msg(format!("{}: nothing written: {e}", file.display())))?;
    crate::safe_write::write_atomically(file, text).map_err(Error::msg)?;
    Ok(())
}
