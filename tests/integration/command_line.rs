//! The command line around the commands: a mistyped command, several folders and their file
//! names, `-o` into a missing folder, kustomize's extra build flags, `version` and `openapi`,
//! help and manual pages, one style of error line.
use std::fs;

use crate::common::{ours, ours_env, reference_run, TempTree};

fn overlays(label: &str) -> TempTree {
    let t = TempTree::new(label);
    for dir in ["overlays/aws", "complete/aws", "overlays/gcp"] {
        let name = dir.replace('/', "-");
        t.write(&format!("{dir}/kustomization.yaml"), "resources:\n- cm.yaml\n");
        t.write(&format!("{dir}/cm.yaml"), &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"));
    }
    t
}

#[test]
fn a_mistyped_command_is_a_usage_error_with_a_suggestion() {
    let t = overlays("cli-mistyped");
    for (args, suggestion) in [(&["buld", "overlays/aws"][..], Some("build")), (&["vesion"][..], Some("version")), (&["edti", "set"][..], Some("edit")), (&["zzzz"][..], None)] {
        let r = ours(args, &t.root);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "");
        assert!(r.stderr.starts_with(&format!("Error: '{}' is neither a command nor a folder", args[0])), "{}", r.stderr);
        match suggestion {
            Some(name) => assert!(r.stderr.contains(&format!("did you mean '{name}'?")), "{}", r.stderr),
            None => assert!(!r.stderr.contains("did you mean"), "{}", r.stderr),
        }
    }
    // A folder of that name is built, as ever.
    t.write("buld/kustomization.yaml", "resources:\n- cm.yaml\n");
    t.write("buld/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
    assert!(ours(&["buld"], &t.root).success());
}

#[test]
fn several_folders_are_named_after_their_paths() {
    let t = overlays("cli-several");
    let r = ours(&["build", "overlays/aws", "complete/aws", "./overlays/gcp", "-o", "out/"], &t.root);
    assert!(r.success(), "{}", r.stderr);
    assert_eq!(crate::common::files_under(&t.path("out")), [".peerpods-build-files", "complete_aws.yaml", "overlays_aws.yaml", "overlays_gcp.yaml"]);
    for (dir, file) in [("overlays/aws", "overlays_aws.yaml"), ("complete/aws", "complete_aws.yaml")] {
        let alone = ours(&["build", dir], &t.root);
        assert_eq!(fs::read_to_string(t.path(&format!("out/{file}"))).unwrap(), alone.stdout, "{file}");
    }
    // The same folder twice cannot be written twice.
    let twice = ours(&["build", "overlays/aws", "overlays/../overlays/aws", "-o", "out2/"], &t.root);
    assert_eq!(twice.code, Some(1));
    assert!(twice.stderr.contains("would both be written to overlays_aws.yaml"), "{}", twice.stderr);
}

#[test]
fn several_folders_need_an_output_folder_not_a_file() {
    let t = overlays("cli-several-file");
    let r = ours(&["build", "overlays/aws", "overlays/gcp", "-o", "x.yaml"], &t.root);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("--output x.yaml/"), "{}", r.stderr);
    assert!(!t.path("x.yaml").exists(), "nothing created");
    let r = ours(&["build", "overlays/aws", "overlays/gcp"], &t.root);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("needs --output DIR/"), "{}", r.stderr);
    // An existing folder needs no slash.
    t.mkdir("existing");
    assert!(ours(&["build", "overlays/aws", "overlays/gcp", "-o", "existing"], &t.root).success());
    assert!(t.path("existing/overlays_gcp.yaml").is_file());
}

#[test]
fn output_into_a_missing_folder_says_so() {
    let t = overlays("cli-missing-folder");
    let r = ours(&["build", "overlays/aws", "-o", "nosuch/out.yaml"], &t.root);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.stderr.trim_end(), "Error: cannot write nosuch/out.yaml: the folder nosuch does not exist");
    assert!(!t.path("nosuch").exists());
}

