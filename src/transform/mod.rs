//! Transformers: each one a small filter over resources, driven by field spec tables.
pub mod builtin_plugins;
pub mod fieldspec;
pub mod images;
pub mod metadata_maps;
pub mod name_affix;
pub mod namespace;
pub mod replicas;
pub mod select;
pub mod patches;
pub mod path;
pub mod sort;
pub mod fieldspec_tables;
pub mod namereference;
pub mod replacements;
pub mod vars;
