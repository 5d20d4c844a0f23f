//! Build time, CPU time and peak memory of `peerpods-build build` on generated trees of growing
//! size, next to two floors, each with the project's own parser and emitter on one thread, in a
//! process of its own as each build is: every input file parsed and every document emitted (the
//! input floor), and the build's output parsed and emitted again (the output floor, which reads
//! and prints the 500-app tree's larger output where the input floor prints what it read); and
//! next to `kubectl kustomize`, whose output each build must equal byte for byte.
//!
//!     cargo bench --bench workload -- [--sizes 10,50,100,200,500] [--overlays 4] [--runs 9] [--explain]
//!         [--kubectl-max-apps 100] [--bin PATH] [--work DIR] [--write-results benches/RESULTS.md]
//!     cargo bench --bench workload -- --generate OUT_DIR --apps N [--overlays M] [--seed S]
//!     cargo bench --bench workload -- --remote [--apps 50] [--runs 5]   (see remote.rs)
//!     cargo bench --bench workload -- --helm [--runs 5]   (see helm.rs)
//!     cargo bench --bench workload -- --monorepo [--apps 500] [--runs 3]   (see monorepo.rs)
//!     cargo bench --bench workload -- --profile [--apps 500] [--top 25] [--tool perf|callgrind]   (see profile.rs)
//!     cargo bench --bench workload -- --instructions [--apps 500]   (see profile.rs)
//!     cargo bench --bench workload -- --timeline [--apps 500]   (see profile.rs)
//!     cargo bench --bench workload -- --compare OLD_BINARY [--apps 500] [--runs 31]   (see compare.rs)
//!     cargo bench --bench workload -- --untransformed [--apps 500] [--runs 9]   (see untransformed.rs)
//!     cargo bench --bench workload -- --floor DIR   (the floor of one tree, once, with its user and
//!         kernel time and page faults: to set beside the build's, or for a profiler to count next
//!         to the build, e.g. `valgrind --tool=callgrind target/release/deps/workload-* --floor DIR`)
//!     cargo bench --bench workload -- --output-floor DIR|FILE   (the output floor: every output
//!         file of DIR, or FILE, parsed and re-emitted, once)
//!
//! kubectl's outputs are kept in the work folder (keyed by the tree's digest), so sizes too slow
//! to wait for every time are compared with the output of an earlier run: run once with a large
//! `--kubectl-max-apps` to record them.
mod generator;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use generator::{env_list, Workload};
use peerpods_build::yaml::{emit::emit_stream, parse::parse_documents};
use serde_json::Value;
use sha2::{Digest, Sha256};

mod compare;
mod helm;
mod monorepo;
mod profile;
mod reference;
mod remote;
mod untransformed;
mod untransformed_tree;

/// The floor is measured with the allocator the peerpods-build binary uses.
#[global_allocator]
static ALLOCATOR: peerpods_build::allocator::Allocator = peerpods_build::allocator::Allocator;

struct Options {
    sizes: Vec<usize>,
    overlays: usize,
    seed: u64,
    runs: usize,
    kubectl_max_apps: usize,
    bin: PathBuf,
    work: PathBuf,
    write_results: Option<PathBuf>,
}

