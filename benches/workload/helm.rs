//! `--helm`: a build of a kustomization with one chart (the test chart `tests/helm/charts/app`,
//! rendered by the helm stand-in), cold (empty render cache) and warm, next to the same build
//! with the chart's output as a plain resources file, and kustomize's time with the same helm.
//!
//!     PEERPODS_HELM_PYTHON=/path/to/python cargo bench --bench workload -- --helm [--runs 5]
//!         [--helm-command PATH]   (default: tools/helm-standin/helm)
use std::path::Path;
use std::process::Command;

use super::{reference, run, seconds, Usage};

pub fn bench(bin: &Path, work: &Path, runs: usize, helm: &Path) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = work.join("helm");
    let _ = std::fs::remove_dir_all(&base);
    let chart_dir = base.join("chart");
    copy_dir(&manifest.join("tests/helm/charts/app"), &chart_dir.join("charts/app"));
    std::fs::write(
        chart_dir.join("kustomization.yaml"),
        "namePrefix: bench-\nhelmCharts:\n- name: app\n  releaseName: web\n  includeCRDs: true\n  valuesInline:\n    replicas: 3\n",
    )
    .unwrap();
    let cache = base.join("cache");
    let helm_flags = ["--enable-helm".as_ref(), "--helm-command".as_ref(), helm.as_os_str()];
    // Argo CD passes one `--helm-api-versions` per group-version the cluster serves: hundreds.
    let api_versions: Vec<String> = (0..2000).flat_map(|i| ["--helm-api-versions".to_string(), format!("group{i}.example.com/v1")]).collect();
    let with_api_versions = std::cell::Cell::new(false);
    let once = |dir: &Path, with_helm: bool, out: &Path| -> Usage {
        let mut c = Command::new(bin);
        c.arg("build").arg(dir).args(["--cache-dir".as_ref(), cache.as_os_str()]);
        if with_helm {
            c.args(helm_flags);
        }
        if with_api_versions.get() {
            c.args(&api_versions);
        }
        run(&mut c, out).expect("peerpods-build runs")
    };
    let (chart_out, plain_out, kubectl_out) = (base.join("chart.yaml"), base.join("plain.yaml"), base.join("kubectl.yaml"));

    // The plain twin: what helm printed, as a resources file (rendered once by the stand-in).
    let plain_dir = base.join("plain");
    std::fs::create_dir_all(&plain_dir).unwrap();
    let mut cold = Vec::new();
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(&cache);
        cold.push(once(&chart_dir, true, &chart_out));
    }
    let rendered = std::fs::read_dir(cache.join("helm")).unwrap().flatten().map(|e| e.path().join("tree/output.yaml")).find(|p| p.is_file()).expect("a cached rendering");
    std::fs::copy(&rendered, plain_dir.join("chart.yaml")).unwrap();
    std::fs::write(plain_dir.join("kustomization.yaml"), "namePrefix: bench-\nresources:\n- chart.yaml\n").unwrap();

    let (mut warm, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        warm.push(once(&chart_dir, true, &chart_out));
        plain.push(once(&plain_dir, false, &plain_out));
    }
    // The same chart with 2,000 API versions given: cold (helm renders) and warm.
    with_api_versions.set(true);
    let (mut many_cold, mut many_warm) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(&cache);
        many_cold.push(once(&chart_dir, true, &base.join("many.yaml")));
        many_warm.push(once(&chart_dir, true, &base.join("many.yaml")));
    }
    with_api_versions.set(false);
    // Start-up: a build of one small file.
    let tiny = base.join("tiny");
    std::fs::create_dir_all(&tiny).unwrap();
    std::fs::write(tiny.join("kustomization.yaml"), "resources:\n- cm.yaml\n").unwrap();
    std::fs::write(tiny.join("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\n").unwrap();
    let start_up: Vec<Usage> = (0..runs.max(9)).map(|_| once(&tiny, false, &base.join("tiny.yaml"))).collect();
    let best = |runs: Vec<Usage>| runs.into_iter().min_by_key(|u| u.wall).unwrap();
    let start_up_median = super::median(start_up.iter().map(|u| u.wall.as_secs_f64()));
    let (cold, warm, plain, many_cold, many_warm) = (best(cold), best(warm), best(plain), best(many_cold), best(many_warm));
    let kubectl = reference::find().map(|k| {
        let mut c = reference::command(&k, &chart_dir);
        c.args(helm_flags);
        (0..runs).map(|_| run(&mut c, &kubectl_out).expect("kubectl runs")).min_by_key(|u| u.wall).unwrap()
    });
    let chart_bytes = std::fs::read(&chart_out).unwrap();
    let same_as_kubectl = kubectl.map(|_| std::fs::read(&kubectl_out).unwrap() == chart_bytes);

    let both = |u: Usage| format!("{} ({} CPU)", seconds(u.wall), seconds(u.cpu));
    let ratio = |u: Usage| u.wall.as_secs_f64() / plain.wall.as_secs_f64();
    println!("| plain resources file | chart, warm cache | warm / plain (goal: at most 1.2) | chart, cold cache | kubectl kustomize (same helm) | cold / kubectl (goal: at most 1) | same bytes as kubectl |");
    println!("|---:|---:|---:|---:|---:|---:|:---|");
    println!(
        "| {} | {} | {:.2} | {} | {} | {} | {} |",
        both(plain),
        both(warm),
        ratio(warm),
        both(cold),
        kubectl.map_or("-".into(), both),
        kubectl.map_or("-".into(), |k| format!("{:.2}", cold.wall.as_secs_f64() / k.wall.as_secs_f64())),
        same_as_kubectl.map_or("not checked".into(), |s| if s { "yes".to_string() } else { "DIFFERS".to_string() }),
    );
    println!();
    println!("| 2,000 `--helm-api-versions`: chart, cold cache | added to the cold build (goal: at most the chart's rendering, {}) | warm cache | added to the warm build |", seconds(cold.wall.saturating_sub(warm.wall)));
    println!("|---:|---:|---:|---:|");
    println!(
        "| {} | {} | {} | {} |",
        both(many_cold),
        seconds(many_cold.wall.saturating_sub(cold.wall)),
        both(many_warm),
        seconds(many_warm.wall.saturating_sub(warm.wall)),
    );
    println!();
    println!("start-up (a build of one small file, median of {}): {} (goal: under 15 ms)", start_up.len(), seconds(std::time::Duration::from_secs_f64(start_up_median)));
    if same_as_kubectl == Some(false) {
        std::process::exit(1);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
