//! The job's runtime as the commands see it: [`strads_runtime::job`], and each command's
//! `--workers` resolved over the ranks of an MPI job.

pub use strads_runtime::job::*;

use crate::cli::{Command, LdaAction, MfAction};
use crate::failure::Failure;

/// Sets each training command's `--workers` to the total over the ranks, and refuses commands
/// that do not run on several ranks. Outside an MPI job, leaves everything as it is.
pub fn resolve(command: &mut Command) -> Result<(), Failure> {
    if !strads_runtime::job::in_job() {
        return Ok(());
    }
    let workers = match command {
        Command::Lasso(args) => &mut args.workers,
        Command::Logreg(args) => &mut args.model.workers,
        Command::Lda(args) => match (&args.action, &mut args.train) {
            (None, Some(train)) => &mut train.workers,
            (Some(LdaAction::Prepare(_)), _) => return single_process("strads lda prepare"),
            _ => return single_process("strads lda infer"),
        },
        Command::Mf(args) => match (&args.action, &mut args.train) {
            (None, Some(train)) => &mut train.workers,
            (Some(MfAction::Predict(_)), _) => return single_process("strads mf predict"),
            _ => return single_process("strads mf recommend"),
        },
        Command::Predict(_) => return single_process("strads predict"),
        Command::Gen(_) => return single_process("strads gen"),
        Command::Demo(_) => return single_process("strads demo"),
        Command::Plot(_) => return single_process("strads plot"),
    };
    *workers = strads_runtime::job::total_workers(*workers)?;
    Ok(())
}

fn single_process(what: &str) -> Result<(), Failure> {
    Ok(strads_runtime::job::single(what)?)
}
