//! What someone who writes a kustomization, a git revision or a cache can make a build do:
//! crafted revisions for `diff --base`, option-like refs, a repository around the cache, a cache
//! another user planted, `-o` onto devices, numbers that overflow, a service's answer echoed,
//! memory amplification across documents and patches, and paths shown in errors.
#![cfg(unix)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{self, ours, ours_env, Run, TempTree};

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n";

/// Runs git in `dir` with `stdin`, failing the test on error; returns stdout, trimmed.
fn git_in(dir: &Path, args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, b"")
}

fn have_git(label: &str) -> bool {
    let present = Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        common::skip(label, "no git program");
    }
    present
}

// ---------------------------------------------------------------------------
// diff --base REV: a revision's names are untrusted

/// A raw tree entry for `git hash-object -t tree --literally`: any name, any mode.
fn tree_entry(mode: &str, name: &str, object: &str) -> Vec<u8> {
    let mut bytes = format!("{mode} {name}\0").into_bytes();
    bytes.extend((0..object.len()).step_by(2).map(|i| u8::from_str_radix(&object[i..i + 2], 16).unwrap()));
    bytes
}

fn blob(repo: &Path, content: &str) -> String {
    git_in(repo, &["hash-object", "-w", "--stdin"], content.as_bytes())
}

fn literal_tree(repo: &Path, entries: &[Vec<u8>]) -> String {
    git_in(repo, &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], &entries.concat())
}

