//! A YAML document edited in place: each change replaces or inserts only the text it concerns,
//! so comments, key order, quoting and blank lines everywhere else stay byte for byte.
//!
//! The text is parsed with saphyr-parser into a tree of nodes that know where they are in the
//! text; a change is computed on that tree, applied to the text, and the text parsed again for
//! the next change (kustomization files are small; one fresh parse per change keeps every
//! position right). New values are written in go-yaml v2's style, the style `kustomize edit`
//! writes, by the project's emitter; inside flow collections (`[a, b]`, `{k: v}`) in flow style,
//! a scalar whose go-yaml text would not be safe there as JSON (valid flow YAML whatever the
//! value).
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Value};

use crate::yaml::emit::{emit_document, key_less};
use crate::yaml::scalar::scalar_value;

/// Where a change cannot be made, with the 1-based line and column of the node concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

type Result<T> = std::result::Result<T, DocumentError>;

/// One node of the tree, with its place in the text (byte offsets).
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    /// The first character of the node (for a block sequence: of its first item).
    pub start: usize,
    /// Just after the node's last character (for block collections: of their last descendant).
    pub end: usize,
    /// 0-based column and line of `start`.
    pub column: usize,
    pub line: usize,
    /// Written in flow style (`[...]`, `{...}`).
    pub flow: bool,
}

#[derive(Debug, Clone)]
pub enum Kind {
    /// A scalar and its value as go-yaml types it; `block` for `|` and `>` scalars.
    Scalar { value: Value, block: bool },
    Map(Vec<Entry>),
    Seq(Vec<Node>),
    Alias,
}

#[derive(Debug, Clone)]
pub struct Entry {
    /// The key's text.
    pub key: String,
    pub key_node: Node,
    pub value: Node,
}

