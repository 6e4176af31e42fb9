//! Errors of the matrix-factorization application: bad parameters, unusable ratings, or an engine failure.

/// Why a factorization could not be run.
#[derive(Debug, thiserror::Error)]
pub enum MfError {
    /// A parameter is out of range.
    #[error("invalid parameter: {0}")]
    Params(strads_core::ParamError),
    /// The ratings cannot be factorized as given.
    #[error("invalid ratings: {0}")]
    Data(String),
    /// A file that cannot be read or written, or does not hold what it should (a model's files).
    #[error(transparent)]
    File(#[from] strads_data::DataError),
    /// The engine stopped the run.
    #[error(transparent)]
    Engine(#[from] strads_core::EngineError),
}
