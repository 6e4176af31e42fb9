//! Which runtime carries a run: worker threads of this process, or the ranks of an MPI job.
//!
//! A process started by `mpirun`, `mpiexec` or `srun` as one of an MPI job's ranks (and built with
//! the `mpi` feature) joins the job at start-up; every training command then runs on all ranks,
//! `--workers` being the total over the ranks (`--threads` per rank). Only rank 0 writes outputs.

use std::cell::Cell;
#[cfg(feature = "mpi")]
use std::cell::RefCell;
#[cfg(feature = "mpi")]
use std::rc::Rc;

use serde::Serialize;
use strads_core::{Aggregator, BoxError, Checkpoints, EngineError, Launcher, RunOptions, Scheduler, Worker, WorkerId};
use strads_runtime::Embedded;

use crate::cli::{Command, LdaAction, MfAction};
use crate::failure::Failure;

#[cfg(feature = "mpi")]
use strads_runtime::Mpi;

thread_local! {
    #[cfg(feature = "mpi")]
    static MPI: RefCell<Option<Rc<Mpi>>> = const { RefCell::new(None) };
    static THREADS: Cell<Option<usize>> = const { Cell::new(None) };
    static INPUT_READ: Cell<u64> = const { Cell::new(0) };
}

/// Counts a whole input file (or the files of an input folder) as read by this process.
pub fn note_input_file(path: &std::path::Path) {
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    let bytes = match std::fs::read_dir(path) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| size(&e.path())).sum(),
        Err(_) => size(path),
    };
    note_input_read(bytes);
}

/// Counts bytes of training input this process read (for `input_bytes_read_per_rank`).
pub fn note_input_read(bytes: u64) {
    INPUT_READ.set(INPUT_READ.get() + bytes);
}

/// Joins the MPI job this process was started in, if any; `threads` is the `--threads` flag.
pub fn start(threads: Option<usize>) -> Result<(), Failure> {
    THREADS.set(threads);
    let launched = strads_runtime::launched_ranks();
    #[cfg(feature = "mpi")]
    if launched.is_some() {
        let mpi = Mpi::init().map_err(|e| Failure::Run(e.into()))?;
        MPI.with_borrow_mut(|slot| *slot = Some(Rc::new(mpi)));
        return Ok(());
    }
    match launched {
        Some(ranks) if ranks > 1 => Err(Failure::input(format!(
            "started as one of {ranks} MPI ranks, but this strads was built without MPI (build it with --features mpi)"
        ))),
        _ if threads.is_some() => {
            Err(Failure::input("--threads sets the workers per rank of an MPI job; here use --workers"))
        }
        _ => Ok(()),
    }
}

/// The MPI job this process is a rank of, if any.
#[cfg(feature = "mpi")]
pub fn mpi() -> Option<Rc<Mpi>> {
    MPI.with_borrow(Clone::clone)
}

/// The MPI job this process is a rank of, if it has more than one rank (where input is read in shares).
#[cfg(feature = "mpi")]
pub fn job() -> Option<Rc<Mpi>> {
    mpi().filter(|m| m.ranks() > 1)
}

/// Leaves the MPI job normally (after every rank's last message), if this process is in one.
pub fn finish() {
    #[cfg(feature = "mpi")]
    MPI.with_borrow_mut(|slot| drop(slot.take()));
}

/// Ends the whole job after an error on this rank: MPI stops every rank with `code`. Outside an
/// MPI job, returns and the caller exits with `code`.
pub fn abort(code: u8) {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi()
        && mpi.ranks() > 1
    {
        mpi.abort(i32::from(code));
    }
    let _ = code;
}

/// This process's rank and the number of ranks (0 and 1 outside an MPI job).
pub fn rank() -> (usize, usize) {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi() {
        return (mpi.rank(), mpi.ranks());
    }
    (0, 1)
}

/// Whether this process is a rank of an MPI job.
fn in_job() -> bool {
    #[cfg(feature = "mpi")]
    return mpi().is_some();
    #[cfg(not(feature = "mpi"))]
    false
}

/// Whether this process writes the outputs (rank 0, or the only process).
pub fn is_leader() -> bool {
    rank().0 == 0
}

/// Sets each training command's `--workers` to the total over the ranks, and refuses commands
/// that do not run on several ranks. Outside an MPI job, leaves everything as it is.
pub fn resolve(command: &mut Command) -> Result<(), Failure> {
    if !in_job() {
        return Ok(());
    }
    let workers = match command {
        Command::Lasso(args) => &mut args.workers,
        Command::Logreg(args) => &mut args.model.workers,
        Command::Lda(args) => match (&args.action, &mut args.train) {
            (None, Some(train)) => &mut train.workers,
            (Some(LdaAction::Prepare(_)), _) => return single("strads lda prepare"),
            _ => return single("strads lda infer"),
        },
        Command::Mf(args) => match (&args.action, &mut args.train) {
            (None, Some(train)) => &mut train.workers,
            (Some(MfAction::Predict(_)), _) => return single("strads mf predict"),
            _ => return single("strads mf recommend"),
        },
        Command::Predict(_) => return single("strads predict"),
        Command::Gen(_) => return single("strads gen"),
        Command::Demo(_) => return single("strads demo"),
        Command::Plot(_) => return single("strads plot"),
    };
    *workers = total_workers(*workers, THREADS.get(), rank().1)?;
    Ok(())
}

