//! The STRADS programming abstraction: `schedule`, `push`, `pull` and `sync` as typed traits.
//!
//! A scheduled model-parallel program runs in rounds. In each round the [`Scheduler`] picks
//! the parameters to update (one [`Assignment`] of tasks, the same for every worker or one per
//! worker); every [`Worker`] computes partial results over the data shard it owns (`push`); the
//! [`Aggregator`] combines the partials, commits new parameter values and hands feedback such as
//! priorities back to the scheduler (`pull`); the committed values then reach the workers (`sync`)
//! before they push again, or up to a pipeline depth of rounds later.
//!
//! This crate does no IO and starts no threads. It names the roles and the typed messages that
//! cross between them; the engines (`strads-engine`) drive rounds and the runtimes
//! (`strads-runtime`) move the messages, so an application written against these traits runs
//! unchanged on one thread, many threads or many processes.

#![warn(clippy::unwrap_used)]

mod assignment;
pub mod checkpoint;
pub mod collectives;
mod error;
mod launch;
mod partition;
mod program;

pub use assignment::Assignment;
pub use checkpoint::{Checkpoints, Due, InMemory, NoCheckpoints, Position, Snapshot};
pub use collectives::{Collectives, InProcess};
pub use error::{BoxError, EngineError, ParamError};
pub use launch::{Interruptible, Launcher, Leading, RunOptions};
pub use partition::{balanced_ranges, shard_range};
pub use program::{Aggregator, Decision, Message, Plan, Program, Pulled, Round, Scheduler, Slot, Worker, WorkerId};