/// A repository whose HEAD holds `app/` (a kustomization of one ConfigMap) and whose commit
/// `crafted` holds `app/` with the extra `entries`; returns (repo, crafted commit).
fn crafted_revision(tmp: &TempTree, extra: impl Fn(&Path) -> Vec<Vec<u8>>) -> (PathBuf, String) {
    let repo = tmp.mkdir("repo");
    git(&repo, &["init", "-q"]);
    tmp.write("repo/app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("repo/app/cm.yaml", CONFIGMAP);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "app"]);
    let kustomization = blob(&repo, "resources:\n- cm.yaml\n");
    let cm = blob(&repo, CONFIGMAP);
    let mut app = vec![tree_entry("100644", "cm.yaml", &cm), tree_entry("100644", "kustomization.yaml", &kustomization)];
    app.extend(extra(&repo));
    let app = literal_tree(&repo, &app);
    let top = literal_tree(&repo, &[tree_entry("40000", "app", &app)]);
    let commit = git(&repo, &["commit-tree", &top, "-m", "crafted"]);
    (repo, commit)
}

/// `diff --base crafted app` with the snapshot's temporary folder in `tmp/t/`: it fails (exit 2)
/// and writes nothing outside that folder.
fn assert_diff_refuses(label: &str, extra: impl Fn(&Path, &Path) -> Vec<Vec<u8>>) {
    if !have_git(label) {
        return;
    }
    let tmp = TempTree::new(label);
    let temp_dir = tmp.mkdir("t");
    let outside = tmp.mkdir("outside");
    fs::write(outside.join("existing.yaml"), "kept\n").unwrap();
    let (repo, commit) = crafted_revision(&tmp, |repo| extra(repo, &outside));
    // A change to what `app` reads, so that the diff renders it at the crafted revision.
    fs::write(repo.join("app/cm.yaml"), CONFIGMAP.replace("data:", "data:\n  changed: \"yes\"")).unwrap();
    let r = ours_env(&["diff", "--base", &commit, "app"], &repo, &[("TMPDIR", s(&temp_dir))]);
    assert_eq!(r.code, Some(2), "{label}: {}\n{}", r.stdout, r.stderr);
    assert_eq!(fs::read_to_string(outside.join("existing.yaml")).unwrap(), "kept\n", "{label}: a file outside was overwritten");
    assert_eq!(common::files_under(&outside), ["existing.yaml"], "{label}: written outside");
    let beside: Vec<String> = fs::read_dir(&tmp.root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let mut beside = beside;
    beside.sort();
    assert_eq!(beside, ["outside", "repo", "t"], "{label}: written beside the temporary folder");
    assert!(fs::read_dir(&temp_dir).unwrap().next().is_none(), "{label}: the temporary folder stayed");
}

#[test]
fn diff_base_refuses_dot_dot_entries() {
    assert_diff_refuses("diff-dotdot", |repo, _| {
        let evil = blob(repo, CONFIGMAP);
        let inner = literal_tree(repo, &[tree_entry("100644", "escaped.yaml", &evil)]);
        let middle = literal_tree(repo, &[tree_entry("40000", "..", &inner)]);
        vec![tree_entry("40000", "..", &middle)]
    });
}

#[test]
fn diff_base_refuses_names_with_a_slash() {
    assert_diff_refuses("diff-slash", |repo, _| vec![tree_entry("100644", "../../escaped.yaml", &blob(repo, CONFIGMAP))]);
}

#[test]
fn diff_base_never_writes_beneath_a_link_it_made() {
    assert_diff_refuses("diff-link-folder", |repo, outside| {
        let link = blob(repo, s(outside));
        let below = literal_tree(repo, &[tree_entry("100644", "escaped.yaml", &blob(repo, CONFIGMAP))]);
        vec![tree_entry("120000", "dir", &link), tree_entry("40000", "dir", &below)]
    });
}

#[test]
fn diff_base_never_writes_through_a_link_onto_a_file() {
    assert_diff_refuses("diff-link-file", |repo, outside| {
        let link = blob(repo, s(&outside.join("existing.yaml")));
        vec![tree_entry("120000", "x.yaml", &link), tree_entry("100644", "x.yaml", &blob(repo, "overwritten\n"))]
    });
}

#[test]
fn diff_of_a_folder_missing_on_both_sides_is_an_error() {
    if !have_git("diff-missing") {
        return;
    }
    let tmp = TempTree::new("diff-missing");
    let repo = tmp.mkdir("repo");
    git(&repo, &["init", "-q"]);
    tmp.write("repo/overlays/aws/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("repo/overlays/aws/cm.yaml", CONFIGMAP);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "aws"]);
    let typo = ours(&["diff", "--base", "HEAD", "overlays/asw"], &repo);
    assert_eq!(typo.code, Some(2), "a typo passed:\n{}{}", typo.stdout, typo.stderr);
    assert!(typo.stderr.contains("overlays/asw") && typo.stderr.contains("no such folder"), "{}", typo.stderr);
    let two = ours(&["diff", "overlays/aws", "overlays/nope"], &repo);
    assert_eq!(two.code, Some(2), "{}{}", two.stdout, two.stderr);
    assert!(two.stderr.contains("overlays/nope"), "{}", two.stderr);
    // A folder added since REV is still all-added.
    tmp.write("repo/overlays/new/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("repo/overlays/new/cm.yaml", CONFIGMAP);
    let added = common::run_program(common::bin(), &["diff", "--base", "HEAD", "--stat", "overlays/new"], &repo);
    assert_eq!(added.code, Some(1), "{}", added.stderr);
    assert!(added.stdout.contains("added"), "{}", added.stdout);
}

// ---------------------------------------------------------------------------
// git: option-like refs, and a repository around the cache

#[test]
fn a_ref_that_reads_as_an_option_is_refused() {
    if !have_git("option-ref") {
        return;
    }
    let tmp = TempTree::new("option-ref");
    let work = tmp.mkdir("work");
    git(&work, &["init", "-q"]);
    tmp.write("work/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("work/cm.yaml", CONFIGMAP);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "one"]);
    let marker = tmp.path("ran");
    let injected = format!("--upload-pack=touch${{IFS}}{};false", s(&marker));
    // The repository really holds such a ref (update-ref accepts the name).
    git(&work, &["update-ref", &format!("refs/tags/{injected}"), "HEAD"]);
    let encoded: String = injected.replace(';', "%3B").replace('=', "%3D").replace('{', "%7B").replace('}', "%7D").replace('$', "%24");
    for key in ["ref", "version"] {
        tmp.write("app/kustomization.yaml", &format!("resources:\n- file://{}?{key}={encoded}\n", s(&work)));
        let r = ours(&["build", s(&tmp.path("app")), "--cache-dir", s(&tmp.path("cache"))], &tmp.root);
        assert!(!r.success(), "{key}: built:\n{}", r.stdout);
        assert!(r.stderr.contains("invalid ref"), "{key}: {}", r.stderr);
        assert!(!marker.exists(), "{key}: git ran the ref as a command");
    }
}

#[test]
fn git_never_reads_a_repository_around_the_cache() {
    if !have_git("surrounding-repo") {
        return;
    }
    let tmp = TempTree::new("surrounding-repo");
    let outer = tmp.mkdir("outer");
    git(&outer, &["init", "-q"]);
    let marker = tmp.path("ran");
    git(&outer, &["config", "core.sshCommand", &format!("touch {}; false", s(&marker))]);
    tmp.write("app/kustomization.yaml", "resources:\n- ssh://git@example.invalid/org/repo//base?ref=v1\n");
    let r = ours(&["build", s(&tmp.path("app")), "--cache-dir", s(&outer.join("cache"))], &tmp.root);
    assert!(!r.success(), "{}", r.stdout);
    assert!(!marker.exists(), "git ran the surrounding repository's core.sshCommand");
}

// ---------------------------------------------------------------------------
// The cache: only ours, files created new, content checked, refs remembered, clear waits

/// A repository at `work/` holding a kustomization of one ConfigMap, tagged `v1`, on `main`.
fn configmap_repository(tmp: &TempTree) -> PathBuf {
    let work = tmp.mkdir("work");
    git(&work, &["init", "-q"]);
    tmp.write("work/base/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("work/base/cm.yaml", CONFIGMAP);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "one"]);
    git(&work, &["tag", "v1"]);
    work
}

fn remote_app(tmp: &TempTree, work: &Path, git_ref: &str) -> PathBuf {
    let app = format!("app-{}", git_ref.replace('/', "-"));
    tmp.write(&format!("{app}/kustomization.yaml"), &format!("resources:\n- file://{}//base?ref={git_ref}\n", s(work)));
    tmp.path(&app)
}

fn build_with_cache(app: &Path, cache: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["build", s(app), "--cache-dir", s(cache)];
    args.extend_from_slice(extra);
    ours(&args, app.parent().unwrap())
}

#[test]
fn a_cache_folder_of_another_user_or_writable_by_others_is_refused() {
    if !have_git("cache-owner") {
        return;
    }
    let tmp = TempTree::new("cache-owner");
    let work = configmap_repository(&tmp);
    let app = remote_app(&tmp, &work, "v1");
    let cache = tmp.path("cache");
    let built = build_with_cache(&app, &cache, &[]);
    assert!(built.success(), "{}", built.stderr);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&cache).unwrap().permissions().mode() & 0o777, 0o700, "the cache folder is not private");

    // Writable by others: anyone could plant an entry.
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o777)).unwrap();
    for extra in [&[][..], &["--offline"][..]] {
        let r = build_with_cache(&app, &cache, extra);
        assert!(!r.success(), "{extra:?}: built from a cache others may write:\n{}", r.stdout);
        assert!(r.stderr.contains("writable by its group or others"), "{extra:?}: {}", r.stderr);
    }
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o700)).unwrap();

    // Another user's folder (the tests run as root: give it to nobody).
    let chown = Command::new("chown").args(["-R", "nobody", s(&cache)]).output();
    if !chown.is_ok_and(|o| o.status.success()) {
        common::skip("cache-owner", "cannot chown to nobody (not root)");
        return;
    }
    for extra in [&[][..], &["--offline"][..]] {
        let r = build_with_cache(&app, &cache, extra);
        assert!(!r.success(), "{extra:?}: built from another user's cache:\n{}", r.stdout);
        assert!(r.stderr.contains("not to us"), "{extra:?}: {}", r.stderr);
    }
    let list = ours(&["cache", "list", "--cache-dir", s(&cache)], &tmp.root);
    assert!(!list.success() && list.stderr.contains("not to us"), "{}{}", list.stdout, list.stderr);
}

