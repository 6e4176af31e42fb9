//! The embedded runtime: `P` workers as threads of one process, the leader on the calling thread.
//!
//! Worker 0 runs on the calling thread, which also schedules and aggregates, so no thread ever
//! sits idle waiting to play a role; workers `1..P` each run on a thread of their own and own their
//! data shard for the whole run. Each worker receives its commands through its own channel, in the
//! order the driver issued them, which is what keeps a run deterministic. Model blocks of a
//! rotation travel directly from a worker to its left neighbour.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread;

use strads_core::{
    Aggregator, Assignment, BoxError, Checkpoints, EngineError, Launcher, Plan, Program, Round, RunOptions, Scheduler,
    Worker, WorkerId,
};
use strads_engine::{Transport, drive_checkpointed};

use crate::worker_loop::Command;
use crate::worker_loop::{
    Held, PassBlocks, Passed, Remote, Reply, checkpoint_failed, push_and_pass, receive, serve, stopped,
};

/// Runs programs on worker threads of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Embedded {
    workers: usize,
    spin: u32,
}

/// Polls before a receive blocks, when every worker has a core of its own: waking a sleeping
/// thread costs tens of microseconds, about as much as a whole round of a sparse Lasso.
const SPIN_POLLS: u32 = 4000;

impl Embedded {
    /// A runtime with `workers` workers (at least 1). One of them runs on the calling thread.
    ///
    /// Waiting threads poll for a short while before they sleep, unless there are more workers
    /// than cores (then polling would only take time from a thread that has work).
    pub fn new(workers: usize) -> Result<Self, EngineError> {
        if workers == 0 {
            return Err(EngineError::Options("the number of workers must be at least 1".into()));
        }
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Embedded { workers, spin: if workers <= cores { SPIN_POLLS } else { 0 } })
    }
}

/// The ring a worker's blocks travel on: it sends to its left neighbour and receives from its right.
struct Ring<B> {
    left: Sender<B>,
    left_id: WorkerId,
    own: Receiver<B>,
    right_id: WorkerId,
    spin: u32,
}

impl<B> PassBlocks<B> for Ring<B> {
    fn pass(&self, block: B) -> Result<Passed<B>, EngineError> {
        self.left.send(block).map_err(|_| stopped(self.left_id))?;
        let incoming = receive(&self.own, self.spin).map_err(|_| stopped(self.right_id))?;
        Ok(Passed::Took(incoming))
    }
}

impl strads_core::Leading for Embedded {}

impl Launcher for Embedded {
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
        let workers = self.workers;
        thread::scope(|scope| {
            let (senders, receivers): (Vec<Sender<P::Block>>, Vec<_>) = (0..workers).map(|_| channel()).unzip();
            let mut rings: Vec<Ring<P::Block>> = receivers
                .into_iter()
                .enumerate()
                .map(|(id, own)| {
                    let left_id = (id + workers - 1) % workers;
                    Ring { left: senders[left_id].clone(), left_id, own, right_id: (id + 1) % workers, spin: self.spin }
                })
                .collect();
            drop(senders);
            let ring0 = rings.remove(0);

            let make_worker = &make_worker;
            let spin = self.spin;
            let mut remotes = Vec::with_capacity(workers - 1);
            for (offset, ring) in rings.into_iter().enumerate() {
                let id = offset + 1;
                let (commands, command_inbox) = channel();
                let (reply_outbox, replies) = channel();
                thread::Builder::new()
                    .name(format!("strads-worker-{id}"))
                    .spawn_scoped(scope, move || serve(id, id, make_worker, command_inbox, reply_outbox, ring, spin))
                    .map_err(|e| EngineError::Transport(format!("could not start worker thread {id}: {e}")))?;
                remotes.push(Remote { commands, replies });
            }

            let worker0 = make_worker(0).map_err(|source| EngineError::Setup { worker: 0, source })?;
            for (offset, remote) in remotes.iter().enumerate() {
                let id = offset + 1;
                match remote.replies.recv() {
                    Ok(Reply::Ready) => {}
                    Ok(Reply::SetupFailed(source)) => {
                        return Err(EngineError::Setup { worker: id, source });
                    }
                    Ok(Reply::Failed(error)) => return Err(error),
                    Ok(Reply::Pushed(..) | Reply::State(_)) | Err(_) => return Err(stopped(id)),
                }
            }

            let mut transport =
                Threads { worker0, ring0, remotes, pending0: VecDeque::new(), held: Held::new(), spin: self.spin };
            let (mut scheduler, mut aggregator) = make_leader();
            drive_checkpointed(&mut scheduler, &mut aggregator, &mut transport, options, checkpoints)?;
            Ok(Some((scheduler, aggregator)))
        })
    }
}

