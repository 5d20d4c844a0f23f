//! kustomization.yaml: its types, and the loader that reads files under the load restrictor.
pub mod go_json;
pub mod loader;
pub mod looks;
pub mod reads;
pub mod types;

pub use loader::{LoadRestrictor, Loader, Looked};
pub use types::Kustomization;
