//! A whole build of a small tree made from the input: `app/kustomization.yaml`, `app/r.yaml`,
//! `base/kustomization.yaml`, `base/r.yaml` (the input's parts, split at `\n%%\n`), built with
//! each load restrictor. A build succeeds or fails; it never panics, and its output prints.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::{build, BuildOptions};

const FILES: [&str; 4] = ["app/kustomization.yaml", "app/r.yaml", "base/kustomization.yaml", "base/r.yaml"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = scratch_dir();
    let mut parts = text.splitn(FILES.len(), "\n%%\n");
    for file in FILES {
        std::fs::write(dir.join(file), parts.next().unwrap_or("")).expect("writing the tree");
    }
    for load_restrictor in [LoadRestrictor::RootOnly, LoadRestrictor::None] {
        if let Ok(result) = build(&dir.join("app"), &BuildOptions { load_restrictor, ..BuildOptions::default() }) {
            let _ = result.to_yaml();
        }
    }
});

/// One tree per process, rewritten for every input.
fn scratch_dir() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("peerpods-fuzz-tree-{}", std::process::id()));
        for sub in ["app", "base"] {
            std::fs::create_dir_all(dir.join(sub)).expect("creating the scratch tree");
        }
        dir
    })
    .clone()
}
