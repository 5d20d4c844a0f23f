//! The real clients `tools/go-clients.sh` builds from their Go modules (helm 4 and 3, the newest
//! kustomize and v5.8.2, Flux's build): where each is, or a visible skip. The tests that use them
//! are named `client_...` (`CI=true cargo test --release -- client_` runs exactly them); under
//! `CI=true` a missing client fails them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::common;

/// The clients the script builds, by the name it knows them by.
pub const HELM4: &str = "helm4";
pub const HELM3: &str = "helm3";
pub const KUSTOMIZE_NEWEST: &str = "kustomize";
pub const KUSTOMIZE_5_8_2: &str = "kustomize-5.8.2";
pub const FLUX_BUILD: &str = "flux-build";

/// `tools/go-clients.sh list`, once: each client's name, version and program.
fn listed() -> &'static Result<Vec<(String, String, PathBuf)>, String> {
    static LIST: OnceLock<Result<Vec<(String, String, PathBuf)>, String>> = OnceLock::new();
    LIST.get_or_init(|| {
        let script = common::manifest_dir().join("tools/go-clients.sh");
        let run = common::run_program("bash", &[script.to_str().expect("UTF-8 path"), "list"], &common::manifest_dir());
        if !run.success() {
            return Err(format!("tools/go-clients.sh list failed: {}", run.stderr.trim()));
        }
        Ok(run
            .stdout
            .lines()
            .filter_map(|line| {
                let mut words = line.splitn(3, ' ');
                Some((words.next()?.to_string(), words.next()?.to_string(), PathBuf::from(words.next()?)))
            })
            .collect())
    })
}

/// Whether the go command runs here.
fn go_present() -> bool {
    std::process::Command::new("go").arg("version").output().is_ok_and(|o| o.status.success())
}

/// The program of client `name` (built by `tools/go-clients.sh`) and its version, or a skip
/// saying why not (no Go, or not built yet).
pub fn client(label: &str, name: &str) -> Option<(PathBuf, String)> {
    let found = match listed() {
        Ok(list) => list.iter().find(|(n, _, _)| n == name).cloned(),
        Err(e) => {
            common::skip(label, e);
            return None;
        }
    };
    let Some((_, version, program)) = found else {
        common::skip(label, &format!("tools/go-clients.sh knows no client '{name}'"));
        return None;
    };
    if program.is_file() {
        return Some((program, version));
    }
    let why = if go_present() {
        format!("{name} {version} is not built (run tools/go-clients.sh; .ci/run does)")
    } else {
        format!("no Go here, so {name} {version} cannot be built from its module (install Go, then run tools/go-clients.sh)")
    };
    common::skip(label, &why);
    None
}
