//! A node tree ([`super::node_tree`]) written as kyaml's `RNode.String()` writes one: go-yaml
//! v3's encoder (indent 2, sequences in a mapping not indented, no line ever folded) over the
//! libyaml emitter simulated in [`super::emit`], with what v3 adds: flow collections, folded
//! scalars, tags kept where a scalar's text no longer reads as its tag, and comments.
use super::emit::{analyze_scalar, is_break, width, Analysis, Emitter};
use super::node_tree::{Content, Entry, Node, Scalar, Style};
use super::scalar::{resolve_untagged, ScalarTag};

/// Longest scalar (in bytes, with its tag) that may be written as a simple `key: value` key.
const MAX_SIMPLE_KEY_LEN: usize = 128;

/// The document as kyaml prints it, with the final line break.
pub fn emit_document(root: &Node) -> String {
    let mut out = String::new();
    let mut w = Writer { e: Emitter::unfolded(&mut out), flow_level: 0 };
    w.node(root, Place::Root);
    w.e.write_indent();
    out
}

/// Where a node is written: it decides a sequence's indentation and a scalar's styles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    Item,
    Value,
    SimpleKey,
}

struct Writer<'o> {
    e: Emitter<'o>,
    flow_level: usize,
}

impl Writer<'_> {
    fn node(&mut self, node: &Node, place: Place) {
        match &node.content {
            Content::Scalar(s) => self.scalar(s, place),
            Content::Sequence(items) if self.flow_level > 0 || node.flow || items.is_empty() => self.flow_sequence(items),
            Content::Mapping(entries) if self.flow_level > 0 || node.flow || entries.is_empty() => self.flow_mapping(entries),
            Content::Sequence(items) => self.block_sequence(items, place),
            Content::Mapping(entries) => self.block_mapping(entries),
        }
    }

    /// Comment lines above a node, at the current indentation.
    fn head_comment(&mut self, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        self.e.write_indent();
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                self.e.put_break();
                self.e.indention = true;
                self.e.whitespace = true;
                self.e.write_indent();
            }
            self.write_raw(line);
        }
    }

    /// A comment after a node on its line.
    fn line_comment(&mut self, comment: Option<&String>) {
        if let Some(c) = comment {
            if !self.e.whitespace {
                self.e.put(b' ');
            }
            self.write_raw(c);
        }
    }

    fn write_raw(&mut self, text: &str) {
        let mut i = 0;
        while i < text.len() {
            self.e.write(text, &mut i);
        }
        self.e.whitespace = false;
        self.e.indention = false;
    }

    fn block_sequence(&mut self, items: &[Node], place: Place) {
        // kyaml's compact sequence indent: a sequence that is a mapping's value is not indented.
        let in_mapping = matches!(place, Place::Value | Place::SimpleKey);
        let compact = in_mapping && (self.e.column == 0 || !self.e.indention);
        let was = self.e.indent;
        self.e.increase_indent(false, false);
        if compact && was >= 0 {
            self.e.indent -= 2;
        }
        for item in items {
            self.head_comment(&item.head_comment);
            self.e.write_indent();
            self.e.write_indicator("-", true, false, true);
            self.node(item, Place::Item);
            if !is_block_collection(item) {
                self.line_comment(item.line_comment.as_ref());
            }
        }
        self.e.pop_indent();
    }

    fn block_mapping(&mut self, entries: &[Entry]) {
        self.e.increase_indent(false, false);
        for Entry { key, value } in entries {
            self.head_comment(&key.head_comment);
            self.e.write_indent();
            if self.is_simple_key(key) {
                self.node(key, Place::SimpleKey);
                self.e.write_indicator(":", false, false, false);
            } else {
                self.e.write_indicator("?", true, false, true);
                self.node(key, Place::Value);
                self.e.write_indent();
                self.e.write_indicator(":", true, false, true);
            }
            if is_block_collection(value) {
                // The value starts on the next line: its comment follows the `:`.
                self.line_comment(value.line_comment.as_ref());
                self.node(value, Place::Value);
            } else {
                self.node(value, Place::Value);
                self.line_comment(value.line_comment.as_ref());
            }
        }
        self.e.pop_indent();
    }

    fn flow_sequence(&mut self, items: &[Node]) {
        self.e.write_indicator("[", true, true, false);
        self.e.increase_indent(true, false);
        self.flow_level += 1;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.e.write_indicator(",", false, false, false);
            }
            self.node(item, Place::Item);
        }
        self.flow_level -= 1;
        self.e.pop_indent();
        self.e.write_indicator("]", false, false, false);
    }

    fn flow_mapping(&mut self, entries: &[Entry]) {
        self.e.write_indicator("{", true, true, false);
        self.e.increase_indent(true, false);
        self.flow_level += 1;
        for (i, Entry { key, value }) in entries.iter().enumerate() {
            if i > 0 {
                self.e.write_indicator(",", false, false, false);
            }
            if self.is_simple_key(key) {
                self.node(key, Place::SimpleKey);
                self.e.write_indicator(":", false, false, false);
            } else {
                self.e.write_indicator("?", true, false, false);
                self.node(key, Place::Value);
                self.e.write_indicator(":", true, false, false);
            }
            self.node(value, Place::Value);
        }
        self.flow_level -= 1;
        self.e.pop_indent();
        self.e.write_indicator("}", false, false, false);
    }

    /// go-yaml's `check_simple_key`: one line, at most 128 bytes (tag included), or an empty
    /// collection.
    fn is_simple_key(&self, key: &Node) -> bool {
        match &key.content {
            Content::Scalar(s) => {
                let tag = encoded_tag(s).0.map_or(0, str::len);
                !analyze_scalar(&s.text).multiline && s.text.len() + tag <= MAX_SIMPLE_KEY_LEN
            }
            _ => key.is_empty_collection(),
        }
    }

    fn scalar(&mut self, s: &Scalar, place: Place) {
        let (tag, requested) = encoded_tag(s);
        let a = analyze_scalar(&s.text);
        let style = self.select_style(requested, &a, s.text.is_empty(), place == Place::SimpleKey);
        if let Some(tag) = tag {
            self.e.write_indicator(tag, true, false, false);
        }
        self.e.increase_indent(true, false);
        let allow_breaks = place != Place::SimpleKey;
        match style {
            // go-yaml writes nothing at all for an empty plain scalar, not even the space.
            Style::Plain if s.text.is_empty() => {}
            Style::Plain => self.e.write_plain(&s.text, &a, allow_breaks),
            Style::SingleQuoted => self.e.write_single_quoted(&s.text, &a, allow_breaks),
            Style::DoubleQuoted => self.e.write_double_quoted(&s.text, &a, allow_breaks),
            Style::Literal => self.e.write_literal(&s.text),
            Style::Folded => self.write_folded(&s.text),
        }
        self.e.pop_indent();
    }

    /// The emitter's `select_scalar_style`: the style asked for, unless the text cannot be
    /// written so where it stands.
    fn select_style(&self, requested: Style, a: &Analysis, empty: bool, simple_key: bool) -> Style {
        let flow = self.flow_level > 0;
        let mut style = requested;
        if simple_key && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain {
            let allowed = if flow { a.flow_plain_allowed } else { a.block_plain_allowed };
            if !allowed || (empty && (flow || simple_key)) {
                style = Style::SingleQuoted;
            }
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if matches!(style, Style::Literal | Style::Folded) && (!a.block_allowed || flow || simple_key) {
            style = Style::DoubleQuoted;
        }
        style
    }

    /// A folded block scalar as go-yaml v3 writes it: every line break after text gets a second
    /// one (its check for a following blank line looks at the text's start, not at the break),
    /// so `a\nb\n` comes out as `a`, blank line, `b`, blank line.
    fn write_folded(&mut self, value: &str) {
        let b = value.as_bytes();
        self.e.write_indicator(">", true, false, false);
        self.e.write_block_scalar_hints(value);
        self.e.put_break();
        self.e.indention = true;
        self.e.whitespace = true;
        // What go-yaml checks at every break: whether the text, past its leading breaks, starts
        // with a blank (or is nothing but breaks).
        let mut k = 0;
        while k < b.len() && is_break(b, k) {
            k += width(b[k]).max(1);
        }
        let starts_blank = b.get(k).is_none_or(|&c| matches!(c, b' ' | b'\t' | 0));
        let mut breaks = true;
        let mut leading_spaces = true;
        let mut i = 0;
        while i < b.len() {
            if is_break(b, i) {
                if !breaks && !leading_spaces && b[i] == b'\n' && !starts_blank {
                    self.e.put_break();
                }
                self.e.write_break(value, &mut i);
                self.e.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.e.write_indent();
                    leading_spaces = b[i] == b' ' || b[i] == b'\t';
                }
                let w = width(b[i]).max(1);
                if i + w > b.len() {
                    break;
                }
                self.e.write(value, &mut i);
                self.e.indention = false;
                breaks = false;
            }
        }
    }
}

