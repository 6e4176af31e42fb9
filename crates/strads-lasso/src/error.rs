//! Errors of the Lasso application: bad parameters, bad data, or a run the engine could not finish.

/// Why a Lasso fit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LassoError {
    /// A parameter is out of its range; the message names it and the range.
    #[error("invalid parameter: {0}")]
    Params(String),
    /// The data cannot be fitted (no rows, labels of the wrong length).
    #[error("invalid data: {0}")]
    Data(String),
    /// The engine stopped the run.
    #[error(transparent)]
    Engine(#[from] strads_core::EngineError),
}
