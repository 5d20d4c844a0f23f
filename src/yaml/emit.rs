//! kustomize's exact output bytes.
//!
//! kustomize prints every resource as `sigs.k8s.io/yaml.JSONToYAML(json.Marshal(obj))`:
//! the object is JSON-encoded by Go, re-read by go-yaml v2 into plain Go values and
//! marshalled again by go-yaml v2, whose emitter is a port of libyaml (best width 80,
//! indent 2, unicode on).  This module reproduces that pipeline in one pass:
//!
//! * mapping keys are ordered by go-yaml v2's `keyList.Less`, sorted with a port of
//!   Go's `sort.Sort` (pdqsort).  For the rare key sets on which that `Less` is not
//!   transitive (digit runs next to letters, e.g. `-09a`, `-292a`, `-2a0`) kustomize's
//!   own order depends on Go's random map iteration, so no order is "the" right one;
//!   the port just guarantees a deterministic result without panicking;
//! * numbers are rendered as Go's `encoding/json` prints them and then re-typed the way
//!   go-yaml v2 resolves that text (integers stay digits, floats use `%g`);
//! * strings pick their style as go-yaml v2's `encoder.stringv` does (YAML 1.1
//!   resolution decides whether a plain scalar would be read back as something else);
//! * the libyaml emitter state (column, indentation, whitespace flags) is simulated and
//!   its scalar analysis and writers (plain, single-quoted, double-quoted, literal)
//!   are ported faithfully, including line folding past column 80;
//! * the one artefact of re-reading the JSON text is reproduced too: a raw U+0085
//!   (NEL), which Go's JSON encoder does not escape, is a YAML line break and folds.

use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

use super::empty_nulls::{Quote, QuotedScalars};

/// Appends one document (no leading `---`) in kustomize's exact bytes; ends with a newline.
///
/// (Exactly like go-yaml, the only exception is a document whose last scalar is a
/// literal block ending in U+2028/U+2029: those breaks are written raw and no `\n`
/// follows.)
pub fn emit_document(value: &Value, out: &mut String) {
    emit_document_noting_high_bytes(value, out);
}

/// [`emit_document`], saying whether any string it wrote (key or value) held a byte of 0x7F or
/// above: only then can the value hold a character [`find_unencodable`] looks for.
pub fn emit_document_noting_high_bytes(value: &Value, out: &mut String) -> bool {
    let mut e = Emitter::new(out, false);
    e.emit_node(value, false, None);
    // DOCUMENT-END (implicit): only an indent, which ends the last line.
    e.write_indent();
    e.high_bytes
}

/// Whether `s` holds a byte of 0x7F or above (one wide pass, no early exit).
fn has_high_byte(s: &str) -> bool {
    s.bytes().fold(0u8, |seen, b| seen | (b >= 0x7F) as u8) != 0
}

/// A node as kyaml prints it in an error message (`node contents:`): kyaml writes its node
/// tree, so keys stay in the order the node has them and quoted scalars keep their quotes
/// (`quoted`: where the node holds them, when known). Ends with a newline.
pub fn emit_node_dump(value: &Value, quoted: Option<&QuotedScalars>) -> String {
    let mut out = String::new();
    let mut e = Emitter::new(&mut out, true);
    e.emit_node(value, false, quoted);
    e.write_indent();
    out
}

/// Told where each node of a document lands as [`emit_observed`] writes it (lines are 1-based,
/// counted by `\n` from the document's start): `explain` places its comments by these lines
/// instead of parsing the output again.
pub trait Observer {
    /// A mapping starts: `line` holds its first key (or `{}`).
    fn begin_map(&mut self, line: u32);
    /// A sequence starts: `line` holds its first `-` (or `[]`).
    fn begin_seq(&mut self, line: u32);
    /// The mapping's next entry: its key, written on `line`; its value follows.
    fn key(&mut self, key: &str, line: u32);
    /// The sequence's next item, `index`; its node follows.
    fn item(&mut self, index: usize);
    /// A scalar value written from `line` to `end_line`; `block` for a literal block scalar
    /// (`line` then holds its `|` header).
    fn scalar(&mut self, line: u32, end_line: u32, block: bool);
    /// The mapping or sequence last begun ends.
    fn end(&mut self);
}

/// [`emit_document`], telling `observer` where each node lands.
pub fn emit_observed(value: &Value, out: &mut String, observer: &mut dyn Observer) {
    let mut e = Emitter::new(out, false);
    e.observer = Some(Lines { observer, line: 1, counted_to: e.out.len() });
    e.emit_node(value, false, None);
    e.write_indent();
}

/// An observer and the line the emitter is on, counted lazily from the output.
struct Lines<'b> {
    observer: &'b mut dyn Observer,
    line: u32,
    counted_to: usize,
}

/// Documents joined by "---\n" (empty string for no documents).
pub fn emit_stream<'a>(docs: impl IntoIterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    for (i, doc) in docs.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        emit_document(doc, &mut out);
    }
    out
}

