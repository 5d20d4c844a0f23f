//! A git revision's files in a temporary folder, read from the repository's objects: the working
//! tree and the index are never touched, so a diff can run while someone edits. Only the folders
//! a build reads are written: the kustomization's folder and, through `resources`, `bases` and
//! `components`, every kustomization folder it reaches (`../../base`); the load restrictor keeps
//! each kustomization's files inside its own folder, so those folders hold everything it reads.
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout};

use super::DiffError;
use crate::process::Program;
use crate::kustomization::loader::{normalize, KUSTOMIZATION_FILE_NAMES};

/// Files of one revision, written on demand into a temporary folder removed when dropped.
pub struct Snapshot {
    folder: tempfile::TempDir,
    /// The folder, opened: every file is created beneath it, never through a link.
    beneath: crate::beneath::Beneath,
    objects: CatFile,
    /// Every file of the revision, sorted by path.
    entries: Vec<Entry>,
    /// Folders whose files are written (a folder below one of them is written too).
    written: BTreeSet<String>,
    /// Kustomization folders already followed.
    visited: BTreeSet<String>,
    /// What may still be read of the revision's files ([`MAX_REVISION_BYTES`] at first).
    bytes_left: u64,
}

/// The most a revision's files may hold together, of those a diff reads: a listing of a few
/// hundred bytes may name one large blob many times, so what is read is bounded as the HTTP
/// reader bounds a body. Each file is also bounded by [`crate::bounded_read::MAX_FILE_BYTES`].
pub const MAX_REVISION_BYTES: u64 = 1 << 30;

impl Snapshot {
    /// Where the repository's top level is in the snapshot.
    pub fn root(&self) -> &Path {
        self.folder.path()
    }

    /// Writes what builds of `folders` (relative to the top level) read at this revision: their
    /// files and those of every kustomization folder they reach, one level of the graph at a
    /// time, each level's files fetched from git in one batch.
    pub fn extract_builds_of(&mut self, folders: &[PathBuf]) -> Result<(), DiffError> {
        let mut level: Vec<String> = folders.iter().map(|f| path_text(&normalize(f))).collect();
        while !level.is_empty() {
            level.retain(|folder| self.visited.insert(folder.clone()));
            self.write_folders(&level)?;
            let mut next = Vec::new();
            for folder in &level {
                for entry in self.kustomization_entries(folder) {
                    let target = path_text(&normalize(&Path::new(folder).join(&entry)));
                    if !target.starts_with("..") && self.is_folder(&target) {
                        next.push(target);
                    }
                }
            }
            level = next;
        }
        Ok(())
    }

    fn is_folder(&self, folder: &str) -> bool {
        folder.is_empty() || self.entries.iter().any(|e| in_folder(&e.path, folder))
    }

    /// Writes the files of `folders` not written yet.
    fn write_folders(&mut self, folders: &[String]) -> Result<(), DiffError> {
        let written = &self.written;
        let is_written = |folder: &str| written.iter().any(|done| done.is_empty() || folder == done || folder.starts_with(&format!("{done}/")));
        let new: Vec<&String> = folders.iter().filter(|f| !is_written(f)).collect();
        let wanted: Vec<&Entry> = self.entries.iter().filter(|e| !is_written(&e.path) && new.iter().any(|f| in_folder(&e.path, f))).collect();
        // Each blob is written as soon as it is read: one file in memory at a time.
        let beneath = &mut self.beneath;
        let limits = Limits { per_file: crate::bounded_read::MAX_FILE_BYTES, total: MAX_REVISION_BYTES, left: &mut self.bytes_left };
        self.objects.read_each(&wanted, limits, |entry, content| write_entry(beneath, entry, &content))?;
        self.written.extend(new.into_iter().cloned());
        Ok(())
    }

    /// The `resources`, `bases` and `components` of the folder's kustomization, as written; none
    /// when it has no readable one (the build itself reports that).
    fn kustomization_entries(&self, folder: &str) -> Vec<String> {
        let dir = self.root().join(folder);
        // Only a file inside the snapshot is read (a link to `/dev/zero` or outside is not).
        let root = self.root().canonicalize().unwrap_or_else(|_| self.root().to_path_buf());
        let inside = |path: &Path| path.canonicalize().ok().filter(|real| real.starts_with(&root) && real.is_file());
        let Some(text) = KUSTOMIZATION_FILE_NAMES.iter().find_map(|name| crate::bounded_read::read_text(&inside(&dir.join(name))?).ok()) else {
            return Vec::new();
        };
        let Ok(kustomization) = crate::yaml::parse::parse_document(&text) else { return Vec::new() };
        ["resources", "bases", "components"]
            .iter()
            .filter_map(|field| kustomization.get(field)?.as_array())
            .flatten()
            .filter_map(|entry| entry.as_str().map(str::to_string))
            .collect()
    }
}

