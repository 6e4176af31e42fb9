//! Errors of the LDA application: bad parameters, an unusable corpus, broken invariants, or an engine failure.

/// Why an LDA model could not be trained.
#[derive(Debug, thiserror::Error)]
pub enum LdaError {
    /// A parameter is out of its range; the message names it and the range.
    #[error("invalid parameter: {0}")]
    Params(strads_core::ParamError),
    /// The corpus cannot be trained on (no token, fewer documents than workers).
    #[error("invalid corpus: {0}")]
    Data(String),
    /// A count invariant failed under `verify` (a bug, reported rather than hidden).
    #[error("count invariant broken after iteration {iteration}: {message}")]
    Invariant {
        /// The iteration after which the check failed.
        iteration: u64,
        /// What was wrong.
        message: String,
    },
    /// A file that cannot be read or written, or does not hold what it should (a model's files).
    #[error(transparent)]
    File(#[from] strads_data::DataError),
    /// The engine stopped the run.
    #[error(transparent)]
    Engine(#[from] strads_core::EngineError),
}
