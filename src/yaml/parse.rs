//! YAML (and JSON) text into `serde_json::Value` documents, typed the way kustomize types them.
//!
//! kustomize reads resources with go-yaml v3 into nodes, expands aliases and merge keys (kyaml's
//! `DeAnchor`), writes the nodes back out with the v3 encoder, decodes that text into
//! `map[string]interface{}` and marshals it to JSON. The values built here are what comes out of
//! that chain:
//!
//! * only plain, untagged scalars are resolved (null, bool, int, float, timestamp), with go-yaml
//!   v3's resolver: YAML 1.2 booleans, Go's base-0 integer syntax (so `012` is octal), floats,
//!   and timestamps turned into the RFC 3339 text Go's JSON encoder writes for a `time.Time`;
//!   `.inf` and `.nan` are errors (JSON has no such numbers; kustomize fails on them);
//! * quoted and block scalars are strings; explicit `!!str`, `!!int`, `!!float`, `!!bool`,
//!   `!!null`, `!!timestamp` and `!!binary` (base64-decoded) tags are honoured; other tags leave
//!   the text as is;
//! * inside flow collections the v3 encoder writes empty plain scalars as `''` and quotes plain
//!   scalars containing `:`, so there an empty value is `""` and a timestamp with a time of day
//!   stays the text it was; an alias copied into a flow collection is typed as if written there;
//! * anchors and aliases are expanded; merge keys (`<<`) are merged as kyaml merges them
//!   (explicit keys win, earlier maps in a list win) with kyaml's error messages;
//! * duplicate keys are an error worded as go-yaml v3 words it;
//! * mapping keys are the key's text as written (`1: a` has the key `"1"`).
//!
//! Syntax is saphyr's (YAML 1.2), brought closer to go-yaml's where inputs differ in practice:
//! a tab after `:` separates like a space, and the `\/` escape is refused.
use std::borrow::Cow;
use crate::fast_hash::{FastHashMap, FastHashSet};
use std::fmt;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Value};

use super::empty_nulls::{EmptyNulls, Quote, QuotedScalars};
use super::node_path::Step;
use super::go_syntax::quote as go_quote;
use super::scalar::{plain_key_as_go, resolve_scalar, yaml_1_1_boolean, TagKind, LAST_KEY_WINS};

/// A parse failure with 1-based line and column where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The lines go-yaml's marks would name where they are not `line`: see [`GoMarks`].
    pub go_marks: Option<GoMarks>,
}

/// The 1-based lines of go-yaml's two marks for an error, where they differ from where the error
/// points: for an error of the parser, the problem is where it points and the context where the
/// innermost collection being parsed starts; for a quoted scalar the text ends in, the context
/// is the scalar's start (where the error points) and the problem the end of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoMarks {
    pub problem: usize,
    pub context: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    fn at(mark: Marker, message: impl Into<String>) -> Self {
        ParseError { line: mark.line().max(1), column: mark.col() + 1, message: message.into(), go_marks: None }
    }

    /// go-yaml v2's words for the error (`yaml: line N: problem`), as kustomize reads a
    /// kustomization (sigs.k8s.io/yaml): the line of the problem first, then of the context.
    pub fn go_yaml_v2(&self) -> String {
        self.go_yaml(false)
    }

    /// go-yaml v3's words for the error, as kustomize reads a resource file (kyaml): the line of
    /// the context (the collection being parsed) first, then of the problem.
    pub fn go_yaml_v3(&self) -> String {
        self.go_yaml(true)
    }

    /// go-yaml counts lines from 0 and adds 1 for the scanner's errors only, so a parser error
    /// names the line before the one it points at; a line 0 is not named at all.
    fn go_yaml(&self, context_first: bool) -> String {
        let problem = super::go_syntax::go_yaml_error_wording(&self.message);
        let parser_error = problem.starts_with("did not find expected");
        // Where no marks are known, both are where the error points (as the scanner's mostly are).
        let marks = self.go_marks.unwrap_or(GoMarks { problem: self.line, context: self.line });
        let (problem_line, context_line) = (marks.problem.saturating_sub(1), marks.context.saturating_sub(1));
        let scanner_step = usize::from(!parser_error);
        let line = match (context_first, problem_line, context_line) {
            (true, _, c) if c != 0 => c + scanner_step,
            (_, p, _) if p != 0 => p + scanner_step,
            (false, _, c) => c,
            _ => 0,
        };
        match line {
            0 => format!("yaml: {problem}"),
            n => format!("yaml: line {n}: {problem}"),
        }
    }
}

impl From<ScanError> for ParseError {
    fn from(e: ScanError) -> Self {
        ParseError::at(*e.marker(), e.info())
    }
}

/// Parses a multi-document YAML (or JSON) stream. Empty documents (nothing, only comments, or explicit null)
/// are returned as Value::Null so callers can skip them.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, ParseError> {
    Ok(parse_stream(text, false)?.into_iter().map(|doc| doc.value).collect())
}

/// Which string map of a document's `metadata` a value is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataMap {
    Labels,
    Annotations,
}

/// The text of a label or annotation value that does not read as a string (`1.10`, `~`, `true`,
/// `!!int 5`): kustomize sets labels and annotations again as the texts of their values, where a
/// number would print otherwise (`1.1`) and a null would delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataText {
    pub map: MetadataMap,
    pub key: String,
    pub text: String,
}

/// [`parse_documents`], each document with the texts of its label and annotation values that
/// do not read as strings (see [`MetadataText`]); annotations other than nulls are their texts.
pub fn parse_documents_with_metadata_texts(text: &str) -> Result<Vec<(Value, Vec<MetadataText>)>, ParseError> {
    OBJECT_METADATA.with(|flag| flag.set(true));
    let parsed = parse_stream(text, false);
    OBJECT_METADATA.with(|flag| flag.set(false));
    Ok(parsed?.into_iter().map(|doc| (doc.value, doc.metadata_texts)).collect())
}

thread_local! {
    /// Set while documents that kustomize reads as objects (patches) are parsed outside resource
    /// mode: their `metadata` maps are read as kustomize's object model reads them. Other YAML (a
    /// chart's values, a kustomization) keeps such values as they are.
    static OBJECT_METADATA: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A document of a resource file, with what kyaml's YAML nodes know beyond its value.
pub struct ResourceDocument {
    pub value: Value,
    /// Where it holds nulls written as nothing.
    pub empty_nulls: Option<EmptyNulls>,
    /// Where it holds quoted scalars (outside anchors, merge keys and flow collections).
    pub quoted: Option<QuotedScalars>,
    /// The first mapping key that is not a scalar. kyaml keeps such a key in its nodes and
    /// kustomize fails only when it turns the resource into JSON, after reading all resources;
    /// the entry is left out of `value`.
    pub invalid_key: Option<ParseError>,
    /// Where it holds a plain mapping key go-yaml reads as a number or a boolean (`1: a`):
    /// kyaml keeps the key's node, and kustomize fails when it turns the resource into JSON.
    pub plain_keys: Vec<Vec<Step>>,
}

/// [`parse_documents`] as kustomize reads resource files (see [`ResourceDocument`]).
pub fn parse_resource_documents(text: &str) -> Result<Vec<ResourceDocument>, ParseError> {
    let docs = parse_stream(text, true)?.into_iter();
    Ok(docs
        .map(|doc| ResourceDocument {
            value: doc.value,
            empty_nulls: EmptyNulls::from_paths(doc.empty_nulls),
            quoted: QuotedScalars::from_marked(doc.quoted),
            invalid_key: doc.invalid_key,
            plain_keys: doc.plain_keys,
        })
        .collect())
}

/// Parses exactly one document (a stream of several is an error; empty text is Value::Null).
///
/// Empty documents around the one document (`---` separators, comment-only documents) are
/// ignored; two documents with content are an error.
pub fn parse_document(text: &str) -> Result<Value, ParseError> {
    let mut found: Option<Value> = None;
    for Document { value, start, .. } in parse_stream(text, false)? {
        if value.is_null() {
            continue;
        }
        if found.is_some() {
            return Err(ParseError::at(start, "expected a single document in the stream, found more than one"));
        }
        found = Some(value);
    }
    Ok(found.unwrap_or(Value::Null))
}

/// Parses one document as kustomize reads a kustomization file (sigs.k8s.io/yaml over go-yaml
/// v2): a repeated mapping key replaces the earlier value instead of being an error (its strict
/// decoding was reverted), and the YAML 1.1 booleans `y`, `yes`, `on`, `n`, `no`, `off` (in
/// their three spellings) are booleans; as plain mapping keys they are the keys `"true"` and
/// `"false"` (JSON's text of the boolean).
pub fn parse_document_last_key_wins(text: &str) -> Result<Value, ParseError> {
    LAST_KEY_WINS.with(|flag| flag.set(true));
    let result = parse_document(text);
    LAST_KEY_WINS.with(|flag| flag.set(false));
    result
}

/// A folded scalar as go-yaml folds it, from the value YAML 1.2 gives (saphyr's): go-yaml puts
/// one more line break before a more-indented line that follows a line of normal indentation
/// (go-yaml issue 827), and kustomize prints that; not where a space ends a line or the value
/// (go-yaml's encoder then writes it double-quoted, exactly).
fn go_yaml_folding(folded: &str) -> String {
    let mut out = String::with_capacity(folded.len() + 8);
    let mut previous_content_more_indented = true;
    for (i, line) in folded.split('\n').enumerate() {
        let more_indented = line.starts_with([' ', '\t']);
        if i > 0 {
            if more_indented && !previous_content_more_indented {
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(line);
        if !line.is_empty() {
            previous_content_more_indented = more_indented;
        }
    }
    out
}

/// One document of a stream.
struct Document {
    value: Value,
    /// Where the document starts.
    start: Marker,
    /// The texts of its label and annotation values that do not read as strings.
    metadata_texts: Vec<MetadataText>,
    /// Paths to the empty nulls in it (resource files only).
    empty_nulls: Vec<Vec<Step>>,
    /// Paths to the quoted scalars in it (resource files only).
    quoted: Vec<(Vec<Step>, Quote)>,
    /// The first non-scalar mapping key (resource files only).
    invalid_key: Option<ParseError>,
    /// Paths to the plain keys read as numbers or booleans (resource files only).
    plain_keys: Vec<Vec<Step>>,
}

/// All documents of the stream.
fn parse_stream(text: &str, resource_mode: bool) -> Result<Vec<Document>, ParseError> {
    if resource_mode {
        refuse_yaml_directive(text)?;
    }
    let mut patched: Option<String> = document_boms_removed(text);
    // go-yaml keeps a byte order mark inside a document as a character; saphyr refuses it: it
    // stands in as a private-use character the text lacks, turned back in the values.
    let mut bom_stand_in = None;
    let current = patched.as_deref().unwrap_or(text);
    let body = current.strip_prefix(BOM).unwrap_or(current);
    if body.contains(BOM) {
        if let Some(stand_in) = ('\u{e000}'..='\u{f8ff}').find(|c| !current.contains(*c)) {
            let head = &current[..current.len() - body.len()];
            let replaced = format!("{head}{}", body.replace(BOM, stand_in.encode_utf8(&mut [0; 4])));
            patched = Some(replaced);
            bom_stand_in = Some(stand_in);
        }
    }
    let mut fixes = 0;
    let mut flow_fix: Option<FlowFix> = None;
    loop {
        let current = patched.as_deref().unwrap_or(text);
        match build(current, resource_mode) {
            Err(Failure::Fixable(error, fix)) if fixes < MAX_TAB_FIXES => {
                let at = Source::new(current).byte_offset(fix.at());
                let fixed = match fix {
                    Fix::TabAfterColon(_) => tab_made_space(current, at),
                    Fix::QuotedScalarIndent(_) => indent_quoted_scalar(current, at),
                    Fix::QuotedScalarEscape(_) => escaped_single_quotes_read(current, at),
                    Fix::FlowIndent(_) => indent_flow_line(current, at, &mut flow_fix),
                    Fix::AliasBeforeColon(_) => alias_ended_at_colon(current, at),
                    Fix::CommentAfterQuote(_) => comment_after_quote_separated(current, at),
                };
                // Nothing left to fix: the text is refused for another reason.
                match fixed {
                    Some(next) if next != current => patched = Some(next),
                    _ => return Err(error),
                }
                fixes += 1;
            }
            Err(Failure::Fixable(error, _)) | Err(Failure::Error(error)) => return Err(error),
            Ok(mut docs) => {
                if let Some(stand_in) = bom_stand_in {
                    for doc in &mut docs {
                        bom_restored(&mut doc.value, stand_in);
                    }
                }
                return Ok(docs);
            }
        }
    }
}

const BOM: char = '\u{feff}';

/// go-yaml takes a tab after `:` as the separating blank, saphyr (following YAML 1.2) does not
/// before some values: the tab before `at` made a space. Positions stay the same, a tab and a
/// space being one character each.
fn tab_made_space(text: &str, at: usize) -> Option<String> {
    let tab = at.checked_sub(1).filter(|&i| text.as_bytes()[i] == b'\t')?;
    let mut out = text.to_owned();
    out.replace_range(tab..=tab, " ");
    Some(out)
}

/// go-yaml reads `\'` in a double-quoted scalar as a single quote, saphyr refuses it: `text`
/// with every `\'` of the double-quoted scalar starting at byte `start` written `'`.
fn escaped_single_quotes_read(text: &str, start: usize) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&b'"') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..=start]);
    let mut i = start + 1;
    loop {
        match *bytes.get(i)? {
            b'\\' if bytes.get(i + 1) == Some(&b'\'') => {
                out.push('\'');
                i += 2;
            }
            b'\\' => {
                let next = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&text[i..i + 1 + next]);
                i += 1 + next;
            }
            b'"' => break,
            _ => {
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + len]);
                i += len;
            }
        }
    }
    out.push_str(&text[i..]);
    Some(out)
}

