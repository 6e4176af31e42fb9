//! The checkpoint flags of every training command, turned into [`strads_runtime::checkpoint`]'s
//! options: the file format, the policy and the signals live there.

use std::path::PathBuf;

use clap::Args;
use strads_runtime::checkpoint::{CheckpointError, CheckpointOptions, Every};
pub use strads_runtime::checkpoint::{FileCheckpoints, file_identity, fingerprint};

use crate::failure::Failure;

/// The checkpoint flags of every training command.
#[derive(Clone, Debug, Default, Args)]
pub struct CheckpointArgs {
    /// Save checkpoints in this folder (created if needed); SIGINT and SIGTERM then save one at the
    /// next round boundary and stop with exit code 3. Without --checkpoint-every or
    /// --checkpoint-seconds, one is saved every 300 seconds.
    #[arg(long, value_name = "DIR", help_heading = "Checkpoints")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Save a checkpoint every N rounds (lasso, logreg) or iterations (lda, mf).
    #[arg(long, value_name = "N", help_heading = "Checkpoints", conflicts_with = "checkpoint_seconds")]
    pub checkpoint_every: Option<u64>,
    /// Save a checkpoint every T seconds.
    #[arg(long, value_name = "T", help_heading = "Checkpoints")]
    pub checkpoint_seconds: Option<f64>,
    /// Continue the run saved in this checkpoint folder; give the same settings and data as the
    /// saved run (a setting that would change the result is refused). Later checkpoints go to
    /// --checkpoint-dir, or to this folder.
    #[arg(long, value_name = "DIR", help_heading = "Checkpoints")]
    pub resume: Option<PathBuf>,
}

impl CheckpointArgs {
    /// Whether any checkpoint flag was given.
    pub fn any(&self) -> bool {
        self.checkpoint_dir.is_some() || self.resume.is_some()
    }

    /// The checked options of these flags, with SIGINT and SIGTERM saving a last checkpoint.
    fn options(&self) -> Result<CheckpointOptions, Failure> {
        let every = match (self.checkpoint_every, self.checkpoint_seconds) {
            (Some(0), _) => return Err(Failure::input("--checkpoint-every must be at least 1")),
            (Some(n), _) => Every::Count(n),
            (None, Some(t)) if !(t.is_finite() && t > 0.0) => {
                return Err(Failure::input(format!(
                    "--checkpoint-seconds must be a positive number of seconds, not {t}"
                )));
            }
            (None, Some(t)) => Every::Seconds(t),
            (None, None) => Every::default(),
        };
        if !self.any() && (self.checkpoint_every.is_some() || self.checkpoint_seconds.is_some()) {
            return Err(Failure::input(
                "--checkpoint-every and --checkpoint-seconds need --checkpoint-dir (or --resume)",
            ));
        }
        Ok(CheckpointOptions { dir: self.checkpoint_dir.clone(), every, resume: self.resume.clone(), signals: true })
    }
}

/// The checkpoints of a run of `app` with these flags; `settings()` gives its result-deciding
/// settings ([`fingerprint`]), computed only when a checkpoint flag is given.
pub fn open(
    args: &CheckpointArgs,
    app: &str,
    settings: impl FnOnce() -> Result<String, CheckpointError>,
) -> Result<FileCheckpoints, Failure> {
    FileCheckpoints::open(&args.options()?, app, settings).map_err(|error| match error {
        CheckpointError::Signals(_) => Failure::Run(error.into()),
        _ => Failure::Input(error.into()),
    })
}
