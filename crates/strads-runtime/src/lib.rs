//! Runtimes: the transports chosen at start-up that carry a program's messages to its workers.
//!
//! [`Embedded`] runs `P` workers in one process: worker 0 on the calling thread, which also
//! schedules and aggregates, and workers `1..P` on threads of their own, each owning its data
//! shard. [`Mpi`] (feature `mpi`) runs them on the ranks of an MPI job, `threads` workers per rank,
//! the leader on rank 0. Applications reach a runtime only through [`strads_core::Launcher`], so the same
//! application code runs on any of them.

#![warn(clippy::unwrap_used)]

mod embedded;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
mod pool;

pub use embedded::Embedded;
#[cfg(feature = "mpi")]
pub use mpi::{Mpi, Ranks, launched_ranks};