/// Wall time, CPU time and peak resident memory of one run.
#[derive(Clone, Copy)]
struct Usage {
    wall: Duration,
    /// User and system time over all threads.
    cpu: Duration,
    /// The system time alone (file creation, page faults).
    kernel: Duration,
    peak_kib: u64,
    /// Page faults served without reading a file (fresh pages, mostly).
    faults: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let value = |name: &str| args.iter().position(|a| a == name).map(|i| args.get(i + 1).cloned().unwrap_or_else(|| panic!("{name} needs a value")));
    let number = |name: &str, default: usize| value(name).map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: not a number"))).unwrap_or(default);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(dir) = value("--floor") {
        // The floor of one tree, once, for a profiler to measure next to the build; its CPU time
        // in user and kernel mode, to set beside the build's.
        let files = floor_inputs(Path::new(&dir));
        let before = own_cpu();
        let wall = parse_emit(&files);
        let after = own_cpu();
        println!(
            "{:.6} s wall, {:.3} s user, {:.3} s kernel, {} page faults",
            wall.as_secs_f64(),
            (after.0 - before.0).as_secs_f64(),
            (after.1 - before.1).as_secs_f64(),
            after.2 - before.2
        );
        return;
    }
    if let Some(dir) = value("--output-floor") {
        // The monorepo's floor, in a process of its own (`monorepo::output_floor`).
        println!("{:.6} s wall", monorepo::output_floor(Path::new(&dir)));
        return;
    }
    if let Some(out) = value("--generate") {
        let workload = Workload { apps: number("--apps", 10), overlays: number("--overlays", 3), seed: number("--seed", 1) as u64 };
        workload.write(Path::new(&out)).expect("writing the tree");
        for env in env_list(workload.overlays) {
            println!("envs/{}", env.name);
        }
        return;
    }
    let options = Options {
        sizes: value("--sizes")
            .unwrap_or_else(|| "10,50,100,200,500".into())
            .split(',')
            .map(|s| s.trim().parse().expect("--sizes: numbers separated by commas"))
            .collect(),
        overlays: number("--overlays", 4),
        seed: number("--seed", 1) as u64,
        runs: number("--runs", 9).max(1),
        kubectl_max_apps: number("--kubectl-max-apps", 100),
        bin: value("--bin").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_peerpods-build"))),
        work: value("--work").map(PathBuf::from).unwrap_or_else(|| manifest.join("target/workload-bench")),
        write_results: value("--write-results").map(PathBuf::from),
    };
    std::fs::create_dir_all(&options.work).expect("creating the work folder");
    if args.iter().any(|a| a == "--helm") {
        let command = value("--helm-command").map(PathBuf::from).unwrap_or_else(|| manifest.join("tools/helm-standin/helm"));
        helm::bench(&options.bin, &options.work, options.runs, &command);
        return;
    }
    if args.iter().any(|a| a == "--profile") {
        profile::bench(&options.bin, &options.work, number("--apps", 500), number("--top", 25), value("--tool").as_deref());
        return;
    }
    if args.iter().any(|a| a == "--timeline") {
        profile::timeline(&options.bin, &options.work, number("--apps", 500));
        return;
    }
    if args.iter().any(|a| a == "--instructions") {
        profile::instructions(&options.bin, &options.work, number("--apps", 500));
        return;
    }
    if args.iter().any(|a| a == "--monorepo") {
        monorepo::bench(&options.bin, &options.work, number("--apps", 500), options.runs);
        return;
    }
    if let Some(old) = value("--compare") {
        compare::bench(Path::new(&old), &options.bin, &options.work, number("--apps", 500), number("--runs", 31).max(1));
        return;
    }
    if args.iter().any(|a| a == "--untransformed") {
        untransformed::bench(&options.bin, &options.work, number("--apps", 500), options.runs);
        return;
    }
    if args.iter().any(|a| a == "--remote") {
        remote::bench(&options.bin, &options.work, number("--apps", 50), options.runs);
        return;
    }
    let env = env_list(options.overlays).into_iter().next().expect("at least one overlay").name;

    let mut table = String::new();
    table.push_str("| apps | resources | output | input floor | output floor | peerpods-build wall | CPU | peak memory | wall / input floor | CPU / input floor | wall / output floor | CPU / output floor | kubectl kustomize wall | CPU | peak memory | output identical |\n");
    table.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|\n");
    print!("{table}");
    let mut rows = Vec::new();
    for &apps in &options.sizes {
        let workload = Workload { apps, overlays: options.overlays, seed: options.seed };
        let root = options.work.join(format!("tree-{apps}"));
        workload.write(&root).expect("writing the tree");
        let digest = tree_digest(&workload);
        let dir = root.join("envs").join(&env);

        let out_file = options.work.join(format!("out-{apps}.yaml"));
        let runs = paired_runs(&options.bin, &dir, &out_file, options.runs);
        let floor = median(runs.iter().map(|r| r.0.as_secs_f64()));
        let output_floor = median(runs.iter().map(|r| r.2.as_secs_f64()));
        let output_wall_ratio = median(runs.iter().map(|(_, u, f)| u.wall.as_secs_f64() / f.as_secs_f64()));
        let output_cpu_ratio = median(runs.iter().map(|(_, u, f)| u.cpu.as_secs_f64() / f.as_secs_f64()));
        let ours = Usage {
            wall: Duration::from_secs_f64(median(runs.iter().map(|r| r.1.wall.as_secs_f64()))),
            cpu: Duration::from_secs_f64(median(runs.iter().map(|r| r.1.cpu.as_secs_f64()))),
            kernel: Duration::from_secs_f64(median(runs.iter().map(|r| r.1.kernel.as_secs_f64()))),
            peak_kib: median(runs.iter().map(|r| r.1.peak_kib as f64)) as u64,
            faults: median(runs.iter().map(|r| r.1.faults as f64)) as u64,
        };
        let wall_ratio = median(runs.iter().map(|(f, u, _)| u.wall.as_secs_f64() / f.as_secs_f64()));
        let cpu_ratio = median(runs.iter().map(|(f, u, _)| u.cpu.as_secs_f64() / f.as_secs_f64()));
        let output = std::fs::read(&out_file).unwrap();
        let resources = if output.is_empty() { 0 } else { output.windows(5).filter(|w| w == b"\n---\n").count() + 1 };

        if args.iter().any(|a| a == "--explain") {
            // `explain` records provenance for every field: its cost against the plain build.
            let explained_file = options.work.join(format!("explain-{apps}.yaml"));
            let explained = (0..options.runs)
                .map(|_| run(Command::new(&options.bin).arg("explain").arg(&dir), &explained_file).expect("peerpods-build explain runs"))
                .min_by_key(|u| u.wall)
                .unwrap();
            println!(
                "explain, {apps} apps: wall {} ({:.2}x the build), CPU {}, peak {} ({:.2}x the build)",
                seconds(explained.wall),
                explained.wall.as_secs_f64() / ours.wall.as_secs_f64(),
                seconds(explained.cpu),
                mib(explained.peak_kib),
                explained.peak_kib as f64 / ours.peak_kib as f64
            );
        }
        let (kubectl, identical) = reference(&options, apps, &digest, &dir, &output);
        let row = format!(
            "| {apps} | {resources} | {:.1} MB | {} | {} | {} | {} | {} | {wall_ratio:.2} | {cpu_ratio:.2} | {output_wall_ratio:.2} | {output_cpu_ratio:.2} | {} | {} | {} | {identical} |\n",
            output.len() as f64 / 1e6,
            seconds(Duration::from_secs_f64(floor)),
            seconds(Duration::from_secs_f64(output_floor)),
            seconds(ours.wall),
            seconds(ours.cpu),
            mib(ours.peak_kib),
            kubectl.map_or("-".into(), |k| seconds(k.wall)),
            kubectl.map_or("-".into(), |k| seconds(k.cpu)),
            kubectl.map_or("-".into(), |k| mib(k.peak_kib)),
        );
        print!("{row}");
        table.push_str(&row);
        rows.push((apps, wall_ratio, cpu_ratio, ours, identical, (output_wall_ratio, output_cpu_ratio)));
    }

    let mut verdict = String::new();
    let mark = |held: bool| if held { "holds" } else { "MISSED" };
    if let Some(&(_, wall_ratio, cpu_ratio, ours, _, (output_wall, output_cpu))) = rows.iter().find(|r| r.0 == 500) {
        let _ = writeln!(verdict, "- 500 apps: wall {wall_ratio:.2}x the input floor (goal: at most 1.0x; {}), CPU {cpu_ratio:.2}x the input floor (goal: at most 1.5x; {}), peak {} (goal: under 100 MiB; {})",
            mark(wall_ratio <= 1.0), mark(cpu_ratio <= 1.5), mib(ours.peak_kib), mark(ours.peak_kib < 100 * 1024));
        let _ = writeln!(verdict, "- 500 apps against the output floor: wall {output_wall:.2}x (goal: at most 1.0x; {}), CPU {output_cpu:.2}x (goal: at most 1.5x; {})",
            mark(output_wall <= 1.0), mark(output_cpu <= 1.5));
    }
    if let (Some(a), Some(b)) = (rows.iter().find(|r| r.0 == 50), rows.iter().find(|r| r.0 == 500)) {
        let growth = b.3.wall.as_secs_f64() / a.3.wall.as_secs_f64();
        let _ = writeln!(verdict, "- 50 to 500 apps: wall grows {growth:.1}x (goal: at most 10x; {})", mark(growth <= 10.0));
    }
    let different = rows.iter().filter(|r| r.4.starts_with("DIFFERS")).count();
    let _ = writeln!(verdict, "- outputs differing from kubectl kustomize: {different}");
    print!("\n{verdict}");

    if let Some(path) = &options.write_results {
        let text = format!(
            "# Benchmark results\n\nProduced by `cargo bench --bench workload -- --write-results {}` on {} ({} cores): \
             `envs/{env}` of generated trees with {} overlays (seed {}), medians of {} runs of peerpods-build, each between its \
             input floor and output floor measurements (the ratios are medians of the per-run ratios); one run for kubectl kustomize.\n\n\
             The input floor is the time to parse every input file of the build and emit every document; the output floor, \
             the time to parse the build's output and emit it again. Both use the project's own \
             parser and emitter on one thread, in a new process as each build is (its start and exit not counted). CPU is user + system time over all threads; peak memory is the maximum \
             resident set size.\n\n{table}\n{verdict}",
            path.display(),
            cpu_model(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            options.overlays,
            options.seed,
            options.runs,
        );
        // The sections after the table (other benchmarks, earlier runs) stay as they were.
        let kept = std::fs::read_to_string(path).ok().and_then(|old| old.find("\n## ").map(|at| old[at..].to_string())).unwrap_or_default();
        std::fs::write(path, text + &kept).expect("writing the results");
    }
    if different > 0 {
        std::process::exit(1);
    }
}

