//! A git revision's files in a temporary folder, read from the repository's objects: the working
//! tree and the index are never touched, so a diff can run while someone edits. The whole tree at
//! the revision is written, because a kustomization may reach anywhere (`../../base`).
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::DiffError;

/// The files of one revision, removed when dropped.
pub struct Snapshot {
    folder: tempfile::TempDir,
}

impl Snapshot {
    /// Where the repository's top level is in the snapshot.
    pub fn root(&self) -> &Path {
        self.folder.path()
    }
}

/// The top level of the git work tree that holds `dir` (or, for a folder that does not exist,
/// its nearest existing parent).
pub fn toplevel(dir: &Path) -> Result<PathBuf, DiffError> {
    let mut existing = dir;
    while !existing.is_dir() {
        existing = existing.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    }
    let out = git(existing, &["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches('\n'));
    top.canonicalize().map_err(|e| DiffError::Io { path: top.display().to_string(), message: e.to_string() })
}

/// Writes every file of `rev` in the repository at `toplevel` into a new temporary folder.
pub fn snapshot(toplevel: &Path, rev: &str) -> Result<Snapshot, DiffError> {
    let spec = format!("{rev}^{{tree}}");
    let tree = git(toplevel, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])
        .map_err(|_| DiffError::Git(format!("{}: unknown git revision '{rev}'", toplevel.display())))?;
    let tree = String::from_utf8_lossy(&tree).trim().to_string();
    let listing = git(toplevel, &["ls-tree", "-r", "-z", "--full-tree", &tree])?;
    let entries: Vec<Entry> = listing.split(|b| *b == 0).filter(|e| !e.is_empty()).filter_map(Entry::parse).collect();
    let folder = tempfile::Builder::new()
        .prefix("peerpods-diff-")
        .tempdir()
        .map_err(|e| DiffError::Io { path: std::env::temp_dir().display().to_string(), message: e.to_string() })?;
    write_blobs(toplevel, &entries, folder.path())?;
    Ok(Snapshot { folder })
}

/// One file of `git ls-tree -r`: `<mode> <type> <object>\t<path>`.
struct Entry {
    mode: String,
    object: String,
    path: String,
}

impl Entry {
    fn parse(line: &[u8]) -> Option<Entry> {
        let line = std::str::from_utf8(line).ok()?;
        let (meta, path) = line.split_once('\t')?;
        let mut parts = meta.split(' ');
        let (mode, kind, object) = (parts.next()?, parts.next()?, parts.next()?);
        // Submodules (`commit` entries) have no files in this repository.
        (kind == "blob").then(|| Entry { mode: mode.to_string(), object: object.to_string(), path: path.to_string() })
    }
}

/// Streams every blob through one `git cat-file --batch` and writes it under `root`.
fn write_blobs(toplevel: &Path, entries: &[Entry], root: &Path) -> Result<(), DiffError> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(toplevel)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| DiffError::Git(format!("cannot run git: {e}")))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let objects: Vec<String> = entries.iter().map(|e| format!("{}\n", e.object)).collect();
    // Written from another thread: git answers while it reads, and both pipes have limits.
    let feeder = std::thread::spawn(move || {
        for object in objects {
            if stdin.write_all(object.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut reader = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let written = entries.iter().try_for_each(|entry| {
        let content = read_blob(&mut reader, &entry.object)?;
        write_entry(root, entry, &content)
    });
    drop(reader);
    let _ = feeder.join();
    let status = child.wait().map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
    written?;
    if !status.success() {
        return Err(DiffError::Git(format!("git cat-file --batch in {} failed", toplevel.display())));
    }
    Ok(())
}

/// Reads one `<object> blob <size>\n<content>\n` answer.
fn read_blob(reader: &mut impl BufRead, object: &str) -> Result<Vec<u8>, DiffError> {
    let mut header = String::new();
    reader.read_line(&mut header).map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
    let size: usize = header
        .trim_end()
        .strip_prefix(object)
        .and_then(|rest| rest.strip_prefix(" blob "))
        .and_then(|size| size.parse().ok())
        .ok_or_else(|| DiffError::Git(format!("git cat-file: unexpected answer for {object}: {}", header.trim_end())))?;
    let mut content = vec![0; size + 1];
    reader.read_exact(&mut content).map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
    content.pop();
    Ok(content)
}

fn write_entry(root: &Path, entry: &Entry, content: &[u8]) -> Result<(), DiffError> {
    let path = root.join(&entry.path);
    let io = |e: std::io::Error| DiffError::Io { path: path.display().to_string(), message: e.to_string() };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    if entry.mode == "120000" {
        let target = PathBuf::from(String::from_utf8_lossy(content).into_owned());
        #[cfg(unix)]
        return std::os::unix::fs::symlink(target, &path).map_err(io);
        #[cfg(not(unix))]
        return std::fs::write(&path, target.to_string_lossy().as_bytes()).map_err(io);
    }
    std::fs::write(&path, content).map_err(io)
}

/// Runs `git -C dir args...` with the caller's environment; its stdout, or its stderr as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, DiffError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| DiffError::Git(format!("cannot run git: {e}")))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(DiffError::Git(format!("git {} in {}: {}", args.join(" "), dir.display(), String::from_utf8_lossy(&out.stderr).trim())))
    }
}