/// The leader's side: worker 0 inline, the others through their channels.
struct Threads<P: Program, W> {
    worker0: W,
    ring0: Ring<P::Block>,
    remotes: Vec<Remote<P>>,
    /// Worker 0's partials of the rounds pushed and not collected, and whether the round was its alone.
    pending0: VecDeque<(P::Partial, bool)>,
    /// Commits not yet sent to the other workers (after rounds for worker 0 alone).
    held: Held<P>,
    spin: u32,
}

impl<P: Program, W: Worker<P>> Transport<P> for Threads<P, W> {
    fn workers(&self) -> usize {
        self.remotes.len() + 1
    }

    fn push(&mut self, round: Round, plan: Arc<Plan<P::Task>>) -> Result<(), EngineError> {
        self.held.before_push(&plan, &self.remotes, 0)?;
        if !plan.leader_only {
            for (offset, remote) in self.remotes.iter().enumerate() {
                remote.commands.send(Command::Push(round, Arc::clone(&plan))).map_err(|_| stopped(offset + 1))?;
            }
        }
        let (partial, _) = push_and_pass(&mut self.worker0, 0, 0, round, &plan, &self.ring0)?;
        self.pending0.push_back((partial, plan.leader_only));
        Ok(())
    }

    fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError> {
        let mut partials = Vec::with_capacity(self.workers());
        let (first, leader_only) =
            self.pending0.pop_front().ok_or_else(|| EngineError::Transport("collect without push".into()))?;
        partials.push(first);
        if leader_only {
            return Ok(partials);
        }
        for (offset, remote) in self.remotes.iter().enumerate() {
            match receive(&remote.replies, self.spin) {
                Ok(Reply::Pushed(partial, _)) => partials.push(partial),
                Ok(Reply::Failed(error)) => return Err(error),
                Ok(Reply::SetupFailed(source)) => {
                    return Err(EngineError::Setup { worker: offset + 1, source });
                }
                Ok(Reply::Ready | Reply::State(_)) | Err(_) => return Err(stopped(offset + 1)),
            }
        }
        Ok(partials)
    }

    fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
        self.held.release(&self.remotes, 0)?;
        for (offset, remote) in self.remotes.iter().enumerate() {
            remote.commands.send(Command::Save).map_err(|_| stopped(offset + 1))?;
        }
        let mut states = Vec::with_capacity(self.workers());
        states.push(self.worker0.save().map_err(|e| checkpoint_failed(0, "saving", e))?);
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::State(state)) => states.push(state),
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(offset + 1)),
            }
        }
        Ok(states)
    }

    fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
        let mut states = states.into_iter();
        let first = states.next().ok_or_else(|| EngineError::Checkpoint("no saved worker states".into()))?;
        self.held.release(&self.remotes, 0)?;
        for (offset, (remote, state)) in self.remotes.iter().zip(states).enumerate() {
            remote.commands.send(Command::Restore(state)).map_err(|_| stopped(offset + 1))?;
        }
        self.worker0.restore(&first).map_err(|e| checkpoint_failed(0, "restoring", e))?;
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::Ready) => {}
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(offset + 1)),
            }
        }
        Ok(())
    }

    fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError> {
        self.held.sync(round, Arc::clone(&commit), &self.remotes, 0)?;
        if let Some(value) = commit.for_worker(0) {
            self.worker0.sync(round, value);
        }
        Ok(())
    }
}
