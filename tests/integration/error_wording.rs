//! kustomize's own error message, whole: for every error case of the shared suites (conformance:
//! krusty, krusty-v5.8.1, regressions; realworld cases and public trees) and of
//! `tests/kustomize_v5_8/`, the reference's message (from `error: ` to the end of its stderr) must
//! stand unbroken in our stderr. What we add (file:line:column, a hint) goes around it.
//!
//! The reference is run on each case every time (nothing of its output is kept in the
//! repository). The cases where its message is not yet in ours are listed, each on a line, in
//! `tests/error_wording_todo.txt`; the deliberate exceptions in `docs/fidelity.md` (section
//! "Error messages"). The test fails when a case outside both lists misses (a regression), and
//! when a case of the to-do list now matches (the list must shrink with the work), and prints
//! the share.
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{manifest_dir, ours, reference_run, say_past_capture, shared_dir, TempTree};

/// The shared suites that hold cases, relative to `../shared`.
const SUITES: [&str; 5] = ["conformance/krusty", "conformance/krusty-v5.8.1", "conformance/regressions", "realworld/cases", "realworld/public"];

/// One error case: a name (`suite/case`), the tree to copy and the folder to build in it.
struct Case {
    name: String,
    files: Option<PathBuf>,
    build: String,
    flags: Vec<String>,
}

fn shared_cases(shared: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for suite in SUITES {
        let Ok(entries) = fs::read_dir(shared.join(suite)) else { continue };
        let mut dirs: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        dirs.sort();
        for dir in dirs {
            let Ok(text) = fs::read_to_string(dir.join("case.json")) else { continue };
            let case: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            if case["expect"] != "error" {
                continue;
            }
            let flags = case["flags"].as_array().map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_owned)).collect()).unwrap_or_default();
            let files = dir.join("files");
            cases.push(Case {
                name: format!("{suite}/{}", dir.file_name().unwrap().to_string_lossy()),
                files: files.is_dir().then_some(files),
                build: case["build"].as_str().unwrap_or(".").to_owned(),
                flags,
            });
        }
    }
    cases
}

fn own_cases() -> Vec<Case> {
    let root = manifest_dir().join("tests/kustomize_v5_8");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    dirs.into_iter()
        .filter(|d| d.join("expected-error.txt").is_file())
        .map(|d| Case {
            name: format!("kustomize_v5_8/{}", d.file_name().unwrap().to_string_lossy()),
            files: Some(d),
            build: ".".into(),
            flags: Vec::new(),
        })
        .collect()
}

/// Copies the tree `from` into `to`, symbolic links as links.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// kustomize's message in the reference's stderr: from the `error: ` that starts a line (kubectl
/// writes kustomize's `Error: ` so) to the end.
fn kustomize_message(stderr: &str) -> Option<&str> {
    let at = if stderr.starts_with("error: ") { Some(0) } else { stderr.find("\nerror: ").map(|i| i + 1) }?;
    Some(stderr[at + "error: ".len()..].trim_end())
}

