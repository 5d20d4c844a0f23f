//! Folders in `resources` are built in parallel; the result must be that of building them one
//! after another: warnings in entry order, and the error of the first failing entry.
use std::path::{Path, PathBuf};
use std::process::Command;

struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let dir = std::env::temp_dir().join(format!("ppb-parallel-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Tree(dir)
    }

    fn file(&self, path: &str, text: &str) -> &Tree {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn build(dir: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_peerpods-build")).arg("build").arg(dir).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
}

#[test]
fn warnings_of_folders_come_in_entry_order() {
    let t = Tree::new("warnings");
    t.file("kustomization.yaml", "resources:\n- a\n- b\n- c\n")
        .file("a/kustomization.yaml", "imageTags: []\nresources:\n- cm.yaml\n")
        .file("a/cm.yaml", &config_map("a"))
        .file("b/kustomization.yaml", "commonLabels:\n  x: z\nresources:\n- cm.yaml\n")
        .file("b/cm.yaml", &config_map("b"))
        .file("c/kustomization.yaml", "bases:\n- ../d\n")
        .file("d/kustomization.yaml", "resources:\n- cm.yaml\n")
        .file("d/cm.yaml", &config_map("d"));
    let (ok, out, err) = build(&t.0);
    assert!(ok, "{err}");
    assert_eq!(out.matches("kind: ConfigMap").count(), 3);
    let labels = err.find("'commonLabels' is deprecated").expect("commonLabels warning");
    let bases = err.find("'bases' is deprecated").expect("bases warning");
    assert!(labels < bases, "warnings out of order:\n{err}");
}

#[test]
fn the_first_failing_folder_is_the_error() {
    let t = Tree::new("errors");
    t.file("kustomization.yaml", "resources:\n- a\n- b\n- c\n")
        .file("a/kustomization.yaml", "resources:\n- cm.yaml\n")
        .file("a/cm.yaml", &config_map("a"))
        .file("b/kustomization.yaml", "resources:\n- missing-in-b.yaml\n")
        .file("c/kustomization.yaml", "resources:\n- missing-in-c.yaml\n");
    let (ok, _, err) = build(&t.0);
    assert!(!ok);
    assert!(err.contains("missing-in-b.yaml") && !err.contains("missing-in-c.yaml"), "{err}");
}

#[test]
fn a_folder_id_already_built_by_an_earlier_folder_is_an_error() {
    let t = Tree::new("conflict");
    t.file("kustomization.yaml", "resources:\n- a\n- b\n")
        .file("a/kustomization.yaml", "resources:\n- cm.yaml\n")
        .file("a/cm.yaml", &config_map("same"))
        .file("b/kustomization.yaml", "resources:\n- cm.yaml\n")
        .file("b/cm.yaml", &config_map("same"));
    let (ok, _, err) = build(&t.0);
    assert!(!ok);
    assert!(err.contains("already registered id"), "{err}");
}

#[test]
fn a_pass_over_many_resources_fails_at_the_first_failing_resource() {
    let t = Tree::new("many");
    let mut docs = Vec::new();
    for i in 0..200 {
        let labels = if i == 120 || i == 170 { "  labels: [broken]\n" } else { "" };
        docs.push(format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i:03}\n{labels}"));
    }
    t.file("kustomization.yaml", "resources:\n- cms.yaml\ncommonAnnotations:\n  a: b\ncommonLabels:\n  x: z\n")
        .file("cms.yaml", &docs.join("---\n"));
    let (ok, _, err) = build(&t.0);
    assert!(!ok);
    let expected = "considering field 'metadata/labels' of object ConfigMap.v1.[noGrp]/cm120.[noNs]: wrong node kind: \
                    expected MappingNode but got SequenceNode: node contents:\n- broken";
    assert!(err.contains(expected) && !err.contains("cm170"), "{err}");
}
