//! `--untransformed`: what the build costs apart from its transformers. The benchmark's tree is
//! built as it is and again with every transformer taken out of its kustomizations (only
//! `resources`, `components` and the generators that make new objects stay: no patches, labels,
//! annotations, images, replicas, namespace or name prefix, no merging generator); each build
//! is set beside the two floors of its own tree and output, run by run as the main table does.
//!
//!     cargo bench --bench workload -- --untransformed [--apps 500] [--runs 9]
//!
//! The untransformed build's ratio is the floor the transformers start from: were they free,
//! the whole build would cost its untransformed CPU time plus what printing the larger output
//! adds (the difference of the two output floors).
use std::path::Path;
use std::time::Duration;

use super::untransformed_tree::write_untransformed;
use super::{median, paired_runs, seconds, Usage};

pub fn bench(bin: &Path, work: &Path, apps: usize, runs: usize) {
    let dir = super::first_environment(work, apps);
    let tree = dir.parent().and_then(Path::parent).expect("the tree holds envs/<name>");
    let bare_tree = work.join(format!("untransformed-{apps}"));
    write_untransformed(tree, &bare_tree);
    let bare_dir = bare_tree.join(dir.strip_prefix(tree).expect("the environment is in its tree"));

    println!("`build` of the {apps}-app tree as it is and with its transformers taken out, {runs} runs each, medians:\n");
    println!("| tree | output | input floor | output floor | build wall | CPU | of it, the kernel | CPU / input floor | CPU / output floor |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut measured = Vec::new();
    for (name, dir) in [("as it is", &dir), ("untransformed", &bare_dir)] {
        let out = work.join(format!("untransformed-bench-{}.yaml", measured.len()));
        let rounds = paired_runs(bin, dir, &out, runs);
        let of = |f: &dyn Fn(&(Duration, Usage, Duration)) -> f64| median(rounds.iter().map(f));
        let (input_floor, output_floor) = (of(&|r| r.0.as_secs_f64()), of(&|r| r.2.as_secs_f64()));
        let (wall, cpu, kernel) = (of(&|r| r.1.wall.as_secs_f64()), of(&|r| r.1.cpu.as_secs_f64()), of(&|r| r.1.kernel.as_secs_f64()));
        let bytes = std::fs::metadata(&out).map_or(0, |m| m.len());
        println!(
            "| {name} | {:.1} MB | {input_floor:.3} s | {output_floor:.3} s | {wall:.3} s | {cpu:.3} s | {kernel:.3} s | {:.2} | {:.2} |",
            bytes as f64 / 1e6,
            of(&|r| r.1.cpu.as_secs_f64() / r.0.as_secs_f64()),
            of(&|r| r.1.cpu.as_secs_f64() / r.2.as_secs_f64()),
        );
        measured.push((cpu, output_floor));
    }
    let [(cpu, output_floor), (bare_cpu, bare_output_floor)] = measured[..] else { unreachable!("two trees") };
    let printing = output_floor - bare_output_floor;
    println!(
        "\n- the transformers and what they add to print: {} of CPU (the output floor grows by {} with the larger output)",
        seconds(Duration::from_secs_f64((cpu - bare_cpu).max(0.0))),
        seconds(Duration::from_secs_f64(printing.max(0.0))),
    );
    println!(
        "- were the transformers free: {} of CPU, {:.2}x the output floor",
        seconds(Duration::from_secs_f64(bare_cpu + printing)),
        (bare_cpu + printing) / output_floor
    );
}
