//! The job this process belongs to, chosen from the environment: worker threads of this process,
//! or the ranks of an MPI job.
//!
//! A process started by `mpirun`, `mpiexec` or `srun` as one of an MPI job's ranks (and built with
//! the `mpi` feature) joins the job in [`start`]; every training run then runs on all ranks, the
//! total number of workers spread evenly over them ([`total_workers`]). MPI allows one job per
//! process, so this module keeps it for the process (on the thread that called [`start`]), with
//! the bytes of input this process read, for [`scale`].

use std::cell::Cell;
#[cfg(feature = "mpi")]
use std::cell::RefCell;
#[cfg(feature = "mpi")]
use std::rc::Rc;

use strads_core::{Aggregator, BoxError, Checkpoints, EngineError, Launcher, RunOptions, Scheduler, Worker, WorkerId};

use crate::Embedded;
#[cfg(feature = "mpi")]
use crate::Mpi;

thread_local! {
    #[cfg(feature = "mpi")]
    static MPI: RefCell<Option<Rc<Mpi>>> = const { RefCell::new(None) };
    static THREADS: Cell<Option<usize>> = const { Cell::new(None) };
    static INPUT_READ: Cell<u64> = const { Cell::new(0) };
}

/// Why the job cannot start or spread its workers.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Started by an MPI launcher as one of several ranks, without the `mpi` feature.
    #[error(
        "started as one of {ranks} MPI ranks, but this strads was built without MPI (build it with --features mpi)"
    )]
    NoMpi {
        /// The ranks the launcher started.
        ranks: usize,
    },
    /// Several Slurm tasks without an MPI process-management interface: each would run alone.
    #[error(
        "started by srun as one of {tasks} tasks, but with no MPI process-management interface (no PMI or PMIx variables): each task would run alone and write the same outputs; launch with srun --mpi=pmix (or pmi2), or with mpirun"
    )]
    UnmanagedTasks {
        /// The tasks of the Slurm step.
        tasks: usize,
    },
    /// A launcher that announced another number of ranks than the MPI communicator has.
    #[error(
        "the launcher started {launcher} ranks, but the MPI job has {communicator}: is this strads built against the MPI library of the launcher?"
    )]
    SizeMismatch {
        /// Ranks the launcher's environment announces.
        launcher: usize,
        /// Ranks of the MPI communicator.
        communicator: usize,
    },
    /// Workers per rank asked for outside an MPI job.
    #[error("--threads sets the workers per rank of an MPI job; here use --workers")]
    ThreadsOutsideJob,
    /// Zero workers per rank.
    #[error("--threads must be at least 1")]
    ZeroThreads,
    /// A total number of workers and a number per rank that disagree.
    #[error("--workers {workers} differs from {ranks} ranks x --threads {threads}: give one of them")]
    WorkersAndThreads {
        /// Workers in total.
        workers: usize,
        /// Ranks of the job.
        ranks: usize,
        /// Workers per rank.
        threads: usize,
    },
    /// A total number of workers that the ranks cannot share evenly.
    #[error("--workers {workers} is not a multiple of the {ranks} MPI ranks")]
    Uneven {
        /// Workers in total.
        workers: usize,
        /// Ranks of the job.
        ranks: usize,
    },
    /// A command that runs in one process, started on several ranks.
    #[error("{what} runs in one process: start it without mpirun")]
    Single {
        /// The command.
        what: String,
    },
    /// MPI or the threads failed to start.
    #[error(transparent)]
    Engine(#[from] EngineError),
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

/// Counts bytes of training input this process read (for [`Scale::input_bytes_read_per_rank`]).
pub fn note_input_read(bytes: u64) {
    INPUT_READ.set(INPUT_READ.get() + bytes);
}

/// Joins the MPI job this process was started in, if any; `threads` is the number of workers per
/// rank asked for (only an MPI job takes one).
pub fn start(threads: Option<usize>) -> Result<(), RuntimeError> {
    THREADS.set(threads);
    if let Some(tasks) = crate::unmanaged_slurm_tasks_in(|name| std::env::var(name).ok()) {
        return Err(RuntimeError::UnmanagedTasks { tasks });
    }
    let launched = crate::launched_ranks();
    #[cfg(feature = "mpi")]
    if let Some(launcher) = launched {
        let mpi = Mpi::init()?;
        if mpi.ranks() != launcher {
            return Err(RuntimeError::SizeMismatch { launcher, communicator: mpi.ranks() });
        }
        MPI.with_borrow_mut(|slot| *slot = Some(Rc::new(mpi)));
        return Ok(());
    }
    match launched {
        Some(ranks) if ranks > 1 => Err(RuntimeError::NoMpi { ranks }),
        _ if threads.is_some() => Err(RuntimeError::ThreadsOutsideJob),
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
pub fn in_job() -> bool {
    #[cfg(feature = "mpi")]
    return mpi().is_some();
    #[cfg(not(feature = "mpi"))]
    false
}

/// Whether this process writes the outputs (rank 0, or the only process).
pub fn is_leader() -> bool {
    rank().0 == 0
}

/// Refuses to go on if this process is one of several ranks: `what` runs in one process.
pub fn single(what: &str) -> Result<(), RuntimeError> {
    if rank().1 > 1 {
        return Err(RuntimeError::Single { what: what.into() });
    }
    Ok(())
}

/// The total number of workers of a run asked for with `workers` in this job: outside an MPI job,
/// `workers`; in one, see [`spread`] (with the workers per rank given to [`start`]).
pub fn total_workers(workers: usize) -> Result<usize, RuntimeError> {
    if !in_job() {
        return Ok(workers);
    }
    spread(workers, THREADS.get(), rank().1)
}

/// The total number of workers of an MPI job: `ranks x threads`; without `threads`, `workers`
/// must be a multiple of the ranks, and 1 means one worker per rank.
pub fn spread(workers: usize, threads: Option<usize>, ranks: usize) -> Result<usize, RuntimeError> {
    match threads {
        Some(0) => Err(RuntimeError::ZeroThreads),
        Some(t) if workers == 1 || workers == t * ranks => Ok(t * ranks),
        Some(t) => Err(RuntimeError::WorkersAndThreads { workers, ranks, threads: t }),
        None if workers.is_multiple_of(ranks) => Ok(workers),
        None if workers == 1 => Ok(ranks),
        None => Err(RuntimeError::Uneven { workers, ranks }),
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

/// The runtime for a run of `workers` workers in total, in this process's job.
pub fn launcher(workers: usize) -> Result<Runtime, RuntimeError> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = mpi() {
        let ranks = mpi.ranks();
        if !workers.is_multiple_of(ranks) {
            return Err(RuntimeError::Uneven { workers, ranks });
        }
        return Ok(Runtime::Mpi(mpi, workers / ranks));
    }
    Ok(Runtime::Embedded(Embedded::new(workers)?))
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
pub fn gather_on_leader<T: serde::Serialize + serde::de::DeserializeOwned>(
    values: Vec<T>,
) -> Result<Vec<T>, EngineError> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = job() {
        return strads_core::Collectives::gather_on_leader(&*mpi, values);
    }
    Ok(values)
}

/// How a run was spread, for a run's summary.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
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
        assert_eq!(spread(1, None, 3).ok(), Some(3));
        assert_eq!(spread(6, None, 3).ok(), Some(6));
        assert!(matches!(spread(4, None, 3), Err(RuntimeError::Uneven { workers: 4, ranks: 3 })));
        assert_eq!(spread(1, Some(2), 3).ok(), Some(6));
        assert_eq!(spread(6, Some(2), 3).ok(), Some(6));
        assert!(matches!(spread(4, Some(2), 3), Err(RuntimeError::WorkersAndThreads { .. })));
        assert!(matches!(spread(1, Some(0), 3), Err(RuntimeError::ZeroThreads)));
        assert_eq!(spread(1, None, 1).ok(), Some(1));
    }

    #[test]
    fn launchers_are_read_from_the_environment_and_unmanaged_slurm_tasks_refused() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        assert_eq!(crate::launched_ranks_in(env(&[("OMPI_COMM_WORLD_SIZE", "3")])), Some(3));
        assert_eq!(crate::launched_ranks_in(env(&[("PMI_SIZE", "4")])), Some(4));
        let pmix = env(&[("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "5"), ("SLURM_NTASKS", "5")]);
        assert_eq!(crate::launched_ranks_in(pmix), Some(5));
        assert_eq!(crate::unmanaged_slurm_tasks_in(pmix), None);
        assert_eq!(crate::launched_ranks_in(env(&[])), None);
        assert_eq!(crate::unmanaged_slurm_tasks_in(env(&[("SLURM_STEP_NUM_TASKS", "4")])), Some(4));
        assert_eq!(crate::unmanaged_slurm_tasks_in(env(&[("SLURM_STEP_ID", "0"), ("SLURM_NTASKS", "3")])), Some(3));
        assert_eq!(crate::unmanaged_slurm_tasks_in(env(&[("SLURM_STEP_NUM_TASKS", "1")])), None);
        let managed = env(&[("SLURM_STEP_NUM_TASKS", "2"), ("PMI_SIZE", "2")]);
        assert_eq!(crate::unmanaged_slurm_tasks_in(managed), None);
        // A batch script of an allocation of 4 tasks is one process, not 4.
        assert_eq!(crate::unmanaged_slurm_tasks_in(env(&[("SLURM_NTASKS", "4")])), None);
        let batch = env(&[("SLURM_STEP_ID", "4294967294"), ("SLURM_NTASKS", "4")]);
        assert_eq!(crate::unmanaged_slurm_tasks_in(batch), None);
    }

    #[test]
    fn outside_a_job_the_workers_are_as_asked() {
        assert_eq!(total_workers(5).ok(), Some(5));
        assert_eq!(rank(), (0, 1));
        assert!(is_leader() && single("x").is_ok());
        assert_eq!(gather_on_leader(vec![1, 2]).ok(), Some(vec![1, 2]));
        assert_eq!(launcher(3).map(|r| r.workers()).ok(), Some(3));
        assert!(matches!(launcher(0), Err(RuntimeError::Engine(_))));
    }
}
