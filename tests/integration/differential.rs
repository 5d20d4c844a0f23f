//! One small fixture per kustomize behaviour, in `tests/fixtures/<case>/`.
//!
//! Each fixture holds a `kustomization.yaml`, its resources, and an
//! `expected.yaml` produced once with the reference (`kubectl.1.33 kustomize`)
//! and then read and checked by hand. For every fixture:
//!
//! - `peerpods-build build <dir>` succeeds, does not warn about rules that
//!   match nothing (every rule in the fixtures matches), and prints exactly
//!   `expected.yaml`, byte for byte;
//! - when the reference is present, it still prints exactly `expected.yaml`
//!   (so a stale or hand-edited expectation cannot hide a difference); without
//!   it, that half is skipped with a SKIP line on stderr.
//!
//! `every_fixture_folder_has_a_test` keeps the list below and the folders in step.

use crate::common;

fn check_fixture(name: &str) {
    common::check_build_fixture(&common::fixture(name), name);
}

macro_rules! fixtures {
    ($($test:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check_fixture($dir);
            }
        )*

        /// Every folder under tests/fixtures has a test above, and every test a folder.
        #[test]
        fn every_fixture_folder_has_a_test() {
            common::assert_fixture_folders_listed("fixtures", &[$($dir),*]);
        }
    };
}

fixtures! {
    namespace_moves_namespaced_resources_and_service_account_subjects => "namespace",
    name_prefix_and_suffix_follow_configmap_references => "name_prefix_suffix",
    common_labels_reach_selectors_and_templates => "common_labels",
    labels_without_selectors_reach_templates_only_when_asked => "labels_without_selectors",
    common_annotations_reach_pod_templates => "common_annotations",
    images_set_tag_name_digest_and_registry_with_port => "images",
    replicas_set_counts_on_deployments_and_statefulsets => "replicas",
    configmap_generator_reads_literals_files_and_env_files => "configmap_generator",
    configmap_generator_merges_overlay_into_base => "configmap_generator_merge",
    secret_generator_sets_type_and_wraps_long_values => "secret_generator",
    generator_options_disable_hash_and_add_labels => "generator_options",
    strategic_merge_patch_deletes_list_items_and_resources => "patch_strategic_merge_delete",
    json6902_patches_inline_json_file_and_yaml_file => "patch_json6902",
    patch_targets_select_by_label_and_name_regex => "patch_target_selectors",
    patches_strategic_merge_field_applies_file_and_inline => "patches_strategic_merge",
    replacements_copy_whole_values_and_delimited_parts => "replacements",
    vars_substitute_known_names_and_keep_unknown => "vars",
    components_add_resources_patches_and_prefix => "components",
    sort_options_fifo_keeps_input_order => "sort_options_fifo",
    kind_list_items_become_resources => "kind_list",
    json_resource_file_is_read_as_yaml => "json_resource",
    yaml_anchors_aliases_and_merge_keys_expand => "yaml_anchors",
    custom_resource_and_crd_are_transformed_as_kustomize_does => "custom_resource",
    block_scalars_ending_a_file_without_a_line_break_have_none => "yaml_block_scalar_at_end_of_file",
    quoted_scalars_continue_at_any_indentation => "yaml_quoted_scalar_continuation",
    strategic_merge_drops_empty_nulls_it_walks_over => "patch_strategic_merge_empty_nulls",
    strategic_merge_walks_target_fields_the_patch_does_not_name => "patch_strategic_merge_walks_fields_it_does_not_name",
    empty_annotations_are_dropped_and_labels_keep_their_type => "metadata_annotations_and_label_types",
    images_with_tag_and_digest_match_and_are_rewritten => "images_tag_and_digest",
    images_rules_apply_in_order_and_twice_where_two_walks_meet => "images_rules_in_order",
    replacements_splice_a_delimited_part_of_a_list_item => "replacements_delimiter_index_into_list",
    generators_with_an_unknown_behavior_create => "generator_unknown_behavior",
}
