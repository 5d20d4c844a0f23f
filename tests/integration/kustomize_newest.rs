//! The newest kustomize release (v5.8.3, built from its module by `tools/go-clients.sh`) over
//! every shared suite (`tools/conformance.sh`), whose expectations are kustomize v5.8.1's output:
//! each case it fails is a difference between v5.8.1 and the newest release, and must be one
//! `tests/kustomize-newest-differences.txt` lists (docs/clients.md names the upstream change
//! behind each, and what we do about it).
use std::collections::BTreeMap;
use std::fs;

use crate::common;
use crate::go_clients;

/// Case id (suite/case) -> whether it passed, from conformance.py's `--json` output.
fn outcomes(label: &str, command: &str) -> BTreeMap<String, bool> {
    let json = tempfile::NamedTempFile::new().unwrap();
    let script = common::manifest_dir().join("tools/conformance.sh");
    // The suites take minutes, longer than common::run_program allows; conformance.py bounds each
    // case (20 s) itself.
    let run = std::process::Command::new("bash")
        .args([script.to_str().unwrap(), "--show-failures", "0", "--json", json.path().to_str().unwrap()])
        .env("CONFORMANCE_CMD", command)
        .current_dir(common::manifest_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running tools/conformance.sh");
    let text = fs::read_to_string(json.path()).unwrap_or_default();
    assert!(
        !text.is_empty(),
        "{label}: tools/conformance.sh wrote no results ({:?}):\n{}{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let id = format!("{}/{}", case["suite"].as_str().unwrap(), case["case"].as_str().unwrap());
            let passed = if case["expect"] == "error" { case["error_ok"].as_bool() == Some(true) } else { case["byte_exact"].as_bool() == Some(true) };
            (id, passed)
        })
        .collect()
}

#[test]
fn client_kustomize_newest_differs_from_v5_8_1_only_where_recorded() {
    let label = "the newest kustomize over the shared suites";
    let Some((kustomize, version)) = go_clients::client(label, go_clients::KUSTOMIZE_NEWEST) else { return };
    if common::shared_dir(label).is_none() {
        return;
    }
    let theirs = outcomes(label, &format!("{} build {{dir}} {{flags}}", kustomize.display()));
    assert!(theirs.len() > 800, "{label}: only {} cases ran", theirs.len());
    let differing: Vec<&str> = theirs.iter().filter(|(_, passed)| !**passed).map(|(id, _)| id.as_str()).collect();
    let listed_file = common::manifest_dir().join("tests/kustomize-newest-differences.txt");
    let text = fs::read_to_string(&listed_file).unwrap();
    let listed: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|l| l.split_whitespace().next().unwrap()).collect();
    pretty_assertions::assert_eq!(listed, differing, "kustomize {version} differs from the expectations (kustomize v5.8.1's output) on other cases than tests/kustomize-newest-differences.txt lists");
}

/// Where kustomize v5.8.3 (api v0.21.2/v0.21.3) builds otherwise than v5.8.1, `build` follows
/// v5.8.3 (docs/clients.md): each case's folder, whether v5.8.1 builds it otherwise (the case
/// shows a change) or alike (the case shows what did not change).
struct Newer {
    label: &'static str,
    files: &'static [(&'static str, &'static str)],
    changed: bool,
    /// `--enable-helm` on both command lines.
    helm: bool,
}

const POD_IMAGES: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: nginx:1.0\n  - name: b\n    image: \"nginx[:1\"\n  - name: c\n    image: nginx@sha512:0123456789abcdef\n  - name: d\n    image: redis:7@sha384:abcd\n  - name: e\n    image: nginx@multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8\n  - name: f\n    image: nginx@sha256+:ab\n  volumes:\n  - name: v\n    image:\n      reference: redis@sha512:ff\n";
const CRON_JOB: &str = "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n  schedule: \"* * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: a\n            image: busybox\n          volumes:\n          - name: d\n            image:\n              reference: example.com/data:v1\n          - name: e\n            image:\n              reference: example.com/other@sha512:aa\n";
const STATEFUL_SET: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: s\nspec:\n  selector:\n    matchLabels:\n      app: s\n  template:\n    metadata:\n      labels:\n        app: s\n    spec:\n      containers:\n      - name: a\n        image: busybox\n  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n  - metadata:\n      name: logs\n      labels:\n        kept: \"yes\"\n";
const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";

