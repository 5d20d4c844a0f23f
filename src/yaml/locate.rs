//! Where a node of a parsed document was written: the line and column of a mapping key or a
//! sequence item, found again from its path, for messages about a value already parsed (a field
//! of the wrong type, an unknown key). Only read when there is something to report.
use saphyr_parser::{Event, Parser};

pub use super::node_path::Step;

/// An open collection while walking the events.
enum Open {
    Map { key: Option<String> },
    Seq { next: usize },
}

/// The 1-based line and column of the node at `path` in the first document of `text`: of its key
/// when the path ends in a key, of the item when it ends in an index. `None` when the path is
/// empty or not found (written through an alias or a merge key, say).
pub fn position(text: &str, path: &[Step]) -> Option<(usize, usize)> {
    let mut open: Vec<Open> = Vec::new();
    for item in Parser::new_from_str(text) {
        let (event, span) = item.ok()?;
        let at = (span.start.line().max(1), span.start.col() + 1);
        let starts_node = matches!(event, Event::Scalar(..) | Event::MappingStart(..) | Event::SequenceStart(..) | Event::Alias(_));
        if starts_node {
            if let Some(Open::Map { key }) = open.last_mut() {
                if key.is_none() {
                    // A key: scalar keys are matched, others are skipped with their value.
                    let text = match &event {
                        Event::Scalar(value, ..) => value.to_string(),
                        _ => String::new(),
                    };
                    *key = Some(text);
                    if here(&open) == path {
                        return Some(at);
                    }
                    if !matches!(event, Event::Scalar(..)) {
                        return None;
                    }
                    continue;
                }
            }
            if matches!(open.last(), Some(Open::Seq { .. })) && here(&open) == path {
                return Some(at);
            }
        }
        match event {
            Event::MappingStart(..) => open.push(Open::Map { key: None }),
            Event::SequenceStart(..) => open.push(Open::Seq { next: 0 }),
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
                advance(&mut open);
            }
            Event::Scalar(..) | Event::Alias(_) => advance(&mut open),
            Event::DocumentEnd => return None,
            _ => {}
        }
    }
    None
}

/// The path of the node about to be read (the current key or item of each open collection).
fn here(open: &[Open]) -> Vec<Step> {
    open.iter()
        .map(|o| match o {
            Open::Map { key } => Step::Key(key.clone().unwrap_or_default()),
            Open::Seq { next } => Step::Index(*next),
        })
        .collect()
}

/// A value ended: the innermost collection moves to its next key or item.
fn advance(open: &mut [Open]) {
    match open.last_mut() {
        Some(Open::Map { key }) => *key = None,
        Some(Open::Seq { next }) => *next += 1,
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.to_owned())
    }

    #[test]
    fn keys_and_items_are_found_where_they_were_written() {
        let text = "resources:\n- a.yaml\n- b.yaml\nimages:\n- name: x\n  newTag: 1.30\nlabels: {pairs: {a: 1}}\n";
        assert_eq!(position(text, &[key("resources")]), Some((1, 1)));
        assert_eq!(position(text, &[key("resources"), Step::Index(1)]), Some((3, 3)));
        assert_eq!(position(text, &[key("images"), Step::Index(0), key("newTag")]), Some((6, 3)));
        assert_eq!(position(text, &[key("labels"), key("pairs"), key("a")]), Some((7, 18)));
        assert_eq!(position(text, &[key("nothing")]), None);
        assert_eq!(position(text, &[]), None);
    }

    #[test]
    fn values_that_are_collections_are_stepped_over() {
        let text = "a:\n  b: [1, {c: d}]\n  e: f\ng: h\n";
        assert_eq!(position(text, &[key("a"), key("e")]), Some((3, 3)));
        assert_eq!(position(text, &[key("g")]), Some((4, 1)));
    }
}