impl Node {
    pub fn entries(&self) -> Option<&[Entry]> {
        match &self.kind {
            Kind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The entry for `key` (the last one when a key repeats: that one is the value decoded).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().rev().find(|e| e.key == key)
    }

    /// The entry for a kustomization field, matched without regard to case as kustomize's
    /// decoder matches field names.
    pub fn field(&self, name: &str) -> Option<&Entry> {
        self.entries()?.iter().rev().find(|e| e.key.eq_ignore_ascii_case(name))
    }

    pub fn scalar(&self) -> Option<&Value> {
        match &self.kind {
            Kind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// A null (or empty) value, as `images:` with nothing after it.
    pub fn is_null(&self) -> bool {
        matches!(self.scalar(), Some(Value::Null))
    }

    fn error(&self, message: impl Into<String>) -> DocumentError {
        DocumentError { line: self.line + 1, column: self.column + 1, message: message.into() }
    }
}

/// One step of the way from the document's root to a node.
#[derive(Debug, Clone)]
pub enum Step {
    /// A kustomization field of the root mapping (case-insensitive).
    Field(&'static str),
    /// A key of a mapping.
    Key(String),
    /// An item of a sequence.
    Index(usize),
}

/// Where a new mapping entry or sequence item goes.
#[derive(Debug, Clone, Copy)]
pub enum Placement {
    /// After the last one.
    End,
    /// Before the first existing one that sorts after it, so a sorted collection stays sorted
    /// (mapping keys in go-yaml's order; sequence items by the text of their `name`).
    Sorted,
}

/// The text of a YAML document, and the changes made to it so far.
pub struct Document {
    text: String,
}

impl Document {
    /// Checks that `text` parses; a file with several documents is refused.
    pub fn new(text: String) -> Result<Document> {
        parse_tree(&text)?;
        Ok(Document { text })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// The document's root node (None for an empty document, or one of only comments).
    pub fn root(&self) -> Result<Option<Node>> {
        parse_tree(&self.text)
    }

    /// The node at `path`, if there is one.
    pub fn node(&self, path: &[Step]) -> Result<Option<Node>> {
        let Some(root) = self.root()? else { return Ok(None) };
        let mut node = &root;
        for step in path {
            let next = match step {
                Step::Field(name) => node.field(name).map(|e| &e.value),
                Step::Key(key) => node.get(key).map(|e| &e.value),
                Step::Index(i) => node.items().and_then(|items| items.get(*i)),
            };
            match next {
                Some(next) => node = next,
                None => return Ok(None),
            }
        }
        Ok(Some(node.clone()))
    }

    fn node_at(&self, path: &[Step]) -> Result<Node> {
        self.node(path)?.ok_or_else(|| DocumentError { line: 1, column: 1, message: format!("no node at {path:?}") })
    }

    /// Gives the scalar at `path` the value `value` (a string or a number), unless it already
    /// has it. True when the text changed.
    pub fn set_scalar(&mut self, path: &[Step], value: &Value) -> Result<bool> {
        let node = self.node_at(path)?;
        match &node.kind {
            Kind::Scalar { value: old, .. } if old == value => Ok(false),
            Kind::Scalar { .. } if node.start == node.end => {
                // An empty value: saphyr places it at the `:` before it.
                let at = if self.text[node.start..].starts_with(':') { node.start + 1 } else { node.start };
                let text = if node.flow { flow_text(value) } else { inline_value(value, self.parent_column(path)?) };
                self.splice(at, at, &format!(" {text}"));
                Ok(true)
            }
            Kind::Scalar { block, .. } => {
                let start = if *block { self.block_indicator(&node) } else { node.start };
                let mut text = if node.flow { flow_text(value) } else { inline_value(value, self.parent_column(path)?) };
                if self.text[..node.end].ends_with('\n') {
                    text.push('\n');
                }
                self.splice(start, node.end, &text);
                Ok(true)
            }
            _ => Err(node.error("expected a scalar value here")),
        }
    }

    /// Replaces the null value of the field at `path` (as in `images:` with nothing after it)
    /// with `value`, written as a block under the key.
    pub fn fill_null(&mut self, path: &[Step], value: &Value) -> Result<()> {
        let node = self.node_at(path)?;
        if !node.is_null() || node.flow {
            return Err(node.error("expected an empty value here"));
        }
        let line_end = line_end_after(&self.text, node.end);
        let rest_of_line = self.text[node.end..line_end].to_string();
        let mut text = rest_of_line;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let rendered = render_entry("x", value);
        let block = rendered.split_once('\n').map_or("", |(_, rest)| rest);
        text.push_str(&indent(block, self.parent_column(path)?));
        // The blanks before a `~` or `null` go with it.
        let from = self.text[..node.start].trim_end_matches([' ', '\t']).len();
        self.splice(from, line_end, &text);
        Ok(())
    }

    /// Adds the entry `key: value` to the mapping at `path`.
    pub fn insert_entry(&mut self, path: &[Step], key: &str, value: &Value, placement: Placement) -> Result<()> {
        let map = self.node_at(path)?;
        let Some(entries) = map.entries() else { return Err(map.error("expected a mapping here")) };
        let before = match placement {
            Placement::End => None,
            Placement::Sorted => entries.iter().position(|e| key_less(key, &e.key)),
        };
        if map.flow {
            let text = format!("{}: {}", flow_text(&Value::String(key.to_string())), flow_text(value));
            self.insert_flow(&map, entries.iter().map(|e| (e.key_node.start, e.value.end)).collect(), before, &text);
            return Ok(());
        }
        let rendered = render_entry(key, value);
        match before {
            Some(i) => self.insert_before_block(&entries[i].key_node, map.column, &rendered),
            None => {
                let last = entries.last().ok_or_else(|| map.error("expected a mapping with entries here"))?;
                self.insert_after_line(last.value.end.max(last.key_node.end), map.column, &rendered);
            }
        }
        Ok(())
    }

    /// Removes the entry `key` from the mapping at `path` (every entry of that key).
    pub fn remove_entry(&mut self, path: &[Step], key: &str) -> Result<()> {
        loop {
            // The root's last entry gone leaves no document.
            let map = match (path.is_empty(), self.root()?) {
                (true, None) => return Ok(()),
                (true, Some(root)) => root,
                (false, _) => self.node_at(path)?,
            };
            let Some(entries) = map.entries() else { return Err(map.error("expected a mapping here")) };
            let Some(i) = entries.iter().position(|e| e.key == key) else { return Ok(()) };
            let entry = &entries[i];
            if map.flow {
                let (from, to) = match (entries.get(i + 1), i.checked_sub(1).map(|p| &entries[p])) {
                    (Some(next), _) => (entry.key_node.start, next.key_node.start),
                    (None, Some(previous)) => (previous.value.end, entry.value.end),
                    (None, None) => (entry.key_node.start, entry.value.end),
                };
                self.splice(from, to, "");
            } else if self.starts_line(entry.key_node.start) {
                let from = line_start(&self.text, entry.key_node.start);
                let to = line_end_after(&self.text, entry.value.end.max(entry.key_node.end));
                self.splice(from, to, "");
            } else if let Some(next) = entries.get(i + 1) {
                // The first key of a `- ` item: the next key moves up onto the dash's line.
                self.splice(entry.key_node.start, next.key_node.start, "");
            } else {
                return Err(entry.key_node.error("cannot remove the only entry of this mapping"));
            }
        }
    }

    /// Removes item `index` of the sequence at `path` (its lines, with the comment lines
    /// directly above it at its dash's column, which describe it). The last item cannot be
    /// removed this way: remove the field.
    pub fn remove_item(&mut self, path: &[Step], index: usize) -> Result<()> {
        let seq = self.node_at(path)?;
        let Some(items) = seq.items() else { return Err(seq.error("expected a sequence here")) };
        let item = items.get(index).ok_or_else(|| seq.error(format!("no item {index} here")))?;
        if items.len() == 1 {
            return Err(item.error("cannot remove the only item of this sequence"));
        }
        if seq.flow {
            let (from, to) = match (items.get(index + 1), index.checked_sub(1).map(|p| &items[p])) {
                (Some(next), _) => (item.start, next.start),
                (None, Some(previous)) => (previous.end, item.end),
                (None, None) => (item.start, item.end),
            };
            self.splice(from, to, "");
            return Ok(());
        }
        let dash = self.dash_before(item).ok_or_else(|| item.error("cannot find this item's `-`"))?;
        if !self.starts_line(dash) {
            return Err(item.error("cannot remove an item that shares its line"));
        }
        let column = self.column_of(dash);
        let mut from = line_start(&self.text, dash);
        while from > 0 {
            let previous = line_start(&self.text, from - 1);
            let line = &self.text[previous..from];
            let trimmed = line.trim_start_matches(' ');
            if !(trimmed.starts_with('#') && line.len() - trimmed.len() == column) {
                break;
            }
            from = previous;
        }
        let to = line_end_after(&self.text, item.end.max(dash + 1));
        self.splice(from, to, "");
        Ok(())
    }

    /// Adds `value` to the sequence at `path`; with `Placement::Sorted`, by the text of the
    /// items' `name` field.
    pub fn insert_item(&mut self, path: &[Step], value: &Value, placement: Placement) -> Result<()> {
        let seq = self.node_at(path)?;
        let Some(items) = seq.items() else { return Err(seq.error("expected a sequence here")) };
        let before = match placement {
            Placement::End => None,
            Placement::Sorted => {
                let name = value.get("name").and_then(Value::as_str).unwrap_or("");
                items.iter().position(|item| item_name(item).is_some_and(|other| name < other.as_str()))
            }
        };
        if seq.flow {
            let spans = items.iter().map(|item| (item.start, item.end)).collect();
            self.insert_flow(&seq, spans, before, &flow_text(value));
            return Ok(());
        }
        let first = items.first().ok_or_else(|| seq.error("expected a sequence with items here"))?;
        let dash = self.dash_before(first).ok_or_else(|| first.error("cannot find this item's `-`"))?;
        let dash_column = self.column_of(dash);
        let rendered = emit(&Value::Array(vec![value.clone()]));
        match before {
            Some(i) => {
                let item = &items[i];
                let dash = self.dash_before(item).ok_or_else(|| item.error("cannot find this item's `-`"))?;
                self.insert_before_line(dash, dash_column, &rendered);
            }
            None => {
                let last = items.last().expect("items is not empty");
                self.insert_after_line(last.end, dash_column, &rendered);
            }
        }
        Ok(())
    }

    /// Adds the field `name: value` at the end of the document's root mapping (or starts one).
    pub fn append_field(&mut self, name: &str, value: &Value) -> Result<()> {
        let rendered = render_entry(name, value);
        match self.root()? {
            None => self.append(&rendered),
            Some(root) if root.flow => {
                let Some(entries) = root.entries() else { return Err(root.error("expected a mapping")) };
                let text = format!("{}: {}", flow_text(&Value::String(name.to_string())), flow_text(value));
                let spans = entries.iter().map(|e| (e.key_node.start, e.value.end)).collect();
                self.insert_flow(&root, spans, None, &text);
            }
            Some(root) if root.entries().is_some() => {
                // After everything, trailing comments included (those often belong to the
                // last field: commented-out items), but before a document end marker.
                let tail = line_end_after(&self.text, root.end);
                let marker = self.text[tail..]
                    .split_inclusive('\n')
                    .scan(tail, |at, line| {
                        let start = *at;
                        *at += line.len();
                        Some((start, line))
                    })
                    .find(|(_, line)| line.starts_with("...") || line.starts_with("---"));
                match marker {
                    Some((at, _)) => self.splice(at, at, &indent(&rendered, root.column)),
                    None => self.append(&indent(&rendered, root.column)),
                }
            }
            Some(root) => return Err(root.error("expected a mapping at the top of the kustomization file")),
        }
        Ok(())
    }

    /// Adds `text` at the end, on a line of its own.
    fn append(&mut self, text: &str) {
        let end = self.text.len();
        let separator = if self.text.is_empty() || self.text.ends_with('\n') { "" } else { "\n" };
        self.splice(end, end, &format!("{separator}{text}"));
    }

    // ---- text positions -------------------------------------------------------------

    /// Replaces `from..to` with `with`, whose line breaks follow the file's (`\r\n` or `\n`).
    fn splice(&mut self, from: usize, to: usize, with: &str) {
        if self.text.contains("\r\n") {
            self.text.replace_range(from..to, &with.replace('\n', "\r\n"));
        } else {
            self.text.replace_range(from..to, with);
        }
    }

    /// Whether only blanks precede `offset` on its line.
    fn starts_line(&self, offset: usize) -> bool {
        self.text[line_start(&self.text, offset)..offset].bytes().all(|b| b == b' ' || b == b'\t')
    }

    fn column_of(&self, offset: usize) -> usize {
        self.text[line_start(&self.text, offset)..offset].chars().count()
    }

    /// The column a value at `path` is indented from: its key's, or its item's dash's.
    fn parent_column(&self, path: &[Step]) -> Result<usize> {
        let (last, parent_path) = path.split_last().expect("a path to a value has a step");
        let parent = self.node_at(parent_path)?;
        match (last, parent.items()) {
            (Step::Index(i), Some(items)) => {
                let item = &items[*i];
                let dash = self.dash_before(item).ok_or_else(|| item.error("cannot find this item's `-`"))?;
                Ok(self.column_of(dash))
            }
            _ => Ok(parent.column),
        }
    }

    /// The `-` that introduces a block sequence item.
    fn dash_before(&self, item: &Node) -> Option<usize> {
        let before = self.text[..item.start].trim_end_matches([' ', '\t', '\n', '\r']);
        before.ends_with('-').then(|| before.len() - 1)
    }

    /// The `|` or `>` header of a block scalar (its span starts at its content): the last one
    /// on the line before the content, comment left out.
    fn block_indicator(&self, node: &Node) -> usize {
        let before = self.text[..node.start].trim_end_matches([' ', '\t', '\r', '\n']);
        let header_start = line_start(&self.text, before.len());
        let header = &before[header_start..];
        let code = header.find(" #").map_or(header, |comment| &header[..comment]);
        code.rfind(['|', '>']).map_or(node.start, |i| header_start + i)
    }

    /// Inserts `rendered` (lines starting at column 0) as the lines before the entry or item
    /// starting at `at`: above the comment lines directly over it, which describe it. When
    /// `at` is not first on its line (the first key of a `- ` item), the new lines go in
    /// between the dash and the key.
    fn insert_before_block(&mut self, key: &Node, column: usize, rendered: &str) {
        if self.starts_line(key.start) {
            self.insert_before_line(key.start, column, rendered);
        } else {
            let (first, rest) = rendered.split_once('\n').unwrap_or((rendered, ""));
            let text = format!("{first}\n{}{}", indent(rest, column), " ".repeat(column));
            self.splice(key.start, key.start, &text);
        }
    }

    fn insert_before_line(&mut self, at: usize, column: usize, rendered: &str) {
        let mut from = line_start(&self.text, at);
        while from > 0 {
            let previous = line_start(&self.text, from - 1);
            let line = &self.text[previous..from];
            let trimmed = line.trim_start_matches(' ');
            let is_own_comment = trimmed.starts_with('#') && line.len() - trimmed.len() == column;
            if !is_own_comment {
                break;
            }
            from = previous;
        }
        self.splice(from, from, &indent(rendered, column));
    }

    /// Inserts `rendered` as lines after the line where the content ending at `end` ends.
    fn insert_after_line(&mut self, end: usize, column: usize, rendered: &str) {
        let at = line_end_after(&self.text, end);
        let mut text = indent(rendered, column);
        if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            text.insert(0, '\n');
        }
        self.splice(at, at, &text);
    }

    /// Inserts `text` into a flow collection whose members span `members`: before member
    /// `before`, or after the last one.
    fn insert_flow(&mut self, collection: &Node, members: Vec<(usize, usize)>, before: Option<usize>, text: &str) {
        match (before, members.last()) {
            (Some(i), _) => {
                let at = members[i].0;
                self.splice(at, at, &format!("{text}, "));
            }
            (None, Some(&(_, end))) => self.splice(end, end, &format!(", {text}")),
            (None, None) => {
                // Just inside the closing bracket.
                let at = collection.end - 1;
                self.splice(at, at, text);
            }
        }
    }
}

/// The text of the `name` field of a sequence item, for ordering.
pub fn item_name(item: &Node) -> Option<String> {
    item.get("name")?.value.scalar().and_then(crate::kustomization::types::scalar_text)
}

/// go-yaml v2's text for `{key: value}`, as `kustomize edit` writes a field.
pub fn render_entry(key: &str, value: &Value) -> String {
    let mut map = Map::new();
    map.insert(key.to_string(), value.clone());
    emit(&Value::Object(map))
}

fn emit(value: &Value) -> String {
    let mut out = String::new();
    emit_document(value, &mut out);
    out
}

/// A scalar's text after `key: `, its continuation lines (a literal block) indented from
/// `column`, without the final newline.
fn inline_value(value: &Value, column: usize) -> String {
    let rendered = render_entry("x", value);
    let after = rendered.strip_prefix("x: ").unwrap_or(&rendered);
    let after = after.strip_suffix('\n').unwrap_or(after);
    match after.split_once('\n') {
        None => after.to_string(),
        Some((first, rest)) => format!("{first}\n{}", indent(rest, column).trim_end_matches('\n')),
    }
}

/// A value in flow style: scalars as go-yaml writes them where that text is safe inside
/// `[...]` and `{...}`, as JSON (which flow YAML reads as the same value) where it is not.
fn flow_text(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.iter().map(flow_text).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| if key_less(a, b) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater });
            let entries: Vec<String> =
                keys.iter().map(|k| format!("{}: {}", flow_text(&Value::String(k.to_string())), flow_text(&map[*k]))).collect();
            format!("{{{}}}", entries.join(", "))
        }
        scalar => {
            let text = inline_value(scalar, 0);
            let quoted = text.starts_with(['"', '\'']);
            let plain_safe = !text.contains(['\n', ',', '[', ']', '{', '}']);
            if quoted && !text.contains('\n') || !quoted && plain_safe {
                text
            } else {
                serde_json::to_string(scalar).unwrap_or_default()
            }
        }
    }
}

