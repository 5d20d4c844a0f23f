//! `peerpods-build build DIR DIR... -o OUTDIR`: one output file per directory, each equal to
//! what building that directory alone prints.
use crate::generator;

use std::process::Command;

use generator::{env_list, Workload};

#[test]
fn each_directory_is_written_as_its_own_build_prints_it() {
    let root = std::env::temp_dir().join(format!("ppb-several-{}", std::process::id()));
    let workload = Workload { apps: 3, overlays: 3, seed: 1 };
    workload.write(&root).unwrap();
    // Paths relative to the folder the build runs in: each file is named after its path.
    let dirs: Vec<_> = env_list(workload.overlays).into_iter().map(|e| (format!("envs_{}", e.name), format!("envs/{}", e.name))).collect();
    let out = root.join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_peerpods-build"))
        .current_dir(&root)
        .arg("build")
        .args(dirs.iter().map(|(_, d)| d))
        .args(["-o", "out/"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    for (name, dir) in &dirs {
        let alone = Command::new(env!("CARGO_BIN_EXE_peerpods-build")).current_dir(&root).arg("build").arg(dir).output().unwrap();
        assert!(alone.status.success());
        assert!(std::fs::read(out.join(format!("{name}.yaml"))).unwrap() == alone.stdout, "{name}.yaml differs");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn several_directories_need_an_output_folder() {
    let out = Command::new(env!("CARGO_BIN_EXE_peerpods-build")).args(["build", "a", "b"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output"));
}