#[test]
fn without_home_the_cache_is_a_private_folder_named_for_the_user() {
    if !have_git("cache-default") {
        return;
    }
    let tmp = TempTree::new("cache-default");
    let work = configmap_repository(&tmp);
    let app = remote_app(&tmp, &work, "v1");
    let shared_tmp = tmp.mkdir("tmp");
    let run = |extra: &[&str]| {
        let out = Command::new(common::bin())
            .args(["build", s(&app)])
            .args(extra)
            .env_remove("HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("PEERPODS_BUILD_CACHE")
            .env("TMPDIR", &shared_tmp)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // Another user made the folder first: refused, not trusted.
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap().trim().to_string();
    let planted = shared_tmp.join(format!("peerpods-build-{uid}"));
    fs::create_dir(&planted).unwrap();
    let chown = Command::new("chown").args(["nobody", s(&planted)]).output();
    if chown.is_ok_and(|o| o.status.success()) {
        let (ok, stderr) = run(&[]);
        assert!(!ok && stderr.contains("not to us"), "built from a planted cache folder: {stderr}");
    } else {
        common::skip("cache-default", "cannot chown to nobody (not root): planted folder not tried");
    }
    fs::remove_dir(&planted).unwrap();
    let (ok, stderr) = run(&[]);
    assert!(ok, "{stderr}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&planted).unwrap().permissions().mode() & 0o777, 0o700);
}

/// The entry folders (`<cache>/git/<repo>/<commit>/tree`) of a cache.
fn entry_trees(cache: &Path) -> Vec<PathBuf> {
    let mut trees = Vec::new();
    for repo in fs::read_dir(cache.join("git")).unwrap().flatten() {
        for entry in fs::read_dir(repo.path()).unwrap().flatten() {
            if entry.path().join("tree").is_dir() && !entry.file_name().to_string_lossy().starts_with('.') {
                trees.push(entry.path().join("tree"));
            }
        }
    }
    trees
}

#[test]
fn a_cached_file_changed_with_its_size_and_time_kept_is_fetched_again() {
    if !have_git("cache-content") {
        return;
    }
    let tmp = TempTree::new("cache-content");
    let work = configmap_repository(&tmp);
    let app = remote_app(&tmp, &work, "v1");
    let cache = tmp.path("cache");
    let first = build_with_cache(&app, &cache, &[]);
    assert!(first.success(), "{}", first.stderr);
    let trees = entry_trees(&cache);
    assert_eq!(trees.len(), 1, "{trees:?}");
    let cached = trees[0].join("base/cm.yaml");
    let modified = fs::metadata(&cached).unwrap().modified().unwrap();
    fs::write(&cached, CONFIGMAP.replace("a: \"1\"", "a: \"2\"")).unwrap();
    fs::File::options().write(true).open(&cached).unwrap().set_modified(modified).unwrap();
    let second = build_with_cache(&app, &cache, &[]);
    assert!(second.success(), "{}", second.stderr);
    assert_eq!(second.stdout, first.stdout, "the planted content was used");
}

#[test]
fn every_ref_a_build_resolved_is_known_offline() {
    if !have_git("cache-refs") {
        return;
    }
    let tmp = TempTree::new("cache-refs");
    let work = configmap_repository(&tmp);
    let cache = tmp.path("cache");
    let by_tag = build_with_cache(&remote_app(&tmp, &work, "v1"), &cache, &[]);
    assert!(by_tag.success(), "{}", by_tag.stderr);
    // `main` names the commit `v1` fetched: nothing to fetch, but it is resolved.
    for git_ref in ["main", "HEAD"] {
        let app = remote_app(&tmp, &work, git_ref);
        let online = build_with_cache(&app, &cache, &[]);
        assert!(online.success(), "{git_ref}: {}", online.stderr);
        let offline = build_with_cache(&app, &cache, &["--offline"]);
        assert!(offline.success(), "{git_ref}: {}", offline.stderr);
        assert_eq!(offline.stdout, by_tag.stdout);
    }
    let list = ours(&["cache", "list", "--cache-dir", s(&cache)], &tmp.root);
    assert!(list.success(), "{}", list.stderr);
    let refs: Vec<&str> = list.stdout.lines().flat_map(|line| line.split('\t').nth(2).unwrap_or("").split(',')).collect();
    for git_ref in ["main", "HEAD", "v1"] {
        assert!(refs.contains(&git_ref), "cache list does not show {git_ref}:\n{}", list.stdout);
    }
}

#[test]
fn cache_clear_during_parallel_builds_breaks_none_of_them() {
    if !have_git("cache-clear") {
        return;
    }
    let tmp = TempTree::new("cache-clear");
    let work = configmap_repository(&tmp);
    let app = remote_app(&tmp, &work, "v1");
    let cache = tmp.path("cache");
    let expected = build_with_cache(&app, &cache, &[]);
    assert!(expected.success(), "{}", expected.stderr);
    let builds: Vec<_> = (0..6)
        .map(|i| {
            let (app, cache) = (app.clone(), cache.clone());
            std::thread::spawn(move || {
                if i % 2 == 1 {
                    ours(&["cache", "clear", "--cache-dir", s(&cache)], app.parent().unwrap())
                } else {
                    build_with_cache(&app, &cache, &[])
                }
            })
        })
        .collect();
    for (i, build) in builds.into_iter().enumerate() {
        let r = build.join().unwrap();
        assert!(r.success(), "run {i} failed: {}", r.stderr);
        if i % 2 == 0 {
            assert_eq!(r.stdout, expected.stdout, "run {i}");
        }
    }
    let left: Vec<String> = fs::read_dir(&cache).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(".clearing")).collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---------------------------------------------------------------------------
// Numbers from a URL

#[test]
fn a_timeout_past_the_largest_duration_is_an_error_not_a_panic() {
    let tmp = TempTree::new("timeout-overflow");
    for timeout in ["6000000000000000h", "9223372036854775807", "1e400s"] {
        tmp.write("app/kustomization.yaml", &format!("resources:\n- https://example.invalid/org/repo.git//base?timeout={timeout}\n"));
        let r = ours(&["build", s(&tmp.path("app")), "--cache-dir", s(&tmp.path("cache"))], &tmp.root);
        assert!(!r.success(), "{timeout}: {}", r.stdout);
        if timeout != "1e400s" {
            assert!(r.stderr.contains("invalid timeout") && r.stderr.contains(timeout), "{timeout}: {}", r.stderr);
        }
    }
}

// ---------------------------------------------------------------------------
// A service's answer is not echoed

/// Answers every request on 127.0.0.1 with `200 OK` and `body`, until dropped.
struct Answering {
    port: u16,
    _thread: std::thread::JoinHandle<()>,
}

fn answer_with(body: String) -> Answering {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
    let port = listener.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
        }
    });
    Answering { port, _thread: thread }
}

