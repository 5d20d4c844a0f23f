//! `--profile`: where a build's time goes, from the profiler the machine has: `perf` (a sampling
//! profile, by symbol: the symbols' own time, then the project's functions with what they call),
//! else valgrind's callgrind (instruction counts, steady on a busy machine).
//!
//!     cargo bench --bench workload -- --profile [--apps 500] [--top 25] [--tool perf|callgrind]
//!
//! The tree is the benchmark's (`envs/<first environment>` of the generated tree); the recording
//! stays in the work folder (`profile.data` or `callgrind.out`) for a closer look.
//!
//! `--instructions`: the instructions the build and both floors run (the input floor, and the
//! output floor over the build's own output), counted by callgrind on one thread, and their
//! ratios. A busy machine moves the timed ratios by a tenth from one run to the next; these
//! counts move by well under a percent, so they tell a change's effect, or a regression, on any
//! day. callgrind also simulates the branch predictor and the first-level caches, so a second
//! table gives, per thousand instructions, the branches mispredicted and the instruction and data
//! cache misses: what makes a build's instruction take longer than the floor's (its CPU ratio is
//! well above its instruction ratio), which no count of instructions shows.
//!
//!     cargo bench --bench workload -- --instructions [--apps 500]
//!
//! `--timeline`: how many threads worked through one build, 5 ms at a time (perf's samples by
//! thread), and what ran where fewer than all the processors were busy: the stretches that keep
//! the wall time above CPU time over the processors, which a profile by symbol does not show.
//! perf slows the build, so its times are longer than the bench's; the stretches keep their order.
//! A thread the machine's other work held off its processor shows as idle too: a stretch that
//! comes back run after run is the build's, one seen once is likely the machine's.
//!
//!     cargo bench --bench workload -- --timeline [--apps 500]
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};


pub fn bench(bin: &Path, work: &Path, apps: usize, top: usize, tool: Option<&str>) {
    let dir = super::first_environment(work, apps);
    let tool = tool.map(str::to_string).unwrap_or_else(|| if has("perf", &["--version"]) { "perf".into() } else { "callgrind".into() });
    println!("profile of `peerpods-build build {}` ({apps} apps) with {tool}", dir.display());
    match tool.as_str() {
        "perf" => perf(bin, work, &dir, top),
        "callgrind" => callgrind(bin, work, &dir, top),
        other => panic!("--tool {other}: perf or callgrind"),
    }
}

