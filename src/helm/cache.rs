//! The render cache: `helm template`'s output kept under a key made of everything that decides
//! it, so a repeated build reads the rendering instead of running helm. Entries are written as
//! every entry of the cache folder is ([`crate::sealed_cache`]: a temporary folder, renamed
//! into place, sealed with a digest written last, used only while intact).
//!
//! ```text
//! <cache>/helm/<key>/tree/output.yaml   what helm printed
//! <cache>/helm/<key>/tree/about         the chart, release and helm version, for `cache list`
//! <cache>/helm/<key>/complete           fingerprint of tree/, written last
//! <cache>/helm/versions/<command key>   the last version `helm version --short` reported, for --offline
//! ```
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::sealed_cache::{begin_in, hex_digest, is_complete, is_intact, is_ours_temporary, is_sealed_entry, read_dir_sorted, read_entry_file, read_note, remove_folder, seal_into, sealed_tree, write_atomically, CacheFolder, Cleared};

const FOLDER: &str = "helm";
const OUTPUT: &str = "output.yaml";
const ABOUT: &str = "about";

/// The render cache inside the build's cache folder.
#[derive(Clone, Debug)]
pub struct RenderCache {
    root: PathBuf,
}

/// What a rendering depends on.
#[derive(Debug, Default)]
pub struct KeyParts {
    /// [`chart_digest`] of the chart folder.
    pub chart: String,
    /// The values file kustomize hands helm.
    pub values: Vec<u8>,
    /// The contents of each `additionalValuesFiles` entry.
    pub additional: Vec<Vec<u8>>,
    /// `helm template`'s arguments (the values file's temporary path left out).
    pub args: Vec<String>,
    pub helm_version: String,
    /// [`program_digest`] of the helm that renders: another program reporting the same
    /// version gets its own renderings.
    pub helm_program: String,
}

/// One cached rendering, for `cache list`.
#[derive(Debug)]
pub struct ListedRendering {
    pub key: String,
    /// The chart, release and helm version it was rendered with.
    pub about: String,
    pub path: PathBuf,
    pub intact: bool,
}

/// The key of a rendering: SHA-256 over its parts, each length-prefixed.
pub fn key(parts: &KeyParts) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(b"peerpods-build helm render 1");
    field(parts.chart.as_bytes());
    field(&parts.values);
    for file in &parts.additional {
        field(file);
    }
    // The values file's path is temporary: its contents are in the key already.
    let mut args = parts.args.iter().peekable();
    while let Some(arg) = args.next() {
        if arg == "-f" && args.peek().is_some_and(|p| p.ends_with("-kustomize-values.yaml")) {
            args.next();
            field(b"-f <values>");
            continue;
        }
        field(arg.as_bytes());
    }
    field(parts.helm_version.as_bytes());
    field(parts.helm_program.as_bytes());
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The program a command names (a path, or the first match on PATH), links resolved.
fn program_path(command: &str) -> Option<PathBuf> {
    let path = if command.contains('/') {
        PathBuf::from(command)
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(command)).find(|p| p.is_file())?
    };
    path.canonicalize().ok()
}

/// The program a command names as its resolved path and the SHA-256 of its content (read in
/// pieces, once per program and process); `None` when it is not a regular file we can read.
pub fn program_digest(command: &str) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KNOWN: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(digest) = known.lock().ok()?.get(command) {
        return digest.clone();
    }
    let digest = (|| {
        let path = program_path(command)?;
        let mut file = fs::File::open(&path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher).ok()?;
        let hex: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(format!("{} sha256:{hex}", path.display()))
    })();
    known.lock().ok()?.insert(command.to_string(), digest.clone());
    digest
}

