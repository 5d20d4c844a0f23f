//! kustomize v5.8.1's rules, each pinned by several cases of `tests/kustomize_v5_8/`, built with
//! the reference (kustomize v5.8.1) and compared with the second reference (v5.6.0): where v5.6.0
//! agrees, and where it does not (the README lists those differences).
//!
//! A case is a folder with a kustomization: `expected.yaml` is the reference's output, or
//! `expected-error.txt` lines that both the reference's error and ours contain.
use std::fs;
use std::path::PathBuf;

use crate::common::{check_build_fixture, manifest_dir, ours, reference_run, reference_v5_6_run};

/// What kustomize v5.6.0 does with a case.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V5_6 {
    /// The same output, or an error with the same line.
    Same,
    /// Something else: a behaviour that changed in v5.7 or v5.8.
    Differs,
}
use V5_6::{Differs, Same};

fn case_dir(name: &str) -> PathBuf {
    manifest_dir().join("tests").join("kustomize_v5_8").join(name)
}

fn check(cases: &[(&str, V5_6)]) {
    for &(name, v5_6) in cases {
        check_case(name, v5_6);
    }
}

fn check_case(name: &str, v5_6: V5_6) {
    let dir = case_dir(name);
    let dir_arg = dir.to_str().expect("UTF-8 path");
    let (expected, error) = if dir.join("expected.yaml").is_file() {
        check_build_fixture(&dir, name);
        (fs::read_to_string(dir.join("expected.yaml")).unwrap(), None)
    } else {
        let want = fs::read_to_string(dir.join("expected-error.txt")).unwrap_or_else(|e| panic!("{name}: expected-error.txt: {e}"));
        let want: Vec<String> = want.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
        assert!(!want.is_empty(), "{name}: expected-error.txt is empty");
        let has_all = |stderr: &str| want.iter().all(|line| stderr.contains(line.as_str()));
        let r = ours(&["build", dir_arg], &manifest_dir());
        assert!(!r.success(), "{name}: peerpods-build succeeded where kustomize fails with `{want:?}`");
        assert!(has_all(&r.stderr), "{name}: the error lacks one of {want:?}:\n{}", r.stderr);
        if let Some(reference) = reference_run(&[dir_arg], &manifest_dir(), name) {
            assert!(!reference.success(), "{name}: the reference succeeds");
            assert!(has_all(&reference.stderr), "{name}: the reference's error lacks one of {want:?}:\n{}", reference.stderr);
        }
        (String::new(), Some(want))
    };
    let Some(old) = reference_v5_6_run(&[dir_arg], &manifest_dir(), name) else { return };
    let agrees = match &error {
        None => old.success() && old.stdout == expected,
        Some(want) => !old.success() && want.iter().all(|line| old.stderr.contains(line.as_str())),
    };
    assert_eq!(agrees, v5_6 == Same, "{name}: kustomize v5.6.0 was expected to {}:\n{}{}", if v5_6 == Same { "agree" } else { "differ" }, old.stdout, old.stderr);
}

/// Every case below, by folder.
const CASES: &[&[(&str, V5_6)]] = &[BRACES, FOLDING, TYPES, ANNOTATIONS, SCOPES, MISSING_FILES, YAML_SYNTAX, NOT_FOLDERS, REPLACEMENTS, STRUCTURED_DATA, IMAGE_VOLUMES, GENERATOR_CONFLICTS, CONFIGURATIONS, OPTIONS_AND_NAMESPACES, DUPLICATES, BUILD_STATE_IN_ERRORS, SMP_LIST_DIRECTIVES, YAML11_KEYS, PATCH_PLUGINS, MERGING_AND_LOADING, SHARED_NODE_WRITES, CRD_DEFINITIONS, METADATA_TEXTS, GENERATOR_KEYS, YAML_READERS, PATCH_NODES, COMPONENT_MERGES, PLAIN_KEYS, &[("empty-patch-files-skipped", Differs)]];