fn single(what: &str) -> Result<(), Failure> {
    if rank().1 > 1 {
        return Err(Failure::input(format!("{what} runs in one process: start it without mpirun")));
    }
    Ok(())
}

/// The total number of workers of an MPI job: `ranks x threads`; without `--threads`, `--workers`
/// must be a multiple of the ranks, and the default of 1 means one worker per rank.
fn total_workers(workers: usize, threads: Option<usize>, ranks: usize) -> Result<usize, Failure> {
    match threads {
        Some(0) => Err(Failure::input("--threads must be at least 1")),
        Some(t) if workers == 1 || workers == t * ranks => Ok(t * ranks),
        Some(t) => Err(Failure::input(format!(
            "--workers {workers} differs from {ranks} ranks x --threads {t}: give one of them"
        ))),
        None if workers.is_multiple_of(ranks) => Ok(workers),
        None if workers == 1 => Ok(ranks),
        None => Err(Failure::input(format!("--workers {workers} is not a multiple of the {ranks} MPI ranks"))),
    }
}

/// The runtime of one run.
pub enum Runtime {
    /// Threads of this process.
    Embedded(Embedded),
    /// Ranks of an MPI job, with this many workers each.
    #[cfg(feature = "mpi")]
    Mpi(Rc<Mpi>, usize),
}

/// The runtime for a run of `workers` workers in total.
pub fn launcher(workers: usize) -> Result<Runtime, Failure> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi() {
        let ranks = mpi.ranks();
        if !workers.is_multiple_of(ranks) {
            return Err(Failure::input(format!("{workers} workers cannot be spread evenly over {ranks} MPI ranks")));
        }
        return Ok(Runtime::Mpi(mpi, workers / ranks));
    }
    Embedded::new(workers).map(Runtime::Embedded).map_err(Failure::input)
}

impl Launcher for Runtime {
    fn workers(&self) -> usize {
        match self {
            Runtime::Embedded(e) => e.workers(),
            #[cfg(feature = "mpi")]
            Runtime::Mpi(mpi, threads) => mpi.ranks() * threads,
        }
    }

    fn is_leader(&self) -> bool {
        match self {
            Runtime::Embedded(e) => e.is_leader(),
            #[cfg(feature = "mpi")]
            Runtime::Mpi(mpi, _) => mpi.rank() == 0,
        }
    }

    fn run_checkpointed<P, W, S, A>(
        &self,
        options: RunOptions,
        checkpoints: &mut dyn Checkpoints,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: strads_core::Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>,
    {
        match self {
            Runtime::Embedded(e) => e.run_checkpointed(options, checkpoints, make_worker, make_leader),
            #[cfg(feature = "mpi")]
            Runtime::Mpi(mpi, threads) => {
                mpi.launcher(*threads)?.run_checkpointed(options, checkpoints, make_worker, make_leader)
            }
        }
    }
}

/// Every rank's `values` one after another on rank 0 (nothing elsewhere); outside an MPI job, `values`.
pub fn gather_on_leader<T: Serialize + serde::de::DeserializeOwned>(values: Vec<T>) -> Result<Vec<T>, Failure> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = job() {
        return crate::shares::gather_on_leader(&mpi, values);
    }
    Ok(values)
}

/// How a run was spread: written into every `summary.json`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Scale {
    /// Processes (MPI ranks) of the run; 1 for the embedded runtime.
    pub ranks: usize,
    /// The largest peak resident memory of any rank, in bytes (0 where the system does not say).
    pub peak_rss_bytes_per_rank: u64,
    /// Bytes all ranks sent during training, per engine round (0 for the embedded runtime).
    pub bytes_sent_per_round: f64,
    /// The most bytes of the training input any rank read (the whole file, unless read in shares).
    pub input_bytes_read_per_rank: u64,
}

/// This process's peak resident memory (`VmHWM`), in bytes; 0 where the system does not say.
pub fn peak_rss() -> u64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return 0 };
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Measures the run just finished. Every rank of an MPI job must call it at the same point.
pub fn scale() -> Scale {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi() {
        let peak = mpi.all_max(peak_rss());
        let sent = mpi.all_sum_one(mpi.run_bytes());
        let rounds = mpi.all_max(mpi.rounds());
        return Scale {
            ranks: mpi.ranks(),
            peak_rss_bytes_per_rank: peak,
            bytes_sent_per_round: if rounds == 0 { 0.0 } else { sent as f64 / rounds as f64 },
            input_bytes_read_per_rank: mpi.all_max(INPUT_READ.get()),
        };
    }
    here()
}

/// [`scale`] of this process alone (a run without MPI).
pub fn here() -> Scale {
    Scale {
        ranks: 1,
        peak_rss_bytes_per_rank: peak_rss(),
        bytes_sent_per_round: 0.0,
        input_bytes_read_per_rank: INPUT_READ.get(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_spread_over_ranks() {
        assert_eq!(total_workers(1, None, 3).ok(), Some(3));
        assert_eq!(total_workers(6, None, 3).ok(), Some(6));
        assert!(total_workers(4, None, 3).is_err());
        assert_eq!(total_workers(1, Some(2), 3).ok(), Some(6));
        assert_eq!(total_workers(6, Some(2), 3).ok(), Some(6));
        assert!(total_workers(4, Some(2), 3).is_err());
        assert!(total_workers(1, Some(0), 3).is_err());
        assert_eq!(total_workers(1, None, 1).ok(), Some(1));
    }
}
