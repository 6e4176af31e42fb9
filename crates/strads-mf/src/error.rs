//! Errors of the matrix-factorization application: bad parameters, unusable ratings, or an engine failure.

/// Why a factorization could not be run.
#[derive(Debug, thiserror::Error)]
pub enum MfError {
    /// A parameter is out of range.
    #[error("invalid parameter: {0}")]
    Params(String),
    /// The ratings cannot be factorized as given.
    #[error("invalid ratings: {0}")]
    Data(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] strads_core::EngineError),
}
