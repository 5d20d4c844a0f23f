//! `--remote`: a warm-cache build of a remote base (the generated tree as a git repository,
//! reached as a `file://` URL) next to the same build from the local folder, and kustomize's
//! time for the same remote build (it clones on every build).
//!
//!     cargo bench --bench workload -- --remote [--apps 50] [--runs 5]
use std::path::Path;
use std::process::Command;

use super::generator::{env_list, Workload};
use super::{reference, run, seconds, Usage};

pub fn bench(bin: &Path, work: &Path, apps: usize, runs: usize) {
    let base = work.join(format!("remote-{apps}"));
    let _ = std::fs::remove_dir_all(&base);
    let tree = base.join("tree");
    let workload = Workload { apps, overlays: 4, seed: 1 };
    workload.write(&tree).expect("writing the tree");
    let git = |dir: &Path, args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {}", args.join(" "));
    };
    git(&tree, &["init", "-q"]);
    git(&tree, &["add", "."]);
    git(&tree, &["commit", "-qm", "tree"]);
    git(&tree, &["tag", "v1"]);
    git(&base, &["clone", "-q", "--bare", "tree", "tree.git"]);
    let env = env_list(workload.overlays).into_iter().next().unwrap().name;
    let url = format!("file://{}//envs/{env}?ref=v1", base.join("tree.git").display());
    std::fs::create_dir_all(base.join("app")).unwrap();
    std::fs::write(base.join("app/kustomization.yaml"), format!("resources:\n- {url}\n")).unwrap();
    let commit = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(&tree).output().expect("git rev-parse").stdout;
    let by_commit = url.replace("?ref=v1", &format!("?ref={}", String::from_utf8_lossy(&commit).trim()));
    std::fs::create_dir_all(base.join("app-commit")).unwrap();
    std::fs::write(base.join("app-commit/kustomization.yaml"), format!("resources:\n- {by_commit}\n")).unwrap();
    let app_commit = base.join("app-commit");
    let cache = base.join("cache");
    let local_dir = tree.join("envs").join(&env);
    let app = base.join("app");

    let once = |args: &[&Path], extra: &[&str], out: &Path| -> Usage {
        let mut c = Command::new(bin);
        c.arg("build").args(args).args(["--cache-dir".as_ref(), cache.as_os_str()]).args(extra);
        run(&mut c, out).expect("peerpods-build runs")
    };
    let (local_out, remote_out, kubectl_out) = (base.join("local.yaml"), base.join("remote.yaml"), base.join("kubectl.yaml"));
    let cold = once(&[&app], &[], &remote_out);
    // Interleaved, best of `runs` each: a busy machine slows all three alike.
    once(&[&app_commit], &[], &remote_out);
    let (mut local, mut warm, mut pinned, mut offline) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        local.push(once(&[&local_dir], &[], &local_out));
        warm.push(once(&[&app], &[], &remote_out));
        pinned.push(once(&[&app_commit], &[], &remote_out));
        offline.push(once(&[&app], &["--offline"], &remote_out));
    }
    let best = |runs: Vec<Usage>| runs.into_iter().min_by_key(|u| u.wall).unwrap();
    let (local, warm, pinned, offline) = (best(local), best(warm), best(pinned), best(offline));
    let same_as_local = std::fs::read(&local_out).unwrap() == std::fs::read(&remote_out).unwrap();
    let kubectl = reference::find().map(|k| run(&mut reference::command(&k, &app), &kubectl_out).expect("kubectl runs"));
    let same_as_kubectl = kubectl.map(|_| std::fs::read(&kubectl_out).unwrap() == std::fs::read(&remote_out).unwrap());

    let ratio = |u: Usage| u.wall.as_secs_f64() / local.wall.as_secs_f64();
    let both = |u: Usage| format!("{} ({} CPU)", seconds(u.wall), seconds(u.cpu));
    println!("| apps | local build | remote, cold cache | remote, warm (tag: one ls-remote) | ratio | remote, warm (commit id) | ratio | remote, --offline | ratio | kubectl kustomize (remote) | same bytes as local | same bytes as kubectl |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|");
    println!(
        "| {apps} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {:.2} | {} | {} | {} |",
        both(local),
        seconds(cold.wall),
        both(warm),
        ratio(warm),
        both(pinned),
        ratio(pinned),
        both(offline),
        ratio(offline),
        kubectl.map_or("-".into(), |k| seconds(k.wall)),
        if same_as_local { "yes" } else { "DIFFERS" },
        same_as_kubectl.map_or("not checked".into(), |s| if s { "yes".to_string() } else { "DIFFERS".to_string() }),
    );
    if !same_as_local || same_as_kubectl == Some(false) {
        std::process::exit(1);
    }
}
