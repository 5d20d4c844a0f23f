//! Remote bases: git URLs (file:// and smart HTTP through `git http-backend` on 127.0.0.1) and
//! HTTP files, compared byte for byte with the reference; the cache (reuse with the origin gone,
//! `--offline`, parallel builds, killed fetches, damaged entries); confinement; error messages;
//! the private-overlay example of docs/peerpods.md.
//!
//! Everything is served from this machine: bare repositories made here, and a small HTTP server
//! each test starts and stops.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{bin, git, ours, ours_env, reference, run_program_env, Run, TempTree};

/// Whether git is here; without it (a user's machine) the test says SKIP, under CI it fails.
fn have_git(label: &str) -> bool {
    let present = Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        crate::common::skip(label, "no git program");
    }
    present
}

/// The reference, or None (SKIP on a user's machine, a failure under CI).
fn reference_here(label: &str) -> Option<&'static [String]> {
    let found = reference();
    if found.is_none() {
        crate::common::skip(label, "no reference kustomize; checked against our own cached/uncached builds only");
    }
    found
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: myapp-pod\n  labels:\n    app: myapp\nspec:\n  containers:\n  - name: nginx\n    image: nginx:1.7.9\n";

/// Bare repositories under `repos/` (the HTTP server's git root) made from `work/`:
/// `repo.git`, `nosuffix` and `_git/repo` (same history), with `main` (annotated tag `v2`), the lightweight
/// tag `v1` and the branch `change-image`.
pub(super) struct Repos {
    pub(super) tree: TempTree,
    /// The commit `v1` names.
    v1: String,
}

impl Repos {
    /// The repositories, or None (after saying SKIP) where there is no git.
    pub(super) fn or_skip(label: &str) -> Option<Repos> {
        have_git(label).then(|| Repos::new(label))
    }

    fn new(label: &str) -> Repos {
        let tree = TempTree::new(label);
        tree.write("work/base/kustomization.yaml", "resources:\n- pod.yaml\nconfigMapGenerator:\n- name: settings\n  literals:\n  - MODE=base\n");
        tree.write("work/base/pod.yaml", POD);
        tree.write("work/dev/kustomization.yaml", "resources:\n- ../base\nnamePrefix: dev-\n");
        tree.write(
            "work/component/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs:\n    team: remote\ncommonAnnotations:\n  from: component\n",
        );
        tree.write("work/kustomization.yaml", "resources:\n- base/pod.yaml\n");
        tree.write("work/escape/kustomization.yaml", "resources:\n- ../..\n");
        tree.write("work/escape-file/kustomization.yaml", "resources:\n- ../../complete\n");
        let work = tree.path("work");
        git(&work, &["init", "-q"]);
        git(&work, &["add", "."]);
        git(&work, &["commit", "-qm", "first"]);
        git(&work, &["tag", "v1"]);
        let v1 = git(&work, &["rev-parse", "HEAD"]).trim().to_string();
        git(&work, &["checkout", "-qb", "change-image"]);
        tree.write("work/dev/kustomization.yaml", "resources:\n- ../base\nnamePrefix: dev-\nimages:\n- name: nginx\n  newTag: \"2\"\n");
        git(&work, &["commit", "-qam", "image"]);
        git(&work, &["checkout", "-q", "main"]);
        tree.write("work/base/pod.yaml", &POD.replace("myapp-pod", "myapp-pod-v2"));
        git(&work, &["commit", "-qam", "second"]);
        git(&work, &["tag", "-a", "v2", "-m", "v2"]);
        tree.mkdir("repos");
        for name in ["repo.git", "nosuffix", "_git/repo"] {
            git(&tree.root, &["clone", "-q", "--bare", "work", &format!("repos/{name}")]);
        }
        Repos { tree, v1 }
    }

    /// `file://` URL of a bare repository.
    pub(super) fn file_url(&self, name: &str) -> String {
        format!("file://{}", self.tree.path("repos").join(name).display())
    }

    /// Writes `app/<name>/kustomization.yaml`; returns the folder.
    fn app(&self, name: &str, kustomization: &str) -> PathBuf {
        self.tree.write(&format!("app/{name}/kustomization.yaml"), kustomization);
        self.tree.path(&format!("app/{name}"))
    }

    fn cache(&self) -> PathBuf {
        self.tree.path("cache")
    }
}

/// Builds `dir` with our binary and a cache folder; must succeed.
fn build(dir: &Path, cache: &Path, extra: &[&str]) -> String {
    let r = build_run(dir, cache, extra);
    assert!(r.success(), "building {} failed:\n{}", dir.display(), r.stderr);
    r.stdout
}

fn build_run(dir: &Path, cache: &Path, extra: &[&str]) -> Run {
    build_run_env(dir, cache, extra, &[])
}

