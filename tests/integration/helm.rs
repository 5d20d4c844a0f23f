//! `helmCharts` against the reference kustomize, both running the same `helm`: the real helm 4 and
//! helm 3 that `tools/go-clients.sh` builds from their modules (the `client_` tests), and the
//! stand-in on helm-python-sdk (`tools/helm-standin/helm`) for a machine without Go. Each case
//! folder under `tests/helm/cases` is built by both, each in its own copy (so that each pulls its
//! own charts), and the outputs must be the same bytes; the error cases must fail alike, with the
//! same message once the random temporary folder is set aside.
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, Run, TempTree};
use crate::go_clients;

/// The `helm` the builds run: a real one, or the stand-in with the Python that has helm_python.
struct Helm {
    command: PathBuf,
    /// The stand-in's Python; None for a real helm.
    python: Option<String>,
}

impl Helm {
    /// The stand-in, or a visible skip.
    fn find(label: &str) -> Option<Helm> {
        let standin = common::manifest_dir().join("tools/helm-standin/helm");
        let python = std::env::var("PEERPODS_HELM_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
        let works = std::process::Command::new(&python).args(["-c", "import helm_python"]).output().is_ok_and(|o| o.status.success());
        if !works {
            common::skip(label, &format!("{python} cannot import helm_python (install helm-python-sdk, or set PEERPODS_HELM_PYTHON)"));
            return None;
        }
        Some(Helm { command: standin, python: Some(python) })
    }

    /// A real helm (`go_clients::HELM4` or `HELM3`), or a visible skip.
    fn real(label: &str, client: &str) -> Option<Helm> {
        let (command, _) = go_clients::client(label, client)?;
        Some(Helm { command, python: None })
    }

    fn env(&self) -> Vec<(&str, &str)> {
        match &self.python {
            Some(python) => vec![("PEERPODS_HELM_PYTHON", python.as_str())],
            None => Vec::new(),
        }
    }

    fn command(&self) -> &str {
        self.command.to_str().expect("UTF-8 path")
    }

    fn is_standin(&self) -> bool {
        self.python.is_some()
    }

    /// Packages `chart` into `dir` and writes the chart repository's index for `url`.
    fn package_into_repository(&self, chart: &Path, dir: &Path, url: &str) {
        let (chart, dir) = (chart.to_str().unwrap(), dir.to_str().unwrap());
        let made = match &self.python {
            Some(python) => {
                let script = "import sys, helm_python as h\nh.package(sys.argv[1], destination=sys.argv[2])\nh.repo_index_generate(sys.argv[2], base_url=sys.argv[3])\n";
                common::run_program(python, &["-c", script, chart, dir, url], Path::new(dir))
            }
            None => {
                let packaged = common::run_program(self.command(), &["package", chart, "--destination", dir], Path::new(dir));
                if !packaged.success() {
                    packaged
                } else {
                    common::run_program(self.command(), &["repo", "index", dir, "--url", url], Path::new(dir))
                }
            }
        };
        assert!(made.success(), "packaging the test chart: {}", made.stderr);
    }
}

/// The test charts (`tests/helm/charts`), copied into every case that has charts.
const CHARTS: [&str; 3] = ["app", "plain", "service"];

/// The charts each case needs, and where (relative to the case folder).
fn chart_places(case: &str) -> Vec<&'static str> {
    match case {
        "inherited-namespace" | "shared-base" | "namespace-three-levels" => vec!["base/charts"],
        "component" => vec!["monitoring/charts"],
        "chart-home" => vec!["vendor/charts"],
        // Outside the kustomization's folder, which the default values file must not be.
        "error-chart-home-outside" => vec!["outside-charts"],
        "overlay-on-chart" | "repository" | "error-pull-version" | "no-charts" => vec![],
        _ => vec!["charts"],
    }
}

/// Copies the test charts where the case `case` (a folder of `root`) wants them.
fn place_charts(root: &Path, case: &str) {
    for place in chart_places(case) {
        for chart in CHARTS {
            common::copy_dir(&common::manifest_dir().join("tests/helm/charts").join(chart), &root.join(case).join(place).join(chart));
        }
    }
}

/// A copy of every case, with its charts in place.
fn cases_tree(label: &str, port: u16) -> TempTree {
    let tree = TempTree::new(label);
    let cases = common::manifest_dir().join("tests/helm/cases");
    common::copy_dir(&cases, &tree.root);
    for entry in fs::read_dir(&cases).unwrap() {
        place_charts(&tree.root, &entry.unwrap().file_name().to_string_lossy());
    }
    for case in ["repository", "error-pull-version"] {
        let file = tree.root.join(case).join("kustomization.yaml");
        let text = fs::read_to_string(&file).unwrap().replace("PORT", &port.to_string());
        fs::write(&file, text).unwrap();
    }
    tree
}

