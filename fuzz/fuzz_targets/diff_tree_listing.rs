//! `diff --base REV`'s reader of `git ls-tree -r -z` output, which anyone can make hold any
//! name (`git hash-object --literally`): never a panic, and every entry it accepts is a path of
//! plain names (no `..`, `.`, empty name, absolute path or NUL), listed once.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::diff::git::read_listing;

fuzz_target!(|data: &[u8]| {
    let Ok(entries) = read_listing(data) else { return };
    let mut seen = std::collections::HashSet::new();
    for entry in &entries {
        assert!(!entry.path.is_empty() && !entry.path.starts_with('/') && !entry.path.contains('\0'));
        assert!(entry.path.split('/').all(|name| !name.is_empty() && name != "." && name != ".."), "{}", entry.path);
        assert!(seen.insert(entry.path.as_str()), "{} twice", entry.path);
    }
});
