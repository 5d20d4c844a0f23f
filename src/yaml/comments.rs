//! The comments of a YAML text, found by position: saphyr-parser reports none, go-yaml v3 keeps
//! them in its node tree. Only the common places are looked at (see [`super::node_tree`]): the
//! comment lines right above a line, and a `# ...` after a node on its own line.

/// A text with its lines and the byte offset of every character (saphyr counts characters).
pub struct CommentScan<'t> {
    text: &'t str,
    /// Byte offset where each line starts (line 1 first).
    line_starts: Vec<usize>,
    /// Byte offset of each character index, when the text is not all ASCII.
    char_bytes: Option<Vec<usize>>,
}

impl<'t> CommentScan<'t> {
    pub fn new(text: &'t str) -> CommentScan<'t> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let char_bytes = (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).chain([text.len()]).collect());
        CommentScan { text, line_starts, char_bytes }
    }

    /// The byte offset of character index `index` (the text's end past it).
    pub fn byte_of(&self, index: usize) -> usize {
        match &self.char_bytes {
            None => index.min(self.text.len()),
            Some(bytes) => bytes.get(index).copied().unwrap_or(self.text.len()),
        }
    }

    /// Line `n` (1-based) without its line break; `None` past the end.
    fn line(&self, n: usize) -> Option<&'t str> {
        let start = *self.line_starts.get(n.checked_sub(1)?)?;
        let end = self.line_starts.get(n).map_or(self.text.len(), |&e| e - 1);
        let line = self.text.get(start..end)?;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    /// The comment lines right above line `line` and below line `after` (the last line of what
    /// came before), trimmed. `through_blanks`: go on past blank lines (above a document's first
    /// node, where go-yaml keeps a blank line between comment blocks); else stop at one.
    pub fn head_comment(&self, line: usize, after: usize, through_blanks: bool) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        let mut n = line;
        while n > after + 1 {
            n -= 1;
            let Some(text) = self.line(n) else { break };
            let trimmed = text.trim();
            if trimmed.starts_with('#') {
                lines.push(trimmed.to_string());
            } else if trimmed.is_empty() && through_blanks {
                if lines.last().is_some_and(|l| !l.is_empty()) {
                    lines.push(String::new());
                }
            } else {
                break;
            }
        }
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines.reverse();
        lines
    }

    /// The `# ...` comment that follows byte offset `at` on its line, after blanks only.
    pub fn line_comment_after(&self, at: usize) -> Option<String> {
        let rest = self.text.get(at..)?;
        let rest = rest.split('\n').next().unwrap_or("");
        let trimmed = rest.trim_start_matches([' ', '\t']);
        // A comment needs a blank before its `#` (`a#b` is text).
        let blank_before = trimmed.len() < rest.len() || at == 0 || self.text[..at].ends_with([' ', '\t', '\n']);
        if trimmed.starts_with('#') && blank_before {
            return Some(trimmed.trim_end().to_string());
        }
        None
    }

    /// The comment after a key's `:` on its line (`key: # ...` with the value below).
    pub fn comment_after_colon(&self, at: usize) -> Option<String> {
        let rest = self.text.get(at..)?;
        let rest = rest.trim_start_matches([' ', '\t']).strip_prefix(':')?;
        let line = rest.split('\n').next().unwrap_or("");
        let trimmed = line.trim_start_matches([' ', '\t']);
        (trimmed.starts_with('#') && trimmed.len() < line.len()).then(|| trimmed.trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_lines_above_a_line_stop_at_content() {
        let scan = CommentScan::new("a: 1\n  # one\n# two\nb: 2\n");
        assert_eq!(scan.head_comment(4, 1, false), vec!["# one", "# two"]);
        assert_eq!(scan.head_comment(4, 2, false), vec!["# two"]);
        assert!(scan.head_comment(1, 0, false).is_empty());
    }

    #[test]
    fn blank_lines_end_a_head_comment_except_above_the_first_node() {
        let scan = CommentScan::new("# doc\n\n\n# key\nkey: 1\n");
        assert_eq!(scan.head_comment(5, 0, false), vec!["# key"]);
        assert_eq!(scan.head_comment(5, 0, true), vec!["# doc", "", "# key"]);
    }

    #[test]
    fn a_line_comment_needs_a_blank_before_it() {
        let scan = CommentScan::new("a: b # c  \nd: e#f\n");
        assert_eq!(scan.line_comment_after(4).as_deref(), Some("# c"));
        assert_eq!(scan.line_comment_after(15), None);
        assert_eq!(scan.comment_after_colon(1), None);
        let scan = CommentScan::new("a: # c\n  b: 1\n");
        assert_eq!(scan.comment_after_colon(1).as_deref(), Some("# c"));
    }

    #[test]
    fn character_indexes_become_byte_offsets() {
        let scan = CommentScan::new("é: x");
        assert_eq!(scan.byte_of(1), 2);
        assert_eq!(scan.byte_of(9), 5);
    }
}