/// Prefixes every non-empty line of `text` with `column` spaces.
fn indent(text: &str, column: usize) -> String {
    let pad = " ".repeat(column);
    text.split_inclusive('\n')
        .map(|line| if line == "\n" { line.to_string() } else { format!("{pad}{line}") })
        .collect()
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// The start of the line after the one where content ending at `end` ends (the text's end
/// when that is the last line). Content ending with its newline (a block scalar) ends there.
fn line_end_after(text: &str, end: usize) -> usize {
    if end > 0 && text.as_bytes()[end - 1] == b'\n' {
        return end;
    }
    text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
}

// ---- the tree ------------------------------------------------------------------------

/// A collection being read.
struct Open {
    node: Node,
    /// A mapping key waiting for its value.
    key: Option<(String, Node)>,
}

/// Parses `text` into its root node; a second document with content is an error.
fn parse_tree(text: &str) -> Result<Option<Node>> {
    let offsets = CharOffsets::new(text);
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Node> = None;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| DocumentError {
            line: e.marker().line().max(1),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        let at = |span: &Span| (offsets.byte(span.start.index()), offsets.byte(span.end.index()));
        let finished = match event {
            Event::Scalar(value, style, _, tag) => {
                let (start, mut end) = at(&span);
                if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) {
                    // saphyr's span of a quoted scalar can run on over blanks and a comment.
                    end = quoted_end(text, start).unwrap_or(end);
                }
                let typed = scalar_value(&value, style, tag.as_deref()).map_err(|message| DocumentError {
                    line: span.start.line(),
                    column: span.start.col() + 1,
                    message,
                })?;
                let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
                let node = Node {
                    kind: Kind::Scalar { value: typed, block },
                    start,
                    end,
                    column: span.start.col(),
                    line: span.start.line().saturating_sub(1),
                    flow: stack.last().is_some_and(|o| o.node.flow),
                };
                Some((node, Some(value.into_owned())))
            }
            Event::Alias(_) => {
                let (start, end) = at(&span);
                let node = Node { kind: Kind::Alias, start, end, column: span.start.col(), line: span.start.line().saturating_sub(1), flow: false };
                Some((node, None))
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let (start, _) = at(&span);
                let flow = matches!(text.as_bytes().get(start), Some(b'{' | b'['));
                let kind = if matches!(event, Event::MappingStart(..)) { Kind::Map(Vec::new()) } else { Kind::Seq(Vec::new()) };
                let node = Node { kind, start, end: start, column: span.start.col(), line: span.start.line().saturating_sub(1), flow };
                stack.push(Open { node, key: None });
                None
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let mut open = stack.pop().expect("saphyr balances collection events");
                if open.node.flow {
                    open.node.end = at(&span).1;
                }
                Some((open.node, None))
            }
            Event::DocumentStart(_) | Event::DocumentEnd | Event::StreamStart | Event::StreamEnd | Event::Nothing => None,
        };
        let Some((node, text_of_scalar)) = finished else { continue };
        match stack.last_mut() {
            None => {
                let empty = node.is_null() && node.start == node.end;
                match &root {
                    Some(_) if !empty => {
                        return Err(node.error("expected a single document in the stream, found more than one"));
                    }
                    None if !empty => root = Some(node),
                    _ => {}
                }
            }
            Some(open) => {
                if !open.node.flow {
                    open.node.end = open.node.end.max(node.end);
                }
                match &mut open.node.kind {
                    Kind::Seq(items) => items.push(node),
                    Kind::Map(entries) => match open.key.take() {
                        None => {
                            let Some(key) = text_of_scalar else {
                                return Err(node.error("mapping keys must be scalars"));
                            };
                            open.key = Some((key, node));
                        }
                        Some((key, key_node)) => entries.push(Entry { key, key_node, value: node }),
                    },
                    _ => unreachable!("only collections are open"),
                }
            }
        }
    }
    Ok(root)
}

