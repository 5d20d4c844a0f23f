//! Parse results of texts that come back within a build: a component's kustomization file or a
//! patch written once and applied by every app that uses the component. Such a text is parsed
//! the second time it is seen and cloned from then on; a text seen once costs only its key. The
//! keys held are bounded ([`MAX_HELD`]), so a run over thousands of roots, each with texts of its
//! own, holds no more than one build would.
use crate::fast_hash::FastHashMap;
use std::sync::Mutex;

/// Texts longer than this are neither remembered nor memoized.
const MAX_TEXT_LEN: usize = 16 * 1024;

/// The bytes of text a memo holds as keys at most; past it, the memo starts again empty.
const MAX_HELD: usize = 1024 * 1024;

/// A memo from text to what parsing it produced (successes only: errors name the file).
pub struct TextMemo<T> {
    slots: Mutex<Option<Slots<T>>>,
}

/// The texts seen, their results once parsed twice, and the bytes of text held.
struct Slots<T> {
    by_text: FastHashMap<Box<str>, Option<T>>,
    held: usize,
}

impl<T> Slots<T> {
    fn new() -> Self {
        Slots { by_text: FastHashMap::default(), held: 0 }
    }

    fn insert(&mut self, text: &str, parsed: Option<T>) {
        if !self.by_text.contains_key(text) {
            if self.held + text.len() > MAX_HELD {
                self.by_text.clear();
                self.held = 0;
            }
            self.held += text.len();
        }
        self.by_text.insert(text.into(), parsed);
    }
}

impl<T: Clone> Default for TextMemo<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> TextMemo<T> {
    pub const fn new() -> Self {
        TextMemo { slots: Mutex::new(None) }
    }

    /// `parse(text)`, or a clone of its earlier result.
    pub fn get_or_parse<E>(&self, text: &str, parse: impl FnOnce(&str) -> Result<T, E>) -> Result<T, E> {
        // A text with aliases is parsed each time: its copies are charged to the build's
        // node budget (`crate::budget`), which a clone from here would pass by.
        if text.len() > MAX_TEXT_LEN || (text.contains('&') && text.contains('*')) {
            return parse(text);
        }
        let seen_before = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let slots = slots.get_or_insert_with(Slots::new);
            match slots.by_text.get(text) {
                Some(Some(parsed)) => return Ok(parsed.clone()),
                Some(None) => true,
                None => {
                    slots.insert(text, None);
                    false
                }
            }
        };
        let parsed = parse(text)?;
        if seen_before {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.get_or_insert_with(Slots::new).insert(text, Some(parsed.clone()));
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_parsed_twice_at_most() {
        let memo = TextMemo::new();
        let mut calls = 0;
        for _ in 0..4 {
            let got: Result<usize, ()> = memo.get_or_parse("abc", |t| {
                calls += 1;
                Ok(t.len())
            });
            assert_eq!(got, Ok(3));
        }
        assert_eq!(calls, 2);
    }

    #[test]
    fn the_texts_held_are_bounded() {
        let memo = TextMemo::new();
        let text = |i: usize| format!("{i:0>1000}");
        for i in 0..3 * MAX_HELD / 1000 {
            let _ = memo.get_or_parse(&text(i), |t| Ok::<_, ()>(t.len()));
        }
        let slots = memo.slots.lock().unwrap();
        let slots = slots.as_ref().unwrap();
        assert!(slots.held <= MAX_HELD, "{} bytes held", slots.held);
        assert_eq!(slots.held, slots.by_text.keys().map(|k| k.len()).sum::<usize>());
        // The newest text is still known: seen again, it is parsed and kept.
        assert!(slots.by_text.contains_key(text(3 * MAX_HELD / 1000 - 1).as_str()));
    }

    #[test]
    fn errors_are_not_remembered() {
        let memo: TextMemo<usize> = TextMemo::new();
        for _ in 0..3 {
            assert_eq!(memo.get_or_parse("x", |_| Err::<usize, &str>("bad")), Err("bad"));
        }
    }
}
