//! Any text as a kustomization file: read, checked and typed without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::diagnostics::Diagnostics;
use peerpods_build::kustomization::{LoadRestrictor, Loader};
use peerpods_build::target::Target;

fuzz_target!(|data: &[u8]| {
    let dir = scratch_dir();
    std::fs::write(dir.join("kustomization.yaml"), data).expect("writing the kustomization");
    let loader = Loader::new(&dir, LoadRestrictor::RootOnly).expect("the scratch folder");
    let _ = Target::load(loader, false, &mut Diagnostics::default());
});

/// One folder per process, reused for every input.
fn scratch_dir() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("peerpods-fuzz-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating the scratch folder");
        dir
    })
    .clone()
}
