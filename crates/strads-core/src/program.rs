//! The three user functions of a scheduled program and the typed messages between them.
//!
//! Every message type is named by the [`Program`], so a transport can carry it between threads
//! or processes without knowing what it means, and an application never casts or decodes bytes.

use serde::{Serialize, de::DeserializeOwned};

use crate::{Assignment, BoxError, checkpoint::unsupported};

/// Index of a worker, `0..workers`.
pub type WorkerId = usize;

/// What a transport can carry: owned, shareable between threads, and serializable between processes.
pub trait Message: Send + Sync + Serialize + DeserializeOwned + 'static {}

impl<T> Message for T where T: Send + Sync + Serialize + DeserializeOwned + 'static {}

/// The message types of one scheduled program.
pub trait Program: 'static {
    /// What the scheduler sends a worker for one round (for example the parameter ids to update).
    type Task: Message;
    /// What one worker returns from `push`: partial results over its own data shard.
    type Partial: Message;
    /// What `pull` commits and `sync` delivers to the workers (for example new parameter values).
    type Commit: Message;
    /// What `pull` hands back to the scheduler (priorities, convergence). It never leaves the leader.
    type Feedback;
    /// A model block that travels from worker to worker on a rotation plan; `()` when there is none.
    type Block: Message;
}

/// Where a round stands: its index, and how many earlier rounds every worker had synced when it pushed.
///
/// With a pipeline depth of `s`, a round `t` is pushed before the commits of up to `s` earlier
/// rounds have reached the workers: `synced` is then `t - s` or more. With `s = 0`, `synced == index`.
/// An aggregator uses it to tell which of its own commits a partial result already reflects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Round {
    /// The round's index, from 0.
    pub index: u64,
    /// Rounds `0..synced` were committed and synced on every worker before this round was pushed.
    pub synced: u64,
}

/// The situation in which the scheduler is asked for the next round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The index the next round will have.
    pub round: u64,
    /// How many earlier rounds are pushed but not yet pulled.
    pub in_flight: usize,
}

/// One round's plan: the tasks, and whether model blocks rotate after the push.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan<T> {
    /// The tasks, for all workers or one per worker.
    pub tasks: Assignment<T>,
    /// After pushing, every worker passes its active block to the previous worker on the ring
    /// and receives one from the next (see the static engine's rotation).
    pub rotate: bool,
    /// Only worker 0, the one on the leader's thread, pushes; the others sit the round out (they
    /// are not woken, and the aggregator gets worker 0's partial alone). For rounds whose work is
    /// too small to be worth a crossing of threads or processes. Commits still reach every worker.
    pub leader_only: bool,
}

impl<T> Plan<T> {
    /// The same task for every worker, no rotation.
    pub fn all(task: T) -> Self {
        Plan { tasks: Assignment::All(task), rotate: false, leader_only: false }
    }

    /// A task for worker 0 alone (see [`Plan::leader_only`]).
    pub fn leader(task: T) -> Self {
        Plan { tasks: Assignment::All(task), rotate: false, leader_only: true }
    }

    /// One task per worker, no rotation.
    pub fn each(tasks: Vec<T>) -> Self {
        Plan { tasks: Assignment::Each(tasks), rotate: false, leader_only: false }
    }

    /// The same plan, with the blocks rotating after the push.
    pub fn rotating(mut self) -> Self {
        self.rotate = true;
        self
    }
}

/// What the scheduler decides for the next round.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision<T> {
    /// Push this plan.
    Run(Plan<T>),
    /// Pull a round in flight first, then ask again (a barrier, for example before a full evaluation).
    Wait,
    /// The run is over; rounds in flight are still pulled.
    Stop,
}

/// `schedule`: decides which parameters are updated in each round. Runs on the leader.
pub trait Scheduler<P: Program> {
    /// Plans the next round.
    fn schedule(&mut self, slot: Slot) -> Decision<P::Task>;

    /// Receives what `pull` returned for a round; rounds arrive in order.
    fn feedback(&mut self, round: Round, feedback: P::Feedback);

    /// Whole iterations (passes over the model) done so far, for programs that count them; a
    /// checkpoint policy given in iterations counts these instead of rounds.
    fn iteration(&self) -> Option<u64> {
        None
    }

    /// Saves the state needed to continue exactly from the current round boundary (checkpoints).
    fn save(&self) -> Result<Vec<u8>, BoxError> {
        Err(unsupported("scheduler"))
    }

    /// Restores a state written by [`Scheduler::save`] into a scheduler freshly built for the same run.
    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let _ = state;
        Err(unsupported("scheduler"))
    }
}

/// `push` and `sync`: one worker, owning one shard of the data and the state derived from it.
pub trait Worker<P: Program>: Send {
    /// Computes this worker's partial results for a task over its own shard.
    fn push(&mut self, round: Round, task: &P::Task) -> P::Partial;

    /// Applies committed values (updating derived state such as residuals).
    fn sync(&mut self, round: Round, commit: &P::Commit);

    /// Gives up the block just worked on, when the plan rotates. Workers without blocks return `None`.
    fn pass_block(&mut self) -> Option<P::Block> {
        None
    }

    /// Receives the block that arrives from the next worker on the ring.
    fn receive_block(&mut self, block: P::Block) {
        let _ = block;
    }

    /// Saves what this worker derived or changed since it was built (not its data), so that a
    /// worker freshly built over the same shard continues exactly (checkpoints).
    fn save(&self) -> Result<Vec<u8>, BoxError> {
        Err(unsupported("worker"))
    }

    /// Restores a state written by [`Worker::save`] into a worker freshly built over the same shard.
    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let _ = state;
        Err(unsupported("worker"))
    }
}

/// What `pull` returns: the commit for the workers (if any) and the scheduler's feedback.
#[derive(Clone, Debug, PartialEq)]
pub struct Pulled<C, F> {
    /// Committed values to sync to the workers, or `None` when the round changed nothing they hold.
    pub commit: Option<Assignment<C>>,
    /// Feedback for the scheduler.
    pub feedback: F,
}

/// `pull`: combines the workers' partial results and commits new values. Runs on the leader.
pub trait Aggregator<P: Program> {
    /// Combines one round's partials (in worker order; worker 0's alone for a
    /// [`Plan::leader`] round) into a commit and feedback.
    fn pull(
        &mut self,
        round: Round,
        tasks: &Assignment<P::Task>,
        partials: Vec<P::Partial>,
    ) -> Pulled<P::Commit, P::Feedback>;

    /// Saves the state needed to continue exactly from the current round boundary (checkpoints).
    fn save(&self) -> Result<Vec<u8>, BoxError> {
        Err(unsupported("aggregator"))
    }

    /// Restores a state written by [`Aggregator::save`] into an aggregator freshly built for the same run.
    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let _ = state;
        Err(unsupported("aggregator"))
    }
}
