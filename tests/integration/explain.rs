//! `explain`: its output is the build's once the comments are stripped (over every shared case),
//! and the file:line:column it records for a field points at the text that holds the value
//! (the test reads the file at that position). Fixtures: `tests/explain_fixtures/`.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use peerpods_build::explain::{render, Recorder};
use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::resource::provenance::Event;
use peerpods_build::resource::Resource;
use peerpods_build::{build, BuildOptions};
use rayon::prelude::*;
use serde_json::Value;

use crate::common::{bin, manifest_dir, run_program, shared_dir};

fn fixtures() -> PathBuf {
    manifest_dir().join("tests/explain_fixtures")
}

fn explain_options(base: &Path, load_restrictor: LoadRestrictor) -> BuildOptions {
    BuildOptions { load_restrictor, recorder: Some(Arc::new(Recorder::new(base.to_path_buf()))), ..Default::default() }
}

/// Every line of `explained` is the same line of `built`, or it followed by `  # ` and a comment.
fn strip_matches(built: &str, explained: &str) -> Result<(), String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (built.split('\n').collect(), explained.split('\n').collect());
    if a.len() != b.len() {
        return Err(format!("{} lines built, {} explained", a.len(), b.len()));
    }
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y && !y.strip_prefix(x).is_some_and(|rest| rest.starts_with("  # ") && !rest[4..].contains('\n')) {
            return Err(format!("line {}: built {x:?}, explained {y:?}", n + 1));
        }
    }
    Ok(())
}

/// Every shared case (conformance suites and real-world trees) that builds: the explained
/// output, comments stripped, is byte for byte the build's.
#[test]
fn explain_without_its_comments_is_the_build_for_every_shared_case() {
    let Some(shared) = shared_dir("explain over the shared cases") else { return };
    let mut cases = Vec::new();
    for suite in ["conformance/krusty", "conformance/krusty-v5.8.1", "conformance/regressions", "realworld/cases", "realworld/public"] {
        let Ok(entries) = std::fs::read_dir(shared.join(suite)) else { continue };
        cases.extend(entries.flatten().map(|e| e.path()).filter(|p| p.join("case.json").is_file()));
    }
    cases.sort();
    assert!(cases.len() > 400, "expected the shared suites, found {} cases", cases.len());
    // Threads with the build's stack: deep documents are walked recursively.
    let pool = rayon::ThreadPoolBuilder::new().stack_size(peerpods_build::stack::STACK_SIZE).build().unwrap();
    let results: Vec<(PathBuf, Option<Result<(), String>>)> = pool.install(|| cases
        .par_iter()
        .map(|case| {
            let spec: Value = serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap()).unwrap();
            let flags: Vec<&str> = spec["flags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let restrictor = if flags.iter().any(|f| f.ends_with("LoadRestrictionsNone")) { LoadRestrictor::None } else { LoadRestrictor::RootOnly };
            let dir = case.join("files").join(spec["build"].as_str().unwrap_or("."));
            let plain = BuildOptions { load_restrictor: restrictor, ..Default::default() };
            let Ok(built) = build(&dir, &plain) else { return (case.clone(), None) };
            let outcome = match build(&dir, &explain_options(&dir, restrictor)) {
                Err(e) => Err(format!("explain failed where build did not: {}", e.error)),
                Ok(explained) => {
                    let text: Vec<String> = explained.resources.iter().map(render::annotated).collect();
                    strip_matches(&built.to_yaml(), &text.join("---\n"))
                }
            };
            (case.clone(), Some(outcome))
        })
        .collect());
    let compared = results.iter().filter(|(_, r)| r.is_some()).count();
    let failures: Vec<String> =
        results.iter().filter_map(|(case, r)| match r { Some(Err(e)) => Some(format!("{}: {e}", case.display())), _ => None }).collect();
    eprintln!("explain: {compared} of {} shared cases build and were compared", cases.len());
    assert!(compared > 400, "only {compared} cases built");
    assert!(failures.is_empty(), "{} cases differ:\n{}", failures.len(), failures.join("\n"));
}