fn build_run_env(dir: &Path, cache: &Path, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = dir.to_string_lossy();
    let cache = cache.to_string_lossy();
    let mut args = vec!["build", dir.as_ref(), "--cache-dir", cache.as_ref()];
    args.extend_from_slice(extra);
    ours_env(&args, Path::new("."), env)
}

/// The reference's build of `dir` with extra environment variables; None (said) without one.
fn reference_build(dir: &Path, label: &str, env: &[(&str, &str)]) -> Option<Run> {
    let command = reference_here(label)?;
    let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    let dir_text = dir.to_string_lossy();
    args.push(&dir_text);
    Some(run_program_env(&command[0], &args, Path::new("."), env))
}

/// Our build equals the reference's, byte for byte (when there is a reference); returns it.
fn build_like_kustomize(dir: &Path, cache: &Path, label: &str) -> String {
    build_like_kustomize_env(dir, cache, label, &[])
}

/// The same, both run with extra environment variables (which git must see).
fn build_like_kustomize_env(dir: &Path, cache: &Path, label: &str, env: &[(&str, &str)]) -> String {
    let ours = build_run_env(dir, cache, &[], env);
    assert!(ours.success(), "{label}: building {} failed:\n{}", dir.display(), ours.stderr);
    if let Some(theirs) = reference_build(dir, label, env) {
        assert!(theirs.success(), "{label}: the reference failed:\n{}", theirs.stderr);
        assert_eq!(ours.stdout, theirs.stdout, "{label}: output differs from kustomize's");
    }
    ours.stdout
}

/// A loopback HTTP server: `/git/...` is `git http-backend` (smart HTTP) over a folder of bare
/// repositories, `/files/...` static files, `/redirect/N/PATH` N redirects on the way to `/PATH`;
/// anything else is 404. Stopped on drop.
pub(super) struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    /// Milliseconds to wait before answering each git request (a slow server).
    delay_ms: Arc<AtomicU64>,
    /// How many `/files/...` requests found their file.
    files_served: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub(super) fn start(git_root: PathBuf, files: PathBuf) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let files_served = Arc::new(AtomicU64::new(0));
        let (stop_flag, delay, served) = (stop.clone(), delay_ms.clone(), files_served.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop_flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (git_root, files, delay, served) = (git_root.clone(), files.clone(), delay.clone(), served.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &git_root, &files, &delay, &served);
                });
            }
        });
        Server { port, stop, delay_ms, files_served, thread: Some(thread) }
    }

    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(super) fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One request, one response, then the connection closes.
