//! The one error type of the engine; each variant carries enough context to print one clear line.
use std::path::PathBuf;

/// Everything that can stop a build.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A YAML or JSON document that does not parse.
    #[error("{file}:{line}:{column}: {message}")]
    Parse { file: String, line: usize, column: usize, message: String },
    /// A file that cannot be read.
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    /// A file outside the kustomization root while the load restrictor is on.
    #[error("security; file '{path}' is not in or below '{root}'")]
    OutsideRoot { path: String, root: String },
    /// Anything else, already worded for the user (kustomize's wording where tests rely on it).
    #[error("{0}")]
    Message(String),
}

impl Error {
    pub fn msg(text: impl Into<String>) -> Self {
        Error::Message(text.into())
    }

    /// Prefix the error with where it happened, as kustomize nests its messages.
    pub fn context(self, what: impl std::fmt::Display) -> Self {
        Error::Message(format!("{what}: {self}"))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
