//! Reading files for one kustomization, inside the root the load restrictor allows.
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::file_memo::{FileMemo, Identity};
use super::looks::{RunLooks, Seen};
use super::reads::{Include, Reads};
use std::sync::Arc;

/// The names kustomize accepts for a kustomization file, in its order of preference.
pub const KUSTOMIZATION_FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether files must stay inside their kustomization's folder (`--load-restrictor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadRestrictor {
    /// `LoadRestrictionsRootOnly`, kustomize's default.
    #[default]
    RootOnly,
    /// `LoadRestrictionsNone`.
    None,
}

/// Reads a file named by an HTTP(S) URL: kustomize's loader downloads any file a kustomization
/// names by URL (a patch, a generator's file, a schema), outside the root and its restrictor, the
/// URL being the address the kustomization wrote. Given a name, it says `None` when the name is
/// no such URL, else the URL as it may be shown (a password hidden) and the file or why not.
/// The build makes it (`remote::url_reader`); a loader without one reads every name as a path.
#[derive(Clone)]
pub struct UrlReader(pub Arc<UrlRead>);

/// What a [`UrlReader`] runs.
pub type UrlRead = dyn Fn(&str) -> Option<(String, std::result::Result<Vec<u8>, String>)> + Send + Sync;

impl std::fmt::Debug for UrlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlReader")
    }
}

/// Reads the files of one kustomization root.
#[derive(Clone, Debug)]
pub struct Loader {
    /// The kustomization folder, with symlinks resolved.
    root: PathBuf,
    restrictor: LoadRestrictor,
    /// For a remote base, its checkout: no folder below may lie outside it.
    repository: Option<PathBuf>,
    /// Present when the build records what it reads (`deps`, `affected`).
    reads: Option<Arc<Reads>>,
    /// How files named by URL are read; without it, every name is a path.
    urls: Option<UrlReader>,
    /// What the builds of this run saw on disk, when they trust one another's looks
    /// (`build DIR DIR...`).
    looks: Option<Arc<RunLooks>>,
}

impl Loader {
    pub fn new(root: &Path, restrictor: LoadRestrictor) -> Result<Self> {
        Self::new_in(None, root, restrictor)
    }

