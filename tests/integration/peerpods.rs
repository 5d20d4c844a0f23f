//! The peer pods deployment that ships with peerpods-build: `base/`,
//! `components/` and one overlay per provider in `overlays/<provider>/`.
//!
//! Per-provider tests sit in a module named after the provider and carry the
//! provider in their own names, so a change to `overlays/aws/` needs only
//! `cargo test aws` (`cargo test ibmcloud::` leaves ibmcloud-powervs out).
//! For each provider:
//!
//! - `<p>_renders_same_as_kustomize`: `peerpods-build build overlays/<p>`
//!   succeeds and prints byte for byte what `kubectl kustomize` prints.
//! - `<p>_renders_with_tls_same_as_kustomize`: the same after the documented
//!   one-line step that enables `components/tls-certs`, done in a scratch copy
//!   of the tree with throwaway certificates.
//! - `<p>_renders_with_every_component_same_as_kustomize`: the same with every
//!   optional component enabled, fed with throwaway files.
//! - `<p>_matches_upstream_resources_and_keys`: same resources and settings
//!   keys as the upstream rendering, except the differences listed in the
//!   provider's README (so the README and the output cannot drift apart).
//! - `<p>_codeowners_match_maintainers`: the root CODEOWNERS gives the
//!   provider folder exactly the teams of its MAINTAINERS file.
//! - `<p>_reads_only_its_folder_base_and_components`: the overlay's build graph
//!   reads no file outside `overlays/<p>/`, `base/` and `components/`.
//! - `<p>_passes_schema_check`: all three renderings pass an offline
//!   Kubernetes schema check (`tools/validate-manifests.py`).
//!
//! The reference is kustomize v5.6.0 as embedded in kubectl 1.33: the
//! `kubectl.1.33` found next to `kubectl` on PATH (symlinks resolved), run as
//! `kubectl.1.33 kustomize DIR`. `PEERPODS_REFERENCE_KUSTOMIZE` overrides it
//! with a command to which the directory is appended (for example
//! `kustomize build`); set it empty to skip the comparisons. Without a
//! reference the comparisons print a SKIP line and the tests still check that
//! peerpods-build succeeds. Likewise the upstream renderings are read from
//! `../shared/realworld` and the schema check needs python3 with the PyPI
//! package kubernetes-validate; each is skipped with a message when absent, and
//! fails the test instead under `CI=true`.

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The namespace of every namespaced object of the deployment.
const NAMESPACE: &str = "confidential-containers-system";
/// The team that owns everything a provider team does not.
const CORE_TEAM: &str = "@confidential-containers/peer-pod-maintainers";

macro_rules! provider_tests {
    ($(
        $module:ident = $provider:literal {
            $renders:ident,
            $renders_with_tls:ident,
            $renders_with_every_component:ident,
            $matches_upstream:ident,
            $codeowners:ident,
            $containment:ident,
            $schema:ident $(,)?
        }
    )*) => {
        /// Every provider with an overlay, in the order of `overlays/`.
        const PROVIDERS: &[&str] = &[$($provider),*];

        $(
            mod $module {
                #[test]
                fn $renders() {
                    super::renders_same_as_kustomize($provider);
                }

                #[test]
                fn $renders_with_tls() {
                    super::renders_with_tls_same_as_kustomize($provider);
                }

                #[test]
                fn $renders_with_every_component() {
                    super::renders_with_every_component_same_as_kustomize($provider);
                }

                #[test]
                fn $matches_upstream() {
                    super::matches_upstream_resources_and_keys($provider);
                }

                #[test]
                fn $codeowners() {
                    super::codeowners_match_maintainers($provider);
                }

                #[test]
                fn $containment() {
                    super::reads_only_its_folder_base_and_components($provider);
                }

                #[test]
                fn $schema() {
                    super::passes_schema_check($provider);
                }
            }
        )*
    };
}

provider_tests! {
    alibabacloud = "alibabacloud" {
        alibabacloud_renders_same_as_kustomize,
        alibabacloud_renders_with_tls_same_as_kustomize,
        alibabacloud_renders_with_every_component_same_as_kustomize,
        alibabacloud_matches_upstream_resources_and_keys,
        alibabacloud_codeowners_match_maintainers,
        alibabacloud_reads_only_its_folder_base_and_components,
        alibabacloud_passes_schema_check,
    }
    aws = "aws" {
        aws_renders_same_as_kustomize,
        aws_renders_with_tls_same_as_kustomize,
        aws_renders_with_every_component_same_as_kustomize,
        aws_matches_upstream_resources_and_keys,
        aws_codeowners_match_maintainers,
        aws_reads_only_its_folder_base_and_components,
        aws_passes_schema_check,
    }
    azure = "azure" {
        azure_renders_same_as_kustomize,
        azure_renders_with_tls_same_as_kustomize,
        azure_renders_with_every_component_same_as_kustomize,
        azure_matches_upstream_resources_and_keys,
        azure_codeowners_match_maintainers,
        azure_reads_only_its_folder_base_and_components,
        azure_passes_schema_check,
    }
    byom = "byom" {
        byom_renders_same_as_kustomize,
        byom_renders_with_tls_same_as_kustomize,
        byom_renders_with_every_component_same_as_kustomize,
        byom_matches_upstream_resources_and_keys,
        byom_codeowners_match_maintainers,
        byom_reads_only_its_folder_base_and_components,
        byom_passes_schema_check,
    }
    docker = "docker" {
        docker_renders_same_as_kustomize,
        docker_renders_with_tls_same_as_kustomize,
        docker_renders_with_every_component_same_as_kustomize,
        docker_matches_upstream_resources_and_keys,
        docker_codeowners_match_maintainers,
        docker_reads_only_its_folder_base_and_components,
        docker_passes_schema_check,
    }
    gcp = "gcp" {
        gcp_renders_same_as_kustomize,
        gcp_renders_with_tls_same_as_kustomize,
        gcp_renders_with_every_component_same_as_kustomize,
        gcp_matches_upstream_resources_and_keys,
        gcp_codeowners_match_maintainers,
        gcp_reads_only_its_folder_base_and_components,
        gcp_passes_schema_check,
    }
    ibmcloud = "ibmcloud" {
        ibmcloud_renders_same_as_kustomize,
        ibmcloud_renders_with_tls_same_as_kustomize,
        ibmcloud_renders_with_every_component_same_as_kustomize,
        ibmcloud_matches_upstream_resources_and_keys,
        ibmcloud_codeowners_match_maintainers,
        ibmcloud_reads_only_its_folder_base_and_components,
        ibmcloud_passes_schema_check,
    }
    ibmcloud_powervs = "ibmcloud-powervs" {
        ibmcloud_powervs_renders_same_as_kustomize,
        ibmcloud_powervs_renders_with_tls_same_as_kustomize,
        ibmcloud_powervs_renders_with_every_component_same_as_kustomize,
        ibmcloud_powervs_matches_upstream_resources_and_keys,
        ibmcloud_powervs_codeowners_match_maintainers,
        ibmcloud_powervs_reads_only_its_folder_base_and_components,
        ibmcloud_powervs_passes_schema_check,
    }
    libvirt = "libvirt" {
        libvirt_renders_same_as_kustomize,
        libvirt_renders_with_tls_same_as_kustomize,
        libvirt_renders_with_every_component_same_as_kustomize,
        libvirt_matches_upstream_resources_and_keys,
        libvirt_codeowners_match_maintainers,
        libvirt_reads_only_its_folder_base_and_components,
        libvirt_passes_schema_check,
    }
    vsphere = "vsphere" {
        vsphere_renders_same_as_kustomize,
        vsphere_renders_with_tls_same_as_kustomize,
        vsphere_renders_with_every_component_same_as_kustomize,
        vsphere_matches_upstream_resources_and_keys,
        vsphere_codeowners_match_maintainers,
        vsphere_reads_only_its_folder_base_and_components,
        vsphere_passes_schema_check,
    }
}

