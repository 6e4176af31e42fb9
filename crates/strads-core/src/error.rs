//! Errors a run can end with, whatever engine or transport carried it.

/// A boxed error from application code (for example a worker that could not load its shard).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a run stopped before its scheduler said so.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A worker could not be built (its data shard failed to load, for example).
    #[error("worker {worker} could not start: {source}")]
    Setup {
        /// The worker that failed.
        worker: usize,
        /// What went wrong.
        source: BoxError,
    },
    /// A worker stopped in the middle of a run.
    #[error("worker {worker} failed: {reason}")]
    WorkerFailed {
        /// The worker that failed.
        worker: usize,
        /// What went wrong, as far as the transport can tell.
        reason: String,
    },
    /// The scheduler asked to wait while no round was in flight, so nothing could ever change.
    #[error("round {round}: the scheduler waits for results but no round is in flight")]
    Stalled {
        /// The round that could not be scheduled.
        round: u64,
    },
    /// A plan addressed a different number of workers than the run has.
    #[error("round {round}: the plan addresses {addressed} workers but the run has {workers}")]
    PlanShape {
        /// The round whose plan was wrong.
        round: u64,
        /// How many workers the plan addressed.
        addressed: usize,
        /// How many workers the run has.
        workers: usize,
    },
    /// A plan asked to rotate model blocks but a worker held none.
    #[error("round {round}: the plan rotates blocks but worker {worker} holds none")]
    NoBlock {
        /// The round that rotated.
        round: u64,
        /// The worker without a block.
        worker: usize,
    },
    /// Run options that no engine can honour.
    #[error("invalid run options: {0}")]
    Options(String),
    /// The transport between processes failed.
    #[error("transport failed: {0}")]
    Transport(String),
    /// A checkpoint could not be saved or restored.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// The run was asked to stop (a signal, for example) and saved a checkpoint after this many rounds.
    #[error("interrupted after round {rounds}; a checkpoint was saved")]
    Interrupted {
        /// Rounds pulled before stopping.
        rounds: u64,
    },
}

/// A setting outside its range, or settings that do not go together: which parameter (by its
/// field name in the application's parameters), and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParamError {
    /// The parameter at fault (the first one, when several do not go together).
    pub parameter: &'static str,
    /// What is wrong, with the value given.
    pub message: String,
}

impl ParamError {
    /// `parameter` is wrong as `message` says.
    pub fn new(parameter: &'static str, message: impl Into<String>) -> Self {
        ParamError { parameter, message: message.into() }
    }
}
