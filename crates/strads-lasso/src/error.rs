//! Errors of the Lasso application: bad parameters, bad data, or a run the engine could not finish.

/// Why a Lasso fit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LassoError {
    /// A parameter is out of its range, or settings do not go together; the error names the
    /// parameter, and its message the range.
    #[error("invalid parameter: {0}")]
    Params(strads_core::ParamError),
    /// The data cannot be fitted (no rows, labels of the wrong length).
    #[error("invalid data: {0}")]
    Data(String),
    /// A file that cannot be read or written, or does not hold what it should (a model's files).
    #[error(transparent)]
    File(strads_data::DataError),
    /// Cross-validation asked for more folds than there are samples.
    #[error("{folds} cross-validation folds: more folds than the {samples} samples")]
    Folds {
        /// Folds asked for.
        folds: usize,
        /// Samples of the data.
        samples: usize,
    },
    /// Cross-validation of a fit that made no path.
    #[error("cross-validation needs a path of lambdas, and the fit made none")]
    NoPath,
    /// The engine stopped the run.
    #[error(transparent)]
    Engine(#[from] strads_core::EngineError),
}