fn serve(stream: TcpStream, git_root: &Path, files: &Path, delay: &AtomicU64, served: &AtomicU64) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(length) = header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut out = stream;
    if let Some(path_info) = path.strip_prefix("/git") {
        std::thread::sleep(Duration::from_millis(delay.load(Ordering::SeqCst)));
        let mut cgi = Command::new("git")
            .arg("http-backend")
            .env("GIT_PROJECT_ROOT", git_root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("PATH_INFO", path_info)
            .env("QUERY_STRING", query)
            .env("REQUEST_METHOD", &method)
            .env("CONTENT_TYPE", header("content-type").unwrap_or_default())
            .env("CONTENT_LENGTH", body.len().to_string())
            .env("GIT_PROTOCOL", header("git-protocol").unwrap_or_default())
            .env("REMOTE_ADDR", "127.0.0.1")
            .env_remove("GIT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut stdin = cgi.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&body));
        let output = cgi.wait_with_output()?;
        let _ = writer.join();
        let raw = output.stdout;
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4)).or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
        let (head, content) = match split {
            Some((i, n)) => (String::from_utf8_lossy(&raw[..i]).into_owned(), &raw[i + n..]),
            None => (String::new(), &raw[..]),
        };
        let mut status = "200 OK".to_string();
        let mut response_headers = String::new();
        for line in head.lines() {
            match line.split_once(':') {
                Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_string(),
                Some(_) => response_headers.push_str(&format!("{}\r\n", line.trim_end())),
                None => {}
            }
        }
        write!(out, "HTTP/1.1 {status}\r\n{response_headers}Content-Length: {}\r\nConnection: close\r\n\r\n", content.len())?;
        out.write_all(content)?;
    } else if let Some(rest) = path.strip_prefix("/redirect/") {
        // `/redirect/N/PATH`: N more redirects (relative, then absolute to `localhost`), then PATH.
        let (hops, to) = rest.split_once('/').unwrap_or((rest, ""));
        let location = match hops.parse::<u32>().unwrap_or(1) {
            0 | 1 => format!("/{to}"),
            n if n % 2 == 0 => format!("/redirect/{}/{to}", n - 1),
            n => format!("http://localhost:{}/redirect/{}/{to}", out.local_addr()?.port(), n - 1),
        };
        write!(out, "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    } else if let Some(file) = path.strip_prefix("/files/").map(|p| files.join(p)).filter(|f| f.is_file()) {
        let content = std::fs::read(file)?;
        served.fetch_add(1, Ordering::SeqCst);
        write!(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", content.len())?;
        out.write_all(&content)?;
    } else {
        write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found")?;
    }
    out.flush()
}

/// A kustomization of one resource, recording origins.
fn with_origins(entry: &str) -> String {
    format!("resources:\n- {entry}\nbuildMetadata: [originAnnotations]\n")
}

#[test]
fn file_urls_build_as_kustomize_builds_them() {
    let Some(repos) = Repos::or_skip("remote-file") else { return };
    let repo = repos.file_url("repo.git");
    let nosuffix = repos.file_url("nosuffix");
    let cases = [
        ("slashes-tag", format!("{repo}//dev?ref=v1")),
        ("suffix-branch", format!("{repo}/dev?ref=change-image")),
        ("nosuffix-annotated-tag", format!("{nosuffix}//dev?version=v2")),
        ("commit-top", format!("{repo}?ref={}", repos.v1)),
        ("head-query", format!("{repo}//base?timeout=30&submodules=false")),
        ("head", repo.clone()),
    ];
    for (name, url) in &cases {
        let dir = repos.app(name, &with_origins(url));
        let out = build_like_kustomize(&dir, &repos.cache(), name);
        assert!(out.contains("repo: file://"), "{name}: origins name the repository:\n{out}");
    }
    // `build URL`, as `kustomize build URL`.
    let out = build_like_kustomize(Path::new(&format!("{repo}//dev?ref=change-image")), &repos.cache(), "build URL");
    assert!(out.contains("nginx:2"), "{out}");
    // A remote component over a local resource.
    repos.tree.write("app/with-component/pod.yaml", POD);
    let dir = repos.app("with-component", &format!("resources:\n- pod.yaml\ncomponents:\n- {repo}//component?ref=v1\nbuildMetadata: [originAnnotations]\n"));
    let out = build_like_kustomize(&dir, &repos.cache(), "component");
    assert!(out.contains("team: remote") && out.contains("from: component"), "{out}");
}

#[test]
fn http_git_urls_and_http_files_build_as_kustomize_builds_them() {
    let Some(repos) = Repos::or_skip("remote-http") else { return };
    repos.tree.write("files/pod.yaml", &POD.replace("myapp-pod", "web-pod"));
    repos.tree.write("files/sub/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n");
    let server = Server::start(repos.tree.path("repos"), repos.tree.path("files"));
    let base = server.url();
    let cases = [
        ("http-slashes", format!("{base}/git/repo.git//dev?ref=v1")),
        ("git-colons", format!("git::{base}/git/repo.git//dev?ref=change-image")),
        // No marker: read as a file first (404), then as a repository, as kustomize does.
        ("http-no-marker", format!("{base}/git/nosuffix/dev?ref=v2")),
        // Azure DevOps style: the repository is the part after `_git/`.
        ("http-underscore-git", format!("{base}/git/_git/repo/dev?version=v1")),
        ("http-dot-git-path", format!("{base}/git/repo.git/base?ref=change-image")),
    ];
    for (name, url) in &cases {
        let dir = repos.app(name, &with_origins(url));
        build_like_kustomize(&dir, &repos.cache(), name);
    }
    let dir = repos.app("files", &format!("resources:\n- {base}/files/pod.yaml\n- {base}/files/sub/svc.yaml\nnamePrefix: x-\nbuildMetadata: [originAnnotations]\n"));
    let out = build_like_kustomize(&dir, &repos.cache(), "http files");
    assert!(out.contains("name: x-web-pod") && out.contains("name: x-web\n"), "{out}");

    let dir = repos.app("missing", &format!("resources:\n- {base}/missing.yaml\n"));
    let r = build_run(&dir, &repos.cache(), &[]);
    assert!(!r.success() && r.stderr.contains(&format!("{base}/missing.yaml")) && r.stderr.contains("status code 404 (Not Found)"), "{}", r.stderr);
}

#[test]
fn http_files_are_requested_as_kustomize_v5_8_writes_their_urls() {
    let Some(repos) = Repos::or_skip("remote-http-escaping") else { return };
    // Each file is stored under the name the request must carry: another escaping is a 404.
    let files = [
        ("a b.yaml", "a%20b.yaml", "space"),
        ("cm.yaml#frag", "cm.yaml%23frag", "hash"),
        ("\u{e9}.yaml", "%C3%A9.yaml", "utf8"),
        ("c|m{1}.yaml", "c%7Cm%7B1%7D.yaml", "bar"),
        ("x%2Fy.yaml", "x%2Fy.yaml", "kept-escape"),
    ];
    for (_, stored, name) in files {
        repos.tree.write(&format!("files/{stored}"), &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"));
    }
    let server = Server::start(repos.tree.path("repos"), repos.tree.path("files"));
    let base = server.url();
    let entries: String = files.iter().map(|(entry, _, _)| format!("- \"{base}/files/{entry}\"\n")).collect();
    let dir = repos.app("escaping", &format!("resources:\n{entries}buildMetadata: [originAnnotations]\n"));
    let out = build_like_kustomize(&dir, &repos.cache(), "escaped http files");
    for (_, _, name) in files {
        assert!(out.contains(&format!("name: {name}\n")), "{name} missing:\n{out}");
    }
    // An entry Go's url.Parse refuses (a bad escape) is no HTTP file: never requested as one,
    // it is a local path or, as here, a repository.
    let dir = repos.app("bad-escape", &format!("resources:\n- {base}/files/%zz.yaml\n"));
    let r = build_run(&dir, &repos.cache(), &[]);
    assert!(!r.success() && r.stderr.contains("git") && !r.stderr.contains("status code"), "{}", r.stderr);
}

#[test]
fn a_cached_build_needs_no_origin() {
    let Some(repos) = Repos::or_skip("remote-reuse") else { return };
    let mut server = Server::start(repos.tree.path("repos"), repos.tree.path("files"));
    let by_commit = repos.app("commit", &with_origins(&format!("{}//dev?ref={}", repos.file_url("repo.git"), repos.v1)));
    let by_tag = repos.app("tag", &with_origins(&format!("{}/git/repo.git//dev?ref=v2", server.url())));
    let first_commit = build_like_kustomize(&by_commit, &repos.cache(), "by commit");
    let first_tag = build_like_kustomize(&by_tag, &repos.cache(), "by tag");

    // The origins disappear: the repository is moved away, the server stops.
    std::fs::rename(repos.tree.path("repos/repo.git"), repos.tree.path("moved.git")).unwrap();
    server.stop();
    assert_eq!(build(&by_commit, &repos.cache(), &[]), first_commit, "a commit id is never fetched again");
    assert_eq!(build(&by_tag, &repos.cache(), &["--offline"]), first_tag, "--offline builds a tag from the cache");
    let r = build_run(&by_tag, &repos.cache(), &[]);
    assert!(!r.success() && r.stderr.contains("/git/repo.git") && r.stderr.contains("git ls-remote"), "a tag is resolved online:\n{}", r.stderr);

    // --offline names what is missing.
    let never = repos.app("never", &format!("resources:\n- {}//dev?ref=change-image\n", repos.file_url("nosuffix")));
    let r = build_run(&never, &repos.cache(), &["--offline"]);
    assert!(!r.success() && r.stderr.contains("nosuffix") && r.stderr.contains("not in the cache (--offline)") && r.stderr.contains("change-image"), "{}", r.stderr);

    // `cache list` shows both entries; `cache clear` removes them.
    let cache = repos.cache();
    let list = run_program_env(bin(), &["cache", "list", "--cache-dir", &cache.to_string_lossy()], Path::new("."), &[]);
    assert!(list.success() && list.stdout.lines().count() == 2 && list.stdout.contains(&repos.v1) && list.stdout.contains("\tv2\t"), "{}", list.stdout);
    let clear = run_program_env(bin(), &["cache", "clear", "--cache-dir", &cache.to_string_lossy()], Path::new("."), &[]);
    assert!(clear.success() && clear.stderr.contains("removed 2"), "{}", clear.stderr);
    let r = build_run(&by_commit, &repos.cache(), &["--offline"]);
    assert!(!r.success() && r.stderr.contains(&repos.v1), "{}", r.stderr);
}

#[test]
fn parallel_builds_of_one_url_share_one_entry() {
    let Some(repos) = Repos::or_skip("remote-parallel") else { return };
    let dir = repos.app("p", &format!("resources:\n- {}//dev?ref=v1\n", repos.file_url("repo.git")));
    let (dir_text, cache_text) = (dir.to_string_lossy().into_owned(), repos.cache().to_string_lossy().into_owned());
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(bin()).args(["build", &dir_text, "--cache-dir", &cache_text]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let outputs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for o in &outputs {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, outputs[0].stdout);
    }
    let list = run_program_env(bin(), &["cache", "list", "--cache-dir", &cache_text], Path::new("."), &[]);
    assert_eq!(list.stdout.lines().count(), 1, "{}", list.stdout);
    assert!(!list.stdout.contains("damaged"), "{}", list.stdout);
}

/// The one cache entry folder (`<cache>/git/<repo>/<commit>`).
fn entry_dirs(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for repo in std::fs::read_dir(cache.join("git")).into_iter().flatten().flatten() {
        for entry in std::fs::read_dir(repo.path()).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() && !name.starts_with('.') && name != "refs" {
                out.push(entry.path());
            }
        }
    }
    out
}

#[test]
fn a_killed_fetch_or_a_damaged_entry_is_fetched_again() {
    let Some(repos) = Repos::or_skip("remote-killed") else { return };
    let server = Server::start(repos.tree.path("repos"), repos.tree.path("files"));
    let dir = repos.app("k", &format!("resources:\n- {}/git/repo.git//dev?ref=v1\n", server.url()));
    let cache = repos.cache();

    // A slow server; the build is killed while git is fetching.
    server.delay_ms.store(700, Ordering::SeqCst);
    let mut child = Command::new(bin())
        .args(["build", &dir.to_string_lossy(), "--cache-dir", &cache.to_string_lossy()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let fetching = || std::fs::read_dir(cache.join("git")).into_iter().flatten().flatten().any(|repo| {
        std::fs::read_dir(repo.path()).into_iter().flatten().flatten().any(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
    });
    while !fetching() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(fetching(), "the build started fetching");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(entry_dirs(&cache).is_empty(), "a killed fetch leaves no entry: {:?}", entry_dirs(&cache));
    server.delay_ms.store(0, Ordering::SeqCst);
    let good = build_like_kustomize(&dir, &cache, "after a killed fetch");

    // A damaged entry (a file changed) is noticed and fetched again.
    let entries = entry_dirs(&cache);
    assert_eq!(entries.len(), 1);
    std::fs::write(entries[0].join("tree/dev/kustomization.yaml"), "resources:\n- ../base\nnamePrefix: evil-\n").unwrap();
    assert_eq!(build(&dir, &cache, &[]), good);
    // So is an entry without its seal (copied half, or written by something else).
    std::fs::remove_file(entries[0].join("complete")).unwrap();
    std::fs::remove_file(entries[0].join("tree/base/pod.yaml")).unwrap();
    assert_eq!(build(&dir, &cache, &[]), good);
    assert!(entries[0].join("complete").is_file());
}

#[test]
fn a_remote_kustomization_stays_inside_its_checkout() {
    let Some(repos) = Repos::or_skip("remote-confined") else { return };
    let repo = repos.file_url("repo.git");
    let dir = repos.app("escape", &format!("resources:\n- {repo}//escape?ref=v1\n"));
    let r = build_run(&dir, &repos.cache(), &[]);
    assert!(!r.success() && r.stderr.contains("must be within the repo"), "{}", r.stderr);
    for restrictor in ["LoadRestrictionsRootOnly", "LoadRestrictionsNone"] {
        let dir = repos.app("escape-file", &format!("resources:\n- {repo}//escape-file?ref=v1\n"));
        let r = build_run(&dir, &repos.cache(), &["--load-restrictor", restrictor]);
        assert!(!r.success() && r.stderr.contains("is not in or below"), "{restrictor}: {}", r.stderr);
    }
    // A local build with no URL fetches nothing, and creates no cache.
    let local = repos.app("local", "resources:\n- pod.yaml\n");
    repos.tree.write("app/local/pod.yaml", POD);
    let cache = repos.tree.path("untouched-cache");
    build(&local, &cache, &[]);
    assert!(!cache.exists());
}

#[test]
fn fetch_errors_name_the_url_and_what_failed() {
    let Some(repos) = Repos::or_skip("remote-errors") else { return };
    let repo = repos.file_url("repo.git");
    for (entry, expected) in [
        (format!("{repo}//dev?ref=no-such-tag"), "ref not found"),
        (format!("{}//dev", repos.file_url("no-such-repo.git")), "repository not found"),
    ] {
        let dir = repos.app("e", &format!("resources:\n- {entry}\n"));
        let r = build_run(&dir, &repos.cache(), &[]);
        let url = entry.split("//dev").next().unwrap();
        assert!(!r.success() && r.stderr.contains(url) && r.stderr.contains(expected), "{entry}: {}", r.stderr);
    }
}

#[test]
fn git_environment_of_a_surrounding_checkout_is_not_touched() {
    // Argo CD and CI run builds from inside a repository, sometimes with GIT_DIR set.
    let Some(repos) = Repos::or_skip("remote-argo") else { return };
    let dir = repos.app("argo", &format!("resources:\n- {}//dev?ref=v1\n", repos.file_url("repo.git")));
    git(&dir, &["init", "-q"]);
    let git_dir = dir.join(".git");
    let cache = repos.cache();
    let r = ours_env(
        &["build", ".", "--cache-dir", &cache.to_string_lossy()],
        &dir,
        &[("GIT_DIR", &git_dir.to_string_lossy()), ("GIT_WORK_TREE", &dir.to_string_lossy())],
    );
    assert!(r.success() && r.stdout.contains("dev-myapp-pod"), "{}", r.stderr);
    assert_eq!(git(&dir, &["remote"]).trim(), "", "the surrounding repository gained no remote");
}

#[test]
fn the_docs_private_overlay_works_against_a_clone_of_this_repository() {
    if !have_git("docs private overlay") {
        return;
    }
    let docs = std::fs::read_to_string(crate::common::manifest_dir().join("docs/peerpods.md")).unwrap();
    let block = docs
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.lines().any(|l| l.trim_start().starts_with("- ") && l.contains("://") && l.contains("?ref=")))
        .expect("docs/peerpods.md has a private overlay with a git URL");
    let url = block.lines().find_map(|l| l.trim().strip_prefix("- ").filter(|e| e.contains("://") && e.contains("?ref="))).unwrap();
    let (location, rest) = url.split_once("//overlays/").expect("the URL names an overlay after //");
    let git_ref = rest.split("?ref=").nth(1).unwrap();

    // This repository, cloned bare, with the documented ref pointing at its last commit.
    let tree = TempTree::new("remote-docs");
    git(&tree.root, &["clone", "-q", "--bare", &crate::common::manifest_dir().to_string_lossy(), "peerpods-build.git"]);
    let clone = tree.path("peerpods-build.git");
    git(&clone, &["tag", "-f", git_ref, "HEAD"]);
    let local_url = format!("file://{}", clone.display());
    tree.write("private/kustomization.yaml", &block.replace(location, &local_url));
    let cache = tree.path("cache");
    let remote = build_like_kustomize(&tree.path("private"), &cache, "docs private overlay");
    assert!(remote.contains("GCP_PROJECT_ID: my-project"), "{remote}");
}

#[test]
fn submodules_are_checked_out_unless_the_url_says_not_to() {
    let Some(repos) = Repos::or_skip("remote-submodules") else { return };
    // git refuses file:// submodules unless told otherwise: the setting reaches git through
    // GIT_CONFIG_* in the environment, as a user's would.
    let env = [("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "protocol.file.allow"), ("GIT_CONFIG_VALUE_0", "always")];
    let outer = repos.tree.path("outer");
    std::fs::create_dir_all(&outer).unwrap();
    git(&outer, &["init", "-q"]);
    let inner = repos.tree.path("repos/repo.git").to_string_lossy().into_owned();
    let out = Command::new("git")
        .args(["-c", "protocol.file.allow=always", "submodule", "add", "-q", &inner, "sub"])
        .current_dir(&outer)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    git(&outer, &["commit", "-qm", "with a submodule"]);
    git(&repos.tree.root, &["clone", "-q", "--bare", "outer", "repos/outer.git"]);
    let url = repos.file_url("outer.git");
    let dir = repos.app("sub", &with_origins(&format!("{url}//sub/dev")));
    let out = build_like_kustomize_env(&dir, &repos.cache(), "submodule", &env);
    assert!(out.contains("dev-myapp-pod-v2"), "{out}");
    let dir = repos.app("nosub", &format!("resources:\n- {url}//sub?submodules=false\n"));
    let r = build_run_env(&dir, &repos.cache(), &[], &env);
    assert!(!r.success() && r.stderr.contains("unable to find one of 'kustomization.yaml'"), "{}", r.stderr);
}

#[test]
fn a_slow_server_times_out_as_the_url_asks() {
    let Some(repos) = Repos::or_skip("remote-timeout") else { return };
    let server = Server::start(repos.tree.path("repos"), repos.tree.path("files"));
    server.delay_ms.store(3000, Ordering::SeqCst);
    let url = format!("{}/git/repo.git//dev?ref=v1&timeout=1", server.url());
    let dir = repos.app("slow", &format!("resources:\n- {url}\n"));
    let started = Instant::now();
    let r = build_run(&dir, &repos.cache(), &[]);
    assert!(!r.success() && r.stderr.contains("timed out") && r.stderr.contains("/git/repo.git"), "{}", r.stderr);
    assert!(started.elapsed() < Duration::from_secs(20), "the timeout was not kept: {:?}", started.elapsed());
}

/// An error about a remote resource or component names the kustomization file and the entry
/// that asked for it, before kustomize's own message (which names only the URL).
#[test]
fn a_remote_error_names_the_kustomization_and_its_entry() {
    let t = TempTree::new("remote-error-entry");
    t.write("app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
    // Port 1 on the loopback: refused at once, no network needed.
    t.write("app/kustomization.yaml", "resources:\n- cm.yaml\n- http://127.0.0.1:1/pod.yaml\n");
    let http = ours(&["build", "app"], &t.root);
    assert_eq!(http.code, Some(1), "{}", http.stderr);
    assert!(http.stderr.starts_with("Error: app/kustomization.yaml: resources[1] 'http://127.0.0.1:1/pod.yaml': "), "{}", http.stderr);
    assert!(http.stderr.contains("accumulating resources from 'http://127.0.0.1:1/pod.yaml'"), "kustomize's words kept: {}", http.stderr);
    t.write("app/kustomization.yaml", "resources:\n- cm.yaml\ncomponents:\n- https://user:secret@127.0.0.1:1/org/repo.git//tls?ref=v1\n");
    let git = ours(&["build", "app"], &t.root);
    assert_eq!(git.code, Some(1), "{}", git.stderr);
    assert!(git.stderr.starts_with("Error: app/kustomization.yaml: components[0] 'https://user:***@127.0.0.1:1/org/repo.git//tls?ref=v1': "), "{}", git.stderr);
    assert!(!git.stderr.contains("secret"), "{}", git.stderr);
}

/// Every field that names a file may name it by an HTTP(S) URL, as kustomize's loader reads any
/// file: a patch (`patches`, `patchesStrategicMerge`, a JSON 6902 patch), a generator's files and
/// env files, a replacements file, a configuration. Each is downloaded, outside the root and its
/// restrictor, and the build equals the reference's byte for byte.
#[test]
fn files_named_by_url_are_downloaded_as_kustomize_downloads_them() {
    let t = TempTree::new("remote-http-file-fields");
    t.write("files/p/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n");
    t.write("files/p/replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n");
    t.write("files/p/annotate.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    from: strategic-merge-list\n");
    t.write("files/p/label.json6902.yaml", "- op: add\n  path: /metadata/labels\n  value: {patched: \"yes\"}\n");
    t.write("files/p/app.env", "MODE=remote\nLEVEL=2\n");
    t.write("files/p/dash.json", "{\"dashboard\": true}\n");
    t.write("files/p/replacements.yaml", "- source:\n    kind: ConfigMap\n    name: settings\n  targets:\n  - select:\n      kind: Deployment\n    fieldPaths:\n    - metadata.annotations.settings\n    options:\n      create: true\n");
    t.write("files/p/config.yaml", "nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - kind: Deployment\n    path: metadata/annotations/uses\n");
    let mut server = Server::start(t.path("git"), t.path("files"));
    let base = format!("{}/files/p", server.url());
    t.write(
        "app/kustomization.yaml",
        &format!(
            "resources:\n- {base}/deploy.yaml\nnamePrefix: x-\nconfigurations:\n- {base}/config.yaml\npatches:\n- path: {base}/replicas.yaml\n- path: {base}/label.json6902.yaml\n  target:\n    kind: Deployment\npatchesStrategicMerge:\n- {base}/annotate.yaml\n\
             configMapGenerator:\n- name: settings\n  envs:\n  - {base}/app.env\n  files:\n  - {base}/dash.json\n  - renamed.json={base}/dash.json\nsecretGenerator:\n- name: secret\n  files:\n  - {base}/app.env\nreplacements:\n- path: {base}/replacements.yaml\n\
             commonAnnotations:\n  uses: settings\n"
        ),
    );
    let out = build_like_kustomize(&t.path("app"), &t.path("cache"), "file fields by URL");
    for expected in ["replicas: 3", "from: strategic-merge-list", "patched: \"yes\"", "MODE: remote", "renamed.json:", "dash.json:", "settings: x-settings\n", "uses: x-settings-"] {
        assert!(out.contains(expected), "{expected} missing:\n{out}");
    }
    // `crds` and `patchesJson6902` files by URL.
    t.write("files/p/definitions.yaml", "example.com.v1.Foo:\n  Schema:\n    properties:\n      apiVersion: {type: string}\n      kind: {type: string}\n      metadata: {type: object}\n");
    t.write("files/p/annotate.json6902.yaml", "- op: add\n  path: /metadata/annotations\n  value: {via: json6902}\n");
    t.write("crds/foo.yaml", "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: f\n");
    t.write(
        "crds/kustomization.yaml",
        &format!("resources:\n- foo.yaml\ncrds:\n- {base}/definitions.yaml\npatchesJson6902:\n- target:\n    group: example.com\n    version: v1\n    kind: Foo\n    name: f\n  path: {base}/annotate.json6902.yaml\n"),
    );
    let out = build_like_kustomize(&t.path("crds"), &t.path("cache"), "crds and a JSON 6902 file by URL");
    assert!(out.contains("via: json6902"), "{out}");
    // `--offline` downloads nothing: the first file named by URL is refused.
    t.write("offline/kustomization.yaml", &format!("configMapGenerator:\n- name: a\n  files:\n  - {base}/dash.json\n"));
    let offline = build_run(&t.path("offline"), &t.path("cache"), &["--offline"]);
    assert!(!offline.success() && offline.stderr.contains(&format!("{base}/dash.json: --offline: HTTP files are not cached")), "{}", offline.stderr);
    server.stop();
}

/// Files behind redirects are downloaded as Go's client follows them: nine redirects, relative
/// and absolute, to another name of the written (inward) host; at the tenth both give up.
#[test]
fn redirects_are_followed_as_kustomize_follows_them() {
    let t = TempTree::new("remote-http-redirects");
    t.write("files/pod.yaml", POD);
    t.write("files/patch.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: myapp-pod\n  labels:\n    patched: \"yes\"\n");
    let mut server = Server::start(t.path("git"), t.path("files"));
    let url = server.url();
    t.write("app/kustomization.yaml", &format!("resources:\n- {url}/redirect/9/files/pod.yaml\npatches:\n- path: {url}/redirect/2/files/patch.yaml\n"));
    let out = build_like_kustomize(&t.path("app"), &t.path("cache"), "files behind redirects");
    assert!(out.contains("name: myapp-pod") && out.contains("patched: \"yes\""), "{out}");
    for (name, field) in [("endless-resource", "resources:\n- "), ("endless-patch", "patches:\n- path: ")] {
        t.write(&format!("{name}/kustomization.yaml"), &format!("{field}{url}/redirect/10/files/pod.yaml\n"));
        let ours = build_run(&t.path(name), &t.path("cache"), &[]);
        assert!(!ours.success() && ours.stderr.contains("stopped after 10 redirects"), "{name}:\n{}", ours.stderr);
        if let Some(theirs) = reference_build(&t.path(name), name, &[]) {
            assert!(!theirs.success() && theirs.stderr.contains("stopped after 10 redirects"), "{name}: {}", theirs.stderr);
        }
    }
    server.stop();
}

/// The roots of one run that name one URL download it once: two apps sharing an HTTP resource
/// and a patch by URL cost two requests, and build as each alone builds.
#[test]
fn a_run_downloads_each_url_once() {
    let t = TempTree::new("remote-http-once");
    t.write("files/pod.yaml", POD);
    t.write("files/patch.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: myapp-pod\n  labels:\n    patched: \"yes\"\n");
    let server = Server::start(t.path("git"), t.path("files"));
    let base = format!("{}/files", server.url());
    for app in ["a", "b"] {
        t.write(&format!("{app}/kustomization.yaml"), &format!("resources:\n- {base}/pod.yaml\nnamePrefix: {app}-\npatches:\n- path: {base}/patch.yaml\n"));
    }
    let run = ours(&["build", "-o", "out/", "a", "b"], &t.root);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(server.files_served.load(Ordering::SeqCst), 2, "each URL once");
    for app in ["a", "b"] {
        let alone = build(&t.path(app), &t.path("cache"), &[]);
        assert_eq!(std::fs::read_to_string(t.path(&format!("out/{app}.yaml"))).unwrap(), alone, "{app}");
        assert!(alone.contains(&format!("name: {app}-myapp-pod")) && alone.contains("patched: \"yes\""), "{alone}");
    }
}

/// A file named by URL that cannot be had fails with kustomize's words: the server's refusal
/// (`HTTP Error: status code 404 (Not Found)`, or `URL is a git repository` when the URL also
/// reads as one), and Go's `Get "URL": ...` around why no answer came.
#[test]
fn a_file_named_by_url_that_cannot_be_had_fails_as_in_kustomize() {
    let t = TempTree::new("remote-http-file-errors");
    t.mkdir("files");
    let mut server = Server::start(t.path("git"), t.path("files"));
    let url = server.url();
    let cases = [
        ("status", format!("configMapGenerator:\n- name: a\n  files:\n  - {url}/missing.json\n"), "loading KV pairs: file sources: [{url}/missing.json]: HTTP Error: status code 404 (Not Found)".to_string()),
        ("git-like", format!("patches:\n- path: {url}/org/repo/patch.yaml\n"), "URL is a git repository".to_string()),
        ("refused", "configMapGenerator:\n- name: a\n  envs:\n  - http://127.0.0.1:1/app.env\n".to_string(), "loading KV pairs: env source files: [http://127.0.0.1:1/app.env]: Get \"http://127.0.0.1:1/app.env\": ".to_string()),
    ];
    for (name, kustomization, words) in &cases {
        t.write(&format!("{name}/kustomization.yaml"), kustomization);
        let ours = build_run(&t.path(name), &t.path("cache"), &[]);
        let words = words.replace("{url}", &url);
        assert!(!ours.success() && ours.stderr.contains(&words), "{name}: {words:?} missing:\n{}", ours.stderr);
        if let Some(theirs) = reference_build(&t.path(name), name, &[]) {
            assert!(!theirs.success(), "{name}: the reference built it");
            let last = theirs.stderr.trim_end().lines().last().unwrap_or("");
            let message = last.strip_prefix("Error: ").or_else(|| last.strip_prefix("error: ")).unwrap_or(last);
            // Go's own words for a refused connection are Go's; the rest is kustomize's, whole.
            let message = message.split("dial tcp").next().unwrap_or(message);
            assert!(ours.stderr.contains(message), "{name}: kustomize's {message:?} missing:\n{}", ours.stderr);
        }
    }
    server.stop();
}