    /// `new(base.join(root))`, resolved from `base` (already real) when there is one.
    fn new_in(base: Option<&Path>, root: &Path, restrictor: LoadRestrictor) -> Result<Self> {
        let real = match base {
            Some(base) => real_path_lexical_meta(base, root),
            None => root.canonicalize().map(|real| (real, None)),
        };
        let given = base.map_or_else(|| root.to_path_buf(), |b| b.join(root));
        let root = given.clone();
        let root = real.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::msg(format!(
                "must build at directory: not a valid directory: {}",
                crate::error::evalsymlink_failure(&normalize(&root))
            )),
            _ => Error::msg(format!("must build at directory: not a valid directory: {}: {}", root.display(), io_reason(&e))),
        })?;
        let (root, meta) = root;
        Self::resolved_as(&given, &root, meta.map(|meta| meta.is_dir()), restrictor)
    }

    /// `new(root)` for a `root` whose real path `real` the caller resolved already.
    pub fn resolved(root: &Path, real: &Path, restrictor: LoadRestrictor) -> Result<Self> {
        Self::resolved_as(root, real, None, restrictor)
    }

    /// [`Loader::resolved`], told whether `real` is a folder when the caller's walk saw it.
    fn resolved_as(root: &Path, real: &Path, is_dir: Option<bool>, restrictor: LoadRestrictor) -> Result<Self> {
        if !is_dir.unwrap_or_else(|| real_folders::known(real) || real.is_dir()) {
            // kustomize names the path as it was given.
            return Err(Error::msg(format!("must build at directory: '{}': file is not directory", root.display())));
        }
        Ok(Loader { root: real.to_path_buf(), restrictor, repository: None, reads: None, urls: None, looks: None })
    }

    /// `new(base.join(root))` for a `base` that is real (the current folder, resolved once for
    /// the many roots of one run): only the parts below `base` are looked at.
    pub fn new_below(base: &Path, root: &Path, restrictor: LoadRestrictor) -> Result<Self> {
        Self::new_in(Some(base), root, restrictor)
    }

    /// A loader for the kustomization folder `folder` of a remote base checked out at `checkout`:
    /// files stay inside each root (always `LoadRestrictionsRootOnly`, as in kustomize), and
    /// folders inside the checkout.
    pub fn in_repository(checkout: &Path, folder: &str) -> Result<Self> {
        let checkout = checkout.canonicalize().map_err(|e| Error::Io { path: checkout.to_path_buf(), message: io_reason(&e) })?;
        let mut loader = Loader::new_in(Some(&checkout), Path::new(folder), LoadRestrictor::RootOnly)?;
        if !loader.root.starts_with(&checkout) {
            return Err(Error::msg(format!("'{}' refers to directory outside of repo '{}'", loader.root.display(), checkout.display())));
        }
        loader.repository = Some(checkout);
        Ok(loader)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This loader and every loader made from it record what they read into `reads` (a folder
    /// walked on its own for the read-set memo, [`super::reads::Memo`], gets a recorder of its own).
    pub fn with_reads(mut self, reads: Arc<Reads>) -> Self {
        reads.root(&self.root);
        self.reads = Some(reads);
        self
    }

    /// This loader and every loader made from it take what `looks` saw on disk for what a path
    /// is, and keep there what they look at (the roots of one run, [`RunLooks`]).
    pub fn with_looks(mut self, looks: Option<Arc<RunLooks>>) -> Self {
        self.looks = looks;
        self
    }

    /// This loader and every loader made from it read files named by URL with `urls`.
    pub fn with_urls(mut self, urls: Option<UrlReader>) -> Self {
        self.urls = urls;
        self
    }

    /// How this loader reads files named by URL (a remote base's loader reads them as the
    /// kustomization that named the base does).
    pub fn urls(&self) -> Option<&UrlReader> {
        self.urls.as_ref()
    }

    /// The recorder, in a build that records what it reads.
    pub fn reads(&self) -> Option<&Arc<Reads>> {
        self.reads.as_ref()
    }

    /// Records this folder's kind (`Kustomization` or `Component`), once its file is read.
    pub fn note_kind(&self, kind: &str) {
        if let Some(reads) = &self.reads {
            reads.kind(&self.root, if kind.is_empty() { "Kustomization" } else { kind });
        }
    }

    /// Records that this kustomization includes a remote (`URL@commit`).
    pub fn note_remote_include(&self, remote: String) {
        if let Some(reads) = &self.reads {
            reads.include(&self.root, Include::Remote(remote.clone()));
            reads.remote(remote);
        }
    }

    /// Records a folder a program reads whole (a helm chart).
    pub fn note_tree(&self, folder: &Path) {
        if let Some(reads) = &self.reads {
            reads.tree(&normalize(&self.root.join(folder)));
        }
    }

    /// Records a program the build runs (an exec plugin, an exec function).
    pub fn note_program(&self, program: &Path) {
        if let Some(reads) = &self.reads {
            let path = normalize(&self.root.join(program));
            reads.program(&path.canonicalize().unwrap_or(path));
        }
    }

    /// Records a path looked at (whether or not anything is there).
    fn probe(&self, relative: &str) {
        if let Some(reads) = &self.reads {
            reads.probe(&normalize(&self.root.join(relative)));
        }
    }

    pub fn restrictor(&self) -> LoadRestrictor {
        self.restrictor
    }

    /// A loader for a sub-kustomization (a folder in `resources` or `components`).
    /// Folders are not restricted, as in kustomize; only the files each root reads are.
    /// An absolute folder is refused with or without the restrictor, as kustomize refuses it.
    pub fn child(&self, relative: &str) -> Result<Loader> {
        if Path::new(relative).is_absolute() {
            return Err(Error::msg(format!("new root '{relative}' cannot be absolute")));
        }
        if let Some(message) = ambiguous_root(relative) {
            return Err(Error::msg(message));
        }
        let mut loader = Loader::new_in(Some(&self.root), Path::new(relative), self.restrictor)?.with_urls(self.urls.clone()).with_looks(self.looks.clone());
        if let Some(repository) = &self.repository {
            if !loader.root.starts_with(repository) {
                return Err(Error::msg(format!(
                    "security; bases in kustomizations found in cloned git repos must be within the repo, but base '{}' is outside '{}'",
                    loader.root.display(),
                    repository.display()
                )));
            }
            loader.repository = Some(repository.clone());
        }
        // Files of a remote checkout are the remote's: the remote is what is recorded.
        if let (Some(reads), None) = (&self.reads, &self.repository) {
            reads.root(&loader.root);
            reads.include(&self.root, Include::Folder(loader.root.clone()));
            loader.reads = Some(reads.clone());
        }
        Ok(loader)
    }

    /// The absolute, symlink-resolved path of `relative`, checked against the restrictor.
    /// As in kustomize, `..` is taken lexically first (`link/../x` is the root's `x`, whatever
    /// `link` points at), and a refusal names the path as written joined to the root, never
    /// where a link leads.
    pub fn resolve(&self, relative: &str) -> Result<PathBuf> {
        self.resolve_meta(relative).map(|(path, _)| path)
    }

    /// [`Loader::resolve`], with the `lstat` of the file when resolving made one.
    fn resolve_meta(&self, relative: &str) -> Result<(PathBuf, Option<std::fs::Metadata>)> {
        // The path as written joined to the root, made only for a refusal.
        let joined = || self.root.join(relative);
        let (real, meta) = real_path_lexical_meta(&self.root, Path::new(relative)).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound if self.restrictor == LoadRestrictor::RootOnly => {
                let path = normalize(&joined());
                Error::Missing { message: crate::error::evalsymlink_failure(&path), path }
            }
            _ => Error::Io { path: joined(), message: io_reason(&e) },
        })?;
        if self.restrictor == LoadRestrictor::RootOnly && !real.starts_with(&self.root) {
            return Err(Error::OutsideRoot { path: normalize(&joined()).display().to_string(), root: self.root.display().to_string() });
        }
        Ok((real, meta))
    }

    /// Reads a file named relative to the root.
    pub fn read(&self, relative: &str) -> Result<(PathBuf, String)> {
        let (path, bytes) = self.read_bytes(relative)?;
        text_of(path, bytes)
    }

    /// Reads a file named relative to the root (or by an HTTP(S) URL: [`UrlReader`]), as bytes.
    pub fn read_bytes(&self, relative: &str) -> Result<(PathBuf, Vec<u8>)> {
        if let Some(read) = self.read_url(relative) {
            return read;
        }
        self.probe(relative);
        // The usual file, below the root through folders already found real, is opened at once:
        // refusing a link at its last part is the whole check left. Anything else (nothing
        // there, a link, a path that climbs) is resolved first, for the check's own answer.
        match self.open_at_once(relative) {
            AtOnce::Opened(path, file) => self.finish_read(relative, path, read_opened(file)),
            AtOnce::Absent | AtOnce::Unsure => {
                let path = self.resolve(relative)?;
                let read = read_file(&path);
                self.finish_read(relative, path, read)
            }
        }
    }

    /// `relative` read from the web, when it is an HTTP(S) URL this loader reads ([`UrlReader`]).
    fn read_url(&self, relative: &str) -> Option<Result<(PathBuf, Vec<u8>)>> {
        let (shown, read) = self.urls.as_ref().and_then(|urls| (urls.0)(relative))?;
        self.note_remote_include(shown);
        Some(read.map(|bytes| (PathBuf::from(relative), bytes)).map_err(Error::msg))
    }

    /// [`Loader::read_bytes`] of a file many builds of this process read (the sources of a
    /// shared base's generators), its bytes served from `memo` when the file is as an earlier
    /// read found it, with every check a read makes ([`Loader::read_parsed`]).
    pub fn read_bytes_shared(&self, relative: &str, memo: &FileMemo<Vec<u8>>) -> Result<(PathBuf, Arc<Vec<u8>>)> {
        if let Some(read) = self.read_url(relative) {
            return read.map(|(path, bytes)| (path, Arc::new(bytes)));
        }
        self.read_through_memo(relative, None, memo, |path, bytes| {
            let held = bytes.len();
            Ok((path, bytes, held, true))
        })
    }

    /// [`Loader::read`] of `relative` when it names a regular file that can be opened at once
    /// ([`Loader::open_at_once`]); `None` when it is anything else, or nothing, or a path that
    /// needs the full check: what it is is then still to be found out. Spares the look at what
    /// an entry names (a file or a folder) before reading it, for the usual file.
    pub fn read_if_plain_file(&self, relative: &str) -> Option<Result<(PathBuf, String)>> {
        let AtOnce::Opened(path, file) = self.open_at_once(relative) else { return None };
        let read = read_opened(file);
        if read.as_ref().is_err_and(crate::bounded_read::not_a_regular_file) {
            return None;
        }
        self.probe(relative);
        Some(self.finish_text(relative, path, read))
    }

    /// Whether [`Loader::open_at_once`] would open `relative` without the full check.
    pub fn opens_at_once(&self, relative: &str) -> bool {
        self.below_real_folders(relative).is_some()
    }

    /// `relative` opened at once, without the full check, when it lies below folders found real
    /// ([`Loader::below_real_folders`]); whether it is absent (nothing at all there, not even a
    /// link); or that the full check has to say.
    fn open_at_once(&self, relative: &str) -> AtOnce {
        let Some(path) = self.below_real_folders(relative) else { return AtOnce::Unsure };
        match read_file_open(&path) {
            Ok(file) => AtOnce::Opened(path, file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => AtOnce::Absent,
            Err(_) => AtOnce::Unsure,
        }
    }

    /// [`Loader::finish_read`] of a text file: its bytes decoded, or the error naming it.
    fn finish_text(&self, relative: &str, path: PathBuf, read: std::io::Result<Vec<u8>>) -> Result<(PathBuf, String)> {
        self.finish_read(relative, path, read).and_then(|(path, bytes)| text_of(path, bytes))
    }

    /// The end of a read of `relative` at `path`: its error named, the file recorded.
    fn finish_read(&self, relative: &str, path: PathBuf, read: std::io::Result<Vec<u8>>) -> Result<(PathBuf, Vec<u8>)> {
        let bytes = read.map_err(|e| Error::Io { path: path.clone(), message: io_reason(&e) })?;
        self.record_file(&path, relative);
        Ok((path, bytes))
    }

    /// `relative` joined to the root, when it only goes down and every folder on its way is one
    /// this process found real ([`real_folders`]): then it lies inside the root, and a link can
    /// only be its last part. Written plainly too (no empty part: `a//b`, `a/`), so that the
    /// path is the one [`Loader::resolve`] would give, for what names the file.
    fn below_real_folders(&self, relative: &str) -> Option<PathBuf> {
        if !goes_down(Path::new(relative)) || relative.split('/').any(str::is_empty) {
            return None;
        }
        let path = self.root.join(relative);
        let folder = path.parent()?;
        (folder == self.root || real_folders::known(folder)).then_some(path)
    }

    /// [`Loader::read`] of `relative` and `parse` of its text, or what an earlier `parse` of the
    /// same file made in this process, when the file is as it was then ([`FileMemo`]). A hit
    /// makes every check a read makes (the path resolved under the restrictor, a regular file
    /// within the bound) and records the read; only the reading and parsing are saved. `parse`
    /// says whether its result may be kept; a text with aliases never is (its copies are charged
    /// to each build's node budget, [`crate::budget`]).
    pub fn read_parsed<T>(&self, relative: &str, memo: &FileMemo<T>, parse: impl FnOnce(&Path, String) -> Result<(T, bool)>) -> Result<(PathBuf, Arc<T>)> {
        self.read_parsed_looked(relative, None, memo, parse)
    }

    /// What the builds of this run saw at `relative` ([`RunLooks`]), when it lies below folders
    /// found real (inside the root, a link only possible at its last part, which a path seen
    /// is not): the path, and what was there.
    fn seen_in_run(&self, relative: &str) -> Option<(PathBuf, Seen)> {
        let looks = self.looks.as_ref()?;
        let path = self.below_real_folders(relative)?;
        let seen = looks.get(&path)?;
        Some((path, seen))
    }

    /// Keeps for the builds of this run what the real path `real` is (its `lstat`, `meta`).
    fn note_seen(&self, real: &Path, meta: &std::fs::Metadata) {
        if let Some(looks) = &self.looks {
            looks.note(real, meta);
        }
    }

    /// `std::fs::symlink_metadata(path)`, through what this run saw ([`RunLooks::lstat`]).
    fn lstat(&self, path: &Path) -> std::io::Result<std::fs::Metadata> {
        match &self.looks {
            Some(looks) => looks.lstat(path),
            None => std::fs::symlink_metadata(path),
        }
    }

    /// [`Loader::read_parsed`] of a path [`Loader::look`] walked already: what it saw is what
    /// [`Loader::resolve`] would see, and is checked against the restrictor the same way.
    pub fn read_parsed_looked<T>(
        &self,
        relative: &str,
        looked: Option<Looked>,
        memo: &FileMemo<T>,
        parse: impl FnOnce(&Path, String) -> Result<(T, bool)>,
    ) -> Result<(PathBuf, Arc<T>)> {
        self.read_through_memo(relative, looked, memo, |path, bytes| {
            let (path, text) = text_of(path, bytes)?;
            let (held, aliases) = (text.len(), text.contains('&') && text.contains('*'));
            let (parsed, keep) = parse(&path, text)?;
            Ok((path, parsed, held, keep && !aliases))
        })
    }

    /// The read behind [`Loader::read_parsed_looked`] and [`Loader::read_bytes_shared`]: `make`
    /// turns the file's bytes into what is kept, with the bytes of text it holds and whether it
    /// may be kept at all.
    fn read_through_memo<T>(
        &self,
        relative: &str,
        looked: Option<Looked>,
        memo: &FileMemo<T>,
        make: impl FnOnce(PathBuf, Vec<u8>) -> Result<(PathBuf, T, usize, bool)>,
    ) -> Result<(PathBuf, Arc<T>)> {
        self.probe(relative);
        let (path, meta) = match looked.filter(|looked| self.restrictor != LoadRestrictor::RootOnly || looked.real.starts_with(&self.root)) {
            Some(Looked { real, meta }) => (real, Some(meta)),
            None => match self.seen_in_run(relative) {
                Some((path, Seen::Is(meta))) if meta.is_file() => (path, Some(meta)),
                // Not looked at, or refused: the full check says what it says.
                _ => {
                    let (path, meta) = self.resolve_meta(relative)?;
                    if let Some(meta) = &meta {
                        self.note_seen(&path, meta);
                    }
                    (path, meta)
                }
            },
        };
        let identity = match meta {
            Some(meta) => Identity::of(&meta, crate::bounded_read::MAX_FILE_BYTES),
            None => Identity::at(&path, crate::bounded_read::MAX_FILE_BYTES),
        };
        if let Some(parsed) = identity.and_then(|identity| memo.get(&path, identity)) {
            self.record_file(&path, relative);
            return Ok((path, parsed));
        }
        let read = read_file(&path);
        let (path, bytes) = self.finish_read(relative, path, read)?;
        let (path, made, held, keep) = make(path, bytes)?;
        let made = Arc::new(made);
        if let (Some(identity), true) = (identity, keep) {
            memo.put(path.clone(), identity, made.clone(), held);
        }
        Ok((path, made))
    }

    fn record_file(&self, path: &Path, relative: &str) {
        if let Some(reads) = &self.reads {
            reads.file(path, &normalize(&self.root.join(relative)));
        }
    }

    /// Whether `relative` names an existing file (not folder) below the root, ignoring the restrictor.
    pub fn is_file(&self, relative: &str) -> bool {
        self.probe(relative);
        self.looked_up(relative).is_file()
    }

    /// `relative` joined to the root, `.` and `..` taken lexically, to look at on disk (a path
    /// that only goes down needs no cleaning).
    fn looked_up(&self, relative: &str) -> PathBuf {
        match goes_down(Path::new(relative)) {
            true => self.root.join(relative),
            false => normalize(&self.root.join(relative)),
        }
    }

    /// What `relative` names below the root, following links and ignoring the restrictor. Found
    /// by the walk [`Loader::child`] makes for a folder ([`real_path`]), whose folders it
    /// remembers: a folder entry's loader then looks at none of its parts again.
    pub fn kind_of(&self, relative: &str) -> Option<std::fs::FileType> {
        self.look(relative).map(|(kind, _)| kind)
    }

    /// [`Loader::kind_of`], with what the walk saw of the path when it met no link on the way:
    /// a read of the same path ([`Loader::read_parsed_looked`]) need not walk it again.
    pub fn look(&self, relative: &str) -> Option<(std::fs::FileType, Option<Looked>)> {
        self.probe(relative);
        if let Some((real, seen)) = self.seen_in_run(relative) {
            return match seen {
                Seen::Is(meta) => Some((meta.file_type(), Some(Looked { real, meta }))),
                Seen::Absent => None,
            };
        }
        match real_path_lexical_meta(&self.root, Path::new(relative)).ok()? {
            (real, Some(meta)) => {
                self.note_seen(&real, &meta);
                Some((meta.file_type(), Some(Looked { real, meta })))
            }
            // A link resolved, or a folder found before: asked again, following links (`real`
            // has none left: what it is, the run may keep).
            (real, None) => {
                let meta = match &self.looks {
                    Some(looks) => looks.lstat(&real),
                    None => std::fs::metadata(&real),
                };
                meta.ok().map(|meta| (meta.file_type(), None))
            }
        }
    }

    pub fn is_dir(&self, relative: &str) -> bool {
        self.probe(relative);
        self.looked_up(relative).is_dir()
    }

    /// Why `relative` is neither a file nor a folder: usually "no such file or directory", but a
    /// symlink loop says so.
    pub fn missing_reason(&self, relative: &str) -> String {
        match normalize(&self.root.join(relative)).canonicalize() {
            Err(e) => io_reason(&e),
            Ok(_) => "no such file or directory".into(),
        }
    }

    /// Reads the kustomization file of this root: exactly one of the accepted names must load.
    /// Each name is read through [`Loader::read`], so under the restrictor a name that links
    /// outside the root counts as absent, as in kustomize (`LoadKustFile`): its content is never
    /// read. Returns the file as named in the root (for messages) and its text.
    pub fn read_kustomization_file(&self) -> Result<(PathBuf, String)> {
        self.read_kustomization_with(true, |name, found| match found {
            Found::Opened(path, file) => self.finish_text(name, path, read_opened(file)),
            Found::Looked(_) | Found::There => self.read(name),
        })
    }

    /// [`Loader::read_kustomization_file`], the text served from `memo` when the file is as an
    /// earlier read of this process found it ([`Loader::read_parsed`]): the component every
    /// root of a monorepo uses is read from disk once.
    pub fn read_kustomization_shared(&self, memo: &FileMemo<String>) -> Result<(PathBuf, Arc<String>)> {
        // The memo needs the file's identity, from its `lstat`: nothing is opened at once.
        self.read_kustomization_with(false, |name, found| {
            let looked = match found {
                Found::Looked(looked) => Some(looked),
                Found::Opened(..) | Found::There => None,
            };
            self.read_parsed_looked(name, looked, memo, |_, text| Ok((text, true)))
        })
    }

    /// The lookup of [`Loader::read_kustomization_file`], `read` reading each name that is there,
    /// given what the lookup found of it: the file when `at_once` opened it
    /// ([`Loader::open_at_once`]), else its `lstat` when it is a plain file.
    fn read_kustomization_with<T>(&self, at_once: bool, mut read: impl FnMut(&str, Found) -> Result<(PathBuf, T)>) -> Result<(PathBuf, T)> {
        let mut found = Vec::new();
        let mut unreadable = None;
        for name in KUSTOMIZATION_FILE_NAMES {
            let at_hand = if at_once { self.open_at_once(name) } else { AtOnce::Unsure };
            let there = match at_hand {
                AtOnce::Opened(path, file) => Some(Found::Opened(path, file)),
                AtOnce::Absent => None,
                // Nothing there (not even a dangling link) is absent, without building the
                // message a failed read would carry.
                AtOnce::Unsure => match self.lstat(&self.root.join(name)) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    // The root is real, so a plain file in it is where its name says.
                    Ok(meta) if meta.is_file() => Some(Found::Looked(Looked { real: self.root.join(name), meta })),
                    _ => Some(Found::There),
                },
            };
            self.probe(name);
            let Some(opened) = there else { continue };
            match read(name, opened) {
                Ok((_, text)) => found.push((self.root.join(name), text)),
                // Absent, a folder, or refused by the restrictor: kustomize's "not found".
                Err(Error::OutsideRoot { .. }) => {}
                Err(Error::Io { .. } | Error::Missing { .. }) if !self.root.join(name).is_file() && !is_symlink_loop(&self.root.join(name)) => {}
                Err(error) => unreadable = unreadable.or(Some(error)),
            }
        }
        match found.len() {
            0 => Err(unreadable.unwrap_or_else(|| {
                Error::msg(format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    self.root.display()
                ))
            })),
            1 => Ok(found.pop().expect("one file found")),
            _ => Err(Error::msg(format!("Found multiple kustomization files under: {}", self.root.display()))),
        }
    }

    /// A path relative to this root, for messages.
    pub fn display_relative(&self, relative: &str) -> String {
        normalize(&self.root.join(relative)).display().to_string()
    }
}

