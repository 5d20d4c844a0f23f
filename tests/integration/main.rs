//! The integration tests, one binary (each file under `tests/` would link the whole crate again).
//! Each module covers one area; `cargo test <module>` runs one area, `cargo test aws` one provider.

mod common;
#[path = "../../benches/workload/generator.rs"]
mod generator;
#[path = "../../benches/workload/reference.rs"]
mod reference;
#[path = "../../benches/workload/untransformed_tree.rs"]
mod untransformed_tree;

mod architecture;
mod bench_equivalence;
mod check_settings;
mod cli;
mod command_line;
mod deps;
mod differential;
mod e2e;
mod edit;
mod edit_commands;
mod error_wording;
mod emit_roundtrip;
mod explain;
mod fidelity;
mod fidelity_sharing;
mod gitops;
mod hardening;
mod go_clients;
mod flux;
mod helm;
mod install;
mod kustomize_clients;
mod kustomize_newest;
mod kustomize_v5_8;
mod large_levels;
mod localize;
mod parallel_folders;
mod peerpods;
mod plugins;
mod readme_examples;
mod remote;
mod review;
mod security;
mod stress;
mod tools_present;
mod yaml_differential;
mod several_overlays;
mod several_roots;
