//! `edit`, `create` and `localize` against the newest kustomize (v5.8.3, built from its module by
//! `tools/go-clients.sh`): the same command lines run by kustomize and by us on two copies of the
//! same folder must leave the same bytes (the kustomization file, or the whole localized tree),
//! or fail both, our stderr holding kustomize's message. The cases are tables (command lines x
//! starting kustomizations), so each subcommand's rules are kustomize's, not one example's.
//!
//! Starting files are written as kustomize writes them (its field order, its quoting, no
//! comments) and compared byte for byte. Two are not, where we differ on purpose
//! (docs/clients.md): one written by hand, with comments and flow style, which kustomize writes
//! again and drops what it cannot place while we change only the lines the edit is about
//! (compared field by field), and one with deprecated fields, which kustomize converts on every
//! edit and we only on `edit fix` (compared by what kustomize builds from each folder).
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{self, ours, run_program, TempTree};
use crate::go_clients;

/// The files every case's folder starts with (besides its kustomization): those of the `edit`
/// cases against kustomize v5.8.1, and a configuration and two components.
const MORE_FILES: &[(&str, &str)] = &[
    ("name-reference.yaml", "nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - path: spec/configName\n    kind: Widget\n"),
    ("comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels:\n  from: comp\n"),
    ("comp2/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  from: comp2\n"),
];

/// A starting kustomization: its label, its text, and how the outcomes are compared.
struct Start {
    label: &'static str,
    text: &'static str,
    compared: Compared,
}

/// How the kustomization files kustomize and we leave are compared.
#[derive(Clone, Copy, PartialEq)]
enum Compared {
    /// Byte for byte: the start is as kustomize writes a file.
    Bytes,
    /// As sets of lines (LITERALS_IN_MAP_ORDER).
    Lines,
    /// Field by field, and the bytes must differ where kustomize wrote the file: the start is
    /// written by hand (comments, flow style), which we keep and kustomize does not.
    Fields,
    /// By what kustomize builds from each folder, and the bytes must differ where kustomize
    /// wrote the file: the start has deprecated fields (`bases`, `imageTags`), which
    /// kustomize's edit converts as it writes and ours leaves to `edit fix`.
    Build,
}

