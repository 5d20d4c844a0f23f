//! One bound on what a build may copy: the nodes made by expanding YAML aliases, by applying
//! patches (a strategic merge patch or a JSON 6902 value, once per resource it changes; a JSON
//! 6902 `copy`) and by replacements. Input is bounded by its size; copies are not (20 small
//! documents of nested aliases, or 40 `copy /data -> /data/cN` operations, each doubling the
//! resource, reach gigabytes from a few kilobytes), so every copy is charged, before it is made,
//! to one counter per build, whichever document or patch makes it.
//!
//! The build sets its budget for the thread it runs on ([`within`]); code that runs in parallel
//! takes it first ([`current`]) and charges it from any thread. Outside a build (a parse on its
//! own), each call gets a budget of its own.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value;

/// The default bound: far above every real tree (the shared conformance cases copy at most a
/// few thousand nodes; a 100 MB input copies none), below what a few hundred MiB hold.
pub const DEFAULT_LIMIT: u64 = 5_000_000;

/// The nodes a build may still copy.
#[derive(Debug)]
pub struct Budget {
    used: AtomicU64,
    limit: u64,
}

/// The budget ran out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("excessive aliasing or copying: the build would copy more than {limit} nodes (through YAML aliases, patches and replacements)")]
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

    /// Takes `nodes` from the budget, or fails (and takes nothing more) when they do not fit.
    pub fn charge(&self, nodes: u64) -> Result<(), Exceeded> {
        let before = self.used.fetch_add(nodes, Ordering::Relaxed);
        if before.saturating_add(nodes) > self.limit {
            return Err(Exceeded { limit: self.limit });
        }
        Ok(())
    }

    /// Charges the nodes of `value` copied `times` times.
    pub fn charge_copies(&self, value: &Value, times: usize) -> Result<(), Exceeded> {
        self.charge(nodes(value, self.limit).saturating_mul(times as u64))
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
    }
}