/// The line last indented inside a flow collection, and by how much.
struct FlowFix {
    line_start: usize,
    added: usize,
}

/// go-yaml does not check indentation inside a flow collection (`[...]`, `{...}`); saphyr
/// wants its lines indented more than the block holding it. Leading blanks inside a flow
/// collection mean nothing (a token starts the line, and quoted or plain scalars broken across
/// lines fold them away), so the line of the token at byte `at` is indented further: by the
/// indentation of the line before it plus one, then twice as much each time saphyr still
/// refuses the same line.
fn indent_flow_line(text: &str, at: usize, last: &mut Option<FlowFix>) -> Option<String> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..at].bytes().all(|b| b == b' ') {
        return None;
    }
    let add = match last {
        Some(fix) if fix.line_start == line_start => fix.added.checked_mul(2).filter(|&n| n <= 1 << 16)?,
        _ => {
            let previous = text[..line_start.saturating_sub(1)]
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
            (previous + 1).saturating_sub(at - line_start).max(1)
        }
    };
    *last = Some(FlowFix { line_start, added: add });
    let mut out = String::with_capacity(text.len() + add);
    out.push_str(&text[..line_start]);
    out.extend(std::iter::repeat_n(' ', add));
    out.push_str(&text[line_start..]);
    Some(out)
}

/// go-yaml's anchor and alias names are letters, digits, `_` and `-`, so `*app:` is the alias
/// `app` before a `:`; saphyr reads the alias `app:`. A blank put before the `:` of the alias at
/// byte `at` makes saphyr read it as go-yaml does.
fn alias_ended_at_colon(text: &str, at: usize) -> Option<String> {
    let rest = text.get(at..)?.strip_prefix('*')?;
    let name = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-').count();
    if name == 0 || rest.as_bytes().get(name) != Some(&b':') {
        return None;
    }
    let mut out = text.to_owned();
    out.insert(at + 1 + name, ' ');
    Some(out)
}

/// go-yaml takes a `#` right after a quoted scalar's closing quote as a comment; saphyr wants
/// a blank before it: one goes there.
fn comment_after_quote_separated(text: &str, at: usize) -> Option<String> {
    if !text.get(at..)?.starts_with('#') || !text[..at].ends_with(['\'', '"']) {
        return None;
    }
    let mut out = text.to_owned();
    out.insert(at, ' ');
    Some(out)
}

/// The byte order marks of the text back in place of their stand-in, in keys and strings.
fn bom_restored(value: &mut Value, stand_in: char) {
    let back = |s: &str| s.replace(stand_in, "\u{feff}");
    match value {
        Value::String(s) if s.contains(stand_in) => *s = back(s),
        Value::Array(items) => items.iter_mut().for_each(|v| bom_restored(v, stand_in)),
        Value::Object(map) if map.keys().any(|k| k.contains(stand_in)) => {
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (k, mut v) in entries {
                bom_restored(&mut v, stand_in);
                map.insert(back(&k), v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(|v| bom_restored(v, stand_in)),
        _ => {}
    }
}

/// kustomize splits a resource file at its `---` lines and decodes each part on its own, so
/// each may start with a byte order mark, as the file's first may: `text` without those marks
/// (`None` when there are none). A mark anywhere else stays, and is refused.
fn document_boms_removed(text: &str) -> Option<String> {
    if !text.contains(BOM) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut after_separator = false;
    for line in text.split_inclusive('\n') {
        let line = if after_separator { line.strip_prefix(BOM).unwrap_or(line) } else { line };
        after_separator = line.trim_end() == "---";
        out.push_str(line);
    }
    Some(out)
}

/// A `%YAML` directive at the start of a resource file: kustomize's reader splits it from its
/// document and refuses it (`incompatible YAML document` for any version but 1.1, which then
/// has no document).
fn refuse_yaml_directive(text: &str) -> Result<(), ParseError> {
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(version) = line.strip_prefix("%YAML") {
            let message = match version.split('#').next().unwrap_or("").trim() {
                "1.1" => "did not find expected <document start>",
                _ => "found incompatible YAML document",
            };
            return Err(ParseError { line: i + 1, column: 1, message: message.into(), go_marks: None });
        }
        break;
    }
    Ok(())
}

/// How many tabs after `:` (or quoted scalars' continuation lines) are fixed before giving up.
const MAX_TAB_FIXES: usize = 10_000;

enum Failure {
    Error(ParseError),
    /// Something go-yaml reads and saphyr refuses, that a change of the text can get past.
    Fixable(ParseError, Fix),
}

/// What saphyr refused, with the character index it gave.
enum Fix {
    /// A tab after `:`; the index after the tab.
    TabAfterColon(usize),
    /// A quoted scalar's continuation line under-indented; the scalar's start.
    QuotedScalarIndent(usize),
    /// An unknown escape (`\'`) in a double-quoted scalar; the scalar's start.
    QuotedScalarEscape(usize),
    /// A token inside a flow collection not indented more than the block holding it.
    FlowIndent(usize),
    /// An unknown alias (`*app:` read as `app:`); the `*`.
    AliasBeforeColon(usize),
    /// A `#` right after a token; the `#`.
    CommentAfterQuote(usize),
}

impl Fix {
    fn at(&self) -> usize {
        match *self {
            Fix::TabAfterColon(at)
            | Fix::QuotedScalarIndent(at)
            | Fix::QuotedScalarEscape(at)
            | Fix::FlowIndent(at)
            | Fix::AliasBeforeColon(at)
            | Fix::CommentAfterQuote(at) => at,
        }
    }
}

/// `text` with the continuation lines of the quoted scalar starting at byte `start` indented to
/// at least the scalar's own column; `None` when there is no closed quoted scalar there.
fn indent_quoted_scalar(text: &str, start: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let quote = *bytes.get(start).filter(|&&b| b == b'\'' || b == b'"')?;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..start].chars().count();
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..=start]);
    let mut i = start + 1;
    loop {
        let b = *bytes.get(i)?;
        match b {
            b'\\' if quote == b'"' => {
                let next = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&text[i..i + 1 + next]);
                i += 1 + next;
                continue;
            }
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => {
                out.push_str("''");
                i += 2;
                continue;
            }
            b if b == quote => break,
            b'\n' => {
                out.push('\n');
                i += 1;
                let rest = &text[i..];
                let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                let document_marker = rest.starts_with("---") || rest.starts_with("...");
                if blanks < column && !document_marker {
                    out.extend(std::iter::repeat_n(' ', column - blanks));
                }
                continue;
            }
            _ => {}
        }
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + len]);
        i += len;
    }
    out.push_str(&text[i..]);
    Some(out)
}

impl From<ParseError> for Failure {
    fn from(e: ParseError) -> Self {
        Failure::Error(e)
    }
}

fn build(text: &str, resource_mode: bool) -> Result<Vec<Document>, Failure> {
    let mut builder = Builder::new(text);
    builder.resource_mode = resource_mode;
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(next) => next,
            Err(e) => {
                let at = e.marker().index();
                let fix = match e.info() {
                    "':' must be followed by a valid YAML whitespace" => Some(Fix::TabAfterColon(at)),
                    "invalid indentation in quoted scalar" => Some(Fix::QuotedScalarIndent(at)),
                    "while parsing a quoted scalar, found unknown escape character" => Some(Fix::QuotedScalarEscape(at)),
                    // saphyr checks indentation only inside flow collections there
                    "invalid indentation" | "invalid indentation in flow construct" => Some(Fix::FlowIndent(at)),
                    "while parsing node, found unknown anchor" => Some(Fix::AliasBeforeColon(at)),
                    "comments must be separated from other tokens by whitespace" => Some(Fix::CommentAfterQuote(at)),
                    _ => None,
                };
                match fix {
                    Some(fix) => return Err(Failure::Fixable(e.clone().into(), fix)),
                    None if e.info() == "recursion limit exceeded" => {
                        let message = format!("flow collections nested deeper than {MAX_FLOW_DEPTH}");
                        return Err(Failure::Error(ParseError::at(*e.marker(), message)));
                    }
                    None => {
                        let mut e = ParseError::from(e);
                        e.go_marks = go_marks(&e, text, &builder);
                        return Err(Failure::Error(e));
                    }
                }
            }
        };
        if builder.event(event, span)? {
            break;
        }
    }
    Ok(builder.docs)
}