const STARTS: &[Start] = &[
    Start { label: "empty", text: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", compared: Compared::Bytes },
    Start { label: "no apiVersion", text: "resources:\n- deployment.yaml\n", compared: Compared::Bytes },
    Start {
        label: "every field",
        text: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- service.yaml\n- cm-a.yaml\n- base\nnamePrefix: p-\nnameSuffix: -s\nnamespace: apps\ncommonLabels:\n  team: core\ncommonAnnotations:\n  owner: core\npatches:\n- path: replicas.yaml\n- path: json-patch.yaml\n  target:\n    kind: Deployment\n    name: web\nconfigMapGenerator:\n- literals:\n  - a=1\n  - b=2\n  name: settings\n- envs:\n  - app.env\n  name: env\n  namespace: other\nsecretGenerator:\n- literals:\n  - user=admin\n  name: creds\n  type: Opaque\nimages:\n- name: nginx\n  newTag: \"1.27\"\nreplicas:\n- count: 2\n  name: web\nconfigurations:\n- name-reference.yaml\ngenerators:\n- generator-cm.yaml\ntransformers:\n- label-transformer.yaml\ncomponents:\n- comp\nbuildMetadata:\n- originAnnotations\n",
        compared: Compared::Bytes,
    },
    Start {
        label: "fields in another order",
        text: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: nginx\n  newName: registry.example.com/nginx\nnamespace: apps\nresources:\n- deployment.yaml\nlabels:\n- includeSelectors: true\n  pairs:\n    team: core\n",
        compared: Compared::Bytes,
    },
    Start {
        label: "a component",
        text: "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- service.yaml\n",
        compared: Compared::Bytes,
    },
    Start {
        label: "deprecated fields",
        text: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nbases:\n- base\nresources:\n- deployment.yaml\nimageTags:\n- name: nginx\n  newTag: \"1.27\"\n",
        compared: Compared::Build,
    },
    Start {
        label: "by hand, with comments",
        text: "# The web application.\nresources: [deployment.yaml, service.yaml]  # both\n\n# Who owns it.\ncommonLabels:\n  team: core   # the team\nimages:\n  - name: nginx\n    newTag: '1.27'\n",
        compared: Compared::Fields,
    },
];

/// Command lines (after the program), each run on a copy of every start.
const EDITS: &[&[&str]] = &[
    // resources, bases, components, configurations, generators, transformers
    &["edit", "add", "resource", "service.yaml"],
    &["edit", "add", "resource", "cm-*.yaml", "deployment.yaml"],
    &["edit", "add", "resource", "base", "kustomization.yaml"],
    &["edit", "add", "resource", "missing.yaml"],
    &["edit", "add", "resource", "--no-verify", "https://example.com/app.yaml"],
    &["edit", "add", "resource"],
    &["edit", "add", "base", "base,base2"],
    &["edit", "add", "component", "comp", "comp2"],
    &["edit", "add", "component", "missing"],
    &["edit", "add", "configuration", "name-reference.yaml"],
    &["edit", "add", "generator", "generator-cm.yaml"],
    &["edit", "add", "transformer", "label-transformer.yaml"],
    &["edit", "add", "generator", "missing.yaml"],
    &["edit", "add", "transformer", "missing-*.yaml", "label-*.yaml"],
    &["edit", "add", "configuration", "missing.yaml"],
    &["edit", "add", "configuration"],
    &["edit", "remove", "resource", "deployment.yaml"],
    &["edit", "remove", "resource", "cm-*", "not-listed.yaml"],
    &["edit", "remove", "component", "comp"],
    &["edit", "remove", "component", "not-listed"],
    &["edit", "remove", "transformer", "label-transformer.yaml"],
    // patches
    &["edit", "add", "patch", "--path", "replicas.yaml"],
    &["edit", "add", "patch", "--path", "json-patch.yaml", "--group", "apps", "--version", "v1", "--kind", "Deployment", "--name", "web"],
    &["edit", "add", "patch", "--patch", "[{\"op\": \"add\", \"path\": \"/metadata/labels/x\", \"value\": \"y\"}]", "--kind", "Service", "--annotation-selector", "a=b"],
    &["edit", "add", "patch"],
    &["edit", "remove", "patch", "--path", "replicas.yaml"],
    &["edit", "remove", "patch", "--path", "json-patch.yaml", "--kind", "Deployment", "--name", "web"],
    // generators
    &["edit", "add", "configmap", "settings", "--from-literal=c=3"],
    &["edit", "add", "configmap", "new", "--from-literal=a=1", "--from-literal=b=two words", "--from-file=settings.properties"],
    &["edit", "add", "configmap", "env", "--from-env-file=app.env", "--disableNameSuffixHash", "--namespace=ns1", "--behavior=merge"],
    &["edit", "add", "configmap", "keyed", "--from-file=props=settings.properties"],
    &["edit", "add", "configmap", "bad", "--from-literal=novalue"],
    &["edit", "add", "secret", "creds", "--from-literal=password=secret"],
    &["edit", "add", "secret", "tls", "--from-env-file=app.env", "--type=kubernetes.io/tls"],
    &["edit", "set", "configmap", "settings", "--from-literal=a=10"],
    &["edit", "set", "configmap", "settings", "--new-namespace=apps2"],
    &["edit", "set", "configmap", "missing", "--from-literal=a=10"],
    &["edit", "set", "secret", "creds", "--from-literal=user=root"],
    &["edit", "remove", "configmap", "settings"],
    &["edit", "remove", "configmap", "env", "--namespace=other"],
    &["edit", "remove", "configmap", "missing"],
    &["edit", "remove", "secret", "creds"],
    // labels, annotations
    &["edit", "add", "label", "tier:web,env:prod"],
    &["edit", "add", "label", "team:platform"],
    &["edit", "add", "label", "team:platform", "--force"],
    &["edit", "add", "label", "tier:web", "--without-selector"],
    &["edit", "add", "label", "tier:web", "--without-selector", "--include-templates"],
    &["edit", "add", "annotation", "note:hello world,owner:platform", "--force"],
    &["edit", "add", "annotation", "bad"],
    &["edit", "set", "label", "team:platform", "tier:web"],
    &["edit", "set", "annotation", "owner:\"quoted\""],
    &["edit", "remove", "label", "team"],
    &["edit", "remove", "label", "missing"],
    &["edit", "remove", "label", "missing,team", "-i"],
    &["edit", "remove", "annotation", "owner"],
    // names, namespace, images, replicas
    &["edit", "set", "nameprefix", "acme-"],
    &["edit", "set", "namesuffix", "-v2"],
    &["edit", "set", "namesuffix", "--", "-v2"],
    &["edit", "set", "namespace", "staging"],
    &["edit", "set", "namespace", "Not_Valid"],
    &["edit", "set", "image", "nginx=registry.example.com/nginx:1.28"],
    &["edit", "set", "image", "nginx:1.28"],
    &["edit", "set", "image", "nginx@sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3"],
    &["edit", "set", "image", "redis=*:7"],
    &["edit", "set", "image", "nginx=registry.example.com/nginx"],
    &["edit", "set", "replicas", "web=5", "db=1"],
    &["edit", "set", "replicas", "web=x"],
    // buildMetadata
    &["edit", "add", "buildmetadata", "managedByLabel,transformerAnnotations"],
    &["edit", "add", "buildmetadata", "unknownOption"],
    &["edit", "set", "buildmetadata", "transformerAnnotations"],
    &["edit", "remove", "buildmetadata", "originAnnotations"],
    // fix
    &["edit", "fix"],
];

/// Command lines both refuse, in other words: flags are read by our command-line parser, which
/// words its own refusals (docs/clients.md).
const REFUSED_IN_OTHER_WORDS: &[(&[&str], &str)] = &[(&["edit", "set", "namesuffix", "-v2"], "unexpected argument '-v' found")];

/// Command lines after which kustomize writes a generator's literals in Go's map order, which
/// changes from run to run (`UpdateLiteralSources` collects them in a map): the files are
/// compared as sets of lines; we keep the file's order.
const LITERALS_IN_MAP_ORDER: &[&[&str]] = &[
    &["edit", "set", "configmap", "settings", "--from-literal=a=10"],
    &["edit", "set", "secret", "creds", "--from-literal=user=root"],
];

/// `create` command lines, each in a folder holding the files (and no kustomization).
const CREATES: &[&[&str]] = &[
    &["create"],
    &["create", "--resources", "deployment.yaml,service.yaml,base"],
    &["create", "--resources", "cm-*.yaml"],
    &["create", "--resources", "missing.yaml"],
    &["create", "--autodetect"],
    &["create", "--autodetect", "--recursive"],
    &["create", "--autodetect", "--resources", "deployment.yaml"],
    &["create", "--namespace", "staging", "--nameprefix", "acme-", "--namesuffix", "-v1", "--labels", "app:web,tier:\"front\"", "--annotations", "owner:team"],
    &["create", "--labels", "novalue"],
];

/// The newest kustomize, or a skip.
fn newest(label: &str) -> Option<PathBuf> {
    go_clients::client(label, go_clients::KUSTOMIZE_NEWEST).map(|(program, _)| program)
}

/// A folder at `rel` under `tmp` with the files and, if any, `kustomization`.
fn folder(tmp: &TempTree, rel: &str, kustomization: Option<&str>) -> PathBuf {
    for (name, text) in crate::edit_commands::FILES.iter().chain(MORE_FILES) {
        tmp.write(&format!("{rel}/{name}"), text);
    }
    if let Some(text) = kustomization {
        tmp.write(&format!("{rel}/kustomization.yaml"), text);
    }
    tmp.path(rel)
}

/// kustomize's message: what follows `Error: ` on its stderr, up to the usage it prints after
/// some messages, with the folder it ran in (`theirs`) named as ours (`mine`).
fn kustomize_message(stderr: &str, theirs: &Path, mine: &Path) -> String {
    let message = stderr.split_once("Error: ").map_or(stderr, |(_, message)| message);
    let message = message.split("\nUsage:\n").next().unwrap_or_default();
    message.trim().replace(theirs.to_str().unwrap(), mine.to_str().unwrap())
}

/// Runs `args` with kustomize in `theirs` and with us in `mine` (copies of one folder) and
/// compares the outcome; the difference, if any.
fn compare(kustomize: &Path, args: &[&str], theirs: &Path, mine: &Path, compared: Compared) -> Option<String> {
    let before = fs::read_to_string(mine.join("kustomization.yaml")).ok();
    let their_run = run_program(kustomize.to_str().unwrap(), args, theirs);
    let our_run = ours(args, mine);
    let their_file = fs::read_to_string(theirs.join("kustomization.yaml")).ok();
    let our_file = fs::read_to_string(mine.join("kustomization.yaml")).ok();
    match (their_run.success(), our_run.success()) {
        (true, false) => return Some(format!("kustomize succeeded, we failed:\n{}", our_run.stderr)),
        (false, true) => return Some(format!("kustomize failed, we succeeded:\n{}", their_run.stderr)),
        (false, false) => {
            let message = kustomize_message(&their_run.stderr, theirs, mine);
            if !our_run.stderr.contains(&message) {
                return Some(format!("kustomize's message is not in our stderr:\n  kustomize: {message}\n  we:        {}", our_run.stderr.trim()));
            }
            if our_file != before {
                return Some("we failed but changed the file".into());
            }
            return None;
        }
        (true, true) => {}
    }
    if compared == Compared::Bytes {
        return (their_file != our_file).then(|| format!("the files differ:\n{}", common_diff(their_file.as_deref(), our_file.as_deref())));
    }
    if compared == Compared::Lines {
        let lines = |text: &Option<String>| text.as_deref().map(|t| t.lines().map(str::to_string).collect::<std::collections::BTreeSet<_>>());
        return (lines(&their_file) != lines(&our_file)).then(|| format!("the files differ in lines:\n{}", common_diff(their_file.as_deref(), our_file.as_deref())));
    }
    if compared == Compared::Fields {
        let parse = |text: &Option<String>| text.as_deref().map(|t| peerpods_build::yaml::parse::parse_document(t).map_err(|e| e.to_string()));
        if parse(&their_file) != parse(&our_file) {
            return Some(format!("the fields differ:\n{}", common_diff(their_file.as_deref(), our_file.as_deref())));
        }
    } else {
        let build = |dir: &Path| {
            let run = run_program(kustomize.to_str().unwrap(), &["build", "."], dir);
            // On success only the output: kustomize warns of deprecated fields on stderr.
            // A Go pointer in a message differs from run to run.
            let pointer = regex::Regex::new("0x[0-9a-f]+").unwrap();
            let message = if run.success() { String::new() } else { pointer.replace_all(&kustomize_message(&run.stderr, theirs, mine), "0x").into_owned() };
            (run.success(), run.stdout, message)
        };
        if build(theirs) != build(mine) {
            return Some(format!("kustomize builds the two folders differently:\n{}", common_diff(their_file.as_deref(), our_file.as_deref())));
        }
    }
    // Where kustomize wrote the file again, we kept what it drops or converts.
    if their_file != before && their_file == our_file {
        return Some("came out as kustomize writes it: the start is not one kustomize would rewrite".into());
    }
    None
}

/// A line diff, kustomize's file first.
fn common_diff(theirs: Option<&str>, ours: Option<&str>) -> String {
    let (theirs, ours) = (theirs.unwrap_or("<no file>\n"), ours.unwrap_or("<no file>\n"));
    similar::TextDiff::from_lines(theirs, ours).unified_diff().header("kustomize v5.8.3", "peerpods-build").to_string()
}

#[test]
fn client_edit_writes_the_bytes_kustomize_v5_8_3_writes() {
    let label = "edit against kustomize v5.8.3";
    let Some(kustomize) = newest(label) else { return };
    let tmp = TempTree::new("client-edit");
    let mut differences = Vec::new();
    let mut cases = 0;
    for (s, start) in STARTS.iter().enumerate() {
        for (e, args) in EDITS.iter().enumerate() {
            let theirs = folder(&tmp, &format!("{s}-{e}/theirs"), Some(start.text));
            let mine = folder(&tmp, &format!("{s}-{e}/ours"), Some(start.text));
            cases += 1;
            if let Some((_, ours_says)) = REFUSED_IN_OTHER_WORDS.iter().find(|(refused, _)| refused == args) {
                let their_run = run_program(kustomize.to_str().unwrap(), args, &theirs);
                let our_run = ours(args, &mine);
                assert!(!their_run.success() && !our_run.success(), "[{}] {}: both refuse it", start.label, args.join(" "));
                assert!(our_run.stderr.contains(ours_says), "[{}] {}: {}", start.label, args.join(" "), our_run.stderr);
                let message = kustomize_message(&their_run.stderr, &theirs, &mine);
                assert!(!our_run.stderr.contains(&message), "[{}] {}: now in kustomize's words; take it out of REFUSED_IN_OTHER_WORDS", start.label, args.join(" "));
                continue;
            }
            let compared = match start.compared {
                Compared::Bytes if LITERALS_IN_MAP_ORDER.contains(args) => Compared::Lines,
                // `edit fix` converts the deprecated fields as kustomize does.
                Compared::Build if *args == ["edit", "fix"] => Compared::Bytes,
                other => other,
            };
            if let Some(difference) = compare(&kustomize, args, &theirs, &mine, compared) {
                differences.push(format!("[{}] {}: {difference}", start.label, args.join(" ")));
            }
        }
    }
    assert!(differences.is_empty(), "{} of {cases} edits differ from kustomize v5.8.3's:\n\n{}", differences.len(), differences.join("\n\n"));
}

#[test]
fn client_create_writes_the_bytes_kustomize_v5_8_3_writes() {
    let label = "create against kustomize v5.8.3";
    let Some(kustomize) = newest(label) else { return };
    let tmp = TempTree::new("client-create");
    tmp.write("nested-files/deep/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
    let mut differences = Vec::new();
    for (c, args) in CREATES.iter().enumerate() {
        let theirs = folder(&tmp, &format!("{c}/theirs"), None);
        let mine = folder(&tmp, &format!("{c}/ours"), None);
        for dir in [&theirs, &mine] {
            fs::write(dir.join("README.md"), "# Not a resource\n").unwrap();
            fs::write(dir.join("non-k8s.yaml"), "other: yaml\nfoo:\n- bar\n").unwrap();
            fs::create_dir_all(dir.join("nested/deep")).unwrap();
            fs::write(dir.join("nested/deep/pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n").unwrap();
        }
        if let Some(difference) = compare(&kustomize, args, &theirs, &mine, Compared::Bytes) {
            differences.push(format!("{}: {difference}", args.join(" ")));
        }
    }
    // An existing kustomization is refused.
    let theirs = folder(&tmp, "existing/theirs", Some("resources: []\n"));
    let mine = folder(&tmp, "existing/ours", Some("resources: []\n"));
    if let Some(difference) = compare(&kustomize, &["create", "--autodetect"], &theirs, &mine, Compared::Bytes) {
        differences.push(format!("create over a kustomization: {difference}"));
    }
    assert!(differences.is_empty(), "{} of {} creates differ from kustomize v5.8.3's:\n\n{}", differences.len(), CREATES.len() + 1, differences.join("\n\n"));
}

/// Localizer fixtures that make kustomize reach the network (it clones before it refuses).
const NEEDS_THE_NETWORK: &[&str] = &["remote_root_without_ref_refused"];

/// Runs `localize` with kustomize in `theirs` and with us in `mine` (copies of one tree, the
/// destination `dst` in each); the difference, if any: the exit, kustomize's message in our
/// stderr, and the destination trees file by file, byte for byte.
fn compare_localize(kustomize: &Path, args: &[&str], theirs: &Path, mine: &Path) -> Option<String> {
    let their_run = run_program(kustomize.to_str().unwrap(), args, theirs);
    let our_run = ours(args, mine);
    match (their_run.success(), our_run.success()) {
        (true, false) => return Some(format!("kustomize succeeded, we failed:\n{}", our_run.stderr)),
        (false, true) => return Some(format!("kustomize failed, we succeeded:\n{}", their_run.stderr)),
        (false, false) => {
            let message = kustomize_message(&their_run.stderr, theirs, mine);
            if !our_run.stderr.contains(&message) {
                return Some(format!("kustomize's message is not in our stderr:\n  kustomize: {message}\n  we:        {}", our_run.stderr.trim()));
            }
            if mine.join("dst").exists() {
                return Some("we failed but left a destination".into());
            }
            return None;
        }
        (true, true) => {}
    }
    let (their_tree, our_tree) = (crate::localize::tree_of(&theirs.join("dst")), crate::localize::tree_of(&mine.join("dst")));
    (their_tree != our_tree).then(|| format!("the trees differ\n--- kustomize v5.8.3\n{}--- peerpods-build\n{}", crate::localize::show(&their_tree), crate::localize::show(&our_tree)))
}

#[test]
fn client_localize_makes_the_tree_kustomize_v5_8_3_makes() {
    let label = "localize against kustomize v5.8.3";
    let Some(kustomize) = newest(label) else { return };
    let tmp = TempTree::new("client-localize");
    let mut differences = Vec::new();
    let mut cases = 0;
    // The localizer fixtures (kustomize's own localizer cases and ours).
    let root = common::manifest_dir().join("tests/localize_fixtures");
    let mut names: Vec<String> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names.iter().filter(|n| !NEEDS_THE_NETWORK.contains(&n.as_str())) {
        let fixture = crate::localize::read_fixture(&root.join(name));
        let target = format!("in/{}", fixture.target);
        let scope = fixture.scope.as_ref().map(|s| format!("in/{s}"));
        let args = crate::localize::localize_args(&target, scope.as_deref(), "dst", false);
        let sides: Vec<PathBuf> = ["theirs", "ours"]
            .iter()
            .map(|side| {
                let dir = tmp.path(&format!("{name}/{side}"));
                common::copy_dir(&root.join(name).join("input"), &dir.join("in"));
                for extra in &fixture.mkdirs {
                    fs::create_dir_all(dir.join("in").join(extra)).unwrap();
                }
                dir
            })
            .collect();
        cases += 1;
        if let Some(difference) = compare_localize(&kustomize, &args, &sides[0], &sides[1]) {
            differences.push(format!("{name}: {difference}"));
        }
    }
    // Every peer pods overlay, with the repository's folders as the scope.
    let overlays = common::manifest_dir().join("overlays");
    let mut providers: Vec<String> = fs::read_dir(&overlays).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    providers.sort();
    for provider in &providers {
        let target = format!("in/overlays/{provider}");
        for verify in [false, true] {
            let args = crate::localize::localize_args(&target, Some("in"), "dst", verify);
            let sides: Vec<PathBuf> = ["theirs", "ours"]
                .iter()
                .map(|side| {
                    let dir = tmp.path(&format!("peerpods-{provider}-{verify}/{side}"));
                    for folder in ["base", "components", "overlays"] {
                        common::copy_dir(&common::manifest_dir().join(folder), &dir.join("in").join(folder));
                    }
                    dir
                })
                .collect();
            cases += 1;
            if verify {
                // kustomize checks `dst/<target's name>`, which is no folder when the scope is
                // above the target; we check `dst/overlays/<p>`, where the copy is. The trees
                // it wrote before that check must still be ours.
                let their_run = run_program(kustomize.to_str().unwrap(), &args, &sides[0]);
                let our_run = ours(&args, &sides[1]);
                let wrong_folder = format!("evalsymlink failure on '{}'", sides[0].join("dst").join(provider).display());
                if their_run.success() || !their_run.stderr.contains(&wrong_folder) {
                    differences.push(format!("overlays/{provider} (verify): kustomize no longer checks dst/{provider}; take the exception out:\n{}", their_run.stderr));
                }
                if !our_run.success() {
                    differences.push(format!("overlays/{provider} (verify): we failed:\n{}", our_run.stderr));
                }
                let (their_tree, our_tree) = (crate::localize::tree_of(&sides[0].join("dst")), crate::localize::tree_of(&sides[1].join("dst")));
                if their_tree != our_tree {
                    differences.push(format!("overlays/{provider} (verify): the trees differ"));
                }
                continue;
            }
            if let Some(difference) = compare_localize(&kustomize, &args, &sides[0], &sides[1]) {
                differences.push(format!("overlays/{provider}: {difference}"));
            }
        }
    }
    assert!(differences.is_empty(), "{} of {cases} localizations differ from kustomize v5.8.3's:\n\n{}", differences.len(), differences.join("\n\n"));
}

/// The random trees of `../shared/tools/gen_workload.py`, a handful of seeds, every overlay:
/// built by kustomize v5.8.3 and by us, byte for byte.
#[test]
fn client_random_seeds_build_as_kustomize_v5_8_3_builds_them() {
    let label = "random seeds against kustomize v5.8.3";
    let Some(kustomize) = newest(label) else { return };
    let Some(shared) = common::shared_dir(label) else { return };
    let generator = shared.join("tools/gen_workload.py");
    let tmp = TempTree::new("client-seeds");
    let mut differences = Vec::new();
    let mut builds = 0;
    for (seed, apps, overlays) in [(1, 4, 2), (7, 6, 3), (42, 3, 4), (1234, 8, 2), (31337, 5, 3)] {
        let out = tmp.path(&format!("seed-{seed}"));
        let run = run_program(
            "python3",
            &[generator.to_str().unwrap(), out.to_str().unwrap(), "--apps", &apps.to_string(), "--overlays", &overlays.to_string(), "--seed", &seed.to_string()],
            &tmp.root,
        );
        assert!(run.success(), "{label}: gen_workload.py seed {seed}: {}", run.stderr);
        let mut envs: Vec<PathBuf> = fs::read_dir(out.join("envs")).unwrap().map(|e| e.unwrap().path()).collect();
        envs.sort();
        assert!(!envs.is_empty(), "{label}: seed {seed} made no overlay");
        for env in envs {
            builds += 1;
            let dir = env.to_str().unwrap();
            let theirs = run_program(kustomize.to_str().unwrap(), &["build", dir], &tmp.root);
            let mine = ours(&["build", dir], &tmp.root);
            assert!(theirs.success(), "{label}: kustomize cannot build {dir}:\n{}", theirs.stderr);
            if !mine.success() || mine.stdout != theirs.stdout {
                differences.push(format!("seed {seed} {}: {}", env.file_name().unwrap().to_string_lossy(), if mine.success() { common_diff(Some(&theirs.stdout), Some(&mine.stdout)) } else { mine.stderr }));
            }
        }
    }
    assert!(differences.is_empty(), "{} of {builds} builds differ from kustomize v5.8.3's:\n\n{}", differences.len(), differences.join("\n\n"));
}
