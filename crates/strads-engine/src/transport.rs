//! The boundary between the round driver and whatever moves messages to the workers.
//!
//! A transport delivers each round's plan to every worker, returns their partials in worker order
//! and delivers commits. It must keep each worker's operations in the order the driver issued
//! them; that order, not timing, is what makes a run deterministic.

use std::sync::Arc;

use strads_core::{Assignment, BoxError, EngineError, Plan, Program, Round, Worker, WorkerId};

/// Moves one program's messages between the leader and the workers.
pub trait Transport<P: Program> {
    /// Total number of workers.
    fn workers(&self) -> usize;

    /// Delivers a round's plan; every worker pushes (and rotates blocks if the plan says so).
    fn push(&mut self, round: Round, plan: Arc<Plan<P::Task>>) -> Result<(), EngineError>;

    /// The partials of the oldest pushed round not yet collected, in worker order.
    fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError>;

    /// Delivers a round's commit; every worker syncs it before its next push.
    fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError>;

    /// Every worker's saved state, in worker order, after it carried out every operation issued so far.
    fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError>;

    /// Restores every worker from its saved state (in worker order) before the first round.
    fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError>;
}

/// Runs one worker's `push` for a plan, picking its task out of the assignment.
pub fn push_on<P: Program, W: Worker<P>>(
    worker: &mut W,
    id: WorkerId,
    round: Round,
    plan: &Plan<P::Task>,
) -> Result<P::Partial, EngineError> {
    let task = plan.tasks.for_worker(id).ok_or(EngineError::PlanShape {
        round: round.index,
        addressed: match &plan.tasks {
            Assignment::All(_) => 1,
            Assignment::Each(tasks) => tasks.len(),
        },
        workers: id + 1,
    })?;
    Ok(worker.push(round, task))
}

/// The error of worker `worker` failing to save or restore its state (`what`: "saving", "restoring").
pub fn checkpoint_failed(worker: WorkerId, what: &str, error: BoxError) -> EngineError {
    EngineError::Checkpoint(format!("{what} worker {worker}: {error}"))
}