/// Whether there is a reference to compare with, of kustomize v5.8 or later: the helm rules
/// followed are v5.8.1's (version check, namespaces), which an older one breaks. Else a skip.
fn reference_follows_v5_8(label: &str) -> bool {
    let Some(reference) = common::reference() else {
        common::skip(label, common::NO_REFERENCE);
        return false;
    };
    let version = std::process::Command::new(&reference[0]).args(["version", "--client"]).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    if ["v5.5.", "v5.6.", "v5.7."].iter().any(|old| version.contains(old)) {
        common::skip(label, "the reference is older than kustomize v5.8 (set PEERPODS_REFERENCE_KUSTOMIZE to a v5.8.1 one)");
        return false;
    }
    true
}

fn reference_build(dir: &Path, flags: &[&str], helm: &Helm, extra_env: &[(&str, &str)]) -> Option<Run> {
    let command = common::reference()?;
    let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    args.extend_from_slice(flags);
    args.push(dir.to_str().unwrap());
    let mut env = helm.env();
    env.extend_from_slice(extra_env);
    Some(common::run_program_env(&command[0], &args, dir, &env))
}

fn our_build(dir: &Path, flags: &[&str], helm: &Helm, cache: &Path, extra_env: &[(&str, &str)]) -> Run {
    let mut args = vec!["build", "--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.push(dir.to_str().unwrap());
    let mut env = helm.env();
    env.extend_from_slice(extra_env);
    common::ours_env(&args, dir, &env)
}

/// The error message without the program's own prefix and with the temporary folder named
/// alike; ours also without the words naming the kustomization and chart, which kustomize lacks.
fn normalized_error(stderr: &str, root: &Path) -> String {
    let text = stderr.lines().filter(|l| !l.starts_with("SKIP") && !l.starts_with("# Warning")).collect::<Vec<_>>().join("\n");
    let text = text.strip_prefix("error: ").or_else(|| text.strip_prefix("Error: ")).unwrap_or(&text);
    let temp = regex::Regex::new(r"kustomize-helm-[A-Za-z0-9]+").unwrap();
    let ours = regex::Regex::new(r"[^ '`]*kustomization\.yaml: (helmCharts|HelmChartInflationGenerator) '[^']*': |[^ '`]*helm\.yaml: HelmChartInflationGenerator '[^']*': ").unwrap();
    let text = text.replace(root.to_str().unwrap(), "ROOT");
    ours.replace_all(&temp.replace_all(&text, "kustomize-helm-TMP"), "").trim().to_string()
}

/// Builds `dir` (relative to each copy) with both programs and compares.
fn compare(case: &str, flags: &[&str], extra_env: &[(&str, &str)], theirs: &Path, mine: &Path, helm: &Helm, cache: &Path) -> Result<(), String> {
    let mut all = vec!["--enable-helm"];
    if !flags.contains(&"--helm-command") {
        all.extend(["--helm-command", helm.command()]);
    }
    all.extend_from_slice(flags);
    let all: Vec<&str> = if flags.contains(&"--no-enable-helm") { flags.iter().copied().filter(|f| *f != "--no-enable-helm").collect() } else { all };
    let Some(reference) = reference_build(&theirs.join(case), &all, helm, extra_env) else { return Ok(()) };
    let ours = our_build(&mine.join(case), &all, helm, cache, extra_env);
    if reference.success() != ours.success() {
        return Err(format!(
            "{case} {flags:?}: reference exit {:?}, ours {:?}\n--- reference stderr:\n{}\n--- our stderr:\n{}\n--- our stdout:\n{}",
            reference.code, ours.code, reference.stderr, ours.stderr, ours.stdout
        ));
    }
    if reference.success() {
        if reference.stdout != ours.stdout {
            return Err(format!("{case} {flags:?}: outputs differ\n--- reference:\n{}\n--- ours:\n{}", reference.stdout, ours.stdout));
        }
        if reference.stdout.trim().is_empty() {
            return Err(format!("{case}: the reference printed nothing"));
        }
    } else {
        let (want, got) = (normalized_error(&reference.stderr, theirs), normalized_error(&ours.stderr, mine));
        if want != got {
            return Err(format!("{case} {flags:?}: errors differ\n--- reference:\n{want}\n--- ours:\n{got}"));
        }
    }
    Ok(())
}

/// A chart repository on 127.0.0.1 serving a folder, for a bounded time.
struct Repository {
    port: u16,
    stop: Arc<AtomicBool>,
    _dir: tempfile::TempDir,
}

impl Repository {
    fn start(helm: &Helm) -> Repository {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let chart = common::manifest_dir().join("tests/helm/charts/app");
        helm.package_into_repository(&chart, dir.path(), &format!("http://127.0.0.1:{port}"));
        let stop = Arc::new(AtomicBool::new(false));
        let (root, stopped) = (dir.path().to_path_buf(), Arc::clone(&stop));
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(300);
            while !stopped.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => serve(stream, &root),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Repository { port, stop, _dir: dir }
    }
}

impl Drop for Repository {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(stream: std::net::TcpStream, root: &Path) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
    let mut stream = stream;
    let file = root.join(&path);
    match (path.contains(".."), fs::read(&file)) {
        (false, Ok(body)) => {
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(&body);
        }
        _ => {
            let _ = write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    }
}

/// (case folder to build, extra flags, extra environment)
const CASES: &[(&str, &[&str], &[(&str, &str)])] = &[
    ("defaults", &[], &[]),
    ("generated-name", &[], &[]),
    ("inline-override", &[], &[]),
    ("inline-merge", &[], &[]),
    ("inline-replace", &[], &[]),
    ("values-file", &[], &[]),
    ("additional-values", &[], &[]),
    ("crds", &[], &[]),
    ("skip-tests", &[], &[]),
    ("skip-hooks", &[], &[]),
    ("chart-namespace", &[], &[]),
    ("kustomization-namespace", &[], &[]),
    ("inherited-namespace/overlay", &[], &[]),
    // kustomize's own namespace tests (api/krusty/helmchartinflationgenerator_test.go), as cases.
    ("namespace-three-levels/overlay", &[], &[]),
    ("namespace-same", &[], &[]),
    ("versions-fields", &[], &[]),
    ("versions-fields", &["--helm-kube-version", "v1.31.2", "--helm-api-versions", "example.com/v2"], &[]),
    ("defaults", &["--helm-kube-version", "1.30.0", "--helm-api-versions", "monitoring.coreos.com/v1", "--helm-api-versions", "apps/v1"], &[]),
    ("several-charts", &[], &[]),
    ("component", &[], &[]),
    ("shared-base/staging", &[], &[]),
    ("shared-base/production", &[], &[]),
    ("chart-home", &[], &[]),
    ("deprecated-generator", &[], &[]),
    ("builtin-generator", &[], &[]),
    ("name-template", &[], &[]),
    ("overlay-on-chart", &[], &[]),
    ("origin-annotations", &[], &[]),
    ("repository", &[], &[]),
    // Argo CD passes the helm flags to every Application, with or without charts.
    ("no-charts", &["--helm-kube-version", "v1.31.0", "--helm-api-versions", "v1"], &[]),
    ("no-charts", &["--no-enable-helm"], &[]),
    // Errors.
    ("error-missing-chart", &[], &[]),
    ("error-values-not-yaml", &[], &[]),
    ("error-template", &[], &[]),
    ("error-merge-mode", &[], &[]),
    ("error-no-name", &[], &[]),
    ("error-values-outside", &[], &[]),
    ("error-bad-release", &[], &[]),
    ("error-chart-home-outside/kustomization", &[], &[]),
    ("error-pull-version", &[], &[]),
    ("defaults", &["--no-enable-helm"], &[]),
    ("defaults", &["--helm-command", "no-such-helm-program"], &[]),
    ("defaults", &[], &[("PEERPODS_HELM_STANDIN_VERSION", "v2.17.0")]),
];

#[test]
fn helm_charts_render_as_the_reference_renders_them() {
    let label = "helm charts against the reference (helm stand-in)";
    if let Some(helm) = Helm::find(label) {
        render_cases_as_the_reference(label, &helm);
    }
}

#[test]
fn client_helm4_charts_render_as_the_reference_renders_them() {
    let label = "helm charts against the reference (helm 4)";
    if let Some(helm) = Helm::real(label, go_clients::HELM4) {
        render_cases_as_the_reference(label, &helm);
    }
}

#[test]
fn client_helm3_charts_render_as_the_reference_renders_them() {
    let label = "helm charts against the reference (helm 3)";
    if let Some(helm) = Helm::real(label, go_clients::HELM3) {
        render_cases_as_the_reference(label, &helm);
    }
}

/// Every case of `CASES` built by the reference and by us, both running `helm`. The cases that
/// set the stand-in's reported version run only with the stand-in.
fn render_cases_as_the_reference(label: &str, helm: &Helm) {
    if !reference_follows_v5_8(label) {
        return;
    }
    let cases: Vec<_> = CASES.iter().filter(|(_, _, env)| helm.is_standin() || env.iter().all(|(k, _)| *k != "PEERPODS_HELM_STANDIN_VERSION")).collect();
    let repository = Repository::start(helm);
    let (theirs, mine) = (cases_tree("helm-ref", repository.port), cases_tree("helm-ours", repository.port));
    let cache = tempfile::tempdir().unwrap();
    // Four at a time: most of the time goes to starting the stand-in's Python.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let number = next.fetch_add(1, Ordering::SeqCst);
                let Some((case, flags, env)) = cases.get(number) else { break };
                // A cache of its own for each case: the render cache is tested apart.
                let cache = cache.path().join(number.to_string());
                if let Err(e) = compare(case, flags, env, &theirs.root, &mine.root, helm, &cache) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(mine.root.join("repository/charts/app-1.2.0/app/Chart.yaml").is_file(), "the chart was pulled into chartHome/<name>-<version>");
    assert!(failures.is_empty(), "{} of {} helm cases differ from the reference:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

/// A case folder with its charts, alone in a scratch tree.
fn one_case(label: &str, case: &str) -> TempTree {
    let tree = TempTree::new(label);
    common::copy_dir(&common::manifest_dir().join("tests/helm/cases").join(case), &tree.root.join(case));
    place_charts(&tree.root, case);
    tree
}

#[test]
fn a_repeated_build_reuses_the_rendering_without_running_helm() {
    let label = "helm render cache (helm stand-in)";
    if let Some(helm) = Helm::find(label) {
        reuse_the_rendering(label, &helm);
    }
}

#[test]
fn client_helm4_a_repeated_build_reuses_the_rendering_without_running_helm() {
    let label = "helm render cache (helm 4)";
    if let Some(helm) = Helm::real(label, go_clients::HELM4) {
        reuse_the_rendering(label, &helm);
    }
}

/// A `helm` that runs the program `$PEERPODS_TEST_HELM` names: the same program (and so the same
/// remembered version) whether the helm behind it can run or not.
fn helm_wrapper(tree: &TempTree) -> PathBuf {
    let wrapper = tree.write("helm-wrapper", "#!/bin/sh\nexec \"$PEERPODS_TEST_HELM\" \"$@\"\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    }
    wrapper
}

fn reuse_the_rendering(label: &str, helm: &Helm) {
    let tree = one_case("helm-cache", "inline-override");
    let dir = tree.root.join("inline-override");
    let cache = tree.root.join("cache");
    let wrapper = helm_wrapper(&tree);
    let flags = ["--enable-helm", "--helm-command", wrapper.to_str().unwrap()];
    let working = [("PEERPODS_TEST_HELM", helm.command())];
    let cold = our_build(&dir, &flags, helm, &cache, &working);
    assert!(cold.success(), "{label}: {}", cold.stderr);
    assert!(cold.stdout.contains("kind: Deployment"), "{}", cold.stdout);
    // A helm that can no longer start: any helm call would fail the build.
    let broken = [("PEERPODS_TEST_HELM", "/nonexistent/helm")];
    let warm = our_build(&dir, &flags, helm, &cache, &broken);
    assert!(warm.success(), "the warm build ran helm: {}", warm.stderr);
    assert_eq!(warm.stdout, cold.stdout);
    let offline = our_build(&dir, &["--enable-helm", "--helm-command", wrapper.to_str().unwrap(), "--offline"], helm, &cache, &broken);
    assert!(offline.success(), "{}", offline.stderr);
    assert_eq!(offline.stdout, cold.stdout);

    // Another value is another rendering: helm runs again (and, broken, fails).
    let kustomization = dir.join("kustomization.yaml");
    let text = fs::read_to_string(&kustomization).unwrap();
    fs::write(&kustomization, text.replace("replicas: 3", "replicas: 4")).unwrap();
    let changed = our_build(&dir, &flags, helm, &cache, &broken);
    assert!(!changed.success(), "a changed value reused the old rendering:\n{}", changed.stdout);
    let offline = our_build(&dir, &["--enable-helm", "--helm-command", wrapper.to_str().unwrap(), "--offline"], helm, &cache, &broken);
    assert!(!offline.success());
    assert!(offline.stderr.contains("--offline: chart 'app' has no rendering in the cache"), "{}", offline.stderr);
    // A changed chart file is a changed rendering too.
    fs::write(&kustomization, text).unwrap();
    fs::write(dir.join("charts/app/templates/extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n").unwrap();
    let edited = our_build(&dir, &flags, helm, &cache, &working);
    assert!(edited.success(), "{}", edited.stderr);
    assert!(edited.stdout.contains("name: extra"), "{}", edited.stdout);

    let listed = common::ours(&["cache", "list", "--cache-dir", cache.to_str().unwrap()], &tree.root);
    assert!(listed.success(), "{}", listed.stderr);
    let renderings: Vec<&str> = listed.stdout.lines().filter(|l| l.starts_with("helm\t")).collect();
    // The first rendering and the one with the edited chart (the failed build stored nothing).
    assert_eq!(renderings.len(), 2, "{}", listed.stdout);
    assert!(renderings.iter().all(|l| l.contains("\tapp release=web helm=")), "{}", listed.stdout);
    let cleared = common::ours(&["cache", "clear", "--cache-dir", cache.to_str().unwrap()], &tree.root);
    assert!(cleared.success(), "{}", cleared.stderr);
    assert!(cleared.stderr.contains("2 helm rendering(s)"), "{}", cleared.stderr);
    let listed = common::ours(&["cache", "list", "--cache-dir", cache.to_str().unwrap()], &tree.root);
    assert!(!listed.stdout.contains("helm\t"), "{}", listed.stdout);
}

#[test]
fn the_render_cache_is_private_and_refused_when_others_may_write_it() {
    let label = "helm render cache folder (helm stand-in)";
    let Some(helm) = Helm::find(label) else { return };
    let tree = one_case("helm-cache-private", "inline-override");
    let dir = tree.root.join("inline-override");
    let cache = tree.root.join("cache");
    let flags = ["--enable-helm", "--helm-command", helm.command()];
    let built = our_build(&dir, &flags, &helm, &cache, &[]);
    assert!(built.success(), "{}", built.stderr);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&cache).unwrap().permissions().mode() & 0o777, 0o700, "the render cache's folder is not private");
    // Writable by others: anyone could plant a rendering under a key they can compute.
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o777)).unwrap();
    for extra in [&[][..], &["--offline"][..]] {
        let refused = our_build(&dir, &[&flags[..], extra].concat(), &helm, &cache, &[]);
        assert!(!refused.success(), "{extra:?}: rendered through a cache others may write:\n{}", refused.stdout);
        assert!(refused.stderr.contains("the helm render cache") && refused.stderr.contains("writable by its group or others"), "{extra:?}: {}", refused.stderr);
    }
}

#[test]
fn helm_runs_only_under_enable_helm_and_a_chart_is_needed_to_run_it() {
    let label = "helm flags";
    let Some(helm) = Helm::find(label) else { return };
    let tree = one_case("helm-flags", "no-charts");
    let dir = tree.root.join("no-charts");
    let cache = tree.root.join("cache");
    // Argo CD's flags with no chart: an ordinary build, and no helm is needed.
    let argo = our_build(&dir, &["--enable-helm", "--helm-command", "/nonexistent/helm", "--helm-kube-version", "v1.31.0", "--helm-api-versions", "v1", "--helm-api-versions", "apps/v1"], &helm, &cache, &[]);
    assert!(argo.success(), "{}", argo.stderr);
    let plain = our_build(&dir, &[], &helm, &cache, &[]);
    assert_eq!(argo.stdout, plain.stdout);
    // A release name helm would take for a flag is refused before helm runs.
    let tree = one_case("helm-dash", "defaults");
    let dir = tree.root.join("defaults");
    fs::write(dir.join("kustomization.yaml"), "helmCharts:\n- name: app\n  releaseName: --debug\n").unwrap();
    let dashed = our_build(&dir, &["--enable-helm", "--helm-command", helm.command()], &helm, &cache, &[]);
    assert!(!dashed.success());
    assert!(dashed.stderr.contains("releaseName must not start with '-', got \"--debug\""), "{}", dashed.stderr);
    assert!(dashed.stderr.contains("kustomization.yaml: helmCharts 'app'"), "the error names the kustomization and the chart: {}", dashed.stderr);
}

#[test]
fn the_peer_pods_example_inflates_the_upstream_chart_as_the_reference_does() {
    let label = "peer pods chart example (helm stand-in)";
    if let Some(helm) = Helm::find(label) {
        peer_pods_example(label, &helm);
    }
}

fn peer_pods_example(label: &str, helm: &Helm) {
    let Some(shared) = common::shared_dir(label) else { return };
    if !shared.join("realworld/cloud-api-adaptor-install/charts/peerpods/Chart.yaml").is_file() {
        common::skip(label, "the upstream chart is not in ../shared/realworld/cloud-api-adaptor-install/charts");
        return;
    }
    let example = common::manifest_dir().join("docs/examples/peerpods-helm");
    let cache = tempfile::tempdir().unwrap();
    let flags = ["--enable-helm", "--helm-command", helm.command()];
    let ours = our_build(&example.join("libvirt"), &flags, helm, cache.path(), &[]);
    assert!(ours.success(), "{}", ours.stderr);
    // The owned overlay is applied on top of the chart's output.
    assert!(ours.stdout.contains("PROXY_TIMEOUT: 15m"), "{}", ours.stdout);
    assert!(ours.stdout.contains("image: quay.io/confidential-containers/cloud-api-adaptor:v0.18.0"), "{}", ours.stdout);
    assert!(ours.stdout.contains("CLOUD_PROVIDER: libvirt"), "{}", ours.stdout);
    if !reference_follows_v5_8(label) {
        return;
    }
    let reference = reference_build(&example.join("libvirt"), &flags, helm, &[]).expect("a reference");
    assert!(reference.success(), "{}", reference.stderr);
    assert_eq!(ours.stdout, reference.stdout, "the example differs from the reference's rendering");
}

#[test]
fn a_slow_chart_pull_prints_one_progress_line_unless_quiet() {
    let label = "helm pull progress";
    let Some(helm) = Helm::find(label) else { return };
    let repository = Repository::start(&helm);
    let tree = one_case("helm-progress", "repository");
    let file = tree.root.join("repository/kustomization.yaml");
    let text = fs::read_to_string(&file).unwrap().replace("PORT", &repository.port.to_string());
    fs::write(&file, text).unwrap();
    // A helm whose pull takes longer than the progress line's delay.
    let slow = tree.write("slow-helm", &format!("#!/bin/sh\nif [ \"$1\" = pull ]; then sleep 2; fi\nexec '{}' \"$@\"\n", helm.command()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&slow, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let dir = tree.root.join("repository");
    let mut outputs = Vec::new();
    for (extra, lines_wanted) in [("--progress", 1), ("--quiet", 0)] {
        // A fresh chart home and cache each time, so that helm pulls again.
        let _ = fs::remove_dir_all(dir.join("charts"));
        let cache = tree.root.join(format!("cache{extra}"));
        let flags = ["--enable-helm", "--helm-command", slow.to_str().unwrap(), extra];
        let run = our_build(&dir, &flags, &helm, &cache, &[]);
        assert!(run.success(), "{extra}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("fetching ")).collect();
        assert_eq!(lines.len(), lines_wanted, "{extra}: {}", run.stderr);
        if let Some(line) = lines.first() {
            assert!(line.contains("chart app 1.2.0 from http://127.0.0.1:"), "{line}");
        }
        assert!(!run.stdout.contains("fetching"), "{extra}: the line went to stdout");
        outputs.push(run.stdout);
    }
    assert_eq!(outputs[0], outputs[1], "the progress line changed the output");
}

/// Argo CD's build: `--helm-kube-version` and one `--helm-api-versions` per API version the
/// cluster serves, 2,000 of them here, through the reference and us to the real helm 4.
#[test]
fn client_helm4_two_thousand_api_versions_reach_helm_as_the_reference_passes_them() {
    let label = "helm --helm-api-versions 2,000 times (helm 4)";
    let Some(helm) = Helm::real(label, go_clients::HELM4) else { return };
    if !reference_follows_v5_8(label) {
        return;
    }
    let (theirs, mine) = (one_case("helm-argo-ref", "defaults"), one_case("helm-argo-ours", "defaults"));
    let versions: Vec<String> = (0..1999).map(|i| format!("group{i}.example.com/v1")).chain(["monitoring.coreos.com/v1".to_string()]).collect();
    let mut flags = vec!["--helm-kube-version", "v1.35.1"];
    for version in &versions {
        flags.extend(["--helm-api-versions", version.as_str()]);
    }
    let cache = tempfile::tempdir().unwrap();
    compare("defaults", &flags, &[], &theirs.root, &mine.root, &helm, cache.path()).unwrap_or_else(|e| panic!("{e}"));
    let ours = our_build(&mine.root.join("defaults"), &[&["--enable-helm", "--helm-command", helm.command()][..], &flags[..]].concat(), &helm, cache.path(), &[]);
    assert!(ours.success(), "{}", ours.stderr);
    // The chart saw the last API version and the Kubernetes version.
    assert!(ours.stdout.contains("kind: ServiceMonitor"), "{}", ours.stdout);
    assert!(ours.stdout.contains("kubeVersion: v1.35.1"), "{}", ours.stdout);
}

/// The render cache's key holds helm's version: helm 3 after helm 4 on the same chart renders
/// again, and both renderings are kept.
#[test]
fn client_helm3_and_helm4_keep_renderings_of_their_own() {
    let label = "helm render cache key (helm 3 and 4)";
    let (Some(helm4), Some(helm3)) = (Helm::real(label, go_clients::HELM4), Helm::real(label, go_clients::HELM3)) else { return };
    let tree = one_case("helm-key", "defaults");
    let dir = tree.root.join("defaults");
    let cache = tree.root.join("cache");
    let mut outputs = Vec::new();
    for helm in [&helm4, &helm3, &helm4] {
        let run = our_build(&dir, &["--enable-helm", "--helm-command", helm.command()], helm, &cache, &[]);
        assert!(run.success(), "{}", run.stderr);
        outputs.push(run.stdout);
    }
    assert_eq!(outputs[0], outputs[2]);
    let listed = common::ours(&["cache", "list", "--cache-dir", cache.to_str().unwrap()], &tree.root);
    let renderings: Vec<&str> = listed.stdout.lines().filter(|l| l.starts_with("helm\t")).collect();
    assert_eq!(renderings.len(), 2, "{}", listed.stdout);
    assert!(renderings.iter().any(|l| l.contains("helm=v4.")) && renderings.iter().any(|l| l.contains("helm=v3.")), "{}", listed.stdout);
}

/// The stand-in renders every case as helm 4 does (our build through each), so the tests that run
/// on a machine without Go still check the real behaviour.
#[test]
fn client_the_standin_renders_every_case_as_helm4_does() {
    let label = "helm stand-in against helm 4";
    let (Some(real), Some(standin)) = (Helm::real(label, go_clients::HELM4), Helm::find(label)) else { return };
    let repository = Repository::start(&real);
    let (with_real, with_standin) = (cases_tree("helm-real", repository.port), cases_tree("helm-standin", repository.port));
    let cache = tempfile::tempdir().unwrap();
    let mut differences = Vec::new();
    for (number, (case, flags, env)) in CASES.iter().enumerate() {
        if env.iter().any(|(k, _)| *k == "PEERPODS_HELM_STANDIN_VERSION") || flags.contains(&"--helm-command") || flags.contains(&"--no-enable-helm") {
            continue;
        }
        let run = |helm: &Helm, root: &Path, which: &str| {
            let all = [&["--enable-helm", "--helm-command", helm.command()][..], &flags[..]].concat();
            our_build(&root.join(case), &all, helm, &cache.path().join(format!("{which}{number}")), env)
        };
        let (a, b) = (run(&real, &with_real.root, "real"), run(&standin, &with_standin.root, "standin"));
        if a.success() != b.success() || (a.success() && a.stdout != b.stdout) {
            differences.push(format!("{case} {flags:?}:\n--- helm 4 ({:?}):\n{}{}\n--- stand-in ({:?}):\n{}{}", a.code, a.stdout, a.stderr, b.code, b.stdout, b.stderr));
        }
    }
    assert!(differences.is_empty(), "the stand-in renders {} case(s) unlike helm 4:\n\n{}", differences.len(), differences.join("\n\n"));
}

/// Real helm refuses the upstream peer pods chart as the example uses it: its dependencies
/// (kata-deploy, and the two local subcharts) are not in its `charts/` folder, which helm checks
/// even for a dependency a condition turns off. The stand-in does not check, so the example renders
/// only there; the reference and we fail alike, with helm's own message.
#[test]
fn client_helm4_refuses_the_peer_pods_example_chart_without_its_dependencies_as_the_reference_does() {
    let label = "peer pods chart example (helm 4)";
    let Some(helm) = Helm::real(label, go_clients::HELM4) else { return };
    let Some(shared) = common::shared_dir(label) else { return };
    if !shared.join("realworld/cloud-api-adaptor-install/charts/peerpods/Chart.yaml").is_file() {
        common::skip(label, "the upstream chart is not in ../shared/realworld/cloud-api-adaptor-install/charts");
        return;
    }
    let example = common::manifest_dir().join("docs/examples/peerpods-helm/libvirt");
    let cache = tempfile::tempdir().unwrap();
    let flags = ["--enable-helm", "--helm-command", helm.command()];
    let ours = our_build(&example, &flags, &helm, cache.path(), &[]);
    let helm_says = "found in Chart.yaml, but missing in charts/ directory: kata-deploy, peerpodctrl, peerpods-webhook";
    assert!(!ours.success() && ours.stderr.contains(helm_says), "{}", ours.stderr);
    if !reference_follows_v5_8(label) {
        return;
    }
    let reference = reference_build(&example, &flags, &helm, &[]).expect("a reference");
    assert!(!reference.success() && reference.stderr.contains(helm_says), "{}", reference.stderr);
}

/// An OCI registry on 127.0.0.1 over TLS (`tests/helm/oci/registry.py`), holding the test chart
/// `app` 1.2.0 as `charts/app`; helm trusts its certificate through `SSL_CERT_FILE`.
struct OciRegistry {
    port: u16,
    child: std::process::Child,
    dir: tempfile::TempDir,
}

impl OciRegistry {
    fn start(helm: &Helm) -> OciRegistry {
        let dir = tempfile::tempdir().unwrap();
        let chart = common::manifest_dir().join("tests/helm/charts/app");
        let packaged = common::run_program(helm.command(), &["package", chart.to_str().unwrap(), "--destination", dir.path().to_str().unwrap()], dir.path());
        assert!(packaged.success(), "{}", packaged.stderr);
        let certificate = common::run_program(
            "openssl",
            &["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            dir.path(),
        );
        assert!(certificate.success(), "openssl: {}", certificate.stderr);
        let script = common::manifest_dir().join("tests/helm/oci/registry.py");
        let child = std::process::Command::new("python3")
            .args([script.to_str().unwrap(), "app-1.2.0.tgz", "charts/app", "1.2.0", "cert.pem", "key.pem", "port"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("starting tests/helm/oci/registry.py");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            if let Ok(text) = fs::read_to_string(dir.path().join("port")) {
                break text.trim().parse().expect("a port number");
            }
            assert!(Instant::now() < deadline, "the OCI registry did not start within a minute");
            std::thread::sleep(Duration::from_millis(50));
        };
        OciRegistry { port, child, dir }
    }

    fn certificate(&self) -> String {
        self.dir.path().join("cert.pem").to_str().unwrap().to_string()
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `repo: oci://...`: the reference and we pull the chart from the registry and render it alike.
fn pull_from_an_oci_registry(label: &str, helm: &Helm) {
    if !reference_follows_v5_8(label) {
        return;
    }
    let registry = OciRegistry::start(helm);
    let kustomization = format!("helmCharts:\n- name: app\n  version: 1.2.0\n  repo: oci://127.0.0.1:{}/charts\n  releaseName: pulled\n", registry.port);
    let (theirs, mine) = (TempTree::new("helm-oci-ref"), TempTree::new("helm-oci-ours"));
    for tree in [&theirs, &mine] {
        tree.write("oci/kustomization.yaml", &kustomization);
    }
    let cache = tempfile::tempdir().unwrap();
    let certificate = registry.certificate();
    let env = [("SSL_CERT_FILE", certificate.as_str())];
    compare("oci", &[], &env, &theirs.root, &mine.root, helm, cache.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(mine.root.join("oci/charts/app-1.2.0/app/Chart.yaml").is_file(), "the chart was pulled into chartHome/<name>-<version>");
    let again = our_build(&mine.root.join("oci"), &["--enable-helm", "--helm-command", helm.command()], helm, cache.path(), &env);
    assert!(again.success() && again.stdout.contains("kind: Deployment"), "{}{}", again.stdout, again.stderr);
}

#[test]
fn client_helm4_pulls_from_an_oci_registry_as_the_reference_does() {
    let label = "helm pull from an OCI registry (helm 4)";
    if let Some(helm) = Helm::real(label, go_clients::HELM4) {
        pull_from_an_oci_registry(label, &helm);
    }
}

#[test]
fn client_helm3_pulls_from_an_oci_registry_as_the_reference_does() {
    let label = "helm pull from an OCI registry (helm 3)";
    if let Some(helm) = Helm::real(label, go_clients::HELM3) {
        pull_from_an_oci_registry(label, &helm);
    }
}