/// Just after the closing quote of the quoted scalar starting at `start`.
fn quoted_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = *bytes.get(start)?;
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// saphyr counts characters; the text is indexed by bytes.
struct CharOffsets {
    /// The byte offset of each character, when the text is not ASCII.
    bytes: Option<Vec<usize>>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str) -> Self {
        let bytes = (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect());
        CharOffsets { bytes, len: text.len() }
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.bytes {
            None => char_index.min(self.len),
            Some(bytes) => bytes.get(char_index).copied().unwrap_or(self.len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> Document {
        Document::new(text.to_string()).unwrap()
    }

    fn field(name: &'static str) -> Vec<Step> {
        vec![Step::Field(name)]
    }

    #[test]
    fn a_quoted_scalar_keeps_its_comment() {
        let mut d = doc("images:\n- name: a\n  newTag: \"1.0\"   # bumped\n");
        let tag = vec![Step::Field("images"), Step::Index(0), Step::Key("newTag".into())];
        d.set_scalar(&tag, &json!("1.1")).unwrap();
        assert_eq!(d.text(), "images:\n- name: a\n  newTag: \"1.1\"   # bumped\n");
    }

    #[test]
    fn a_scalar_is_replaced_and_nothing_else_moves() {
        let mut d = doc("# top\nnamePrefix: old-   # why\nresources:\n- a\n");
        assert!(d.set_scalar(&field("namePrefix"), &json!("new-")).unwrap());
        assert_eq!(d.text(), "# top\nnamePrefix: new-   # why\nresources:\n- a\n");
        assert!(!d.set_scalar(&field("namePrefix"), &json!("new-")).unwrap(), "same value: no change");
    }

    #[test]
    fn new_values_are_quoted_as_go_yaml_quotes_them() {
        let mut d = doc("images:\n- name: a\n  newTag: v1\n");
        let tag = vec![Step::Field("images"), Step::Index(0), Step::Key("newTag".into())];
        d.set_scalar(&tag, &json!("1.10")).unwrap();
        assert_eq!(d.text(), "images:\n- name: a\n  newTag: \"1.10\"\n");
        assert!(!d.set_scalar(&tag, &json!("1.10")).unwrap());
    }

    #[test]
    fn an_empty_value_gets_one() {
        let mut d = doc("namePrefix:\nnamespace: # later\n");
        d.set_scalar(&field("namePrefix"), &json!("p-")).unwrap();
        d.set_scalar(&field("namespace"), &json!("prod")).unwrap();
        assert_eq!(d.text(), "namePrefix: p-\nnamespace: prod # later\n");
    }

    #[test]
    fn a_block_scalar_is_replaced_whole() {
        let mut d = doc("namePrefix: |\n  x\nnamespace: >-  # a > b\n  folded\n  text\nresources: []\n");
        d.set_scalar(&field("namePrefix"), &json!("p-")).unwrap();
        d.set_scalar(&field("namespace"), &json!("ns")).unwrap();
        assert_eq!(d.text(), "namePrefix: p-\nnamespace: ns\nresources: []\n");
    }

    #[test]
    fn entries_go_in_key_order_above_the_comments_of_the_next_entry() {
        let mut d = doc("commonLabels:\n  a: \"1\"\n  # about c\n  c: \"3\"\nresources: []\n");
        d.insert_entry(&field("commonLabels"), "b", &json!("2"), Placement::Sorted).unwrap();
        d.insert_entry(&field("commonLabels"), "d", &json!("4"), Placement::Sorted).unwrap();
        assert_eq!(d.text(), "commonLabels:\n  a: \"1\"\n  b: \"2\"\n  # about c\n  c: \"3\"\n  d: \"4\"\nresources: []\n");
    }

    #[test]
    fn a_key_before_the_first_key_of_a_dash_item_takes_the_dash() {
        let mut d = doc("images:\n  - name: a\n    newTag: v1\n");
        let item = vec![Step::Field("images"), Step::Index(0)];
        d.insert_entry(&item, "digest", &json!("sha256:x"), Placement::Sorted).unwrap();
        assert_eq!(d.text(), "images:\n  - digest: sha256:x\n    name: a\n    newTag: v1\n");
        d.remove_entry(&item, "digest").unwrap();
        assert_eq!(d.text(), "images:\n  - name: a\n    newTag: v1\n");
        d.remove_entry(&item, "newTag").unwrap();
        assert_eq!(d.text(), "images:\n  - name: a\n");
    }

    #[test]
    fn items_keep_the_sequence_indentation() {
        let mut d = doc("images:\n  - name: b\n    newTag: v1\n# end\n");
        d.insert_item(&field("images"), &json!({"name": "a", "newTag": "v0"}), Placement::Sorted).unwrap();
        d.insert_item(&field("images"), &json!({"name": "c", "newTag": "v2"}), Placement::Sorted).unwrap();
        assert_eq!(
            d.text(),
            "images:\n  - name: a\n    newTag: v0\n  - name: b\n    newTag: v1\n  - name: c\n    newTag: v2\n# end\n"
        );
    }

    #[test]
    fn flow_collections_get_flow_members() {
        let mut d = doc("components: [a, b]\ncommonLabels: {}\n");
        d.insert_item(&field("components"), &json!("c,d"), Placement::End).unwrap();
        d.insert_entry(&field("commonLabels"), "k", &json!("v"), Placement::Sorted).unwrap();
        d.insert_entry(&field("commonLabels"), "a", &json!("1"), Placement::Sorted).unwrap();
        assert_eq!(d.text(), "components: [a, b, \"c,d\"]\ncommonLabels: {a: \"1\", k: v}\n");
    }

    #[test]
    fn a_null_field_gets_a_block() {
        let mut d = doc("images: # none yet\nresources:\n- a\n");
        d.fill_null(&field("images"), &json!([{"name": "a", "newTag": "1"}])).unwrap();
        assert_eq!(d.text(), "images: # none yet\n- name: a\n  newTag: \"1\"\nresources:\n- a\n");
    }

    #[test]
    fn fields_are_appended_after_trailing_comments() {
        let mut d = doc("resources:\n- a\n# - b");
        d.append_field("namePrefix", &json!("p-")).unwrap();
        assert_eq!(d.text(), "resources:\n- a\n# - b\nnamePrefix: p-\n");
        let mut ended = doc("---\nresources: []\n# note\n...\n");
        ended.append_field("namespace", &json!("ns")).unwrap();
        assert_eq!(ended.text(), "---\nresources: []\n# note\nnamespace: ns\n...\n");
        let mut empty = doc("");
        empty.append_field("components", &json!(["../c"])).unwrap();
        assert_eq!(empty.text(), "components:\n- ../c\n");
    }

    #[test]
    fn windows_line_breaks_stay_windows_line_breaks() {
        let mut d = doc("images:\r\n- name: a\r\n  newTag: v1\r\n");
        d.insert_item(&field("images"), &json!({"name": "b", "newTag": "v2"}), Placement::Sorted).unwrap();
        d.append_field("namespace", &json!("ns")).unwrap();
        assert_eq!(d.text(), "images:\r\n- name: a\r\n  newTag: v1\r\n- name: b\r\n  newTag: v2\r\nnamespace: ns\r\n");
    }

    #[test]
    fn non_ascii_text_keeps_its_offsets() {
        let mut d = doc("# café\ncommonAnnotations:\n  note: \"é\"\n");
        d.insert_entry(&field("commonAnnotations"), "z", &json!("ü"), Placement::Sorted).unwrap();
        assert_eq!(d.text(), "# café\ncommonAnnotations:\n  note: \"é\"\n  z: ü\n");
    }
}
