//! Who receives what: one value for every worker, or one value per worker.
//!
//! Tasks (scheduler to workers) and commits (aggregator to workers) share this shape, so a program
//! can broadcast when every worker needs the same thing and address workers one by one otherwise.

use serde::{Deserialize, Serialize};

/// A value addressed to workers: the same for all, or one per worker (in worker order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Assignment<T> {
    /// Every worker receives this value.
    All(T),
    /// Worker `p` receives element `p`; the length equals the number of workers.
    Each(Vec<T>),
}

impl<T> Assignment<T> {
    /// The value worker `worker` receives, or `None` when an `Each` has no element for it.
    pub fn for_worker(&self, worker: usize) -> Option<&T> {
        match self {
            Assignment::All(value) => Some(value),
            Assignment::Each(values) => values.get(worker),
        }
    }

    /// Checks that an `Each` addresses exactly `workers` workers.
    pub fn fits(&self, workers: usize) -> bool {
        match self {
            Assignment::All(_) => true,
            Assignment::Each(values) => values.len() == workers,
        }
    }

    /// Applies `f` to every value, keeping the addressing.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Assignment<U> {
        match self {
            Assignment::All(value) => Assignment::All(f(value)),
            Assignment::Each(values) => Assignment::Each(values.into_iter().map(f).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_reaches_every_worker_and_each_only_its_own() {
        let all = Assignment::All(7);
        assert_eq!(all.for_worker(0), Some(&7));
        assert_eq!(all.for_worker(99), Some(&7));
        let each = Assignment::Each(vec![1, 2]);
        assert_eq!(each.for_worker(1), Some(&2));
        assert_eq!(each.for_worker(2), None);
        assert!(each.fits(2));
        assert!(!each.fits(3));
        assert_eq!(each.map(|v| v * 10), Assignment::Each(vec![10, 20]));
    }
}