/// go-yaml's marks for an error of saphyr's (see [`GoMarks`]).
fn go_marks(e: &ParseError, text: &str, builder: &Builder) -> Option<GoMarks> {
    let wording = super::go_syntax::go_yaml_error_wording(&e.message);
    if wording.starts_with("did not find expected") {
        let context = builder.stack.last().map_or(e.line, |frame| frame.start.line().max(1));
        return Some(GoMarks { problem: e.line, context });
    }
    if wording == "found unexpected end of stream" && e.message.contains("quoted scalar") {
        let end = text.bytes().filter(|&b| b == b'\n').count() + 1;
        return Some(GoMarks { problem: end, context: e.line });
    }
    if wording == "found a tab character that violates indentation" {
        // The scalar starts where the error points; the tab opens a later line.
        let tab = text.lines().enumerate().skip(e.line).find(|(_, l)| l.trim_start_matches(' ').starts_with('\t'));
        return Some(GoMarks { problem: tab.map_or(e.line, |(index, _)| index + 1), context: e.line });
    }
    None
}

/// Nesting deeper than this is an error: go-yaml's bound (real documents stay far below). Values
/// this deep are walked recursively; a build runs on threads with stacks large enough for them
/// (`crate::stack`). Flow collections nest at most 255 deep, the bound of saphyr's scanner.
pub const MAX_DEPTH: usize = 10_000;

/// How deep flow collections (`[`, `{`) may nest: saphyr's scanner counts them in a byte.
pub const MAX_FLOW_DEPTH: usize = 255;

/// One step of a path inside a value.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A scalar inside a block collection whose value differs when the collection ends up inside a
/// flow collection (an anchored block value aliased in flow context): the path to it, stored
/// leaf first, and its value there.
type FlowPatch = (Vec<Seg>, Value);

/// A value anchored with `&name`, kept for its aliases.
struct Anchored {
    /// The value as built, or for a scalar as it reads in block context.
    value: Value,
    /// How the value changes when copied into a flow collection.
    flow_patches: Vec<FlowPatch>,
    /// The scalar's text, for an alias used as a mapping key.
    key: Option<String>,
    /// Nodes in the value, to bound alias expansion.
    size: usize,
    /// The value's bytes as the copy budget counts them ([`crate::budget::bytes`]).
    bytes: u64,
}

/// A finished node on its way into its parent.
struct Node {
    value: Value,
    /// The text of a scalar in key position (`None` for values and collections).
    text: Option<String>,
    /// A plain `<<` (a merge key when in key position).
    merge: bool,
    /// The node is an alias.
    alias: bool,
    /// For a sequence: the index of its first item that is an alias to something not a mapping.
    non_map_alias: Option<usize>,
    /// Kept only while inside an anchored block collection.
    flow_patches: Vec<FlowPatch>,
    start: Marker,
    size: usize,
}

/// A key waiting for its value.
struct PendingKey {
    text: String,
    merge: bool,
    start: Marker,
    /// A non-scalar key whose entry is left out (see [`parse_resource_documents`]).
    dropped: bool,
}

/// An open collection. Its items wait on the builder's stacks ([`Builder::values`],
/// [`Builder::entries`]) until it ends; then it is built once at its exact size.
enum Collection {
    /// A sequence: where its items begin on the value stack, and how many it has so far.
    Seq { start: usize, len: usize },
    Map(MapState),
}

/// A mapping's entry waiting on the entry stack.
struct Entry {
    key: String,
    value: Value,
    /// The key's line (0 for keys that came from a merge).
    line: usize,
}

/// Mappings up to this many keys look a key up by comparing it with each; larger ones index
/// their keys.
const SCAN_KEYS: usize = 16;

/// The `<<` keys of a mapping as kyaml handles them: it removes the first key spelled `<<`
/// (merging when it is a merge key, dropping it when it is a quoted one), and merges again when
/// a merge key follows a dropped quoted one.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum MergeKeys {
    #[default]
    None,
    /// A quoted `"<<"` key came first and was dropped.
    DroppedQuoted,
    /// The first `<<` was a merge key.
    Merged,
    /// A merge key after a dropped quoted one, at this line; it stays a key `<<` for duplicates.
    MergedKept(usize),
}

struct MapState {
    /// Where the mapping's entries begin on the entry stack (they end at its top while the
    /// mapping is the innermost open collection).
    start: usize,
    /// Each key's position among the entries, once there are more than [`SCAN_KEYS`].
    index: Option<FastHashMap<String, usize>>,
    pending: Option<PendingKey>,
    /// Set once a key spelled `<<` is met.
    merging: Option<Box<Merging>>,
}

/// What a mapping with a `<<` key keeps track of.
#[derive(Default)]
struct Merging {
    keys: MergeKeys,
    /// Keys whose value came from a merge key and was not set explicitly (yet).
    merged: FastHashSet<String>,
    /// First line of explicit keys that overrode a merged value.
    override_lines: FastHashMap<String, usize>,
}

struct Frame {
    collection: Collection,
    anchor: usize,
    flow: bool,
    start: Marker,
    size: usize,
    non_map_alias: Option<usize>,
    flow_patches: Vec<FlowPatch>,
}

/// The bytes a scalar's text holds room for: its length when borrowed from the input.
fn text_capacity(text: &Cow<'_, str>) -> usize {
    match text {
        Cow::Borrowed(text) => text.len(),
        Cow::Owned(text) => text.capacity(),
    }
}

/// The path the open collections `frames` lead to: each sequence's next index, each mapping's
/// pending key; `None` under a merge key.
fn frames_path(frames: &[Frame]) -> Option<Vec<Step>> {
    let mut path = Vec::with_capacity(frames.len() + 1);
    for frame in frames {
        match &frame.collection {
            Collection::Seq { len, .. } => path.push(Step::Index(*len)),
            Collection::Map(state) => match &state.pending {
                Some(key) if !key.merge && state.merging.is_none() => path.push(Step::Key(key.text.clone())),
                _ => return None,
            },
        }
    }
    Some(path)
}

