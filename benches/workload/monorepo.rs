//! `--monorepo`: the generated tree without its environment kustomizations, so that each app's
//! overlay per environment is a root of its own (500 apps in 4 environments: 2,000 roots, as
//! 500 Argo CD Applications in 4 environments), over per-app bases and a shared component.
//! Renders every root in one process (`build -o out/ ROOT...`) against the floor of what it
//! prints (every output file parsed and re-emitted with the project's own parser and emitter, on
//! one thread, in a process of its own; paired run by run, medians), with its peak memory next to the largest root's built
//! alone; then times `affected` for one app's patch changed and for a base changed, against
//! rendering every root, and counts what `diff --base` renders for the one-app change.
//!
//!     cargo bench --bench workload -- --monorepo [--apps 500] [--runs 3]
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::generator::{env_list, Workload};
use super::{median, mib, run, seconds, Usage};

pub fn bench(bin: &Path, work: &Path, apps: usize, runs: usize) {
    let bin = &bin.canonicalize().expect("the program under test");
    let tree = work.join(format!("monorepo-{apps}"));
    let workload = Workload { apps, overlays: 4, seed: 1 };
    let mut files = workload.files();
    files.retain(|path, _| !path.starts_with("envs/") && path != "workload.json");
    // A tree from an earlier run is kept when it is this one: deleting 10,000 files would slow
    // the kernel's creation of the outputs (below).
    let same = files.iter().all(|(path, text)| std::fs::read(tree.join(path)).is_ok_and(|t| t == text.as_bytes())) && tree.join(".git").is_dir();
    if !same {
        let _ = std::fs::remove_dir_all(&tree);
        for (path, text) in &files {
            let path = tree.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(&tree)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {}", args.join(" "));
    };
    if !same {
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-qm", "tree"]);
    }
    let envs = env_list(workload.overlays);
    let roots = apps * envs.len();
    let app = format!("app{:03}", apps / 2);
    let time = |args: &[&str]| -> (f64, String) {
        let mut best = f64::MAX;
        let mut out = String::new();
        for _ in 0..runs {
            let start = Instant::now();
            let o = Command::new(bin).args(args).current_dir(&tree).output().expect("peerpods-build runs");
            best = best.min(start.elapsed().as_secs_f64());
            out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        }
        (best, out)
    };
    // Rendering every root: one process, all roots into one folder.
    let all: Vec<String> = files.keys().filter(|p| p.contains("/overlays/") && p.ends_with("/kustomization.yaml")).map(|p| p.trim_end_matches("/kustomization.yaml").to_string()).collect();
    assert_eq!(all.len(), roots);
    let outputs_of = |run: usize| work.join(format!("monorepo-out-{run}/"));
    for run in 0..=runs {
        let _ = std::fs::remove_dir_all(outputs_of(run));
    }
    let log = work.join("monorepo-render.log");
    let render_into = |out: &Path| {
        let mut render_args: Vec<&str> = vec!["build", "-o", out.to_str().unwrap()];
        render_args.extend(all.iter().map(String::as_str));
        let mut command = Command::new(bin);
        command.args(&render_args).current_dir(&tree);
        run(&mut command, &log).expect("the monorepo renders")
    };
    // Into a new, empty folder: every file created and written. Each run has a folder of its
    // own, deleted only at the end: ext4 without a journal skips, one by one, the inodes freed in
    // the last half minute when it looks for a free one (perf: find_inode_bit, recently_deleted),
    // so creating files right after deleting thousands can cost the kernel a second; that case is
    // measured apart, below. The kernel's share is printed with the CPU.
    let pairs: Vec<(f64, Usage)> = (1..=runs)
        .map(|run| {
            let usage = render_into(&outputs_of(run));
            (super::floor_in_fresh_process("--output-floor", &outputs_of(run)).as_secs_f64(), usage)
        })
        .collect();
    let out = outputs_of(runs);
    for run in 1..runs {
        let _ = std::fs::remove_dir_all(outputs_of(run));
    }
    // Right after those deletions, into the folder of the first run, deleted too.
    let after_delete = render_into(&outputs_of(0)).wall.as_secs_f64();
    let _ = std::fs::remove_dir_all(outputs_of(0));
    let mut render_command = Command::new(bin);
    render_command.arg("build").arg("-o").arg(&out).args(&all).current_dir(&tree);
    // Again over the files it wrote: those that hold their build already are left alone.
    let rerun = median((0..runs).map(|_| run(&mut render_command, &log).expect("the monorepo renders").wall.as_secs_f64()));
    let render = median(pairs.iter().map(|p| p.1.wall.as_secs_f64()));
    let cpu = median(pairs.iter().map(|p| p.1.cpu.as_secs_f64()));
    let kernel = median(pairs.iter().map(|p| p.1.kernel.as_secs_f64()));
    let peak = median(pairs.iter().map(|p| p.1.peak_kib as f64)) as u64;
    let floor = median(pairs.iter().map(|p| p.0));
    let wall_ratio = median(pairs.iter().map(|(f, u)| u.wall.as_secs_f64() / f));
    let cpu_ratio = median(pairs.iter().map(|(f, u)| u.cpu.as_secs_f64() / f));
    // The largest root built alone: the memory a one-process run should stay near.
    let outputs = || std::fs::read_dir(&out).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "yaml"));
    let (largest, bytes) = outputs().map(|p| { let len = p.metadata().unwrap().len(); (p, len) }).max_by_key(|e| e.1).unwrap();
    let largest_root = all.iter().find(|r| largest.file_stem().is_some_and(|s| s.to_string_lossy() == r.replace('/', "_"))).expect("the largest output's root");
    let alone = (0..runs)
        .map(|_| run(Command::new(bin).args(["build", largest_root.as_str()]).current_dir(&tree), &work.join("monorepo-largest.yaml")).expect("the largest root builds"))
        .map(|u| u.peak_kib)
        .min()
        .unwrap();
    let total: u64 = outputs().map(|p| p.metadata().unwrap().len()).sum();
    println!("| monorepo: {roots} roots in one process (`build -o out/ ROOT...`), medians of {runs} | |");
    println!("|---|---:|");
    println!("| output | {:.1} MB in {roots} files (largest {:.1} KB) |", total as f64 / 1e6, bytes as f64 / 1e3);
    println!("| floor (parse + re-emit of the output, one thread) | {} |", seconds(std::time::Duration::from_secs_f64(floor)));
    println!("| wall, into an empty folder | {} ({wall_ratio:.2}x the floor; goal: at most 1.0x) |", seconds(std::time::Duration::from_secs_f64(render)));
    println!("| wall into an empty folder right after deleting {} earlier outputs (the kernel's inode search, above) | {} |", roots * (runs - 1), seconds(std::time::Duration::from_secs_f64(after_delete)));
    println!("| wall again, over its own files (unchanged ones left alone) | {} ({:.2}x the floor) |", seconds(std::time::Duration::from_secs_f64(rerun)), rerun / floor);
    println!("| CPU (all threads) | {} ({cpu_ratio:.2}x the floor), {} of it in the kernel |", seconds(std::time::Duration::from_secs_f64(cpu)), seconds(std::time::Duration::from_secs_f64(kernel)));
    println!("| peak memory | {} (the largest root alone: {}; goal: bounded by the largest root, not the sum) |", mib(peak), mib(alone));
    println!();
    // One app's patch changed in one environment.
    let patch = format!("apps/{app}/overlays/{}/deployment-patch.yaml", envs[0].name);
    let (one, listed) = time(&["affected", "--changed", &patch]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), [patch.trim_end_matches("/deployment-patch.yaml")], "one app's patch: {listed}");
    // The app's base changed: its roots in every environment and no other.
    let base = format!("apps/{app}/base/deployment.yaml");
    let (base_time, listed) = time(&["affected", "--changed", &base]);
    assert_eq!(listed.lines().count(), envs.len(), "a base: {listed}");
    assert!(listed.lines().all(|l| l.starts_with(&format!("apps/{app}/overlays/"))), "a base: {listed}");
    // The shared component: every root.
    let (component_time, listed) = time(&["affected", "--changed", "components/observability/kustomization.yaml"]);
    assert_eq!(listed.lines().count(), roots, "the shared component");
    // The work tree against git: the same patch edited.
    let full = tree.join(&patch);
    let text = std::fs::read_to_string(&full).unwrap();
    std::fs::write(&full, text.replacen("spec:", "spec:\n  minReadySeconds: 5", 1)).unwrap();
    let (git_time, listed) = time(&["affected", "--base", "HEAD"]);
    assert_eq!(listed.lines().count(), 1, "--base HEAD: {listed}");
    let (diff_time, diff_out) = time(&["diff", "--base", "HEAD", "--stat"]);
    let rendered = diff_out.lines().find(|l| l.starts_with("diff: rendering")).unwrap_or("").to_string();
    git(&["checkout", "-q", "--", "."]);
    let pct = |t: f64| format!("{:.1}%", 100.0 * t / render);
    println!("| monorepo: {apps} apps x {} environments = {roots} roots | wall (best of {runs}; rendering: the median above) | of rendering all |", envs.len());
    println!("|---|---:|---:|");
    println!("| render every root (`build ROOT... -o out/`) | {} | 100% |", seconds(std::time::Duration::from_secs_f64(render)));
    println!("| `affected --changed` one app's patch (1 root listed) | {} | {} |", seconds(std::time::Duration::from_secs_f64(one)), pct(one));
    println!("| `affected --changed` one app's base ({} roots listed) | {} | {} |", envs.len(), seconds(std::time::Duration::from_secs_f64(base_time)), pct(base_time));
    println!("| `affected --changed` the shared component ({roots} roots listed) | {} | {} |", seconds(std::time::Duration::from_secs_f64(component_time)), pct(component_time));
    println!("| `affected --base HEAD` one app's patch edited (1 root listed) | {} | {} |", seconds(std::time::Duration::from_secs_f64(git_time)), pct(git_time));
    println!("| `diff --base HEAD --stat` ({}) | {} | {} |", rendered.trim_start_matches("diff: "), seconds(std::time::Duration::from_secs_f64(diff_time)), pct(diff_time));
    // Deleted now rather than at the next run's start, where it would slow its first renders.
    let _ = std::fs::remove_dir_all(&out);
}

/// Every output file parsed and its documents re-emitted, on one thread: the floor of printing them.
/// `out` is a folder of `.yaml` files, or one output file (the single build's). Never inlined:
/// `--instructions` counts this function alone (callgrind's `--toggle-collect`).
#[inline(never)]
pub fn output_floor(out: &Path) -> f64 {
    use peerpods_build::yaml::{emit::emit_stream, parse::parse_documents};
    let files: Vec<_> = match out.is_file() {
        true => vec![out.to_path_buf()],
        false => std::fs::read_dir(out).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "yaml")).collect(),
    };
    let start = Instant::now();
    let mut printed = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let docs = parse_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        printed += emit_stream(docs.iter().filter(|d| !d.is_null())).len();
    }
    let elapsed = start.elapsed().as_secs_f64();
    std::hint::black_box(printed);
    elapsed
}
