//! What `build -o FOLDER/` wrote into a folder, recorded in the folder itself, so that a later
//! build removes the files it wrote before and no longer renders, and never a file someone else
//! put there. `build --check` reads the same record, so a check after a build passes.
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use peerpods_build::safe_write::{write_atomically, NewFolder};

/// The record's file name: hidden, and not `.yaml`, so neither Flux nor Argo CD applies it.
pub const RECORD: &str = ".peerpods-build-files";

/// The first line of the record, saying what it is to whoever opens the folder.
const HEADER: &str = "# The files peerpods-build wrote into this folder; a build removes those it no longer renders.";

/// A record longer than this is not one we wrote.
const MAX_RECORD_BYTES: u64 = 16 << 20;

/// The `.yaml` files of an output folder that a fresh render no longer writes, split by who
/// wrote them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Recorded as written by an earlier build: the next build removes them.
    pub ours: Vec<PathBuf>,
    /// Not in the record: left alone, with a warning.
    pub foreign: Vec<PathBuf>,
}

/// The files of `dir` that a render writing `rendered` (file names) would leave behind.
pub fn leftovers(dir: &Path, rendered: &BTreeSet<String>) -> Result<Leftovers, String> {
    if !dir.is_dir() {
        return Ok(Leftovers::default());
    }
    let recorded = read(dir)?;
    let mut left = Leftovers::default();
    for (name, path) in yaml_files(dir)? {
        if rendered.contains(&name) {
            continue;
        }
        match recorded.contains(&name) {
            true => left.ours.push(path),
            false => left.foreign.push(path),
        }
    }
    Ok(left)
}

/// The warning for a file left in an output folder that peerpods-build did not write.
pub fn foreign_warning(path: &Path) -> String {
    let dir = path.parent().unwrap_or(Path::new("."));
    format!(
        "Warning: {}: not rendered by this build and not written by peerpods-build (not listed in {}), so left alone: remove it yourself if it is no longer wanted (rm {})",
        path.display(),
        dir.join(RECORD).display(),
        path.display()
    )
}

/// After a render wrote `rendered` into `dir`: removes the files an earlier build wrote and this
/// one did not, warns about the files nobody recorded, and records what this build wrote.
pub fn sweep(dir: &Path, rendered: &BTreeSet<String>) -> Result<(), String> {
    let left = leftovers(dir, rendered)?;
    for path in &left.ours {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("removing {} (no longer rendered): {e}", path.display())),
        }
    }
    for path in &left.foreign {
        eprintln!("{}", foreign_warning(path));
    }
    write_atomically(&dir.join(RECORD), &record_text(rendered))
}

/// A new output folder's files written (`rendered`): its record is written into it too, and
/// the folder takes its destination's place.
pub fn record_and_commit(folder: NewFolder, rendered: &BTreeSet<String>) -> Result<(), String> {
    folder.write(RECORD, &record_text(rendered))?;
    folder.commit()
}

/// The record of a build that wrote `rendered` (file names).
fn record_text(rendered: &BTreeSet<String>) -> String {
    let mut text = format!("{HEADER}\n");
    for name in rendered {
        text.push_str(name);
        text.push('\n');
    }
    text
}

/// The file names the record of `dir` lists (none when there is no record).
fn read(dir: &Path) -> Result<BTreeSet<String>, String> {
    let path = dir.join(RECORD);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let mut text = String::new();
    file.take(MAX_RECORD_BYTES + 1).read_to_string(&mut text).map_err(|e| format!("reading {}: {e}", path.display()))?;
    if text.len() as u64 > MAX_RECORD_BYTES {
        return Err(format!("{}: longer than {MAX_RECORD_BYTES} bytes, not a record peerpods-build wrote", path.display()));
    }
    // Only plain names count: a line naming another folder's file is not ours to remove.
    Ok(text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter(|line| !line.contains('/') && !line.contains(std::path::MAIN_SEPARATOR) && *line != "." && *line != "..")
        .map(str::to_string)
        .collect())
}

/// The regular `.yaml` files directly in `dir`, by name: what `build` writes into a folder.
pub fn yaml_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut files = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".yaml") && entry.file_type().is_ok_and(|t| t.is_file()) {
            files.insert(name, entry.path());
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_file_written_before_and_no_longer_rendered_is_removed_and_others_are_left() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        for name in ["kept.yaml", "retired.yaml", "mine.yaml", "notes.md"] {
            std::fs::write(at(name), "x\n").unwrap();
        }
        sweep(dir.path(), &names(&["kept.yaml", "retired.yaml"])).unwrap();
        // mine.yaml was there before any record: never ours to remove.
        assert_eq!(
            leftovers(dir.path(), &names(&["kept.yaml"])).unwrap(),
            Leftovers { ours: vec![at("retired.yaml")], foreign: vec![at("mine.yaml")] }
        );
        sweep(dir.path(), &names(&["kept.yaml"])).unwrap();
        assert!(!at("retired.yaml").exists());
        assert!(at("kept.yaml").is_file() && at("mine.yaml").is_file() && at("notes.md").is_file());
        assert_eq!(std::fs::read_to_string(at(RECORD)).unwrap(), format!("{HEADER}\nkept.yaml\n"));
    }

    #[test]
    fn a_record_naming_files_elsewhere_removes_nothing_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.yaml"), "x\n").unwrap();
        std::fs::write(dir.path().join(RECORD), "sub/a.yaml\n../a.yaml\n").unwrap();
        assert_eq!(read(dir.path()).unwrap(), BTreeSet::new());
    }
}
