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
#[cfg(feature = "mpi")]
mod pool;

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
    let var = |name: &str| std::env::var(name).ok()?.trim().parse::<usize>().ok();
    // OpenMPI's mpirun, then MPICH's hydra (and srun --mpi=pmi2), then srun --mpi=pmix.
    var("OMPI_COMM_WORLD_SIZE")
        .or_else(|| var("PMI_SIZE"))
        .or_else(|| std::env::var_os("PMIX_RANK").and_then(|_| var("SLURM_STEP_NUM_TASKS")))
}