// ---------------------------------------------------------------------------
// Running the engine and the reference

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    success: bool,
    status: String,
    stdout: String,
    stderr: String,
}

fn run(program: &str, args: &[&str], cwd: &Path) -> Run {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    Run {
        success: out.status.success(),
        status: out.status.to_string(),
        stdout: String::from_utf8(out.stdout)
            .unwrap_or_else(|e| panic!("{program} {args:?} printed non-UTF-8: {e}")),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `peerpods-build build <dir>` run in `cwd`; panics unless it succeeds with
/// some output.
fn engine_build(cwd: &Path, dir: &str) -> String {
    let r = run(env!("CARGO_BIN_EXE_peerpods-build"), &["build", dir], cwd);
    assert!(
        r.success,
        "peerpods-build build {dir} failed ({}) in {}:\n{}",
        r.status,
        cwd.display(),
        r.stderr
    );
    assert!(
        !r.stdout.trim().is_empty(),
        "peerpods-build build {dir} printed nothing"
    );
    r.stdout
}

/// The reference rendering of `dir` (run in `cwd`), or None without a
/// reference. Panics when the reference fails or warns: the tree must use no
/// deprecated kustomize field.
fn reference_build(cwd: &Path, dir: &str) -> Option<String> {
    let command = crate::common::reference()?;
    let mut args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
    args.push(dir);
    let r = run(&command[0], &args, cwd);
    assert!(
        r.success,
        "reference `{} {dir}` failed ({}):\n{}",
        command.join(" "),
        r.status,
        r.stderr
    );
    assert!(
        r.stderr.trim().is_empty(),
        "reference kustomize warned while building {dir} (deprecated field?):\n{}",
        r.stderr
    );
    Some(r.stdout)
}

/// Compares the engine's rendering with the reference's, or says why not.
fn assert_same_as_reference(cwd: &Path, dir: &str, label: &str, engine: &str) {
    match reference_build(cwd, dir) {
        Some(expected) => assert_eq!(
            engine,
            expected.as_str(),
            "{label}: peerpods-build and kubectl kustomize differ"
        ),
        None => crate::common::skip(
            label,
            &format!("comparison with kubectl kustomize skipped, {}; only checked that peerpods-build succeeds", crate::common::NO_REFERENCE),
        ),
    }
}

// ---------------------------------------------------------------------------
// Scratch copies of the tree, for the variants that need files nobody commits

/// A copy of `base/`, `components/` and one overlay in a temporary folder,
/// removed on drop. Files a folder's `.gitignore` names (credentials, keys,
/// certificates a developer may have put in the work tree) are not copied.
struct Sandbox {
    root: PathBuf,
    provider: String,
}

impl Sandbox {
    fn new(provider: &str, variant: &str) -> Sandbox {
        let root = std::env::temp_dir().join(format!(
            "peerpods-test-{}-{provider}-{variant}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&root);
        for part in ["base", "components"] {
            copy_tree(&repo().join(part), &root.join(part));
        }
        copy_tree(
            &repo().join("overlays").join(provider),
            &root.join("overlays").join(provider),
        );
        Sandbox {
            root,
            provider: provider.to_owned(),
        }
    }

    fn overlay(&self) -> String {
        format!("overlays/{}", self.provider)
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.root.join(relative);
        fs::write(&path, content).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    /// The documented way to enable a component: one line under
    /// `components:` in the overlay's kustomization.yaml.
    fn enable(&self, component: &str) {
        let path = self.root.join(self.overlay()).join("kustomization.yaml");
        let text = fs::read_to_string(&path).unwrap();
        let entry = format!("- ../../components/{component}");
        let mut lines: Vec<&str> = text.lines().collect();
        match lines.iter().position(|line| *line == "components:") {
            Some(at) => lines.insert(at + 1, &entry),
            None => {
                lines.push("");
                lines.push("components:");
                lines.push(&entry);
            }
        }
        fs::write(&path, lines.join("\n") + "\n").unwrap();
    }

    fn build(&self) -> String {
        engine_build(&self.root, &self.overlay())
    }

    fn assert_same_as_reference(&self, label: &str, engine: &str) {
        assert_same_as_reference(&self.root, &self.overlay(), label, engine);
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let ignored: BTreeSet<String> = fs::read_to_string(from.join(".gitignore"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if ignored.contains(&name) {
            continue;
        }
        let source = entry.path();
        if source.is_dir() {
            copy_tree(&source, &to.join(&name));
        } else {
            fs::copy(&source, to.join(&name))
                .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        }
    }
}

/// Throwaway PEM-armoured text, not a real key or certificate: kustomize
/// only base64-encodes it. Long enough to wrap like a real one.
fn fake_pem(label: &str, seed: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let body: Vec<String> = (0..7)
        .map(|row| {
            (0..64)
                .map(|col| ALPHABET[(seed * 31 + row * 17 + col * 7) % 64] as char)
                .collect()
        })
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    )
}

/// Fake certificates in `components/tls-certs/` and the component enabled.
fn enable_tls(sandbox: &Sandbox) {
    sandbox.write("components/tls-certs/ca.crt", &fake_pem("CERTIFICATE", 1));
    sandbox.write(
        "components/tls-certs/client.crt",
        &fake_pem("CERTIFICATE", 2),
    );
    sandbox.write(
        "components/tls-certs/client.key",
        &fake_pem("PRIVATE KEY", 3),
    );
    sandbox.enable("tls-certs");
}

fn credentials_example(provider: &str) -> Option<String> {
    fs::read_to_string(
        repo()
            .join("overlays")
            .join(provider)
            .join("credentials.env.example"),
    )
    .ok()
}

fn assert_contains(output: &str, needle: &str, label: &str) {
    assert!(
        output.contains(needle),
        "{label}: output lacks `{needle}`:\n{output}"
    );
}

// ---------------------------------------------------------------------------
// Rendering

fn renders_same_as_kustomize(provider: &str) {
    let dir = format!("overlays/{provider}");
    let output = engine_build(repo(), &dir);
    assert_contains(&output, &format!("CLOUD_PROVIDER: {provider}"), &dir);
    assert_same_as_reference(repo(), &dir, &dir, &output);
}

fn renders_with_tls_same_as_kustomize(provider: &str) {
    let sandbox = Sandbox::new(provider, "tls");
    enable_tls(&sandbox);
    let output = sandbox.build();
    let label = format!("overlays/{provider} with components/tls-certs");
    for needle in [
        "name: certs-for-tls",
        "CACERT_FILE: /etc/certificates/ca.crt",
        "mountPath: /etc/certificates",
    ] {
        assert_contains(&output, needle, &label);
    }
    sandbox.assert_same_as_reference(&label, &output);
}

/// Every optional component enabled in `sandbox`, fed with throwaway files;
/// returns what the output must then contain.
fn enable_every_component(sandbox: &Sandbox, provider: &str) -> Vec<&'static str> {
    enable_tls(sandbox);
    let mut expected = vec![
        "name: certs-for-tls",
        "name: ssh-key-secret",
        "name: auth-json-secret",
        "ENABLE_CLOUD_PROVIDER_EXTERNAL_PLUGIN: \"true\"",
    ];
    // Providers that take credentials ship an example env file; it must be
    // usable as it is.
    if let Some(example) = credentials_example(provider) {
        sandbox.write("components/credentials-env/credentials.env", &example);
        sandbox.enable("credentials-env");
        expected.push("name: peer-pods-secret");
    }
    sandbox.write(
        "components/ssh-key/id_rsa",
        &fake_pem("OPENSSH PRIVATE KEY", 4),
    );
    sandbox.write(
        "components/ssh-key/id_rsa.pub",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRocm93YXdheSBrZXkgZm9yIHRlc3Rz test@peerpods\n",
    );
    sandbox.enable("ssh-key");
    sandbox.write(
        "components/registry-auth/auth.json",
        "{\"auths\":{\"registry.example\":{\"auth\":\"dGhyb3dhd2F5OnRlc3Q=\"}}}\n",
    );
    sandbox.enable("registry-auth");
    sandbox.enable("external-plugin");
    expected
}

fn renders_with_every_component_same_as_kustomize(provider: &str) {
    let sandbox = Sandbox::new(provider, "every");
    let expected = enable_every_component(&sandbox, provider);
    let output = sandbox.build();
    let label = format!("overlays/{provider} with every component");
    for needle in expected {
        assert_contains(&output, needle, &label);
    }
    sandbox.assert_same_as_reference(&label, &output);
}

// ---------------------------------------------------------------------------
// Upstream parity: resources and settings keys

/// What a rendering carries: `Kind/name` -> namespace and data keys.
type Inventory = BTreeMap<String, Entry>;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    namespace: String,
    keys: BTreeSet<String>,
}

/// Splits a YAML stream into its documents (separator lines `---`).
fn documents(yaml: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in yaml.lines() {
        if line == "---" || line.starts_with("--- ") {
            docs.push(String::new());
        } else {
            let doc = docs.last_mut().unwrap();
            doc.push_str(line);
            doc.push('\n');
        }
    }
    docs.retain(|doc| {
        doc.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    docs
}

fn unquote(text: &str) -> String {
    let text = text.trim();
    if text.len() >= 2
        && ((text.starts_with('"') && text.ends_with('"'))
            || (text.starts_with('\'') && text.ends_with('\'')))
    {
        text[1..text.len() - 1].to_owned()
    } else {
        text.to_owned()
    }
}

/// Key and value of a `key: value` line, the key possibly quoted.
fn key_value(line: &str) -> Option<(String, &str)> {
    let line = line.trim();
    if let Some(quote @ ('"' | '\'')) = line.chars().next() {
        let end = line[1..].find(quote)? + 1;
        let rest = line[end + 1..].strip_prefix(':')?;
        return Some((line[1..end].to_owned(), rest.trim()));
    }
    let (key, value) = match line.find(": ") {
        Some(at) => (&line[..at], &line[at + 2..]),
        None => (line.strip_suffix(':')?, ""),
    };
    Some((key.to_owned(), value.trim()))
}

/// The inventory of kustomize's canonical output (as printed by
/// `kubectl kustomize` and by peerpods-build): top-level keys at column 0,
/// `metadata` and data keys indented by two spaces.
fn inventory(yaml: &str) -> Inventory {
    let mut result = Inventory::new();
    for doc in documents(yaml) {
        let (mut kind, mut name, mut namespace) = (String::new(), String::new(), String::new());
        let mut keys = BTreeSet::new();
        let mut section = String::new();
        for line in doc.lines() {
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            if !line.starts_with(' ') && !line.starts_with('-') {
                if let Some((key, value)) = key_value(line) {
                    if key == "kind" {
                        kind = unquote(value);
                    }
                    section = key;
                }
                continue;
            }
            let Some(nested) = line.strip_prefix("  ") else {
                continue;
            };
            if nested.starts_with(' ') || nested.starts_with('-') {
                continue;
            }
            let Some((key, value)) = key_value(nested) else {
                continue;
            };
            match section.as_str() {
                "metadata" if key == "name" => name = unquote(value),
                "metadata" if key == "namespace" => namespace = unquote(value),
                "data" | "stringData" | "binaryData" => {
                    keys.insert(key);
                }
                _ => {}
            }
        }
        assert!(
            !kind.is_empty() && !name.is_empty(),
            "document without kind or name:\n{doc}"
        );
        let id = format!("{kind}/{name}");
        assert!(
            result
                .insert(id.clone(), Entry { namespace, keys })
                .is_none(),
            "{id} rendered twice"
        );
    }
    result
}

fn shared() -> PathBuf {
    repo().join("..").join("shared")
}

/// The upstream rendering of a provider, or why there is none.
fn upstream_inventory(provider: &str) -> Result<Inventory, String> {
    if provider == "vsphere" {
        return helm_inventory(provider);
    }
    let path = shared()
        .join("realworld/cases")
        .join(format!("caa-{provider}"))
        .join("expected.yaml");
    fs::read_to_string(&path)
        .map(|yaml| inventory(&yaml))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Indentation of a line that holds a mapping key (not blank, not a comment).
fn content_indent(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    (!trimmed.is_empty() && !trimmed.starts_with('#')).then(|| line.len() - trimmed.len())
}

/// Uncommented keys under `<top>:` / `  <provider>:` of a chart values file.
fn helm_values_keys(path: &Path, top: &str, provider: &str) -> Result<BTreeSet<String>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut keys = BTreeSet::new();
    let mut in_top = false;
    let mut in_provider = false;
    for line in text.lines() {
        let Some(indent) = content_indent(line) else {
            continue;
        };
        let Some((key, _)) = key_value(line) else {
            continue;
        };
        match indent {
            0 => {
                in_top = key == top;
                in_provider = false;
            }
            2 => in_provider = in_top && key == provider,
            4 if in_provider => {
                keys.insert(key);
            }
            _ => {}
        }
    }
    Ok(keys)
}

/// What the Helm chart renders for `provider` with its default values
/// (`secrets.mode: create`): the objects of its templates that have a literal
/// name, the ConfigMap keys CLOUD_PROVIDER plus the provider's required
/// values, and the provider's secret keys.
fn helm_inventory(provider: &str) -> Result<Inventory, String> {
    let chart = shared().join("realworld/cloud-api-adaptor-install/charts/peerpods");
    let templates = chart.join("templates");
    let mut result = Inventory::new();
    for template in [
        "rbac.yaml",
        "configmap.yaml",
        "secrets.yaml",
        "daemonset.yaml",
    ] {
        let path = templates.join(template);
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for doc in documents(&text) {
            let (mut kind, mut name, mut namespaced) = (None, None, false);
            let mut in_metadata = false;
            for line in doc.lines() {
                if let Some(value) = line.strip_prefix("kind: ") {
                    kind = Some(value.trim().to_owned());
                }
                if !line.starts_with(' ') {
                    in_metadata = line.starts_with("metadata:");
                } else if in_metadata {
                    if let Some(value) = line.strip_prefix("  name: ") {
                        name = Some(value.trim().to_owned());
                    }
                    namespaced |= line.starts_with("  namespace: ");
                }
            }
            if let (Some(kind), Some(name)) = (kind, name) {
                if !name.contains("{{") {
                    let namespace = if namespaced {
                        NAMESPACE.to_owned()
                    } else {
                        String::new()
                    };
                    result.insert(
                        format!("{kind}/{name}"),
                        Entry {
                            namespace,
                            keys: BTreeSet::new(),
                        },
                    );
                }
            }
        }
    }
    let providers = chart.join("providers");
    let mut config = helm_values_keys(
        &providers.join(format!("{provider}.yaml")),
        "providerConfigs",
        provider,
    )?;
    config.insert("CLOUD_PROVIDER".to_owned());
    let secrets = helm_values_keys(
        &providers.join(format!("{provider}-secrets.yaml.template")),
        "providerSecrets",
        provider,
    )?;
    for (id, keys) in [
        ("ConfigMap/peer-pods-cm", config),
        ("Secret/peer-pods-secret", secrets),
    ] {
        result
            .get_mut(id)
            .ok_or_else(|| format!("the chart's templates render no {id}"))?
            .keys = keys;
    }
    Ok(result)
}

/// The intended differences a provider's README lists: the backquoted items
/// starting with `+` or `-` in its section `## Differences from upstream`.
fn intended_differences(provider: &str) -> Vec<String> {
    let path = repo().join("overlays").join(provider).join("README.md");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut in_section = false;
    let mut found = false;
    let mut items = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            in_section = line.trim() == "## Differences from upstream";
            found |= in_section;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(rest) = line.strip_prefix("- `") {
            if rest.starts_with('+') || rest.starts_with('-') {
                let item = rest.split('`').next().unwrap_or_default();
                items.push(item.to_owned());
            }
        }
    }
    assert!(
        found,
        "{}: no `## Differences from upstream` section",
        path.display()
    );
    items
}

/// Applies the listed differences to the upstream inventory; errors for items
/// that do not describe a real difference.
fn apply_differences(
    upstream: &Inventory,
    ours: &Inventory,
    items: &[String],
) -> Result<Inventory, Vec<String>> {
    let mut expected = upstream.clone();
    let mut errors = Vec::new();
    for item in items {
        let (sign, target) = item.split_at(1);
        if sign != "+" && sign != "-" {
            errors.push(format!("`{item}`: starts with neither + nor -"));
            continue;
        }
        let parts: Vec<&str> = target.split('/').collect();
        let (id, key) = match parts.as_slice() {
            [kind, name] => (format!("{kind}/{name}"), None),
            [kind, name, key] => (format!("{kind}/{name}"), Some((*key).to_owned())),
            _ => {
                errors.push(format!(
                    "`{item}`: expected `+Kind/name` or `+Kind/name/KEY`"
                ));
                continue;
            }
        };
        match key {
            None if sign == "-" => {
                if expected.remove(&id).is_none() {
                    errors.push(format!("`{item}`: upstream renders no {id}"));
                }
            }
            None => match ours.get(&id) {
                Some(_) if expected.contains_key(&id) => {
                    errors.push(format!("`{item}`: upstream renders {id} too"))
                }
                Some(entry) => {
                    expected.insert(id, entry.clone());
                }
                None => errors.push(format!("`{item}`: {id} is not rendered")),
            },
            Some(key) => match expected.get_mut(&id) {
                None => errors.push(format!("`{item}`: upstream renders no {id}")),
                Some(entry) => {
                    let changed = if sign == "+" {
                        entry.keys.insert(key)
                    } else {
                        entry.keys.remove(&key)
                    };
                    if !changed {
                        errors.push(format!("`{item}`: not a difference, check {id} upstream"));
                    }
                }
            },
        }
    }
    if errors.is_empty() {
        Ok(expected)
    } else {
        Err(errors)
    }
}

/// The differences between two inventories, written as README items.
fn difference_items(expected: &Inventory, ours: &Inventory) -> Vec<String> {
    let mut items = Vec::new();
    for (id, entry) in expected {
        match ours.get(id) {
            None => items.push(format!("-{id}")),
            Some(mine) => {
                if mine.namespace != entry.namespace {
                    items.push(format!(
                        "{id} is in namespace {:?}, upstream in {:?}",
                        mine.namespace, entry.namespace
                    ));
                }
                items.extend(
                    entry
                        .keys
                        .difference(&mine.keys)
                        .map(|k| format!("-{id}/{k}")),
                );
                items.extend(
                    mine.keys
                        .difference(&entry.keys)
                        .map(|k| format!("+{id}/{k}")),
                );
            }
        }
    }
    items.extend(
        ours.keys()
            .filter(|id| !expected.contains_key(*id))
            .map(|id| format!("+{id}")),
    );
    items
}

fn matches_upstream_resources_and_keys(provider: &str) {
    let readme = format!("overlays/{provider}/README.md");
    let items = intended_differences(provider);
    let upstream = match upstream_inventory(provider) {
        Ok(upstream) => upstream,
        Err(why) => {
            crate::common::skip(provider, &format!("upstream rendering not available ({why}); parity not checked"));
            return;
        }
    };
    let ours = inventory(&engine_build(repo(), &format!("overlays/{provider}")));
    let expected = apply_differences(&upstream, &ours, &items).unwrap_or_else(|errors| {
        panic!(
            "{readme} lists differences from upstream that are not real:\n  {}",
            errors.join("\n  ")
        )
    });
    let undocumented = difference_items(&expected, &ours);
    assert!(
        undocumented.is_empty(),
        "overlays/{provider} differs from upstream in ways {readme} does not list; add them \
         under `## Differences from upstream` if they are on purpose:\n  {}",
        undocumented.join("\n  ")
    );
}

// ---------------------------------------------------------------------------
// Ownership

struct Rule {
    pattern: String,
    owners: Vec<String>,
}

fn is_team(owner: &str) -> bool {
    owner
        .strip_prefix("@confidential-containers/")
        .is_some_and(|team| !team.is_empty() && !team.contains('/'))
}

/// The rules of the root CODEOWNERS. Only the pattern forms the matcher
/// below implements are accepted (`*` and rooted paths without wildcards),
/// so a new form fails here instead of being evaluated wrongly.
fn codeowners() -> Vec<Rule> {
    let text = fs::read_to_string(repo().join("CODEOWNERS")).expect("CODEOWNERS at the root");
    let mut rules = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let pattern = words.next().unwrap().to_owned();
        let owners: Vec<String> = words.map(str::to_owned).collect();
        let where_ = format!("CODEOWNERS line {}", number + 1);
        assert!(
            pattern == "*"
                || (pattern.starts_with('/') && !pattern[1..].contains(['*', '?', '[', '!', '\\'])),
            "{where_}: pattern `{pattern}` is not supported by tests/integration/peerpods.rs \
             (use `*` or a path starting with `/`)"
        );
        assert!(!owners.is_empty(), "{where_}: `{pattern}` has no owner");
        for owner in &owners {
            assert!(
                is_team(owner),
                "{where_}: `{owner}` is not a @confidential-containers team"
            );
        }
        rules.push(Rule { pattern, owners });
    }
    rules
}

/// Whether a CODEOWNERS pattern (of the supported forms) matches a path
/// relative to the repository root.
fn pattern_matches(pattern: &str, path: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let rooted = &pattern[1..];
    if let Some(dir) = rooted.strip_suffix('/') {
        path.starts_with(&format!("{dir}/"))
    } else {
        path == rooted || path.starts_with(&format!("{rooted}/"))
    }
}

/// The owners GitHub applies to a path: those of the last matching rule.
fn owners_of<'a>(rules: &'a [Rule], path: &str) -> &'a [String] {
    rules
        .iter()
        .rev()
        .find(|rule| pattern_matches(&rule.pattern, path))
        .map(|rule| rule.owners.as_slice())
        .unwrap_or(&[])
}

fn maintainers(provider: &str) -> Vec<String> {
    let path = repo().join("overlays").join(provider).join("MAINTAINERS");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let teams: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert!(!teams.is_empty(), "{} names nobody", path.display());
    for team in &teams {
        assert!(
            is_team(team),
            "{}: `{team}` is not a @confidential-containers team",
            path.display()
        );
    }
    teams
}

/// Files of a folder, recursively, relative to the repository root.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn codeowners_match_maintainers(provider: &str) {
    let rules = codeowners();
    let teams = maintainers(provider);
    let folder = format!("/overlays/{provider}/");
    let entries = rules.iter().filter(|rule| rule.pattern == folder).count();
    assert_eq!(
        entries, 1,
        "CODEOWNERS must have exactly one `{folder}` entry"
    );
    for file in files_under(&repo().join("overlays").join(provider)) {
        let path = relative(&file);
        assert_eq!(
            owners_of(&rules, &path),
            teams.as_slice(),
            "CODEOWNERS and overlays/{provider}/MAINTAINERS disagree on the owners of {path}"
        );
    }
}

// ---------------------------------------------------------------------------
// Containment: which files an overlay's build reads

/// A reader for the block-style YAML of this repository's kustomization
/// files: mappings, sequences, plain and quoted scalars, comments, empty
/// `{}`/`[]` and block scalars. Anything else (anchors, aliases, tags,
/// non-empty flow collections, several documents) is an error, so that a
/// construct it does not understand can never hide a file reference.
mod mini_yaml {
    use serde_json::{Map, Value};

    struct Line {
        indent: usize,
        text: String,
        number: usize,
    }

    pub fn parse(source: &str) -> Result<Value, String> {
        let mut lines = Vec::new();
        for (index, raw) in source.lines().enumerate() {
            let number = index + 1;
            let text = strip_comment(raw).trim_end();
            let body = text.trim_start();
            if body.is_empty() {
                continue;
            }
            let indent = text.len() - body.len();
            if text[..indent].contains('\t') {
                return Err(format!("line {number}: tab in indentation"));
            }
            if indent == 0 && (body == "---" || body == "..." || body.starts_with('%')) {
                return Err(format!(
                    "line {number}: one document per kustomization file"
                ));
            }
            lines.push(Line {
                indent,
                text: body.to_owned(),
                number,
            });
        }
        if lines.is_empty() {
            return Ok(Value::Null);
        }
        let mut parser = Parser { lines, at: 0 };
        let value = parser.node(parser.lines[0].indent)?;
        match parser.lines.get(parser.at) {
            Some(line) => Err(format!("line {}: unexpected indentation", line.number)),
            None => Ok(value),
        }
    }

    /// The line without its comment (a `#` at the start or after a blank,
    /// outside quotes).
    fn strip_comment(line: &str) -> &str {
        let (mut single, mut double) = (false, false);
        let mut previous = ' ';
        for (at, c) in line.char_indices() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                '#' if !single && !double && previous.is_whitespace() => return &line[..at],
                _ => {}
            }
            previous = c;
        }
        line
    }

    fn is_item(text: &str) -> bool {
        text == "-" || text.starts_with("- ")
    }

    /// `key: value` or `key:`, the key plain or quoted.
    fn split_key(text: &str) -> Option<(String, &str)> {
        if let Some(quote @ ('"' | '\'')) = text.chars().next() {
            let end = text[1..].find(quote)? + 1;
            let rest = &text[end + 1..];
            let value = rest.strip_prefix(':')?;
            return (value.is_empty() || value.starts_with(' '))
                .then(|| (text[1..end].to_owned(), value.trim()));
        }
        if text.starts_with(['[', '{', '&', '*', '!', '|', '>']) {
            return None;
        }
        let (key, value) = match text.find(": ") {
            Some(at) => (&text[..at], &text[at + 2..]),
            None => (text.strip_suffix(':')?, ""),
        };
        (!key.is_empty()).then(|| (key.to_owned(), value.trim()))
    }

    fn scalar(text: &str, number: usize) -> Result<Value, String> {
        let unsupported = |what: &str| Err(format!("line {number}: {what} are not supported"));
        match text.chars().next() {
            Some('"') if text.len() >= 2 && text.ends_with('"') => Ok(Value::String(
                text[1..text.len() - 1]
                    .replace("\\\"", "\"")
                    .replace("\\\\", "\\"),
            )),
            Some('\'') if text.len() >= 2 && text.ends_with('\'') => {
                Ok(Value::String(text[1..text.len() - 1].replace("''", "'")))
            }
            Some('"' | '\'') => Err(format!("line {number}: unterminated quote")),
            _ if text == "{}" => Ok(Value::Object(Map::new())),
            _ if text == "[]" => Ok(Value::Array(Vec::new())),
            Some('[' | '{') => unsupported("flow collections"),
            Some('&' | '*' | '!') => unsupported("anchors, aliases and tags"),
            _ => Ok(Value::String(text.to_owned())),
        }
    }

    struct Parser {
        lines: Vec<Line>,
        at: usize,
    }

    impl Parser {
        fn next_indent(&self) -> Option<usize> {
            self.lines.get(self.at).map(|line| line.indent)
        }

        fn node(&mut self, indent: usize) -> Result<Value, String> {
            if is_item(&self.lines[self.at].text) {
                self.sequence(indent)
            } else {
                self.mapping(indent)
            }
        }

        fn sequence(&mut self, indent: usize) -> Result<Value, String> {
            let mut items = Vec::new();
            while self.next_indent() == Some(indent) && is_item(&self.lines[self.at].text) {
                let text = self.lines[self.at].text.clone();
                let number = self.lines[self.at].number;
                let rest = text[1..].trim_start();
                if rest.is_empty() {
                    self.at += 1;
                    match self.next_indent() {
                        Some(deeper) if deeper > indent => items.push(self.node(deeper)?),
                        _ => items.push(Value::Null),
                    }
                } else if split_key(rest).is_some() {
                    // `- key: value` opens a mapping whose keys align with `key`.
                    let column = indent + text.len() - rest.len();
                    self.lines[self.at].indent = column;
                    self.lines[self.at].text = rest.to_owned();
                    items.push(self.mapping(column)?);
                } else {
                    items.push(scalar(rest, number)?);
                    self.at += 1;
                }
            }
            Ok(Value::Array(items))
        }

        fn mapping(&mut self, indent: usize) -> Result<Value, String> {
            let mut map = Map::new();
            while self.next_indent() == Some(indent) && !is_item(&self.lines[self.at].text) {
                let number = self.lines[self.at].number;
                let text = self.lines[self.at].text.clone();
                let (key, value) = split_key(&text)
                    .ok_or_else(|| format!("line {number}: expected `key: value`"))?;
                self.at += 1;
                let value = if value.starts_with(['|', '>']) {
                    let mut block = String::new();
                    while self.next_indent().is_some_and(|deeper| deeper > indent) {
                        block.push_str(&self.lines[self.at].text);
                        block.push('\n');
                        self.at += 1;
                    }
                    Value::String(block)
                } else if !value.is_empty() {
                    scalar(value, number)?
                } else {
                    match self.next_indent() {
                        Some(deeper) if deeper > indent => self.node(deeper)?,
                        Some(same) if same == indent && is_item(&self.lines[self.at].text) => {
                            self.sequence(indent)?
                        }
                        _ => Value::Null,
                    }
                };
                if map.insert(key.clone(), value).is_some() {
                    return Err(format!("line {number}: duplicate key `{key}`"));
                }
            }
            Ok(Value::Object(map))
        }
    }
}