/// `base.join(relative).canonicalize()`, for a `base` that is already canonical. Walking down
/// from `base` one part at a time needs a `lstat` per part where `realpath` reads every link
/// of the whole path; anything unusual (a symlink, an absolute path, a file on the way) goes
/// to `canonicalize`, for its exact result or error. With the result, the `lstat` of its last
/// part when the walk made one (none when it went to `canonicalize`, or the last part is a
/// folder found real before).
fn real_path(base: &Path, relative: &Path) -> std::io::Result<(PathBuf, Option<std::fs::Metadata>)> {
    let mut path = base.to_path_buf();
    let mut parts = relative.components().peekable();
    let mut last = None;
    while let Some(part) = parts.next() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                path.pop();
                last = None;
            }
            Component::Normal(name) => {
                path.push(name);
                let on_the_way = parts.peek().is_some();
                if real_folders::known(&path) {
                    last = None;
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path)?;
                let kind = meta.file_type();
                if kind.is_symlink() || (on_the_way && !kind.is_dir()) {
                    return Ok((base.join(relative).canonicalize()?, None));
                }
                if kind.is_dir() {
                    real_folders::remember(&path);
                }
                last = Some(meta);
            }
            Component::RootDir | Component::Prefix(_) => return Ok((base.join(relative).canonicalize()?, None)),
        }
    }
    Ok((path, last))
}

