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
    let existing = look(path);
    if is_written_in_place(path, existing.as_ref()) {
        return write_in_place(path, content);
    }
    let staged = stage_synced(path, content, true, existing.as_ref())?;
    commit(staged, path)
}

/// [`write_atomically`], unless `path` is a regular file holding exactly `content` already: that
/// file is left as it is (no new file, no rename, its modification time kept), as a render of
/// many folders into one finds most of them unchanged. Says whether it wrote. A file we may not
/// write is refused all the same.
pub fn write_atomically_if_changed(path: &Path, content: &str) -> Result<bool, String> {
    match write_unless_unchanged(path, content)? {
        Unless::Done(wrote) => Ok(wrote),
        Unless::Stage(existing) => {
            let staged = stage_synced(path, content.as_bytes(), true, existing.as_ref())?;
            commit(staged, path).map(|()| true)
        }
    }
}

/// What is left of writing `content` to `path` when it must not be replaced needlessly.
enum Unless {
    /// Written in place (a device or FIFO: `true`), or left as it is, holding `content` (`false`).
    Done(bool),
    /// To be staged and renamed over what is there now.
    Stage(Option<std::fs::Metadata>),
}

/// The start of [`write_atomically_if_changed`] and [`Batch::stage_if_changed`]: a device or
/// FIFO is written in place; a regular file holding `content` already is left as it is, unless
/// we may not write it.
fn write_unless_unchanged(path: &Path, content: &str) -> Result<Unless, String> {
    let existing = look(path);
    if is_written_in_place(path, existing.as_ref()) {
        return write_in_place(path, content.as_bytes()).map(|()| Unless::Done(true));
    }
    if holds_exactly(path, content.as_bytes(), existing.as_ref()) {
        check_writable(path, existing.as_ref())?;
        return Ok(Unless::Done(false));
    }
    Ok(Unless::Stage(existing))
}

/// What is at a destination before it is written (`lstat`, so a link is seen as a link), or
/// nothing: looked at once, and every check below reads it instead of asking the disk again
/// (a render of 2,000 folders into one made six such calls per file).
fn look(path: &Path) -> Option<std::fs::Metadata> {
    std::fs::symlink_metadata(path).ok()
}

/// Whether `path`, found `existing`, is a regular file (not a link) whose bytes are `content`.
fn holds_exactly(path: &Path, content: &[u8], existing: Option<&std::fs::Metadata>) -> bool {
    use std::io::Read;
    let same_size = existing.is_some_and(|m| m.is_file() && m.len() == content.len() as u64);
    if !same_size {
        return false;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let Ok(file) = options.open(path) else { return false };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut bytes = Vec::with_capacity(content.len());
    file.take(content.len() as u64 + 1).read_to_end(&mut bytes).is_ok() && bytes == content
}

/// The most links followed when looking where a destination leads (Linux's own bound).
const MAX_LINKS: usize = 40;

/// Whether `path` (found `existing`) is a destination kustomize writes in place and we must
/// never replace: one that exists and is not a regular file or folder (a device, a FIFO), or
/// one in, or linked through, `/dev` or `/proc` (`/dev/stdout` leads to `/proc/self/fd/1`,
/// which may be a regular file when stdout is redirected to one: renaming over it would
/// replace the link, and, as root, make the host's `/dev/stdout` a file).
fn is_written_in_place(path: &Path, existing: Option<&std::fs::Metadata>) -> bool {
    let mut hop = match std::path::absolute(path) {
        Ok(absolute) => absolute,
        Err(_) => return false,
    };
    match existing {
        // A link: where it leads decides, followed below.
        Some(found) if found.file_type().is_symlink() => {
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                return true;
            }
        }
        Some(found) if !found.is_file() && !found.is_dir() => return true,
        // A regular file, a folder or nothing: no link at its last part to follow.
        _ => return in_system_folders(&hop),
    }
    for _ in 0..MAX_LINKS {
        if in_system_folders(&hop) {
            return true;
        }
        match std::fs::read_link(&hop) {
            Ok(target) => hop = hop.parent().unwrap_or(Path::new("/")).join(target),
            Err(_) => return false,
        }
    }
    false
}