/// Fields that read no file.
const INERT_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "labels",
    "commonAnnotations",
    "images",
    "replicas",
    "generatorOptions",
    "sortOptions",
    "buildMetadata",
];

/// Deprecated fields: kustomize warns about them, so the tree must not use
/// them.
const DEPRECATED_FIELDS: &[&str] = &[
    "bases",
    "commonLabels",
    "imageTags",
    "patchesJson6902",
    "patchesStrategicMerge",
    "vars",
];

fn generated_from(field: &str) -> bool {
    field == "configMapGenerator" || field == "secretGenerator"
}

/// Every file the build of the kustomization in `dir` reads, found by walking
/// its graph: resources, components, patches, replacements, generator
/// sources, CRDs, configurations, plugin configs and openapi schemas.
fn kustomization_reads(dir: &Path, reads: &mut BTreeSet<PathBuf>) -> Result<(), String> {
    let file = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| format!("{}: no kustomization file", dir.display()))?;
    if !reads.insert(file.clone()) {
        return Ok(());
    }
    let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let value = mini_yaml::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let fields = value
        .as_object()
        .ok_or_else(|| format!("{}: not a mapping", file.display()))?;
    let at = |what: &str| format!("{} `{what}`", file.display());

    let strings = |value: &Value, field: &str| -> Result<Vec<String>, String> {
        match value {
            Value::Null => Ok(Vec::new()),
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(items) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{}: expected a list of paths", at(field)))
                })
                .collect(),
            _ => Err(format!("{}: expected a list of paths", at(field))),
        }
    };
    let objects =
        |value: &Value, field: &str| -> Result<Vec<serde_json::Map<String, Value>>, String> {
            match value {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items
                    .iter()
                    .map(|item| {
                        item.as_object()
                            .cloned()
                            .ok_or_else(|| format!("{}: expected a list of mappings", at(field)))
                    })
                    .collect(),
                _ => Err(format!("{}: expected a list of mappings", at(field))),
            }
        };
    let read =
        |reference: &str, field: &str, reads: &mut BTreeSet<PathBuf>| -> Result<(), String> {
            if reference.contains("://")
                || reference.starts_with("github.com/")
                || reference.starts_with("git@")
            {
                return Err(format!("{}: remote `{reference}`", at(field)));
            }
            if Path::new(reference).is_absolute() {
                return Err(format!("{}: absolute path `{reference}`", at(field)));
            }
            let target = dir.join(reference);
            if target.is_dir() {
                kustomization_reads(&target, reads)
            } else if target.is_file() || generated_from(field) {
                // A generator's source may be a git-ignored file the user adds
                // (a component's credentials); its location is checked anyway.
                reads.insert(target);
                Ok(())
            } else {
                Err(format!("{}: `{reference}` does not exist", at(field)))
            }
        };

    for (field, value) in fields {
        let field = field.as_str();
        if INERT_FIELDS.contains(&field) {
            continue;
        }
        if DEPRECATED_FIELDS.contains(&field) {
            return Err(format!(
                "{}: deprecated field, kustomize warns about it",
                at(field)
            ));
        }
        match field {
            "resources" | "components" | "crds" | "configurations" | "generators"
            | "transformers" | "validators" => {
                for path in strings(value, field)? {
                    read(&path, field, reads)?;
                }
            }
            "patches" | "replacements" => {
                for item in objects(value, field)? {
                    if let Some(path) = item.get("path") {
                        read(path.as_str().unwrap_or_default(), field, reads)?;
                    }
                }
            }
            "openapi" => {
                if let Some(path) = value.get("path").and_then(Value::as_str) {
                    read(path, field, reads)?;
                }
            }
            "configMapGenerator" | "secretGenerator" => {
                for generator in objects(value, field)? {
                    for source in ["files", "envs", "env"] {
                        let Some(list) = generator.get(source) else {
                            continue;
                        };
                        for entry in strings(list, field)? {
                            let path = entry.split_once('=').map_or(entry.as_str(), |(_, p)| p);
                            read(path, field, reads)?;
                        }
                    }
                }
            }
            _ => {
                return Err(format!(
                    "{}: field unknown to tests/integration/peerpods.rs; teach it which files the field reads",
                    at(field)
                ))
            }
        }
    }
    Ok(())
}