/// Folders a walk of [`real_path`] found to be folders, not links, in this process: the many
/// files of one folder, and the many roots below one folder, look at its parts once. A folder
/// replaced by a link after that is followed, as it would be had the swap come just after its
/// own check (files are opened by path; only their last part refuses a link).
mod real_folders {
    use std::ffi::OsString;
    use std::path::Path;
    use std::sync::Mutex;

    /// Enough for the folders of a large monorepo; past it the set starts again.
    const MOST: usize = 1 << 16;

    /// Kept as the bytes of the path, which hash in one pass (a `Path` hashes part by part):
    /// every path asked is built the same way, from a real folder and names, so one folder is
    /// one spelling.
    static FOLDERS: Mutex<Option<crate::fast_hash::FastHashSet<OsString>>> = Mutex::new(None);

    pub fn known(path: &Path) -> bool {
        FOLDERS.lock().map(|set| set.as_ref().is_some_and(|set| set.contains(path.as_os_str()))).unwrap_or(false)
    }

    pub fn remember(path: &Path) {
        if let Ok(mut set) = FOLDERS.lock() {
            let set = set.get_or_insert_with(Default::default);
            if set.len() >= MOST {
                set.clear();
            }
            set.insert(path.as_os_str().to_os_string());
        }
    }
}