fn has(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Runs the build of `dir` under `profiler` (its own arguments given); whether it succeeded.
fn record(profiler: &mut Command, bin: &Path, dir: &Path) -> bool {
    profiler.arg(bin).arg("build").arg(dir).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn perf(bin: &Path, work: &Path, dir: &Path, top: usize) {
    let data = work.join("profile.data");
    let recorded = record(Command::new("perf").args(["record", "-F", "4000", "--call-graph", "dwarf,16384", "-o"]).arg(&data).arg("--"), bin, dir);
    assert!(recorded, "perf record failed (is /proc/sys/kernel/perf_event_paranoid above 2? try --tool callgrind)");
    let report = |children: bool| -> Vec<(f64, String)> {
        let out = Command::new("perf")
            .args(["report", "--stdio", "--sort", "symbol", "-g", "none", "--percent-limit", "0.3", "-i"])
            .arg(&data)
            .arg(if children { "--children" } else { "--no-children" })
            .output()
            .expect("perf report runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let first: f64 = words.next()?.trim_end_matches('%').parse().ok()?;
                // With children the self share follows the total share.
                if children {
                    words.next()?;
                }
                let mut symbol: Vec<&str> = words.skip_while(|w| w.starts_with('[')).collect();
                // perf ends each line with columns it has no value for, written `-`.
                while symbol.last() == Some(&"-") {
                    symbol.pop();
                }
                let symbol = symbol.join(" ");
                Some((first, symbol))
            })
            .collect()
    };
    println!("\nown time (samples in the symbol itself):");
    for (share, symbol) in report(false).into_iter().take(top) {
        println!("{share:6.2}%  {symbol}");
    }
    println!("\nthe project's functions, with what they call:");
    for (share, symbol) in report(true).into_iter().filter(|(_, s)| s.starts_with("peerpods_build::") && !s.contains("{{closure}}")).take(top) {
        println!("{share:6.2}%  {symbol}");
    }
}

fn callgrind(bin: &Path, work: &Path, dir: &Path, top: usize) {
    let out = work.join("callgrind.out");
    let recorded = record(Command::new("valgrind").args(["--tool=callgrind", "--fair-sched=yes"]).arg(format!("--callgrind-out-file={}", out.display())), bin, dir);
    assert!(recorded, "valgrind --tool=callgrind failed (is valgrind installed?)");
    for (title, inclusive) in [("own instructions", false), ("instructions with what they call", true)] {
        let mut c = Command::new("callgrind_annotate");
        if inclusive {
            c.arg("--inclusive=yes");
        }
        let report = c.arg(&out).output().expect("callgrind_annotate runs");
        println!("\n{title}:");
        String::from_utf8_lossy(&report.stdout)
            .lines()
            .filter(|l| l.contains('(') && l.contains('%') && (!inclusive || l.contains("peerpods_build::")))
            .take(top)
            .for_each(|l| println!("{}", l.trim()));
    }
}

/// `--instructions`: see the module's text.
pub fn instructions(bin: &Path, work: &Path, apps: usize) {
    let dir = super::first_environment(work, apps);
    println!("instructions of `peerpods-build build {}` ({apps} apps) and of its two floors, callgrind on one thread", dir.display());
    // The build's output, which the output floor reads.
    let output = work.join(format!("instructions-output-{apps}.yaml"));
    let file = std::fs::File::create(&output).expect("creating the output file");
    let build = count(work, "build", None, bin, &["build".as_ref(), dir.as_os_str()], file.into());
    // The floor's timed part alone: listing the files it reads is not counted.
    let bench = std::env::current_exe().expect("the benchmark's own program");
    let floor = count(work, "floor", Some("*parse_emit*"), &bench, &["--floor".as_ref(), dir.as_os_str()], Stdio::null());
    let output_floor = count(work, "output-floor", Some("*output_floor*"), &bench, &["--output-floor".as_ref(), output.as_os_str()], Stdio::null());
    let millions = |n: u64| format!("{:.0} M", n as f64 / 1e6);
    let ratio = |floor: &Counts| format!("{:.2}x", build.instructions as f64 / floor.instructions as f64);
    println!("| build | input floor (parse + emit) | build / input floor | output floor | build / output floor |");
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {} | {} | {} | {} |",
        millions(build.instructions),
        millions(floor.instructions),
        ratio(&floor),
        millions(output_floor.instructions),
        ratio(&output_floor)
    );
    println!("\nper thousand instructions (callgrind's simulated branch predictor and first-level caches):");
    println!("| | branches mispredicted | instruction cache misses | data cache misses |");
    println!("|---|---:|---:|---:|");
    for (what, counts) in [("build", &build), ("input floor", &floor), ("output floor", &output_floor)] {
        let per_thousand = |n: u64| format!("{:.2}", n as f64 * 1000.0 / counts.instructions as f64);
        println!("| {what} | {} | {} | {} |", per_thousand(counts.branch_misses), per_thousand(counts.instruction_misses), per_thousand(counts.data_misses));
    }
}

/// What callgrind counted for one program.
struct Counts {
    instructions: u64,
    /// Conditional and indirect branches mispredicted.
    branch_misses: u64,
    /// First-level instruction cache misses.
    instruction_misses: u64,
    /// First-level data cache misses, reads and writes.
    data_misses: u64,
}

/// What `program` runs with `args` under callgrind on one thread, its output to `stdout`; with
/// `only`, that of the functions it names alone (callgrind's `--toggle-collect`).
fn count(work: &Path, what: &str, only: Option<&str>, program: &Path, args: &[&std::ffi::OsStr], stdout: Stdio) -> Counts {
    let out = work.join(format!("instructions-{what}.out"));
    let mut valgrind = Command::new("valgrind");
    valgrind
        .args(["--tool=callgrind", "--branch-sim=yes", "--cache-sim=yes"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .env("RAYON_NUM_THREADS", "1");
    if let Some(only) = only {
        valgrind.arg(format!("--toggle-collect={only}"));
    }
    let ran = valgrind.arg(program).args(args).stdout(stdout).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    assert!(ran, "valgrind --tool=callgrind failed for the {what} (is valgrind installed?)");
    let text = std::fs::read_to_string(&out).expect("callgrind's output");
    let counts = totals(&text).unwrap_or_else(|| panic!("no instruction, branch and cache counts in {}", out.display()));
    assert!(counts.instructions > 0, "callgrind counted nothing for the {what}: was the function it counts inlined?");
    counts
}

/// The counts of callgrind's output: its `events:` line names the columns of its `totals:`
/// line (older versions `summary:`). None when a column is missing or not a number: a count
/// callgrind did not make is not printed as zero.
fn totals(text: &str) -> Option<Counts> {
    let events: Vec<&str> = text.lines().find_map(|l| l.strip_prefix("events:"))?.split_whitespace().collect();
    let values: Vec<&str> = text.lines().find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))?.split_whitespace().collect();
    let event = |name: &str| -> Option<u64> { values.get(events.iter().position(|e| *e == name)?)?.parse().ok() };
    Some(Counts {
        instructions: event("Ir")?,
        branch_misses: event("Bcm")? + event("Bim")?,
        instruction_misses: event("I1mr")?,
        data_misses: event("D1mr")? + event("D1mw")?,
    })
}