/// The first character that keeps kustomize from printing `value` at all, if any.
///
/// kustomize re-reads each resource's JSON text with go-yaml v2, whose reader rejects
/// the raw characters Go's JSON encoder leaves unescaped but YAML forbids
/// (U+007F..U+0084, U+0086..U+009F, U+FFFE, U+FFFF: "yaml: control characters are not
/// allowed"), and cannot parse a mapping key holding U+0085 (NEL), a line break there.
/// [`emit_document`] still writes something for such values; a caller that wants
/// kustomize's behaviour reports an error instead.
pub fn find_unencodable(value: &Value) -> Option<char> {
    fn bad(c: char) -> bool {
        matches!(c, '\u{7F}'..='\u{84}' | '\u{86}'..='\u{9F}' | '\u{FFFE}' | '\u{FFFF}')
    }
    // Every such character, and U+0085, is 0x7F or has a 0xC2 or 0xEF lead byte: a byte of
    // 0x7F or above. One pass without an early exit, which the compiler makes wide; the usual
    // text (ASCII without DEL) is done with then.
    fn suspicious(s: &str) -> bool {
        has_high_byte(s)
    }
    fn in_str(s: &str) -> Option<char> {
        if !suspicious(s) {
            return None;
        }
        s.chars().find(|&c| bad(c))
    }
    match value {
        Value::String(s) => in_str(s),
        Value::Array(items) => items.iter().find_map(find_unencodable),
        Value::Object(map) => map.iter().find_map(|(k, v)| match suspicious(k) {
            true => k.chars().find(|&c| bad(c)).or_else(|| k.contains('\u{85}').then_some('\u{85}')).or_else(|| find_unencodable(v)),
            false => find_unencodable(v),
        }),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Emitter state machine (libyaml / go-yaml v2 emitterc.go, block context only)
// ---------------------------------------------------------------------------

const BEST_INDENT: i32 = 2;
const BEST_WIDTH: usize = 80;
/// Longest scalar (in bytes) that may be written as a simple `key: value` key.
const MAX_SIMPLE_KEY_LEN: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

pub(super) struct Emitter<'o> {
    out: &'o mut String,
    /// Column in characters (libyaml counts one per character, not per byte).
    pub(super) column: usize,
    pub(super) indent: i32,
    indents: Vec<i32>,
    pub(super) whitespace: bool,
    pub(super) indention: bool,
    /// The column past which lines fold: 80 for go-yaml v2; go-yaml v3 folds nothing.
    width: usize,
    scratch: String,
    /// Whether a string written so far held a byte of 0x7F or above.
    high_bytes: bool,
    /// Writing a node tree as kyaml does (see [`emit_node_dump`]), not kustomize's output.
    node_dump: bool,
    /// The style the last scalar was written in.
    last_style: Style,
    observer: Option<Lines<'o>>,
}

impl<'o> Emitter<'o> {
    fn new(out: &'o mut String, node_dump: bool) -> Self {
        Emitter {
            width: BEST_WIDTH,
            out,
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            scratch: String::new(),
            high_bytes: false,
            node_dump,
            last_style: Style::Plain,
            observer: None,
        }
    }

    /// The observer, with the line the output has reached.
    fn observed(&mut self) -> Option<(&mut dyn Observer, u32)> {
        let lines = self.observer.as_mut()?;
        let fresh = &self.out.as_bytes()[lines.counted_to..];
        lines.line += fresh.iter().filter(|&&b| b == b'\n').count() as u32;
        lines.counted_to = self.out.len();
        Some((&mut *lines.observer, lines.line))
    }

    /// `yaml_emitter_emit_node` for a value; `mapping` is the emitter's mapping
    /// context flag (the node is a mapping value).  (The root context only matters to
    /// libyaml's `open_ended`, which never shows in go-yaml's output.)
    /// `quoted`: the quoted scalars at and below this node, in a node dump.
    fn emit_node(&mut self, value: &Value, mapping: bool, quoted: Option<&QuotedScalars>) {
        if self.observer.is_some() && !value.is_object() && !value.is_array() {
            let start = self.observed().map_or(0, |(_, line)| line);
            self.emit_value(value, mapping, quoted);
            let block = self.last_style == Style::Literal;
            if let Some((observer, end)) = self.observed() {
                observer.scalar(start, end, block);
            }
            return;
        }
        self.emit_value(value, mapping, quoted);
    }

    fn emit_value(&mut self, value: &Value, mapping: bool, quoted: Option<&QuotedScalars>) {
        match value {
            Value::Null => self.emit_plain_word("null"),
            Value::Bool(true) => self.emit_plain_word("true"),
            Value::Bool(false) => self.emit_plain_word("false"),
            Value::Number(n) => {
                let mut s = std::mem::take(&mut self.scratch);
                s.clear();
                format_number(n, &mut s);
                self.emit_plain_word(&s);
                self.scratch = s;
            }
            Value::String(s) => match quoted.and_then(QuotedScalars::mark) {
                None => self.emit_string(s, false),
                Some(quote) => {
                    let a = analyze_scalar(s);
                    self.note_high_bytes(s, &a);
                    let style = if *quote == Quote::Single { Style::SingleQuoted } else { Style::DoubleQuoted };
                    self.emit_scalar(s, style, &a, false);
                }
            },
            Value::Array(items) if items.is_empty() => self.emit_empty_flow("[", "]"),
            Value::Object(map) if map.is_empty() => self.emit_empty_flow("{", "}"),
            Value::Array(items) => self.emit_block_sequence(items, mapping, quoted),
            Value::Object(map) => self.emit_block_mapping(map, quoted),
        }
    }

    /// null, booleans and numbers: always plain.
    fn emit_plain_word(&mut self, s: &str) {
        let a = analyze_scalar(s);
        self.emit_scalar(s, Style::Plain, &a, false);
    }

    /// Notes whether `s`, analysed as `a`, holds a byte of 0x7F or above (printable ASCII does not).
    fn note_high_bytes(&mut self, s: &str, a: &Analysis) {
        self.high_bytes |= !a.printable_ascii && has_high_byte(s);
    }

    /// A string value (`simple_key == false`) in the style go-yaml's `stringv` asks for.
    fn emit_string(&mut self, s: &str, simple_key: bool) {
        if self.node_dump {
            // kyaml's nodes go through go-yaml v3, which quotes a plain string only where v3
            // itself would read it as something else (`n`, `yes` stay plain).
            let a = analyze_scalar(s);
            self.note_high_bytes(s, &a);
            let style = if a.multiline && s.contains('\n') {
                Style::Literal
            } else if crate::yaml::scalar::resolve_untagged(s).0 != crate::yaml::scalar::ScalarTag::Str {
                Style::DoubleQuoted
            } else {
                Style::Plain
            };
            return self.emit_scalar(s, style, &a, simple_key);
        }
        if has_nel(s) {
            // U+0085 is a high byte pair: noted before folding takes it out.
            self.high_bytes = true;
            let s = fold_nel(s);
            let a = analyze_scalar(&s);
            self.emit_scalar(&s, string_style(&s, &a), &a, simple_key);
        } else {
            let a = analyze_scalar(s);
            self.note_high_bytes(s, &a);
            self.emit_scalar(s, string_style(s, &a), &a, simple_key);
        }
    }

    /// An empty collection: the emitter switches to flow style (`[]` / `{}`).
    fn emit_empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        if let Some((observer, line)) = self.observed() {
            if open == "[" { observer.begin_seq(line) } else { observer.begin_map(line) }
            observer.end();
        }
        self.increase_indent(true, false);
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    fn emit_block_sequence(&mut self, items: &[Value], mapping_context: bool, quoted: Option<&QuotedScalars>) {
        let indentless = mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for (i, item) in items.iter().enumerate() {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            if let Some((observer, line)) = self.observed() {
                if i == 0 {
                    observer.begin_seq(line);
                }
                observer.item(i);
            }
            self.emit_node(item, false, quoted.and_then(|q| q.item(i)));
        }
        if let Some((observer, _)) = self.observed() {
            observer.end();
        }
        self.pop_indent();
    }

    fn emit_block_mapping(&mut self, map: &Map<String, Value>, quoted: Option<&QuotedScalars>) {
        self.increase_indent(false, false);
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        if !self.node_dump {
            go_sort(&mut entries, |a, b| key_less(a.0, b.0));
        }
        for (i, (key, value)) in entries.into_iter().enumerate() {
            self.write_indent();
            if let Some((observer, line)) = self.observed() {
                if i == 0 {
                    observer.begin_map(line);
                }
                observer.key(key, line);
            }
            // yaml_emitter_check_simple_key: one line and at most 128 bytes, else the
            // `? key` / `: value` form.  (A key holding a NEL cannot come out of
            // kustomize at all: its JSON text does not parse back.)
            let multiline = key
                .bytes()
                .any(|c| matches!(c, b'\n' | b'\r' | 0xC2 | 0xE2))
                && is_multiline(key);
            if !multiline && key.len() <= MAX_SIMPLE_KEY_LEN {
                self.emit_string(key, true);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.emit_string(key, false);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.emit_node(value, true, quoted.and_then(|q| q.field(key)));
        }
        if let Some((observer, _)) = self.observed() {
            observer.end();
        }
        self.pop_indent();
    }

    /// `yaml_emitter_emit_scalar`: select the style, then write it one level deeper.
    fn emit_scalar(&mut self, value: &str, requested: Style, a: &Analysis, simple_key: bool) {
        let style = select_style(requested, a, value.is_empty(), simple_key);
        self.last_style = style;
        self.increase_indent(true, false);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(value, a, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, a, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, a, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    /// An emitter as go-yaml v3 sets one up for kyaml: no line is ever folded.
    pub(super) fn unfolded(out: &'o mut String) -> Self {
        Emitter { width: usize::MAX, ..Emitter::new(out, true) }
    }

    pub(super) fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    pub(super) fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    // -- low level writers -------------------------------------------------

    #[inline]
    pub(super) fn put(&mut self, c: u8) {
        self.out.push(c as char);
        self.column += 1;
    }

    #[inline]
    pub(super) fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// Copies the character starting at byte `*i` and advances `*i` past it.
    #[inline]
    pub(super) fn write(&mut self, value: &str, i: &mut usize) {
        let w = width(value.as_bytes()[*i]);
        self.out.push_str(&value[*i..*i + w]);
        self.column += 1;
        *i += w;
    }

    #[inline]
    pub(super) fn write_break(&mut self, value: &str, i: &mut usize) {
        if value.as_bytes()[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(value, i);
            self.column = 0;
        }
    }

    pub(super) fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.column < indent {
            const SPACES: &str = "                                                                ";
            let mut n = indent - self.column;
            while n > 0 {
                let k = n.min(SPACES.len());
                self.out.push_str(&SPACES[..k]);
                n -= k;
            }
            self.column = indent;
        }
        self.whitespace = true;
        self.indention = true;
    }

    pub(super) fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(b' ');
        }
        self.out.push_str(indicator);
        self.column += char_count(indicator.as_bytes());
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    // -- scalar writers ------------------------------------------------------

    pub(super) fn write_plain(&mut self, value: &str, a: &Analysis, allow_breaks: bool) {
        let b = value.as_bytes();
        if !self.whitespace {
            self.put(b' ');
        }
        // Fast path: no line break and no chance to fold (every space stays at or
        // before the width limit).
        let nchars = a.chars;
        if (!allow_breaks || self.column.saturating_add(nchars) <= self.width) && !a.multiline {
            self.out.push_str(value);
            self.column += nchars;
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut spaces = false;
        let mut breaks = false;
        let mut i = 0;
        while i < b.len() {
            if b[i] == b' ' {
                if allow_breaks && !spaces && self.column > self.width && !is_space_at(b, i + 1) {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if is_break(b, i) {
                if !breaks && b[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    pub(super) fn write_single_quoted(&mut self, value: &str, a: &Analysis, allow_breaks: bool) {
        let b = value.as_bytes();
        self.write_indicator("'", true, false, false);
        let nchars = a.chars;
        if (!allow_breaks || self.column.saturating_add(nchars) <= self.width)
            && !a.multiline
            && !b.contains(&b'\'')
        {
            self.out.push_str(value);
            self.column += nchars;
            self.write_indicator("'", false, false, false);
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut spaces = false;
        let mut breaks = false;
        let mut i = 0;
        while i < b.len() {
            if b[i] == b' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.width
                    && i > 0
                    && i + 1 < b.len()
                    && !is_space_at(b, i + 1)
                {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if is_break(b, i) {
                if !breaks && b[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if b[i] == b'\'' {
                    self.put(b'\'');
                }
                self.write(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    pub(super) fn write_double_quoted(&mut self, value: &str, a: &Analysis, allow_breaks: bool) {
        let b = value.as_bytes();
        // go-yaml's is_bom() looks at the start of the value whatever the index, so a
        // value that starts with a BOM gets every character escaped.
        let bom = b.starts_with(&[0xEF, 0xBB, 0xBF]);
        let mut spaces = false;
        self.write_indicator("\"", true, false, false);
        let nchars = a.chars;
        if (!allow_breaks || self.column.saturating_add(nchars) <= self.width)
            && a.printable_ascii
            && !b.iter().any(|&c| c == b'"' || c == b'\\')
        {
            self.out.push_str(value);
            self.column += nchars;
            self.write_indicator("\"", false, false, false);
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut i = 0;
        while i < b.len() {
            if bom || !is_printable(b, i) || is_break(b, i) || b[i] == b'"' || b[i] == b'\\' {
                let w = width(b[i]);
                let v = value[i..i + w].chars().next().map_or(0, |c| c as u32);
                i += w;
                self.put(b'\\');
                let esc = match v {
                    0x00 => Some(b'0'),
                    0x07 => Some(b'a'),
                    0x08 => Some(b'b'),
                    0x09 => Some(b't'),
                    0x0A => Some(b'n'),
                    0x0B => Some(b'v'),
                    0x0C => Some(b'f'),
                    0x0D => Some(b'r'),
                    0x1B => Some(b'e'),
                    0x22 => Some(b'"'),
                    0x5C => Some(b'\\'),
                    0x85 => Some(b'N'),
                    0xA0 => Some(b'_'),
                    0x2028 => Some(b'L'),
                    0x2029 => Some(b'P'),
                    _ => None,
                };
                match esc {
                    Some(c) => self.put(c),
                    None => {
                        let (prefix, digits) = if v <= 0xFF {
                            (b'x', 2)
                        } else if v <= 0xFFFF {
                            (b'u', 4)
                        } else {
                            (b'U', 8)
                        };
                        self.put(prefix);
                        for k in (0..digits).rev() {
                            let d = ((v >> (k * 4)) & 0x0F) as u8;
                            self.put(if d < 10 { b'0' + d } else { b'A' + d - 10 });
                        }
                    }
                }
                spaces = false;
            } else if b[i] == b' ' {
                if allow_breaks && !spaces && self.column > self.width && i > 0 && i + 1 < b.len() {
                    self.write_indent();
                    if is_space_at(b, i + 1) {
                        self.put(b'\\');
                    }
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else {
                self.write(value, &mut i);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    pub(super) fn write_block_scalar_hints(&mut self, value: &str) {
        let b = value.as_bytes();
        if !b.is_empty() && (b[0] == b' ' || is_break(b, 0)) {
            self.write_indicator("2", false, false, false);
        }
        let chomp = if b.is_empty() {
            Some("-")
        } else {
            let mut i = b.len() - 1;
            while b[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !is_break(b, i) {
                Some("-")
            } else if i == 0 {
                Some("+")
            } else {
                i -= 1;
                while b[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                if is_break(b, i) {
                    Some("+")
                } else {
                    None
                }
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(c, false, false, false);
        }
    }

    pub(super) fn write_literal(&mut self, value: &str) {
        let b = value.as_bytes();
        self.write_indicator("|", true, false, false);
        self.write_block_scalar_hints(value);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < b.len() {
            if is_break(b, i) {
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                // Copy the rest of the line in one go (no breaks inside it).
                let start = i;
                while i < b.len() {
                    let c = b[i];
                    if c == b'\n' || ((c == b'\r' || c == 0xC2 || c == 0xE2) && is_break(b, i)) {
                        break;
                    }
                    i += 1;
                }
                self.column += char_count(&b[start..i]);
                self.out.push_str(&value[start..i]);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The JSON text re-read by go-yaml v2
// ---------------------------------------------------------------------------

/// Whether `s` holds U+0085 (NEL), the one YAML line break that Go's encoding/json
/// leaves unescaped.
#[inline]
fn has_nel(s: &str) -> bool {
    s.as_bytes().windows(2).any(|w| w == [0xC2, 0x85])
}

/// The string go-yaml v2 reads back from a JSON string literal holding raw NELs.
///
/// In the double-quoted scalar a NEL is a line break, and line breaks fold: a run of
/// raw spaces and NELs containing at least one NEL becomes one space (a single NEL)
/// or one `\n` per NEL after the first.  (Tabs and the other breaks are escaped in
/// the JSON text, so they are content and never fold.)
fn fold_nel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut run = String::new();
    let mut nels = 0usize;
    let flush = |out: &mut String, run: &mut String, nels: &mut usize| {
        match *nels {
            0 => out.push_str(run),
            1 => out.push(' '),
            n => (1..n).for_each(|_| out.push('\n')),
        }
        run.clear();
        *nels = 0;
    };
    for c in s.chars() {
        match c {
            ' ' => run.push(c),
            '\u{85}' => nels += 1,
            _ => {
                flush(&mut out, &mut run, &mut nels);
                out.push(c);
            }
        }
    }
    flush(&mut out, &mut run, &mut nels);
    out
}

// ---------------------------------------------------------------------------
// Scalar analysis and style selection
// ---------------------------------------------------------------------------

/// The parts of `yaml_emitter_analyze_scalar` that matter in block context.
#[derive(Debug, Clone, Copy)]
pub(super) struct Analysis {
    /// Length in characters.
    pub(super) chars: usize,
    /// Only printable ASCII (0x20..=0x7E).
    pub(super) printable_ascii: bool,
    pub(super) multiline: bool,
    pub(super) block_plain_allowed: bool,
    /// Plain style is fine inside a flow collection (go-yaml v3's rule: no `,[]{}?`, no `:`).
    pub(super) flow_plain_allowed: bool,
    pub(super) single_quoted_allowed: bool,
    pub(super) block_allowed: bool,
}

pub(super) fn analyze_scalar(value: &str) -> Analysis {
    let b = value.as_bytes();
    if b.is_empty() {
        return Analysis {
            chars: 0,
            printable_ascii: true,
            multiline: false,
            block_plain_allowed: true,
            flow_plain_allowed: false,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    if let Some(a) = analyze_printable_ascii(b) {
        return a;
    }
    let mut block_indicators = b.len() >= 3 && (b.starts_with(b"---") || b.starts_with(b"..."));
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut preceded_by_whitespace = true;
    let mut previous_space = false;
    let mut previous_break = false;

    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if i != 0 && c > b' ' && c <= 0x7E && !matches!(c, b':' | b'#' | b',' | b'?' | b'[' | b']' | b'{' | b'}') {
            // Ordinary printable character: no indicator, space or break.
            previous_space = false;
            previous_break = false;
            preceded_by_whitespace = false;
            i += 1;
            continue;
        }
        let w = width(c);
        let followed_by_whitespace = i + w >= b.len() || is_blank(b, i + w);
        if i == 0 {
            match c {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => (block_indicators, flow_indicators) = (true, true),
                b'?' | b':' => {
                    flow_indicators = true;
                    block_indicators |= followed_by_whitespace;
                }
                b'-' if followed_by_whitespace => (block_indicators, flow_indicators) = (true, true),
                _ => {}
            }
        } else {
            match c {
                b',' | b'?' | b'[' | b']' | b'{' | b'}' => flow_indicators = true,
                b':' => {
                    flow_indicators = true;
                    block_indicators |= followed_by_whitespace;
                }
                b'#' if preceded_by_whitespace => (block_indicators, flow_indicators) = (true, true),
                _ => {}
            }
        }
        // Fast path for the common printable ASCII characters.
        if !(0x20..=0x7E).contains(&c) && !is_printable(b, i) {
            special_characters = true;
        }
        if c == b' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + w == b.len() {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(b, i) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + w == b.len() {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blank(b, i) || is_break(b, i) || c == 0;
        i += w.max(1);
    }

    let mut a = Analysis {
        chars: char_count(b),
        printable_ascii: false,
        multiline: line_breaks,
        block_plain_allowed: true,
        flow_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
        a.flow_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.flow_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_plain_allowed = false;
        a.flow_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    if line_breaks || flow_indicators {
        a.flow_plain_allowed = false;
    }
    a
}

/// `analyze_scalar` for a non-empty value made of printable ASCII only (`None` for
/// anything else): no line breaks and no special characters, so only indicators and
/// edge spaces matter.
fn analyze_printable_ascii(b: &[u8]) -> Option<Analysis> {
    let n = b.len();
    let followed_by_blank = |i: usize| i + 1 >= n || b[i + 1] == b' ';
    let mut block_indicators = n >= 3 && (b.starts_with(b"---") || b.starts_with(b"..."));
    let mut flow_indicators = false;
    match b[0] {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' => (block_indicators, flow_indicators) = (true, true),
        b'?' | b':' => {
            flow_indicators = true;
            block_indicators |= followed_by_blank(0);
        }
        b'-' if followed_by_blank(0) => (block_indicators, flow_indicators) = (true, true),
        c if !(0x20..=0x7E).contains(&c) => return None,
        _ => {}
    }
    for i in 1..n {
        match b[i] {
            b',' | b'?' | b'[' | b']' | b'{' | b'}' => flow_indicators = true,
            b':' => {
                flow_indicators = true;
                block_indicators |= followed_by_blank(i);
            }
            b'#' if b[i - 1] == b' ' => (block_indicators, flow_indicators) = (true, true),
            0x20..=0x7E => {}
            _ => return None,
        }
    }
    let edge_space = b[0] == b' ' || b[n - 1] == b' ';
    Some(Analysis {
        chars: n,
        printable_ascii: true,
        multiline: false,
        block_plain_allowed: !edge_space && !block_indicators,
        flow_plain_allowed: !edge_space && !flow_indicators,
        single_quoted_allowed: true,
        block_allowed: b[n - 1] != b' ',
    })
}

/// `yaml_emitter_select_scalar_style` for implicit, untagged scalars outside flow context.
fn select_style(requested: Style, a: &Analysis, empty: bool, simple_key: bool) -> Style {
    let mut style = requested;
    if simple_key && a.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (empty && simple_key)) {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !a.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

/// go-yaml v2 `encoder.stringv`: the style requested for a string value or key.
fn string_style(s: &str, a: &Analysis) -> Style {
    if a.multiline && s.contains('\n') {
        Style::Literal
    } else if !resolves_to_non_string(s) && !is_base60_float(s) {
        Style::Plain
    } else {
        Style::DoubleQuoted
    }
}

// ---------------------------------------------------------------------------
// Character classes (go-yaml v2 yamlprivateh.go), on UTF-8 bytes
// ---------------------------------------------------------------------------

#[inline]
pub(super) fn width(b: u8) -> usize {
    if b & 0x80 == 0x00 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        0
    }
}

/// Whether the text holds a YAML line break (LF, CR, NEL, LS, PS).
fn is_multiline(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).any(|i| is_break(b, i))
}

/// Number of characters in UTF-8 bytes.
#[inline]
pub(super) fn char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

#[inline]
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

#[inline]
pub(super) fn is_space_at(b: &[u8], i: usize) -> bool {
    at(b, i) == b' '
}

#[inline]
fn is_blank(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == b' ' || c == b'\t'
}

#[inline]
pub(super) fn is_break(b: &[u8], i: usize) -> bool {
    match at(b, i) {
        b'\r' | b'\n' => true,
        0xC2 => at(b, i + 1) == 0x85,
        0xE2 => at(b, i + 1) == 0x80 && matches!(at(b, i + 2), 0xA8 | 0xA9),
        _ => false,
    }
}

#[inline]
fn is_printable(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (c == 0xC2 && at(b, i + 1) >= 0xA0)
        || (c > 0xC2 && c < 0xED)
        || (c == 0xED && at(b, i + 1) < 0xA0)
        || c == 0xEE
        || (c == 0xEF
            && !(at(b, i + 1) == 0xBB && at(b, i + 2) == 0xBF)
            && !(at(b, i + 1) == 0xBF && matches!(at(b, i + 2), 0xBE | 0xBF)))
}

// ---------------------------------------------------------------------------
// Numbers: Go encoding/json text, re-resolved by go-yaml v2
// ---------------------------------------------------------------------------

fn format_number(n: &Number, out: &mut String) {
    if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(f) = n.as_f64() {
        format_float(f, out);
    }
}

/// A float64 as `encoding/json` writes it, read back by go-yaml v2 and written again:
/// integral values below 1e21 are printed by JSON without a fraction and so become
/// YAML integers (if they fit 64 bits); everything else is a float printed with
/// `strconv.FormatFloat(f, 'g', -1, 64)`.
fn format_float(f: f64, out: &mut String) {
    if !f.is_finite() {
        // Not representable in JSON; print go-yaml's spelling anyway.
        out.push_str(if f.is_nan() {
            ".nan"
        } else if f > 0.0 {
            ".inf"
        } else {
            "-.inf"
        });
        return;
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // JSON 'f' format: shortest digits, no exponent (Rust's Display matches it).
        let text = format!("{f}");
        if let Ok(i) = text.parse::<i64>() {
            let _ = write!(out, "{i}");
            return;
        }
        if let Ok(u) = text.parse::<u64>() {
            let _ = write!(out, "{u}");
            return;
        }
    }
    super::write_go_format_g(f, out);
}


// ---------------------------------------------------------------------------
// go-yaml v2 resolve(): would this text, unquoted, be read as a non-string?
// ---------------------------------------------------------------------------

pub(crate) fn resolves_to_non_string(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true; // "" is null
    };
    let hint = match first {
        b'+' | b'-' => b'S',
        b'0'..=b'9' => b'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => b'M',
        b'.' => b'.',
        _ => return false,
    };
    if in_resolve_map(s) {
        return true;
    }
    match hint {
        b'.' => go_parse_float_ok(s),
        b'D' | b'S' => {
            if parse_timestamp(b) {
                return true;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if go_parse_int(&plain, 0).is_some() || go_parse_uint(&plain, 0).is_some() {
                return true;
            }
            if yaml_style_float(plain.as_bytes()) && go_parse_float_ok(&plain) {
                return true;
            }
            if let Some(rest) = plain.strip_prefix("0b") {
                go_parse_int(rest, 2).is_some() || go_parse_uint(rest, 2).is_some()
            } else if let Some(rest) = plain.strip_prefix("-0b") {
                go_parse_int(&format!("-{rest}"), 2).is_some()
            } else {
                false
            }
        }
        _ => false,
    }
}

fn in_resolve_map(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "true"
            | "True"
            | "TRUE"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "false"
            | "False"
            | "FALSE"
            | "off"
            | "Off"
            | "OFF"
            | ""
            | "~"
            | "null"
            | "Null"
            | "NULL"
            | ".nan"
            | ".NaN"
            | ".NAN"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | "<<"
    )
}

/// Go `strconv.ParseUint(s, base, 64)`; base 0 picks the base from a 0b/0o/0x/0 prefix.
fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let base0 = base == 0;
    let (base, digits) = if base0 {
        if b[0] == b'0' {
            let l = b.get(1).map(|c| c.to_ascii_lowercase());
            if b.len() >= 3 && l == Some(b'b') {
                (2, &b[2..])
            } else if b.len() >= 3 && l == Some(b'o') {
                (8, &b[2..])
            } else if b.len() >= 3 && l == Some(b'x') {
                (16, &b[2..])
            } else {
                (8, &b[1..])
            }
        } else {
            (10, b)
        }
    } else {
        (base, b)
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for &c in digits {
        let d = match c {
            b'_' if base0 => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => (c - b'0') as u32,
            _ if c.is_ascii_alphabetic() => (c.to_ascii_lowercase() - b'a') as u32 + 10,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        n = n.checked_mul(base as u64)?.checked_add(d as u64)?;
    }
    if underscores && !super::go_underscore_ok(b) {
        return None;
    }
    Some(n)
}

/// Go `strconv.ParseInt(s, base, 64)`.
fn go_parse_int(s: &str, base: u32) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let un = go_parse_uint(rest, base)?;
    const CUTOFF: u64 = 1 << 63;
    if !neg && un >= CUTOFF {
        return None;
    }
    if neg && un > CUTOFF {
        return None;
    }
    Some(if neg {
        (un as i64).wrapping_neg()
    } else {
        un as i64
    })
}


/// Whether Go's `strconv.ParseFloat(s, 64)` succeeds, for the texts resolve() hands it:
/// decimal forms (hint '.', or texts matching yamlStyleFloat).  Overflow to ±Inf is an error.
fn go_parse_float_ok(s: &str) -> bool {
    let b = s.as_bytes();
    if b.contains(&b'_') && !super::go_underscore_ok(b) {
        return false;
    }
    let t: String = s.chars().filter(|&c| c != '_').collect();
    let tb = t.as_bytes();
    // [+-]? (digits [. digits?] | . digits) ([eE][+-]?digits)?
    let mut i = 0;
    if i < tb.len() && (tb[i] == b'+' || tb[i] == b'-') {
        i += 1;
    }
    let mut mant_digits = 0;
    while i < tb.len() && tb[i].is_ascii_digit() {
        i += 1;
        mant_digits += 1;
    }
    if i < tb.len() && tb[i] == b'.' {
        i += 1;
        while i < tb.len() && tb[i].is_ascii_digit() {
            i += 1;
            mant_digits += 1;
        }
    }
    if mant_digits == 0 {
        return false;
    }
    if i < tb.len() && (tb[i] == b'e' || tb[i] == b'E') {
        i += 1;
        if i < tb.len() && (tb[i] == b'+' || tb[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < tb.len() && tb[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if i != tb.len() {
        return false;
    }
    t.parse::<f64>().map(|f| f.is_finite()).unwrap_or(false)
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(b: &[u8]) -> bool {
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    } else {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2 isBase60Float: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&c) = b.first() else { return false };
    if !(c == b'+' || c == b'-' || c.is_ascii_digit()) || !b.contains(&b':') {
        return false;
    }
    let mut i = 0;
    if b[i] == b'+' || b[i] == b'-' {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let d1 = at(b, i);
        let d2 = at(b, i + 1);
        if (b'0'..=b'5').contains(&d1) && d2.is_ascii_digit() {
            i += 2;
        } else if d1.is_ascii_digit() {
            i += 1;
        } else {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2 parseTimestamp: Go's time.Parse with the layouts
/// `2006-1-2T15:4:5.999999999Z07:00`, the same with a lower-case `t`,
/// `2006-1-2 15:4:5.999999999` and `2006-1-2`.
fn parse_timestamp(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    if i != 4 || i == s.len() || s[i] != b'-' {
        return false;
    }
    let year: u32 = s[..4].iter().fold(0, |n, &c| n * 10 + (c - b'0') as u32);
    let mut p = 5;
    let Some(month) = getnum(s, &mut p) else {
        return false;
    };
    if !(1..=12).contains(&month) {
        return false;
    }
    if at(s, p) != b'-' {
        return false;
    }
    p += 1;
    let Some(day) = getnum(s, &mut p) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day < 1 || day > days_in {
        return false;
    }
    if p == s.len() {
        return true; // "2006-1-2"
    }
    let with_zone = match s[p] {
        b'T' | b't' => {
            p += 1;
            true
        }
        b' ' => {
            while p < s.len() && s[p] == b' ' {
                p += 1;
            }
            false
        }
        _ => return false,
    };
    let Some(hour) = getnum(s, &mut p) else {
        return false;
    };
    if hour >= 24 || at(s, p) != b':' {
        return false;
    }
    p += 1;
    let Some(min) = getnum(s, &mut p) else {
        return false;
    };
    if min >= 60 || at(s, p) != b':' {
        return false;
    }
    p += 1;
    let Some(sec) = getnum(s, &mut p) else {
        return false;
    };
    if sec >= 60 {
        return false;
    }
    if p + 1 < s.len() && matches!(s[p], b'.' | b',') && s[p + 1].is_ascii_digit() {
        p += 1;
        while p < s.len() && s[p].is_ascii_digit() {
            p += 1;
        }
    }
    if with_zone {
        if at(s, p) == b'Z' {
            p += 1;
        } else {
            if s.len() - p < 6 || s[p + 3] != b':' || !matches!(s[p], b'+' | b'-') {
                return false;
            }
            let two = |q: usize| -> Option<u32> {
                (s[q].is_ascii_digit() && s[q + 1].is_ascii_digit())
                    .then(|| ((s[q] - b'0') * 10 + (s[q + 1] - b'0')) as u32)
            };
            let (Some(hh), Some(mm)) = (two(p + 1), two(p + 4)) else {
                return false;
            };
            if hh > 24 || mm > 60 {
                return false;
            }
            p += 6;
        }
    }
    p == s.len()
}

/// Go time's getnum(s, false): one or two digits.
fn getnum(s: &[u8], p: &mut usize) -> Option<u32> {
    let d0 = at(s, *p);
    if !d0.is_ascii_digit() {
        return None;
    }
    let d1 = at(s, *p + 1);
    if !d1.is_ascii_digit() {
        *p += 1;
        return Some((d0 - b'0') as u32);
    }
    *p += 2;
    Some(((d0 - b'0') * 10 + (d1 - b'0')) as u32)
}

// ---------------------------------------------------------------------------
// Key order: go-yaml v2 keyList.Less, sorted by Go's sort.Sort (pdqsort)
// ---------------------------------------------------------------------------

/// go-yaml v2's mapping key order (`keyList.Less`): whether `a` is printed before `b`.
pub(crate) fn key_less(a: &str, b: &str) -> bool {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
    // Differing at ASCII characters: the byte-wise comparison is the rune-wise one
    // (it only looks at the digits around the difference).
    let ascii_at = |s: &[u8]| s.get(common).is_none_or(|&c| c < 0x80);
    if ascii_at(ab) && ascii_at(bb) {
        let (Some(&x), Some(&y)) = (ab.get(common), bb.get(common)) else {
            return ab.len() < bb.len();
        };
        // Most keys first differ at two letters, which go-yaml compares as they are.
        if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() {
            return x < y;
        }
        key_less_units(
            ab,
            bb,
            common,
            |c| c.is_ascii_alphabetic(),
            |c| c.is_ascii_digit(),
            |c| c as i64,
        )
    } else if a.is_ascii() && b.is_ascii() {
        key_less_units(
            a.as_bytes(),
            b.as_bytes(),
            0,
            |c| c.is_ascii_alphabetic(),
            |c| c.is_ascii_digit(),
            |c| c as i64,
        )
    } else {
        let ar: Vec<char> = a.chars().collect();
        let br: Vec<char> = b.chars().collect();
        key_less_units(&ar, &br, 0, |c| c.is_alphabetic(), go_is_digit, |c| c as i64)
    }
}

/// Go's unicode.IsDigit (approximated outside Latin-1 by Rust's numeric class).
fn go_is_digit(c: char) -> bool {
    if (c as u32) <= 0xFF {
        c.is_ascii_digit()
    } else {
        c.is_numeric()
    }
}

/// `from`: where to start looking, before or at the first unit in which they differ.
fn key_less_units<T: Copy + PartialEq + PartialOrd>(
    ar: &[T],
    br: &[T],
    from: usize,
    is_letter: impl Fn(T) -> bool,
    is_digit: impl Fn(T) -> bool,
    code: impl Fn(T) -> i64,
) -> bool {
    let zero = b'0' as i64;
    let n = ar.len().min(br.len());
    for i in from..n {
        if ar[i] == br[i] {
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if code(ar[i]) == zero || code(br[i]) == zero {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if code(ar[j]) != zero {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(code(ar[ai]) - zero);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(code(br[bi]) - zero);
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Go's `sort.Sort` (pattern-defeating quicksort, Go 1.19+), so the resulting order is
/// the same as Go's even if `less` is not a strict weak order.
fn go_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    if n <= 1 {
        return;
    }
    let limit = usize::BITS - n.leading_zeros();
    let mut s = GoSorter { data, less };
    s.pdqsort(0, n, limit as usize);
}

struct GoSorter<'d, T, F> {
    data: &'d mut [T],
    less: F,
}

#[derive(PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

impl<T, F: Fn(&T, &T) -> bool> GoSorter<'_, T, F> {
    #[inline]
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }

    #[inline]
    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let first = a;
        let hi = b - a;
        let mut i = (hi as isize - 1) / 2;
        while i >= 0 {
            self.sift_down(i as usize, hi, first);
            i -= 1;
        }
        let mut i = hi as isize - 1;
        while i >= 0 {
            self.swap(first, first + i as usize);
            self.sift_down(0, i as usize, first);
            i -= 1;
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: usize) {
        const MAX_INSERTION: usize = 12;
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                let mid = self.partition_equal(a, b, pivot);
                a = mid;
                continue;
            }
            let (mid, already) = self.partition(a, b, pivot);
            was_partitioned = already;
            let (left_len, right_len) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left_len < right_len {
                was_balanced = left_len >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right_len >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        while i <= j && self.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !self.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j as usize, a);
            return (j as usize, true);
        }
        self.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i as usize, a) {
                i += 1;
            }
            while i <= j && !self.less(j as usize, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        self.swap(j as usize, a);
        (j as usize, false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        loop {
            while i <= j && !self.less(a, i as usize) {
                i += 1;
            }
            while i <= j && self.less(a, j as usize) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        i as usize
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1usize << (usize::BITS - length.leading_zeros());
            let idx = a + (length / 4) * 2 - 1;
            for i in 0..3 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random as usize) & (modulus - 1);
                if other >= length {
                    other -= length;
                }
                self.swap(idx - 1 + i, a + other);
            }
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, c) = self.order2(b, c, swaps);
        let _ = c;
        let (_a, b) = self.order2(a, b, swaps);
        b
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(v: &Value) -> String {
        let mut s = String::new();
        emit_document(v, &mut s);
        s
    }

    /// `input` is JSON; `expected` is kustomize v5.6.0's output for it (captured from
    /// the reference, resource wrapper fields removed).
    fn check(input: &str, expected: &str) {
        let v: Value = serde_json::from_str(input).unwrap();
        pretty_assertions::assert_eq!(doc(&v), expected);
    }

    // -- cases checked byte for byte against kustomize --------------------------

    #[test]
    fn key_order_natural() {
        check(
            r###"{"a10": 1, "a9": 1, "a_b": 1, "aB": 1, "A": 1, "1": 1, "10": 1, "2": 1, "-x": 1, "a01": 1, "a1": 1, "B": 1, "b": 1, "~": 1, "é": 1}"###,
            r###"-x: 1
"~": 1
"1": 1
"2": 1
"10": 1
A: 1
B: 1
a_b: 1
a1: 1
a01: 1
a9: 1
a10: 1
aB: 1
b: 1
é: 1
"###,
        );
    }

    #[test]
    fn keys_are_quoted_like_values() {
        check(
            r###"{"80": "x", "on": "x", "yes": "x", "y": 1, "null": 1, "": 1, "x y": 1, "a: b": 1, "#c": 1, "- d": 1, "1.5": 1, "2001-12-14": 1}"###,
            r###""": 1
'#c': 1
'- d': 1
"1.5": 1
"80": x
"2001-12-14": 1
'a: b': 1
"null": 1
"on": x
x y: 1
"y": 1
"yes": x
"###,
        );
    }

    #[test]
    fn yaml11_words_are_double_quoted() {
        check(
            r###"{"v": ["y", "Y", "yes", "No", "ON", "off", "true", "False", "~", "null", "NULL", "", ".inf", "-.Inf", ".NaN", "<<", "n", "nope", "yess", "On!"]}"###,
            r###"v:
- "y"
- "Y"
- "yes"
- "No"
- "ON"
- "off"
- "true"
- "False"
- "~"
- "null"
- "NULL"
- ""
- ".inf"
- "-.Inf"
- ".NaN"
- <<
- "n"
- nope
- yess
- On!
"###,
        );
    }

    #[test]
    fn numeric_looking_strings() {
        check(
            r###"{"v": ["0", "012", "08", "0x1F", "0o17", "0b101", "1_000", "+1", "-1", "1.5", ".5", "5.", "1e5", "1e400", "0xFFFFFFFFFFFFFFFFF", "99999999999999999999", "1.2.3", "1:20", "190:20:30", "1:60", "-", "1e", "0b-1"]}"###,
            r###"v:
- "0"
- "012"
- "08"
- "0x1F"
- "0o17"
- "0b101"
- "1_000"
- "+1"
- "-1"
- "1.5"
- ".5"
- "5."
- "1e5"
- 1e400
- 0xFFFFFFFFFFFFFFFFF
- "99999999999999999999"
- 1.2.3
- "1:20"
- "190:20:30"
- 1:60
- '-'
- 1e
- "0b-1"
"###,
        );
    }

    #[test]
    fn timestamps() {
        check(
            r###"{"v": ["2001-12-14", "2001-12-14T21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-12-14T21:59:43", "2001-13-01", "2001-02-29", "2000-02-29", "2001-1-2"]}"###,
            r###"v:
- "2001-12-14"
- "2001-12-14T21:59:43.10-05:00"
- "2001-12-14 21:59:43.10"
- 2001-12-14T21:59:43
- 2001-13-01
- 2001-02-29
- "2000-02-29"
- "2001-1-2"
"###,
        );
    }

    #[test]
    fn indicators() {
        check(
            r###"{"v": ["- a", "-a", "a -", "? a", "?a", ": a", ":a", "a:b", "a: b", "a:", "a #b", "a#b", "#a", "[a", "a]", "{a}", "a,b", "&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a", "`a", "---", "--- a", "...", "a'b", "it's"]}"###,
            r###"v:
- '- a'
- -a
- a -
- '? a'
- ?a
- ': a'
- :a
- a:b
- 'a: b'
- 'a:'
- 'a #b'
- a#b
- '#a'
- '[a'
- a]
- '{a}'
- a,b
- '&a'
- '*a'
- '!a'
- '|a'
- '>a'
- '''a'
- '"a'
- '%a'
- '@a'
- '`a'
- '---'
- '--- a'
- '...'
- a'b
- it's
"###,
        );
    }

    #[test]
    fn spaces_and_specials() {
        check(
            r###"{"v": [" a", "a ", "  ", "a  b", "a\tb", "été", "日本", "😀", "a b", "\u0000", "a\u001bb", "\ufeffab", "a\u2028b", "a\rb", "back\\slash", "quo\"te"]}"###,
            r###"v:
- ' a'
- 'a '
- '  '
- a  b
- "a\tb"
- été
- 日本
- "\U0001F600"
- a b
- "\0"
- "a\eb"
- "\uFEFF\x61\x62"
- 'a   b'
- "a\rb"
- back\slash
- quo"te
"###,
        );
    }

    #[test]
    fn literal_blocks() {
        check(
            r###"{"a": "x\ny", "b": "x\ny\n", "c": "x\ny\n\n", "d": " x\ny", "e": "\nx", "f": "x \ny", "g": "x\ny ", "h": "x\n\ty", "i": "x\n\ny\n", "j": "\n", "k": "  indented\n  lines\n"}"###,
            r###"a: |-
  x
  y
b: |
  x
  y
c: |+
  x
  y

d: |2-
   x
  y
e: |2-

  x
f: "x \ny"
g: "x\ny "
h: "x\n\ty"
i: |
  x

  y
j: |2+

k: |2
    indented
    lines
"###,
        );
    }

    #[test]
    fn literal_in_sequences() {
        check(
            r###"{"s": ["x\ny", {"k": "x\ny\n"}, ["x\n"]]}"###,
            r###"s:
- |-
  x
  y
- k: |
    x
    y
- - |
    x
"###,
        );
    }

    #[test]
    fn fold_plain() {
        check(
            r###"{"description": "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog.", "nested": {"deeper": {"text": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"}}}"###,
            r###"description: The quick brown fox jumps over the lazy dog. The quick brown fox jumps
  over the lazy dog. The quick brown fox jumps over the lazy dog.
nested:
  deeper:
    text: Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod
      tempor incididunt ut labore et dolore magna aliqua
"###,
        );
    }

    #[test]
    fn fold_single_quoted() {
        check(
            r###"{"druid_segmentCache_locations": "[{\"path\": \"var/druid/segment-cache\", \"maxSize\": 32000000000, \"freeSpacePercent\": 1.0}]", "x": "# word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word"}"###,
            r###"druid_segmentCache_locations: '[{"path": "var/druid/segment-cache", "maxSize": 32000000000,
  "freeSpacePercent": 1.0}]'
x: '# word word word word word word word word word word word word word word word word
  word word word word word word word word word word word word word word'
"###,
        );
    }

    #[test]
    fn fold_double_quoted() {
        check(
            r###"{"a": "tab\there and a long tail of words that goes on and on past the eighty column limit for sure", "b": "\tword  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  ", "c": "on"}"###,
            r###"a: "tab\there and a long tail of words that goes on and on past the eighty column
  limit for sure"
b: "\tword  word  word  word  word  word  word  word  word  word  word  word  word
  \ word  word  word  word  word  word  word  "
c: "on"
"###,
        );
    }

    #[test]
    fn long_words_do_not_fold() {
        check(
            r###"{"url": "https://example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "k": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx yyyyyyyyyy"}"###,
            r###"k: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  yyyyyyyyyy
url: https://example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
"###,
        );
    }

    #[test]
    fn numbers() {
        check(
            r###"{"v": [0, 1, -1, 9223372036854775807, -9223372036854775808, 18446744073709551615, 0.5, 1.0, -2.5, 1.5e-07, 1e-06, 1e+21, 1e+20, 1234567.5, 123456.5, 0.0001, 1e-05, 3.14159]}"###,
            r###"v:
- 0
- 1
- -1
- 9223372036854775807
- -9223372036854775808
- 18446744073709551615
- 0.5
- 1
- -2.5
- 1.5e-07
- 1e-06
- 1e+21
- 1e+20
- 1.2345675e+06
- 123456.5
- 0.0001
- 1e-05
- 3.14159
"###,
        );
    }

    #[test]
    fn nesting() {
        check(
            r###"{"m": {"a": [1, 2], "b": [{"x": 1, "y": [3, 4]}, [5, [6]], [], {}], "c": null, "d": true, "e": false, "f": {}, "g": []}, "s": [[{"a": {"b": [{}]}}]]}"###,
            r###"m:
  a:
  - 1
  - 2
  b:
  - x: 1
    "y":
    - 3
    - 4
  - - 5
    - - 6
  - []
  - {}
  c: null
  d: true
  e: false
  f: {}
  g: []
s:
- - a:
      b:
      - {}
"###,
        );
    }

    #[test]
    fn long_and_multiline_keys() {
        check(
            r###"{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk": 1, "lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll": {"a": 1}, "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm": [1, 2], "two\nlines": "v", "z": 1}"###,
            r###"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: 1
? lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll
: a: 1
? mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm
: - 1
  - 2
? |-
  two
  lines
: v
z: 1
"###,
        );
    }

    // -- smaller pieces -----------------------------------------------------------

    #[test]
    fn stream_joins_documents() {
        assert_eq!(emit_stream(std::iter::empty()), "");
        let a = serde_json::json!({"a": 1});
        let b = serde_json::json!({"b": [true, null]});
        assert_eq!(emit_stream([&a, &b]), "a: 1\n---\nb:\n- true\n- null\n");
        assert_eq!(emit_stream([&serde_json::json!({})]), "{}\n");
    }

    #[test]
    fn unencodable_characters() {
        use serde_json::json;
        assert_eq!(
            find_unencodable(&json!({"a": ["x", 1, {"b": "ok\u{85}\u{a0}é"}]})),
            None
        );
        assert_eq!(find_unencodable(&json!({"a": ["x\u{7f}"]})), Some('\u{7f}'));
        assert_eq!(
            find_unencodable(&json!({"a": {"b": "\u{9f}"}})),
            Some('\u{9f}')
        );
        assert_eq!(find_unencodable(&json!({"\u{84}": 1})), Some('\u{84}'));
        assert_eq!(find_unencodable(&json!({"k\u{85}": 1})), Some('\u{85}'));
        assert_eq!(find_unencodable(&json!(["\u{fffe}"])), Some('\u{fffe}'));
        // Other text past ASCII is fine, in keys and values, long or short: dashes, the
        // replacement character (also an 0xEF lead byte), emoji, a long value with one bad
        // character at its end.
        let fine = json!({"—é\u{fffd}": ["日本語", "\u{1F600}", "\u{fffd}", "a".repeat(100)]});
        assert_eq!(find_unencodable(&fine), None);
        assert_eq!(find_unencodable(&json!({"k": format!("{}\u{ffff}", "é".repeat(40))})), Some('\u{ffff}'));
    }

    #[test]
    fn an_emit_says_whether_its_strings_held_high_bytes() {
        use serde_json::json;
        let high = |v: Value| emit_document_noting_high_bytes(&v, &mut String::new());
        assert!(!high(json!({"a": "text\twith\nbreaks", "b": [1, true, null, "~"], "": ""})));
        assert!(high(json!({"a": ["x", "é"]})));
        assert!(high(json!({"ключ": "v"})));
        assert!(high(json!({"k\u{85}": "v"})), "a NEL folded out of a key");
        assert!(high(json!({"k": "a\u{85}b"})), "a NEL folded out of a value");
        assert!(high(json!({"k": "\u{7f}"})));
    }

    #[test]
    fn raw_nel_folds_like_the_json_reread() {
        assert_eq!(fold_nel("a\u{85}b"), "a b");
        assert_eq!(fold_nel("a \u{85} b"), "a b");
        assert_eq!(fold_nel("a\u{85}\u{85}\u{85}b"), "a\n\nb");
        assert_eq!(fold_nel("\u{85}"), " ");
        assert_eq!(fold_nel("a\u{85}\nb"), "a \nb");
        assert_eq!(fold_nel("a  b\u{85}"), "a  b ");
        assert_eq!(doc(&serde_json::json!({"v": "x\u{85}y"})), "v: x y\n");
    }

    #[test]
    fn go_g_format() {
        let g = |f: f64| {
            let mut s = String::new();
            crate::yaml::write_go_format_g(f, &mut s);
            s
        };
        assert_eq!(g(1234567.5), "1.2345675e+06");
        assert_eq!(g(123456.5), "123456.5");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(1e21), "1e+21");
        assert_eq!(g(1.5e300), "1.5e+300");
        assert_eq!(g(-2.5), "-2.5");
        assert_eq!(g(5e-324), "5e-324");
        assert_eq!(g(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn floats_that_json_prints_as_integers() {
        let f = |x: f64| {
            let mut s = String::new();
            format_float(x, &mut s);
            s
        };
        assert_eq!(f(1.0), "1");
        assert_eq!(f(-0.0), "0");
        assert_eq!(f(1e15), "1000000000000000");
        assert_eq!(f(1e20), "1e+20"); // beyond 64 bits: a float again
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(1e-7), "1e-07");
    }

    #[test]
    fn resolution_classes() {
        for s in [
            "",
            "~",
            "y",
            "NO",
            "On",
            ".inf",
            "-.INF",
            ".NaN",
            "0",
            "-0",
            "+12",
            "0x1f",
            "0o7",
            "0b1",
            "1_0",
            "0b-1",
            "1.",
            ".5",
            ".5_0",
            "1e3",
            "2001-12-14",
            "2001-12-14 1:2:3",
            "2001-12-14t1:2:3.5Z",
        ] {
            assert!(resolves_to_non_string(s), "{s:?} should not stay plain");
        }
        for s in [
            "<<",
            "yess",
            "nil",
            "0x",
            "0b",
            "08x",
            "1e",
            "1e400",
            ".e1",
            "._5",
            "0xFFFFFFFFFFFFFFFFF",
            "2001-12-14T1:2:3",
            "2001-02-29",
            "2001-12-14x",
            "+",
            "-",
            "1.2.3",
            "a1",
        ] {
            assert!(!resolves_to_non_string(s), "{s:?} should stay plain");
        }
        assert!(
            is_base60_float("1:20") && is_base60_float("-190:20:30.5") && is_base60_float("1_0:5")
        );
        assert!(
            !is_base60_float("1:60")
                && !is_base60_float("1:2:")
                && !is_base60_float(":20")
                && !is_base60_float("a:1")
        );
    }

    #[test]
    fn key_less_is_gos_natural_order() {
        let mut keys = vec![
            "a10", "a9", "a_b", "aB", "A", "1", "10", "2", "-x", "a01", "a1",
        ];
        go_sort(&mut keys, |a, b| key_less(a, b));
        assert_eq!(
            keys,
            ["-x", "1", "2", "10", "A", "a_b", "a1", "a01", "a9", "a10", "aB"]
        );
        assert!(key_less("ab", "abc") && !key_less("abc", "ab"));
        assert!(key_less("x19", "x100") && key_less("a1", "a01"));
        assert!(key_less("é", "éa") && key_less("a", "é"));
    }

    #[test]
    fn key_less_shortcuts_agree_with_the_whole_comparison() {
        // Every pair of keys of up to three units from letters, digits and punctuation: the
        // shortcuts (a common prefix skipped, two letters compared at once) change no answer.
        let units = ["a", "B", "z", "0", "1", "9", "-", "_", "."];
        let mut keys = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = keys.iter().flat_map(|k| units.iter().map(move |u| format!("{k}{u}"))).collect();
            keys.extend(longer);
        }
        keys.sort();
        keys.dedup();
        let whole = |a: &str, b: &str| {
            key_less_units(a.as_bytes(), b.as_bytes(), 0, |c| c.is_ascii_alphabetic(), |c| c.is_ascii_digit(), |c| c as i64)
        };
        for a in &keys {
            for b in &keys {
                assert_eq!(key_less(a, b), whole(a, b), "{a:?} < {b:?}");
            }
        }
    }

    #[test]
    fn go_sort_sorts() {
        // A tiny deterministic generator; patterns that exercise every pdqsort path.
        let mut seed = 0x2545F4914F6CDD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [0usize, 1, 2, 5, 12, 13, 49, 50, 51, 200, 1000, 5000] {
            let inputs: Vec<Vec<u64>> = vec![
                (0..n).map(|_| next() % 1000).collect(),
                (0..n as u64).collect(),
                (0..n as u64).rev().collect(),
                (0..n).map(|_| next() % 3).collect(),
                (0..n as u64)
                    .map(|i| if i % 2 == 0 { i } else { n as u64 - i })
                    .collect(),
            ];
            for mut v in inputs {
                let mut want = v.clone();
                want.sort();
                go_sort(&mut v, |a, b| a < b);
                assert_eq!(v, want, "n = {n}");
            }
        }
    }

    #[test]
    fn inconsistent_order_does_not_panic() {
        // go-yaml's Less is not transitive for such keys (kustomize's own output
        // order then depends on Go's map iteration); sorting must still terminate.
        let mut keys: Vec<String> = Vec::new();
        for a in ["-", "0", "9", "a", "2", "09", "29"] {
            for b in ["", "x", "2", "0", "a", "Ä"] {
                keys.push(format!("{a}{b}"));
            }
        }
        go_sort(&mut keys, |a, b| key_less(a, b));
        assert_eq!(keys.len(), 42);
    }
}