/// `runs` builds of `dir` (output to `out`), each between its input floor and its output floor:
/// paired, so a noisy moment weighs on all three; ratios are taken as the medians of the
/// per-run ratios.
pub(crate) fn paired_runs(bin: &Path, dir: &Path, out: &Path, runs: usize) -> Vec<(Duration, Usage, Duration)> {
    (0..runs)
        .map(|_| {
            let input_floor = floor_in_fresh_process("--floor", dir);
            let usage = run(Command::new(bin).arg("build").arg(dir), out).unwrap_or_else(|e| panic!("build {}: {e}", dir.display()));
            (input_floor, usage, floor_in_fresh_process("--output-floor", out))
        })
        .collect()
}

/// kubectl's usage (when it ran now) and whether our output equals its output.
fn reference(options: &Options, apps: usize, digest: &str, dir: &Path, ours: &[u8]) -> (Option<Usage>, String) {
    let kept = options.work.join(format!("kubectl-{apps}-{}.yaml", &digest[..16]));
    let mut usage = None;
    if !kept.exists() {
        let Some(kustomize) = reference::find() else {
            return (None, "not checked (no kubectl)".into());
        };
        if apps > options.kubectl_max_apps {
            return (None, format!("not checked (kubectl skipped above {} apps)", options.kubectl_max_apps));
        }
        let tmp = kept.with_extension("partial");
        let u = run(&mut reference::command(&kustomize, dir), &tmp).expect("kubectl runs");
        std::fs::rename(&tmp, &kept).unwrap();
        std::fs::write(kept.with_extension("usage"), format!("{} {} {}", u.wall.as_secs_f64(), u.cpu.as_secs_f64(), u.peak_kib)).unwrap();
        usage = Some(u);
    } else if let Ok(text) = std::fs::read_to_string(kept.with_extension("usage")) {
        let parts: Vec<f64> = text.split_whitespace().filter_map(|p| p.parse().ok()).collect();
        if let [wall, cpu, peak] = parts[..] {
            usage = Some(Usage { wall: Duration::from_secs_f64(wall), cpu: Duration::from_secs_f64(cpu), kernel: Duration::ZERO, peak_kib: peak as u64, faults: 0 });
        }
    }
    let identical = if std::fs::read(&kept).unwrap() == ours { "yes" } else { "DIFFERS" };
    (usage, identical.into())
}