const NEWER: &[Newer] = &[
    // 1. images: a name that is no regular expression matches nothing (v5.8.1 panicked); any OCI digest algorithm matches.
    Newer { label: "images name no regular expression", files: &[("kustomization.yaml", "resources: [pod.yaml]\nimages:\n- name: \"nginx[\"\n  newTag: \"2\"\n"), ("pod.yaml", POD_IMAGES)], changed: true, helm: false },
    Newer { label: "images: an invalid name beside a valid one", files: &[("kustomization.yaml", "resources: [pod.yaml]\nimages:\n- name: \"nginx(\"\n  newName: x\n- name: nginx\n  newTag: \"3\"\n"), ("pod.yaml", POD_IMAGES)], changed: true, helm: false },
    Newer { label: "images: sha512, sha384 and multihash digests", files: &[("kustomization.yaml", "resources: [pod.yaml]\nimages:\n- name: nginx\n  newTag: \"2\"\n- name: redis\n  newName: example.com/redis\n"), ("pod.yaml", POD_IMAGES)], changed: true, helm: false },
    Newer { label: "images: a regular expression name and a digest", files: &[("kustomization.yaml", "resources: [pod.yaml]\nimages:\n- name: ngin.\n  digest: sha256:0000\n"), ("pod.yaml", POD_IMAGES)], changed: true, helm: false },
    Newer { label: "images: the name *x, a regular expression to Go and to us", files: &[("kustomization.yaml", "resources: [pod.yaml]\nimages:\n- name: \"*x\"\n  newTag: \"2\"\n"), ("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: x:1\n")], changed: false, helm: false },
    // 2. CronJob image volumes.
    Newer { label: "images: CronJob image volumes", files: &[("kustomization.yaml", "resources: [cj.yaml]\nimages:\n- name: example.com/data\n  newTag: v2\n- name: example.com/other\n  newName: mirror.example.com/other\n"), ("cj.yaml", CRON_JOB)], changed: true, helm: false },
    Newer { label: "images: CronJob containers as before", files: &[("kustomization.yaml", "resources: [cj.yaml]\nimages:\n- name: busybox\n  newTag: \"1.36\"\n"), ("cj.yaml", CRON_JOB)], changed: false, helm: false },
    // 3. labels and volumeClaimTemplates.
    Newer { label: "labels includeTemplates: not the volumeClaimTemplates", files: &[("kustomization.yaml", "resources: [sts.yaml]\nlabels:\n- pairs:\n    team: a\n  includeTemplates: true\n"), ("sts.yaml", STATEFUL_SET)], changed: true, helm: false },
    Newer { label: "labels includeVolumeClaimTemplates", files: &[("kustomization.yaml", "resources: [sts.yaml]\nlabels:\n- pairs:\n    team: a\n  includeVolumeClaimTemplates: true\n"), ("sts.yaml", STATEFUL_SET)], changed: true, helm: false },
    Newer { label: "labels includeTemplates and includeVolumeClaimTemplates", files: &[("kustomization.yaml", "resources: [sts.yaml]\nlabels:\n- pairs:\n    team: a\n  includeTemplates: true\n  includeVolumeClaimTemplates: true\n"), ("sts.yaml", STATEFUL_SET)], changed: true, helm: false },
    Newer { label: "labels includeSelectors: the volumeClaimTemplates as before", files: &[("kustomization.yaml", "resources: [sts.yaml]\nlabels:\n- pairs:\n    team: a\n  includeSelectors: true\n"), ("sts.yaml", STATEFUL_SET)], changed: false, helm: false },
    Newer { label: "commonLabels: the volumeClaimTemplates as before", files: &[("kustomization.yaml", "resources: [sts.yaml]\ncommonLabels:\n  team: a\n"), ("sts.yaml", STATEFUL_SET)], changed: false, helm: false },
    // 4. a folder path with `..` inside a segment.
    Newer { label: "resources: a folder named foo..bar", files: &[("kustomization.yaml", "resources:\n- foo..bar\n"), ("foo..bar/kustomization.yaml", "resources: [cm.yaml]\n"), ("foo..bar/cm.yaml", CONFIG_MAP)], changed: true, helm: false },
    Newer { label: "resources: two entries made one by indentation", files: &[("kustomization.yaml", "resources:\n- base\n - ../shared\n"), ("base/kustomization.yaml", "resources: [cm.yaml]\n"), ("base/cm.yaml", CONFIG_MAP)], changed: true, helm: false },
    Newer { label: "components: x..y/.. inside the path", files: &[("kustomization.yaml", "resources: [cm.yaml]\ncomponents:\n- sub/x..y/..\n"), ("cm.yaml", CONFIG_MAP), ("sub/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels:\n  c: \"1\"\n")], changed: true, helm: false },
    Newer { label: "resources: a file named a..b.yaml as before", files: &[("kustomization.yaml", "resources:\n- a..b.yaml\n"), ("a..b.yaml", CONFIG_MAP)], changed: false, helm: false },
    // 5. replacements into structured data (a string holding JSON or YAML) take the delimiter options.
    Newer { label: "replacements: delimiter into JSON", files: &[("kustomization.yaml", "resources: [res.yaml]\nreplacements:\n- source:\n    kind: ConfigMap\n    name: src\n    fieldPath: data.v\n  targets:\n  - select:\n      kind: ConfigMap\n      name: dst\n    fieldPaths:\n    - data.config.image\n    options:\n      delimiter: \":\"\n      index: 1\n"), ("res.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: v2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\ndata:\n  config: '{\"image\": \"nginx:v1\"}'\n")], changed: true, helm: false },
    Newer { label: "replacements: delimiter, index -1, into YAML", files: &[("kustomization.yaml", "resources: [res.yaml]\nreplacements:\n- source:\n    kind: ConfigMap\n    name: src\n    fieldPath: data.v\n  targets:\n  - select:\n      kind: ConfigMap\n      name: dst\n    fieldPaths:\n    - data.config.image\n    options:\n      delimiter: \":\"\n      index: -1\n"), ("res.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: v2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\ndata:\n  config: |\n    image: nginx:v1\n    other: 1\n")], changed: true, helm: false },
    Newer { label: "replacements: delimiter, index past the end", files: &[("kustomization.yaml", "resources: [res.yaml]\nreplacements:\n- source:\n    kind: ConfigMap\n    name: src\n    fieldPath: data.v\n  targets:\n  - select:\n      kind: ConfigMap\n      name: dst\n    fieldPaths:\n    - data.config.a.b\n    options:\n      delimiter: \"-\"\n      index: 5\n"), ("res.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: v2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\ndata:\n  config: '{\"a\": {\"b\": \"x-y\"}}'\n")], changed: true, helm: false },
    Newer { label: "replacements: delimiter into a map in JSON refused", files: &[("kustomization.yaml", "resources: [res.yaml]\nreplacements:\n- source:\n    kind: ConfigMap\n    name: src\n    fieldPath: data.v\n  targets:\n  - select:\n      kind: ConfigMap\n      name: dst\n    fieldPaths:\n    - data.config.a\n    options:\n      delimiter: \"-\"\n"), ("res.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: v2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\ndata:\n  config: '{\"a\": {\"b\": \"x-y\"}}'\n")], changed: true, helm: false },
    Newer { label: "replacements: create in JSON as before", files: &[("kustomization.yaml", "resources: [res.yaml]\nreplacements:\n- source:\n    kind: ConfigMap\n    name: src\n    fieldPath: data.v\n  targets:\n  - select:\n      kind: ConfigMap\n      name: dst\n    fieldPaths:\n    - data.config.new\n    options:\n      create: true\n"), ("res.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: v2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dst\ndata:\n  config: '{\"a\": 1}'\n")], changed: false, helm: false },
    // 6. a Secret generator merged into a Secret with stringData.
    Newer { label: "secretGenerator merge over stringData", files: &[("kustomization.yaml", SECRET_MERGE), ("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a: plain\n  b: old\ndata:\n  a: b2xk\n  c: Yw==\n")], changed: true, helm: false },
    Newer { label: "secretGenerator merge over long, number and bool stringData", files: &[("kustomization.yaml", SECRET_MERGE), ("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  long: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n  n: 5\n  t: true\n")], changed: true, helm: false },
    Newer { label: "secretGenerator merge over a stringData value that is no scalar", files: &[("kustomization.yaml", SECRET_MERGE), ("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a:\n    nested: 1\n")], changed: true, helm: false },
    Newer { label: "secretGenerator merge without stringData as before", files: &[("kustomization.yaml", SECRET_MERGE), ("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  a: b2xk\n")], changed: false, helm: false },
    Newer { label: "configMapGenerator merge: stringData is no ConfigMap field", files: &[("kustomization.yaml", "resources: [c.yaml]\nconfigMapGenerator:\n- name: c\n  behavior: merge\n  literals:\n  - b=new\n"), ("c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nstringData:\n  a: plain\ndata:\n  c: x\n")], changed: false, helm: false },
    // 7. helm names that helm would read as flags, refused before helm runs (v5.8.1 ran `helm version` first).
    Newer { label: "helmCharts releaseName --debug", files: &[("kustomization.yaml", "helmCharts:\n- name: c\n  releaseName: --debug\n"), ("charts/c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")], changed: true, helm: true },
    Newer { label: "helmCharts chart name -c", files: &[("kustomization.yaml", "helmCharts:\n- name: -c\n  releaseName: r\n")], changed: true, helm: true },
    Newer { label: "helmCharts both: the release name first", files: &[("kustomization.yaml", "helmCharts:\n- name: -c\n  releaseName: -r\n")], changed: true, helm: true },
];

