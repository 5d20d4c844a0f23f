//! Two habits of kustomize's YAML node tree that show in its output, one fixture per shape, in
//! `tests/fidelity_sharing/<case>/` (built from the case folder; bases in subfolders):
//!
//! - a label or annotation value that `labels`/`commonLabels`/`commonAnnotations` create is one
//!   node shared by every path they created it at, so a later write to one path (labels of the
//!   same or an outer level, a strategic-merge patch, a replacement, a var) shows at all of them;
//!   keys that existed before are not shared, and a JSON 6902 patch ends the sharing;
//! - a scalar a replacement creates has no YAML tag: its text decides its type, `vars` type the
//!   ones they visit as strings, and a strategic-merge patch quotes those YAML 1.1 reads as
//!   non-strings.
//!
//! Each `expected.yaml` was produced with the reference (`kubectl.1.33 kustomize`) and read by
//! hand; the reference is re-run when installed (see `common::check_build_fixture`).
use crate::common;

const FOLDER: &str = "fidelity_sharing";

macro_rules! cases {
    ($($test:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $test() {
                common::check_build_fixture(&common::manifest_dir().join("tests").join(FOLDER).join($dir), $dir);
            }
        )*

        #[test]
        fn every_sharing_fixture_folder_has_a_test() {
            common::assert_fixture_folders_listed(FOLDER, &[$($dir),*]);
        }
    };
}

cases! {
    a_later_labels_entry_rewrites_every_path_an_earlier_one_created => "labels_entries_in_one_kustomization",
    labels_and_annotations_of_other_keys_leave_the_sharing_intact => "other_keys_leave_labels_shared",
    labels_stay_shared_across_three_levels_prefix_and_namespace => "labels_across_three_levels",
    keys_that_existed_before_get_a_copy_not_the_shared_node => "preexisting_keys_are_not_shared",
    a_json6902_patch_ends_the_sharing => "json6902_patch_ends_sharing",
    build_metadata_ends_the_sharing_of_annotations_only => "build_metadata_ends_annotation_sharing_only",
    a_patch_writing_several_shared_paths_leaves_the_last_value => "patch_writing_several_shared_paths_last_wins",
    a_patch_that_replaces_a_list_unlinks_the_labels_inside => "patch_replacing_a_list_unlinks_its_labels",
    replacements_and_vars_write_shared_annotations => "annotations_written_by_replacement_and_vars",
    replacement_created_scalars_take_the_type_of_their_text => "replacement_created_scalars_resolve_by_text",
    vars_type_replacement_created_metadata_as_strings => "replacement_created_scalars_typed_by_vars",
    a_strategic_merge_patch_quotes_replacement_created_non_strings => "replacement_created_scalars_quoted_by_patch",
    a_patch_quotes_created_scalars_in_maps_but_not_in_scalar_lists => "patch_quotes_created_scalars_in_maps_not_in_scalar_lists",
    vars_type_a_created_list_item_that_a_patch_left_alone => "vars_type_a_created_list_item_a_patch_left_alone",
    a_json6902_patch_fixes_the_type_of_created_scalars => "json6902_patch_types_created_scalars",
    replacements_read_and_extend_a_created_scalar_by_its_text => "replacement_reads_and_extends_created_scalar",
}