fn in_folder(path: &str, folder: &str) -> bool {
    folder.is_empty() || path.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'))
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The top level of the work tree holding `dir`: one of `known` when `dir` lies in it with no
/// nested repository between them (saving a git run per directory), otherwise asked of git.
pub fn toplevel_among(dir: &Path, known: &[&Path]) -> Result<PathBuf, DiffError> {
    for top in known {
        if let Ok(rest) = dir.strip_prefix(top) {
            let nested = rest.ancestors().filter(|a| !a.as_os_str().is_empty()).any(|a| top.join(a).join(".git").exists());
            if !nested {
                return Ok(top.to_path_buf());
            }
        }
    }
    toplevel(dir)
}

/// The top level of the git work tree that holds `dir` (or, for a folder that does not exist,
/// its nearest existing parent).
fn toplevel(dir: &Path) -> Result<PathBuf, DiffError> {
    let mut existing = dir;
    while !existing.is_dir() {
        existing = existing.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    }
    let out = git(existing, &["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches('\n'));
    top.canonicalize().map_err(|e| DiffError::Io { path: top.display().to_string(), message: e.to_string() })
}

/// Lists the files of `rev` in the repository at `toplevel`; [`Snapshot::extract_builds_of`]
/// writes those a build needs.
pub fn snapshot(toplevel: &Path, rev: &str) -> Result<Snapshot, DiffError> {
    let listing = git(toplevel, &["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev])
        .map_err(|e| DiffError::Git(format!("unknown git revision '{rev}' ({e})")))?;
    let entries = read_listing(&listing).map_err(|e| DiffError::Git(format!("git revision '{rev}': {e}")))?;
    let temp_io = |e: std::io::Error| DiffError::Io { path: std::env::temp_dir().display().to_string(), message: e.to_string() };
    let folder = tempfile::Builder::new().prefix("peerpods-diff-").tempdir().map_err(temp_io)?;
    let beneath = crate::beneath::Beneath::open(folder.path()).map_err(temp_io)?;
    let objects = CatFile::start(toplevel)?;
    Ok(Snapshot { folder, beneath, objects, entries, written: BTreeSet::new(), visited: BTreeSet::new(), bytes_left: MAX_REVISION_BYTES })
}

/// One file of `git ls-tree -r`: `<mode> <type> <object>\t<path>`.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub object: String,
    pub path: String,
}

/// The files of `git ls-tree -r -z` output. A revision is anyone's text (a commit made with
/// `git hash-object --literally` may hold any name): each path must be made of plain names
/// (no `..`, `.`, empty name or absolute path), each object an object id, each entry a blob
/// (a file or a link) or a submodule (skipped), and no path may repeat.
pub fn read_listing(listing: &[u8]) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in listing.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let shown = || String::from_utf8_lossy(line).escape_debug().to_string();
        let text = std::str::from_utf8(line).map_err(|_| format!("an entry's name is not UTF-8: '{}'", shown()))?;
        let (meta, path) = text.split_once('\t').ok_or_else(|| format!("unexpected ls-tree line '{}'", shown()))?;
        let parts: Vec<&str> = meta.split(' ').collect();
        let [mode, kind, object] = parts[..] else { return Err(format!("unexpected ls-tree line '{}'", shown())) };
        if object.is_empty() || !object.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("unexpected object id in '{}'", shown()));
        }
        crate::beneath::plain_names(path).map_err(|e| format!("an entry cannot be a file: {e}"))?;
        if !seen.insert(path) {
            return Err(format!("'{}' is listed twice", path.escape_debug()));
        }
        match (kind, mode) {
            ("blob", "100644" | "100755" | "120000" | "100664") => entries.push(Entry { mode: mode.to_string(), object: object.to_string(), path: path.to_string() }),
            // Submodules have no files in this repository.
            ("commit", _) => {}
            _ => return Err(format!("unexpected entry '{}'", shown())),
        }
    }
    Ok(entries)
}