/// The case names listed in `text`, one a line (`#` starts a comment).
fn listed(text: &str) -> BTreeSet<String> {
    text.lines().map(|l| l.split('#').next().unwrap().trim()).filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

/// The deliberate exceptions: the `- \`suite/case\`` items of the "Error messages" section of
/// docs/fidelity.md.
fn deliberate() -> BTreeSet<String> {
    let doc = fs::read_to_string(manifest_dir().join("docs/fidelity.md")).expect("docs/fidelity.md");
    let section = doc.split("\n## ").find(|s| s.starts_with("Error messages")).expect("docs/fidelity.md: no section \"Error messages\"");
    section.lines().filter_map(|l| l.strip_prefix("- `")?.split('`').next().map(str::to_owned)).filter(|n| n.contains('/')).collect()
}

/// What one case gave: whether the reference fails, and whether its whole message is in ours.
enum Outcome {
    Contained,
    Missing { reference: String, ours: String },
    /// The reference builds it (a case for another reference version): not scored.
    ReferenceBuilds,
}

fn run_case(case: &Case, label: &str) -> Option<Outcome> {
    let tree = TempTree::new(label);
    let work = tree.root.join("case");
    match &case.files {
        Some(files) => copy_tree(files, &work),
        None => fs::create_dir_all(&work).unwrap(),
    }
    let dir = work.join(&case.build);
    let dir = dir.to_str().expect("UTF-8 path");
    let mut args: Vec<&str> = vec![dir];
    args.extend(case.flags.iter().map(String::as_str));
    let reference = reference_run(&args, &tree.root, label)?;
    if reference.success() {
        return Some(Outcome::ReferenceBuilds);
    }
    let mut our_args = vec!["build"];
    our_args.extend_from_slice(&args);
    let r = ours(&our_args, &tree.root);
    assert!(!r.success(), "{}: peerpods-build succeeded where kustomize fails:\n{}", case.name, reference.stderr);
    let message = kustomize_message(&reference.stderr).unwrap_or_else(|| panic!("{}: no error line in the reference's stderr:\n{}", case.name, reference.stderr));
    Some(if r.stderr.contains(message) {
        Outcome::Contained
    } else {
        Outcome::Missing { reference: message.to_owned(), ours: r.stderr.trim_end().to_owned() }
    })
}

#[test]
fn kustomizes_whole_error_message_stands_in_ours() {
    let label = "error_wording";
    let Some(shared) = shared_dir(label) else { return };
    let mut cases = shared_cases(&shared);
    cases.extend(own_cases());
    let todo = listed(&fs::read_to_string(manifest_dir().join("tests/error_wording_todo.txt")).expect("tests/error_wording_todo.txt"));
    let deliberate = deliberate();
    let outcomes: Vec<Option<Outcome>> = std::thread::scope(|s| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(4).max(1)).collect();
        let handles: Vec<_> = chunks.into_iter().map(|chunk| s.spawn(move || chunk.iter().map(|c| run_case(c, label)).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    if outcomes.iter().any(Option::is_none) {
        return; // no reference: skipped, said once per case
    }
    let mut scored = 0;
    let mut contained = 0;
    let mut regressions = Vec::new();
    let mut now_matching = Vec::new();
    let mut missing = BTreeSet::new();
    for (case, outcome) in cases.iter().zip(outcomes.into_iter().flatten()) {
        match outcome {
            Outcome::ReferenceBuilds => {}
            Outcome::Contained => {
                scored += 1;
                contained += 1;
                // A deliberate exception may match now and then (kustomize's own message varies).
                if todo.contains(&case.name) {
                    now_matching.push(case.name.clone());
                }
            }
            Outcome::Missing { reference, ours } => {
                scored += 1;
                missing.insert(case.name.clone());
                if !todo.contains(&case.name) && !deliberate.contains(&case.name) {
                    regressions.push(format!("{}\n  kustomize: {reference}\n  ours:      {ours}", case.name));
                }
            }
        }
    }
    say_past_capture(&format!(
        "error_wording: kustomize's whole message is in ours for {contained} of {scored} error cases ({:.1}%)",
        100.0 * contained as f64 / scored.max(1) as f64
    ));
    let stale: Vec<&String> = todo.iter().chain(&deliberate).filter(|n| !cases.iter().any(|c| &c.name == *n)).collect();
    assert!(stale.is_empty(), "listed cases that no longer exist: {stale:?}");
    assert!(regressions.is_empty(), "kustomize's message is missing from ours in cases not listed:\n{}", regressions.join("\n"));
    assert!(now_matching.is_empty(), "these listed cases now carry kustomize's message; take them off the list: {now_matching:?}");
    let both: Vec<&String> = todo.intersection(&deliberate).collect();
    assert!(both.is_empty(), "cases both deliberate and to do: {both:?}");
}
