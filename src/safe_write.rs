//! Writing a file so that it is never half-written and never written through a planted link.
//!
//! Every file is first written to a temporary file created exclusively (`O_EXCL`, random name,
//! so a symlink planted in the folder is never followed) beside its destination, then renamed
//! over it. A temporary file is removed on every error path; an existing destination keeps its
//! permission bits, a new one gets the umask's.
use std::io::Write;
use std::path::Path;

use tempfile::NamedTempFile;

/// The suffix of temporary files (`.<name>.<random>.peerpods-build.tmp`).
const TEMP_SUFFIX: &str = ".peerpods-build.tmp";

/// Writes through a temporary file, so a failure never leaves a half-written output.
pub fn write_atomically(path: &Path, content: &str) -> Result<(), String> {
    write_bytes_atomically(path, content.as_bytes())
}

/// [`write_atomically`] for content that need not be text.
pub fn write_bytes_atomically(path: &Path, content: &[u8]) -> Result<(), String> {
    let staged = stage_bytes(path, content)?;
    commit(staged, path)
}

/// `content` in a new temporary file beside `path`, with the mode `path` should end up with.
/// Dropping the result (any error on the way) removes the file.
pub fn stage(path: &Path, content: &str) -> Result<NamedTempFile, String> {
    stage_bytes(path, content.as_bytes())
}

fn stage_bytes(path: &Path, content: &[u8]) -> Result<NamedTempFile, String> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let file_name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
    if !folder.is_dir() {
        return Err(format!("cannot write {}: the folder {} does not exist", path.display(), folder.display()));
    }
    let prefix = format!(".{}.", file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode given to open(2), which the umask then narrows: what a new file gets.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(folder).map_err(|e| format!("writing {}: creating a temporary file in {}: {e}", path.display(), folder.display()))?;
    temp.write_all(content)
        .and_then(|()| temp.as_file().sync_data())
        .map_err(|e| format!("writing {}: {e}", temp.path().display()))?;
    // An existing regular file keeps its permission bits (a symlink is replaced, not followed).
    if let Ok(existing) = std::fs::symlink_metadata(path) {
        if existing.is_file() {
            temp.as_file().set_permissions(existing.permissions()).map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
    }
    Ok(temp)
}

/// Renames a staged file over `path`.
pub fn commit(staged: NamedTempFile, path: &Path) -> Result<(), String> {
    staged.persist(path).map(drop).map_err(|e| format!("writing {}: {}", path.display(), e.error))
}

