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
    /// A file or folder that does not exist, worded as kustomize's loader words it
    /// (`evalsymlink failure on '<path>' : lstat <first missing part>: no such file or directory`).
    #[error("{message}")]
    Missing { path: PathBuf, message: String },
    /// A file outside the kustomization root while the load restrictor is on.
    #[error("security; file '{path}' is not in or below '{root}'")]
    OutsideRoot { path: String, root: String },
    /// Anything else, already worded for the user (kustomize's wording where tests rely on it).
    #[error("{0}")]
    Message(String),
    /// kustomize's message, whole, and what we add about it (where: `file:line:column`; a hint)
    /// on a line of its own after it: the note stays after the message however it is wrapped.
    #[error("{}\n  {note}", message.trim_end_matches('\n'))]
    Noted { message: String, note: String },
}

impl Error {
    pub fn msg(text: impl Into<String>) -> Self {
        Error::Message(text.into())
    }

    /// kustomize's `message` with our `note` after it (see [`Error::Noted`]).
    pub fn noted(message: impl Into<String>, note: impl Into<String>) -> Self {
        Error::Noted { message: message.into(), note: note.into() }
    }

    /// Prefix the error with where it happened, as kustomize nests its messages.
    pub fn context(self, what: impl std::fmt::Display) -> Self {
        self.map_message(|message| format!("{what}: {message}"))
    }

    /// The error with `more` said on a line of its own after kustomize's message (and after what
    /// was noted before).
    pub fn note(self, more: impl std::fmt::Display) -> Self {
        match self {
            Error::Noted { message, note } => Error::Noted { message, note: format!("{note}\n  {more}") },
            other => Error::Noted { message: other.to_string(), note: more.to_string() },
        }
    }

    /// kyaml's error for YAML that does not parse (kustomize's `kusterr.IsMalformedYAMLError`).
    pub fn is_malformed_yaml(&self) -> bool {
        match self {
            Error::Noted { message, .. } => message.contains("MalformedYAMLError"),
            other => other.to_string().contains("MalformedYAMLError"),
        }
    }

    /// The error with kustomize's message rewritten by `wrap` (a prefix, a suffix, quoting), the
    /// note kept after it.
    pub fn map_message(self, wrap: impl FnOnce(&str) -> String) -> Self {
        match self {
            Error::Noted { message, note } => Error::Noted { message: wrap(&message), note },
            other => Error::Message(wrap(&other.to_string())),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// kustomize's loader on a path that does not exist (Go's `filepath.EvalSymlinks`, which names
/// the first part of the path it could not find).
pub fn evalsymlink_failure(path: &std::path::Path) -> String {
    // Go resolves the absolute path (`filepath.Abs`), so `lstat` names it from the root.
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let first_missing = absolute.ancestors().collect::<Vec<_>>().into_iter().rev().find(|p| std::fs::symlink_metadata(p).is_err()).unwrap_or(&absolute);
    format!("evalsymlink failure on '{}' : lstat {}: no such file or directory", path.display(), first_missing.display())
}

/// How much of someone else's text (a file, a server's answer) an error quotes.
pub const EXCERPT_CHARS: usize = 80;

/// At most [`EXCERPT_CHARS`] characters of `text`, escaped (control characters and quotes as
/// `\n`, `\u{1b}`, ...), with how much was left out: an error never echoes a whole file or
/// answer, nor lets it write to the terminal.
pub fn excerpt(text: &str) -> String {
    let mut shown: String = text.chars().take(EXCERPT_CHARS).collect::<String>().escape_debug().collect();
    let left = text.chars().count().saturating_sub(EXCERPT_CHARS);
    if left > 0 {
        shown.push_str(&format!("... ({left} more characters)"));
    }
    shown
}

/// `message` cut after `max` characters (marked `...`), its control characters escaped: for
/// messages that may quote someone else's text.
pub fn bounded(message: &str, max: usize) -> String {
    let mut shown: String = message.chars().take(max).map(|c| if c.is_control() { c.escape_debug().collect() } else { c.to_string() }).collect();
    if message.chars().nth(max).is_some() {
        shown.push_str("...");
    }
    shown
}