/// How the text at a recorded position holds a field's value.
#[derive(Clone, Copy)]
enum Holds {
    /// The text there is the value (possibly quoted).
    Value,
    /// The value ends with the token there (a tag, a name suffix).
    Suffix,
    /// The value starts with the token there (a name a hash suffix or a new name extended).
    Prefix,
    /// The line there is `KEY=value` (a literal, an env file).
    KeyValue,
    /// The same, for a Secret: the value is the base64 of the text after `=`.
    KeyValueBase64,
    /// The token there is the field's key (a `files` entry).
    Key,
    /// The text there declares the var whose value the field took (`name: VAR`).
    Declares(&'static str),
}

/// (fixture, kind, name prefix, field, how the text holds it, the step expected: `None` for loaded)
const POSITION_CASES: &[(&str, &str, &str, &str, Holds, Option<&str>)] = &[
    ("transformers", "Deployment", "pre-web", "metadata.namespace", Holds::Value, Some("namespace")),
    ("transformers", "Deployment", "pre-web", "metadata.name", Holds::Suffix, Some("nameSuffix")),
    ("transformers", "Deployment", "pre-web", "metadata.labels.team", Holds::Value, Some("commonLabels")),
    ("transformers", "Deployment", "pre-web", "spec.selector.matchLabels.team", Holds::Value, Some("commonLabels")),
    ("transformers", "Deployment", "pre-web", "spec.template.metadata.labels.team", Holds::Value, Some("commonLabels")),
    ("transformers", "Deployment", "pre-web", "metadata.annotations.owner", Holds::Value, Some("commonAnnotations")),
    ("transformers", "Deployment", "pre-web", "metadata.labels.tier", Holds::Value, Some("labels[0]")),
    ("transformers", "Deployment", "pre-web", "spec.template.spec.containers[name=app].image", Holds::Suffix, Some("images[0]")),
    ("transformers", "Deployment", "pre-web", "spec.template.spec.containers[name=side].image", Holds::Value, Some("images[1]")),
    ("transformers", "Deployment", "pre-web", "spec.replicas", Holds::Value, Some("replicas[0]")),
    ("transformers", "Deployment", "pre-web", "spec.template.spec.containers[name=app].ports[0].containerPort", Holds::Value, None),
    ("transformers", "Deployment", "pre-web", "metadata.labels.app", Holds::Value, None),
    ("transformers", "Deployment", "pre-web", "kind", Holds::Value, None),
    ("patches", "Deployment", "web", "spec.template.spec.containers[name=app].image", Holds::Value, Some("patches[0]")),
    ("patches", "Deployment", "web", "spec.template.spec.containers[name=app].env[name=MODE].value", Holds::Value, Some("patches[0]")),
    ("patches", "Deployment", "web", "spec.replicas", Holds::Value, Some("patches[1]")),
    ("patches", "Deployment", "web", "metadata.labels.patched", Holds::Value, Some("patches[1]")),
    ("patches", "Deployment", "web", "spec.template.spec.containers[name=app].imagePullPolicy", Holds::Value, Some("patches[2]")),
    ("patches", "Deployment", "web", "spec.paused", Holds::Value, Some("patches[3]")),
    ("patches", "Deployment", "web", "spec.minReadySeconds", Holds::Value, Some("patchesStrategicMerge[0]")),
    ("patches", "Deployment", "web", "spec.revisionHistoryLimit", Holds::Value, Some("patchesJson6902[0]")),
    ("generators", "ConfigMap", "settings", "data.COLOR", Holds::KeyValue, Some("configMapGenerator[0]")),
    ("generators", "ConfigMap", "settings", "data.MODE", Holds::KeyValue, Some("configMapGenerator[0]")),
    ("generators", "ConfigMap", "settings", "data.LEVEL", Holds::KeyValue, Some("configMapGenerator[0]")),
    ("generators", "ConfigMap", "settings", "data[config.txt]", Holds::Key, Some("configMapGenerator[0]")),
    ("generators", "ConfigMap", "settings", "metadata.name", Holds::Prefix, Some("hash suffix")),
    ("generators", "Secret", "creds", "data.PASSWORD", Holds::KeyValueBase64, Some("secretGenerator[0]")),
    ("generators", "Secret", "creds", "metadata.name", Holds::Prefix, Some("hash suffix")),
    ("generators", "Pod", "user", "spec.containers[name=c].env[name=MODE].valueFrom.configMapKeyRef.name", Holds::Prefix, Some("name reference")),
    ("generators", "Pod", "user", "spec.volumes[name=s].secret.secretName", Holds::Prefix, Some("name reference")),
    ("replacements/base", "Deployment", "web", "spec.template.spec.containers[name=app].env[name=DB_HOST].value", Holds::Value, Some("replacements[0]")),
    ("replacements/base", "Deployment", "web", "spec.template.spec.containers[name=app].env[name=DB_PORT].value", Holds::Value, Some("replacements[1]")),
    ("components/overlay", "Service", "svc", "spec.ports[0].targetPort", Holds::Value, Some("patches[0]")),
    ("components/overlay", "Service", "svc", "metadata.namespace", Holds::Value, Some("namespace")),
    ("components/overlay", "Service", "svc", "metadata.labels.feature", Holds::Value, Some("commonLabels")),
    ("components/overlay", "Service", "svc", "spec.ports[0].port", Holds::Value, None),
    ("lists", "ConfigMap", "first", "data.a", Holds::Value, None),
    ("lists", "ConfigMap", "second", "metadata.name", Holds::Value, None),
    ("lists", "ConfigMap", "third", "data.c", Holds::Value, None),
    // Annotations set again as strings at the end keep the patch that wrote them.
    ("annotation_types", "ConfigMap", "settings", "metadata.annotations.inject", Holds::Value, Some("patches[0]")),
    ("annotation_types", "ConfigMap", "settings", "metadata.annotations.weight", Holds::Value, Some("patches[0]")),
    // A var points at its declaration, in whichever kustomization declares it.
    ("vars", "Pod", "client", "spec.containers[name=app].args[0]", Holds::Declares("DB_HOST"), Some("vars[0] from Service/db.metadata.name")),
    ("vars", "Pod", "client", "spec.containers[name=app].args[1]", Holds::Declares("DB_PORT"), Some("vars[0] from Service/db.spec.ports[0].port")),
    ("vars", "Pod", "client", "spec.containers[name=app].env[name=TARGET].value", Holds::Declares("DB_HOST"), Some("vars[0]")),
    ("vars", "Service", "shop-db", "metadata.name", Holds::Prefix, Some("namePrefix")),
];

/// The text of `file` from 1-based `line` and `column`.
fn text_at(file: &Path, line: u32, column: u32) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let line_text = text.lines().nth(line as usize - 1).unwrap_or_else(|| panic!("{}: no line {line}", file.display()));
    line_text.chars().skip(column as usize - 1).collect()
}