/// Fails unless every file read by the kustomization in `dir` lies in one of
/// `allowed` (folders relative to the repository root).
fn assert_reads_within(dir: &str, allowed: &[String]) {
    let mut reads = BTreeSet::new();
    kustomization_reads(&repo().join(dir), &mut reads).unwrap_or_else(|e| panic!("{e}"));
    let roots: Vec<PathBuf> = allowed
        .iter()
        .map(|root| fs::canonicalize(repo().join(root)).unwrap())
        .collect();
    for file in reads {
        // Symlinks resolved; a missing generator source by its folder.
        let real = fs::canonicalize(&file).unwrap_or_else(|_| {
            let folder = file.parent().and_then(|p| fs::canonicalize(p).ok());
            let folder = folder.unwrap_or_else(|| panic!("{}: no such folder", file.display()));
            folder.join(file.file_name().unwrap())
        });
        assert!(
            roots.iter().any(|root| real.starts_with(root)),
            "{dir} reads {}, outside {}",
            relative(&file),
            allowed.join(", ")
        );
    }
}

fn reads_only_its_folder_base_and_components(provider: &str) {
    let dir = format!("overlays/{provider}");
    // Static: walk the kustomization graph.
    assert_reads_within(
        &dir,
        &[dir.clone(), "base".to_owned(), "components".to_owned()],
    );
    // Dynamic: with nothing but those folders the build still succeeds, and
    // renders the same as in the full tree.
    let sandbox = Sandbox::new(provider, "contained");
    assert_eq!(
        sandbox.build(),
        engine_build(repo(), &dir),
        "{dir} renders differently once the rest of the repository is gone"
    );
}

