//! The workers one process hosts, for a runtime whose blocks also travel between processes.
//!
//! The first local worker runs on the calling thread; the others each on a thread of their own,
//! fed through a channel in the order commands were issued. When a plan rotates, every local
//! worker hands its block back to the calling thread, which passes blocks one place to the left:
//! between local workers directly, and across the process boundary through `exchange` (send the
//! first local worker's block to the left process, receive the block for the last local worker
//! from the right one). With one process, `exchange` returns its argument and the ring closes here.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::{self, Scope};

use strads_core::{Assignment, BoxError, EngineError, Plan, Program, Round, Worker, WorkerId};
use strads_engine::push_on;

enum Command<P: Program> {
    Push(Round, Arc<Plan<P::Task>>),
    Block(P::Block),
    Sync(Round, Arc<Assignment<P::Commit>>),
    Save,
    Restore(Vec<u8>),
}

enum Reply<P: Program> {
    Ready,
    SetupFailed(BoxError),
    Pushed(P::Partial, Option<P::Block>),
    State(Vec<u8>),
    Failed(EngineError),
}

struct Remote<P: Program> {
    commands: Sender<Command<P>>,
    replies: Receiver<Reply<P>>,
}

/// The workers `first..first + count` of a run, hosted by this process.
pub(crate) struct Pool<P: Program, W> {
    first: WorkerId,
    worker: W,
    remotes: Vec<Remote<P>>,
    pending: VecDeque<Vec<P::Partial>>,
}

fn stopped(worker: WorkerId) -> EngineError {
    EngineError::WorkerFailed { worker, reason: "the worker thread stopped".into() }
}

fn checkpoint_failed(worker: WorkerId, what: &str, error: BoxError) -> EngineError {
    EngineError::Checkpoint(format!("{what} worker {worker}: {error}"))
}

/// Pushes one worker (found by its index in this pool) and takes its block when the plan rotates.
fn push_one<P: Program, W: Worker<P>>(
    worker: &mut W,
    id: WorkerId,
    local: usize,
    round: Round,
    plan: &Plan<P::Task>,
) -> Result<(P::Partial, Option<P::Block>), EngineError> {
    let partial = push_on(worker, local, round, plan).map_err(|e| match e {
        EngineError::PlanShape { round, addressed, .. } => EngineError::PlanShape { round, addressed, workers: id + 1 },
        other => other,
    })?;
    let block = if plan.rotate {
        Some(worker.pass_block().ok_or(EngineError::NoBlock { round: round.index, worker: id })?)
    } else {
        None
    };
    Ok((partial, block))
}

impl<P: Program, W: Worker<P>> Pool<P, W> {
    /// Builds workers `first..first + count` (the first here, the others on threads of `scope`).
    pub(crate) fn start<'scope, 'env, F>(
        scope: &'scope Scope<'scope, 'env>,
        first: WorkerId,
        count: usize,
        make_worker: &'env F,
    ) -> Result<Self, EngineError>
    where
        F: Fn(WorkerId) -> Result<W, BoxError> + Sync,
    {
        let mut remotes = Vec::with_capacity(count.saturating_sub(1));
        for id in first + 1..first + count {
            let (commands, inbox) = channel();
            let (outbox, replies) = channel();
            thread::Builder::new()
                .name(format!("strads-worker-{id}"))
                .spawn_scoped(scope, move || serve(id, id - first, make_worker, inbox, outbox))
                .map_err(|e| EngineError::Transport(format!("could not start worker thread {id}: {e}")))?;
            remotes.push(Remote { commands, replies });
        }
        let worker = make_worker(first).map_err(|source| EngineError::Setup { worker: first, source })?;
        for (offset, remote) in remotes.iter().enumerate() {
            let id = first + offset + 1;
            match remote.replies.recv() {
                Ok(Reply::Ready) => {}
                Ok(Reply::SetupFailed(source)) => return Err(EngineError::Setup { worker: id, source }),
                Ok(Reply::Failed(error)) => return Err(error),
                Ok(_) | Err(_) => return Err(stopped(id)),
            }
        }
        Ok(Pool { first, worker, remotes, pending: VecDeque::new() })
    }

    /// Number of workers in this pool.
    pub(crate) fn len(&self) -> usize {
        self.remotes.len() + 1
    }

