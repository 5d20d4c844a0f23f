//! `--compare OLD`: the build of one tree by two binaries, taken in turn (old, new, then new,
//! old, ...), so that a busy moment of the machine weighs on both alike. Prints the medians of
//! each (wall, CPU, kernel time, page faults, peak memory), the difference, and whether the two
//! outputs are the same bytes. This is how a change to the build's speed is judged: the ratios
//! to the floor move with the machine's load by more than most changes move them.
//!
//!     cargo bench --bench workload -- --compare OLD_BINARY [--apps 500] [--runs 31] [--bin NEW]
//!
//! OLD_BINARY is the release build of the commit before the change (for instance from a
//! `git worktree` of it); NEW is this checkout's.
use std::path::Path;
use std::process::Command;

use super::{median, run, Usage};

pub fn bench(old: &Path, new: &Path, work: &Path, apps: usize, runs: usize) {
    let dir = super::first_environment(work, apps);
    let outputs = [work.join("compare-old.yaml"), work.join("compare-new.yaml")];
    let binaries = [old, new];
    let mut usages: [Vec<Usage>; 2] = [Vec::new(), Vec::new()];
    for round in 0..runs {
        // Each binary goes first every other round: neither always meets a cache the other warmed.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let usage = run(Command::new(binaries[which]).arg("build").arg(&dir), &outputs[which])
                .unwrap_or_else(|e| panic!("{} build {}: {e}", binaries[which].display(), dir.display()));
            usages[which].push(usage);
        }
    }
    let same = std::fs::read(&outputs[0]).expect("the old output") == std::fs::read(&outputs[1]).expect("the new output");
    println!("`build {}` ({apps} apps), {runs} runs of each binary in turn, medians:\n", dir.display());
    println!("| | old: {} | new: {} | new - old |", old.display(), new.display());
    println!("|---|---:|---:|---:|");
    // A row: the medians in `unit` (`scale` times the measure), with `digits` decimals.
    let row = |name: &str, unit: &str, scale: f64, digits: usize, of: fn(&Usage) -> f64| {
        let [a, b] = [0, 1].map(|which| median(usages[which].iter().map(of)) * scale);
        println!("| {name} | {a:.digits$}{unit} | {b:.digits$}{unit} | {:+.digits$}{unit} ({:+.1}%) |", b - a, 100.0 * (b - a) / a);
    };
    row("wall", " ms", 1000.0, 1, |u| u.wall.as_secs_f64());
    row("CPU", " ms", 1000.0, 1, |u| u.cpu.as_secs_f64());
    row("of it, the kernel", " ms", 1000.0, 1, |u| u.kernel.as_secs_f64());
    row("page faults", "", 1.0, 0, |u| u.faults as f64);
    row("peak memory", " MiB", 1.0 / 1024.0, 1, |u| u.peak_kib as f64);
    println!("\noutputs: {}", if same { "the same bytes" } else { "DIFFERENT (see compare-old.yaml and compare-new.yaml in the work folder)" });
}