#[test]
fn an_http_answer_that_is_no_resource_is_quoted_only_in_part() {
    let mut body = "internal-status-page ".repeat(7000);
    body.push_str("TAIL-OF-THE-ANSWER\u{1b}[31m");
    let server = answer_with(body);
    let tmp = TempTree::new("http-echo");
    tmp.write("app/kustomization.yaml", &format!("resources:\n- http://127.0.0.1:{}/status\n", server.port));
    let r = ours(&["build", s(&tmp.path("app")), "--cache-dir", s(&tmp.path("cache"))], &tmp.root);
    assert!(!r.success(), "{}", r.stdout);
    assert!(r.stderr.contains("internal-status-page"), "the error does not say what came back: {}", r.stderr);
    assert!(!r.stderr.contains("TAIL-OF-THE-ANSWER") && !r.stderr.contains('\u{1b}'), "the whole answer was echoed");
    assert!(r.stderr.len() < 2000, "{} bytes of error", r.stderr.len());
}

// ---------------------------------------------------------------------------
// -o onto what is not a regular file, a read-only file, long names

#[test]
fn output_onto_a_fifo_writes_into_it() {
    let tmp = TempTree::new("out-fifo");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    let fifo = tmp.path("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&fifo)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    let read = reader.join().unwrap();
    assert!(read.contains("name: cm"), "{read}");
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
}

#[test]
fn output_onto_dev_null_keeps_the_device() {
    let tmp = TempTree::new("out-devnull");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    // A private mount namespace with its own /dev: the real /dev/null is never at stake.
    let script = format!(
        "mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && ln -s /proc/self/fd/1 /dev/stdout && {bin} build {app} -o /dev/null && test -c /dev/null && echo device-kept && {bin} build {app} -o /dev/stdout | grep -c 'name: cm' && test -L /dev/stdout && echo link-kept",
        bin = common::bin(),
        app = s(&tmp.path("app"))
    );
    let probe = Command::new("unshare").args(["-m", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::skip("out-devnull", "unshare -m is not permitted here");
        return;
    }
    let out = Command::new("unshare").args(["-m", "sh", "-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, "device-kept\n1\nlink-kept\n");
}

#[test]
fn output_onto_a_read_only_file_is_refused_as_kustomize_refuses_it() {
    let tmp = TempTree::new("out-readonly");
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", CONFIGMAP);
    let out = tmp.write("out/locked.yaml", "kept\n");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&out, fs::Permissions::from_mode(0o444)).unwrap();
    // As nobody, for whom the mode counts (root may write anything, in kustomize too).
    let chown = Command::new("chown").args(["-R", "nobody", s(&tmp.path("out"))]).output();
    let setpriv = Command::new("setpriv").args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "true"]).output();
    if !chown.is_ok_and(|o| o.status.success()) || !setpriv.is_ok_and(|o| o.status.success()) {
        common::skip("out-readonly", "cannot become nobody (setpriv, chown need root)");
        return;
    }
    let as_nobody = |program: &str, args: &[&str]| {
        let mut argv = vec!["--reuid=nobody", "--regid=nogroup", "--clear-groups", program];
        argv.extend_from_slice(args);
        common::run_program("setpriv", &argv, &tmp.root)
    };
    let r = as_nobody(common::bin(), &["build", s(&tmp.path("app")), "-o", s(&out)]);
    assert!(!r.success(), "a read-only file was replaced");
    assert!(r.stderr.contains("permission denied"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&out).unwrap(), "kept\n");
    if let Some(reference) = common::reference() {
        let app = tmp.path("app");
        let mut args: Vec<&str> = reference[1..].iter().map(String::as_str).collect();
        args.extend_from_slice(&[s(&app), "-o", s(&out)]);
        let theirs = as_nobody(&reference[0], &args);
        assert!(!theirs.success() && theirs.stderr.contains("permission denied"), "the reference: {}", theirs.stderr);
    }
}

#[test]
fn output_file_names_up_to_the_limit_are_written() {
    let tmp = TempTree::new("out-long");
    let name = "n".repeat(235);
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\n");
    tmp.write("app/cm.yaml", &CONFIGMAP.replace("name: cm", &format!("name: {name}")));
    let out = tmp.mkdir("out");
    let r = ours(&["build", s(&tmp.path("app")), "-o", s(&out)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(common::files_under(&out), [".peerpods-build-files".to_string(), format!("v1_configmap_{name}.yaml")]);
    let single = ours(&["build", s(&tmp.path("app")), "-o", s(&out.join(format!("{}.yaml", "x".repeat(250))))], &tmp.root);
    assert!(single.success(), "{}", single.stderr);
}

// ---------------------------------------------------------------------------
// Paths as kustomize takes them: `..` lexically, and named as written

#[test]
fn a_refused_file_is_named_as_written_not_where_its_link_leads() {
    let tmp = TempTree::new("named-as-written");
    tmp.write("secret/environ", "A=1\n");
    tmp.symlink(s(&tmp.path("secret/environ")), "app/env.txt");
    tmp.write("app/kustomization.yaml", "configMapGenerator:\n- name: x\n  envs:\n  - env.txt\n");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    let expected = format!("security; file '{}' is not in or below '{}'", s(&app.join("env.txt")), s(&app));
    assert!(r.stderr.contains(&expected), "{}", r.stderr);
    assert!(!r.stderr.contains("secret/environ"), "the link's target was shown: {}", r.stderr);
    if let Some(reference) = common::reference_run(&[s(&app)], &tmp.root, "named-as-written") {
        assert!(reference.stderr.contains(&expected), "the reference says: {}", reference.stderr);
    }
}

#[test]
fn dot_dot_after_a_link_is_taken_lexically_as_in_kustomize() {
    let tmp = TempTree::new("lexical-dotdot");
    tmp.write("app/cm2.yaml", &CONFIGMAP.replace("name: cm", "name: lexical"));
    tmp.write("app/deep/dir/cm2.yaml", &CONFIGMAP.replace("name: cm", "name: physical-child"));
    tmp.write("app/deep/cm2.yaml", &CONFIGMAP.replace("name: cm", "name: physical"));
    tmp.symlink("deep/dir", "app/ldeep");
    tmp.write("app/f.yaml", CONFIGMAP);
    tmp.write("app/kustomization.yaml", "resources:\n- ldeep/../cm2.yaml\n- f.yaml/../f.yaml\n");
    let app = tmp.path("app");
    let r = ours(&["build", s(&app)], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    assert!(r.stdout.contains("name: lexical") && r.stdout.contains("name: cm\n"), "{}", r.stdout);
    if let Some(reference) = common::reference_run(&[s(&app)], &tmp.root, "lexical-dotdot") {
        assert_eq!(r.stdout, reference.stdout);
    }
}

// ---------------------------------------------------------------------------
// One node budget for the whole build

/// Builds `dir`, which must fail naming `names` within `ceiling_mib` of memory.
fn assert_bounded(tmp: &TempTree, dir: &Path, names: &str, ceiling_mib: u64) {
    let m = crate::stress::build_measured(tmp, dir);
    assert_ne!(m.code, 0, "{}: built", dir.display());
    assert!(m.stderr.contains("excessive"), "{}", m.stderr);
    assert!(m.stderr.contains(names), "the error does not name {names}: {}", m.stderr);
    assert!(m.peak_mib < ceiling_mib, "peak memory {} MiB (ceiling {ceiling_mib} MiB)", m.peak_mib);
}

#[test]
fn aliases_are_bounded_across_documents() {
    let tmp = TempTree::new("budget-docs");
    // Twenty documents of 9^6 aliases (600,000 nodes each) in 7 KB: each passes alone.
    let one = crate::security::alias_bomb(6);
    let docs: Vec<String> = (0..20).map(|i| one.replace("name: lol", &format!("name: lol{i}"))).collect();
    tmp.write("app/r.yaml", &docs.join("---\n"));
    tmp.write("app/kustomization.yaml", "resources:\n- r.yaml\n");
    assert_bounded(&tmp, &tmp.path("app"), "r.yaml", 1024);
}

#[test]
fn json_patch_copies_are_bounded() {
    let tmp = TempTree::new("budget-copy");
    tmp.write("app/cm.yaml", CONFIGMAP);
    let ops: Vec<String> = (0..40).map(|i| format!("- op: copy\n  from: /data\n  path: /data/c{i}\n")).collect();
    tmp.write("app/copies.yaml", &ops.concat());
    tmp.write("app/kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: copies.yaml\n  target:\n    kind: ConfigMap\n");
    assert_bounded(&tmp, &tmp.path("app"), "kustomization.yaml: patches[0]", 1024);
    // A few copies build, as kustomize builds them.
    tmp.write("small/cm.yaml", CONFIGMAP);
    tmp.write("small/copies.yaml", &ops[..3].concat());
    tmp.write("small/kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: copies.yaml\n  target:\n    kind: ConfigMap\n");
    let r = ours(&["build", s(&tmp.path("small"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    if let Some(reference) = common::reference_run(&[s(&tmp.path("small"))], &tmp.root, "budget-copy") {
        assert_eq!(r.stdout, reference.stdout);
    }
}

#[test]
fn replacement_copies_are_bounded() {
    let tmp = TempTree::new("budget-replace");
    let replacements: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "- source:\n    kind: ConfigMap\n    name: cm\n    fieldPath: data\n  targets:\n  - select:\n      kind: ConfigMap\n      name: cm\n    fieldPaths:\n    - data.c{i}\n    options:\n      create: true\n"
            )
        })
        .collect();
    tmp.write("app/cm.yaml", CONFIGMAP);
    tmp.write("app/kustomization.yaml", &format!("resources:\n- cm.yaml\nreplacements:\n{}", replacements.concat()));
    // Copies into another resource build as in kustomize. (Into the source itself kustomize
    // sees the created field in the value it copies; not compared here.)
    tmp.write("small/cm.yaml", &format!("{CONFIGMAP}---\n{}", CONFIGMAP.replace("name: cm", "name: other")));
    let into_other: Vec<String> = replacements[..3].iter().map(|r| r.replacen("name: cm\n    fieldPaths", "name: other\n    fieldPaths", 1)).collect();
    tmp.write("small/kustomization.yaml", &format!("resources:\n- cm.yaml\nreplacements:\n{}", into_other.concat()));
    assert_bounded(&tmp, &tmp.path("app"), s(&tmp.path("app")), 1024);
    let r = ours(&["build", s(&tmp.path("small"))], &tmp.root);
    assert!(r.success(), "{}", r.stderr);
    if let Some(reference) = common::reference_run(&[s(&tmp.path("small"))], &tmp.root, "budget-replace") {
        assert_eq!(r.stdout, reference.stdout);
    }
}

// ---------------------------------------------------------------------------
// Encodings and directives as kustomize reads them

fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    let mut bytes = if big_endian { vec![0xFE, 0xFF] } else { vec![0xFF, 0xFE] };
    for unit in text.encode_utf16() {
        bytes.extend(if big_endian { unit.to_be_bytes() } else { unit.to_le_bytes() });
    }
    bytes
}

#[test]
fn byte_order_marks_and_utf16_are_read_as_kustomize_reads_them() {
    let tmp = TempTree::new("encodings");
    let second = CONFIGMAP.replace("name: cm", "name: second");
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("bom-each-document", b"resources:\n- r.yaml\n".to_vec(), format!("\u{feff}{CONFIGMAP}---\n\u{feff}{second}").into_bytes()),
        ("utf16le", b"resources:\n- r.yaml\n".to_vec(), utf16(CONFIGMAP, false)),
        ("utf16be", b"resources:\n- r.yaml\n".to_vec(), utf16(CONFIGMAP, true)),
        ("utf16-kustomization", utf16("resources:\n- r.yaml\n", false), CONFIGMAP.as_bytes().to_vec()),
    ];
    for (name, kustomization, resource) in &cases {
        fs::create_dir_all(tmp.path(name)).unwrap();
        fs::write(tmp.path(&format!("{name}/kustomization.yaml")), kustomization).unwrap();
        fs::write(tmp.path(&format!("{name}/r.yaml")), resource).unwrap();
        let r = ours(&["build", s(&tmp.path(name))], &tmp.root);
        assert!(r.success(), "{name}: {}", r.stderr);
        assert!(r.stdout.contains("name: cm"), "{name}: {}", r.stdout);
        if let Some(reference) = common::reference_run(&[s(&tmp.path(name))], &tmp.root, name) {
            assert_eq!(r.stdout, reference.stdout, "{name}");
        }
    }
}

#[test]
fn a_yaml_directive_in_a_resource_file_is_refused_as_in_kustomize() {
    let tmp = TempTree::new("yaml-directive");
    for (name, version, wording) in [("v12", "1.2", "found incompatible YAML document"), ("v11", "1.1", "did not find expected <document start>")] {
        tmp.write(&format!("{name}/kustomization.yaml"), "resources:\n- r.yaml\n");
        tmp.write(&format!("{name}/r.yaml"), &format!("%YAML {version}\n---\n{CONFIGMAP}"));
        let r = ours(&["build", s(&tmp.path(name))], &tmp.root);
        assert!(!r.success() && r.stderr.contains(wording) && r.stderr.contains("r.yaml"), "{name}: {}{}", r.stdout, r.stderr);
        if let Some(reference) = common::reference_run(&[s(&tmp.path(name))], &tmp.root, name) {
            assert!(!reference.success() && reference.stderr.contains(wording), "{name}: the reference says {}", reference.stderr);
        }
    }
}
