//! The one error type of every reader and writer: where in which file, and what is wrong.

use std::path::PathBuf;

/// A problem with input data or an output file.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The content of a file is wrong at a given line (1-based).
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, counting from 1.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file as a whole is wrong (empty, inconsistent with another file).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file could not be read or written. (The error is shown, not chained as a source, so a
    /// message printed with its causes names it once.)
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The ranks of a job could not exchange what they read.
    #[error("exchanging data between ranks: {0}")]
    Collective(strads_core::EngineError),
}

impl DataError {
    /// A content error at `line` (1-based) of `path`.
    pub fn parse(path: &std::path::Path, line: usize, message: impl Into<String>) -> Self {
        DataError::Parse { path: path.to_path_buf(), line, message: message.into() }
    }

    /// A problem with `path` as a whole.
    pub fn invalid(path: &std::path::Path, message: impl Into<String>) -> Self {
        DataError::Invalid { path: path.to_path_buf(), message: message.into() }
    }

    /// `path` could not be read or written.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        DataError::Io { path: path.to_path_buf(), error: source }
    }
}
