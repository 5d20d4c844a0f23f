//! Files written beneath a folder we opened, by name, one folder at a time, never through a link.
//!
//! Used wherever the names come from someone else (the entries of a git revision, a cache being
//! filled): each name is checked to be a plain name (not empty, `.`, `..`, no NUL), each folder
//! is opened with `O_NOFOLLOW | O_DIRECTORY` from the one above it, and each file is created
//! with `O_CREAT | O_EXCL | O_NOFOLLOW`, so neither a link planted in advance nor one written
//! earlier from the same untrusted list can carry a write outside the folder, and no existing
//! file is ever overwritten.
use std::collections::HashMap;
use std::io::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// The plain names of a relative path written with `/` (`a/b/c`): an error for an empty name,
/// `.`, `..`, a NUL, or an absolute path.
pub fn plain_names(relative: &str) -> Result<Vec<&str>> {
    let invalid = |why: &str| Error::new(ErrorKind::InvalidInput, format!("'{}' {why}", relative.escape_debug()));
    if relative.is_empty() {
        return Err(invalid("is empty"));
    }
    if relative.contains('\0') {
        return Err(invalid("holds a NUL byte"));
    }
    let names: Vec<&str> = relative.split('/').collect();
    for name in &names {
        match *name {
            "" => return Err(invalid("holds an empty name (a leading, doubled or trailing '/')")),
            "." | ".." => return Err(invalid("holds a '.' or '..' name")),
            _ if cfg!(windows) && name.contains(['\\', ':']) => return Err(invalid("holds a '\\' or ':'")),
            _ => {}
        }
    }
    Ok(names)
}

/// A folder, opened once; everything written through it stays beneath it.
pub struct Beneath {
    root: PathBuf,
    #[cfg(unix)]
    folders: HashMap<String, std::os::fd::OwnedFd>,
    #[cfg(not(unix))]
    folders: HashMap<String, ()>,
}

impl Beneath {
    /// Opens `root` (a folder that must exist; a link there is refused).
    pub fn open(root: &Path) -> Result<Beneath> {
        let mut folders = HashMap::new();
        #[cfg(unix)]
        folders.insert(String::new(), open_folder(rustix::fs::CWD, root)?);
        #[cfg(not(unix))]
        {
            if !std::fs::symlink_metadata(root)?.is_dir() {
                return Err(Error::new(ErrorKind::NotADirectory, format!("{} is not a folder", root.display())));
            }
            folders.insert(String::new(), ());
        }
        Ok(Beneath { root: root.to_path_buf(), folders })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes the folders of `relative` (`a/b` for `a/b/c`, with `parents_only`) that are missing,
    /// with mode 0700, and returns the names: the folder's and the last one.
    fn folder_of<'a>(&mut self, relative: &'a str, parents_only: bool) -> Result<(String, &'a str)> {
        let names = plain_names(relative)?;
        let (last, parents) = if parents_only { names.split_last().map(|(l, p)| (*l, p)).unwrap_or(("", &[])) } else { ("", &names[..]) };
        let mut path = String::new();
        for name in parents {
            let child = if path.is_empty() { (*name).to_string() } else { format!("{path}/{name}") };
            if !self.folders.contains_key(&child) {
                #[cfg(unix)]
                {
                    let parent = &self.folders[&path];
                    match rustix::fs::mkdirat(parent, *name, rustix::fs::Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(self.error(&child, e.into())),
                    }
                    let opened = open_folder(parent, Path::new(name)).map_err(|e| self.error(&child, e))?;
                    self.folders.insert(child.clone(), opened);
                }
                #[cfg(not(unix))]
                {
                    let full = self.root.join(&child);
                    if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
                        return Err(self.error(&child, Error::new(ErrorKind::Other, "is a link")));
                    }
                    std::fs::create_dir_all(&full).map_err(|e| self.error(&child, e))?;
                    self.folders.insert(child.clone(), ());
                }
            }
            path = child;
        }
        Ok((path, last))
    }

    /// Makes the folder `relative` and those above it.
    pub fn create_dir_all(&mut self, relative: &str) -> Result<()> {
        self.folder_of(relative, false).map(drop)
    }

    /// Creates the new file `relative` (never an existing one, never through a link) holding
    /// `content`, with `mode` (narrowed by the umask).
    pub fn write_new(&mut self, relative: &str, content: &[u8], mode: u32) -> Result<()> {
        use std::io::Write;
        let (folder, name) = self.folder_of(relative, true)?;
        #[cfg(unix)]
        let mut file = {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.folders[&folder], name, flags, Mode::from_raw_mode(mode)).map_err(|e| self.error(relative, e.into()))?;
            std::fs::File::from(fd)
        };
        #[cfg(not(unix))]
        let mut file = {
            let _ = (folder, mode);
            std::fs::OpenOptions::new().write(true).create_new(true).open(self.root.join(relative)).map_err(|e| self.error(relative, e))?
        };
        file.write_all(content).map_err(|e| self.error(relative, e))
    }

    /// Creates the link `relative` pointing at `target` (its target is not checked: whoever
    /// reads through it checks where it leads, as the load restrictor does).
    pub fn symlink(&mut self, relative: &str, target: &str) -> Result<()> {
        let (folder, name) = self.folder_of(relative, true)?;
        #[cfg(unix)]
        return rustix::fs::symlinkat(target, &self.folders[&folder], name).map_err(|e| self.error(relative, e.into()));
        #[cfg(not(unix))]
        {
            let _ = (folder, name);
            self.write_new(relative, target.as_bytes(), 0o644)
        }
    }

    fn error(&self, relative: &str, e: Error) -> Error {
        Error::new(e.kind(), format!("{}: {e}", self.root.join(relative).display()))
    }
}

