//! The documented env files of the peer pods tree (`settings.env`, `credentials.env.example`).
//!
//! Lines are read as kustomize reads an env file: leading blanks dropped, `#` starts a comment
//! line, `KEY=value` with everything after the first `=` kept as the value (quotes, trailing
//! blanks and ` # text` included). On top of that the tree's own convention:
//!
//! - a commented `# KEY=value` line offers an optional key (not rendered);
//! - lines up to the previous blank line form a key's block; a comment line of the block that
//!   starts with `# required` marks every key of the block as required by the adaptor.
use std::path::{Path, PathBuf};

/// One key offered by an env file, active or commented out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvEntry {
    pub key: String,
    /// Everything after the first `=`; None for a line without `=` (kustomize then takes the
    /// value from the environment of whoever builds).
    pub value: Option<String>,
    /// 1-based.
    pub line: usize,
    /// `# KEY=value`: offered, not rendered.
    pub commented: bool,
    /// A `# required` line in the key's block.
    pub marked_required: bool,
}

/// The keys of one env file.
#[derive(Clone, Debug)]
pub struct EnvFile {
    pub path: PathBuf,
    pub entries: Vec<EnvEntry>,
}

/// A commented-out `KEY=value` line.
fn commented_key(comment: &str) -> Option<(&str, &str)> {
    let (key, value) = comment.trim_start().split_once('=')?;
    is_env_name(key).then_some((key, value))
}

/// Upper-case environment variable names, as the adaptor's settings are written.
fn is_env_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl EnvFile {
    pub fn read(path: &Path) -> std::io::Result<EnvFile> {
        Ok(EnvFile::parse(path, &crate::bounded_read::read_text(path)?))
    }

    pub fn parse(path: &Path, text: &str) -> EnvFile {
        let mut entries: Vec<EnvEntry> = Vec::new();
        let mut block_start = 0;
        let mut block_required = false;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
            if line.is_empty() {
                block_start = entries.len();
                block_required = false;
                continue;
            }
            let (key, value, commented) = if let Some(comment) = line.strip_prefix('#') {
                match commented_key(comment) {
                    Some((key, value)) => (key, Some(value), true),
                    None => {
                        if comment.trim_start().starts_with("required") {
                            block_required = true;
                            for entry in &mut entries[block_start..] {
                                entry.marked_required = true;
                            }
                        }
                        continue;
                    }
                }
            } else {
                match line.split_once('=') {
                    Some((key, value)) => (key, Some(value), false),
                    None => (line, None, false),
                }
            };
            entries.push(EnvEntry {
                key: key.to_owned(),
                value: value.map(str::to_owned),
                line: index + 1,
                commented,
                marked_required: block_required,
            });
        }
        EnvFile { path: path.to_owned(), entries }
    }

    /// The rendered (not commented-out) entries.
    pub fn active(&self) -> impl Iterator<Item = &EnvEntry> {
        self.entries.iter().filter(|e| !e.commented)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_active_commented_and_required_keys_with_their_lines() {
        let text = "# header\n\n# The AMI.\n# required\nPODVM_AMI_ID=ami-1 # mine\n\n# optional one\n# default: 30\n# ROOT_VOLUME_SIZE=30\n  TAGS=\"a=b\"\n";
        let file = EnvFile::parse(Path::new("s.env"), text);
        let found: Vec<(&str, Option<&str>, usize, bool, bool)> = file
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_deref(), e.line, e.commented, e.marked_required))
            .collect();
        assert_eq!(
            found,
            vec![
                ("PODVM_AMI_ID", Some("ami-1 # mine"), 5, false, true),
                ("ROOT_VOLUME_SIZE", Some("30"), 9, true, false),
                ("TAGS", Some("\"a=b\""), 10, false, false),
            ]
        );
    }

    #[test]
    fn a_required_line_below_the_keys_marks_the_whole_block() {
        let file = EnvFile::parse(Path::new("s.env"), "A=\nB=\n# required\n\nC=\n");
        let marks: Vec<bool> = file.entries.iter().map(|e| e.marked_required).collect();
        assert_eq!(marks, [true, true, false]);
    }

    #[test]
    fn a_line_without_equals_has_no_value() {
        let file = EnvFile::parse(Path::new("s.env"), "HOME\n");
        assert_eq!(file.entries[0].value, None);
    }
}
