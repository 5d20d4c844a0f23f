//! Transformers that change each resource on its own (targeted patches, namespace, name
//! affixes, labels, annotations, images), run together.
//!
//! A kustomization's transformers run one after another, each over every resource. Over a few
//! thousand resources, each pass finds them evicted from the processor's caches by the pass
//! before, and waits on memory for most of what it reads. Where nothing records each
//! transformer's run (`explain`, build metadata), the consecutive ones whose change to a resource
//! depends on that resource alone run as one pass instead: every step on a resource, then the
//! next resource. The outcome is the same, and so are the first error and the warnings
//! ([`run_together`]).
use std::sync::Mutex;

use crate::diagnostics::Diagnostics;
use crate::error::Result;
use crate::resource::{ResMap, Resource};

/// What a step left of the resource it ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Kept,
    /// The step deleted it (a strategic merge patch's `$patch: delete`): no later step sees it.
    Deleted,
}

/// One transformer's change to one resource, reading nothing but that resource and its own
/// settings.
pub trait ResourceStep: Sync {
    /// Changes `r`, at position `at` among the resources of the pass (as they were before it).
    fn apply(&self, at: usize, r: &mut Resource) -> Result<Outcome>;

    /// Says what the step found over the whole pass (a patch that selected nothing), once the
    /// pass is over.
    fn report(&self, _diagnostics: &mut Diagnostics, _kustomization: &str) {}
}

impl<T: ResourceStep> ResourceStep for &T {
    fn apply(&self, at: usize, r: &mut Resource) -> Result<Outcome> {
        (**self).apply(at, r)
    }

    fn report(&self, diagnostics: &mut Diagnostics, kustomization: &str) {
        (**self).report(diagnostics, kustomization)
    }
}

/// Below this many resources, a pass finds them in the cache whatever ran before it: the steps
/// run one after another, each over all the resources, and each keeps its own code in the
/// processor's instruction cache instead.
const TOGETHER_MIN: usize = 256;

/// Runs `steps` in order on every resource, as one pass, and removes the resources a step
/// deleted. The error returned is the one running each step over all the resources before the
/// next would stop at: the earliest step's, the first in resource order among that step's. The
/// steps before it report what they found, as they would have before it ran.
pub fn run_together(resources: &mut ResMap, steps: &[Box<dyn ResourceStep + '_>], diagnostics: &mut Diagnostics, kustomization: &str) -> Result<()> {
    let outcome = match resources.len() < TOGETHER_MIN {
        true => steps.iter().enumerate().try_for_each(|(k, step)| one_pass(resources, std::slice::from_ref(step)).map_err(|(_, e)| (k, e))),
        false => one_pass(resources, steps),
    };
    let reporting = outcome.as_ref().err().map_or(steps.len(), |(k, _)| *k);
    for step in &steps[..reporting] {
        step.report(diagnostics, kustomization);
    }
    outcome.map_err(|(_, e)| e)
}

/// `steps` in order on every resource, as one pass; the resources a step deleted removed after
/// it. The error comes with the position of its step.
fn one_pass(resources: &mut ResMap, steps: &[Box<dyn ResourceStep + '_>]) -> Result<(), (usize, crate::error::Error)> {
    if steps.is_empty() {
        return Ok(());
    }
    let deleted = Mutex::new(Vec::new());
    resources.try_steps_parallel(|at, r| {
        for (k, step) in steps.iter().enumerate() {
            if step.apply(at, r).map_err(|e| (k, e))? == Outcome::Deleted {
                deleted.lock().unwrap_or_else(|e| e.into_inner()).push(at);
                break;
            }
        }
        Ok(())
    })?;
    let mut deleted = deleted.into_inner().unwrap_or_else(|e| e.into_inner());
    deleted.sort_unstable();
    resources.remove_positions(&deleted);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::transform::table::resources;

    /// `count` resources named a0, b1, c2, a3...
    fn named(count: usize) -> String {
        (0..count).map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {}{i}}}\n", ["a", "b", "c"][i % 3])).collect::<Vec<_>>().join("---\n")
    }

    /// Fails on the resources named in `names`, saying which step it is.
    struct FailsOn(&'static str, &'static [&'static str]);

    impl ResourceStep for FailsOn {
        fn apply(&self, _at: usize, r: &mut Resource) -> Result<Outcome> {
            match self.1.contains(&r.name()) {
                true => Err(Error::msg(format!("{} failed on {}", self.0, r.name()))),
                false => Ok(Outcome::Kept),
            }
        }
    }

    #[test]
    fn the_error_is_the_earliest_failing_steps_first_in_resource_order() {
        // Below the size at which the steps run as one pass, and above it.
        for count in [12, 300] {
            let run = |steps: Vec<Box<dyn ResourceStep>>| run_together(&mut resources(&named(count)), &steps, &mut Diagnostics::default(), "k").map_err(|e| e.to_string());
            // A later step failing on an earlier resource does not hide the earlier step's error.
            let outcome = run(vec![Box::new(FailsOn("first", &["a6", "b7"])), Box::new(FailsOn("second", &["a0", "c2"]))]);
            assert_eq!(outcome, Err("first failed on a6".to_string()), "{count} resources");
            let outcome = run(vec![Box::new(FailsOn("first", &[])), Box::new(FailsOn("second", &["c8", "a0"]))]);
            assert_eq!(outcome, Err("second failed on a0".to_string()), "{count} resources");
            assert_eq!(run(vec![Box::new(FailsOn("first", &[])), Box::new(FailsOn("second", &[]))]), Ok(()));
        }
    }
}