/// `base.join(relative).canonicalize()` for a real `base`, with `..` taken lexically first.
pub fn real_path_below(base: &Path, relative: &Path) -> std::io::Result<PathBuf> {
    real_path_lexical(base, relative)
}

/// [`real_path`] of `base` joined with `relative` once `.` and `..` are removed lexically, as
/// Go's `filepath.Join` removes them. Every folder above `base` (real) is real too: the walk
/// starts from the nearest one holding the path (`../../base` from an overlay starts two up).
fn real_path_lexical(base: &Path, relative: &Path) -> std::io::Result<PathBuf> {
    real_path_lexical_meta(base, relative).map(|(path, _)| path)
}

/// [`real_path_lexical`], with the `lstat` of the path's last part when the walk made one (the
/// path is then no link): what a caller would otherwise ask the disk again.
fn real_path_lexical_meta(base: &Path, relative: &Path) -> std::io::Result<(PathBuf, Option<std::fs::Metadata>)> {
    // The usual case (`deployment.yaml`, `config/app.env`): nothing to take back lexically, and
    // the walk starts at `base` itself.
    if goes_down(relative) {
        return real_path(base, relative);
    }
    // The next most usual (`../../base`): up a few folders, then only down.
    if let Some((above, rest)) = climbs_then_goes_down(base, relative) {
        return real_path(&above, rest);
    }
    let joined = normalize(&base.join(relative));
    match base.ancestors().find_map(|above| Some((above, joined.strip_prefix(above).ok()?))) {
        Some((above, rest)) => real_path(above, rest),
        None => Ok((joined.canonicalize()?, None)),
    }
}

/// For a `relative` path that goes up first and then only down (`../../base`), the folder
/// [`real_path_lexical_meta`] starts its walk from (the nearest one above `base` holding the
/// path) and the rest of the path below it: what joining, taking `..` off lexically and
/// looking for that folder among `base`'s would give, without comparing `base`'s folders one by
/// one with the joined path. `None` for any other path.
fn climbs_then_goes_down<'r>(base: &Path, relative: &'r Path) -> Option<(PathBuf, &'r Path)> {
    let mut parts = relative.components();
    let mut ups = 0;
    while parts.clone().next() == Some(Component::ParentDir) {
        parts.next();
        ups += 1;
    }
    if ups == 0 || !parts.clone().all(|part| matches!(part, Component::Normal(_))) || !base.is_absolute() {
        return None;
    }
    let mut above = base;
    for _ in 0..ups {
        above = above.parent().unwrap_or(above);
    }
    // `../c/d` from `/a/b/c` comes back down into `c`: the walk starts at `/a/b/c`.
    let mut start = above.to_path_buf();
    for part in base.strip_prefix(above).ok()?.components() {
        let mut next = parts.clone();
        if next.next() != Some(part) {
            break;
        }
        start.push(part);
        parts = next;
    }
    Some((start, parts.as_path()))
}

/// Whether `relative` only goes down: not empty, not absolute, no `.` or `..` part. Joined to a
/// real folder (which has no such part either), it needs no lexical cleaning.
fn goes_down(relative: &Path) -> bool {
    let bytes = relative.as_os_str().as_encoded_bytes();
    !bytes.is_empty() && bytes[0] != b'/' && bytes.split(|&b| b == b'/').all(|part| part != b"." && part != b"..")
}

/// A path as [`Loader::look`] found it: its real path, reached without a link, and the `lstat`
/// of its last part.
pub struct Looked {
    real: PathBuf,
    meta: std::fs::Metadata,
}

/// What the lookup of a kustomization file found of a name that is there, before reading it.
enum Found {
    Opened(PathBuf, std::fs::File),
    Looked(Looked),
    /// Something, for the read to say what.
    There,
}

/// What [`Loader::open_at_once`] found.
enum AtOnce {
    /// The file (or folder) at the path, opened without following a link at its last part.
    Opened(PathBuf, std::fs::File),
    /// Nothing there, not even a link.
    Absent,
    /// For the full check to say.
    Unsure,
}

/// The text of the file read at `path`, or the error naming it when it is no text.
fn text_of(path: PathBuf, bytes: Vec<u8>) -> Result<(PathBuf, String)> {
    match decode_text(bytes) {
        Some(text) => Ok((path, text)),
        None => Err(Error::Io { path, message: "file is not valid UTF-8".into() }),
    }
}

/// A file's text: UTF-8, or UTF-16 when it starts with a byte order mark saying so (go-yaml
/// decodes both; the mark stays, as the YAML parser expects it at the start).
fn decode_text(bytes: Vec<u8>) -> Option<String> {
    let utf16 = |units: &[u8], unit: fn([u8; 2]) -> u16| {
        if units.len() % 2 != 0 {
            return None;
        }
        String::from_utf16(&units.chunks_exact(2).map(|p| unit([p[0], p[1]])).collect::<Vec<u16>>()).ok()
    };
    match bytes.get(..2) {
        Some([0xFF, 0xFE]) => utf16(&bytes, u16::from_le_bytes),
        Some([0xFE, 0xFF]) => utf16(&bytes, u16::from_be_bytes),
        _ => String::from_utf8(bytes).ok(),
    }
}

/// The bounded reader ([`crate::bounded_read`]): a regular file of at most
/// [`crate::bounded_read::MAX_FILE_BYTES`]. `path` is the checked, symlink-free path: opening it without following a symlink keeps a
/// link swapped in after the check from being read.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    read_opened(read_file_open(path)?)
}

/// [`read_file`] in two steps: the open, which refuses a link at the last part ...
fn read_file_open(path: &Path) -> std::io::Result<std::fs::File> {
    crate::bounded_read::open(path, crate::bounded_read::Links::Refuse)
}

/// ... and the read of what was opened, within the bound.
fn read_opened(file: std::fs::File) -> std::io::Result<Vec<u8>> {
    crate::bounded_read::read_opened(file, crate::bounded_read::MAX_FILE_BYTES)
}

