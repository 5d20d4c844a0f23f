//! Transformers that change each resource on its own (namespace, name affixes, labels,
//! annotations, images), run together.
//!
//! A kustomization's transformers run one after another, each over every resource. Over a few
//! thousand resources, each pass finds them evicted from the processor's caches by the pass
//! before, and waits on memory for most of what it reads. Where nothing records each
//! transformer's run (`explain`, build metadata), the consecutive ones whose change to a resource
//! depends on that resource alone run as one pass instead: every step on a resource, then the
//! next resource. The outcome is the same, and so is the first error ([`run_together`]).
use crate::error::Result;
use crate::resource::{ResMap, Resource};

/// One transformer's change to one resource, reading nothing but that resource and its own
/// settings.
pub trait ResourceStep: Sync {
    fn apply(&self, r: &mut Resource) -> Result<()>;
}

impl<T: ResourceStep> ResourceStep for &T {
    fn apply(&self, r: &mut Resource) -> Result<()> {
        (**self).apply(r)
    }
}

/// Runs `steps` in order on every resource, as one pass. The error returned is the one running
/// each step over all the resources before the next would stop at: the earliest step's, the
/// first in resource order among that step's.
pub fn run_together(resources: &mut ResMap, steps: &[Box<dyn ResourceStep + '_>]) -> Result<()> {
    if steps.is_empty() {
        return Ok(());
    }
    resources.try_steps_parallel(|r| steps.iter().enumerate().try_for_each(|(k, step)| step.apply(r).map_err(|e| (k, e))))
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
        fn apply(&self, r: &mut Resource) -> Result<()> {
            match self.1.contains(&r.name()) {
                true => Err(Error::msg(format!("{} failed on {}", self.0, r.name()))),
                false => Ok(()),
            }
        }
    }

    #[test]
    fn the_error_is_the_earliest_failing_steps_first_in_resource_order() {
        // Below and above the size at which a pass runs in parallel.
        for count in [12, 150] {
            let run = |steps: Vec<Box<dyn ResourceStep>>| run_together(&mut resources(&named(count)), &steps).map_err(|e| e.to_string());
            // A later step failing on an earlier resource does not hide the earlier step's error.
            let outcome = run(vec![Box::new(FailsOn("first", &["a6", "b7"])), Box::new(FailsOn("second", &["a0", "c2"]))]);
            assert_eq!(outcome, Err("first failed on a6".to_string()), "{count} resources");
            let outcome = run(vec![Box::new(FailsOn("first", &[])), Box::new(FailsOn("second", &["c8", "a0"]))]);
            assert_eq!(outcome, Err("second failed on a0".to_string()), "{count} resources");
            assert_eq!(run(vec![Box::new(FailsOn("first", &[])), Box::new(FailsOn("second", &[]))]), Ok(()));
        }
    }
}
