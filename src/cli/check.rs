//! `build --check`: is a committed render up to date? The same build and the same writer run
//! into a scratch folder; the scratch output is then compared with the real one, and nothing the
//! user owns is written. Meant as the CI gate of the rendered-manifests route.
use std::fs;
use std::path::{Path, PathBuf};

use super::build_args::{writes_folder, BuildArgs};
use super::output_record::{self, yaml_files};

/// Why an output file is stale.
#[derive(Debug, PartialEq, Eq)]
enum Staleness {
    /// The file exists, with other bytes than a fresh render.
    Changed,
    /// A fresh render writes this file; it does not exist.
    Added,
    /// The file exists, but a fresh render no longer writes it.
    Removed,
}

impl Staleness {
    fn describe(&self) -> &'static str {
        match self {
            Staleness::Changed => "changed",
            Staleness::Added => "added (missing from the output)",
            Staleness::Removed => "removed (no longer rendered)",
        }
    }
}

/// Renders what `peerpods-build build ... -o OUTPUT` would write, with `render` (the build
/// command itself), into a scratch folder, and compares it with `OUTPUT`. Lists the stale files
/// on stderr (stdout stays empty on failure, as for every command) and fails when any differ.
pub fn run(args: &BuildArgs, render: fn(&BuildArgs) -> Result<(), String>) -> Result<(), String> {
    let output = args.output.as_ref().ok_or("--check compares with an existing output: give it --output")?;
    let scratch = ScratchDir::create()?;
    // The output's kind decides how `build` writes it: a folder of files (several builds, or one
    // build into an existing folder) or one file.
    let writes_folder = writes_folder(args);
    let scratch_output = scratch.path.join("out");
    if writes_folder && args.dirs.len() == 1 {
        fs::create_dir(&scratch_output).map_err(|e| format!("creating {}: {e}", scratch_output.display()))?;
    }
    render(&args.rendering_into(&scratch_output))?;

    let stale = if writes_folder {
        compare_folders(&scratch_output, output)?
    } else {
        compare_files(&scratch_output, output)?.map(|s| (output.clone(), s)).into_iter().collect()
    };
    if stale.is_empty() {
        return Ok(());
    }
    for (path, staleness) in &stale {
        eprintln!("{}: {}", path.display(), staleness.describe());
    }
    Err(format!(
        "{} stale file(s) in {}: run the same command without --check to update them",
        stale.len(),
        output.display()
    ))
}

/// One output file against its fresh render; `None` when they are equal.
fn compare_files(fresh: &Path, existing: &Path) -> Result<Option<Staleness>, String> {
    let fresh = fs::read(fresh).map_err(|e| format!("reading {}: {e}", fresh.display()))?;
    match fs::read(existing) {
        Ok(bytes) if bytes == fresh => Ok(None),
        Ok(_) => Ok(Some(Staleness::Changed)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(Staleness::Added)),
        Err(e) => Err(format!("reading {}: {e}", existing.display())),
    }
}

/// A folder of rendered files against a fresh render of it. The folder's own files are its
/// `.yaml` files (what `build` writes there); other files and subfolders are not the render's.
/// A file no longer rendered is stale when an earlier build wrote it (the build removes it);
/// one nobody recorded is left alone by the build, so the check warns about it and passes.
fn compare_folders(fresh: &Path, existing: &Path) -> Result<Vec<(PathBuf, Staleness)>, String> {
    let fresh_files = yaml_files(fresh)?;
    let mut stale = Vec::new();
    for (name, fresh_path) in &fresh_files {
        let target = existing.join(name);
        if let Some(staleness) = compare_files(fresh_path, &target)? {
            stale.push((target, staleness));
        }
    }
    let leftovers = output_record::leftovers(existing, &fresh_files.keys().cloned().collect())?;
    for path in &leftovers.foreign {
        eprintln!("{}", output_record::foreign_warning(path));
    }
    stale.extend(leftovers.ours.into_iter().map(|path| (path, Staleness::Removed)));
    stale.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(stale)
}

/// A fresh folder under the system temp folder, removed when dropped. `create_dir` (not
/// `create_dir_all`) fails on a name that already exists, so nobody else's folder or link is used.
struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    fn create() -> Result<ScratchDir, String> {
        static CREATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = CREATED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = std::env::temp_dir().join(format!("peerpods-build-check-{}-{nanos}-{n}", std::process::id()));
        fs::create_dir(&path).map_err(|e| format!("creating scratch folder {}: {e}", path.display()))?;
        Ok(ScratchDir { path })
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Folder(ScratchDir);

    impl Folder {
        fn new(files: &[(&str, &str)]) -> Folder {
            let dir = ScratchDir::create().unwrap();
            for (name, content) in files {
                fs::write(dir.path.join(name), content).unwrap();
            }
            Folder(dir)
        }
        fn path(&self) -> &Path {
            &self.0.path
        }
    }

    #[test]
    fn equal_folders_have_no_stale_files() {
        let fresh = Folder::new(&[("a.yaml", "a: 1\n"), ("b.yaml", "b: 1\n")]);
        let existing = Folder::new(&[("a.yaml", "a: 1\n"), ("b.yaml", "b: 1\n"), ("README.md", "not rendered\n")]);
        assert_eq!(compare_folders(fresh.path(), existing.path()).unwrap(), vec![]);
    }

    #[test]
    fn changed_added_and_removed_files_are_each_named() {
        let fresh = Folder::new(&[("changed.yaml", "new\n"), ("added.yaml", "x\n"), ("same.yaml", "s\n")]);
        let existing = Folder::new(&[
            ("changed.yaml", "old\n"),
            ("removed.yaml", "y\n"),
            ("same.yaml", "s\n"),
            ("hand-made.yaml", "not written by a build, so not stale\n"),
            (output_record::RECORD, "changed.yaml\nremoved.yaml\nsame.yaml\n"),
        ]);
        let stale: Vec<(String, Staleness)> = compare_folders(fresh.path(), existing.path())
            .unwrap()
            .into_iter()
            .map(|(p, s)| (p.file_name().unwrap().to_string_lossy().into_owned(), s))
            .collect();
        assert_eq!(
            stale,
            vec![
                ("added.yaml".into(), Staleness::Added),
                ("changed.yaml".into(), Staleness::Changed),
                ("removed.yaml".into(), Staleness::Removed),
            ]
        );
    }

    #[test]
    fn a_missing_output_folder_means_every_file_is_added() {
        let fresh = Folder::new(&[("a.yaml", "a\n")]);
        let missing = fresh.path().join("nowhere");
        let stale = compare_folders(fresh.path(), &missing).unwrap();
        assert_eq!(stale, vec![(missing.join("a.yaml"), Staleness::Added)]);
    }

    #[test]
    fn scratch_folders_are_distinct_and_removed() {
        let one = ScratchDir::create().unwrap();
        let two = ScratchDir::create().unwrap();
        assert_ne!(one.path, two.path);
        let path = one.path.clone();
        drop(one);
        assert!(!path.exists());
    }
}
