//! Parse results of texts that come back within a build: a component's kustomization file or a
//! patch written once and applied by every app that uses the component. Such a text is parsed
//! the second time it is seen and cloned from then on; a text seen once costs only its key.
use crate::fast_hash::FastHashMap;
use std::sync::Mutex;

/// Texts longer than this are neither remembered nor memoized.
const MAX_TEXT_LEN: usize = 16 * 1024;

/// A memo from text to what parsing it produced (successes only: errors name the file).
pub struct TextMemo<T> {
    slots: Mutex<Option<FastHashMap<Box<str>, Option<T>>>>,
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
            let slots = slots.get_or_insert_with(FastHashMap::default);
            match slots.get(text) {
                Some(Some(parsed)) => return Ok(parsed.clone()),
                Some(None) => true,
                None => {
                    slots.insert(text.into(), None);
                    false
                }
            }
        };
        let parsed = parse(text)?;
        if seen_before {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.get_or_insert_with(FastHashMap::default).insert(text.into(), Some(parsed.clone()));
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
    fn errors_are_not_remembered() {
        let memo: TextMemo<usize> = TextMemo::new();
        for _ in 0..3 {
            assert_eq!(memo.get_or_parse("x", |_| Err::<usize, &str>("bad")), Err("bad"));
        }
    }
}