/// A digest of the generated tree, naming kept reference outputs.
fn tree_digest(workload: &Workload) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in workload.files() {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs a command with stdout to `out`, measuring it through `wait4`.
fn run(command: &mut Command, out: &Path) -> std::io::Result<Usage> {
    let file = std::fs::File::create(out)?;
    let start = Instant::now();
    let child = command.stdout(file).stderr(Stdio::null()).spawn()?;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, whose id std gave us; `usage` is a valid rusage.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(std::io::Error::other(format!("{command:?} failed")));
    }
    Ok(Usage {
        wall,
        cpu: duration(usage.ru_utime) + duration(usage.ru_stime),
        kernel: duration(usage.ru_stime),
        peak_kib: usage.ru_maxrss as u64,
        faults: usage.ru_minflt as u64,
    })
}

/// The folder of the first environment of the benchmark's tree of `apps` apps (4 overlays, seed
/// 1), the tree written in the work folder: what `--profile` and `--compare` build.
fn first_environment(work: &Path, apps: usize) -> PathBuf {
    let workload = Workload { apps, overlays: 4, seed: 1 };
    let root = work.join(format!("tree-{apps}"));
    workload.write(&root).expect("writing the tree");
    root.join("envs").join(&env_list(workload.overlays)[0].name)
}

