//! Runtimes: the transports chosen at start-up that carry a program's messages to its workers.
//!
//! [`Embedded`] runs `P` workers in one process: worker 0 on the calling thread, which also
//! schedules and aggregates, and workers `1..P` on threads of their own, each owning its data
//! shard. `Mpi` (feature `mpi`) runs them on the ranks of an MPI job, `threads` workers per rank,
//! the leader on rank 0. Applications reach a runtime only through [`strads_core::Launcher`], so the same
//! application code runs on any of them.

#![warn(clippy::unwrap_used)]

pub mod checkpoint;
mod embedded;
pub mod job;
#[cfg(feature = "mpi")]
mod mpi;
mod pool;
mod worker_loop;

pub use embedded::Embedded;
pub use job::{Runtime, RuntimeError, Scale};
#[cfg(feature = "mpi")]
pub use mpi::{Mpi, Ranks};

/// What a worker thread's panic said, for the error that reports it.
pub(crate) fn panic_reason(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".into())
}

/// The number of ranks of the MPI job this process was started in by an MPI launcher (`mpirun`,
/// `mpiexec`, `srun`), if any; reads only the environment, so it needs no MPI library.
pub fn launched_ranks() -> Option<usize> {
    launched_ranks_in(|name| std::env::var(name).ok())
}

/// [`launched_ranks`] in the environment `var` reads.
pub fn launched_ranks_in(var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    let number = |name: &str| var(name)?.trim().parse::<usize>().ok();
    // OpenMPI's mpirun, then MPICH's hydra (and srun --mpi=pmi2), then srun --mpi=pmix.
    number("OMPI_COMM_WORLD_SIZE")
        .or_else(|| number("PMI_SIZE"))
        .or_else(|| var("PMIX_RANK").and_then(|_| number("SLURM_STEP_NUM_TASKS")))
}

/// The tasks of a Slurm step started without an MPI process-management interface (`srun` without
/// `--mpi=pmix` or `--mpi=pmi2`, on a cluster whose default is none), if there are several: each
/// such task would run alone and write the same outputs. A step's tasks are `SLURM_STEP_NUM_TASKS`
/// (which `srun` sets), or `SLURM_NTASKS` inside a step (`SLURM_STEP_ID` set); a batch script,
/// which is one process of an allocation of several tasks, is not a step of several tasks.
pub fn unmanaged_slurm_tasks_in(var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    let batch = |id: &str| matches!(id.trim(), "batch" | "4294967294");
    let in_step = var("SLURM_STEP_ID").is_some_and(|id| !batch(&id));
    let tasks = var("SLURM_STEP_NUM_TASKS").or_else(|| if in_step { var("SLURM_NTASKS") } else { None });
    let tasks = tasks?.trim().parse::<usize>().ok()?;
    (tasks > 1 && launched_ranks_in(&var).is_none()).then_some(tasks)
}