/// A token: a quoted string's content, or the text up to a blank.
fn token(text: &str) -> String {
    for quote in ['"', '\''] {
        if let Some(rest) = text.strip_prefix(quote) {
            return rest.split(quote).next().unwrap_or("").to_string();
        }
    }
    text.split_whitespace().next().unwrap_or("").to_string()
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn recorded_positions_point_at_the_text_that_holds_each_value() {
    assert!(POSITION_CASES.len() >= 30);
    let mut failures = Vec::new();
    let mut built = std::collections::HashMap::new();
    for &(fixture, kind, name, field, holds, step) in POSITION_CASES {
        let dir = fixtures().join(fixture);
        let result = built.entry(fixture).or_insert_with(|| build(&dir, &explain_options(&dir, LoadRestrictor::RootOnly)).map_err(|e| e.error.to_string()));
        let resources: Vec<&Resource> = match result {
            Ok(b) => b.resources.iter().collect(),
            Err(e) => panic!("{fixture}: {e}"),
        };
        let label = format!("{fixture} {kind}/{name} {field}");
        let Some(r) = resources.iter().find(|r| r.kind() == kind && r.name().starts_with(name)) else {
            failures.push(format!("{label}: no such resource"));
            continue;
        };
        let Some(path) = render::resolve_path(&r.value, field) else {
            failures.push(format!("{label}: no such field"));
            continue;
        };
        let value = scalar_text(peerpods_build::resource::nodes::value_at(&r.value, &path).unwrap());
        let Some(last) = render::history(r, &path).last() else {
            failures.push(format!("{label}: no history"));
            continue;
        };
        match (step, last) {
            (None, Event::Loaded(_)) => {}
            (Some(want), Event::Written(_)) if render::describe(last).contains(want) => {}
            _ => failures.push(format!("{label}: expected step {step:?}, got {}", render::describe(last))),
        }
        let source = last.source();
        let at = text_at(&dir.join(&*source.file), source.at.line, source.at.column);
        let key = match path.last() {
            Some(peerpods_build::resource::Step::Key(k)) => k.clone(),
            _ => String::new(),
        };
        let ok = match holds {
            Holds::Value => token(&at) == value || at.starts_with(&value),
            Holds::Suffix => !token(&at).is_empty() && value.ends_with(&token(&at)),
            Holds::Prefix => !token(&at).is_empty() && value.starts_with(&token(&at)),
            Holds::KeyValue => at.trim_start() == format!("{key}={value}"),
            Holds::KeyValueBase64 => {
                let decoded = base64::engine::general_purpose::STANDARD.decode(&value).map(|b| String::from_utf8_lossy(&b).into_owned());
                at.trim_start() == format!("{key}={}", decoded.unwrap_or_default())
            }
            Holds::Key => token(&at) == key,
            Holds::Declares(var) => at.trim_start() == format!("name: {var}"),
        };
        if !ok {
            failures.push(format!("{label}: {source} holds {at:?}, the value is {value:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_plain_build_records_nothing() {
    let built = build(&fixtures().join("patches"), &BuildOptions::default()).unwrap();
    assert!(built.resources.iter().all(|r| r.provenance.is_none()));
}

#[test]
fn explain_field_prints_the_history_earliest_first_with_values_before_and_after() {
    let dir = fixtures().join("patches");
    let run = run_program(bin(), &["explain", ".", "--resource", "Deployment/web", "--field", "spec.replicas"], &dir);
    assert!(run.success(), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "Deployment/web spec.replicas");
    assert_eq!(lines[1], "  loaded  deploy.yaml:6:13");
    assert_eq!(lines[2], "  written ops.yaml:3:10 patches[1] (json 6902, op 0: replace): 1 -> 4");
    assert_eq!(lines.len(), 3);
}

#[test]
fn explain_json_lists_each_fields_events() {
    let dir = fixtures().join("transformers");
    let run = run_program(bin(), &["explain", ".", "--format", "json"], &dir);
    assert!(run.success(), "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let resource = &doc["resources"][0];
    assert_eq!(resource["resource"], "Deployment/web-ns/pre-web-suf");
    let events = resource["fields"]["spec.replicas"].as_array().unwrap();
    assert_eq!(events[0]["event"], "loaded");
    assert_eq!((events[0]["file"].as_str(), events[0]["line"].as_u64()), (Some("deploy.yaml"), Some(8)));
    let written = events.last().unwrap();
    assert_eq!(written["event"], "written");
    assert_eq!(written["step"], "replicas[0]");
    assert_eq!((written["before"].clone(), written["after"].clone()), (Value::from(1), Value::from(3)));
    assert_eq!(written["rule"], "kustomization.yaml:21:10");
}

#[test]
fn explain_refuses_an_unknown_resource_or_field() {
    let dir = fixtures().join("patches");
    let run = run_program(bin(), &["explain", ".", "--resource", "Deployment/nosuch"], &dir);
    assert!(!run.success() && run.stdout.is_empty() && run.stderr.contains("Deployment/nosuch"), "{}", run.stderr);
    let run = run_program(bin(), &["explain", ".", "--field", "spec.nosuch"], &dir);
    assert!(!run.success() && run.stdout.is_empty() && run.stderr.contains("spec.nosuch"), "{}", run.stderr);
}

#[test]
fn explain_resource_selects_by_kind_name_and_namespace() {
    let dir = fixtures().join("components/overlay");
    let run = run_program(bin(), &["explain", ".", "--resource", "service/svc.prod"], &dir);
    assert!(run.success(), "{}", run.stderr);
    let build = run_program(bin(), &["build", "."], &dir);
    strip_matches(&build.stdout, &run.stdout).unwrap();
    assert!(run.stdout.contains("targetPort: 8443  # ../comp/port.yaml:9:17 patches[0] (strategic merge)"), "{}", run.stdout);
}

#[test]
fn diff_explain_names_what_set_each_differing_field_on_each_side() {
    let dir = fixtures().join("diff");
    let run = run_program(bin(), &["diff", "--explain", "a", "b"], &dir);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[1], "changed Deployment/web: spec.replicas, spec.template.spec.containers[name=app].image");
    assert_eq!(lines[2], "  spec.replicas: ../patches/ops.yaml:3:10 patches[1] (json 6902, op 0: replace) -> b/kustomization.yaml:5:10 replicas[0]");
    assert_eq!(
        lines[3],
        "  spec.template.spec.containers[name=app].image: a/kustomization.yaml:5:11 images[0] -> ../patches/smp.yaml:10:16 patches[0] (strategic merge)"
    );
    // Each position holds the value of its side.
    assert!(text_at(&dir.join("b/kustomization.yaml"), 5, 10).starts_with('7'));
    assert!(text_at(&dir.join("a/kustomization.yaml"), 5, 11).starts_with("\"2.0\""));
    // Without --explain the same diff, without the field lines.
    let plain = run_program(bin(), &["diff", "a", "b"], &dir);
    let stripped: Vec<&str> = lines.iter().filter(|l| !l.starts_with("  spec.")).copied().collect();
    assert_eq!(plain.stdout.lines().collect::<Vec<_>>(), stripped);
}

/// The command prints the explained output as it renders it, a slice of resources at a time:
/// across the slices' seams it is still the build's output with comments.
#[test]
fn the_explain_command_prints_the_build_with_comments_for_many_resources() {
    let tree = crate::common::TempTree::new("explain-many");
    let mut resources = String::new();
    for i in 0..600 {
        resources.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:03}\ndata:\n  n: \"{i}\"\n"));
    }
    tree.write("app/cms.yaml", &resources);
    tree.write("app/kustomization.yaml", "resources:\n- cms.yaml\nnamespace: many\ncommonLabels:\n  team: a\n");
    let dir = tree.root.join("app");
    let dir_arg = dir.to_str().unwrap();
    let built = run_program(bin(), &["build", dir_arg], &tree.root);
    let explained = run_program(bin(), &["explain", dir_arg], &tree.root);
    assert!(built.success() && explained.success(), "{}{}", built.stderr, explained.stderr);
    assert_eq!(explained.stdout.matches("\n---\n").count(), 599);
    strip_matches(&built.stdout, &explained.stdout).unwrap();
    assert!(explained.stdout.contains("namespace: many  # app/kustomization.yaml:3:12 namespace"), "{}", &explained.stdout[..600]);
}

/// Where comments go: after a one-line scalar, after a block scalar's `|` header (as a map
/// value or a list item), on a created mapping's key line; never inside a scalar that goes on
/// over several lines (a long folded plain string).
#[test]
fn comments_sit_on_the_line_that_starts_each_field() {
    let tree = crate::common::TempTree::new("explain-lines");
    let long = "word ".repeat(30);
    tree.write(
        "app/cm.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  long: {}\n", long.trim_end()),
    );
    tree.write(
        "app/patch.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  script: |\n    echo one\n    echo two\nlines:\n- |\n  first\n  second\n- plain\n",
    );
    tree.write("app/kustomization.yaml", "resources:\n- cm.yaml\npatches:\n- path: patch.yaml\n");
    let dir = tree.root.join("app");
    let dir_arg = dir.to_str().unwrap();
    let built = run_program(bin(), &["build", dir_arg], &tree.root);
    let explained = run_program(bin(), &["explain", dir_arg], &tree.root);
    assert!(built.success() && explained.success(), "{}{}", built.stderr, explained.stderr);
    strip_matches(&built.stdout, &explained.stdout).unwrap();
    let line = |starts: &str| explained.stdout.lines().find(|l| l.starts_with(starts)).unwrap_or_else(|| panic!("no line {starts:?}:\n{}", explained.stdout)).to_string();
    assert_eq!(line("  script: |"), "  script: |  # app/patch.yaml:7:5 patches[0] (strategic merge)");
    assert_eq!(line("lines:"), "lines:  # app/patch.yaml:10:3 patches[0] (strategic merge)");
    assert_eq!(line("- |"), "- |  # app/patch.yaml:11:3 patches[0] (strategic merge)");
    assert_eq!(line("- plain"), "- plain  # app/patch.yaml:13:3 patches[0] (strategic merge)");
    // The long value is folded over two lines by the emitter: no comment inside it.
    let long_lines: Vec<&str> = explained.stdout.lines().skip_while(|l| !l.starts_with("  long:")).take(2).collect();
    assert!(long_lines.iter().all(|l| !l.contains("  # ")), "{long_lines:?}");
    assert!(built.stdout.contains("  long: word"), "{}", built.stdout);
}