/// A time the kernel reports (`rusage`) as a duration.
fn duration(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// This process's CPU time so far, in user mode and kernel mode, and its page faults.
fn own_cpu() -> (Duration, Duration, i64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage for the kernel to fill.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (duration(usage.ru_utime), duration(usage.ru_stime), usage.ru_minflt)
}

/// The floor of `dir` (`--floor`, or the monorepo's `--output-floor`), measured in a new process
/// of this program: its memory is fresh, as a build's is. Measured in this process, the floor
/// found the pages its last run freed still mapped on some runs and not on others (51 to 15,016
/// page faults a run on the 500-app tree), so it was lower than a process of its own can be, and
/// by a varying amount. Its start and exit stay outside the time, as before.
pub(crate) fn floor_in_fresh_process(mode: &str, dir: &Path) -> Duration {
    let out = Command::new(std::env::current_exe().expect("the benchmark's own program"))
        .arg(mode)
        .arg(dir)
        .stderr(Stdio::inherit())
        .output()
        .expect("the floor runs");
    assert!(out.status.success(), "the floor of {} failed", dir.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let seconds: f64 = text.split_whitespace().next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("the floor printed {text:?}"));
    Duration::from_secs_f64(seconds)
}

/// Every file the build of `dir` reads.
fn floor_inputs(dir: &Path) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    inputs(dir, &mut files);
    files
}

/// Reads and parses every file, then emits every document: the floor of a build reading them.
/// Never inlined: `--instructions` counts this function alone (callgrind's `--toggle-collect`).
#[inline(never)]
fn parse_emit(files: &BTreeSet<PathBuf>) -> Duration {
    let start = Instant::now();
    let mut docs: Vec<Value> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        docs.extend(parse_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display())).into_iter().filter(|d| !d.is_null()));
    }
    let out = emit_stream(docs.iter());
    let elapsed = start.elapsed();
    std::hint::black_box(out);
    elapsed
}

/// The kustomization files, resource files and patch files of a build (each once).
fn inputs(dir: &Path, files: &mut BTreeSet<PathBuf>) {
    let file = dir.join("kustomization.yaml").canonicalize().unwrap();
    if !files.insert(file.clone()) {
        return;
    }
    let k = parse_documents(&std::fs::read_to_string(&file).unwrap()).unwrap().into_iter().next().unwrap_or(Value::Null);
    let list = |key: &str| k.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    for entry in list("resources").iter().chain(&list("components")).filter_map(Value::as_str) {
        let path = dir.join(entry);
        if path.is_dir() {
            inputs(&path, files);
        } else {
            files.insert(path.canonicalize().unwrap());
        }
    }
    for patch in list("patches") {
        if let Some(path) = patch.get("path").and_then(Value::as_str) {
            files.insert(dir.join(path).canonicalize().unwrap());
        }
    }
}

/// The median of some measurements (the mean of the middle two for an even count).
pub(crate) fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "an unknown CPU".into())
}