/// Makes `dir` (and its missing parents) with mode 0700 when missing, then checks that only we
/// can write it, as ssh checks its files: it (and the link at its place, if any) belongs to us,
/// and neither its group nor others may write it. A cache or render folder another local user
/// made first (`/tmp/...`, when `HOME` is unset) is refused, not trusted.
pub fn private_folder(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        if !dir.exists() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let me = rustix::process::geteuid().as_raw();
        let refuse = |why: String| Error::new(ErrorKind::PermissionDenied, format!("{} {why}; refusing to use it", dir.display()));
        let link = std::fs::symlink_metadata(dir)?;
        if link.file_type().is_symlink() && link.uid() != me {
            return Err(refuse(format!("is a link owned by uid {}", link.uid())));
        }
        let meta = std::fs::metadata(dir)?;
        if !meta.is_dir() {
            return Err(refuse("is not a folder".into()));
        }
        if meta.uid() != me {
            return Err(refuse(format!("belongs to uid {}, not to us (uid {me})", meta.uid())));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(refuse(format!("is writable by its group or others (mode {:o})", meta.mode() & 0o7777)));
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// Creates the new file `path` (never an existing one, never through a link) holding `content`.
pub fn create_new(path: &Path, content: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o644);
    }
    let mut file = options.open(path)?;
    file.write_all(content)?;
    file.sync_all()
}

#[cfg(unix)]
fn open_folder(at: impl std::os::fd::AsFd, path: &Path) -> Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(at, path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => Error::new(ErrorKind::Other, "is a link or not a folder"),
        other => other.into(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_pass() {
        assert_eq!(plain_names("a/b.yaml").unwrap(), ["a", "b.yaml"]);
        for bad in ["", "..", "a/../b", "./a", "/etc/x", "a//b", "a/", "a\0b"] {
            assert!(plain_names(bad).is_err(), "{bad:?} passed");
        }
    }

    #[test]
    fn nothing_is_written_through_a_link_or_over_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let mut beneath = Beneath::open(&root).unwrap();
        beneath.write_new("a/b/c.yaml", b"x", 0o644).unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.yaml")).unwrap(), b"x");
        assert!(beneath.write_new("a/b/c.yaml", b"y", 0o644).is_err(), "an existing file is not overwritten");
        beneath.symlink("link", outside.path().to_str().unwrap()).unwrap();
        assert!(beneath.write_new("link/escaped", b"y", 0o644).is_err(), "written through a link");
        std::os::unix::fs::symlink(outside.path().join("target"), root.join("planted")).unwrap();
        assert!(beneath.write_new("planted", b"y", 0o644).is_err(), "written through a planted link");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        assert!(Beneath::open(&root.join("link")).is_err(), "a link is opened as a folder");
    }
}