/// Samples a second for `--timeline`, and the width of its bins.
const TIMELINE_HZ: f64 = 10_000.0;
const BIN_SECONDS: f64 = 0.005;

/// `--timeline`: see the module's text. The samples carry no call stacks: unwinding them (perf's
/// `dwarf` mode, the binary having no frame pointers) slows the build unevenly and drops samples,
/// so each is named by the function it was in.
pub fn timeline(bin: &Path, work: &Path, apps: usize) {
    let dir = super::first_environment(work, apps);
    let processors = std::thread::available_parallelism().map_or(1, |n| n.get());
    let data = work.join("timeline.data");
    let mut perf = Command::new("perf");
    perf.args(["record", "-F", &format!("{TIMELINE_HZ}"), "-e", "cpu-clock", "-o"]).arg(&data).arg("--");
    assert!(record(&mut perf, bin, &dir), "perf record failed (is perf installed, and /proc/sys/kernel/perf_event_paranoid at most 2?)");
    let script = Command::new("perf").args(["script", "-F", "tid,time,ip,sym", "-i"]).arg(&data).output().expect("perf script runs");
    let samples = parse_samples(&String::from_utf8_lossy(&script.stdout));
    assert!(!samples.is_empty(), "perf recorded no samples");
    let start = samples.iter().map(|s| s.time).fold(f64::INFINITY, f64::min);
    let mut bins: BTreeMap<usize, Vec<&Sample>> = BTreeMap::new();
    for sample in &samples {
        bins.entry(((sample.time - start) / BIN_SECONDS) as usize).or_default().push(sample);
    }
    let full = TIMELINE_HZ * BIN_SECONDS;
    let last = *bins.keys().last().expect("a bin");
    let busy = |bin: usize| bins.get(&bin).map_or(0.0, |s| s.len() as f64 / full);
    println!("timeline of `peerpods-build build {}` ({apps} apps): {TIMELINE_HZ} samples a second by thread, {:.0} ms bins", dir.display(), BIN_SECONDS * 1e3);
    println!("(perf slows the build a little; the stretches keep their order and their shares)\n");
    let bins_count = (last + 1) as f64;
    println!("{:.0} ms from the first sample to the last, with on average {:.2} of {processors} processors busy", bins_count * BIN_SECONDS * 1e3, samples.len() as f64 / full / bins_count);
    // Stretches of bins with at least half a processor idle, each with the functions it ran most.
    println!("stretches with fewer busy (ms from the first sample, processors busy, the functions sampled most):");
    let idle = |bin: usize| busy(bin) < processors as f64 - 0.5;
    let mut bin = 0;
    while bin <= last {
        if !idle(bin) {
            bin += 1;
            continue;
        }
        let from = bin;
        while bin <= last && idle(bin) {
            bin += 1;
        }
        let stretch: Vec<&Sample> = (from..bin).flat_map(|b| bins.get(&b).into_iter().flatten().copied()).collect();
        let mut by_function: BTreeMap<&str, usize> = BTreeMap::new();
        for sample in &stretch {
            *by_function.entry(&sample.function).or_default() += 1;
        }
        let mut ranked: Vec<(&str, usize)> = by_function.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let said: Vec<String> = ranked.iter().take(3).map(|(f, n)| format!("{f} {:.0}%", *n as f64 * 100.0 / stretch.len().max(1) as f64)).collect();
        let mean = (from..bin).map(busy).sum::<f64>() / (bin - from) as f64;
        println!("  {:>5.0}-{:<5.0} {mean:.2}  {}", from as f64 * BIN_SECONDS * 1e3, bin as f64 * BIN_SECONDS * 1e3, said.join(", "));
    }
}

/// One sample of `perf script -F tid,time,ip,sym`: its time in seconds and the function it was
/// in (the project's without its crate name).
struct Sample {
    time: f64,
    function: String,
}

/// The samples of `perf script`'s lines `TID TIME: ADDRESS SYMBOL` (the symbol may be missing).
fn parse_samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let _tid: u32 = words.next()?.parse().ok()?;
            let time: f64 = words.next()?.strip_suffix(':')?.parse().ok()?;
            let _address = words.next()?;
            let symbol = words.collect::<Vec<_>>().join(" ");
            let symbol = if symbol.is_empty() { "[unknown]".to_string() } else { symbol };
            let function = symbol.strip_prefix("peerpods_build::").map_or(symbol.clone(), str::to_string);
            Some(Sample { time, function })
        })
        .collect()
}
