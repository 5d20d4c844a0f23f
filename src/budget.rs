//! One bound on what a build may create by copying: the bytes made by expanding YAML aliases,
//! by applying patches (a strategic merge patch or a JSON 6902 value, once per resource it
//! changes; a JSON 6902 `copy`), by replacements, and by the prefixes, suffixes, labels and
//! annotations written into every resource. Input is bounded by its size; copies are not (20
//! small documents of nested aliases, 13 `copy /data -> /data/cN` operations of a 1 MB value,
//! or a 1 MB `namePrefix` over 2,000 resources reach gigabytes), so every copy is charged, in
//! bytes, before it is made, to one counter per build, whichever transformer makes it.
//!
//! A value's bytes are its strings' lengths plus [`NODE_BYTES`] per node (what a value costs
//! in memory besides its text), so many small nodes and one long string are both counted.
//!
//! The build sets its budget for the thread it runs on ([`within`]); code that runs in parallel
//! takes it first ([`current`]) and charges it from any thread. Outside a build (a parse on its
//! own), each call gets a budget of its own.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value;

/// The default bound, in bytes: far above every real tree (the shared conformance cases copy
/// at most a few hundred KB; a 100 MB input copies none), so that a build stays under 1 GiB.
pub const DEFAULT_LIMIT: u64 = 256 << 20;

/// What one node (a scalar, a list, a map, a map's key) is counted for besides its text.
pub const NODE_BYTES: u64 = 64;

/// The bytes a build may still create by copying.
#[derive(Debug)]
pub struct Budget {
    used: AtomicU64,
    limit: u64,
}

/// The budget ran out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("excessive aliasing or copying: the build would create more than {limit} bytes of copies (through YAML aliases, patches, replacements, prefixes, suffixes, labels or annotations)")]
pub struct Exceeded {
    pub limit: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(DEFAULT_LIMIT)
    }
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget { used: AtomicU64::new(0), limit }
    }

    /// Takes `bytes` from the budget, or fails when they do not fit.
    pub fn charge(&self, bytes: u64) -> Result<(), Exceeded> {
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit {
            return Err(Exceeded { limit: self.limit });
        }
        Ok(())
    }

    /// Charges the bytes of `value` copied `times` times.
    pub fn charge_copies(&self, value: &Value, times: usize) -> Result<(), Exceeded> {
        self.charge(bytes(value, self.limit).saturating_mul(times as u64))
    }

    /// Charges a string of `len` bytes written `times` times (a prefix, a label).
    pub fn charge_text(&self, len: usize, times: usize) -> Result<(), Exceeded> {
        self.charge((len as u64).saturating_add(NODE_BYTES).saturating_mul(times as u64))
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
}

/// Runs `work` with `budget` as this thread's current budget (the previous one back after).
pub fn within<R>(budget: Arc<Budget>, work: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(Some(budget)));
    struct Restore(Option<Arc<Budget>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let _restore = Restore(previous);
    work()
}

/// The budget of the build running on this thread; outside a build, a fresh one.
pub fn current() -> Arc<Budget> {
    CURRENT.with(|c| c.borrow().clone()).unwrap_or_default()
}

/// The nodes of `value` (each scalar, sequence and mapping counts one; a mapping's keys are
/// part of it), counted up to `cap` only, so counting a huge value costs no more than the cap.
pub fn nodes(value: &Value, cap: u64) -> u64 {
    let mut count = 0u64;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        count += 1;
        if count > cap {
            break;
        }
        match v {
            Value::Array(items) => pending.extend(items.iter()),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// The bytes `value` is counted for: its strings and keys, plus [`NODE_BYTES`] per node and
/// key, counted up to `cap` only (so counting a huge value costs no more than the cap).
pub fn bytes(value: &Value, cap: u64) -> u64 {
    let mut count = 0u64;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        count = count.saturating_add(NODE_BYTES);
        match v {
            Value::Array(items) => pending.extend(items.iter()),
            Value::Object(map) => {
                for (key, item) in map {
                    count = count.saturating_add(NODE_BYTES + key.len() as u64);
                    pending.push(item);
                }
            }
            Value::String(text) => count = count.saturating_add(text.len() as u64),
            _ => {}
        }
        if count > cap {
            break;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_budget_across_charges_and_threads() {
        let budget = Arc::new(Budget::new(10));
        within(budget.clone(), || {
            assert!(current().charge(6).is_ok());
            let other = current();
            std::thread::spawn(move || other.charge(4)).join().unwrap().unwrap();
            assert_eq!(current().charge(1), Err(Exceeded { limit: 10 }));
        });
        // Outside the build, a fresh budget.
        assert!(current().charge(10).is_ok());
        assert_eq!(nodes(&serde_json::json!({"a": [1, 2], "b": {"c": null}}), 100), 6);
        assert_eq!(nodes(&serde_json::json!([1, 2, 3, 4, 5]), 2), 3);
        // A list of one 1 MB string and one number: the text and three nodes.
        let big = serde_json::json!(["x".repeat(1 << 20), 1]);
        assert_eq!(bytes(&big, u64::MAX), (1 << 20) + 3 * NODE_BYTES);
        assert_eq!(bytes(&serde_json::json!({"ab": "cde"}), u64::MAX), 3 * NODE_BYTES + 5);
    }
}
