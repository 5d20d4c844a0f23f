//! `localize`: a copy of a kustomization target in which every file it reads is local, laid out
//! as kustomize's localizer lays it out (`api/internal/localizer/`), so that the copy builds
//! offline to the same output.
//!
//! Local files keep their place relative to the scope (paths are cleaned: `../b/./x` inside the
//! root becomes `x`); an HTTP(S) file goes to `localized-files/<host>/<path>` and a remote root to
//! `localized-files/<host>/<repository>/<ref>/<folder>`, both inside the root that names them.
//! Each kustomization file is rewritten as kustomize writes it (fields sorted, see [`marshal`]);
//! the configuration of a built-in plugin in `generators`/`transformers`/`validators` is
//! rewritten with its paths localized. Nothing is written outside the destination, which must
//! not exist beforehand; on an error it is removed again.
mod fields;
mod loader;
mod marshal;
mod paths;

use std::path::{Path, PathBuf};

use loader::{Args, LocLoader};

use crate::kustomization::loader::normalize;
use crate::remote::{RemoteOptions, RepoSpec};

/// What to localize, and where.
#[derive(Clone, Debug, Default)]
pub struct LocalizeOptions {
    /// A kustomization folder, or a git URL with a `ref`.
    pub target: String,
    /// `--scope`: the folder local references must stay in (default: the target).
    pub scope: Option<String>,
    /// The destination, a new folder in an existing one (default `localized-<target>`).
    pub dest: Option<String>,
    pub remote: RemoteOptions,
}

/// The result of a run: the destination, and where in it the target's copy is.
#[derive(Clone, Debug)]
pub struct Localized {
    pub dest: PathBuf,
    pub target_copy: PathBuf,
}

/// Localizes `options.target`; the error is one line, worded as kustomize's.
pub fn localize(options: &LocalizeOptions) -> Result<Localized, String> {
    let target = options.target.as_str();
    let spec = RepoSpec::parse(target).ok().filter(|_| !Path::new(target).exists());
    if let Some(spec) = &spec {
        if spec.git_ref.is_empty() {
            return Err(format!("localize remote root {target:?} missing ref query string parameter"));
        }
    }
    let top = match &spec {
        Some(spec) => loader::open_remote(spec, &options.remote).map(|(l, checkout)| LocLoader::top(l, Some((spec.clone(), checkout)))),
        None => loader::open_local(Path::new(target)).map(|l| LocLoader::top(l, None)),
    }
    .map_err(|e| format!("unable to establish localize target {target:?}: {e}"))?;

    let scope = establish_scope(options.scope.as_deref(), target, &top).map_err(|e| format!("invalid localize scope {:?}: {e}", options.scope.as_deref().unwrap_or("")))?;
    let new_dir = create_new_dir(options.dest.as_deref(), &top).map_err(|e| format!("invalid localize destination {:?}: {e}", options.dest.as_deref().unwrap_or("")))?;
    let args = Args { scope, new_dir, remote: options.remote.clone() };
    let target_copy = args.new_dir.join(top.root().strip_prefix(&args.scope).unwrap_or(Path::new("")));
    let result = std::fs::create_dir_all(&target_copy)
        .map_err(|e| format!("unable to create directory in localize destination: {e}"))
        .and_then(|()| Localizer { args: &args, ldr: top, dst: target_copy.clone() }.localize().map_err(|e| format!("unable to localize target {target:?}: {e}")));
    if let Err(e) = result {
        if let Err(cleanup) = std::fs::remove_dir_all(&args.new_dir) {
            eprintln!("unable to clean localize destination: {cleanup}");
        }
        return Err(e);
    }
    Ok(Localized { dest: args.new_dir, target_copy })
}

/// The scope: the checkout for a remote target, else `--scope` (which must contain the target)
/// or the target itself.
fn establish_scope(raw_scope: Option<&str>, raw_target: &str, top: &LocLoader) -> Result<PathBuf, String> {
    let raw_scope = raw_scope.filter(|s| !s.is_empty());
    if let Some((_, checkout)) = &top.repository {
        if let Some(scope) = raw_scope {
            return Err(format!("scope {scope:?} specified for remote localize target {raw_target:?}"));
        }
        return Ok(checkout.clone());
    }
    let Some(raw_scope) = raw_scope else { return Ok(top.root().to_path_buf()) };
    let scope = Path::new(raw_scope)
        .canonicalize()
        .map_err(|e| format!("unable to establish localize scope: must build at directory: '{raw_scope}': {e}"))?;
    if !scope.is_dir() {
        return Err(format!("unable to establish localize scope: must build at directory: '{}': file is not directory", scope.display()));
    }
    if !top.root().starts_with(&scope) {
        return Err(format!("localize scope {raw_scope:?} does not contain target {raw_target:?} at {:?}", top.root().display().to_string()));
    }
    Ok(scope)
}