/// The program a command names as path, size and modification time: a changed helm binary
/// has another identity.
fn program_identity(command: &str) -> Option<String> {
    let path = program_path(command)?;
    let meta = fs::metadata(&path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some(format!("{} {} {modified}", path.display(), meta.len()))
}

/// The most a chart's files may hold together for the cache key (each file is also bounded by
/// [`crate::bounded_read::MAX_FILE_BYTES`]).
pub const MAX_CHART_BYTES: u64 = 256 * 1024 * 1024;

/// A digest of the chart's files by content (names, kinds and bytes, in sorted order). Read as
/// helm reads a chart folder: links followed, regular files only (a link to `/dev/zero` or a
/// FIFO is an error, as helm's `cannot load irregular file`), at most [`MAX_CHART_BYTES`] in
/// all; a folder met twice (a link loop) is an error. The walk keeps its own stack, so a deep
/// tree cannot overflow ours.
pub fn chart_digest(dir: &Path) -> std::io::Result<String> {
    chart_digest_within(dir, MAX_CHART_BYTES)
}

fn chart_digest_within(dir: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::MetadataExt;
    let mut hasher = Sha256::new();
    let root = fs::metadata(dir)?;
    let mut seen = std::collections::HashSet::from([(root.dev(), root.ino())]);
    let mut left = limit;
    // One iterator per open folder; a folder's entries are hashed right after its own name,
    // and `u` marks its end.
    let mut open = vec![read_dir_sorted(dir).into_iter()];
    while let Some(entries) = open.last_mut() {
        let Some(path) = entries.next() else {
            open.pop();
            if !open.is_empty() {
                hasher.update(b"u");
            }
            continue;
        };
        let name = path.file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default();
        let meta = fs::metadata(&path).map_err(|e| Error::new(e.kind(), format!("chart file {}: {e}", path.display())))?;
        hasher.update(if meta.is_dir() { b"d" } else { b"f" });
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(&name);
        if meta.is_dir() {
            if !seen.insert((meta.dev(), meta.ino())) {
                return Err(Error::new(ErrorKind::InvalidInput, format!("chart folder {}: a link loop (the folder is met twice)", path.display())));
            }
            open.push(read_dir_sorted(&path).into_iter());
            continue;
        }
        let bytes = crate::bounded_read::read_regular_file(&path, crate::bounded_read::Links::Follow, left.min(crate::bounded_read::MAX_FILE_BYTES))
            .map_err(|e| Error::new(e.kind(), format!("chart file {}: {e}", path.display())))?;
        left -= bytes.len() as u64;
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl RenderCache {
    /// The render cache of the cache folder (as `--cache-dir` and friends choose it).
    pub fn in_folder(folder: &CacheFolder) -> RenderCache {
        RenderCache { root: folder.root().join(FOLDER) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens the cache folder for a build ([`CacheFolder::open`]: made private when missing,
    /// refused when others may write it, held shared until the process ends).
    pub fn open(&self) -> std::io::Result<()> {
        CacheFolder::open(self.root.parent()).map(|_| ())
    }

    /// The rendering stored under `key`, if its entry is sealed and intact.
    pub fn get(&self, key: &str) -> Option<String> {
        read_entry_file(&sealed_tree(&self.root.join(key))?, OUTPUT)
    }

    /// Stores a rendering under `key`.
    pub fn put(&self, key: &str, output: &str, about: &str) -> std::io::Result<()> {
        let temp = begin_in(&self.root)?;
        let written = (|| {
            fs::create_dir(temp.join("tree"))?;
            fs::write(temp.join("tree").join(OUTPUT), output)?;
            fs::write(temp.join("tree").join(ABOUT), about)?;
            seal_into(&temp, &self.root.join(key))
        })();
        if written.is_err() {
            let _ = fs::remove_dir_all(&temp);
        }
        written.map(|_| ())
    }

    fn version_file(&self, command: &str) -> PathBuf {
        self.root.join("versions").join(&hex_digest(command.as_bytes())[..24])
    }

    /// The version `command` reported last, while the program it names is unchanged (same
    /// path, size and modification time); with `any_program` (for `--offline`, which runs no
    /// helm), whatever was remembered.
    pub fn remembered_helm_version(&self, command: &str, any_program: bool) -> Option<String> {
        let text = read_note(&self.version_file(command))?;
        let mut lines = text.lines();
        let (stored, identity, version) = (lines.next()?, lines.next()?, lines.next()?);
        let same = stored == command && (any_program || program_identity(command).as_deref() == Some(identity));
        same.then(|| version.to_string())
    }

    /// Remembers the version `command` reported, with the identity of the program it names.
    pub fn remember_helm_version(&self, command: &str, version: &str) -> std::io::Result<()> {
        let Some(identity) = program_identity(command) else { return Ok(()) };
        let file = self.version_file(command);
        fs::create_dir_all(file.parent().unwrap_or(&self.root))?;
        write_atomically(&file, format!("{command}\n{identity}\n{version}\n").as_bytes())
    }

    /// Every cached rendering, by key.
    pub fn list(&self) -> Vec<ListedRendering> {
        read_dir_sorted(&self.root)
            .into_iter()
            .filter(|dir| is_complete(dir))
            .map(|dir| {
                let key = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let about = read_entry_file(&dir.join("tree"), ABOUT).unwrap_or_default().trim().to_string();
                ListedRendering { key, about, intact: is_intact(&dir), path: dir.join("tree").join(OUTPUT) }
            })
            .collect()
    }

    /// Removes every rendering, the caller holding the folder ([`CacheFolder::exclusively`]),
    /// and only what carries our marker (a sealed entry, a version
    /// note, our temporary folders); anything else in the folder (a project's own `helm/`
    /// charts, when `--cache-dir` names a project) is left and reported.
    pub fn clear(&self) -> std::io::Result<Cleared> {
        let mut cleared = Cleared::default();
        for path in read_dir_sorted(&self.root) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name == "versions" && fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                for note in read_dir_sorted(&path) {
                    let ours = note.file_name().is_some_and(|n| n.len() == 24 && n.to_string_lossy().bytes().all(|b| b.is_ascii_hexdigit()));
                    if ours && fs::symlink_metadata(&note).is_ok_and(|m| m.is_file()) {
                        fs::remove_file(&note)?;
                    } else {
                        cleared.kept.push(note);
                    }
                }
                let _ = fs::remove_dir(&path);
            } else if is_ours_temporary(&name) {
                fs::remove_dir_all(&path)?;
            } else if is_sealed_entry(&path) {
                remove_folder(&self.root, &name)?;
                cleared.removed += 1;
            } else {
                cleared.kept.push(path);
            }
        }
        let _ = fs::remove_dir(&self.root);
        Ok(cleared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> KeyParts {
        KeyParts {
            chart: "abc".into(),
            values: b"a: 1\n".to_vec(),
            additional: vec![],
            args: ["template", "rel", "/c", "-f", "/tmp/kustomize-helm-1/c-kustomize-values.yaml"].map(String::from).to_vec(),
            helm_version: "v3.19.0".into(),
            helm_program: "/usr/bin/helm sha256:00".into(),
        }
    }

    #[test]
    fn the_key_follows_values_arguments_and_version_but_not_the_temporary_path() {
        let base = key(&parts());
        let mut other_temp = parts();
        other_temp.args[4] = "/tmp/kustomize-helm-2/c-kustomize-values.yaml".into();
        assert_eq!(key(&other_temp), base);
        let mut values = parts();
        values.values = b"a: 2\n".to_vec();
        assert_ne!(key(&values), base);
        let mut args = parts();
        args.args.push("--include-crds".into());
        assert_ne!(key(&args), base);
        let mut version = parts();
        version.helm_version = "v4.0.0".into();
        assert_ne!(key(&version), base);
        let mut program = parts();
        program.helm_program = "/opt/other-helm sha256:01".into();
        assert_ne!(key(&program), base, "another helm reporting the same version shares the key");
    }

    #[test]
    fn a_rendering_is_read_back_only_while_intact() {
        let dir = tempfile::tempdir().unwrap();
        let cache = RenderCache { root: dir.path().join("helm") };
        assert_eq!(cache.get("k"), None);
        cache.put("k", "kind: A\n", "chart c").unwrap();
        assert_eq!(cache.get("k").as_deref(), Some("kind: A\n"));
        assert_eq!(cache.list().len(), 1);
        fs::write(dir.path().join("helm/k/tree/output.yaml"), "kind: B\n").unwrap();
        assert_eq!(cache.get("k"), None, "a changed entry is not used");
        cache.put("k", "kind: A\n", "chart c").unwrap();
        fs::create_dir_all(dir.path().join("helm/mychart/templates")).unwrap();
        let cleared = cache.clear().unwrap();
        assert_eq!(cleared.removed, 1);
        assert_eq!(cleared.kept, [dir.path().join("helm/mychart")], "a folder without our marker is left");
        assert!(dir.path().join("helm/mychart/templates").is_dir());
        assert_eq!(cache.get("k"), None);
    }
}
