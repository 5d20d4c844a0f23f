//! The settings the cloud-api-adaptor reads, and the check of a peer pods overlay's settings
//! against them.
//!
//! The table (`data/adaptor-settings.tsv`, derived from the adaptor's source by
//! `tools/adaptor-settings.py`) is compiled in; `env_file` reads the documented env files the
//! overlays ship; `check` walks an overlay's kustomization graph and reports every setting of
//! `peer-pods-cm` that the adaptor would ignore or misread; `build_warning` runs that check on a
//! build whose output holds the adaptor's settings.
pub mod build_warning;
pub mod check;
pub mod env_file;
pub mod table;

pub use build_warning::{renders_adaptor_settings, settings_hint, settings_warnings};
pub use check::{check_settings, CheckError, Finding};
pub use env_file::{EnvEntry, EnvFile};
pub use table::{Requirement, Setting, SettingsTable, ValueType};