/// Creates the destination, which must not exist, inside an existing folder.
fn create_new_dir(raw: Option<&str>, top: &LocLoader) -> Result<PathBuf, String> {
    let raw = match raw.filter(|d| !d.is_empty()) {
        Some(raw) => raw.to_string(),
        None => paths::default_dest_name(top.root(), top.repository.as_ref().map(|(spec, checkout)| (spec, checkout.as_path()))),
    };
    let path = Path::new(&raw);
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(format!("localize destination {raw:?} already exists"));
    }
    std::fs::create_dir(path).map_err(|e| format!("unable to create localize destination directory: mkdir {raw}: {}", io_words(&e)))?;
    path.canonicalize().map_err(|e| {
        let _ = std::fs::remove_dir_all(path);
        format!("unable to establish localize destination: {e}")
    })
}

fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// The localization of one root: its loader and its place in the destination.
struct Localizer<'a> {
    args: &'a Args,
    ldr: LocLoader,
    dst: PathBuf,
}

impl Localizer<'_> {
    /// Localizes this root's kustomization and everything it names.
    fn localize(&self) -> Result<(), String> {
        let (file, text) = self.ldr.loader.read_kustomization_file().map_err(|e| e.to_string())?;
        let mut kustomization = fields::decode(&text, &file)?;
        self.localize_native_fields(&mut kustomization)?;
        self.localize_builtin_plugins(&mut kustomization)?;
        let name = file.file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("kustomization.yaml"));
        self.write(&self.dst.join(name), marshal::kustomization_yaml(&kustomization).as_bytes())
            .map_err(|e| format!("unable to write localized kustomization file: {e}"))
    }

    /// Writes a file of the destination; refuses any path that is not inside it.
    fn write(&self, path: &Path, content: &[u8]) -> Result<(), String> {
        let path = normalize(path);
        if !path.starts_with(&self.args.new_dir) || path == self.args.new_dir {
            return Err(format!("refusing to write {} outside the localize destination {}", path.display(), self.args.new_dir.display()));
        }
        if let Some(parent) = path.parent() {
            self.create_dir(parent)?;
        }
        crate::safe_write::write_bytes_atomically(&path, content)
    }

    /// Creates a folder of the destination (and those above it), never through a symlink.
    fn create_dir(&self, dir: &Path) -> Result<(), String> {
        let dir = normalize(dir);
        if !dir.starts_with(&self.args.new_dir) {
            return Err(format!("refusing to create {} outside the localize destination {}", dir.display(), self.args.new_dir.display()));
        }
        let mut at = self.args.new_dir.clone();
        for part in dir.strip_prefix(&self.args.new_dir).unwrap_or(Path::new("")).components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(format!("{} is in the way of a folder of the localize destination", at.display())),
                Err(_) => std::fs::create_dir(&at).map_err(|e| format!("mkdir {}: {}", at.display(), io_words(&e)))?,
            }
        }
        Ok(())
    }

    /// A file path (`configurations`, `patches[].path`, `env`...): copied, its new path returned.
    fn localize_file(&self, path: &str) -> Result<String, String> {
        if path.is_empty() {
            return Ok(String::new());
        }
        let content = self.ldr.load(self.args, path)?;
        self.localize_file_with_content(path, &content)
    }

    /// Writes `content` where the file `path` goes in the destination; returns that path.
    fn localize_file_with_content(&self, path: &str, content: &[u8]) -> Result<String, String> {
        let loc_path = if crate::remote::url::is_http_url(path) {
            self.refuse_existing_localize_dir("file", path)?;
            paths::localized_file_path(path)
        } else {
            self.ldr.cleaned_relative(path)?
        };
        self.write(&self.dst.join(&loc_path), content).map_err(|e| format!("unable to localize file {path:?}: {e}"))?;
        Ok(path_text(&loc_path))
    }

    /// kustomize keeps remote content in `localized-files/` of each root, so a root that has a
    /// folder of that name itself cannot hold any.
    fn refuse_existing_localize_dir(&self, what: &str, path: &str) -> Result<(), String> {
        if std::fs::symlink_metadata(self.ldr.root().join(paths::LOCALIZE_DIR)).is_ok() {
            return Err(format!("{} already contains {} needed to store {what} {path:?}", self.ldr.root().display(), paths::LOCALIZE_DIR));
        }
        Ok(())
    }

    /// A `resources` entry: a file of resources, else a root.
    fn localize_resource(&self, path: &str) -> Result<String, String> {
        let as_file = if crate::remote::url::has_git_marker(path) && crate::remote::url::is_http_url(path) {
            // Such a URL names a repository, never a file: kustomize's GET would only fetch its page.
            Err(format!("{path:?} names a git repository"))
        } else {
            self.ldr.load(self.args, path).and_then(|content| {
                let text = String::from_utf8_lossy(&content);
                match crate::resource::decode::resources_from_file(Path::new(path), &text) {
                    Ok(_) => self.localize_file_with_content(path, &content),
                    Err(e) => Err(format!("invalid resource at file {path:?}: {e}")),
                }
            })
        };
        match as_file {
            Ok(loc) => Ok(loc),
            Err(file_error) => self.localize_root(path).map_err(|root_error| {
                format!("could not localize path {path:?} as file: {file_error}; could not localize path {path:?} as directory: {root_error}")
            }),
        }
    }

    /// A root (`bases`, `components`, a folder or git URL in `resources`): localized in place.
    fn localize_root(&self, path: &str) -> Result<String, String> {
        if path.is_empty() {
            return Ok(String::new());
        }
        let child = self.ldr.child(self.args, path)?;
        let loc_path = match (&child.repository, RepoSpec::parse(path).is_ok()) {
            (Some((spec, checkout)), true) => {
                self.refuse_existing_localize_dir("root", path)?;
                paths::localized_root_path(spec, checkout, child.root()).map_err(|e| format!("unable to parse host of remote root {path:?}: {e}"))?
            }
            _ => loader::relative_to(child.root(), self.ldr.root()),
        };
        let dst = normalize(&self.dst.join(&loc_path));
        self.create_dir(&dst).map_err(|e| format!("unable to create root {path:?} in localize destination: {e}"))?;
        Localizer { args: self.args, ldr: child, dst }.localize().map_err(|e| format!("unable to localize root {path:?}: {e}"))?;
        Ok(path_text(&loc_path))
    }

    /// A configMap/secret `files` entry (`[key=]path`): the path localized, the key kept.
    fn localize_file_source(&self, source: &str) -> Result<String, String> {
        let (key, file) = parse_file_source(source)?;
        let loc = self.localize_file(file).map_err(|e| format!("invalid file source {source:?}: {e}"))?;
        Ok(match key {
            Some(key) => format!("{key}={loc}"),
            None => loc,
        })
    }

    /// A helm chart home (`chartHome`): copied whole, when it exists, to the same place.
    fn copy_chart_home_entry(&self, entry: &str) -> Result<String, String> {
        let path = if entry.is_empty() { "charts" } else { entry };
        if Path::new(path).is_absolute() {
            return Err(format!("absolute path {path:?} not handled in alpha"));
        }
        let is_default = normalize(&self.ldr.root().join(path)) == self.ldr.root().join("charts");
        let loc = self.copy_chart_home(path, !is_default).map_err(|e| format!("unable to copy home {entry:?}: {e}"))?;
        Ok(if entry.is_empty() { String::new() } else { loc })
    }

    fn copy_chart_home(&self, path: &str, clean: bool) -> Result<String, String> {
        let relative = loader::relative_to(&normalize(&self.ldr.root().join(path)), self.ldr.root());
        let relative_text = path_text(&relative);
        // A chart home may be where charts are pulled to, yet to exist; its scope is not checked then.
        if !self.ldr.root().join(&relative).exists() {
            return Ok(relative_text);
        }
        let home = self.ldr.child(self.args, &relative_text).map_err(|e| format!("invalid chart home: {e}"))?;
        let to_dst = if clean { loader::relative_to(home.root(), self.ldr.root()) } else { relative };
        let dst = normalize(&self.dst.join(&to_dst));
        if std::fs::symlink_metadata(&dst).is_err() {
            self.copy_dir(home.root(), &dst).map_err(|e| format!("unable to copy chart home {relative_text:?}: {e}"))?;
        }
        Ok(path_text(&to_dst))
    }

    /// Copies a folder into the destination, leaving symlinks out.
    fn copy_dir(&self, src: &Path, dst: &Path) -> Result<(), String> {
        self.create_dir(dst)?;
        let mut entries: Vec<_> = std::fs::read_dir(src).map_err(|e| format!("unable to copy directory {:?}: {e}", src.display().to_string()))?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Ok(kind) = entry.file_type() else { continue };
            let to = dst.join(entry.file_name());
            if kind.is_symlink() {
                continue;
            } else if kind.is_dir() {
                self.copy_dir(&entry.path(), &to)?;
            } else {
                let content = crate::bounded_read::read_regular_file(&entry.path(), crate::bounded_read::Links::Refuse, crate::bounded_read::MAX_FILE_BYTES).map_err(|e| format!("{}: {e}", entry.path().display()))?;
                self.write(&to, &content)?;
            }
        }
        Ok(())
    }
}

/// kustomize's `ParseFileSource`: `path`, or `key=path`.
fn parse_file_source(source: &str) -> Result<(Option<&str>, &str), String> {
    match source.matches('=').count() {
        0 => Ok((None, source)),
        1 if source.starts_with('=') => Err(format!("missing key name for file path {:?} in source {source:?}", &source[1..])),
        1 if source.ends_with('=') => Err(format!("missing file path for key name {:?} in source {source:?}", &source[..source.len() - 1])),
        1 => {
            let (key, path) = source.split_once('=').expect("one '='");
            Ok((Some(key), path))
        }
        _ => Err(format!("source {source:?} key name or file path contains '='")),
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