#[test]
fn every_case_folder_is_checked() {
    let listed: std::collections::BTreeSet<&str> = CASES.iter().flat_map(|c| c.iter().map(|(n, _)| *n)).collect();
    let on_disk: std::collections::BTreeSet<String> = fs::read_dir(manifest_dir().join("tests/kustomize_v5_8"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let on_disk: std::collections::BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
    pretty_assertions::assert_eq!(listed, on_disk, "the tests and the folders of tests/kustomize_v5_8/ disagree");
    for name in on_disk {
        let dir = case_dir(name);
        assert!(dir.join("kustomization.yaml").is_file(), "{name}: no kustomization.yaml");
        assert!(dir.join("expected.yaml").is_file() != dir.join("expected-error.txt").is_file(), "{name}: one of expected.yaml, expected-error.txt");
    }
}

const BRACES: &[(&str, V5_6)] = &[("brace-literal-in-target-name", Same), ("brace-repetition-in-target-name", Same)];

#[test]
fn a_brace_in_a_target_that_opens_no_repetition_is_a_literal() {
    check(BRACES);
}

const FOLDING: &[(&str, V5_6)] = &[("folded-more-indented-lines", Same), ("folded-consecutive-more-indented", Same)];

#[test]
fn folded_scalars_fold_as_go_yaml_folds_them() {
    check(FOLDING);
}

const TYPES: &[(&str, V5_6)] = &[
    ("types-accepted-forms", Same),
    ("types-bool-field-given-string", Same),
    ("types-generator-literal-number", Same),
    ("types-image-tag-number", Same),
    ("types-images-is-a-map", Same),
    ("types-label-pair-yaml11-bool", Same),
    ("types-namespace-octal-number", Same),
    ("types-patches-entry-is-a-string", Same),
    ("types-replica-count-fraction", Same),
    ("types-unknown-key-in-image", Same),
    ("types-unknown-key-namePrefx", Same),
];

#[test]
fn kustomization_fields_decode_with_gos_types_and_wording() {
    check(TYPES);
}

/// kustomize's message stands whole on its line; the line after it names the file, line and
/// column, and the closest field.
#[test]
fn an_unknown_key_is_named_with_its_line_and_column_and_the_closest_field() {
    for (name, at, hint) in [
        ("types-unknown-key-namePrefx", "kustomization.yaml:3:1", " (did you mean \"namePrefix\"?)"),
        ("types-unknown-key-in-image", "kustomization.yaml:5:3", " (did you mean \"newTag\"?)"),
        ("types-image-tag-number", "kustomization.yaml:5:3", ""),
    ] {
        let dir = case_dir(name);
        let r = ours(&["build", dir.to_str().unwrap()], &manifest_dir());
        let mut lines = r.stderr.lines().skip_while(|l| !l.contains("json: "));
        let message = lines.next().unwrap_or_else(|| panic!("{name}: no decoding error:\n{}", r.stderr));
        assert!(message.starts_with("Error: invalid Kustomization: json: ") && !message.contains(at), "{name}: {message}");
        let note = lines.next().unwrap_or_else(|| panic!("{name}: no line after the message:\n{}", r.stderr));
        let want = format!("{}/{at}{hint}", dir.display());
        assert!(note.trim_start().strip_prefix("at ") == Some(want.as_str()), "{name}: {note:?}, want \"at {want}\"");
    }
}

const ANNOTATIONS: &[(&str, V5_6)] = &[
    ("annotation-nulls-in-list-items", Same),
    ("annotation-nulls-keep-label-nulls", Same),
    ("annotation-from-patch-nonstring", Same),
    ("annotation-from-json-patch-nonstring", Same),
    ("json-patch-into-missing-annotations", Same),
    ("json-patch-annotations-replaced", Same),
];

/// Annotation values are strings (a null is its text, a patch's number or boolean its text);
/// while patches run, every resource has annotations (kustomize's internal ones).
#[test]
fn annotations_are_strings_and_exist_while_patches_run() {
    check(ANNOTATIONS);
}

const SCOPES: &[(&str, V5_6)] = &[("admission-policy-kinds-take-namespace", Same), ("admission-webhook-stays-cluster-scoped", Same)];

/// A kind missing from kustomize's scope table and its v1.21.2 schema is namespaced.
#[test]
fn admission_policies_are_namespaced_as_kustomize_knows_them() {
    check(SCOPES);
}

const MISSING_FILES: &[(&str, V5_6)] = &[
    ("missing-patch-file-patches", Same),
    ("missing-patch-file-strategic-merge", Same),
    ("missing-patch-file-json6902", Same),
    ("generator-missing-file-source", Same),
    ("generator-missing-env-file", Same),
    ("generator-invalid-literal", Same),
];

/// A patch file or generator source that cannot be read: kustomize's plugin-configuration and
/// key-value loader wording.
#[test]
fn missing_patch_and_generator_files_are_worded_as_kustomize_words_them() {
    check(MISSING_FILES);
}

const YAML_SYNTAX: &[(&str, V5_6)] = &[
    ("yaml-template-tag", Same),
    ("yaml-mapping-value-in-scalar", Same),
    ("yaml-tab-indentation", Same),
    ("yaml-parser-error-names-line-before", Same),
    ("yaml-flow-sequence-unclosed", Same),
    ("yaml-quoted-scalar-unclosed", Same),
    ("component-yaml-syntax-error", Same),
    ("resource-malformed-second-document", Same),
    ("resource-invalid-document-separator", Same),
    ("resource-dashes-run-into-a-key", Same),
    ("resource-malformed-flow-mapping", Same),
];

/// A kustomization or resource file that does not parse: go-yaml's words and line (go-yaml v2's
/// for a kustomization, v3's as kyaml reads each document of a resource file), our line:column
/// on the line after.
#[test]
fn kustomization_syntax_errors_use_go_yamls_words() {
    check(YAML_SYNTAX);
}

const NOT_FOLDERS: &[(&str, V5_6)] = &[
    ("resource-plain-map", Same),
    ("resource-list-of-strings", Same),
    ("component-missing-folder", Same),
    ("component-is-a-file", Same),
    ("kind-and-api-version-both-wrong", Same),
];

/// A resources entry that holds no resource is then tried as a folder, and says both; a
/// components entry must be a folder (`loader.New`).
#[test]
fn entries_that_are_not_what_they_must_be_are_worded_as_kustomize_words_them() {
    check(NOT_FOLDERS);
}

const REPLACEMENTS: &[(&str, V5_6)] = &[
    ("replacement-select-regex", Differs),
    ("replacement-reject-regex", Differs),
    ("replacement-select-default-namespace", Differs),
    ("replacement-static-value", Differs),
    ("replacement-static-value-and-source", Differs),
    ("replacement-live-source-into-itself", Same),
    ("replacement-live-source-seen-by-later-targets", Same),
];

/// Replacement targets: `select` and `reject` id fields are regular expressions, the namespace
/// compared as written (`default` no longer selects a resource without one); `sourceValue` is
/// a static source; a map or list source is copied as it is at each write (what a `create`
/// made inside it, or an earlier target wrote into it, is copied too).
#[test]
fn replacements_select_by_regular_expression_and_take_static_values() {
    check(REPLACEMENTS);
}

const IMAGE_VOLUMES: &[(&str, V5_6)] = &[("images-in-image-volumes", Differs), ("images-volume-without-image", Same)];

/// The images transformer also sets `volumes[].image.reference` (image volumes).
const STRUCTURED_DATA: &[(&str, V5_6)] = &[
    ("replacement-into-json-pretty", Differs),
    ("replacement-into-json-compact-annotation", Differs),
    ("replacement-into-json-create", Differs),
    ("replacement-into-json-whole-map", Differs),
    ("replacement-into-json-array-index", Differs),
    ("replacement-into-yaml-document", Differs),
    ("replacement-into-yaml-list-item", Differs),
    ("replacement-into-yaml-quoted-scalars", Differs),
    ("replacement-into-yaml-flow-collections", Differs),
    ("replacement-into-yaml-scalar-texts", Differs),
    ("replacement-into-yaml-key-and-block-styles", Differs),
    ("replacement-into-yaml-comments", Differs),
    ("replacement-into-yaml-create-in-flow-map", Differs),
    ("replacement-into-plain-string-fails", Same),
];

/// A replacement target path that goes on past a string holding JSON or YAML writes into that
/// document: JSON comes back as Go's encoder writes it (keys sorted, `<>&` escaped, indented
/// when it was), YAML as kyaml prints its node tree (key order, flow collections, scalars' texts,
/// tags and styles, comments).
#[test]
fn replacements_write_into_json_and_yaml_held_in_strings() {
    check(STRUCTURED_DATA);
}

#[test]
fn images_are_set_in_image_volumes() {
    check(IMAGE_VOLUMES);
}

const GENERATOR_CONFLICTS: &[(&str, V5_6)] = &[("generator-conflict-unspecified", Differs), ("generator-conflict-create", Differs)];

const GENERATOR_KEYS: &[(&str, V5_6)] = &[("generator-keys-are-not-validated", Same), ("generator-env-empty-key-names-no-field", Same)];

/// kustomize's key validators are stubs: a generator takes any key (`a/b`, `1A`, `é`, with
/// spaces), from literals, files and env files alike, and an env file's empty key sets no field.
#[test]
fn generator_keys_are_taken_as_kustomize_takes_them() {
    check(GENERATOR_KEYS);
}

/// A generated object whose id exists, without merge or replace: the error names the behavior.
#[test]
fn a_generator_conflict_names_its_behavior() {
    check(GENERATOR_CONFLICTS);
}

/// A `patches` file holding nothing or only comments is skipped (kustomize v5.6.0 refused it);
/// peerpods-build says so, as a rule that changes nothing.
#[test]
fn empty_patch_files_are_skipped_with_a_warning() {
    let name = "empty-patch-files-skipped";
    let dir = case_dir(name);
    let dir_arg = dir.to_str().unwrap();
    let expected = fs::read_to_string(dir.join("expected.yaml")).unwrap();
    let r = ours(&["build", dir_arg], &manifest_dir());
    assert!(r.success(), "{}", r.stderr);
    pretty_assertions::assert_eq!(r.stdout, expected);
    assert_eq!(r.stderr.matches("holds no document and has no effect").count(), 2, "{}", r.stderr);
    assert!(!ours(&["build", dir_arg, "--strict"], &manifest_dir()).success(), "--strict accepted an empty patch");
    if let Some(reference) = reference_run(&[dir_arg], &manifest_dir(), name) {
        assert!(reference.success(), "{}", reference.stderr);
        pretty_assertions::assert_eq!(reference.stdout, expected);
    }
    if let Some(old) = reference_v5_6_run(&[dir_arg], &manifest_dir(), name) {
        assert!(!old.success(), "kustomize v5.6.0 accepted an empty patch file");
    }
}

const SHARED_NODE_WRITES: &[(&str, V5_6)] = &[
    ("namereference-renames-shared-annotation", Same),
    ("namereference-renames-shared-label", Same),
    ("namereference-existing-annotation-not-shared", Same),
    ("images-rename-shared-annotation", Same),
    ("replicas-over-shared-annotation", Same),
    ("replicas-keep-quoted-strings", Same),
];

/// A label or annotation `commonLabels`/`commonAnnotations` added at several paths is one node in
/// kustomize: a name reference, an image or a replica count configured at one of those paths
/// writes it at all of them (and not where the key was already there, which got a copy). A
/// count written over a quoted scalar keeps its quotes.
#[test]
fn writes_at_a_shared_node_show_at_each_of_its_paths() {
    check(SHARED_NODE_WRITES);
}

const CRD_DEFINITIONS: &[(&str, V5_6)] = &[
    ("crds-definition-number", Same),
    ("crds-definition-null", Same),
    ("crds-json-definition-string", Same),
    ("crds-missing-file", Same),
];

/// `crds` files hold OpenAPI definitions decoded as Go decodes them: a definition that is not a
/// mapping is Go's type error (without the YAML wrapping for a file written as JSON), a null one
/// is no type; every failure is `loading CRDs [...]: ...`.
#[test]
fn crd_definitions_decode_as_go_decodes_them() {
    check(CRD_DEFINITIONS);
}

const YAML_READERS: &[(&str, V5_6)] = &[("folded-quirk-only-where-written-folded-again", Same), ("timestamps-keep-their-text-in-kustomizations-and-json-patches", Same)];

/// Which reader a text meets: go-yaml v3 through kyaml nodes for resources and strategic merge
/// patches (a folded value gains go-yaml's extra line break before a more-indented line, unless
/// a space ends a line or the value, or it is an annotation, set again as read), sigs.k8s.io/yaml
/// for kustomizations and JSON 6902 patches (no such break; a timestamp keeps its text).
#[test]
fn each_text_is_read_as_kustomizes_reader_for_it_reads_it() {
    check(YAML_READERS);
}

const METADATA_TEXTS: &[(&str, V5_6)] = &[
    ("annotation-values-are-their-text", Same),
    ("targeted-patch-labels-are-their-text", Same),
    ("inline-targeted-patch-labels-are-their-text", Same),
    ("patches-strategic-merge-labels-are-their-text", Same),
    ("targeted-patch-null-labels-keep-the-targets", Same),
    ("untargeted-patch-null-label-deletes", Same),
    ("generator-merge-and-replace-drop-empty-labels", Same),
    ("annotation-keys-repeated-last-wins", Same),
    ("label-keys-repeated-fail", Same),
];

const COMPONENT_MERGES: &[(&str, V5_6)] = &[("component-renames-two-resources-to-one-id", Same), ("component-renames-one-resource", Same)];

/// What a component makes is merged back into an empty map: two resources its patches gave one
/// id are refused, one renamed resource is not.
#[test]
fn a_component_merges_back_only_resources_of_distinct_ids() {
    check(COMPONENT_MERGES);
}

const PLAIN_KEYS: &[(&str, V5_6)] = &[
    ("resource-number-and-boolean-keys-refused", Same),
    ("resource-plain-keys-in-list-items-and-flow-maps", Same),
    ("resource-plain-key-meets-json-patch", Same),
    ("generator-merge-keeps-plain-data-keys", Same),
    ("resource-plain-keys-gone-or-quoted-build", Same),
    ("resource-plain-key-map-replaced-by-patch-builds", Same),
];

/// A mapping key of a resource file that go-yaml reads as a number or a boolean (`1: a`, `true:`,
/// in block or flow maps, in List items) makes kustomize fail where it turns the resource into
/// JSON: a JSON patch's target, or the output, named by its map with Go's order of such keys.
/// A quoted key, a key a patch removed, a key whose map or list a patch replaced, and a
/// resource no JSON patch targets build.
#[test]
fn resource_keys_read_as_numbers_or_booleans_are_refused_where_kustomize_refuses_them() {
    check(PLAIN_KEYS);
}

const PATCH_NODES: &[(&str, V5_6)] = &[
    ("patch-without-api-version-untargeted", Same),
    ("patch-without-api-version-targeted", Same),
    ("patch-scalar-over-quoted-scalar-stays-quoted", Same),
];

/// A strategic merge patch's copy takes its target's apiVersion (for a target without one, an
/// empty node the merge adds as a null); a patch's number or boolean set over a quoted scalar
/// takes that node's style and prints quoted (`replicas: "3"` patched with `5` is `"5"`).
#[test]
fn strategic_merge_patches_write_nodes_as_kyaml_writes_them() {
    check(PATCH_NODES);
}

/// kustomize sets every annotation again as the text of its value (`1.50`, `0x1F`, `~`, a
/// timestamp as written), and sets the labels and annotations of a patch applied to what a
/// target or `patchesStrategicMerge` selects as texts first (a null there no longer deletes,
/// a number keeps its spelling); a patch without a target is merged as it is. A generator's
/// merge or replace sets the labels and annotations it merged the same way, an empty map gone.
/// A resource's annotations are read into a map first: a repeated key there is the last one's
/// (a repeated label key still fails).
#[test]
fn labels_and_annotations_are_set_again_as_the_texts_of_their_values() {
    check(METADATA_TEXTS);
}

const CONFIGURATIONS: &[(&str, V5_6)] = &[
    ("configurations-unknown-field", Same),
    ("configurations-number-for-string", Same),
    ("varreference-wildcard", Same),
    ("varreference-wildcard-unreached", Same),
];

/// `configurations` files decode strictly, as transformer configs; a var reference path with a
/// `*` is refused where it is walked.
#[test]
fn configurations_decode_strictly_and_var_references_have_no_wildcard() {
    check(CONFIGURATIONS);
}

const OPTIONS_AND_NAMESPACES: &[(&str, V5_6)] = &[("patch-options-unknown", Differs), ("namespace-not-propagated-to-bases", Same)];

/// `patches[].options` is a struct with two fields (an unknown option is refused); an overlay's
/// namespace reaches the resources of its bases by the namespace transformer only (v5.8.1
/// propagates it to `helmCharts` alone).
#[test]
fn patch_options_are_typed_and_namespaces_are_not_propagated_to_bases() {
    check(OPTIONS_AND_NAMESPACES);
}

const PATCH_PLUGINS: &[(&str, V5_6)] = &[
    ("patch-path-and-patch-both-set", Same),
    ("patch-inline-not-a-patch", Same),
    ("patch-json-ops-without-target", Same),
    ("patch-json6902-empty-ops", Same),
    ("patch-json6902-plugin-op-is-a-map", Same),
    ("patch-smp-plugin-empty-files", Same),
    ("patch-file-outside-root", Same),
    ("json-patch-yaml-1-1-booleans", Same),
    ("patch-file-syntax-error-smp", Same),
    ("patch-file-syntax-error-json6902", Same),
];

/// A patch plugin's configuration is checked, its file read and its patch parsed before any
/// transformer runs, and refused in kustomize's words: `trouble configuring builtin <Plugin>
/// with config: ...` for a kustomization field, `plugin <id> fails configuration: ...` for a
/// `transformers` entry; a JSON patch written in YAML is read as go-yaml v2 reads it.
#[test]
fn patch_plugins_are_configured_and_refused_as_kustomize_does_it() {
    check(PATCH_PLUGINS);
}

const MERGING_AND_LOADING: &[(&str, V5_6)] = &[
    ("var-defined-in-two-bases", Same),
    ("resource-file-outside-root", Same),
    ("duplicate-key-after-blank-lines", Same),
];

/// What a folder brings is merged under `recursed merging from path`; a file outside the root
/// is then tried as a folder; a key written twice fails with the lines kyaml writes.
#[test]
fn merging_and_loading_fail_in_kustomizes_words() {
    check(MERGING_AND_LOADING);
}

const DUPLICATES: &[(&str, V5_6)] = &[
    ("duplicate-id-two-files", Same),
    ("duplicate-id-two-folders", Same),
    ("duplicate-id-one-file", Same),
    ("duplicate-id-empty-and-default-namespace", Same),
    ("duplicate-id-cluster-scoped-namespace-ignored", Same),
];

/// A resource id that comes twice names the file or folder that brought the second copy. Ids
/// are compared by effective namespace: no namespace is `default`, and a cluster-scoped kind's
/// namespace does not count.
#[test]
fn a_duplicate_id_names_the_entry_that_brought_it_again() {
    check(DUPLICATES);
}

const BUILD_STATE_IN_ERRORS: &[(&str, V5_6)] = &[
    ("namespace-conflict-moved-first", Same),
    ("namespace-conflict-met-unmoved", Same),
    ("namespace-conflict-with-generated", Same),
    ("namespace-conflict-after-json-patch", Same),
    ("namespace-conflict-three-ways", Same),
    ("namespace-conflict-in-a-base", Same),
    ("namespace-conflict-with-build-metadata", Same),
    ("namespace-conflict-namespaces-renamed", Same),
    ("namespace-conflict-renamed-by-configuration", Same),
    ("namespace-custom-kind-named-namespace-kept", Same),
    ("namespace-configuration-writes-kind", Same),
    ("namespace-unset-only-keeps-same-names-apart", Same),
    ("ambiguous-reference-shows-origins", Same),
];

/// When `namespace` gives two resources one id, kustomize prints every resource with that id
/// as it holds them at that moment (moved one by one, in order): Go's JSON of each, with the
/// earlier ids every transformer that may rename stored (repeats too), the affixes, the
/// generator settings, and with `buildMetadata` the origin and the runs so far. The dump of
/// an ambiguous reference shows the same state.
#[test]
fn an_error_that_prints_resources_prints_them_as_kustomize_holds_them() {
    check(BUILD_STATE_IN_ERRORS);
}

const SMP_LIST_DIRECTIVES: &[(&str, V5_6)] = &[
    ("smp-list-directive-args-replace-item", Same),
    ("smp-list-directive-containers-replace-last", Same),
    ("smp-list-directive-containers-two-directives", Same),
    ("smp-list-directive-crd-list-replace", Same),
    ("smp-list-directive-env-delete-only", Same),
    ("smp-list-directive-env-delete-with-items", Same),
    ("smp-list-directive-finalizers-delete", Same),
    ("smp-list-directive-finalizers-replace", Same),
    ("smp-list-directive-ports-replace", Same),
    ("smp-list-directive-volumes-directive-with-name", Same),
    ("smp-list-directive-volumes-merge-directive", Same),
    ("smp-list-directive-volumes-replace-first", Same),
    ("smp-list-directive-volumes-replace-middle", Same),
    ("smp-list-directive-volumes-replace-only", Same),
    ("smp-list-directive-volumes-replace-set-element-order", Same),
    ("smp-list-directive-volumes-replace-target-absent-init", Same),
    ("smp-list-directive-volumes-unknown-directive", Same),
];

/// A strategic-merge patch list item whose only key is `$patch` (first, middle or last):
/// in a `merge` list whose target exists, `delete` removes the field and `replace` makes the
/// patch's list the result unmerged (keyed lists, two-key ports, finalizers, a CRD list with
/// merge keys from `openapi`, beside `$setElementOrder`); `merge` merges; another value is an
/// error; in other lists (`args`, a `list-type: map` without a strategy, a list the target
/// lacks) it is an ordinary item.
#[test]
fn patch_directives_inside_lists_act_as_kyaml_reads_them() {
    check(SMP_LIST_DIRECTIVES);
}

const YAML11_KEYS: &[(&str, V5_6)] = &[
    ("yaml11-key-commonlabels", Same),
    ("yaml11-key-commonannotations", Same),
    ("yaml11-key-labels-selector", Same),
    ("yaml11-key-nameprefix-and-label", Same),
    ("yaml11-key-generator-options", Same),
    ("yaml11-key-quoted", Same),
];

/// A key of a kustomization's string map that YAML 1.1 reads as a boolean or a number (`yes`,
/// `off`, `1`, plain) is written into the resources untagged and read back so: kustomize fails to
/// encode the first such resource, printing it as Go's `%#v` does; a quoted key is a string.
#[test]
fn yaml_1_1_keys_of_string_maps_fail_as_kustomize_fails() {
    check(YAML11_KEYS);
}
