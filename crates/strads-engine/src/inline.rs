//! A launcher that runs every worker on the calling thread, one after another: no threads, no
//! channels. It is the runtime a library call needs when it has no runtime of its own, and the
//! plain reference the threaded and MPI runtimes are checked against, since it gives the same model
//! as they do for the same number of workers (the same shards, operations in the same order,
//! partials combined in worker order).

use std::collections::VecDeque;
use std::sync::Arc;

use strads_core::{
    Aggregator, Assignment, BoxError, Checkpoints, EngineError, Launcher, Leading, Plan, Program, Round, RunOptions,
    Scheduler, Worker, WorkerId,
};

use crate::{Transport, checkpoint_failed, drive_checkpointed, push_on};

/// `P` workers on the calling thread, which also schedules and aggregates. A worker that panics
/// ends the call with its panic (there is no thread to catch it on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inline {
    workers: usize,
}

impl Inline {
    /// A launcher of `workers` workers (at least 1).
    pub fn new(workers: usize) -> Result<Self, EngineError> {
        if workers == 0 {
            return Err(EngineError::Options("the number of workers must be at least 1".into()));
        }
        Ok(Inline { workers })
    }
}

impl Leading for Inline {}

impl Launcher for Inline {
    fn workers(&self) -> usize {
        self.workers
    }

    fn is_leader(&self) -> bool {
        true
    }

    fn run_checkpointed<P, W, S, A>(
        &self,
        options: RunOptions,
        checkpoints: &mut dyn Checkpoints,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>,
    {
        let workers = (0..self.workers)
            .map(|id| make_worker(id).map_err(|source| EngineError::Setup { worker: id, source }))
            .collect::<Result<Vec<W>, _>>()?;
        let mut transport = Sequential::<P, W> { workers, pending: VecDeque::new() };
        let (mut scheduler, mut aggregator) = make_leader();
        drive_checkpointed(&mut scheduler, &mut aggregator, &mut transport, options, checkpoints)?;
        Ok(Some((scheduler, aggregator)))
    }
}

/// The workers of an [`Inline`] run, carrying out each operation as it is issued.
struct Sequential<P: Program, W> {
    workers: Vec<W>,
    pending: VecDeque<Vec<P::Partial>>,
}

impl<P: Program, W: Worker<P>> Transport<P> for Sequential<P, W> {
    fn workers(&self) -> usize {
        self.workers.len()
    }

    fn push(&mut self, round: Round, plan: Arc<Plan<P::Task>>) -> Result<(), EngineError> {
        let mut partials = Vec::with_capacity(self.workers.len());
        let pushing = if plan.leader_only { 1 } else { self.workers.len() };
        for (id, worker) in self.workers.iter_mut().enumerate().take(pushing) {
            partials.push(push_on(worker, id, round, &plan)?);
        }
        if plan.rotate {
            // Every worker passes its block to its left neighbour: worker p takes p + 1's.
            let mut blocks = Vec::with_capacity(self.workers.len());
            for (id, worker) in self.workers.iter_mut().enumerate() {
                blocks.push(worker.pass_block().ok_or(EngineError::NoBlock { round: round.index, worker: id })?);
            }
            blocks.rotate_left(1);
            for (worker, block) in self.workers.iter_mut().zip(blocks) {
                worker.receive_block(block);
            }
        }
        self.pending.push_back(partials);
        Ok(())
    }

    fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError> {
        self.pending.pop_front().ok_or_else(|| EngineError::Transport("collect without push".into()))
    }

    fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError> {
        for (id, worker) in self.workers.iter_mut().enumerate() {
            if let Some(value) = commit.for_worker(id) {
                worker.sync(round, value);
            }
        }
        Ok(())
    }

    fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
        let states =
            self.workers.iter().enumerate().map(|(id, w)| w.save().map_err(|e| checkpoint_failed(id, "saving", e)));
        states.collect()
    }

    fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
        if states.len() != self.workers.len() {
            return Err(EngineError::Checkpoint(format!(
                "{} saved states for {} workers",
                states.len(),
                self.workers.len()
            )));
        }
        for (id, (worker, state)) in self.workers.iter_mut().zip(states).enumerate() {
            worker.restore(&state).map_err(|e| checkpoint_failed(id, "restoring", e))?;
        }
        Ok(())
    }
}
