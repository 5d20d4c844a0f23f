//! Writing a file so that it is never half-written and never written through a planted link.
//!
//! Every file is first written to a temporary file created exclusively (`O_EXCL`, random name,
//! so a symlink planted in the folder is never followed) beside its destination, then renamed
//! over it. A temporary file is removed on every error path; an existing destination keeps its
//! permission bits, a new one gets the umask's.
//!
//! A destination that exists and is not a regular file (a device such as `/dev/null`, a FIFO),
//! or that lies in or links through `/dev` or `/proc` (`/dev/stdout`, whatever stdout is), is
//! written in place, as kustomize writes it, never replaced; an existing
//! file we may not write is refused, as kustomize refuses it.
use std::io::Write;
use std::path::Path;

use tempfile::NamedTempFile;

/// The suffix of temporary files (`.<name>.<random>.peerpods-build.tmp`).
const TEMP_SUFFIX: &str = ".peerpods-build.tmp";

/// The longest part of a destination's name kept in its temporary file's name: with the dot,
/// the random part and the suffix, well below the 255 bytes a name may have.
const TEMP_NAME_KEPT: usize = 200;

/// Writes through a temporary file, so a failure never leaves a half-written output (a device
/// or FIFO is written in place).
pub fn write_atomically(path: &Path, content: &str) -> Result<(), String> {
    write_bytes_atomically(path, content.as_bytes())
}

/// [`write_atomically`] for content that need not be text.
pub fn write_bytes_atomically(path: &Path, content: &[u8]) -> Result<(), String> {
    if is_written_in_place(path) {
        return write_in_place(path, content);
    }
    let staged = stage_bytes(path, content)?;
    commit(staged, path)
}

/// The most links followed when looking where a destination leads (Linux's own bound).
const MAX_LINKS: usize = 40;

/// Whether `path` is a destination kustomize writes in place and we must never replace: one
/// that exists and is not a regular file or folder (a device, a FIFO), or one in, or linked
/// through, `/dev` or `/proc` (`/dev/stdout` leads to `/proc/self/fd/1`, which may be a
/// regular file when stdout is redirected to one: renaming over it would replace the link,
/// and, as root, make the host's `/dev/stdout` a file).
fn is_written_in_place(path: &Path) -> bool {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return true;
    }
    // Lexically, as the kernel walks a path without links: `..` takes off one name.
    let system = |p: &Path| {
        let mut names: Vec<&std::ffi::OsStr> = Vec::new();
        for part in p.components() {
            match part {
                std::path::Component::ParentDir => drop(names.pop()),
                std::path::Component::Normal(name) => names.push(name),
                _ => {}
            }
        }
        names.first().is_some_and(|first| *first == "dev" || *first == "proc")
    };
    let mut hop = match std::path::absolute(path) {
        Ok(absolute) => absolute,
        Err(_) => return false,
    };
    for _ in 0..MAX_LINKS {
        if system(&hop) {
            return true;
        }
        match std::fs::read_link(&hop) {
            Ok(target) => hop = hop.parent().unwrap_or(Path::new("/")).join(target),
            Err(_) => return false,
        }
    }
    false
}

/// Writes into an existing device or FIFO (through a link to one, as `/dev/stdout` is).
fn write_in_place(path: &Path, content: &[u8]) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| format!("writing {}: {e}", path.display()))?;
    file.write_all(content).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Refuses an existing file we may not write (kustomize's `open(2)` fails on it; a rename
/// would replace it anyway).
fn check_writable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) && rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_err() {
            return Err(format!("writing {}: permission denied (the file is read-only)", path.display()));
        }
    }
    let _ = path;
    Ok(())
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
    check_writable(path)?;
    let file_name = file_name.to_string_lossy();
    let mut kept = TEMP_NAME_KEPT.min(file_name.len());
    while !file_name.is_char_boundary(kept) {
        kept -= 1;
    }
    let prefix = format!(".{}.", &file_name[..kept]);
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