/// kustomize v5.8.3's refusal of a folder whose path has a segment with `..` inside it (not `..`
/// itself): `foo..bar`, or `base - ../shared`, two list entries a bad indentation made one.
pub fn ambiguous_root(relative: &str) -> Option<String> {
    let ambiguous = relative.split('/').any(|part| !matches!(part, "" | "." | "..") && part.contains(".."));
    ambiguous.then(|| {
        format!(
            "path {} is ambiguous: resolves to {} after normalization, which is likely not the intended target; check for YAML indentation errors in your kustomization file",
            crate::yaml::go_syntax::quote(relative),
            crate::yaml::go_syntax::quote(&go_clean(relative))
        )
    })
}

/// Go's `filepath.Clean` of a path: one slash between parts, no `.`, `..` taken back where it can be.
fn go_clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            other => parts.push(other),
        }
    }
    match (rooted, parts.join("/")) {
        (true, joined) => format!("/{joined}"),
        (false, joined) if joined.is_empty() => ".".into(),
        (false, joined) => joined,
    }
}

/// Lexically removes `.` and `..` parts.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` is a symlink that never ends in a file (a loop, or one too deep).
fn is_symlink_loop(path: &Path) -> bool {
    matches!(path.canonicalize(), Err(e) if is_loop(&e))
}

