//! The localizer's loader (kustomize's `locloader.go`): the project's [`Loader`] under
//! `LoadRestrictionsRootOnly`, plus localize's own limits. A local root must lie inside the
//! scope and outside the destination; a file must not be read from the destination; a remote
//! root must name a ref.
use std::path::{Path, PathBuf};

use crate::kustomization::loader::normalize;
use crate::kustomization::{LoadRestrictor, Loader};
use crate::remote::{RemoteOptions, RepoSpec};

/// What holds for the whole run: the scope, the destination, how remotes are fetched.
pub struct Args {
    pub scope: PathBuf,
    pub new_dir: PathBuf,
    pub remote: RemoteOptions,
}

/// The loader at one kustomization root.
#[derive(Clone)]
pub struct LocLoader {
    pub loader: Loader,
    /// The checkout this root lies in, for a remote root.
    pub repository: Option<(RepoSpec, PathBuf)>,
    /// Whether this root and every root that led to it are local (only those are held to the scope).
    local: bool,
    /// The roots that led here, for kustomize's cycle check.
    visited: Vec<PathBuf>,
}

impl LocLoader {
    pub fn top(loader: Loader, repository: Option<(RepoSpec, PathBuf)>) -> Self {
        let local = repository.is_none();
        LocLoader { visited: vec![loader.root().to_path_buf()], loader, repository, local }
    }

    pub fn root(&self) -> &Path {
        self.loader.root()
    }

    /// The content of the file `path` (an HTTP(S) URL, or a path in this root).
    pub fn load(&self, args: &Args, path: &str) -> Result<Vec<u8>, String> {
        let content = self.load_unchecked(path).map_err(|e| format!("invalid file reference: {e}"))?;
        if !crate::remote::url::is_http_url(path) && self.local {
            let cleaned = self.loader.resolve(path).map_err(|e| e.to_string())?;
            if cleaned.parent().is_some_and(|dir| dir.starts_with(&args.new_dir)) {
                return Err(format!(
                    "file {path:?} at {:?} enters localize destination {:?}",
                    cleaned.display().to_string(),
                    args.new_dir.display().to_string()
                ));
            }
        }
        Ok(content)
    }

    fn load_unchecked(&self, path: &str) -> Result<Vec<u8>, String> {
        if crate::remote::url::is_http_url(path) {
            return crate::remote::http::get(path).map(String::into_bytes).map_err(|e| e.to_string());
        }
        let absolute = normalize(&self.root().join(path));
        if !self.root().join(path).exists() && std::fs::symlink_metadata(&absolute).is_err() {
            return Err(crate::error::evalsymlink_failure(&absolute));
        }
        if self.root().join(path).is_dir() {
            return Err(format!("'{}' must resolve to a file", absolute.display()));
        }
        self.loader.read_bytes(path).map(|(_, bytes)| bytes).map_err(|e| e.to_string())
    }

    /// The cleaned path of the local file `path`, relative to this root (symlinks resolved).
    pub fn cleaned_relative(&self, path: &str) -> Result<PathBuf, String> {
        let real = self.loader.resolve(path).map_err(|e| e.to_string())?;
        Ok(relative_to(&real, self.root()))
    }

    /// The loader at the root `path` (a folder in this root's reach, or a git URL).
    pub fn child(&self, args: &Args, path: &str) -> Result<LocLoader, String> {
        let child = self.child_unchecked(args, path).map_err(|e| format!("invalid root reference: {e}"))?;
        if child.repository.is_none() && self.local {
            let root = child.root();
            if !root.starts_with(&args.scope) {
                return Err(format!("root {:?} outside localize scope {:?}", root.display().to_string(), args.scope.display().to_string()));
            }
            if root.starts_with(&args.new_dir) {
                return Err(format!(
                    "root {:?} references into localize destination {:?}",
                    root.display().to_string(),
                    args.new_dir.display().to_string()
                ));
            }
        }
        Ok(child)
    }

    fn child_unchecked(&self, args: &Args, path: &str) -> Result<LocLoader, String> {
        let remote = RepoSpec::parse(path).ok();
        let (loader, repository) = match &remote {
            Some(spec) => {
                if spec.git_ref.is_empty() {
                    return Err(format!("localize remote root {path:?} missing ref query string parameter"));
                }
                let (loader, checkout) = open_remote(spec, &args.remote)?;
                (loader, Some((spec.clone(), checkout)))
            }
            None => (self.loader.child(path).map_err(|e| e.to_string())?, self.repository.clone()),
        };
        if let Some(visited) = self.visited.iter().find(|v| v.starts_with(loader.root())) {
            return Err(format!(
                "cycle detected: candidate root '{}' contains visited root '{}'",
                loader.root().display(),
                visited.display()
            ));
        }
        let mut visited = self.visited.clone();
        visited.push(loader.root().to_path_buf());
        Ok(LocLoader { loader, repository, local: self.local && remote.is_none(), visited })
    }
}

/// The loader at a remote root, and the checkout it lies in (symlinks resolved).
pub fn open_remote(spec: &RepoSpec, remote: &RemoteOptions) -> Result<(Loader, PathBuf), String> {
    let checkout = crate::remote::checkout(spec, remote).map_err(|e| e.to_string())?;
    let checkout = checkout.canonicalize().map_err(|e| format!("{}: {e}", checkout.display()))?;
    let loader = Loader::in_repository(&checkout, &spec.kust_root()).map_err(|e| e.to_string())?;
    Ok((loader, checkout))
}

/// A local loader at `target`, as kustomize's localize opens its target.
pub fn open_local(target: &Path) -> Result<Loader, String> {
    Loader::new(target, LoadRestrictor::RootOnly).map_err(|e| e.to_string())
}

/// `path` relative to `base` (both absolute and clean), with `..` where `path` is not below `base`.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let out = crate::build_metadata::relative_path_buf(path, base);
    if out.as_os_str().is_empty() {
        return PathBuf::from(".");
    }
    out
}