struct Builder<'a> {
    source: Source<'a>,
    /// A second cursor, moved forward as node events come (they come in text order).
    items: Source<'a>,
    docs: Vec<Document>,
    /// Reading a resource file: note where empty nulls are, and leave out entries with a
    /// non-scalar key instead of failing (see [`ResourceDocument`]).
    resource_mode: bool,
    /// The empty nulls of the current document.
    empty_nulls: Vec<Vec<Step>>,
    /// The quoted scalars of the current document.
    quoted: Vec<(Vec<Step>, Quote)>,
    /// The label and annotation values of the current document that do not read as strings.
    metadata_texts: Vec<MetadataText>,
    /// The first non-scalar key of the current document.
    invalid_key: Option<ParseError>,
    /// The plain keys of the current document read as numbers or booleans.
    plain_keys: Vec<Vec<Step>>,
    doc_start: Marker,
    root: Option<Value>,
    stack: Vec<Frame>,
    /// The items of the open sequences, innermost last.
    values: Vec<Value>,
    /// The entries of the open mappings, innermost last.
    entries: Vec<Entry>,
    anchors: FastHashMap<usize, Anchored>,
    /// Anchored block collections open on the stack (flow patches are kept only inside them).
    anchored_blocks: usize,
    /// Nodes copied by alias expansion in the current document.
    expanded: usize,
    /// The build's bound on copied nodes, across documents and files.
    budget: std::sync::Arc<crate::budget::Budget>,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str) -> Self {
        Builder {
            source: Source::new(text),
            items: Source::new(text),
            docs: Vec::new(),
            resource_mode: false,
            empty_nulls: Vec::new(),
            quoted: Vec::new(),
            metadata_texts: Vec::new(),
            invalid_key: None,
            plain_keys: Vec::new(),
            doc_start: Marker::new(0, 1, 0),
            root: None,
            stack: Vec::new(),
            values: Vec::new(),
            entries: Vec::new(),
            anchors: FastHashMap::default(),
            anchored_blocks: 0,
            expanded: 0,
            budget: crate::budget::current(),
        }
    }

    /// Handles one event; true at the end of the stream.
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<bool, ParseError> {
        match event {
            Event::StreamEnd => return Ok(true),
            Event::StreamStart | Event::Nothing => {}
            Event::DocumentStart(_) => {
                self.doc_start = span.start;
                self.root = None;
                self.stack.clear();
                self.values.clear();
                self.entries.clear();
                self.anchors.clear();
                self.anchored_blocks = 0;
                self.expanded = 0;
                self.empty_nulls.clear();
                self.quoted.clear();
                self.metadata_texts.clear();
                self.invalid_key = None;
                self.plain_keys.clear();
            }
            Event::DocumentEnd => {
                let value = self.root.take().unwrap_or(Value::Null);
                let empty_nulls = std::mem::take(&mut self.empty_nulls);
                let quoted = std::mem::take(&mut self.quoted);
                let invalid_key = self.invalid_key.take();
                let metadata_texts = std::mem::take(&mut self.metadata_texts);
                let plain_keys = std::mem::take(&mut self.plain_keys);
                self.docs.push(Document { value, start: self.doc_start, metadata_texts, empty_nulls, quoted, invalid_key, plain_keys });
            }
            Event::Scalar(..) | Event::Alias(_) | Event::SequenceStart(..) | Event::MappingStart(..)
                if matches!(self.stack.last(), Some(Frame { collection: Collection::Seq { .. }, flow: false, .. })) =>
            {
                self.refuse_tab_after_dash(span.start)?;
                return self.event_node(event, span).map(|()| false);
            }
            _ => return self.event_node(event, span).map(|()| false),
        }
        Ok(false)
    }

    /// A node's event.
    fn event_node(&mut self, event: Event<'_>, span: Span) -> Result<(), ParseError> {
        match event {
            Event::Scalar(text, style, anchor, tag) => self.scalar(text, style, anchor, tag.as_deref(), span)?,
            Event::Alias(id) => self.alias(id, span)?,
            Event::SequenceStart(anchor, _) => {
                self.open(Collection::Seq { start: self.values.len(), len: 0 }, anchor, span)?
            }
            Event::MappingStart(anchor, _) => {
                let state = MapState { start: self.entries.len(), index: None, pending: None, merging: None };
                self.open(Collection::Map(state), anchor, span)?
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span)?,
            _ => {}
        }
        Ok(())
    }

    /// go-yaml refuses a tab between a block sequence's `-` and its item (it skips tabs there
    /// only inside flow collections or where no key may start); saphyr takes it as a blank.
    fn refuse_tab_after_dash(&mut self, item: Marker) -> Result<(), ParseError> {
        let at = self.items.byte_offset(item.index());
        let before = &self.items.text[..at];
        let blanks = before.trim_end_matches([' ', '\t']);
        if blanks.ends_with('-') && before[blanks.len()..].contains('\t') {
            let tab = before[blanks.len()..].find('\t').unwrap_or(0);
            let column = item.col().saturating_sub(before.len() - blanks.len() - tab);
            return Err(ParseError { line: item.line().max(1), column: column + 1, message: "found character that cannot start any token".into(), go_marks: None });
        }
        Ok(())
    }

    fn in_flow(&self) -> bool {
        self.stack.last().is_some_and(|f| f.flow)
    }

    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame { collection: Collection::Map(m), .. }) if m.pending.is_none())
    }

    fn scalar(
        &mut self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<(), ParseError> {
        if style == ScalarStyle::DoubleQuoted && text.contains('/') {
            self.source.reject_slash_escape(span)?;
        }
        let mut text = text;
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
            && text.ends_with('\n')
            && self.source.ends_unterminated_at(span.end.index())
        {
            // The last line of the file has no line break: go-yaml's clip (and keep) chomping
            // keeps only the line breaks that are there, saphyr adds one.
            text.to_mut().pop();
        }
        // The value as YAML reads it, before go-yaml's folding quirk below: what kustomize takes
        // for an annotation, which it sets again as a string without writing it out folded.
        let mut spec_text = None;
        // (Not in what sigs.k8s.io/yaml decodes, which nothing writes out folded again.)
        if style == ScalarStyle::Folded
            && (text.contains("\n ") || text.contains("\n\t"))
            && !LAST_KEY_WINS.with(|flag| flag.get())
            && !text.contains(" \n")
            && !text.ends_with(' ')
        {
            spec_text = Some(text.to_string());
            text = Cow::Owned(go_yaml_folding(&text));
        }
        let kind = TagKind::of(tag);
        let merge = style == ScalarStyle::Plain && text == "<<" && matches!(kind, TagKind::None | TagKind::Merge);
        // A key only needs its text, a value only its typed value, unless an alias may reuse
        // the node the other way.
        let is_key = self.expects_key();
        let metadata_map = if is_key { None } else { self.metadata_map_of_value() };
        let (block, in_flow_value) = if is_key && anchor == 0 {
            (Value::Null, None)
        } else {
            match resolve_scalar(&text, style, kind) {
                Ok(resolved) => resolved,
                // An annotation is its text (`.inf` is no number JSON has, and no error there).
                Err(_) if metadata_map == Some(MetadataMap::Annotations) => (Value::String(text.to_string()), None),
                Err(m) => return Err(ParseError::at(span.start, m)),
            }
        };
        // kustomize sets every resource's annotations again as strings, each the text of its
        // value (`1.10`, `0x1F`, a resource's `~`), and a patch applied to the resources a target
        // selects has its labels and annotations set so first: note the text of each such value
        // that does not read as a string; an annotation that is no null is its text at once.
        // (A timestamp reads as a string too, though not as its text.)
        let read_otherwise = !matches!(kind, TagKind::None | TagKind::Str) || !matches!(&block, Value::String(read) if *read == *text);
        let annotation_text = metadata_map == Some(MetadataMap::Annotations)
            && (spec_text.is_some() || (read_otherwise && (!block.is_null() || self.resource_mode)));
        if let Some(map) = metadata_map.filter(|_| read_otherwise && !annotation_text) {
            let key = self.pending_key_text().unwrap_or_default().to_string();
            self.metadata_texts.push(MetadataText { map, key, text: text.to_string() });
        }
        let (block, in_flow_value) = match annotation_text {
            true => (Value::String(spec_text.unwrap_or_else(|| text.to_string())), None),
            false => (block, in_flow_value),
        };
        // A key go-yaml reads as a number or a boolean (see `ResourceDocument::plain_keys`).
        let typed_key = match kind {
            TagKind::None => style == ScalarStyle::Plain,
            TagKind::Int | TagKind::Float | TagKind::Bool => true,
            _ => false,
        };
        if self.resource_mode && is_key && typed_key && plain_key_as_go(&text).is_some() {
            if let Some(path) = self.key_path(&text) {
                self.plain_keys.push(path);
            }
        }
        if self.resource_mode && !is_key && !annotation_text {
            if text.is_empty() && block.is_null() && style == ScalarStyle::Plain {
                if let Some(path) = self.block_path() {
                    self.empty_nulls.push(path);
                }
            } else if let Some(quote) = match style {
                ScalarStyle::SingleQuoted => Some(Quote::Single),
                ScalarStyle::DoubleQuoted => Some(Quote::Double),
                _ => None,
            } {
                if let Some(path) = self.block_path() {
                    self.quoted.push((path, quote));
                }
            }
        }
        // A kustomization file goes through YAML 1.1 and JSON: a plain key `on` becomes "true".
        let yaml_1_1_key = (is_key && style == ScalarStyle::Plain && kind == TagKind::None)
            .then(|| yaml_1_1_boolean(&text).filter(|_| LAST_KEY_WINS.with(|flag| flag.get())))
            .flatten();
        let text = (is_key || anchor != 0).then(|| match yaml_1_1_key {
            Some(b) => b.to_string(),
            // A resource's keys stay to the end of the build: each at its length, not in the
            // scanner's buffer of 32 bytes or more (a resource's copy at its exact size).
            None if self.resource_mode && text.len() < text_capacity(&text) => String::from(&*text),
            None => text.into_owned(),
        });
        if anchor != 0 {
            let flow_patches = in_flow_value.iter().map(|v| (Vec::new(), v.clone())).collect();
            let bytes = crate::budget::bytes(&block, u64::MAX);
            let anchored = Anchored { value: block.clone(), flow_patches, key: text.clone(), size: 1, bytes };
            self.anchors.insert(anchor, anchored);
        }
        let (value, flow_patches) = match in_flow_value {
            Some(flow_value) if self.in_flow() => (flow_value, Vec::new()),
            Some(flow_value) if self.anchored_blocks > 0 => (block, vec![(Vec::new(), flow_value)]),
            _ => (block, Vec::new()),
        };
        let node = Node {
            value,
            text: text.filter(|_| is_key),
            merge,
            alias: false,
            non_map_alias: None,
            flow_patches,
            start: span.start,
            size: 1,
        };
        self.add(node)
    }

    /// Which map of a document's `metadata` the value about to be added is a value of, outside
    /// anchors and merge keys; read without allocating, for every scalar.
    fn metadata_map_of_value(&self) -> Option<MetadataMap> {
        let [root, metadata, map] = self.stack.as_slice() else { return None };
        if !self.resource_mode && !OBJECT_METADATA.with(|flag| flag.get()) {
            return None;
        }
        fn key(frame: &Frame) -> Option<&str> {
            match &frame.collection {
                Collection::Map(state) if state.merging.is_none() => state.pending.as_ref().filter(|k| !k.merge && !k.dropped).map(|k| k.text.as_str()),
                _ => None,
            }
        }
        if self.anchored_blocks > 0 || key(root)? != "metadata" || key(map).is_none() {
            return None;
        }
        match key(metadata)? {
            "labels" => Some(MetadataMap::Labels),
            "annotations" => Some(MetadataMap::Annotations),
            _ => None,
        }
    }

    /// The key the value about to be added belongs to, in the innermost mapping.
    fn pending_key_text(&self) -> Option<&str> {
        match &self.stack.last()?.collection {
            Collection::Map(state) => state.pending.as_ref().map(|k| k.text.as_str()),
            Collection::Seq { .. } => None,
        }
    }

    /// The path of the key `text` about to be added to the innermost mapping, outside anchors
    /// and merge keys (where a path would not say where the key ends up).
    fn key_path(&self, text: &str) -> Option<Vec<Step>> {
        let (_, outer) = self.stack.split_last()?;
        if self.anchored_blocks > 0 || outer.iter().any(|frame| frame.anchor != 0) {
            return None;
        }
        let mut path = frames_path(outer)?;
        path.push(Step::Key(text.to_owned()));
        Some(path)
    }

    /// The path of the value about to be added, in block collections outside anchors and
    /// merge keys (where a path would not say where the value ends up).
    fn block_path(&self) -> Option<Vec<Step>> {
        if self.anchored_blocks > 0 || self.in_flow() {
            return None;
        }
        frames_path(&self.stack)
    }

    fn alias(&mut self, id: usize, span: Span) -> Result<(), ParseError> {
        // go-yaml's anchor and alias names are letters, digits, `_` and `-` (saphyr's take more).
        let at = self.items.byte_offset(span.start.index());
        let name = self.items.text[at..].strip_prefix('*').unwrap_or("");
        let name = &name[..name.find(|c: char| c.is_whitespace() || ",[]{}".contains(c)).unwrap_or(name.len())];
        if name.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
            return Err(ParseError::at(span.start, "did not find expected alphabetic or numeric character"));
        }
        let in_flow = self.in_flow();
        let Some(anchored) = self.anchors.get(&id) else {
            let message = if self.stack.iter().any(|f| f.anchor == id) {
                "anchor value contains itself"
            } else {
                "unknown anchor referenced"
            };
            return Err(ParseError::at(span.start, message));
        };
        self.expanded += anchored.size;
        if self.expanded > MAX_ALIAS_COPIES {
            return Err(ParseError::at(span.start, "document contains excessive aliasing"));
        }
        self.budget.charge(anchored.bytes).map_err(|e| ParseError::at(span.start, e.to_string()))?;
        let mut value = anchored.value.clone();
        let flow_patches = if in_flow {
            for (path, patch) in &anchored.flow_patches {
                apply_patch(&mut value, path, patch.clone());
            }
            Vec::new()
        } else if self.anchored_blocks > 0 {
            anchored.flow_patches.clone()
        } else {
            Vec::new()
        };
        let node = Node {
            value,
            text: anchored.key.clone(),
            merge: false,
            alias: true,
            non_map_alias: None,
            flow_patches,
            start: span.start,
            size: anchored.size,
        };
        self.add(node)
    }

    fn open(&mut self, collection: Collection, anchor: usize, span: Span) -> Result<(), ParseError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(ParseError::at(span.start, format!("exceeded max depth of {MAX_DEPTH}")));
        }
        let flow = self.in_flow() || self.source.starts_flow_collection(span.start.index());
        if anchor != 0 && !flow {
            self.anchored_blocks += 1;
        }
        self.stack.push(Frame {
            collection,
            anchor,
            flow,
            start: span.start,
            size: 1,
            non_map_alias: None,
            flow_patches: Vec::new(),
        });
        Ok(())
    }

    fn close(&mut self, span: Span) -> Result<(), ParseError> {
        let Some(frame) = self.stack.pop() else {
            return Err(ParseError::at(span.start, "unexpected end of a collection"));
        };
        if frame.anchor != 0 && !frame.flow {
            self.anchored_blocks -= 1;
        }
        // Built once at their exact size: growing a map or a list as items come doubles its
        // capacity, and a build keeps every resource's maps until it writes them.
        let value = match frame.collection {
            Collection::Seq { start, .. } => Value::Array(self.values.drain(start..).collect()),
            Collection::Map(state) => {
                let entries = self.entries.drain(state.start..);
                let mut map = Map::with_capacity(entries.len());
                for entry in entries {
                    map.insert(entry.key, entry.value);
                }
                Value::Object(map)
            }
        };
        if frame.anchor != 0 {
            let anchored = Anchored {
                bytes: crate::budget::bytes(&value, crate::budget::DEFAULT_LIMIT.saturating_mul(4)),
                value: value.clone(),
                flow_patches: frame.flow_patches.clone(),
                key: None,
                size: frame.size,
            };
            self.anchors.insert(frame.anchor, anchored);
        }
        let flow_patches = if self.anchored_blocks > 0 { frame.flow_patches } else { Vec::new() };
        let node = Node {
            value,
            text: None,
            merge: false,
            alias: false,
            non_map_alias: frame.non_map_alias,
            flow_patches,
            start: frame.start,
            size: frame.size,
        };
        self.add(node)
    }

    /// Puts a finished node into its parent (or makes it the document).
    fn add(&mut self, mut node: Node) -> Result<(), ParseError> {
        // kustomize reads a resource's annotations into a map and sets them again before
        // anything meets a repeated key there: the last one wins.
        let last_wins = self.resource_mode && self.stack.len() == 3 && self.metadata_map_of_value() == Some(MetadataMap::Annotations);
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node.value);
            return Ok(());
        };
        frame.size += node.size;
        match &mut frame.collection {
            Collection::Seq { len, .. } => {
                if node.alias && !node.value.is_object() && frame.non_map_alias.is_none() {
                    frame.non_map_alias = Some(*len);
                }
                for (path, _) in &mut node.flow_patches {
                    path.push(Seg::Index(*len));
                }
                frame.flow_patches.append(&mut node.flow_patches);
                self.values.push(node.value);
                *len += 1;
            }
            Collection::Map(state) => match state.pending.take() {
                None => {
                    let error = || ParseError::at(node.start, "mapping keys must be scalars");
                    let (text, dropped) = match node.text {
                        Some(text) => (text, false),
                        None if self.resource_mode => {
                            // Worded as the YAML decoder that meets it in kustomize words it.
                            let key = super::go_syntax::sharp_v(&node.value);
                            self.invalid_key.get_or_insert_with(|| ParseError::at(node.start, format!("invalid map key: {key}")));
                            (String::new(), true)
                        }
                        None => return Err(error()),
                    };
                    state.pending = Some(PendingKey { text, merge: node.merge, start: node.start, dropped });
                }
                Some(key) if key.dropped => {}
                Some(key) if key.text == "<<" => state.less_less(&mut self.entries, key, node, &mut frame.flow_patches)?,
                Some(key) => {
                    for (path, _) in &mut node.flow_patches {
                        path.push(Seg::Key(key.text.clone()));
                    }
                    frame.flow_patches.append(&mut node.flow_patches);
                    state.insert(&mut self.entries, key, node.value, last_wins)?;
                }
            },
        }
        Ok(())
    }
}

