//! Where each node of a YAML text sits: line and column of every scalar, mapping and sequence,
//! and of every mapping key, from saphyr-parser's events (the parser the build uses).
//!
//! Only `explain` asks for positions (a plain build never builds these trees). The tree mirrors
//! the document: mapping entries in the order written, sequence items in order; an alias is a
//! node of its own at the alias (`*name`), not a copy of the anchored node.
use saphyr_parser::{Event, Marker, Parser, Span};

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    fn of(mark: Marker) -> Pos {
        Pos { line: mark.line().max(1) as u32, column: mark.col() as u32 + 1 }
    }
}

/// One node of a YAML document, with where it starts (and, for a scalar, the line it ends on;
/// a block scalar starts at its content, the line after its header).
#[derive(Clone, Debug)]
pub enum PosNode {
    Scalar { at: Pos, end_line: u32, text: String },
    Map { at: Pos, entries: Vec<(String, Pos, PosNode)> },
    Seq { at: Pos, items: Vec<PosNode> },
}

impl PosNode {
    /// Where the node starts.
    pub fn at(&self) -> Pos {
        match self {
            PosNode::Scalar { at, .. } | PosNode::Map { at, .. } | PosNode::Seq { at, .. } => *at,
        }
    }

    /// The value of entry `key`, and where the key is written (the last of repeated keys).
    pub fn entry(&self, key: &str) -> Option<(Pos, &PosNode)> {
        match self {
            PosNode::Map { entries, .. } => entries.iter().rev().find(|(k, _, _)| k == key).map(|(_, at, node)| (*at, node)),
            _ => None,
        }
    }

    /// The value of entry `key`.
    pub fn get(&self, key: &str) -> Option<&PosNode> {
        self.entry(key).map(|(_, node)| node)
    }

    /// Item `index` of a sequence.
    pub fn item(&self, index: usize) -> Option<&PosNode> {
        match self {
            PosNode::Seq { items, .. } => items.get(index),
            _ => None,
        }
    }

    /// The text of a scalar.
    pub fn text(&self) -> Option<&str> {
        match self {
            PosNode::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Whether a line ends with a block scalar's header (`key: |`, `- >-`, `key: |2+`).
pub fn is_block_header(line: &str) -> bool {
    let last = line.trim_end().rsplit(' ').next().unwrap_or("");
    last.starts_with(['|', '>']) && last[1..].chars().all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

enum Frame {
    Map { at: Pos, entries: Vec<(String, Pos, PosNode)>, key: Option<(String, Pos)> },
    Seq { at: Pos, items: Vec<PosNode> },
}

/// The position trees of every document of `text` (an empty document is `None`); `None` for
/// text the parser refuses (the build reports that error itself).
pub fn document_positions(text: &str) -> Option<Vec<Option<PosNode>>> {
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<PosNode> = None;
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span): (Event, Span) = next.ok()?;
        let node = match event {
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                root = None;
                stack.clear();
                continue;
            }
            Event::DocumentEnd => {
                docs.push(root.take());
                continue;
            }
            Event::Scalar(text, ..) => {
                if let Some(Frame::Map { key: key @ None, .. }) = stack.last_mut() {
                    *key = Some((text.into_owned(), Pos::of(span.start)));
                    continue;
                }
                PosNode::Scalar { at: Pos::of(span.start), end_line: span.end.line() as u32, text: text.into_owned() }
            }
            Event::Alias(_) => PosNode::Scalar { at: Pos::of(span.start), end_line: span.end.line() as u32, text: String::new() },
            Event::MappingStart(..) => {
                stack.push(Frame::Map { at: Pos::of(span.start), entries: Vec::new(), key: None });
                continue;
            }
            Event::SequenceStart(..) => {
                stack.push(Frame::Seq { at: Pos::of(span.start), items: Vec::new() });
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => match stack.pop()? {
                Frame::Map { at, entries, .. } => PosNode::Map { at, entries },
                Frame::Seq { at, items } => PosNode::Seq { at, items },
            },
            Event::StreamStart | Event::Nothing => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                Some((k, at)) => entries.push((k, at, node)),
                // A collection as a key: kept out of the tree, its value is skipped the same way.
                None => *key = Some((String::new(), node.at())),
            },
        }
    }
    Some(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keys_and_items_have_their_line_and_column() {
        let text = "a: 1\nb:\n  c: \"x\"\n  d:\n  - e\n  - f: |\n      two\n      lines\n---\n";
        let docs = document_positions(text).unwrap();
        let doc = docs[0].as_ref().unwrap();
        assert_eq!(doc.get("a").unwrap().at(), Pos { line: 1, column: 4 });
        let b = doc.get("b").unwrap();
        assert_eq!(b.entry("c").map(|(k, v)| (k, v.at())), Some((Pos { line: 3, column: 3 }, Pos { line: 3, column: 6 })));
        let d = b.get("d").unwrap();
        assert_eq!(d.item(0).unwrap().at(), Pos { line: 5, column: 5 });
        let f = d.item(1).unwrap().get("f").unwrap();
        // A block scalar starts where its content does, the line after its `|` header.
        assert_eq!(f.at(), Pos { line: 7, column: 7 });
        assert_eq!(d.item(1).unwrap().entry("f").map(|(key, _)| key.line), Some(6));
        assert!(matches!(f, PosNode::Scalar { end_line, .. } if *end_line > 7));
        // The `---` at the end starts a second, empty document.
        assert_eq!(docs.len(), 2);
        assert!(!matches!(docs[1], Some(PosNode::Map { .. })));
    }
}
