//! Transformers: each one a small filter over resources, driven by field spec tables.
pub mod fieldspec;