#[test]
fn base_and_components_read_only_their_own_folders() {
    assert_reads_within("base", &["base".to_owned()]);
    for component in files_under(&repo().join("components"))
        .iter()
        .filter(|file| {
            file.file_name()
                .is_some_and(|name| name == "kustomization.yaml")
        })
    {
        let dir = relative(component.parent().unwrap());
        assert_reads_within(&dir, &["components".to_owned()]);
    }
}

// ---------------------------------------------------------------------------
// Schema check

/// Exit status of tools/validate-manifests.py when kubernetes-validate (or
/// PyYAML) is not installed.
const VALIDATOR_MISSING: i32 = 3;

fn passes_schema_check(provider: &str) {
    let plain = engine_build(repo(), &format!("overlays/{provider}"));
    let tls = {
        let sandbox = Sandbox::new(provider, "schema-tls");
        enable_tls(&sandbox);
        sandbox.build()
    };
    let every = {
        let sandbox = Sandbox::new(provider, "schema-every");
        enable_every_component(&sandbox, provider);
        sandbox.build()
    };
    let scratch = std::env::temp_dir().join(format!(
        "peerpods-test-{}-{provider}-schema",
        std::process::id()
    ));
    fs::create_dir_all(&scratch).unwrap();
    let mut args = vec![repo().join("tools/validate-manifests.py")];
    for (variant, yaml) in [("plain", plain), ("tls", tls), ("every-component", every)] {
        let file = scratch.join(format!("{provider}-{variant}.yaml"));
        fs::write(&file, yaml).unwrap();
        args.push(file);
    }
    let outcome = Command::new("python3")
        .args(&args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output();
    let _ = fs::remove_dir_all(&scratch);
    let output = match outcome {
        Ok(output) => output,
        Err(e) => {
            crate::common::skip(provider, &format!("cannot run python3 ({e}); schema check skipped"));
            return;
        }
    };
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.code() == Some(VALIDATOR_MISSING) {
        crate::common::skip(
            provider,
            &format!(
                "schema check skipped, python3 lacks kubernetes-validate (python3 -m pip install kubernetes-validate): {}",
                report.trim()
            ),
        );
        return;
    }
    assert!(
        output.status.success(),
        "overlays/{provider} (plain, with TLS, with every component) fails the offline \
         Kubernetes schema check ({}):\n{report}",
        output.status
    );
}

// ---------------------------------------------------------------------------
// The tree as a whole

fn provider_folders() -> BTreeSet<String> {
    fs::read_dir(repo().join("overlays"))
        .expect("overlays/")
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_overlay_folder_is_a_tested_and_owned_provider() {
    let folders = provider_folders();
    let tested: BTreeSet<String> = PROVIDERS.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        folders, tested,
        "overlays/ and the provider_tests! list in tests/integration/peerpods.rs disagree"
    );
    let rules = codeowners();
    for provider in &folders {
        for file in [
            "kustomization.yaml",
            "settings.env",
            "README.md",
            "MAINTAINERS",
        ] {
            assert!(
                repo().join("overlays").join(provider).join(file).is_file(),
                "overlays/{provider} has no {file}"
            );
        }
        assert!(
            rules
                .iter()
                .any(|rule| rule.pattern == format!("/overlays/{provider}/")),
            "CODEOWNERS has no entry for /overlays/{provider}/"
        );
    }
    for rule in &rules {
        if let Some(folder) = rule.pattern.strip_prefix("/overlays/") {
            assert!(
                folders.contains(folder.trim_end_matches('/')),
                "CODEOWNERS entry {} names no provider folder",
                rule.pattern
            );
        }
    }
    for path in [
        "README.md",
        "base/kustomization.yaml",
        "components/tls/kustomization.yaml",
        "src/main.rs",
    ] {
        assert_eq!(
            owners_of(&rules, path),
            [CORE_TEAM.to_owned()].as_slice(),
            "owners of {path}"
        );
    }
}

#[test]
fn overlays_hold_no_two_identical_files() {
    let mut seen: BTreeMap<Vec<u8>, String> = BTreeMap::new();
    for file in files_under(&repo().join("overlays")) {
        let content = fs::read(&file).unwrap();
        let path = relative(&file);
        if let Some(first) = seen.insert(content, path.clone()) {
            panic!("{path} and {first} have the same content");
        }
    }
}

/// Lines repeated across provider folders are the copies the old tree was
/// made of (72% of its lines). Compared: runs of six consecutive non-blank
/// lines of any file, whitespace-trimmed.
#[test]
fn provider_folders_share_no_block_of_six_lines() {
    const BLOCK: usize = 6;
    let mut blocks: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for provider in provider_folders() {
        for file in files_under(&repo().join("overlays").join(&provider)) {
            let text = fs::read_to_string(&file).unwrap_or_default();
            let lines: Vec<String> = text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_owned)
                .collect();
            for block in lines.windows(BLOCK) {
                blocks
                    .entry(block.to_vec())
                    .or_default()
                    .insert(provider.clone());
            }
        }
    }
    let shared: Vec<String> = blocks
        .into_iter()
        .filter(|(_, providers)| providers.len() > 1)
        .map(|(block, providers)| {
            format!(
                "in {}:\n    {}",
                providers.into_iter().collect::<Vec<_>>().join(", "),
                block.join("\n    ")
            )
        })
        .collect();
    assert!(
        shared.is_empty(),
        "blocks of {BLOCK} lines repeated across provider folders; move them to base/ or \
         components/:\n  {}",
        shared.join("\n  ")
    );
}

#[test]
fn base_pins_the_image_once() {
    let mut pins = Vec::new();
    for folder in ["base", "components", "overlays"] {
        for file in files_under(&repo().join(folder)) {
            let text = fs::read_to_string(&file).unwrap_or_default();
            for (number, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.starts_with("newTag:") || line.starts_with("digest:") {
                    pins.push(format!("{}:{}", relative(&file), number + 1));
                }
            }
        }
    }
    assert_eq!(
        pins.len(),
        1,
        "image tags pinned in several places: {pins:?}"
    );
    assert!(pins[0].starts_with("base/kustomization.yaml:"), "{pins:?}");
}