/// Sets the value at `path` (leaf first) inside `value`.
fn apply_patch(value: &mut Value, path: &[Seg], patch: Value) {
    let mut target = value;
    for seg in path.iter().rev() {
        let next = match seg {
            Seg::Key(k) => target.get_mut(k.as_str()),
            Seg::Index(i) => target.get_mut(*i),
        };
        match next {
            Some(next) => target = next,
            None => return,
        }
    }
    *target = patch;
}

impl MapState {
    fn duplicate(key: &PendingKey, first_line: usize) -> ParseError {
        let message = format!("mapping key {} already defined at line {}", go_quote(&key.text), first_line);
        ParseError::at(key.start, message)
    }

    /// The position of `key` among the mapping's entries (the top of `entries`).
    fn position(&self, entries: &[Entry], key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => entries[self.start..].iter().position(|e| e.key == key),
        }
    }

    /// Adds an entry whose key the mapping does not have yet.
    fn push(&mut self, entries: &mut Vec<Entry>, key: String, value: Value, line: usize) {
        let at = entries.len() - self.start;
        match &mut self.index {
            Some(index) => {
                index.insert(key.clone(), at);
            }
            None if at >= SCAN_KEYS => {
                let mut index = FastHashMap::with_capacity_and_hasher(2 * at, Default::default());
                index.extend(entries[self.start..].iter().enumerate().map(|(i, e)| (e.key.clone(), i)));
                index.insert(key.clone(), at);
                self.index = Some(index);
            }
            None => {}
        }
        entries.push(Entry { key, value, line });
    }

    /// An explicit `key: value`.
    fn insert(&mut self, entries: &mut Vec<Entry>, key: PendingKey, value: Value, last_wins: bool) -> Result<(), ParseError> {
        let line = key.start.line();
        let Some(at) = self.position(entries, &key.text) else {
            self.push(entries, key.text, value, line);
            return Ok(());
        };
        let entry = &mut entries[self.start + at];
        if last_wins || LAST_KEY_WINS.with(|flag| flag.get()) {
            entry.value = value;
            return Ok(());
        }
        // Only a value that came from a merge may be set again.
        if let Some(merging) = self.merging.as_deref_mut() {
            if merging.merged.remove(&key.text) {
                entry.value = value;
                merging.override_lines.insert(key.text, line);
                return Ok(());
            }
            if let Some(&first) = merging.override_lines.get(&key.text) {
                return Err(Self::duplicate(&key, first));
            }
        }
        Err(Self::duplicate(&key, entry.line))
    }

    /// A key spelled `<<`: a merge key (`<<: *map`, `<<: [*map, *other]`; explicit keys win,
    /// earlier maps win) or a quoted one, handled as kyaml does.
    fn less_less(&mut self, entries: &mut Vec<Entry>, key: PendingKey, node: Node, patches: &mut Vec<FlowPatch>) -> Result<(), ParseError> {
        let merging = self.merging.get_or_insert_with(Box::default);
        match (key.merge, merging.keys) {
            (true, MergeKeys::Merged | MergeKeys::MergedKept(_)) => {
                Err(ParseError::at(key.start, "duplicate merge key"))
            }
            (true, previous) => {
                merging.keys = if previous == MergeKeys::None {
                    MergeKeys::Merged
                } else {
                    MergeKeys::MergedKept(key.start.line())
                };
                self.merge(entries, node, patches)
            }
            (false, MergeKeys::None) => {
                merging.keys = MergeKeys::DroppedQuoted;
                Ok(())
            }
            (false, MergeKeys::MergedKept(line)) if self.position(entries, "<<").is_none() => {
                Err(Self::duplicate(&key, line))
            }
            (false, _) => {
                let mut own = node.flow_patches;
                for (path, _) in &mut own {
                    path.push(Seg::Key(key.text.clone()));
                }
                patches.append(&mut own);
                self.insert(entries, key, node.value, false)
            }
        }
    }

    fn merge(&mut self, entries: &mut Vec<Entry>, node: Node, patches: &mut Vec<FlowPatch>) -> Result<(), ParseError> {
        let fail = |message: &str| Err(ParseError::at(node.start, message));
        const NOT_A_MAP: &str = "map merge requires map or sequence of maps as the value";
        const ALIAS_NOT_A_MAP: &str = "invalid map merge: received alias for a non-map value";
        match node.value {
            Value::Object(source) => self.merge_map(entries, source, node.flow_patches, patches),
            _ if node.alias => return fail(ALIAS_NOT_A_MAP),
            Value::Array(items) => {
                if let Some(bad) = items.iter().position(|item| !item.is_object()) {
                    return match items[bad] {
                        _ if node.non_map_alias == Some(bad) => fail(ALIAS_NOT_A_MAP),
                        Value::Array(_) => fail("invalid map merge: received a nested sequence"),
                        _ => fail(NOT_A_MAP),
                    };
                }
                let mut item_patches: Vec<Vec<FlowPatch>> = items.iter().map(|_| Vec::new()).collect();
                for (mut path, patch) in node.flow_patches {
                    if let Some(Seg::Index(i)) = path.pop() {
                        if let Some(list) = item_patches.get_mut(i) {
                            list.push((path, patch));
                        }
                    }
                }
                for (item, item_patches) in items.into_iter().zip(item_patches) {
                    if let Value::Object(source) = item {
                        self.merge_map(entries, source, item_patches, patches);
                    }
                }
            }
            _ => return fail(NOT_A_MAP),
        }
        Ok(())
    }

    /// Adds the keys of `source` not set yet, with their flow patches.
    fn merge_map(
        &mut self,
        entries: &mut Vec<Entry>,
        source: Map<String, Value>,
        source_patches: Vec<FlowPatch>,
        patches: &mut Vec<FlowPatch>,
    ) {
        let mut taken = FastHashSet::default();
        for (k, v) in source {
            if self.position(entries, &k).is_none() {
                let merging = self.merging.get_or_insert_with(Box::default);
                merging.merged.insert(k.clone());
                if !source_patches.is_empty() {
                    taken.insert(k.clone());
                }
                self.push(entries, k, v, 0);
            }
        }
        for (path, patch) in source_patches {
            if matches!(path.last(), Some(Seg::Key(k)) if taken.contains(k)) {
                patches.push((path, patch));
            }
        }
    }
}

/// How many nodes aliases may copy in one document. kustomize (kyaml) has no bound and takes
/// minutes and gigabytes on a 9^6 "billion laughs" document (600,000 nodes, accepted here); a
/// 9^7 one (5.4 million) is refused. A copied node costs about 100 bytes.
const MAX_ALIAS_COPIES: usize = 5_000_000;

/// The input text, to tell flow collections from block ones (the events do not say).
struct Source<'a> {
    text: &'a str,
    ascii: bool,
    /// A character index and its byte offset, moved forward as collections are met.
    chars: usize,
    bytes: usize,
}

impl<'a> Source<'a> {
    fn new(text: &'a str) -> Self {
        Source { text, ascii: text.is_ascii(), chars: 0, bytes: 0 }
    }

    fn byte_offset(&mut self, char_index: usize) -> usize {
        if self.ascii {
            return char_index.min(self.text.len());
        }
        if char_index < self.chars {
            self.chars = 0;
            self.bytes = 0;
        }
        let mut rest = self.text[self.bytes..].chars();
        while self.chars < char_index {
            let Some(c) = rest.next() else { break };
            self.bytes += c.len_utf8();
            self.chars += 1;
        }
        self.bytes
    }

    /// Whether `char_index` is the end of a text whose last line has no line break.
    fn ends_unterminated_at(&mut self, char_index: usize) -> bool {
        !self.text.is_empty()
            && !self.text.ends_with(['\n', '\r'])
            && self.byte_offset(char_index) == self.text.len()
    }

    /// go-yaml (YAML 1.1) knows no `\/` escape, which saphyr (YAML 1.2) takes for `/`: finds one
    /// in the double-quoted scalar at `span` and reports it at the escape.
    fn reject_slash_escape(&mut self, span: Span) -> Result<(), ParseError> {
        let start = self.byte_offset(span.start.index());
        let end = self.byte_offset(span.end.index()).max(start);
        let raw = &self.text.as_bytes()[start..end];
        let (mut line, mut column) = (span.start.line(), span.start.col() + 1);
        let mut i = 0;
        while i < raw.len() {
            match raw[i] {
                b'\\' if raw.get(i + 1) == Some(&b'/') => {
                    let message = "while parsing a quoted scalar, found unknown escape character";
                    return Err(ParseError { line, column, message: message.into(), go_marks: None });
                }
                b'\\' if raw.get(i + 1) == Some(&b'\n') => {
                    i += 1;
                    continue;
                }
                b'\\' => {
                    i += 2;
                    column += 2;
                    continue;
                }
                b'\n' => {
                    line += 1;
                    column = 0;
                }
                b if b & 0xC0 == 0x80 => column -= 1,
                _ => {}
            }
            i += 1;
            column += 1;
        }
        Ok(())
    }

