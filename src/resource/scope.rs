//! Which kinds live in a namespace (kustomize's table, compiled in with the patch schema).
pub use crate::patch::is_namespaced;