    /// Pushes a plan addressed to this pool's workers (an `Each` has one task per local worker) and
    /// keeps the partials for [`Pool::collect`]. A rotating plan passes blocks as the module says.
    pub(crate) fn push(
        &mut self,
        round: Round,
        plan: Arc<Plan<P::Task>>,
        exchange: &mut dyn FnMut(P::Block) -> Result<P::Block, EngineError>,
    ) -> Result<(), EngineError> {
        for (offset, remote) in self.remotes.iter().enumerate() {
            remote
                .commands
                .send(Command::Push(round, Arc::clone(&plan)))
                .map_err(|_| stopped(self.first + offset + 1))?;
        }
        let (partial, block) = push_one(&mut self.worker, self.first, 0, round, &plan)?;
        let mut partials = Vec::with_capacity(self.len());
        let mut blocks = Vec::with_capacity(self.len());
        partials.push(partial);
        blocks.extend(block);
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::Pushed(partial, block)) => {
                    partials.push(partial);
                    blocks.extend(block);
                }
                Ok(Reply::Failed(error)) => return Err(error),
                Ok(_) | Err(_) => return Err(stopped(self.first + offset + 1)),
            }
        }
        if plan.rotate {
            // Worker i takes the block of worker i + 1; the last takes the one from the right.
            let mut blocks = blocks.into_iter();
            let own = blocks.next().ok_or(EngineError::NoBlock { round: round.index, worker: self.first })?;
            let mut incoming: Vec<P::Block> = blocks.collect();
            incoming.push(exchange(own)?);
            let mut incoming = incoming.into_iter();
            if let Some(block) = incoming.next() {
                self.worker.receive_block(block);
            }
            for (offset, (remote, block)) in self.remotes.iter().zip(incoming).enumerate() {
                remote.commands.send(Command::Block(block)).map_err(|_| stopped(self.first + offset + 1))?;
            }
        }
        self.pending.push_back(partials);
        Ok(())
    }

    /// The local partials of the oldest round pushed and not yet collected.
    pub(crate) fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError> {
        self.pending.pop_front().ok_or_else(|| EngineError::Transport("collect without push".into()))
    }

    /// Delivers a commit addressed to this pool's workers (an `Each` has one value per local worker).
    pub(crate) fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError> {
        for (offset, remote) in self.remotes.iter().enumerate() {
            remote
                .commands
                .send(Command::Sync(round, Arc::clone(&commit)))
                .map_err(|_| stopped(self.first + offset + 1))?;
        }
        if let Some(value) = commit.for_worker(0) {
            self.worker.sync(round, value);
        }
        Ok(())
    }

    /// Every local worker's saved state, in worker order.
    pub(crate) fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
        for (offset, remote) in self.remotes.iter().enumerate() {
            remote.commands.send(Command::Save).map_err(|_| stopped(self.first + offset + 1))?;
        }
        let mut states = Vec::with_capacity(self.len());
        states.push(self.worker.save().map_err(|e| checkpoint_failed(self.first, "saving", e))?);
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::State(state)) => states.push(state),
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(self.first + offset + 1)),
            }
        }
        Ok(states)
    }

    /// Restores every local worker from its state, in worker order.
    pub(crate) fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
        if states.len() != self.len() {
            return Err(EngineError::Checkpoint(format!(
                "{} saved states for the {} workers of this process",
                states.len(),
                self.len()
            )));
        }
        let mut states = states.into_iter();
        let first = states.next().ok_or_else(|| EngineError::Checkpoint("no saved worker states".into()))?;
        for (offset, (remote, state)) in self.remotes.iter().zip(states).enumerate() {
            remote.commands.send(Command::Restore(state)).map_err(|_| stopped(self.first + offset + 1))?;
        }
        self.worker.restore(&first).map_err(|e| checkpoint_failed(self.first, "restoring", e))?;
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::Ready) => {}
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(self.first + offset + 1)),
            }
        }
        Ok(())
    }
}

/// The loop of a worker thread: build the worker, then carry out commands until the pool is dropped.
fn serve<P: Program, W: Worker<P>>(
    id: WorkerId,
    local: usize,
    make_worker: &(impl Fn(WorkerId) -> Result<W, BoxError> + Sync),
    commands: Receiver<Command<P>>,
    replies: Sender<Reply<P>>,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut worker = match make_worker(id) {
            Ok(worker) => worker,
            Err(source) => {
                let _ = replies.send(Reply::SetupFailed(source));
                return;
            }
        };
        if replies.send(Reply::Ready).is_err() {
            return;
        }
        while let Ok(command) = commands.recv() {
            let reply = match command {
                Command::Push(round, plan) => match push_one(&mut worker, id, local, round, &plan) {
                    Ok((partial, block)) => Reply::Pushed(partial, block),
                    Err(error) => {
                        let _ = replies.send(Reply::Failed(error));
                        return;
                    }
                },
                Command::Block(block) => {
                    worker.receive_block(block);
                    continue;
                }
                Command::Sync(round, commit) => {
                    if let Some(value) = commit.for_worker(local) {
                        worker.sync(round, value);
                    }
                    continue;
                }
                Command::Save => match worker.save() {
                    Ok(state) => Reply::State(state),
                    Err(e) => Reply::Failed(checkpoint_failed(id, "saving", e)),
                },
                Command::Restore(state) => match worker.restore(&state) {
                    Ok(()) => Reply::Ready,
                    Err(e) => Reply::Failed(checkpoint_failed(id, "restoring", e)),
                },
            };
            if replies.send(reply).is_err() {
                return;
            }
        }
    }));
    if let Err(panic) = outcome {
        let reason = crate::panic_reason(panic.as_ref());
        let _ = replies.send(Reply::Failed(EngineError::WorkerFailed { worker: id, reason }));
    }
}