const SECRET_MERGE: &str = "resources: [s.yaml]\nsecretGenerator:\n- name: s\n  behavior: merge\n  literals:\n  - b=new\n";

/// What a build says: its output, or, failing, kustomize's message (after `Error: `).
fn outcome(run: &common::Run) -> Result<String, String> {
    if run.success() {
        Ok(run.stdout.clone())
    } else {
        let message = run.stderr.split_once("rror: ").map_or(run.stderr.as_str(), |(_, m)| m);
        // kustomize prints the generator it merged from as a Go pointer (`&{0x3ef221e46000 <nil>}`),
        // different on every run; the message is what follows.
        let pointer = regex::Regex::new(r"^merging from generator &\{0x[0-9a-f]+ <nil>\}: ").unwrap();
        Err(pointer.replace(message.trim(), "").into_owned())
    }
}

#[test]
fn client_build_follows_kustomize_v5_8_3_where_it_changed() {
    let label = "build against kustomize v5.8.3 where it changed";
    let Some((kustomize, _)) = go_clients::client(label, go_clients::KUSTOMIZE_NEWEST) else { return };
    let tmp = common::TempTree::new("client-newer");
    let mut differences = Vec::new();
    for (i, case) in NEWER.iter().enumerate() {
        for (path, text) in case.files {
            tmp.write(&format!("{i}/{path}"), text);
        }
        let dir = tmp.path(&i.to_string());
        let args: &[&str] = if case.helm { &["build", ".", "--enable-helm"] } else { &["build", "."] };
        let theirs = common::run_program(kustomize.to_str().unwrap(), args, &dir);
        let mine = common::ours(args, &dir);
        match (outcome(&theirs), outcome(&mine)) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(message), Err(_)) if mine.stderr.contains(&message) => {}
            (a, b) => differences.push(format!("{}: kustomize v5.8.3 {a:?}\n  we {b:?}", case.label)),
        }
        // The case shows a change (or none) between v5.8.1 and v5.8.3.
        let reference_args: &[&str] = if case.helm { &[".", "--enable-helm"] } else { &["."] };
        if let Some(reference) = common::reference_run(reference_args, &dir, label) {
            let same = match (outcome(&reference), outcome(&theirs)) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            if same == case.changed {
                differences.push(format!("{}: kustomize v5.8.1 builds it {} v5.8.3", case.label, if same { "as" } else { "otherwise than" }));
            }
        }
    }
    assert!(differences.is_empty(), "{} of {} cases:\n\n{}", differences.len(), NEWER.len(), differences.join("\n\n"));
}