    /// Whether the collection whose event span starts at `char_index` is `{...}` or `[...]`:
    /// skips its anchor and tag (and any blanks and comments) and looks at the next character.
    fn starts_flow_collection(&mut self, char_index: usize) -> bool {
        let bytes = self.text.as_bytes();
        let mut i = self.byte_offset(char_index);
        let skip_property = |mut i: usize| {
            while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}') {
                i += 1;
            }
            i
        };
        while let Some(&b) = bytes.get(i) {
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'#' => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                b'!' if bytes.get(i + 1) == Some(&b'<') => {
                    while i < bytes.len() && bytes[i] != b'>' {
                        i += 1;
                    }
                    i += 1;
                }
                b'&' | b'!' => i = skip_property(i + 1),
                b'{' | b'[' => return true,
                _ => return false,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_document, parse_documents, ParseError, SCAN_KEYS};
    use pretty_assertions::assert_eq;
    use serde_json::{json, Value};

    #[test]
    fn a_quoted_scalar_that_indenting_cannot_fix_is_refused_at_once() {
        // A document end marker inside the scalar: once its other lines are indented, indenting
        // again changes nothing, and the parse stops there instead of trying again and again.
        let text = "a: \"x\n...b:\n  c d\"\n";
        let once = super::indent_quoted_scalar(text, 3).unwrap();
        assert_ne!(once, text);
        assert_eq!(super::indent_quoted_scalar(&once, 3).as_deref(), Some(once.as_str()));
        let error = parse_documents(text).unwrap_err();
        assert!(error.message.contains("quoted scalar"), "{}", error.message);
    }



    fn doc(text: &str) -> Value {
        parse_document(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    /// The value of `v: <scalar>`.
    fn scalar(text: &str) -> Value {
        doc(&format!("v: {text}\n"))["v"].clone()
    }

    fn err(text: &str) -> ParseError {
        match parse_documents(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn nulls_are_tilde_null_and_empty() {
        for text in ["~", "null", "Null", "NULL", ""] {
            assert_eq!(scalar(text), Value::Null, "{text}");
        }
        assert_eq!(scalar("nULL"), json!("nULL"));
        assert_eq!(scalar("none"), json!("none"));
        assert_eq!(doc("a:\nb: 1\n"), json!({"a": null, "b": 1}));
    }

    #[test]
    fn only_yaml_1_2_booleans_are_booleans() {
        for text in ["true", "True", "TRUE"] {
            assert_eq!(scalar(text), json!(true), "{text}");
        }
        for text in ["false", "False", "FALSE"] {
            assert_eq!(scalar(text), json!(false), "{text}");
        }
        for text in ["yes", "Yes", "YES", "no", "No", "on", "On", "off", "OFF", "y", "Y", "n", "N", "tRue"] {
            assert_eq!(scalar(text), json!(text), "{text}");
        }
    }

    #[test]
    fn integers_follow_go_base_prefixes() {
        let cases = [
            ("0", json!(0)),
            ("00", json!(0)),
            ("012", json!(10)),
            ("0777", json!(511)),
            ("0x1F", json!(31)),
            ("0X1f", json!(31)),
            ("0o17", json!(15)),
            ("0O17", json!(15)),
            ("0b101", json!(5)),
            ("0B11", json!(3)),
            ("-0b11", json!(-3)),
            ("-0o17", json!(-15)),
            ("-0x1F", json!(-31)),
            ("+0x1F", json!(31)),
            ("+5", json!(5)),
            ("-3", json!(-3)),
            ("-0", json!(0)),
            ("1_000", json!(1000)),
            ("0x_1F", json!(31)),
            ("1__0", json!(10)),
            ("1_", json!(1)),
        ];
        for (text, want) in cases {
            assert_eq!(scalar(text), want, "{text}");
        }
        for text in ["0x", "0o", "0b", "0b2", "_1", "+-1", "--1", "0x1p3", "1:20", "5%"] {
            assert_eq!(scalar(text), json!(text), "{text}");
        }
    }

    #[test]
    fn integers_beyond_i64_become_u64_then_floats() {
        assert_eq!(scalar("9223372036854775807"), json!(i64::MAX));
        assert_eq!(scalar("9223372036854775808"), json!(9_223_372_036_854_775_808u64));
        assert_eq!(scalar("-9223372036854775808"), json!(i64::MIN));
        assert_eq!(scalar("18446744073709551615"), json!(u64::MAX));
        assert_eq!(scalar("0xFFFFFFFFFFFFFFFF"), json!(u64::MAX));
        assert_eq!(scalar("18446744073709551616"), json!(18446744073709551616.0));
        assert_eq!(scalar("-9223372036854775809"), json!(-9223372036854775809.0));
        assert_eq!(scalar("+18446744073709551615"), json!(18446744073709551615.0));
        assert_eq!(scalar("0x10000000000000000"), json!("0x10000000000000000"));
    }

    #[test]
    fn floats_are_f64_numbers() {
        let cases = [
            ("1.5", 1.5),
            ("1.", 1.0),
            (".5", 0.5),
            ("-.5", -0.5),
            ("+.5", 0.5),
            ("1e3", 1000.0),
            ("1E+3", 1000.0),
            ("1e-3", 0.001),
            ("1.5e3", 1500.0),
            (".5e3", 500.0),
            ("08", 8.0),
            ("09", 9.0),
            ("00.5", 0.5),
            ("0.0", 0.0),
            ("1_000.5", 1000.5),
            (".5_0", 0.5),
            ("1e-400", 0.0),
            ("100000000000000000000", 1e20),
        ];
        for (text, want) in cases {
            let got = scalar(text);
            assert!(got.is_f64(), "{text}: {got:?}");
            assert_eq!(got.as_f64(), Some(want), "{text}");
        }
        assert_eq!(scalar("-0.0").as_f64().map(f64::is_sign_negative), Some(true));
        for text in ["1e", "1e+", "e3", "1.5.5", "._5", "1e400", "-1e400", "0,5"] {
            assert_eq!(scalar(text), json!(text), "{text}");
        }
    }

    #[test]
    fn infinity_and_nan_are_refused_as_kustomize_refuses_them() {
        for (text, value) in [(".inf", "+Inf"), (".Inf", "+Inf"), ("+.INF", "+Inf"), ("-.inf", "-Inf"), (".nan", "NaN"), (".NaN", "NaN")] {
            let err = parse_document(&format!("a: {text}")).unwrap_err();
            assert_eq!(err.message, format!("json: unsupported value: {value}"), "{text}");
            assert_eq!((err.line, err.column), (1, 4), "{text}");
            assert!(parse_document(&format!("a: !!float {text}")).is_err(), "{text}");
            assert_eq!(parse_document(&format!("a: '{text}'")).unwrap(), json!({"a": text}));
        }
        for text in [".Nan", "inf", "nan", "Infinity"] {
            assert_eq!(scalar(text), json!(text), "{text}");
        }
    }

    #[test]
    fn timestamps_become_go_rfc3339_text() {
        let cases = [
            ("2001-12-14", "2001-12-14T00:00:00Z"),
            ("2002-1-2", "2002-01-02T00:00:00Z"),
            ("0001-01-01", "0001-01-01T00:00:00Z"),
            ("2001-12-14T21:59:43Z", "2001-12-14T21:59:43Z"),
            ("2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43.1-05:00"),
            ("2001-12-14T21:59:43.000+00:00", "2001-12-14T21:59:43Z"),
            ("2001-12-14T21:59:43-00:00", "2001-12-14T21:59:43Z"),
            ("2001-12-14T21:59:43.123456789123+01:30", "2001-12-14T21:59:43.123456789+01:30"),
            ("2001-12-14T21:59:43,5Z", "2001-12-14T21:59:43.5Z"),
            ("2001-12-14 21:59:43.10", "2001-12-14T21:59:43.1Z"),
            ("2001-12-14 1:2:3", "2001-12-14T01:02:03Z"),
            ("2004-02-29", "2004-02-29T00:00:00Z"),
        ];
        for (text, want) in cases {
            assert_eq!(scalar(text), json!(want), "{text}");
        }
        let not_timestamps = [
            "2001-13-14",
            "2001-02-30",
            "2001-02-29",
            "20011-12-14",
            "2001-12-14x",
            "2001-12-14T21:59:43",
            "2001-12-14 21:59:43.10 -5",
            "2001-12-14T24:00:00Z",
            "2001-12-14T21:59:60Z",
            "2001-12-14_21:59:43",
        ];
        for text in not_timestamps {
            assert_eq!(scalar(text), json!(text), "{text}");
        }
    }

    #[test]
    fn quoted_and_block_scalars_are_strings() {
        assert_eq!(
            doc("a: '012'\nb: \"true\"\nc: |\n  1\nd: >-\n  null\ne: \"\"\nf: ''\n"),
            json!({"a": "012", "b": "true", "c": "1\n", "d": "null", "e": "", "f": ""})
        );
    }

    #[test]
    fn block_scalars_ending_the_file_without_a_line_break_have_none() {
        assert_eq!(doc("a: |\n  x\n  y"), json!({"a": "x\ny"}));
        assert_eq!(doc("a: >\n  x\n  y"), json!({"a": "x y"}));
        assert_eq!(doc("a: |+\n  x\n  y"), json!({"a": "x\ny"}));
        assert_eq!(doc("a: |\n  x\n  y\n"), json!({"a": "x\ny\n"}));
        assert_eq!(doc("- |\n  x\n- |\n  y"), json!(["x\n", "y"]));
        assert_eq!(doc("a: |\n  é\n  ü"), json!({"a": "é\nü"}));
    }

    #[test]
    fn quoted_scalars_continue_at_any_indentation_as_in_go_yaml() {
        assert_eq!(doc("a:\n  x: 'abc\n  def'\n  y: b\n"), json!({"a": {"x": "abc def", "y": "b"}}));
        assert_eq!(doc("a:\n  x: \"abc\\\"\ndef\"\n  y: b\n"), json!({"a": {"x": "abc\" def", "y": "b"}}));
        assert_eq!(doc("a:\n  x: 'it''s\n\n  é'\n"), json!({"a": {"x": "it's\né"}}));
        assert_eq!(doc("a:\n- 'abc\n def'\n"), json!({"a": ["abc def"]}));
        assert_eq!(err("a:\n  x: 'abc\n---\n'\n").line, 2);
    }

    #[test]
    fn resource_documents_note_quoted_scalars_of_block_collections() {
        use crate::yaml::empty_nulls::Quote;
        let text = "a: 'x'\nb:\n- \"y\"\n- z\n- {f: 'in flow'}\nc: &k 'anchored'\nd: |\n  block\n'e': plain\n";
        let docs = super::parse_resource_documents(text).unwrap();
        let quoted = docs[0].quoted.as_ref().unwrap();
        assert_eq!(quoted.field("a").and_then(|n| n.mark()), Some(&Quote::Single));
        assert_eq!(quoted.field("b").and_then(|n| n.item(0)).and_then(|n| n.mark()), Some(&Quote::Double));
        assert_eq!(quoted.field("c").and_then(|n| n.mark()), Some(&Quote::Single));
        // Plain, block and flow scalars are not noted, nor quoted keys.
        for (key, item) in [("b", Some(1)), ("b", Some(2)), ("d", None), ("e", None)] {
            let node = quoted.field(key);
            let node = match item {
                Some(i) => node.and_then(|n| n.item(i)),
                None => node,
            };
            assert!(node.and_then(|n| n.mark()).is_none(), "{key} {item:?}");
        }
        assert!(super::parse_resource_documents("a: b\n").unwrap()[0].quoted.is_none());
    }

    #[test]
    fn resource_documents_leave_out_non_scalar_keys_and_say_where() {
        let docs = super::parse_resource_documents("a:\n  b: {{ .x }}\n  c: 1\n---\nd: 2\n").unwrap();
        assert_eq!(docs[0].value, json!({"a": {"b": {}, "c": 1}}));
        let at = docs[0].invalid_key.as_ref().unwrap();
        assert_eq!((at.line, at.column, at.message.as_str()), (2, 7, r#"invalid map key: map[string]interface {}{".x":""}"#));
        assert!(docs[1].invalid_key.is_none());
        assert_eq!(err("a:\n  b: {{ .x }}\n").message, "mapping keys must be scalars");
    }

    #[test]
    fn a_resources_keys_hold_no_room_past_their_text() {
        fn keys_exact(value: &Value) -> bool {
            match value {
                Value::Object(map) => map.iter().all(|(key, item)| key.capacity() == key.len() && keys_exact(item)),
                Value::Array(items) => items.iter().all(keys_exact),
                _ => true,
            }
        }
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: x, \"quoted key\": y}\ndata:\n  k: v\n  list:\n  - {nested: 1}\n";
        let docs = super::parse_resource_documents(text).unwrap();
        assert_eq!(docs[0].value["metadata"]["labels"], json!({"app": "x", "quoted key": "y"}));
        assert!(keys_exact(&docs[0].value), "{:?}", docs[0].value);
    }

    #[test]
    fn explicit_tags_resolve_accordingly() {
        let text = "\
a: !!str 12
b: !!int \"7\"
c: !!float 1
d: !!bool \"true\"
e: !!null \"\"
f: !!null ~
g: !!timestamp 2001-12-14
h: !!str 2001-12-14
i: !foo bar
j: !foo 12
k: ! 12
l: !<tag:yaml.org,2002:int> \"5\"
m: !!binary aGVsbG8=
n: !!map {x: 1}
o: !custom [1]
p: !!str
";
        let want = json!({
            "a": "12", "b": 7, "c": 1.0, "d": true, "e": null, "f": null,
            "g": "2001-12-14T00:00:00Z", "h": "2001-12-14", "i": "bar", "j": "12", "k": 12,
            "l": 5, "m": "hello", "n": {"x": 1}, "o": [1], "p": ""
        });
        assert_eq!(doc(text), want);
        assert!(doc("c: !!float 1\n")["c"].is_f64());
    }

    #[test]
    fn explicit_tags_that_do_not_fit_are_errors() {
        let e = err("a: 1\nb: !!int foo\n");
        assert_eq!(e, ParseError { line: 2, column: 4, message: "cannot decode !!str `foo` as a !!int".into(), go_marks: None });
        assert_eq!(err("a: !!null foo\n").message, "cannot decode !!str `foo` as a !!null");
        assert_eq!(err("a: !!int 1.5\n").message, "cannot decode !!float `1.5` as a !!int");
        assert_eq!(err("a: !!bool yes\n").message, "cannot decode !!str `yes` as a !!bool");
    }

    #[test]
    fn binary_is_base64_decoded() {
        assert_eq!(doc("a: !!binary |\n  aGVs\n  bG8=\n")["a"], json!("hello"));
        assert_eq!(doc("a: !!binary \"/w==\"\n")["a"], json!("\u{FFFD}"));
        assert_eq!(doc("a: !!binary 4oI=\n")["a"], json!("\u{FFFD}\u{FFFD}"));
        assert_eq!(err("a: !!binary \"!!!\"\n").message, "!!binary value contains invalid base64 data");
    }

    #[test]
    fn mapping_keys_are_their_text() {
        assert_eq!(
            doc("1: a\n2.50: b\ntrue: c\n~: d\n\"x y\": e\n012: f\n? g\n"),
            json!({"1": "a", "2.50": "b", "true": "c", "~": "d", "x y": "e", "012": "f", "g": null})
        );
    }

    #[test]
    fn non_scalar_keys_are_errors() {
        let e = err("a: 1\n? [x]\n: 2\n");
        assert_eq!((e.line, e.column, e.message.as_str()), (2, 3, "mapping keys must be scalars"));
        assert_eq!(err("{a: 1}: 2\n").message, "mapping keys must be scalars");
    }

    #[test]
    fn duplicate_keys_are_errors_at_the_second_key() {
        let e = err("a: 1\nspec:\n  env: 1\n\n  other: {x: 1}\n  env: 2\n");
        assert_eq!(
            e,
            ParseError { line: 6, column: 3, message: "mapping key \"env\" already defined at line 3".into(), go_marks: None }
        );
        assert_eq!(e.to_string(), "line 6, column 3: mapping key \"env\" already defined at line 3");
        assert_eq!(err("{a: 1, \"a\": 2}").message, "mapping key \"a\" already defined at line 1");
        assert_eq!(err("- x: 1\n  'x': 2\n").message, "mapping key \"x\" already defined at line 1");
        // The same value written differently is not the same key.
        assert_eq!(doc("1: a\n01: b\n"), json!({"1": "a", "01": "b"}));
    }

    #[test]
    fn mappings_keep_their_keys_in_order_at_every_size() {
        // Small mappings compare keys one by one, larger ones index them: both keep the order
        // written, nested collections included, and refuse a repeated key at its second line.
        for size in [1, SCAN_KEYS - 1, SCAN_KEYS, SCAN_KEYS + 1, 3 * SCAN_KEYS] {
            let keys: Vec<String> = (0..size).map(|i| format!("k{}", (i * 7919) % 1000)).collect();
            let mut text = String::from("outer:\n");
            for (i, key) in keys.iter().enumerate() {
                text.push_str(&format!("  {key}: [{i}, {{x: {i}}}]\n"));
            }
            text.push_str("after: [1, 2]\n");
            let value = doc(&text);
            let outer = value["outer"].as_object().unwrap();
            assert_eq!(outer.keys().cloned().collect::<Vec<_>>(), keys);
            for (i, key) in keys.iter().enumerate() {
                assert_eq!(outer[key], json!([i, {"x": i}]));
            }
            assert_eq!(value["after"], json!([1, 2]));
            let repeated = format!("{text}  {}: again\n", keys[size / 2]).replace("after: [1, 2]\n", "");
            let e = err(&repeated);
            assert_eq!((e.line, e.column), (size + 2, 3));
            assert_eq!(e.message, format!("mapping key \"{}\" already defined at line {}", keys[size / 2], size / 2 + 2));
        }
    }

    #[test]
    fn merge_keys_fill_large_mappings_without_repeating_keys() {
        let base: String = (0..2 * SCAN_KEYS).map(|i| format!("  b{i}: {i}\n")).collect();
        let text = format!("base: &b\n{base}own:\n  <<: *b\n  b3: mine\n  extra: 1\n");
        let value = doc(&text);
        let own = value["own"].as_object().unwrap();
        assert_eq!(own.len(), 2 * SCAN_KEYS + 1);
        assert_eq!(own["b3"], json!("mine"));
        assert_eq!(own["b20"], json!(20));
        assert_eq!(own.keys().last().map(String::as_str), Some("extra"));
        let again = format!("{text}  b3: twice\n");
        assert!(err(&again).message.starts_with("mapping key \"b3\" already defined at line"), "{:?}", err(&again));
    }

    #[test]
    fn documents_split_on_markers() {
        let text = "a: 1\n---\n# only a comment\n---\nb: 2\n...\n---\nnull\n--- # c\n--- c\n";
        assert_eq!(
            parse_documents(text).unwrap(),
            vec![json!({"a": 1}), Value::Null, json!({"b": 2}), Value::Null, Value::Null, json!("c")]
        );
        assert_eq!(parse_documents("---\na: 1\n").unwrap(), vec![json!({"a": 1})]);
        assert_eq!(parse_documents("a: 1\n...\nb: 2\n").unwrap(), vec![json!({"a": 1}), json!({"b": 2})]);
        assert_eq!(parse_documents("a: 1\n---\n").unwrap(), vec![json!({"a": 1}), Value::Null]);
    }

    #[test]
    fn empty_and_comment_only_streams_have_no_documents() {
        assert_eq!(parse_documents("").unwrap(), Vec::<Value>::new());
        assert_eq!(parse_documents("# nothing\n\n# here\n").unwrap(), Vec::<Value>::new());
        assert_eq!(parse_documents("---\n").unwrap(), vec![Value::Null]);
    }

    #[test]
    fn parse_document_takes_one_document() {
        assert_eq!(parse_document("").unwrap(), Value::Null);
        assert_eq!(parse_document("# c\n").unwrap(), Value::Null);
        assert_eq!(parse_document("---\na: 1\n---\n").unwrap(), json!({"a": 1}));
        let e = parse_document("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert_eq!(e.message, "expected a single document in the stream, found more than one");
    }

    #[test]
    fn anchors_and_aliases_are_copied() {
        let text = "a: &x 012\nb: *x\nc: &m {k: v}\nd: *m\ne: &s [1, 2]\nf: *s\ng: &x 2\nh: *x\n*x : key\n";
        assert_eq!(
            doc(text),
            json!({"a": 10, "b": 10, "c": {"k": "v"}, "d": {"k": "v"}, "e": [1, 2], "f": [1, 2], "g": 2, "h": 2, "2": "key"})
        );
    }

    #[test]
    fn unknown_and_recursive_aliases_are_errors() {
        let e = err("a: *nope\n");
        assert_eq!((e.line, e.column), (1, 4));
        assert_eq!(err("a: &x [1, *x]\n").message, "anchor value contains itself");
        // Anchors do not cross documents.
        assert!(parse_documents("a: &x 1\n---\nb: *x\n").is_err());
    }

    #[test]
    fn merge_keys_merge_like_yaml_1_1() {
        let text = "\
base: &b {a: 1, b: 2}
other: &o {b: 3, c: 4, d: 5}
m1:
  <<: *b
  a: 9
m2:
  <<: [*b, *o]
  d: 6
m3:
  a: 0
  <<: *b
m4: {<<: *b, b: 9}
m5:
  <<: [*b, {c: 3, a: 7}]
m6:
  <<: {z: 1}
";
        let want = json!({
            "base": {"a": 1, "b": 2},
            "other": {"b": 3, "c": 4, "d": 5},
            "m1": {"a": 9, "b": 2},
            "m2": {"a": 1, "b": 2, "c": 4, "d": 6},
            "m3": {"a": 0, "b": 2},
            "m4": {"a": 1, "b": 9},
            "m5": {"a": 1, "b": 2, "c": 3},
            "m6": {"z": 1},
        });
        assert_eq!(doc(text), want);
    }

    #[test]
    fn merge_keys_need_maps() {
        let head = "b: &b {a: 1}\ns: &s [{a: 5}]\nm:\n  ";
        let cases = [
            ("<<: *s", "invalid map merge: received alias for a non-map value"),
            ("<<: [*b, *s]", "invalid map merge: received alias for a non-map value"),
            ("<<: [*b, [{c: 1}]]", "invalid map merge: received a nested sequence"),
            ("<<: [{c: 1}, 1]", "map merge requires map or sequence of maps as the value"),
            ("<<: 1", "map merge requires map or sequence of maps as the value"),
            ("<<:", "map merge requires map or sequence of maps as the value"),
            ("<<: *b\n  <<: *b", "duplicate merge key"),
        ];
        for (merge, message) in cases {
            assert_eq!(err(&format!("{head}{merge}\n")).message, message, "{merge}");
        }
    }

    #[test]
    fn explicit_keys_after_a_merge_may_override_but_not_repeat() {
        let e = err("b: &b {a: 1}\nm:\n  <<: *b\n  a: 2\n  a: 3\n");
        assert_eq!(
            e,
            ParseError { line: 5, column: 3, message: "mapping key \"a\" already defined at line 4".into(), go_marks: None }
        );
    }

    #[test]
    fn quoted_merge_keys_are_handled_as_kyaml_does() {
        let head = "b: &b {a: 1}\nm:\n  ";
        assert_eq!(doc(&format!("{head}\"<<\": 1\n"))["m"], json!({}));
        assert_eq!(doc(&format!("{head}<<: *b\n  \"<<\": 1\n"))["m"], json!({"a": 1, "<<": 1}));
        assert_eq!(doc(&format!("{head}'<<': 1\n  <<: *b\n"))["m"], json!({"a": 1}));
        let e = err(&format!("{head}'<<': 1\n  <<: *b\n  '<<': 2\n"));
        assert_eq!(e.message, "mapping key \"<<\" already defined at line 4");
        assert_eq!(scalar("'<<'"), json!("<<"));
    }

    #[test]
    fn flow_collections_type_empty_and_colon_scalars_as_strings() {
        let text = "\
a: {x: , y, z: ~}
b: [k: , {}]
c: [2001-12-14T21:59:43.000+00:00, 2001-12-14]
d:
- 2001-12-14T21:59:43.000+00:00
e: {x: 2001-12-14T21:59:43.000+00:00}
f:
g: [!!null , !!timestamp 2001-12-14T21:59:43.000+00:00]
";
        let want = json!({
            "a": {"x": "", "y": "", "z": null},
            "b": [{"k": ""}, {}],
            "c": ["2001-12-14T21:59:43.000+00:00", "2001-12-14T00:00:00Z"],
            "d": ["2001-12-14T21:59:43Z"],
            "e": {"x": "2001-12-14T21:59:43.000+00:00"},
            "f": null,
            "g": [null, "2001-12-14T21:59:43Z"],
        });
        assert_eq!(doc(text), want);
    }

    #[test]
    fn aliases_take_the_flow_context_they_are_copied_into() {
        let text = "\
e: [&e , *e]
f: &f
g: [*f]
h: *e
m: &m
  a:
  t: 2001-12-14T21:59:43.50Z
  s: [x, ]
  n:
    - 
i: [*m]
j: {k: *m}
l: &l {a: }
o: *l
p:
  <<: *m
q: [{<<: *m}]
r: &r
  - &inner
    x:
  - *inner
u: [*r]
";
        let block_m = json!({"a": null, "t": "2001-12-14T21:59:43.5Z", "s": ["x"], "n": [null]});
        let flow_m = json!({"a": "", "t": "2001-12-14T21:59:43.50Z", "s": ["x"], "n": [""]});
        let want = json!({
            "e": ["", ""],
            "f": null,
            "g": [""],
            "h": null,
            "m": block_m,
            "i": [flow_m],
            "j": {"k": flow_m},
            "l": {"a": ""},
            "o": {"a": ""},
            "p": block_m,
            "q": [flow_m],
            "r": [{"x": null}, {"x": null}],
            "u": [[{"x": ""}, {"x": ""}]],
        });
        assert_eq!(doc(text), want);
    }

    #[test]
    fn flow_collections_after_properties_and_on_the_next_line_are_flow() {
        let text = "a: &x !!map\n  # comment\n  {b: }\nc: !custom\n  [d: ]\n\"é\": &y [e: ]\n";
        assert_eq!(doc(text), json!({"a": {"b": ""}, "c": [{"d": ""}], "é": [{"e": ""}]}));
        let block = "é: &y\n  b:\nc: !t\n  - \n";
        assert_eq!(doc(block), json!({"é": {"b": null}, "c": [null]}));
    }

    #[test]
    fn json_documents_parse() {
        let text = r#"{"apiVersion": "v1", "kind": "ConfigMap",
  "metadata": {"name": "x", "labels": {}},
  "data": {"a": "1", "b": "x\u00e9\n", "c": null, "d": [1, 2.5, true, {"e": -0}], "f": 1e3, "g": 0.1e-7, "h": 1.0}
}"#;
        let want = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "labels": {}},
            "data": {"a": "1", "b": "xé\n", "c": null, "d": [1, 2.5, true, {"e": 0}], "f": 1000.0, "g": 1e-8, "h": 1.0}
        });
        assert_eq!(doc(text), want);
        assert_eq!(doc("{\"a\":1,\"b\":[]}"), json!({"a": 1, "b": []}));
        assert_eq!(doc("[1, \"2\"]"), json!([1, "2"]));
    }

    #[test]
    fn tabs_as_indentation_are_errors() {
        let e = err("a:\n\tb: 1\n");
        assert_eq!((e.line, e.column), (2, 2));
        assert!(e.message.contains("tab"), "{}", e.message);
        let e = err("a: |\n    x\n\ty\n");
        assert_eq!(e.line, 3);
    }

    #[test]
    fn tabs_after_a_colon_separate_like_spaces() {
        assert_eq!(
            doc("- a:\tb\n- c:\t\t[1]\n- d:\t-1\n- \"e:\tx\"\n- f: b\t# c\n"),
            json!([{"a": "b"}, {"c": [1]}, {"d": -1}, "e:\tx", {"f": "b"}])
        );
    }

    #[test]
    fn syntax_errors_have_positions_and_messages() {
        let cases: [(&str, usize, usize, &str); 6] = [
            ("a: b: c\n", 1, 5, "mapping values are not allowed in this context"),
            ("a: 1\n b: 2\n", 2, 3, "mapping values are not allowed in this context"),
            ("a: [1, 2\n", 2, 1, "while parsing a flow sequence, expected ',' or ']'"),
            ("a: \"open\n", 1, 4, "while scanning a quoted scalar, found unexpected end of stream"),
            ("- a\nb: c\n", 2, 1, "while parsing a block collection, did not find expected '-' indicator"),
            ("a:\n  - b\n  c: d\n", 3, 3, "while parsing a block collection, did not find expected '-' indicator"),
        ];
        for (text, line, column, message) in cases {
            let e = err(text);
            assert_eq!((e.line, e.column, e.message.as_str()), (line, column, message), "{text:?}");
        }
    }

    /// go-yaml's words and line for a syntax error, v2 (a kustomization) and v3 (a resource file),
    /// each checked with kustomize v5.8.1.
    #[test]
    fn syntax_errors_name_the_lines_go_yaml_names() {
        let v2 = [
            ("resources:\n- a\n  b: c\n", "yaml: line 3: mapping values are not allowed in this context"),
            ("a:\n  b: 1\n c: 2\n", "yaml: line 2: did not find expected key"),
            ("namePrefix: [a, b\n", "yaml: line 1: did not find expected ',' or ']'"),
            ("a: \"x\n", "yaml: line 2: found unexpected end of stream"),
            ("- a\nb: c\n", "yaml: line 1: did not find expected '-' indicator"),
            ("x:\n  - a\n  - b\n  c: d\n", "yaml: line 3: did not find expected '-' indicator"),
            ("kind: Component\nnamePrefix: x-\n\tnameSuffix: -y\n", "yaml: line 3: found a tab character that violates indentation"),
        ];
        for (text, want) in v2 {
            assert_eq!(err(text).go_yaml_v2(), want, "{text:?}");
        }
        let v3 = [
            ("apiVersion: v1\nkind: ConfigMap\ndata: {a: b\n", "yaml: line 2: did not find expected ',' or '}'"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n b: c\n", "yaml: line 4: did not find expected key"),
            ("kind: ConfigMap\n- a\n", "yaml: line 1: did not find expected key"),
            ("apiVersion: v1\n kind: ConfigMap\n", "yaml: line 2: mapping values are not allowed in this context"),
            ("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"b\n", "yaml: line 4: found unexpected end of stream"),
            ("apiVersion: v1\nkind: ConfigMap\ndata:\n  x: a\n\n\tb\n", "yaml: line 4: found a tab character that violates indentation"),
        ];
        for (text, want) in v3 {
            assert_eq!(err(text).go_yaml_v3(), want, "{text:?}");
        }
    }

    #[test]
    fn json_slash_escapes_are_errors_as_in_go_yaml() {
        let e = err("a: 1\nb: \"x\\\\/ é\\\n  y \\/\"\n");
        assert_eq!(
            e,
            ParseError {
                line: 3,
                column: 5,
                message: "while parsing a quoted scalar, found unknown escape character".into(),
                go_marks: None
            }
        );
        assert_eq!(doc("a: \"x\\\\/y\"\nb: 'x\\/y'\nc: x\\/y\n"), json!({"a": "x\\/y", "b": "x\\/y", "c": "x\\/y"}));
    }

    #[test]
    fn line_breaks_and_byte_order_marks_are_handled() {
        assert_eq!(doc("a: b\r\nc: |\r\n  x\r\n  y\r\n"), json!({"a": "b", "c": "x\ny\n"}));
        assert_eq!(doc("\u{feff}a: é\n"), json!({"a": "é"}));
        assert_eq!(doc("a: foo\n  bar\n\n  baz\n"), json!({"a": "foo bar\nbaz"}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "- ".repeat(super::MAX_DEPTH + 1) + "x\n";
        assert_eq!(err(&text).message, "exceeded max depth of 10000");
        assert_eq!(err(&"[".repeat(100_000)).message, "flow collections nested deeper than 255");
    }

    #[test]
    fn excessive_aliasing_is_an_error() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        for pair in names.windows(2) {
            let refs = vec![format!("*{}", pair[0]); 10].join(", ");
            text.push_str(&format!("{}: &{} [{refs}]\n", pair[1], pair[1]));
        }
        // The per-document bound, or the build's copy budget (in bytes), whichever comes first.
        assert!(err(&text).message.contains("excessive aliasing"), "{}", err(&text).message);
    }

    #[test]
    fn odd_input_never_panics() {
        let pieces = [
            ":", ": ", "- ", "[", "]", "{", "}", ",", "&a ", "*a", "!!int ", "!!binary ", "! ", "<<: ", "\t", "\n",
            "\n  ", "\"", "'", "|", ">", "# c", "---", "...", "? ", "%YAML 1.2\n", "é", "\r\n", "x", "1", "~", "\\",
            "\u{feff}",
        ];
        let base = "a: &x\n  b: [1, {c: ~}, 2001-12-14T1:2:3Z]\n  d: |\n    t\n---\n- *x\n- {<<: *x, e: 'q'}\n";
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let mut text: Vec<char> = base.chars().collect();
            for _ in 0..(next() % 6 + 1) {
                let at = (next() % (text.len() as u64 + 1)) as usize;
                if next() % 3 == 0 && at < text.len() {
                    text.remove(at);
                } else {
                    let piece = pieces[(next() % pieces.len() as u64) as usize];
                    for (k, c) in piece.chars().enumerate() {
                        text.insert(at + k, c);
                    }
                }
            }
            let text: String = text.into_iter().collect();
            let _ = parse_documents(&text);
        }
    }
}