/// `ELOOP`, which std has no stable `ErrorKind` for.
fn is_loop(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

fn io_reason(e: &std::io::Error) -> String {
    if is_loop(e) {
        return "too many levels of symbolic links (a symlink loop)".into();
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempdir::TempTree {
        tempdir::TempTree::new()
    }

    mod tempdir {
        use std::path::PathBuf;
        pub struct TempTree(pub PathBuf);
        impl TempTree {
            pub fn new() -> Self {
                let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
                let p = std::env::temp_dir().join(format!("ppb-loader-{}-{n}", std::process::id()));
                std::fs::create_dir_all(p.join("app")).unwrap();
                TempTree(p)
            }
        }
        impl Drop for TempTree {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    /// A path that only goes down resolves without lexical cleaning, to the same real path
    /// (doubled and trailing slashes included); one with `.` or `..` parts takes the long way.
    #[test]
    fn paths_going_down_resolve_as_cleaned_ones_do() {
        for (path, down) in [("a.yaml", true), ("sub/a.yaml", true), ("sub//a.yaml", true), ("sub/", true), ("./a.yaml", false), ("sub/../a.yaml", false), ("/a.yaml", false), ("", false), ("..a/b..", true)] {
            assert_eq!(goes_down(Path::new(path)), down, "{path:?}");
        }
        let t = tree();
        let root = t.0.join("app").canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.yaml"), "a: 1").unwrap();
        for path in ["sub/a.yaml", "sub//a.yaml", "sub/./a.yaml", "sub/"] {
            let (real, _) = real_path_lexical_meta(&root, Path::new(path)).unwrap();
            assert_eq!(real, root.join(path).canonicalize().unwrap(), "{path}");
        }
        let l = Loader::new(&root, LoadRestrictor::RootOnly).unwrap();
        assert!(l.is_file("sub//a.yaml") && l.is_file("./sub/a.yaml") && !l.is_file("sub"));
    }

    /// A path that climbs and then only goes down starts its walk where joining it, cleaning it
    /// lexically and looking for the nearest folder above the base holding it would start; on
    /// disk, it resolves to the same real path, a link on the way included.
    #[test]
    fn paths_climbing_then_going_down_start_where_the_lexical_search_starts() {
        let searched = |base: &Path, relative: &Path| {
            let joined = normalize(&base.join(relative));
            base.ancestors().find_map(|above| Some((above.to_path_buf(), joined.strip_prefix(above).ok()?.to_path_buf())))
        };
        let cases = [
            ("/a/b/c", "../../base"),
            ("/a/b/c", "../c/d"),
            ("/a/b/c", "../../b/c/d/e"),
            ("/a/b/c", "../c"),
            ("/a/b/c", ".."),
            ("/a/b/c", "../../../../x/y"),
            ("/a/b/c", "../x//y/"),
            ("/a/b/c", "../x/./y"),
            ("/", "../x"),
        ];
        for (base, relative) in cases {
            let (base, relative) = (Path::new(base), Path::new(relative));
            let start = climbs_then_goes_down(base, relative).map(|(above, rest)| (above, rest.to_path_buf()));
            assert_eq!(start, searched(base, relative), "{} and {}", base.display(), relative.display());
        }
        for relative in ["x/y", "./../x", "../x/../y", "/abs"] {
            assert_eq!(climbs_then_goes_down(Path::new("/a/b"), Path::new(relative)), None, "{relative}");
        }
        let t = tree();
        let root = t.0.join("app").canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(t.0.join("base")).unwrap();
        std::fs::write(t.0.join("base/a.yaml"), "a: 1").unwrap();
        let mut paths = vec!["../../base/a.yaml", "../sub", "../../app/sub", "../../base//a.yaml"];
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(t.0.join("base"), root.join("link")).unwrap();
            paths.push("../link/a.yaml");
        }
        for path in paths {
            let (real, _) = real_path_lexical_meta(&root.join("sub"), Path::new(path)).unwrap();
            assert_eq!(real, normalize(&root.join("sub").join(path)).canonicalize().unwrap(), "{path}");
        }
    }

    #[test]
    fn root_only_refuses_a_file_above_the_root() {
        let t = tree();
        std::fs::write(t.0.join("secret.env"), "A=1").unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        let err = l.read("../secret.env").unwrap_err().to_string();
        assert!(err.contains("is not in or below"), "{err}");
        let open = Loader::new(&t.0.join("app"), LoadRestrictor::None).unwrap();
        assert_eq!(open.read("../secret.env").unwrap().1, "A=1");
    }

    #[cfg(unix)]
    #[test]
    fn root_only_refuses_a_symlink_that_escapes_the_root() {
        let t = tree();
        std::fs::write(t.0.join("outside.yaml"), "a: 1").unwrap();
        std::os::unix::fs::symlink(t.0.join("outside.yaml"), t.0.join("app/link.yaml")).unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        assert!(matches!(l.read("link.yaml"), Err(Error::OutsideRoot { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn the_checked_path_is_opened_without_following_a_link() {
        let t = tree();
        std::fs::write(t.0.join("app/real.yaml"), "a: 1").unwrap();
        std::os::unix::fs::symlink(t.0.join("app/real.yaml"), t.0.join("app/swapped.yaml")).unwrap();
        assert_eq!(read_file(&t.0.join("app/real.yaml")).unwrap(), b"a: 1");
        assert!(read_file(&t.0.join("app/swapped.yaml")).is_err(), "a link in place of a checked path was followed");
    }

    /// Files in a folder already found real are opened at once; a link among them, or a name
    /// with nothing behind it, still gets the full check's answer.
    #[cfg(unix)]
    #[test]
    fn a_file_opened_at_once_is_still_checked_when_it_is_a_link_or_missing() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("app/sub")).unwrap();
        std::fs::write(t.0.join("outside.yaml"), "a: 1").unwrap();
        std::fs::write(t.0.join("app/sub/real.yaml"), "b: 2").unwrap();
        std::os::unix::fs::symlink(t.0.join("outside.yaml"), t.0.join("app/sub/escape.yaml")).unwrap();
        std::os::unix::fs::symlink("real.yaml", t.0.join("app/sub/inside.yaml")).unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        let real = l.root().join("sub/real.yaml");
        // The first read walks `sub` and finds it real; the next ones take the short way.
        assert_eq!(l.read("sub/real.yaml").unwrap(), (real.clone(), "b: 2".to_string()));
        assert!(l.below_real_folders("sub/escape.yaml").is_some(), "the folder was not remembered as real");
        assert!(matches!(l.read("sub/escape.yaml"), Err(Error::OutsideRoot { .. })));
        assert_eq!(l.read("sub/inside.yaml").unwrap(), (real, "b: 2".to_string()), "a link inside the root reads its target, named by its real path");
        assert!(matches!(l.read("sub/missing.yaml"), Err(Error::Missing { .. })));
        // A doubled slash takes the full check, which names the file plainly (paths compare by
        // their parts; their text is what messages show).
        let named = l.read("sub//real.yaml").unwrap().0;
        assert_eq!(named.display().to_string(), l.root().join("sub/real.yaml").display().to_string());
        let unrestricted = Loader::new(&t.0.join("app"), LoadRestrictor::None).unwrap();
        assert_eq!(unrestricted.read("sub/escape.yaml").unwrap().1, "a: 1");
    }

    /// Only a regular file is read at once; a folder, a link, a missing name or a path the
    /// short way cannot take is left to the full check, and a regular file that cannot be
    /// read says why.
    #[test]
    fn only_a_plain_file_is_read_at_once() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("app/folder.yaml")).unwrap();
        std::fs::write(t.0.join("app/plain.yaml"), "a: 1").unwrap();
        std::fs::write(t.0.join("app/latin1.yaml"), b"a: \xe9").unwrap();
        std::os::unix::fs::symlink("plain.yaml", t.0.join("app/linked.yaml")).unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        let read = l.read_if_plain_file("plain.yaml").expect("a plain file is read at once").unwrap();
        assert_eq!(read, (l.root().join("plain.yaml"), "a: 1".to_string()));
        for other in ["folder.yaml", "linked.yaml", "missing.yaml", "../app/plain.yaml", "./plain.yaml"] {
            assert!(l.read_if_plain_file(other).is_none(), "{other} was read at once");
        }
        let Some(Err(Error::Io { message, .. })) = l.read_if_plain_file("latin1.yaml") else { panic!("a file that is no text is read at once, and refused") };
        assert_eq!(message, "file is not valid UTF-8");
    }

    /// What an entry names, following links as kustomize does; a folder it found is the root
    /// of the loader made for it, by its real path.
    #[test]
    fn kind_of_follows_links_and_finds_folders_for_their_loaders() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("app/base")).unwrap();
        std::fs::create_dir_all(t.0.join("shared/folder")).unwrap();
        std::fs::write(t.0.join("app/file.yaml"), "a: 1").unwrap();
        std::os::unix::fs::symlink("file.yaml", t.0.join("app/to-file")).unwrap();
        std::os::unix::fs::symlink("../shared/folder", t.0.join("app/to-folder")).unwrap();
        std::os::unix::fs::symlink("nowhere", t.0.join("app/dangling")).unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        let kind = |entry: &str| l.kind_of(entry).map(|k| (k.is_file(), k.is_dir()));
        assert_eq!(kind("file.yaml"), Some((true, false)));
        assert_eq!(kind("to-file"), Some((true, false)));
        assert_eq!(kind("base"), Some((false, true)));
        assert_eq!(kind("to-folder"), Some((false, true)));
        assert_eq!(kind("../shared/folder"), Some((false, true)));
        assert_eq!(kind("dangling"), None);
        assert_eq!(kind("missing"), None);
        assert_eq!(kind("file.yaml/below"), None);
        // Asked twice, the second time from what the first walk remembered.
        assert_eq!(kind("base"), Some((false, true)));
        assert_eq!(l.child("base").unwrap().root(), l.root().join("base"));
        assert_eq!(l.child("to-folder").unwrap().root(), t.0.canonicalize().unwrap().join("shared/folder"));
        assert!(l.child("file.yaml").is_err(), "a file is no root");
    }

    /// The kustomization file opened at once is the one the full lookup finds; two of them are
    /// still an error, and a folder by that name does not count.
    #[test]
    fn the_kustomization_file_opened_at_once_is_the_one_found() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("one")).unwrap();
        std::fs::write(t.0.join("one/kustomization.yml"), "resources: []").unwrap();
        std::fs::create_dir_all(t.0.join("one/kustomization.yaml")).unwrap();
        let l = Loader::new(&t.0.join("one"), LoadRestrictor::RootOnly).unwrap();
        assert_eq!(l.read_kustomization_file().unwrap(), (l.root().join("kustomization.yml"), "resources: []".to_string()));
        std::fs::write(t.0.join("one/Kustomization"), "resources: []").unwrap();
        let two = l.read_kustomization_file().unwrap_err().to_string();
        assert!(two.contains("Found multiple kustomization files under"), "{two}");
    }

    /// The builds of one run look at a path once ([`RunLooks`]): a file edited during the run is
    /// seen by every root as the first one saw it, a kustomization file added as absent.
    #[test]
    fn the_roots_of_one_run_see_a_shared_file_as_first_looked_at() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("base")).unwrap();
        std::fs::write(t.0.join("base/kustomization.yaml"), "resources: [cm.yaml]\n").unwrap();
        std::fs::write(t.0.join("base/cm.yaml"), "a: 1").unwrap();
        let memo: FileMemo<String> = FileMemo::new(1024);
        let kustomizations: FileMemo<String> = FileMemo::new(1024);
        let run = Some(Arc::new(RunLooks::default()));
        let base_of = |root: &str, looks: Option<Arc<RunLooks>>| {
            std::fs::create_dir_all(t.0.join(root)).unwrap();
            Loader::new(&t.0.join(root), LoadRestrictor::RootOnly).unwrap().with_looks(looks).child("../base").unwrap()
        };
        let read = |base: &Loader| {
            let (kind, looked) = base.look("cm.yaml").unwrap();
            assert!(kind.is_file());
            let (_, text) = base.read_parsed_looked("cm.yaml", looked, &memo, |_, text| Ok((text, true))).unwrap();
            let (file, kustomization) = base.read_kustomization_shared(&kustomizations).unwrap();
            assert_eq!(file, base.root().join("kustomization.yaml"));
            (text.to_string(), kustomization.to_string())
        };
        assert_eq!(read(&base_of("app", run.clone())), ("a: 1".into(), "resources: [cm.yaml]\n".into()));

        // Edited during the run, and a second kustomization file added: the run's next root
        // sees the tree as the first one did, ...
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(t.0.join("base/cm.yaml"), "a: 22").unwrap();
        std::fs::write(t.0.join("base/Kustomization"), "resources: []\n").unwrap();
        assert_eq!(read(&base_of("other", run.clone())), ("a: 1".into(), "resources: [cm.yaml]\n".into()));

        // ... a build of another run (or of none) sees it as it is now.
        std::fs::remove_file(t.0.join("base/Kustomization")).unwrap();
        for looks in [Some(Arc::new(RunLooks::default())), None] {
            assert_eq!(read(&base_of("third", looks)), ("a: 22".into(), "resources: [cm.yaml]\n".into()));
        }
        std::fs::write(t.0.join("base/Kustomization"), "resources: []\n").unwrap();
        let twice = base_of("fourth", Some(Arc::new(RunLooks::default()))).read_kustomization_shared(&kustomizations).unwrap_err();
        assert!(twice.to_string().starts_with("Found multiple kustomization files under: "), "{twice}");
    }

    #[cfg(unix)]
    #[test]
    fn what_a_run_saw_passes_no_root_by_its_restrictor() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("shared")).unwrap();
        std::fs::write(t.0.join("shared/cm.yaml"), "a: 1").unwrap();
        std::os::unix::fs::symlink(t.0.join("shared/cm.yaml"), t.0.join("app/cm.yaml")).unwrap();
        let memo: FileMemo<usize> = FileMemo::new(1024);
        let run = Some(Arc::new(RunLooks::default()));
        // A root that may read outside itself looks at the file, through its link and by a
        // path that climbs; the run keeps what the file is.
        let open = Loader::new(&t.0.join("app"), LoadRestrictor::None).unwrap().with_looks(run.clone());
        assert!(open.look("cm.yaml").unwrap().0.is_file());
        assert!(open.read_parsed("cm.yaml", &memo, |_, text| Ok((text.len(), true))).is_ok());
        assert!(open.read_parsed("../shared/cm.yaml", &memo, |_, text| Ok((text.len(), true))).is_ok());
        assert!(run.as_ref().unwrap().get(&t.0.join("shared/cm.yaml").canonicalize().unwrap()).is_some());
        // The run's next root, restricted to itself, still may not.
        let restricted = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap().with_looks(run.clone());
        for name in ["cm.yaml", "../shared/cm.yaml"] {
            let refused = restricted.read_parsed(name, &memo, |_, _| Ok((0, true)));
            assert!(matches!(refused, Err(Error::OutsideRoot { .. })), "{name}: the restrictor was passed by");
        }
    }

    /// A file parsed by one root and served from memory to the next is still resolved under
    /// the restrictor and recorded as read by each root.
    #[test]
    fn a_memo_hit_is_checked_and_recorded_as_a_read() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("base")).unwrap();
        std::fs::write(t.0.join("base/cm.yaml"), "a: 1").unwrap();
        let memo: FileMemo<usize> = FileMemo::new(1024);
        let mut parses = 0;
        for root in ["app", "other"] {
            std::fs::create_dir_all(t.0.join(root)).unwrap();
            let reads = Arc::new(Reads::default());
            let l = Loader::new(&t.0.join(root), LoadRestrictor::None).unwrap().with_reads(reads.clone());
            let (path, parsed) = l
                .read_parsed("../base/cm.yaml", &memo, |_, text| {
                    parses += 1;
                    Ok((text.len(), true))
                })
                .unwrap();
            assert_eq!(*parsed, 4);
            assert!(reads.snapshot().files.contains(&path), "{root}: the read was not recorded");
            let restricted = Loader::new(&t.0.join(root), LoadRestrictor::RootOnly).unwrap();
            let refused = restricted.read_parsed("../base/cm.yaml", &memo, |_, _| Ok((0, true)));
            assert!(matches!(refused, Err(Error::OutsideRoot { .. })), "{root}: the restrictor was passed by");
        }
        assert_eq!(parses, 1, "the second root parsed the file again");
    }

    /// A generator's source shared by two roots is read from disk once, its bytes as they are
    /// (not text), each root's read checked and recorded; edited, it is read again.
    #[test]
    fn shared_bytes_are_read_once_checked_recorded_and_read_again_when_edited() {
        let t = tree();
        std::fs::create_dir_all(t.0.join("base")).unwrap();
        std::fs::write(t.0.join("base/logo.bin"), [0xff, 0x00, 0xfe]).unwrap();
        let memo: FileMemo<Vec<u8>> = FileMemo::new(1024);
        let mut served = Vec::new();
        for root in ["app", "other"] {
            std::fs::create_dir_all(t.0.join(root)).unwrap();
            let reads = Arc::new(Reads::default());
            let l = Loader::new(&t.0.join(root), LoadRestrictor::None).unwrap().with_reads(reads.clone());
            let (path, bytes) = l.read_bytes_shared("../base/logo.bin", &memo).unwrap();
            assert_eq!(*bytes, [0xff, 0x00, 0xfe]);
            assert!(reads.snapshot().files.contains(&path), "{root}: the read was not recorded");
            served.push(bytes);
            let restricted = Loader::new(&t.0.join(root), LoadRestrictor::RootOnly).unwrap();
            let refused = restricted.read_bytes_shared("../base/logo.bin", &memo);
            assert!(matches!(refused, Err(Error::OutsideRoot { .. })), "{root}: the restrictor was passed by");
        }
        assert!(Arc::ptr_eq(&served[0], &served[1]), "the second root read the file again");
        // Edited in place, the same size: its change time moves, and it is read again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(t.0.join("base/logo.bin"), [0x01, 0x02, 0x03]).unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::None).unwrap();
        assert_eq!(*l.read_bytes_shared("../base/logo.bin", &memo).unwrap().1, [0x01, 0x02, 0x03]);
        // Missing, the error is the one a plain read gives.
        let missing = l.read_bytes_shared("../base/none.bin", &memo).unwrap_err().to_string();
        assert_eq!(missing, l.read_bytes("../base/none.bin").unwrap_err().to_string());
    }

    #[test]
    fn two_kustomization_files_in_one_folder_is_an_error() {
        let t = tree();
        std::fs::write(t.0.join("app/kustomization.yaml"), "").unwrap();
        std::fs::write(t.0.join("app/Kustomization"), "").unwrap();
        let l = Loader::new(&t.0.join("app"), LoadRestrictor::RootOnly).unwrap();
        assert!(l.read_kustomization_file().unwrap_err().to_string().contains("Found multiple kustomization files"));
    }
}
