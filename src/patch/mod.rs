//! Patching: strategic merge (with the Kubernetes schema) and RFC 6902 JSON patches.
//!
//! - [`strategic::strategic_merge`] reproduces kustomize v5.6.0's strategic merge
//!   (kyaml `merge2` with list-prepend), driven by a [`Schema`].
//! - [`json6902::apply_json6902`] applies JSON patches as evanphx/json-patch v4 does.
//! - [`schema::is_namespaced`] answers kustomize's namespaced-kind question.
pub mod json6902;
pub mod schema;
pub mod strategic;

pub use json6902::{apply_json6902, apply_json6902_within};
pub use schema::{is_namespaced, FieldInfo, Schema, SchemaNode, BUILTIN_VERSION};
pub use strategic::strategic_merge;

/// A patch that cannot be applied; the text is meant for the user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError(pub String);

impl PatchError {
    pub fn new(text: impl Into<String>) -> Self {
        PatchError(text.into())
    }
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatchError {}

impl From<PatchError> for crate::error::Error {
    fn from(e: PatchError) -> Self {
        crate::error::Error::Message(e.0)
    }
}