/// Whether an absolute path is in `/dev` or `/proc`, read lexically, as the kernel walks a path
/// without links: `..` takes off one name.
fn in_system_folders(path: &Path) -> bool {
    let mut names: Vec<&std::ffi::OsStr> = Vec::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => drop(names.pop()),
            std::path::Component::Normal(name) => names.push(name),
            _ => {}
        }
    }
    names.first().is_some_and(|first| *first == "dev" || *first == "proc")
}

/// Writes into an existing device or FIFO (through a link to one, as `/dev/stdout` is).
fn write_in_place(path: &Path, content: &[u8]) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| format!("writing {}: {e}", path.display()))?;
    file.write_all(content).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Refuses an existing file (found `existing`) we may not write (kustomize's `open(2)` fails
/// on it; a rename would replace it anyway).
fn check_writable(path: &Path, existing: Option<&std::fs::Metadata>) -> Result<(), String> {
    #[cfg(unix)]
    {
        if existing.is_some_and(|m| m.is_file()) && rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_err() {
            return Err(format!("writing {}: permission denied (the file is read-only)", path.display()));
        }
    }
    let _ = (path, existing);
    Ok(())
}

/// `content` in a new temporary file beside `path`, with the mode `path` should end up with.
/// Dropping the result (any error on the way) removes the file.
pub fn stage(path: &Path, content: &str) -> Result<NamedTempFile, String> {
    stage_synced(path, content.as_bytes(), true, look(path).as_ref())
}

/// [`stage`] of `content` for `path`, found `existing`; `sync` says whether the data is flushed
/// to the disk now (else the caller syncs it before the rename, [`Batch::commit`]).
fn stage_synced(path: &Path, content: &[u8], sync: bool, existing: Option<&std::fs::Metadata>) -> Result<NamedTempFile, String> {
    let folder = folder_of(path);
    let file_name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
    check_writable(path, existing)?;
    let prefix = temp_prefix(&file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode given to open(2), which the umask then narrows: what a new file gets.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // A missing folder is told apart only when the temporary file cannot be made.
    let mut temp = builder.tempfile_in(folder).map_err(|e| match folder.is_dir() {
        false => format!("cannot write {}: the folder {} does not exist", path.display(), folder.display()),
        true => format!("writing {}: creating a temporary file in {}: {e}", path.display(), folder.display()),
    })?;
    // The data reaches the disk before the rename makes it the destination: without it, a crash
    // soon after could leave the destination renamed but empty on filesystems that do not flush
    // on rename (ext4 without `auto_da_alloc`, XFS), a half-written output by another road.
    // When many builds write side by side (`build DIR DIR... -o OUT/`), each one's sync overlaps
    // the others' work.
    temp.write_all(content)
        .and_then(|()| if sync { temp.as_file().sync_data() } else { Ok(()) })
        .map_err(|e| format!("writing {}: {e}", temp.path().display()))?;
    // An existing regular file keeps its permission bits (a symlink is replaced, not followed).
    if let Some(existing) = existing.filter(|m| m.is_file()) {
        temp.as_file().set_permissions(existing.permissions()).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(temp)
}

/// Files written into one folder, each staged beside its destination as soon as it is ready and
/// all renamed into place at the end, after one sync of the folder's filesystem.
///
/// Why one sync and not one per file: a rename must never make a file its destination before
/// the file's data is on the disk, or a crash soon after can leave an empty or truncated file
/// under the final name (ext4 without `auto_da_alloc`, XFS). Syncing each file costs a journal
/// commit per file, most of the time of writing thousands of small files; `syncfs` flushes every
/// staged file in one go. So: stage every file (no sync), sync once, rename each, then sync the
/// folder so the renames last too. A crash before the renames leaves only temporary files under
/// random names (never a destination half-written); one during them leaves each destination
/// either as it was or whole. The cost: the files appear together at the end, not one by one.
#[derive(Default)]
pub struct Batch {
    staged: Vec<(tempfile::TempPath, std::path::PathBuf)>,
}

impl Batch {
    /// Stages `content` for `path`, unless `path` holds exactly `content` already (left as it
    /// is, as in [`write_atomically_if_changed`]); a device or FIFO is written in place now.
    /// Only the temporary file's name is kept, not its descriptor, however many are staged.
    pub fn stage_if_changed(&mut self, path: &Path, content: &str) -> Result<bool, String> {
        let existing = match write_unless_unchanged(path, content)? {
            Unless::Done(wrote) => return Ok(wrote),
            Unless::Stage(existing) => existing,
        };
        let staged = stage_synced(path, content.as_bytes(), false, existing.as_ref())?;
        self.staged.push((staged.into_temp_path(), path.to_path_buf()));
        Ok(true)
    }

    /// Adds the files another batch staged.
    pub fn append(&mut self, other: Batch) {
        self.staged.extend(other.staged);
    }

    /// Syncs the staged files, then renames each over its destination, then syncs the folders
    /// that hold them. A failed sync renames nothing (the temporary files are removed); a failed
    /// rename is reported and the others still happen. Returns the destinations that could not
    /// be written, with why.
    pub fn commit(self) -> Vec<(std::path::PathBuf, String)> {
        let mut failed = Vec::new();
        if self.staged.is_empty() {
            return failed;
        }
        if let Err(e) = sync_staged(&self.staged) {
            return self.staged.into_iter().map(|(_, path)| { let why = format!("writing {}: syncing to disk: {e}", path.display()); (path, why) }).collect();
        }
        let mut folders = std::collections::BTreeSet::new();
        for (staged, path) in self.staged {
            match staged.persist(&path) {
                Ok(()) => {
                    folders.insert(folder_of(&path).to_path_buf());
                }
                Err(e) => {
                    let why = format!("writing {}: {}", path.display(), e.error);
                    failed.push((path, why));
                }
            }
        }
        // The renames reach the disk too (a folder opened read-only may be fsynced on Linux).
        for folder in folders {
            let _ = std::fs::File::open(&folder).and_then(|f| f.sync_all());
        }
        failed
    }
}

/// Files written into a folder that does not exist yet: each is written under its own name into
/// a new hidden folder beside the destination (`.<name>.<random>.peerpods-build.tmp`), and that
/// folder, after one sync of its filesystem, is renamed to the destination, which appears
/// whole or not at all. Against a [`Batch`]: one rename instead of one per file, and no
/// temporary names, which is most of the kernel's part in rendering thousands of roots into a
/// new folder. Linux only (the rename that refuses to replace what is there); elsewhere, and
/// for a folder that exists, a [`Batch`] writes into it.
pub struct NewFolder {
    staging: tempfile::TempDir,
    destination: std::path::PathBuf,
}

impl NewFolder {
    /// Makes the hidden folder beside `destination` (and the folders above it, as a `mkdir -p`
    /// would), unless `destination` exists already, in any form: then `None`.
    pub fn stage(destination: &Path) -> Result<Option<NewFolder>, String> {
        if !cfg!(target_os = "linux") {
            return Ok(None);
        }
        match std::fs::symlink_metadata(destination) {
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("creating {}: {e}", destination.display())),
        }
        let name = destination.file_name().ok_or_else(|| format!("{}: not a folder name", destination.display()))?;
        let parent = folder_of(destination);
        std::fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
        // A folder's mode is what `mkdir` gives it: 0o777 narrowed by the umask.
        let staging = tempfile::Builder::new()
            .prefix(&temp_prefix(&name.to_string_lossy()))
            .suffix(TEMP_SUFFIX)
            .tempdir_in(parent)
            .map_err(|e| format!("creating {}: a temporary folder in {}: {e}", destination.display(), parent.display()))?;
        Ok(Some(NewFolder { staging, destination: destination.to_path_buf() }))
    }

    /// Writes `content` as the file `file_name` of the new folder (a new file, never one that
    /// is there: the folder is ours alone). Errors name the file's destination.
    pub fn write(&self, file_name: &str, content: &str) -> Result<(), String> {
        let path = self.staging.path().join(file_name);
        let shown = self.destination.join(file_name);
        if path.parent() != Some(self.staging.path()) {
            return Err(format!("{}: not a plain file name", shown.display()));
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // What a new file gets: 0o666 narrowed by the umask, as for a staged file.
            options.mode(0o666).custom_flags(libc::O_CLOEXEC);
        }
        options.open(&path).and_then(|mut file| file.write_all(content.as_bytes())).map_err(|e| format!("writing {}: {e}", shown.display()))
    }

    /// Syncs the new folder's files, renames it to the destination, then syncs the folder
    /// above so the rename lasts. A destination that appeared meanwhile is left as it is, the
    /// files are removed, and the error says so.
    pub fn commit(self) -> Result<(), String> {
        let NewFolder { staging, destination } = self;
        let folder = std::fs::File::open(staging.path()).map_err(|e| format!("writing {}: {e}", destination.display()))?;
        #[cfg(target_os = "linux")]
        {
            rustix::fs::syncfs(&folder).map_err(|e| format!("writing {}: syncing to disk: {e}", destination.display()))?;
            let cwd = rustix::fs::CWD;
            match rustix::fs::renameat_with(cwd, staging.path(), cwd, &destination, rustix::fs::RenameFlags::NOREPLACE) {
                Ok(()) => {}
                // A filesystem without the flag: a plain rename can only replace an empty folder.
                Err(rustix::io::Errno::INVAL) => {
                    std::fs::rename(staging.path(), &destination).map_err(|e| appeared(&destination, &e.to_string()))?
                }
                Err(e) => return Err(appeared(&destination, &std::io::Error::from(e).to_string())),
            }
        }
        #[cfg(not(target_os = "linux"))]
        std::fs::rename(staging.path(), &destination).map_err(|e| appeared(&destination, &e.to_string()))?;
        drop(folder);
        // Renamed: nothing is left to remove.
        let _ = staging.keep();
        let _ = std::fs::File::open(folder_of(&destination)).and_then(|f| f.sync_all());
        Ok(())
    }
}

/// The folder `path` is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// The start of a temporary name beside `name`: `.`, as much of `name` as [`TEMP_NAME_KEPT`]
/// allows (cut on a character's boundary), `.`.
fn temp_prefix(name: &str) -> String {
    let mut kept = TEMP_NAME_KEPT.min(name.len());
    while !name.is_char_boundary(kept) {
        kept -= 1;
    }
    format!(".{}.", &name[..kept])
}

/// The error of a new folder that could not take its destination's name.
fn appeared(destination: &Path, why: &str) -> String {
    format!("writing {}: {why} (the folder did not exist when the build started; nothing was written into it)", destination.display())
}

/// Flushes the staged files' data: one `syncfs` of each filesystem their folders are on, on
/// Linux; each file's own sync elsewhere.
fn sync_staged(staged: &[(tempfile::TempPath, std::path::PathBuf)]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let folders: std::collections::BTreeSet<&Path> = staged.iter().map(|(temp, _)| folder_of(temp)).collect();
        let mut devices = std::collections::BTreeSet::new();
        for folder in folders {
            let folder = std::fs::File::open(folder)?;
            if devices.insert(std::os::unix::fs::MetadataExt::dev(&folder.metadata()?)) {
                rustix::fs::syncfs(&folder)?;
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        for (temp, _) in staged {
            std::fs::File::open(temp)?.sync_data()?;
        }
        Ok(())
    }
}

/// Renames a staged file over `path`.
pub fn commit(staged: NamedTempFile, path: &Path) -> Result<(), String> {
    staged.persist(path).map(drop).map_err(|e| format!("writing {}: {}", path.display(), e.error))
}


#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn an_unchanged_file_is_left_as_it_is_and_a_changed_one_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.yaml");
        assert_eq!(write_atomically_if_changed(&file, "a: 1\n"), Ok(true), "a new file is written");
        let inode = std::fs::metadata(&file).unwrap().ino();
        assert_eq!(write_atomically_if_changed(&file, "a: 1\n"), Ok(false));
        assert_eq!(std::fs::metadata(&file).unwrap().ino(), inode, "an unchanged file was replaced");
        assert_eq!(write_atomically_if_changed(&file, "a: 2\n"), Ok(true), "same size, other bytes");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a: 2\n");
        assert_eq!(write_atomically_if_changed(&file, "a: 22\n"), Ok(true));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a: 22\n");
        // A link holding the same bytes is replaced by a file, as a write replaces it.
        let target = dir.path().join("target.yaml");
        std::fs::write(&target, "b: 1\n").unwrap();
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(write_atomically_if_changed(&link, "b: 1\n"), Ok(true));
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    }

    #[test]
    fn a_batch_renames_its_files_into_place_only_at_commit_and_leaves_an_unchanged_one() {
        let dir = tempfile::tempdir().unwrap();
        let same = dir.path().join("same.yaml");
        std::fs::write(&same, "a: 1\n").unwrap();
        let inode = std::fs::metadata(&same).unwrap().ino();
        let mut batch = Batch::default();
        assert_eq!(batch.stage_if_changed(&same, "a: 1\n"), Ok(false));
        let names = ["one.yaml", "two.yaml"];
        for name in names {
            assert_eq!(batch.stage_if_changed(&dir.path().join(name), &format!("name: {name}\n")), Ok(true));
            assert!(!dir.path().join(name).exists(), "{name} in place before the commit");
        }
        assert_eq!(batch.commit(), Vec::new());
        for name in names {
            assert_eq!(std::fs::read_to_string(dir.path().join(name)).unwrap(), format!("name: {name}\n"));
        }
        assert_eq!(std::fs::metadata(&same).unwrap().ino(), inode, "an unchanged file was replaced");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(TEMP_SUFFIX)).collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }

    #[test]
    fn a_batch_dropped_without_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut batch = Batch::default();
        assert_eq!(batch.stage_if_changed(&dir.path().join("x.yaml"), "x: 1\n"), Ok(true));
        drop(batch);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a file or a temporary file was left");
    }

    /// The entries of `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_folder_appears_whole_at_commit_with_the_mode_mkdir_gives() {
        let dir = tempfile::tempdir().unwrap();
        let destination = dir.path().join("a/b/out");
        let folder = NewFolder::stage(&destination).unwrap().expect("a missing folder is made anew");
        folder.write("one.yaml", "a: 1\n").unwrap();
        folder.write("two.yaml", "b: 2\n").unwrap();
        assert!(!destination.exists(), "the folder appeared before the commit");
        let staged = names_in(&dir.path().join("a/b"));
        assert!(staged.len() == 1 && staged[0].starts_with(".out.") && staged[0].ends_with(TEMP_SUFFIX), "{staged:?}");
        assert!(folder.write("one.yaml", "again").unwrap_err().contains("out/one.yaml"), "a file is written once");
        assert!(folder.write("../escape.yaml", "x").is_err());
        folder.commit().unwrap();
        assert_eq!(names_in(&dir.path().join("a/b")), ["out"], "the staging folder was left");
        assert_eq!(names_in(&destination), ["one.yaml", "two.yaml"]);
        assert_eq!(std::fs::read_to_string(destination.join("two.yaml")).unwrap(), "b: 2\n");
        let made = dir.path().join("a/b/made");
        std::fs::create_dir(&made).unwrap();
        assert_eq!(std::fs::metadata(&destination).unwrap().mode(), std::fs::metadata(&made).unwrap().mode());
        let umask = 0o777 & !std::fs::metadata(&made).unwrap().mode();
        assert_eq!(std::fs::metadata(destination.join("one.yaml")).unwrap().mode() & 0o777, 0o666 & !umask);
    }

    #[test]
    fn a_folder_that_exists_in_any_form_is_not_made_anew() {
        let dir = tempfile::tempdir().unwrap();
        assert!(NewFolder::stage(dir.path()).unwrap().is_none());
        let dangling = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(NewFolder::stage(&dangling).unwrap().is_none());
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn a_new_folder_dropped_without_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let folder = NewFolder::stage(&dir.path().join("out")).unwrap().unwrap();
        folder.write("x.yaml", "x: 1\n").unwrap();
        drop(folder);
        assert_eq!(names_in(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn a_folder_made_by_someone_else_meanwhile_is_left_as_it_is() {
        for theirs in [Some("theirs.yaml"), None] {
            let dir = tempfile::tempdir().unwrap();
            let destination = dir.path().join("out");
            let folder = NewFolder::stage(&destination).unwrap().unwrap();
            folder.write("ours.yaml", "a: 1\n").unwrap();
            std::fs::create_dir(&destination).unwrap();
            if let Some(name) = theirs {
                std::fs::write(destination.join(name), "theirs\n").unwrap();
            }
            let refused = folder.commit().unwrap_err();
            assert!(refused.contains(&destination.display().to_string()) && refused.contains("nothing was written into it"), "{refused}");
            assert_eq!(names_in(&destination), theirs.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(names_in(dir.path()), ["out"], "the staging folder was left");
        }
    }

    #[test]
    fn an_unchanged_file_we_may_not_write_is_refused_as_a_changed_one() {
        if rustix::process::geteuid().is_root() {
            eprintln!("skipped: running as root, which may write any file");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
        let refused = write_atomically_if_changed(&file, "a: 1\n").unwrap_err();
        assert!(refused.contains("read-only"), "{refused}");
    }
}
