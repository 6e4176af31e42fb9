//! Why the command failed, and the exit code that says so.

/// A failed command.
#[derive(Debug)]
pub enum Failure {
    /// Bad input data or options: exit code 2.
    Input(anyhow::Error),
    /// The run itself failed: exit code 1.
    Run(anyhow::Error),
    /// The run was stopped by SIGINT or SIGTERM after saving a checkpoint: exit code 3.
    Interrupted(anyhow::Error),
}

impl Failure {
    /// The exit code.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Run(_) => 1,
            Failure::Interrupted(_) => 3,
        }
    }

    /// The message, with its causes on one line.
    pub fn message(&self) -> String {
        let error = match self {
            Failure::Input(e) | Failure::Run(e) | Failure::Interrupted(e) => e,
        };
        format!("{error:#}")
    }

    /// A failure of the engine: interrupted after a checkpoint, or a failed run.
    pub fn engine(error: strads_core::EngineError) -> Self {
        match error {
            strads_core::EngineError::Interrupted { .. } => Failure::Interrupted(error.into()),
            _ => Failure::Run(error.into()),
        }
    }

    /// A bad-input failure from anything displayable.
    pub fn input(message: impl std::fmt::Display) -> Self {
        Failure::Input(anyhow::anyhow!("{message}"))
    }
}

impl From<strads_data::DataError> for Failure {
    fn from(error: strads_data::DataError) -> Self {
        match error {
            strads_data::DataError::Collective(_) => Failure::Run(error.into()),
            _ => Failure::Input(error.into()),
        }
    }
}

impl From<strads_runtime::RuntimeError> for Failure {
    fn from(error: strads_runtime::RuntimeError) -> Self {
        match error {
            strads_runtime::RuntimeError::Engine(engine) => Failure::Run(engine.into()),
            _ => Failure::Input(error.into()),
        }
    }
}

impl From<strads_lasso::LassoError> for Failure {
    fn from(error: strads_lasso::LassoError) -> Self {
        match error {
            strads_lasso::LassoError::Engine(engine) => Failure::engine(engine),
            _ => Failure::Input(error.into()),
        }
    }
}

/// Refuses a run whose estimated memory `needed` is above `limit` (`--max-memory`).
pub fn check_memory(needed: u64, limit: u64, what: &str) -> Result<(), Failure> {
    if needed > limit {
        return Err(Failure::input(format!(
            "{what} need about {} of memory, above the limit of {} (raise --max-memory, or use more machines)",
            strads_lasso::human_bytes(needed),
            strads_lasso::human_bytes(limit)
        )));
    }
    Ok(())
}