/// One `git cat-file --batch` for the whole snapshot, asked for one object at a time (it answers
/// each request before reading the next).
struct CatFile {
    child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl CatFile {
    fn start(toplevel: &Path) -> Result<CatFile, DiffError> {
        let mut child = Program::new("git")
            .arg("-C")
            .arg(toplevel)
            .args(["cat-file", "--batch"])
            .spawn_conversation()
            .map_err(|e| DiffError::Git(e.to_string()))?;
        let requests = child.stdin.take().expect("stdin is piped");
        let answers = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(CatFile { child, requests, answers })
    }

    /// Hands the content of each entry's object to `each`, in order, within `limits`.
    /// Requests go in chunks small enough for the pipe to hold while git answers, so neither
    /// side waits on the other and each chunk costs one round trip.
    fn read_each(&mut self, entries: &[&Entry], mut limits: Limits, mut each: impl FnMut(&Entry, Vec<u8>) -> Result<(), DiffError>) -> Result<(), DiffError> {
        const CHUNK: usize = 256;
        for chunk in entries.chunks(CHUNK) {
            let requests: String = chunk.iter().map(|entry| format!("{}\n", entry.object)).collect();
            let asked = self.requests.write_all(requests.as_bytes()).and_then(|()| self.requests.flush());
            asked.map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
            for entry in chunk {
                let content = read_blob(&mut self.answers, entry, &mut limits)?;
                each(entry, content)?;
            }
        }
        Ok(())
    }
}

impl Drop for CatFile {
    fn drop(&mut self) {
        // Our own child, done with: end it and collect its status.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What may still be read of a revision: per file, and in all.
struct Limits<'a> {
    per_file: u64,
    total: u64,
    left: &'a mut u64,
}

/// Reads one `<object> blob <size>\n<content>\n` answer, refused before its content is read
/// when it is larger than one file may be or than what is left of the revision's bound.
fn read_blob(reader: &mut impl BufRead, entry: &Entry, limits: &mut Limits) -> Result<Vec<u8>, DiffError> {
    let object = entry.object.as_str();
    let mut header = String::new();
    reader.read_line(&mut header).map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
    let size: usize = header
        .trim_end()
        .strip_prefix(object)
        .and_then(|rest| rest.strip_prefix(" blob "))
        .and_then(|size| size.parse().ok())
        .ok_or_else(|| DiffError::Git(format!("git cat-file: unexpected answer for {object}: {}", header.trim_end())))?;
    let path = entry.path.escape_debug();
    if size as u64 > limits.per_file {
        return Err(DiffError::Git(format!("'{path}' at this revision holds {size} bytes, more than the {} one file may hold", limits.per_file)));
    }
    if size as u64 > *limits.left {
        return Err(DiffError::Git(format!("'{path}': the revision's files read for this diff pass {} bytes, the most a diff reads of a revision", limits.total)));
    }
    *limits.left -= size as u64;
    let mut content = vec![0; size.saturating_add(1)];
    reader.read_exact(&mut content).map_err(|e| DiffError::Git(format!("git cat-file: {e}")))?;
    content.pop();
    Ok(content)
}

/// Writes one file (or link) of the revision beneath the snapshot folder: never through a link,
/// never over a file already written.
fn write_entry(beneath: &mut crate::beneath::Beneath, entry: &Entry, content: &[u8]) -> Result<(), DiffError> {
    let io = |e: std::io::Error| DiffError::Io { path: entry.path.clone(), message: e.to_string() };
    if entry.mode == "120000" {
        let target = std::str::from_utf8(content).map_err(|_| io(std::io::Error::other("a link's target is not UTF-8")))?;
        if target.contains('\0') {
            return Err(io(std::io::Error::other("a link's target holds a NUL byte")));
        }
        return beneath.symlink(&entry.path, target).map_err(io);
    }
    beneath.write_new(&entry.path, content, 0o644).map_err(io)
}

/// Runs `git -C dir args...` with the caller's environment; its stdout, or its stderr as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, DiffError> {
    let out = Program::new("git").arg("-C").arg(dir).args(args).run().map_err(|e| DiffError::Git(e.to_string()))?;
    if out.success() {
        Ok(out.stdout)
    } else {
        Err(DiffError::Git(format!("git {} in {}: {}", args.join(" "), dir.display(), out.stderr_text())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(object: &str) -> Entry {
        Entry { mode: "100644".into(), object: object.into(), path: format!("f-{object}") }
    }

    #[test]
    fn blobs_past_the_file_or_revision_bound_are_refused_before_they_are_read() {
        let answers = b"a blob 3\nabc\nb blob 4\nabcd\nc blob 3\nxyz\n";
        let mut reader = std::io::Cursor::new(&answers[..]);
        let mut left = 8;
        let mut limits = Limits { per_file: 4, total: 8, left: &mut left };
        assert_eq!(read_blob(&mut reader, &entry("a"), &mut limits).unwrap(), b"abc");
        assert_eq!(read_blob(&mut reader, &entry("b"), &mut limits).unwrap(), b"abcd");
        let error = read_blob(&mut reader, &entry("c"), &mut limits).unwrap_err().to_string();
        assert!(error.contains("pass 8 bytes"), "{error}");
        // A header claiming more than a file may hold is refused before anything is allocated.
        let mut reader = std::io::Cursor::new(&b"d blob 18446744073709551615\n"[..]);
        let mut left = u64::MAX;
        let mut limits = Limits { per_file: 4, total: u64::MAX, left: &mut left };
        let error = read_blob(&mut reader, &entry("d"), &mut limits).unwrap_err().to_string();
        assert!(error.contains("more than the 4 one file may hold"), "{error}");
    }
}
