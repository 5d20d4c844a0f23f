//! `--profile`: where a build's time goes, from the profiler the machine has: `perf` (a sampling
//! profile, by symbol: the symbols' own time, then the project's functions with what they call),
//! else valgrind's callgrind (instruction counts, steady on a busy machine).
//!
//!     cargo bench --bench workload -- --profile [--apps 500] [--top 25] [--tool perf|callgrind]
//!
//! The tree is the benchmark's (`envs/<first environment>` of the generated tree); the recording
//! stays in the work folder (`profile.data` or `callgrind.out`) for a closer look.
//!
//! `--instructions`: the instructions the build and the floor run, counted by callgrind on one
//! thread, and their ratio. A busy machine moves the timed ratios by a tenth from one run to the
//! next; these counts move by well under a percent, so they tell a change's effect, or a
//! regression, on any day.
//!
//!     cargo bench --bench workload -- --instructions [--apps 500]
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
    println!("instructions of `peerpods-build build {}` ({apps} apps) and of its floor, callgrind on one thread", dir.display());
    let build = count(work, "build", None, bin, &["build".as_ref(), dir.as_os_str()]);
    // The floor's timed part alone: listing the files it reads is not counted.
    let bench = std::env::current_exe().expect("the benchmark's own program");
    let floor = count(work, "floor", Some("*parse_emit*"), &bench, &["--floor".as_ref(), dir.as_os_str()]);
    let millions = |n: u64| format!("{:.0} M", n as f64 / 1e6);
    println!("| build | floor (parse + emit) | build / floor |");
    println!("|---:|---:|---:|");
    println!("| {} | {} | {:.2}x |", millions(build), millions(floor), build as f64 / floor as f64);
}

/// The instructions `program` runs with `args` under callgrind on one thread; with `only`, those
/// of the functions it names alone (callgrind's `--toggle-collect`).
fn count(work: &Path, what: &str, only: Option<&str>, program: &Path, args: &[&std::ffi::OsStr]) -> u64 {
    let out = work.join(format!("instructions-{what}.out"));
    let mut valgrind = Command::new("valgrind");
    valgrind.arg("--tool=callgrind").arg(format!("--callgrind-out-file={}", out.display())).env("RAYON_NUM_THREADS", "1");
    if let Some(only) = only {
        valgrind.arg(format!("--toggle-collect={only}"));
    }
    let ran = valgrind.arg(program).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    assert!(ran, "valgrind --tool=callgrind failed for the {what} (is valgrind installed?)");
    let text = std::fs::read_to_string(&out).expect("callgrind's output");
    // callgrind writes the count of what it collected as `totals:` (older versions `summary:`).
    let total = text.lines().find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:"))).and_then(|n| n.trim().parse().ok());
    let total = total.unwrap_or_else(|| panic!("no instruction count in {}", out.display()));
    assert!(total > 0, "callgrind counted nothing for the {what}: was the function it counts inlined?");
    total
}
