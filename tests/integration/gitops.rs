//! The GitOps routes of deploy/ and the commands behind them: Argo CD's config management
//! plugin run as Argo CD's cmp server runs it, the custom kustomize binary as Argo CD calls
//! it, the Argo CD and Flux examples against those projects' schemas (tests/schemas/), the
//! rendered-manifests gate `build --check`, and the completion scripts and manual pages.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{self, documents, files_under, ours, reference_run, TempTree};

fn repo() -> PathBuf {
    common::manifest_dir()
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Every document of a YAML file, parsed by the crate's own parser.
fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    peerpods_build::yaml::parse::parse_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml_document(path: &Path) -> Value {
    let mut docs = yaml_documents(path);
    assert_eq!(docs.len(), 1, "{} should hold one document", path.display());
    docs.remove(0)
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().map(|v| v.as_str().expect("a string").to_owned()).collect()).unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Argo CD, route 1: the config management plugin

/// A command of plugin.yaml (`command` + `args`), as the cmp server runs it.
struct PluginCommand {
    argv: Vec<String>,
}

impl PluginCommand {
    fn read(section: &str) -> PluginCommand {
        let plugin = yaml_document(&repo().join("deploy/argocd/cmp/plugin.yaml"));
        let spec = &plugin["spec"];
        let command = match section {
            "discover" => &spec["discover"]["find"],
            other => &spec[other],
        };
        let mut argv = strings(&command["command"]);
        argv.extend(strings(&command["args"]));
        assert!(!argv.is_empty(), "plugin.yaml has no {section} command");
        PluginCommand { argv }
    }

    /// Runs it in `app_dir` with Argo CD's build environment, our binary first on PATH and
    /// the Application's `plugin.env` entries as `ARGOCD_ENV_<NAME>`.
    fn run(&self, app_dir: &Path, app_name: &str, plugin_env: &[(&str, &str)]) -> common::Run {
        let bin_dir = Path::new(common::bin()).parent().unwrap();
        let path = std::env::join_paths(
            std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .unwrap();
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .current_dir(app_dir)
            .env("PATH", path)
            .env("ARGOCD_APP_NAME", app_name)
            .env("ARGOCD_APP_NAMESPACE", "confidential-containers-system")
            .env("ARGOCD_APP_REVISION", "0123456789abcdef0123456789abcdef01234567")
            .env("ARGOCD_APP_SOURCE_PATH", app_dir.strip_prefix(repo()).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default())
            .stdin(Stdio::null());
        for (name, value) in plugin_env {
            command.env(format!("ARGOCD_ENV_{name}"), value);
        }
        let output = command.output().unwrap_or_else(|e| panic!("running {:?}: {e}", self.argv));
        common::Run {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

#[test]
fn plugin_generate_prints_each_overlay_as_the_build_and_kustomize_do() {
    let generate = PluginCommand::read("generate");
    assert_eq!(generate.argv[..2], ["sh", "-c"], "the plugin's generate runs through sh -c");
    // The overlays as a user commits them: required settings filled in (--strict refuses them empty).
    let tree = common::filled_peer_pods_tree("plugin-generate");
    for provider in common::provider_folders() {
        let app_dir = tree.root.join("overlays").join(&provider);
        let generated = generate.run(&app_dir, &format!("peer-pods-{provider}"), &[]);
        assert!(generated.success(), "generate failed for {provider}: {}", generated.stderr);
        let built = ours(&["build", s(&app_dir)], &repo());
        assert!(built.success(), "{}", built.stderr);
        assert!(generated.stdout == built.stdout, "generate for {provider} differs from `peerpods-build build overlays/{provider}`");
        if let Some(reference) = reference_run(&["."], &app_dir, &format!("plugin generate {provider}")) {
            assert!(reference.success(), "{}", reference.stderr);
            assert!(generated.stdout == reference.stdout, "generate for {provider} differs from kubectl kustomize");
        }
    }
}

#[test]
fn plugin_generate_is_strict_unless_the_application_says_otherwise() {
    let t = TempTree::new("gitops-strict");
    t.write("app/kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- target:\n    kind: Deployment\n  patch: |\n    - op: add\n      path: /metadata/labels/x\n      value: y\n");
    t.write("app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n");
    let generate = PluginCommand::read("generate");
    let strict = generate.run(&t.path("app"), "strict", &[]);
    assert!(!strict.success(), "a patch that selects nothing must fail the sync by default");
    assert!(strict.stdout.is_empty(), "a failed generate printed manifests:\n{}", strict.stdout);
    let explicit = generate.run(&t.path("app"), "strict", &[("PEERPODS_STRICT", "true")]);
    assert!(!explicit.success());
    let lenient = generate.run(&t.path("app"), "lenient", &[("PEERPODS_STRICT", "false")]);
    assert!(lenient.success(), "{}", lenient.stderr);
    assert!(lenient.stdout.contains("name: settings"), "{}", lenient.stdout);
    assert!(!lenient.stderr.is_empty(), "the unmatched patch is still reported on stderr");
}

#[test]
fn plugin_discovers_peer_pods_overlays_and_nothing_else() {
    let discover = PluginCommand::read("discover");
    for provider in common::provider_folders() {
        let found = discover.run(&repo().join("overlays").join(&provider), "discover", &[]);
        assert!(found.success() && !found.stdout.trim().is_empty(), "overlays/{provider} is not discovered: {found:?}");
    }
    // Argo CD counts a match on exit 0 with output; anything else must stay with its own kustomize.
    for other in [repo().join("tests/gitops/argocd-install"), repo().join("base")] {
        let found = discover.run(&other, "discover", &[]);
        assert!(found.success() && found.stdout.trim().is_empty(), "{} is discovered: {found:?}", other.display());
    }
}

/// The components that install both routes, applied to the parts of Argo CD's install they
/// patch: the same bytes as kustomize, the sidecar as Argo CD documents it, the plugin.yaml
/// it mounts equal to the committed one.
#[test]
fn argocd_components_add_the_sidecar_and_the_custom_binary() {
    let install = repo().join("tests/gitops/argocd-install");
    let built = ours(&["build", s(&install)], &repo());
    assert!(built.success(), "{}", built.stderr);
    if let Some(reference) = reference_run(&["."], &install, "argocd components") {
        assert!(reference.success(), "{}", reference.stderr);
        assert!(built.stdout == reference.stdout, "the Argo CD components build differently with kubectl kustomize");
    }
    let objects = peerpods_build::yaml::parse::parse_documents(&built.stdout).unwrap();
    let find = |kind: &str, prefix: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {kind} {prefix}* in the output"))
    };
    let pod = &find("Deployment", "argocd-repo-server")["spec"]["template"]["spec"];
    let volumes: BTreeMap<&str, &Value> = pod["volumes"].as_array().unwrap().iter().map(|v| (v["name"].as_str().unwrap(), v)).collect();
    let container = |list: &str, name: &str| {
        pod[list].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("no {list} {name}")).clone()
    };
    let sidecar = container("containers", "peerpods-build");
    assert_eq!(strings(&sidecar["command"]), ["/var/run/argocd/argocd-cmp-server"]);
    assert_eq!(sidecar["securityContext"]["runAsUser"], 999);
    assert_eq!(sidecar["image"], "registry.example.com/peerpods-build:0.1.0");
    let mounts: BTreeMap<&str, &Value> =
        sidecar["volumeMounts"].as_array().unwrap().iter().map(|m| (m["mountPath"].as_str().unwrap(), m)).collect();
    assert_eq!(mounts["/var/run/argocd"]["name"], "var-files");
    assert_eq!(mounts["/home/argocd/cmp-server/plugins"]["name"], "plugins");
    assert_eq!(mounts["/home/argocd/cmp-server/config/plugin.yaml"]["subPath"], "plugin.yaml");
    let tmp = mounts["/tmp"]["name"].as_str().unwrap();
    assert!(volumes[tmp].get("emptyDir").is_some(), "the sidecar's /tmp is its own emptyDir");
    let repo_server = container("containers", "argocd-repo-server");
    assert!(
        repo_server["volumeMounts"].as_array().unwrap().iter().all(|m| m["name"] != tmp),
        "the sidecar must not share the repo server's /tmp"
    );
    for mount in mounts.values() {
        assert!(volumes.contains_key(mount["name"].as_str().unwrap()), "mount {mount} names no volume");
    }
    let config_volume = &volumes[mounts["/home/argocd/cmp-server/config/plugin.yaml"]["name"].as_str().unwrap()];
    let config_map = find("ConfigMap", "peerpods-build-cmp");
    assert_eq!(config_volume["configMap"]["name"], config_map["metadata"]["name"], "the volume names the generated ConfigMap");
    let committed = fs::read_to_string(repo().join("deploy/argocd/cmp/plugin.yaml")).unwrap();
    assert_eq!(config_map["data"]["plugin.yaml"], committed.as_str());

    // Route 2: the init container puts the binary where argocd-cm says it is.
    let init = container("initContainers", "peerpods-build-tools");
    let copied_to = strings(&init["command"]).last().unwrap().clone();
    let argocd_cm = find("ConfigMap", "argocd-cm");
    let registered: Vec<(&str, &str)> = argocd_cm["data"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("kustomize.path.").map(|version| (version, v.as_str().unwrap())))
        .collect();
    assert_eq!(registered, [("peerpods-build", copied_to.as_str())]);
    let tools_mount = repo_server["volumeMounts"].as_array().unwrap().iter().find(|m| copied_to.starts_with(m["mountPath"].as_str().unwrap()));
    assert!(tools_mount.is_some(), "argocd-repo-server does not mount {copied_to}");
}

// ---------------------------------------------------------------------------
// Argo CD, route 2: peerpods-build as a kustomize version

/// Argo CD's native kustomize runs `<binary> build <path> <buildOptions...>` in the repository
/// root (util/kustomize/kustomize.go); the Application names the version argocd-cm registers.
#[test]
fn custom_binary_builds_as_argocd_calls_it() {
    let argocd_cm = yaml_document(&repo().join("deploy/argocd/custom-binary/argocd-cm.yaml"));
    let data = argocd_cm["data"].as_object().unwrap();
    let version = data.keys().find_map(|k| k.strip_prefix("kustomize.path.")).expect("a kustomize.path.<version> key");
    let options: Vec<&str> = data[&format!("kustomize.buildOptions.{version}")].as_str().unwrap().split_whitespace().collect();
    let app = yaml_document(&repo().join("deploy/argocd/apps/peer-pods-aws-kustomize.yaml"));
    assert_eq!(app["spec"]["source"]["kustomize"]["version"], version);
    let path = app["spec"]["source"]["path"].as_str().unwrap();
    let mut args = vec!["build", path];
    args.extend(&options);
    // The overlay as a user commits it: required settings filled in (--strict refuses them empty).
    let tree = common::filled_peer_pods_tree("custom-binary");
    let built = ours(&args, &tree.root);
    assert!(built.success(), "{}", built.stderr);
    if let Some(reference) = reference_run(&[path], &tree.root, "custom binary") {
        assert!(reference.success(), "{}", reference.stderr);
        assert!(built.stdout == reference.stdout, "peerpods-build {} differs from kubectl kustomize", args.join(" "));
    }
}

// ---------------------------------------------------------------------------
// Every example against its project's schema, and every path it names

/// The examples Argo CD, Flux, the External Secrets Operator and Sealed Secrets read.
fn example_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = vec![repo().join("deploy/argocd/cmp/plugin.yaml")];
    for dir in ["deploy/argocd/apps", "deploy/flux", "deploy/credentials"] {
        files.extend(files_under(&repo().join(dir)).into_iter().filter(|f| f.ends_with(".yaml")).map(|f| repo().join(dir).join(f)));
    }
    files
}

/// Exit status of tools/validate-gitops-examples.py without PyYAML or jsonschema.
const VALIDATOR_MISSING: i32 = 3;

/// Runs the schema validator; None when it cannot run here (after saying so).
fn validate(files: &[PathBuf]) -> Option<common::Run> {
    let mut args = vec![s(&repo().join("tools/validate-gitops-examples.py")).to_owned(), s(&repo().join("tests/schemas")).to_owned()];
    args.extend(files.iter().map(|f| s(f).to_owned()));
    let output = match Command::new("python3").args(&args).stdin(Stdio::null()).output() {
        Ok(output) => output,
        Err(e) => {
            crate::common::skip("gitops schemas", &format!("cannot run python3 ({e})"));
            return None;
        }
    };
    let run = common::Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    if run.code == Some(VALIDATOR_MISSING) {
        crate::common::skip("gitops schemas", &format!("python3 -m pip install pyyaml jsonschema: {}", run.stderr.trim()));
        return None;
    }
    Some(run)
}

#[test]
fn every_example_validates_against_its_projects_schema() {
    let files = example_files();
    let kinds: BTreeSet<String> =
        files.iter().flat_map(|f| yaml_documents(f)).map(|d| d["kind"].as_str().unwrap_or_default().to_owned()).collect();
    for kind in ["Application", "ApplicationSet", "ConfigManagementPlugin", "GitRepository", "Kustomization", "OCIRepository", "ExternalSecret", "SealedSecret"] {
        assert!(kinds.contains(kind), "no {kind} among the examples");
    }
    let Some(run) = validate(&files) else { return };
    assert!(run.success(), "examples fail their schemas:\n{}{}", run.stdout, run.stderr);
}

#[test]
fn the_schema_check_refuses_unknown_and_missing_fields() {
    let t = TempTree::new("gitops-bad-examples");
    let flux = fs::read_to_string(repo().join("deploy/flux/providers.yaml")).unwrap();
    let argo = fs::read_to_string(repo().join("deploy/argocd/apps/peer-pods-listed.yaml")).unwrap();
    let cases = [
        ("no-prune.yaml", flux.replacen("  prune: true\n", "", 1), "'prune' is a required property"),
        ("typo.yaml", argo.replacen("        path: ", "        pth: ", 1), "'pth' was unexpected"),
        ("wrong-kind.yaml", flux.replacen("kind: GitRepository", "kind: GitRepo", 1), "GitRepo"),
    ];
    for (name, text, expected) in &cases {
        let file = t.write(name, text);
        let Some(run) = validate(&[file]) else { return };
        assert_eq!(run.code, Some(1), "{name} passed the schema check:\n{}", run.stdout);
        assert!(run.stdout.contains(expected), "{name}: expected {expected:?} in:\n{}", run.stdout);
    }
}

/// The kustomization folders an Application or ApplicationSet deploys, with its generators
/// expanded (list elements, git directories).
fn argocd_paths(doc: &Value) -> Vec<String> {
    match doc["kind"].as_str().unwrap() {
        "Application" => vec![doc["spec"]["source"]["path"].as_str().unwrap().to_owned()],
        "ApplicationSet" => {
            let template = doc["spec"]["template"]["spec"]["source"]["path"].as_str().unwrap();
            let mut paths = Vec::new();
            for generator in doc["spec"]["generators"].as_array().unwrap() {
                for element in generator["list"]["elements"].as_array().into_iter().flatten() {
                    let mut path = template.to_owned();
                    for (key, value) in element.as_object().unwrap() {
                        path = path.replace(&format!("{{{{.{key}}}}}"), value.as_str().unwrap());
                    }
                    paths.push(path);
                }
                for directory in generator["git"]["directories"].as_array().into_iter().flatten() {
                    let pattern = repo().join(directory["path"].as_str().unwrap());
                    let matched: Vec<String> = glob::glob(s(&pattern))
                        .unwrap()
                        .map(|p| p.unwrap().strip_prefix(repo()).unwrap().to_string_lossy().into_owned())
                        .collect();
                    assert!(!matched.is_empty(), "{} matches no folder", directory["path"]);
                    paths.extend(matched.iter().map(|m| template.replace("{{.path.path}}", m)));
                }
            }
            paths
        }
        other => panic!("not an Argo CD application kind: {other}"),
    }
}

#[test]
fn every_path_an_example_names_exists() {
    let mut checked = 0;
    for file in example_files() {
        for doc in yaml_documents(&file) {
            let (paths, rendered): (Vec<String>, bool) = match doc["kind"].as_str().unwrap() {
                "Application" | "ApplicationSet" => (argocd_paths(&doc), false),
                "Kustomization" if doc["spec"]["sourceRef"]["kind"] == "GitRepository" => {
                    (vec![doc["spec"]["path"].as_str().unwrap().trim_start_matches("./").to_owned()], true)
                }
                _ => continue,
            };
            for path in paths {
                assert!(!path.contains("{{"), "{}: {path} keeps a template placeholder", file.display());
                // A rendered folder is written by CI from the overlay of the same name.
                let source = match path.strip_prefix("rendered/") {
                    Some(provider) if rendered => format!("overlays/{provider}"),
                    _ => path.clone(),
                };
                let dir = repo().join(&source);
                assert!(dir.is_dir(), "{} names {path}, but {source} does not exist", file.display());
                if source.starts_with("overlays/") {
                    assert!(dir.join("kustomization.yaml").is_file(), "{source} is not a kustomization");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= common::provider_folders().len() + 4, "only {checked} paths checked");
}

/// Each ExternalSecret produces peer-pods-secret with exactly the keys its provider's
/// credentials.env.example lists, and each provider that takes credentials has one.
#[test]
fn external_secrets_carry_each_providers_credential_keys() {
    let dir = repo().join("deploy/credentials/external-secrets");
    let with_credentials: BTreeSet<String> =
        common::provider_folders().into_iter().filter(|p| repo().join("overlays").join(p).join("credentials.env.example").is_file()).collect();
    let examples: BTreeSet<String> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(examples, with_credentials, "one ExternalSecret folder per provider with credentials.env.example");
    for provider in &with_credentials {
        let example = fs::read_to_string(repo().join("overlays").join(provider).join("credentials.env.example")).unwrap();
        let keys: BTreeSet<&str> = example
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
            .collect();
        let secret = yaml_document(&dir.join(provider).join("external-secret.yaml"));
        assert_eq!(secret["spec"]["target"]["name"], "peer-pods-secret");
        assert_eq!(secret["metadata"]["namespace"], "confidential-containers-system");
        let secret_keys: BTreeSet<&str> = secret["spec"]["data"].as_array().unwrap().iter().map(|d| d["secretKey"].as_str().unwrap()).collect();
        assert_eq!(secret_keys, keys, "{provider}: the ExternalSecret's keys");
    }
}

// ---------------------------------------------------------------------------
// The rendered-manifests route and its gate, build --check

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    files_under(dir)
        .into_iter()
        .map(|f| {
            let path = dir.join(&f);
            (f, (fs::read(&path).unwrap(), fs::metadata(&path).unwrap().modified().unwrap()))
        })
        .collect()
}

/// Runs `build ... --check` and asserts that it wrote nothing, in `out` or anywhere in `t`.
fn check(t: &TempTree, args: &[&str]) -> common::Run {
    let before = snapshot(&t.root);
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.push("--check");
    let run = ours(&all, &t.root);
    assert!(snapshot(&t.root) == before, "build --check wrote or touched a file");
    assert!(run.stdout.is_empty(), "--check prints nothing on stdout: {}", run.stdout);
    run
}

/// The stale files a failed check lists, as `name: why` with the folder left out.
fn stale_list(run: &common::Run, t: &TempTree) -> Vec<String> {
    assert_eq!(run.code, Some(1), "a stale output exits 1: {}", run.stderr);
    let prefix = format!("{}/", t.root.display());
    run.stderr
        .lines()
        .filter(|l| !l.starts_with("Error") && !l.starts_with("Warning"))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_owned())
        .collect()
}

fn providers_tree(label: &str) -> TempTree {
    let t = TempTree::new(label);
    for provider in ["aws", "libvirt", "gcp"] {
        t.write(&format!("overlays/{provider}/kustomization.yaml"), &format!("resources:\n- cm.yaml\nnamePrefix: {provider}-\n"));
        t.write(&format!("overlays/{provider}/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n");
    }
    t
}

#[test]
fn check_of_several_builds_names_changed_added_and_removed_files() {
    let t = providers_tree("gitops-check-several");
    let written = ours(&["build", "overlays/aws", "overlays/libvirt", "-o", "rendered/"], &t.root);
    assert!(written.success(), "{}", written.stderr);
    let fresh = check(&t, &["overlays/aws", "overlays/libvirt", "-o", "rendered/"]);
    assert!(fresh.success(), "a fresh render is not stale: {}", fresh.stderr);

    t.write("overlays/aws/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: changed\n");
    t.write("rendered/hand-made.yaml", "kind: ConfigMap\n");
    t.write("rendered/README.md", "not a rendered file\n");
    let stale = check(&t, &["overlays/gcp", "overlays/aws", "-o", "rendered/"]);
    assert_eq!(
        stale_list(&stale, &t),
        [
            "rendered/overlays_aws.yaml: changed",
            "rendered/overlays_gcp.yaml: added (missing from the output)",
            "rendered/overlays_libvirt.yaml: removed (no longer rendered)",
        ]
    );
    assert!(stale.stderr.contains("3 stale file(s)"), "{}", stale.stderr);
    // A file no build wrote is never stale, never removed: the check and the build say so.
    let hand_made = "rendered/hand-made.yaml: not rendered by this build and not written by peerpods-build";
    assert!(stale.stderr.contains(hand_made), "{}", stale.stderr);

    let updated = ours(&["build", "overlays/gcp", "overlays/aws", "-o", "rendered/"], &t.root);
    assert!(updated.success(), "{}", updated.stderr);
    assert!(updated.stderr.contains(hand_made) && updated.stderr.contains("(rm "), "{}", updated.stderr);
    assert_eq!(
        files_under(&t.path("rendered")),
        [".peerpods-build-files", "README.md", "hand-made.yaml", "overlays_aws.yaml", "overlays_gcp.yaml"]
    );
    let after = check(&t, &["overlays/gcp", "overlays/aws", "-o", "rendered/"]);
    assert!(after.success(), "after a build, its check passes: {}", after.stderr);
}

/// The Flux route's loop: a resource leaves the tree, the build removes the file it wrote for
/// it, and the check that failed before the build passes after it.
#[test]
fn a_build_removes_the_files_it_wrote_and_no_longer_renders() {
    let t = providers_tree("gitops-build-removes");
    t.write("overlays/aws/extra.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: adaptor\n");
    t.write("overlays/aws/kustomization.yaml", "resources:\n- cm.yaml\n- extra.yaml\nnamePrefix: aws-\n");
    assert!(ours(&["build", "overlays/aws", "-o", "rendered/aws/"], &t.root).success());
    t.write("rendered/aws/v1_secret_mine.yaml", "kind: Secret\n");
    t.write("overlays/aws/kustomization.yaml", "resources:\n- cm.yaml\nnamePrefix: aws-\n");
    assert_eq!(
        stale_list(&check(&t, &["overlays/aws", "-o", "rendered/aws/"]), &t),
        ["rendered/aws/v1_serviceaccount_aws-adaptor.yaml: removed (no longer rendered)"]
    );
    let rebuilt = ours(&["build", "overlays/aws", "-o", "rendered/aws/"], &t.root);
    assert!(rebuilt.success(), "{}", rebuilt.stderr);
    assert_eq!(
        files_under(&t.path("rendered/aws")),
        [".peerpods-build-files", "v1_configmap_aws-settings.yaml", "v1_secret_mine.yaml"]
    );
    assert!(rebuilt.stderr.contains("rendered/aws/v1_secret_mine.yaml: not rendered by this build and not written by peerpods-build"), "{}", rebuilt.stderr);
    assert!(check(&t, &["overlays/aws", "-o", "rendered/aws/"]).success());
}

#[test]
fn check_of_one_output_file() {
    let t = providers_tree("gitops-check-file");
    let missing = check(&t, &["overlays/aws", "-o", "aws.yaml"]);
    assert_eq!(stale_list(&missing, &t), ["aws.yaml: added (missing from the output)"]);
    assert!(ours(&["build", "overlays/aws", "-o", "aws.yaml"], &t.root).success());
    assert!(check(&t, &["overlays/aws", "-o", "aws.yaml"]).success());
    t.write("aws.yaml", &fs::read_to_string(t.path("aws.yaml")).unwrap().replace("a: b", "a: edited by hand"));
    assert_eq!(stale_list(&check(&t, &["overlays/aws", "-o", "aws.yaml"]), &t), ["aws.yaml: changed"]);
}

/// The layout Flux's git route uses: one folder per provider, one file per resource.
#[test]
fn check_of_a_folder_of_resource_files() {
    let t = providers_tree("gitops-check-folder");
    t.write("overlays/aws/extra.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: adaptor\n");
    t.write("overlays/aws/kustomization.yaml", "resources:\n- cm.yaml\n- extra.yaml\nnamePrefix: aws-\n");
    t.mkdir("rendered/aws");
    assert!(ours(&["build", "overlays/aws", "-o", "rendered/aws"], &t.root).success());
    assert_eq!(
        files_under(&t.path("rendered/aws")),
        [".peerpods-build-files", "v1_configmap_aws-settings.yaml", "v1_serviceaccount_aws-adaptor.yaml"]
    );
    assert!(check(&t, &["overlays/aws", "-o", "rendered/aws"]).success());

    t.write("overlays/aws/kustomization.yaml", "resources:\n- cm.yaml\nnamePrefix: aws-\n");
    assert_eq!(
        stale_list(&check(&t, &["overlays/aws", "-o", "rendered/aws"]), &t),
        ["rendered/aws/v1_serviceaccount_aws-adaptor.yaml: removed (no longer rendered)"]
    );
}

#[test]
fn check_needs_an_output_and_fails_on_a_broken_build() {
    let t = providers_tree("gitops-check-errors");
    let no_output = ours(&["build", "overlays/aws", "--check"], &t.root);
    assert!(!no_output.success());
    assert!(no_output.stderr.contains("--output"), "{}", no_output.stderr);
    t.write("overlays/aws/kustomization.yaml", "resources:\n- missing.yaml\n");
    let broken = check(&t, &["overlays/aws", "-o", "aws.yaml"]);
    assert!(!broken.success());
    assert!(broken.stderr.contains("missing.yaml"), "{}", broken.stderr);
}

/// The Flux git route end to end, as the README tells it: each provider rendered into its own
/// folder, plain manifests only (Flux applies a folder without a kustomization.yaml as it is),
/// holding exactly the documents of the overlay's build; `--check` passes on the result.
#[test]
fn rendered_provider_folders_hold_each_overlays_documents() {
    let t = TempTree::new("gitops-rendered");
    for provider in ["aws", "libvirt"] {
        let overlay = repo().join("overlays").join(provider);
        let folder = t.mkdir(&format!("rendered/{provider}"));
        let written = ours(&["build", s(&overlay), "-o", s(&folder)], &repo());
        assert!(written.success(), "{}", written.stderr);
        // Flux applies the folder's `.yaml` files; the record of what the build wrote is not one.
        let files: Vec<String> = files_under(&folder).into_iter().filter(|f| f.ends_with(".yaml")).collect();
        assert!(!files.iter().any(|f| f.starts_with("kustomization") || f == "Kustomization"), "{files:?}");
        let mut rendered: Vec<String> = files.iter().map(|f| fs::read_to_string(folder.join(f)).unwrap()).collect();
        let built = ours(&["build", s(&overlay)], &repo());
        let mut expected = documents(&built.stdout);
        rendered.sort();
        expected.sort();
        assert_eq!(rendered, expected, "rendered/{provider} does not hold the overlay's documents");
        assert!(check(&t, &[s(&overlay), "-o", s(&folder)]).success());
    }
}

// ---------------------------------------------------------------------------
// Completions and manual pages

#[test]
fn completions_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let run = ours(&["completions", shell], &repo());
        assert!(run.success(), "{}", run.stderr);
        // fish names long options as `-l check`, the others as `--check`.
        let long = |name: &str| if shell == "fish" { format!("-l {name}") } else { format!("--{name}") };
        for word in ["peerpods-build".to_owned(), "completions".to_owned(), long("check"), long("load-restrictor"), long("strict")] {
            assert!(run.stdout.contains(&word), "{shell} completions lack {word}");
        }
        let syntax_check = match shell {
            "bash" => Some(("bash", vec!["-n"])),
            "zsh" => Some(("zsh", vec!["-n"])),
            "fish" => Some(("fish", vec!["--no-execute"])),
            _ => None,
        };
        if let Some((program, flags)) = syntax_check {
            let t = TempTree::new(&format!("gitops-completion-{shell}"));
            let script = t.write("script", &run.stdout);
            let mut args: Vec<&str> = flags;
            args.push(s(&script));
            match Command::new(program).args(&args).output() {
                Ok(out) => assert!(out.status.success(), "{shell} rejects its completions: {}", String::from_utf8_lossy(&out.stderr)),
                Err(_) => eprintln!("SKIP completions {shell}: no {program} here to check the script's syntax"),
            }
        }
    }
    let unknown = ours(&["completions", "tcsh"], &repo());
    assert!(!unknown.success());
}

#[test]
fn manual_pages_of_the_program_and_of_build() {
    let page = ours(&["man"], &repo());
    assert!(page.success(), "{}", page.stderr);
    assert!(page.stdout.contains(".TH peerpods-build 1"), "{}", page.stdout);
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS"] {
        assert!(page.stdout.contains(section), "the page lacks {section}");
    }
    assert!(page.stdout.contains("peerpods\\-build\\-build(1)"), "the page lists build's own page");
    let build = ours(&["man", "build"], &repo());
    assert!(build.success(), "{}", build.stderr);
    assert!(build.stdout.contains(".TH peerpods-build-build 1"));
    assert!(build.stdout.contains("\\-\\-check"), "the build page documents --check");
    let unknown = ours(&["man", "nothing"], &repo());
    assert!(!unknown.success());
    assert!(unknown.stderr.contains("nothing"), "{}", unknown.stderr);
    if let Ok(out) = Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]).stdin(Stdio::piped()).spawn().and_then(|mut child| {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(build.stdout.as_bytes())?;
        child.wait_with_output()
    }) {
        assert!(out.status.success() && out.stderr.is_empty(), "groff warns: {}", String::from_utf8_lossy(&out.stderr));
    }
}