/// `-o NEW-FOLDER/` creates the folder, with one directory as with several; a build that fails
/// creates nothing.
#[test]
fn output_into_a_new_folder_creates_it_for_one_build_as_for_several() {
    let t = overlays("cli-new-folder");
    let one = ours(&["build", "overlays/aws", "-o", "new/one/"], &t.root);
    assert!(one.success(), "{}", one.stderr);
    assert_eq!(crate::common::files_under(&t.path("new/one")), [".peerpods-build-files", "v1_configmap_overlays-aws.yaml"]);
    let several = ours(&["build", "overlays/aws", "overlays/gcp", "-o", "new/several/"], &t.root);
    assert!(several.success(), "{}", several.stderr);
    assert_eq!(crate::common::files_under(&t.path("new/several")), [".peerpods-build-files", "overlays_aws.yaml", "overlays_gcp.yaml"]);
    assert_eq!(fs::read_to_string(t.path("new/several/overlays_gcp.yaml")).unwrap(), ours(&["build", "overlays/gcp"], &t.root).stdout);
    // The folder was made whole beside its destination and renamed: nothing else is left there.
    let beside: Vec<String> = fs::read_dir(t.path("new")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
    assert!(beside.iter().all(|name| name == "one" || name == "several"), "{beside:?}");
    t.write("broken/kustomization.yaml", "resources:\n- missing.yaml\n");
    let broken = ours(&["build", "broken", "-o", "never/"], &t.root);
    assert_eq!(broken.code, Some(1), "{}", broken.stderr);
    assert!(!t.path("never").exists(), "a failed build creates no folder");
    // Of several builds into a new folder, those that succeed are written; a failed one is said.
    let mixed = ours(&["build", "overlays/aws", "broken", "-o", "new/mixed/"], &t.root);
    assert_eq!(mixed.code, Some(1), "{}", mixed.stderr);
    assert!(mixed.stderr.contains("Error: broken: "), "{}", mixed.stderr);
    assert!(mixed.stderr.contains("1 of 2 builds failed"), "{}", mixed.stderr);
    assert_eq!(crate::common::files_under(&t.path("new/mixed")), [".peerpods-build-files", "overlays_aws.yaml"]);
}

#[test]
fn kustomizes_other_build_flags_are_accepted() {
    let t = overlays("cli-flags");
    let plain = ours(&["build", "overlays/aws"], &t.root);
    for args in [
        &["build", "overlays/aws", "--load_restrictor", "LoadRestrictionsNone"][..],
        &["build", "overlays/aws", "--load_restrictor=LoadRestrictionsRootOnly"][..],
        &["build", "overlays/aws", "--stack-trace"][..],
        &["--stack-trace", "build", "overlays/aws"][..],
    ] {
        let r = ours(args, &t.root);
        assert!(r.success(), "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{args:?}");
    }
}

/// `--enable-managedby-label` (and its environment variable) label every resource as the
/// reference's `buildMetadata: [managedByLabel]` does.
#[test]
fn the_managed_by_label_is_kustomizes() {
    let t = overlays("cli-managed-by");
    t.write("labelled/kustomization.yaml", "resources:\n- ../overlays/aws\n- svc.yaml\nbuildMetadata: [managedByLabel]\n");
    t.write("labelled/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels:\n    app: s\n");
    t.write("plain/kustomization.yaml", "resources:\n- ../overlays/aws\n- ../labelled/svc.yaml\n");
    let by_field = ours(&["build", "labelled", "--load-restrictor", "LoadRestrictionsNone"], &t.root);
    assert!(by_field.success(), "{}", by_field.stderr);
    assert!(by_field.stdout.contains("app.kubernetes.io/managed-by: kustomize-v5.8.1"), "{}", by_field.stdout);
    assert!(!by_field.stderr.contains("managedByLabel"), "no warning: it is applied: {}", by_field.stderr);
    let by_flag = ours(&["build", "plain", "--enable-managedby-label", "--load-restrictor", "LoadRestrictionsNone"], &t.root);
    assert_eq!(by_flag.stdout, by_field.stdout);
    let by_env = ours_env(&["build", "plain", "--load-restrictor", "LoadRestrictionsNone"], &t.root, &[("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL", "on")]);
    assert_eq!(by_env.stdout, by_field.stdout);
    if let Some(theirs) = reference_run(&["labelled", "--load-restrictor", "LoadRestrictionsNone"], &t.root, "managed-by") {
        assert!(theirs.success(), "{}", theirs.stderr);
        assert_eq!(by_field.stdout, theirs.stdout);
    }
}

#[test]
fn version_prints_kustomizes_forms() {
    let t = TempTree::new("cli-version");
    let ours_version = env!("CARGO_PKG_VERSION");
    let short = ours(&["version", "--short"], &t.root);
    assert_eq!(short.stdout, format!("v5.8.3+peerpods-build.{ours_version}\n"));
    assert_eq!(ours(&["version"], &t.root).stdout, short.stdout, "kustomize's plain version is its semantic version too");
    assert_eq!(ours(&["--version"], &t.root).stdout, format!("peerpods-build {ours_version}\n"));
    let yaml = ours(&["version", "-o", "yaml"], &t.root);
    let lines: Vec<&str> = yaml.stdout.lines().collect();
    assert_eq!(lines[..3], [format!("version: v5.8.3+peerpods-build.{ours_version}"), "gitCommit: unknown".into(), "buildDate: unknown".into()]);
    assert!(lines[3].starts_with("goOs: ") && lines[4].starts_with("goArch: ") && lines[5].is_empty(), "{}", yaml.stdout);
    let json = ours(&["version", "--output", "json"], &t.root);
    let record: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(record["version"], format!("v5.8.3+peerpods-build.{ours_version}"));
    assert!(json.stdout.starts_with("{\n  \"version\": "), "two-space indent: {}", json.stdout);
    assert_eq!(serde_json::to_value(peerpods_build::yaml::parse::parse_document(&yaml.stdout).unwrap()).unwrap(), record);
    let both = ours(&["version", "--short", "-o", "yaml"], &t.root);
    assert_eq!(both.code, Some(2));
    assert!(both.stderr.contains("--short and --output are mutually exclusive"), "{}", both.stderr);
    assert_eq!(ours(&["version", "-o", "xml"], &t.root).code, Some(2));
}

#[test]
fn openapi_info_and_the_builtin_plugins() {
    let t = TempTree::new("cli-openapi");
    assert_eq!(ours(&["openapi", "info"], &t.root).stdout, "{title:Kubernetes,version:v1.21.2}\n");
    let plugins = ours(&["edit", "alpha-list-builtin-plugin"], &t.root).stdout;
    assert!(plugins.starts_with("Builtin plugins:\n\n * "), "{plugins}");
    let names: Vec<&str> = plugins.lines().filter_map(|l| l.strip_prefix(" * ")).collect();
    assert_eq!(names.len(), 18, "kustomize's 4 generators and 14 transformers: {names:?}");
    for name in ["ConfigMapGenerator", "HelmChartInflationGenerator", "PatchTransformer", "ReplacementTransformer"] {
        assert!(names.contains(&name), "{name}");
    }
}

#[test]
fn help_teaches_the_shorthand_examples_and_exit_statuses() {
    let t = TempTree::new("cli-help");
    let top = ours(&["--help"], &t.root);
    assert!(top.success());
    for text in ["`peerpods-build DIR` is short for `peerpods-build build DIR`", "Examples:", "Exit status:", "2  usage"] {
        assert!(top.stdout.contains(text), "{text}:\n{}", top.stdout);
    }
    for command in ["build", "edit", "create", "version", "deps", "affected"] {
        let help = ours(&[command, "--help"], &t.root);
        assert!(help.success() && help.stdout.contains("Example"), "{command}:\n{}", help.stdout);
    }
    let edit_set = ours(&["edit", "set", "--help"], &t.root);
    assert!(edit_set.stdout.contains("configmap") && edit_set.stdout.contains("buildmetadata"), "{}", edit_set.stdout);
}

#[test]
fn man_pages_have_exit_status_and_environment_for_every_command() {
    let t = TempTree::new("cli-man");
    for path in [&[][..], &["build"][..], &["edit"][..], &["edit", "set"][..], &["edit", "add"][..], &["create"][..], &["cache"][..], &["version"][..], &["deps"][..], &["affected"][..]] {
        let mut args = vec!["man"];
        args.extend_from_slice(path);
        let page = ours(&args, &t.root);
        assert!(page.success(), "man {path:?}: {}", page.stderr);
        for section in [".SH \"EXIT STATUS\"", ".SH \"ENVIRONMENT\"", ".SH NAME", ".SH SYNOPSIS"] {
            assert!(page.stdout.contains(section), "man {path:?}: no {section}");
        }
        assert!(!page.stdout.contains(".SH EXTRA"), "man {path:?}: the examples are EXAMPLES");
        assert!(page.stdout.find(".SH \"EXIT STATUS\"") < page.stdout.find(".SH VERSION"), "man {path:?}: sections in order");
    }
    for command in ["build", "deps", "affected"] {
        assert!(ours(&["man", command], &t.root).stdout.contains("PEERPODS_BUILD_CACHE"), "man {command}");
    }
    let set = ours(&["man", "edit", "set"], &t.root).stdout;
    assert!(set.contains("peerpods\\-build\\-edit\\-set") || set.contains("peerpods-build-edit-set"), "{}", &set[..200.min(set.len())]);
    let missing = ours(&["man", "edit", "nope"], &t.root);
    assert_eq!(missing.code, Some(2));
    assert!(missing.stderr.starts_with("Error: no command named \"edit nope\""), "{}", missing.stderr);
}

/// Usage errors (clap's) and failures (ours) print the same way: `Error: ` then the message.
#[test]
fn one_style_of_error_line() {
    let t = overlays("cli-error-style");
    let usage = ours(&["build", "--no-such-flag"], &t.root);
    assert_eq!(usage.code, Some(2));
    assert!(usage.stderr.starts_with("Error: unexpected argument '--no-such-flag'"), "{}", usage.stderr);
    let failed = ours(&["build", "overlays/nope"], &t.root);
    assert_eq!(failed.code, Some(1));
    assert!(failed.stderr.starts_with("Error: "), "{}", failed.stderr);
    let bad_value = ours(&["build", "overlays/aws", "--reorder", "x"], &t.root);
    assert!(bad_value.stderr.starts_with("Error: "), "{}", bad_value.stderr);
}

/// A reader that closed the pipe (`| head`) ends the output quietly: exit status as if all was
/// read, nothing on stderr, as ripgrep ends. The pipe's read end is closed before the program
/// starts, so its first write fails.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::os::fd::FromRawFd;
    let repo = crate::common::manifest_dir();
    for (args, code) in [
        (&["completions", "bash"][..], 0),
        (&["build", "overlays/libvirt"][..], 0),
        (&["explain", "overlays/libvirt"][..], 0),
        (&["diff", "overlays/aws", "overlays/libvirt"][..], 1),
        (&["man"][..], 0),
        (&["version"][..], 0),
    ] {
        let mut fds = [0; 2];
        // SAFETY: pipe() fills both descriptors; each is owned once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the descriptors were just created and are owned here alone.
        let (read_end, write_end) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
        drop(read_end);
        let run = std::process::Command::new(crate::common::bin())
            .args(args)
            .current_dir(&repo)
            .stdin(std::process::Stdio::null())
            .stdout(write_end)
            .output()
            .expect("running peerpods-build");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} printed on stderr: {stderr}");
    }
}
