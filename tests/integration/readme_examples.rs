//! The documentation's console examples are the program's real output: every `console` block of
//! README.md and `docs/*.md` runs, each `$ peerpods-build ...` line in the repository's top
//! folder, and what it prints (stdout and stderr together) must be the lines below it (`? N`: the
//! exit status; a `...` line: any lines). `TRYCMD=overwrite` rewrites the outputs after a change.
use crate::common::{bin, manifest_dir};

#[test]
fn readme_examples() {
    // trycmd runs the commands in the current folder: the repository's top, as the README says.
    assert_eq!(std::env::current_dir().ok().and_then(|d| d.canonicalize().ok()), manifest_dir().canonicalize().ok());
    trycmd::TestCases::new()
        .register_bin("peerpods-build", std::path::Path::new(bin()))
        .case("README.md")
        .case("docs/*.md");
}

/// A newcomer reads the README top to bottom: it installs the program before any command uses it.
#[test]
fn the_readme_installs_the_program_before_using_it() {
    let readme = std::fs::read_to_string(manifest_dir().join("README.md")).unwrap();
    let mut in_code = false;
    let mut installed = false;
    for (n, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        installed |= line.starts_with("cargo install");
        let command = line.trim_start_matches("$ ");
        if command.starts_with("peerpods-build ") || command.contains("| peerpods-build ") {
            assert!(installed, "README.md:{}: `{line}` comes before the install", n + 1);
        }
    }
    assert!(installed, "the README installs the program");
}

/// The README is the short tour, under 350 lines; every page of `docs/` is reachable from it.
#[test]
fn the_readme_is_short_and_links_every_page_of_the_docs() {
    let readme = std::fs::read_to_string(manifest_dir().join("README.md")).unwrap();
    assert!(readme.lines().count() < 350, "README.md has {} lines", readme.lines().count());
    let mut unlinked = Vec::new();
    for entry in std::fs::read_dir(manifest_dir().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && !readme.contains(&format!("](docs/{name}")) {
            unlinked.push(name);
        }
    }
    assert!(unlinked.is_empty(), "pages of docs/ the README does not link: {unlinked:?}");
}
