//! The loop of a worker thread, shared by the embedded runtime and an MPI rank's pool: the
//! commands a worker carries out in the order they were issued, its replies, and how its block
//! travels when a plan rotates.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvError, Sender, TryRecvError};

use strads_core::{Assignment, BoxError, EngineError, Plan, Program, Round, Worker, WorkerId};
pub(crate) use strads_engine::checkpoint_failed;
use strads_engine::push_on;

/// What the leader's side asks of a worker thread.
pub(crate) enum Command<P: Program> {
    /// Push a round's plan (and pass the block on if it rotates).
    Push(Round, Arc<Plan<P::Task>>),
    /// Take this block (a pool's worker, whose block came back through the calling thread).
    Block(P::Block),
    /// Sync a round's commit.
    Sync(Round, Arc<Assignment<P::Commit>>),
    /// Save the worker's state.
    Save,
    /// Restore the worker from a saved state.
    Restore(Vec<u8>),
}

/// What a worker thread answers.
pub(crate) enum Reply<P: Program> {
    /// Built, or restored.
    Ready,
    /// The worker could not be built.
    SetupFailed(BoxError),
    /// A push's partial, with the block to hand on when the worker does not pass it itself.
    Pushed(P::Partial, Option<P::Block>),
    /// A saved state.
    State(Vec<u8>),
    /// The worker failed; the thread has stopped.
    Failed(EngineError),
}

/// A worker thread's channels, as the leader's side holds them.
pub(crate) struct Remote<P: Program> {
    pub(crate) commands: Sender<Command<P>>,
    pub(crate) replies: Receiver<Reply<P>>,
}

/// Most commits held back from the worker threads at once (see [`Held`]).
pub(crate) const HOLD_COMMITS: usize = 32;

/// Commits held back from the worker threads while the calling thread's worker alone has work.
///
/// After a round for worker 0 alone ([`Plan::leader`]) the other threads have nothing to do but
/// apply its commit, and sending it wakes a sleeping thread: on a virtual machine that costs the
/// sender tens of microseconds, every round of a run of such rounds, for nothing. So the commits
/// that follow a leader-only push are held and go, in order, ahead of the next command the threads
/// get (or once [`HOLD_COMMITS`] wait, which bounds the memory held). Each thread still applies
/// every commit in order before its next push; commits after a shared round go at once, so that
/// the threads apply them while the leader plans.
pub(crate) struct Held<P: Program> {
    commits: Vec<(Round, Arc<Assignment<P::Commit>>)>,
    /// Whether the latest push was for worker 0 alone.
    leader_only: bool,
}

impl<P: Program> Held<P> {
    pub(crate) fn new() -> Self {
        Held { commits: Vec::new(), leader_only: false }
    }

    /// A plan is about to be pushed: a shared one first releases what is held.
    pub(crate) fn before_push(
        &mut self,
        plan: &Plan<P::Task>,
        remotes: &[Remote<P>],
        first: WorkerId,
    ) -> Result<(), EngineError> {
        self.leader_only = plan.leader_only;
        if plan.leader_only { Ok(()) } else { self.release(remotes, first) }
    }

    /// Sends `commit` to the threads, or holds it when the latest push was worker 0's alone.
    pub(crate) fn sync(
        &mut self,
        round: Round,
        commit: Arc<Assignment<P::Commit>>,
        remotes: &[Remote<P>],
        first: WorkerId,
    ) -> Result<(), EngineError> {
        if remotes.is_empty() {
            return Ok(());
        }
        self.commits.push((round, commit));
        if self.leader_only && self.commits.len() < HOLD_COMMITS { Ok(()) } else { self.release(remotes, first) }
    }

    /// Sends every held commit to every thread, oldest first. `first` is the id of the calling
    /// thread's worker; the threads' workers follow it.
    pub(crate) fn release(&mut self, remotes: &[Remote<P>], first: WorkerId) -> Result<(), EngineError> {
        for (round, commit) in self.commits.drain(..) {
            for (offset, remote) in remotes.iter().enumerate() {
                remote
                    .commands
                    .send(Command::Sync(round, Arc::clone(&commit)))
                    .map_err(|_| stopped(first + offset + 1))?;
            }
        }
        Ok(())
    }
}

/// Where a worker's block goes when a plan rotates.
pub(crate) trait PassBlocks<B> {
    /// Passes `block` on: returns the block the worker takes in its place now, or gives `block`
    /// back to be returned with the push's reply (it then arrives later as [`Command::Block`]).
    fn pass(&self, block: B) -> Result<Passed<B>, EngineError>;
}

/// What became of a passed block.
pub(crate) enum Passed<B> {
    /// The block the worker takes now (from its right neighbour).
    Took(B),
    /// The worker's own block, to send back with the reply.
    Back(B),
}

/// Blocks that go back with the reply: the caller's thread passes them on (an MPI rank's pool).
pub(crate) struct ThroughCaller;

impl<B> PassBlocks<B> for ThroughCaller {
    fn pass(&self, block: B) -> Result<Passed<B>, EngineError> {
        Ok(Passed::Back(block))
    }
}

pub(crate) fn stopped(worker: WorkerId) -> EngineError {
    EngineError::WorkerFailed { worker, reason: "the worker thread stopped".into() }
}

/// Receives a message, polling `spin` times before blocking.
pub(crate) fn receive<T>(from: &Receiver<T>, spin: u32) -> Result<T, RecvError> {
    for _ in 0..spin {
        match from.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
    from.recv()
}

/// Pushes worker `id` (the `local`-th of the plan's workers here) and, when the plan rotates,
/// passes its block through `blocks`; returns the partial and the block to hand back, if any.
pub(crate) fn push_and_pass<P: Program, W: Worker<P>>(
    worker: &mut W,
    id: WorkerId,
    local: usize,
    round: Round,
    plan: &Plan<P::Task>,
    blocks: &impl PassBlocks<P::Block>,
) -> Result<(P::Partial, Option<P::Block>), EngineError> {
    let partial = push_on(worker, local, round, plan).map_err(|e| match e {
        EngineError::PlanShape { round, addressed, .. } => EngineError::PlanShape { round, addressed, workers: id + 1 },
        other => other,
    })?;
    if !plan.rotate {
        return Ok((partial, None));
    }
    let block = worker.pass_block().ok_or(EngineError::NoBlock { round: round.index, worker: id })?;
    match blocks.pass(block)? {
        Passed::Took(incoming) => {
            worker.receive_block(incoming);
            Ok((partial, None))
        }
        Passed::Back(own) => Ok((partial, Some(own))),
    }
}

/// The loop of worker thread `id` (the `local`-th worker of its process): build the worker, then
/// carry out commands until the leader's side hangs up. A failure or a panic is replied as
/// [`Reply::Failed`], and the thread stops (dropping its channels, so whoever waits on it stops too).
pub(crate) fn serve<P: Program, W: Worker<P>>(
    id: WorkerId,
    local: usize,
    make_worker: &(impl Fn(WorkerId) -> Result<W, BoxError> + Sync),
    commands: Receiver<Command<P>>,
    replies: Sender<Reply<P>>,
    blocks: impl PassBlocks<P::Block>,
    spin: u32,
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
        while let Ok(command) = receive(&commands, spin) {
            let reply = match command {
                Command::Push(round, plan) => match push_and_pass(&mut worker, id, local, round, &plan, &blocks) {
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