/// A mapping or sequence written in block style (so below its key or `-`).
fn is_block_collection(node: &Node) -> bool {
    !node.flow && !node.is_empty_collection() && matches!(node.content, Content::Mapping(_) | Content::Sequence(_))
}

/// What go-yaml v3's encoder asks the emitter for: the tag to write, if any (a tag stays where
/// the text would not read back as it, so `!!int abc`; a string whose text reads as something
/// else is quoted instead), and the style.
fn encoded_tag(s: &Scalar) -> (Option<&'static str>, Style) {
    let mut force_quoting = false;
    let tag = match s.tag {
        tag if s.explicit_tag => tag_name(tag),
        ScalarTag::None => None,
        ScalarTag::Str if s.style != Style::Plain => None,
        tag => {
            let resolved = resolve_untagged(&s.text).0;
            if resolved == tag {
                None
            } else if tag == ScalarTag::Str {
                force_quoting = true;
                None
            } else {
                tag_name(tag)
            }
        }
    };
    let style = match s.style {
        Style::Plain if s.text.contains('\n') => Style::Literal,
        Style::Plain if force_quoting => Style::DoubleQuoted,
        style => style,
    };
    (tag, style)
}

fn tag_name(tag: ScalarTag) -> Option<&'static str> {
    Some(match tag {
        ScalarTag::Str => "!!str",
        ScalarTag::Int => "!!int",
        ScalarTag::Float => "!!float",
        ScalarTag::Bool => "!!bool",
        ScalarTag::Null => "!!null",
        ScalarTag::Timestamp => "!!timestamp",
        ScalarTag::Binary => "!!binary",
        ScalarTag::Merge => "!!merge",
        ScalarTag::None | ScalarTag::Other => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::node_tree::parse_first_document;
    use super::*;

    fn round_trip(text: &str) -> String {
        emit_document(&parse_first_document(text).unwrap())
    }

    #[test]
    fn block_documents_come_back_as_written() {
        let text = "a: 1.50\nb: ~\nc:\n'd': \"x\"\ne: |\n  t\nf:\n- 0x1F\n- yes\ng:\n  h: Null\n";
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn flow_collections_stay_flow() {
        assert_eq!(round_trip("a: [x, \"y\", {b: 1}]\nc: {}\nd: []\n"), "a: [x, \"y\", {b: 1}]\nc: {}\nd: []\n");
        // Plain text with a flow indicator is quoted inside a flow collection only.
        assert_eq!(round_trip("a: [\"b:c\", 'd,e']\nf: b:c\n"), "a: [\"b:c\", 'd,e']\nf: b:c\n");
    }

    #[test]
    fn a_tag_stays_where_the_text_does_not_read_as_it() {
        let mut doc = parse_first_document("a: 1\nb: x\n").unwrap();
        let Content::Mapping(entries) = &mut doc.content else { panic!() };
        for (e, text) in entries.iter_mut().zip(["abc", "12"]) {
            let Content::Scalar(s) = &mut e.value.content else { panic!() };
            s.text = text.into();
        }
        assert_eq!(emit_document(&doc), "a: !!int abc\nb: \"12\"\n");
        assert_eq!(round_trip("a: !!int abc\nb: !!str 1\nc: !!float '1'\n"), "a: !!int abc\nb: !!str 1\nc: !!float '1'\n");
    }

    #[test]
    fn comments_come_back_in_their_places() {
        let text = "# top\n\n# a\na: 1 # one\nb:\n  # c\n  c: x # two\nd: # three\n- e\n";
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn comments_after_quoted_scalars_are_kept() {
        let text = "a:\n  b: \"4#2\" # one\n  c: 'it''s' # two\n  d: e#f\n";
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn folded_scalars_get_go_yaml_v3s_extra_breaks() {
        assert_eq!(round_trip("a: >\n  b\n  c\n"), "a: >\n  b c\n\n");
    }

    #[test]
    fn long_lines_are_not_folded() {
        let long = format!("a: [{}]\nb: {}\n", vec!["word"; 30].join(", "), vec!["word"; 30].join(" "));
        assert_eq!(round_trip(&long), long);
    }
}
