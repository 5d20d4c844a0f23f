//! The benchmark's generated trees: built by peerpods-build, they must come out byte for byte as
//! `kubectl kustomize` (kustomize v5.6.0) prints them; and the generator must write the same
//! trees as the project's `gen_workload.py`; so must the same trees with their transformers taken
//! out (`--untransformed`), which must keep none. Each check is skipped, with a message, where the
//! reference tool is not installed (and fails under `CI=true`).
use crate::generator;

use std::path::{Path, PathBuf};
use std::process::Command;

use generator::{env_list, Workload};

use crate::reference;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ppb-bench-eq-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn build(dir: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_peerpods-build")).arg("build").arg(dir).output().expect("peerpods-build runs");
    assert!(out.status.success(), "peerpods-build {} failed: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The benchmark's 10-app tree (4 environments), written to a scratch folder named `name`.
fn ten_app_tree(name: &str) -> (Workload, PathBuf) {
    let workload = Workload { apps: 10, overlays: 4, seed: 1 };
    let root = scratch(name);
    workload.write(&root).unwrap();
    (workload, root)
}

/// Our build of `dir`, once it is found to equal the reference's byte for byte.
fn build_as_reference(kustomize: &[String], dir: &Path) -> Vec<u8> {
    let reference = reference::command(kustomize, dir).output().expect("the reference runs");
    assert!(reference.status.success(), "kubectl kustomize failed: {}", String::from_utf8_lossy(&reference.stderr));
    let ours = build(dir);
    assert!(ours == reference.stdout, "{}: output differs from kubectl kustomize", dir.display());
    ours
}

#[test]
fn ten_app_tree_builds_as_kubectl_kustomize_builds_it() {
    let Some(kustomize) = reference::find() else {
        crate::common::skip("ten_app_tree_builds_as_kubectl_kustomize_builds_it", crate::common::NO_REFERENCE);
        return;
    };
    let (workload, root) = ten_app_tree("ten");
    for env in env_list(workload.overlays) {
        build_as_reference(&kustomize, &root.join("envs").join(&env.name));
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn untransformed_tree_keeps_no_transformer_and_builds_as_kubectl_kustomize_builds_it() {
    let Some(kustomize) = reference::find() else {
        crate::common::skip("untransformed_tree_keeps_no_transformer_and_builds_as_kubectl_kustomize_builds_it", crate::common::NO_REFERENCE);
        return;
    };
    let (workload, root) = ten_app_tree("whole");
    let bare = scratch("untransformed");
    crate::untransformed_tree::write_untransformed(&root, &bare);
    let mut kustomizations = Vec::new();
    collect_files(&bare, &bare, &mut kustomizations);
    kustomizations.retain(|path| path.ends_with("kustomization.yaml"));
    assert!(kustomizations.len() > 20, "the tree's kustomizations: {kustomizations:?}");
    for path in &kustomizations {
        let text = std::fs::read_to_string(bare.join(path)).unwrap();
        let doc: serde_json::Value = peerpods_build::yaml::parse::parse_documents(&text).unwrap().remove(0);
        let fields = doc.as_object().unwrap();
        let extra: Vec<&String> = fields.keys().filter(|k| !crate::untransformed_tree::KEPT.contains(&k.as_str())).collect();
        assert!(extra.is_empty(), "{path} keeps {extra:?}");
        assert!(!text.contains("behavior:"), "{path} keeps a merging generator:\n{text}");
    }
    for env in env_list(workload.overlays) {
        let text = String::from_utf8(build_as_reference(&kustomize, &bare.join("envs").join(&env.name))).unwrap();
        // What the environment's transformers wrote is gone: its namespace and its name prefix.
        let whole = String::from_utf8(build(&root.join("envs").join(&env.name))).unwrap();
        let namespace = whole.lines().find_map(|l| l.strip_prefix("  namespace: ")).expect("the whole tree's output sets a namespace");
        assert!(!text.contains(&format!("namespace: {namespace}")), "untransformed envs/{} still in {namespace}", env.name);
        let prefix = format!("  name: {}-app000\n", env.name.split('-').next().unwrap());
        assert!(whole.contains(&prefix) && !text.contains(&prefix), "untransformed envs/{} keeps the name prefix of {prefix:?}", env.name);
        assert_eq!(text.matches("\nkind: Deployment\n").count(), whole.matches("\nkind: Deployment\n").count(), "the same Deployments");
    }
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&bare).unwrap();
}

#[test]
fn generator_writes_the_trees_gen_workload_py_writes() {
    let label = "generator_writes_the_trees_gen_workload_py_writes";
    let Some(shared) = crate::common::shared_dir(label) else { return };
    let script = shared.join("tools/gen_workload.py");
    if !script.exists() || Command::new("python3").arg("--version").output().is_err() {
        crate::common::skip(label, &format!("{} or python3 is not available", script.display()));
        return;
    }
    for (apps, overlays, seed) in [(3, 2, 1), (12, 5, 7)] {
        let theirs = scratch(&format!("py-{apps}"));
        let status = Command::new("python3")
            .arg(&script)
            .arg(&theirs)
            .args(["--apps", &apps.to_string(), "--overlays", &overlays.to_string(), "--seed", &seed.to_string()])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let files = Workload { apps, overlays, seed }.files();
        let mut on_disk = Vec::new();
        collect_files(&theirs, &theirs, &mut on_disk);
        on_disk.sort();
        assert_eq!(on_disk, files.keys().cloned().collect::<Vec<_>>(), "the same files");
        for (path, text) in &files {
            let expected = std::fs::read_to_string(theirs.join(path)).unwrap();
            assert!(*text == expected, "{path} differs:\n--- python\n{expected}\n--- rust\n{text}");
        }
        std::fs::remove_dir_all(&theirs).unwrap();
    }
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
}
