//! Stress: inputs far beyond real trees, each of which must build or fail cleanly (an error,
//! no panic, no partial output) with memory bounded as the README's limits say. Slow and
//! memory-hungry, so ignored by default; run them alone, in release:
//! `cargo test --release --test integration stress -- --ignored --test-threads 1 --nocapture`.
//! They check behaviour and memory, not time.
#![cfg(unix)]

use crate::common::{bin, TempTree};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

/// What one run of the binary did: exit code, stdout and stderr sizes, and its peak memory.
pub(crate) struct Measured {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub peak_mib: u64,
}

/// Runs `peerpods-build build DIR`, stdout into a file, and reads the child's own peak RSS.
#[allow(clippy::zombie_processes)] // waited for with wait4, which std's Child does not offer
pub(crate) fn build_measured(tmp: &TempTree, dir: &Path) -> Measured {
    let out_path = tmp.path("stdout.yaml");
    let err_path = tmp.path("stderr.txt");
    let child = Command::new(bin())
        .args(["build", dir.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("starting peerpods-build");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as libc::pid_t, "wait4 failed");
    assert!(libc::WIFEXITED(status), "peerpods-build was killed by signal {}", libc::WTERMSIG(status));
    let measured = Measured {
        code: libc::WEXITSTATUS(status),
        stdout: fs::read_to_string(&out_path).unwrap(),
        stderr: fs::read_to_string(&err_path).unwrap(),
        peak_mib: usage.ru_maxrss as u64 / 1024,
    };
    eprintln!("{}: exit {}, {} bytes out, peak {} MiB", dir.display(), measured.code, measured.stdout.len(), measured.peak_mib);
    assert!(!measured.stderr.contains("panicked"), "{}", measured.stderr);
    if measured.code != 0 {
        assert!(measured.stdout.is_empty(), "a failed build printed output");
    }
    measured
}

const CONFIGMAP_HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ";

#[test]
#[ignore = "stress: 100 MB of input"]
fn a_hundred_megabytes_of_resources_build_in_bounded_memory() {
    let tmp = TempTree::new("stress-100mb");
    let value = "x".repeat(1000);
    let mut text = String::with_capacity(110 << 20);
    let mut n = 0;
    while text.len() < 100 << 20 {
        writeln!(text, "{CONFIGMAP_HEAD}cm-{n}\ndata:\n  a: {value}\n  b: {value}\n---").unwrap();
        n += 1;
    }
    tmp.write("app/r.yaml", &text);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\nnamePrefix: p-\nlabels:\n- pairs:\n    app: big\n");
    let m = build_measured(&tmp, &tmp.path("app"));
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(m.stdout.matches("\nkind: ConfigMap\n").count(), n);
    assert!(m.peak_mib < 2048, "peak memory {} MiB for 100 MB of input", m.peak_mib);
}

#[test]
#[ignore = "stress: a million keys"]
fn a_million_key_mapping_builds_in_bounded_memory() {
    let tmp = TempTree::new("stress-keys");
    let mut text = format!("{CONFIGMAP_HEAD}keys\ndata:\n");
    for i in 0..1_000_000 {
        writeln!(text, "  k{i}: v{i}").unwrap();
    }
    tmp.write("app/r.yaml", &text);
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    let m = build_measured(&tmp, &tmp.path("app"));
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(m.stdout.contains("\n  k999999: v999999\n"));
    assert!(m.peak_mib < 1024, "peak memory {} MiB for a million keys", m.peak_mib);
}

#[test]
#[ignore = "stress: 10,000 resources entries"]
fn ten_thousand_resources_entries_build_in_bounded_memory() {
    let tmp = TempTree::new("stress-entries");
    let mut kustomization = String::from("resources:\n");
    for i in 0..10_000 {
        tmp.write(&format!("app/r/{i}.yaml"), &format!("{CONFIGMAP_HEAD}cm-{i}\ndata:\n  i: \"{i}\"\n"));
        writeln!(kustomization, "- r/{i}.yaml").unwrap();
    }
    tmp.write("app/kustomization.yaml", &kustomization);
    let m = build_measured(&tmp, &tmp.path("app"));
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(m.stdout.matches("\nkind: ConfigMap\n").count(), 10_000);
    assert!(m.peak_mib < 512, "peak memory {} MiB for 10,000 entries", m.peak_mib);
}

/// A diamond `levels` deep: every level has two kustomizations (`a`, `b`, each adding its own
/// name prefix) that both take both of the level below; the first level takes one base of one
/// resource. The top builds 2^(levels-1) resources, as kustomize does.
fn diamond(tmp: &TempTree, levels: usize) {
    tmp.write("d/base/cm.yaml", &format!("{CONFIGMAP_HEAD}cm\n"));
    tmp.write("d/base/kustomization.yaml", "resources:\n- cm.yaml\n");
    for level in 1..=levels {
        let resources = match level {
            1 => "- ../base\n".to_string(),
            _ => format!("- ../{below}a\n- ../{below}b\n", below = level - 1),
        };
        for side in ["a", "b"] {
            tmp.write(&format!("d/{level}{side}/kustomization.yaml"), &format!("namePrefix: {side}-\nresources:\n{resources}"));
        }
    }
    tmp.write("d/top/kustomization.yaml", &format!("resources:\n- ../{levels}a\n"));
}

#[test]
#[ignore = "stress: a deep diamond of shared bases"]
fn a_deep_diamond_of_shared_bases_builds_in_bounded_memory() {
    let tmp = TempTree::new("stress-diamond");
    let levels = 16;
    diamond(&tmp, levels);
    let m = build_measured(&tmp, &tmp.path("d/top"));
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(m.stdout.matches("\nkind: ConfigMap\n").count(), 1 << (levels - 1));
    assert!(m.peak_mib < 1024, "peak memory {} MiB for a diamond {levels} deep", m.peak_mib);

    // Shared without prefixes, the same ids meet twice: an error, early.
    tmp.write("same/kustomization.yaml", "resources:\n- ../d/base\n- ../d/base\n");
    let m = build_measured(&tmp, &tmp.path("same"));
    assert_ne!(m.code, 0);
}
