//! The render cache key's reader of a chart folder (`helm::cache::chart_digest`), on folders
//! made from the input: files, nested folders, and links (to a file inside, to `/dev/zero`,
//! to a folder above: a loop). Never a panic or a hang; a folder holding an irregular file or a
//! loop is refused; the same folder always gives the same digest, and changing one byte of a
//! file changes it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::helm::cache::chart_digest;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("chart");
    std::fs::create_dir(&root).unwrap();
    let mut irregular = false;
    let mut first_file = None;
    // Each line: `<kind><path>` then the rest of the line as content (kind f, d, l, z, p).
    for line in data.split(|b| *b == b'\n').take(32) {
        let Some((&kind, rest)) = line.split_first() else { continue };
        let (name, content) = match rest.iter().position(|b| *b == b' ') {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &b""[..]),
        };
        let Ok(name) = std::str::from_utf8(name) else { continue };
        let Ok(names) = peerpods_build::beneath::plain_names(name) else { continue };
        if names.len() > 4 || names.iter().any(|n| n.len() > 32) {
            continue;
        }
        let path = root.join(name);
        let _ = std::fs::create_dir_all(path.parent().unwrap());
        let made = match kind {
            b'f' => std::fs::write(&path, content).is_ok(),
            b'd' => std::fs::create_dir_all(&path).is_ok(),
            b'l' => std::os::unix::fs::symlink("..", &path).is_ok(),
            b'z' => std::os::unix::fs::symlink("/dev/zero", &path).is_ok(),
            _ => false,
        };
        if made && kind == b'z' {
            irregular = true;
        }
        if made && kind == b'f' && first_file.is_none() {
            first_file = Some(path);
        }
    }
    let first = chart_digest(&root);
    if irregular {
        assert!(first.is_err(), "a chart holding a link to /dev/zero was read");
    }
    let second = chart_digest(&root);
    assert_eq!(first.as_ref().ok(), second.as_ref().ok(), "the digest of one folder changed");
    if let (Ok(digest), Some(file)) = (first, first_file) {
        let mut bytes = std::fs::read(&file).unwrap_or_default();
        bytes.push(b'!');
        if std::fs::write(&file, bytes).is_ok() {
            if let Ok(changed) = chart_digest(&root) {
                assert_ne!(digest, changed, "a changed file left the digest as it was");
            }
        }
    }
});
