//! kyaml's path grammar, in one place: field-spec paths (`spec/template/metadata/labels`,
//! `containers[]`, `\/` escapes), replacement paths (`a.b.[name=x].c`, `[=value]`, `0`, `-`,
//! `*`, `[a.b]` keys), var field paths (`spec.ports[0].port`), and the paths `diff` and
//! `explain` write (`containers[name=app].image`, `labels[app.kubernetes.io/name]`). The walkers
//! that follow these paths through a resource live with their transformers; the splitting and
//! the meaning of each part live here. A path once resolved to nodes is a list of
//! [`Step`](crate::yaml::node_path::Step)s.

use serde_json::Value;

/// kyaml's `PathSplitter`: split on `delimiter` except where it is escaped with a backslash;
/// a leading delimiter is dropped (`/a/b` is `a/b`, `.spec.x` is `spec.x`).
pub fn split_escaped(path: &str, delimiter: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pieces: Vec<&str> = split_on(path, delimiter);
    if pieces.len() > 1 && pieces[0].is_empty() {
        pieces.remove(0);
    }
    for (i, piece) in pieces.into_iter().enumerate() {
        match out.last_mut() {
            Some(last) if i > 0 && last.ends_with('\\') => {
                last.pop();
                last.push_str(delimiter);
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
    }
    out
}

/// `text.split(delimiter)`, collected. A delimiter of one byte (every one the paths use; a `str`
/// of one byte is ASCII) is found by a plain loop over the bytes: `str::split` searches for each
/// next one afresh, which took most of the time of splitting the builtin field spec paths at
/// start. An ASCII byte is never part of another character in UTF-8, so the pieces are the same.
fn split_on<'t>(text: &'t str, delimiter: &str) -> Vec<&'t str> {
    let &[byte] = delimiter.as_bytes() else { return text.split(delimiter).collect() };
    let mut pieces = Vec::with_capacity(8);
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == byte {
            pieces.push(&text[start..i]);
            start = i + 1;
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// A field spec's path split on unescaped slashes (kustomize's `PathSplitter(path, "/")`).
pub fn split_field_spec_path(path: &str) -> Vec<String> {
    split_escaped(path, "/")
}

/// A field-spec path part: the field name, and whether a `[]` suffix says it holds a list.
pub fn field_spec_part(part: &str) -> (&str, bool) {
    match part.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (part, false),
    }
}

/// kyaml's `SmarterPathSplitter` on dots: like [`split_escaped`], but `[a.b=c]` stays one part
/// and `[a.b]` becomes the map key `a.b`.
pub fn split_replacement_path(path: &str) -> Vec<String> {
    let split = split_escaped(path, ".");
    let mut out = Vec::new();
    let mut i = 0;
    while i < split.len() {
        let elem = &split[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut bracketed = vec![elem.clone()];
            while i < split.len() - 1 {
                i += 1;
                bracketed.push(split[i].clone());
                if split[i].ends_with(']') {
                    break;
                }
            }
            let joined = bracketed.join(".");
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out
}

/// A var's field path (`RNode.GetFieldValue`): dots separate fields, `name[3]` indexes a list.
pub fn split_var_field_path(path: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for field in path.split('.') {
        match field.strip_suffix(']').and_then(|f| f.rsplit_once('[')) {
            Some((head, idx)) if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) => {
                if !head.is_empty() {
                    parts.push(head.to_string());
                }
                parts.push(idx.to_string());
            }
            _ => parts.push(field.to_string()),
        }
    }
    parts
}

/// Go's `strconv.Atoi`: a part that is a list position (negative ones are refused by the caller).
pub fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// `[...]`: a part that selects list elements.
pub fn is_list_selector(part: &str) -> bool {
    part.starts_with('[') && part.ends_with(']')
}

/// A part that is a non-negative list position.
pub fn is_list_position(part: &str) -> bool {
    go_atoi(part).is_some_and(|i| i >= 0)
}

/// `[name=value]` -> (`name`, `value`); `[=value]` matches scalar elements.
pub fn split_list_selector(part: &str) -> Result<(String, String), String> {
    let inner = part.strip_suffix(']').unwrap_or(part);
    let inner = inner.strip_prefix('[').unwrap_or(inner);
    match inner.split_once('=') {
        Some((n, v)) => Ok((n.to_string(), v.to_string())),
        None => Err("list path element must contain fieldName=fieldValue for element to match".into()),
    }
}

/// The `name` of every item, when every item is a map with a distinct string `name`.
pub fn item_names(items: &[Value]) -> Option<Vec<String>> {
    let names: Vec<String> = items.iter().map(|item| item.get("name")?.as_str().map(str::to_string)).collect::<Option<_>>()?;
    let mut distinct = names.clone();
    distinct.sort();
    distinct.dedup();
    (distinct.len() == names.len() && !names.is_empty()).then_some(names)
}

/// `parent.key`, or `parent[key]` for a key that itself holds a dot (`app.kubernetes.io/name`).
pub fn child_path(parent: &str, key: &str) -> String {
    let mut path = parent.to_string();
    push_child(&mut path, key);
    path
}

/// [`child_path`] written onto the end of `path`.
pub fn push_child(path: &mut String, key: &str) {
    if key.contains('.') {
        path.push('[');
        path.push_str(key);
        path.push(']');
    } else {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte loop cuts where `str::split` cuts, around characters of every width and at
    /// either end; other delimiters still go through `str::split`.
    #[test]
    fn splitting_on_one_byte_is_str_split() {
        for text in ["", "/", "//", "a", "/a/b/", "metadata/annotations/a.io\\/b", "é/ü/€/𝄞", "a.b..c.", "spec/containers[]/image"] {
            for delimiter in ["/", ".", "é", "ab"] {
                assert_eq!(split_on(text, delimiter), text.split(delimiter).collect::<Vec<_>>(), "{text:?} on {delimiter:?}");
            }
        }
    }

    #[test]
    fn escaped_slash_stays_in_one_field_spec_part() {
        assert_eq!(split_field_spec_path(r"metadata/annotations/a.io\/b"), vec!["metadata", "annotations", "a.io/b"]);
        assert_eq!(field_spec_part("containers[]"), ("containers", true));
    }

    #[test]
    fn replacement_paths_keep_bracketed_parts_whole() {
        assert_eq!(split_replacement_path("spec.containers.[name=com.foo].image"), ["spec", "containers", "[name=com.foo]", "image"]);
        assert_eq!(split_replacement_path("metadata.annotations.[a.b.c]"), ["metadata", "annotations", "a.b.c"]);
        assert_eq!(split_replacement_path(r"a\.b.c"), ["a.b", "c"]);
        assert_eq!(split_replacement_path("a.[0].b"), ["a", "[0]", "b"]);
        assert_eq!(split_replacement_path(".spec.dnsNames.0"), ["spec", "dnsNames", "0"]);
        assert_eq!(split_replacement_path("."), [""]);
        assert_eq!(split_field_spec_path("/metadata/labels"), ["metadata", "labels"]);
    }

    #[test]
    fn var_field_paths_index_lists_with_brackets() {
        assert_eq!(split_var_field_path("spec.ports[0].port"), ["spec", "ports", "0", "port"]);
        assert_eq!(split_var_field_path("data.a[x]"), ["data", "a[x]"]);
    }
}
