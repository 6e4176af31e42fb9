//! Engines for scheduled programs: one round driver, a static and a dynamic way to schedule.
//!
//! The [`drive`] loop is the same for every program and every transport: ask the scheduler,
//! push through the [`Transport`], pull through the aggregator, sync the commit, feed back,
//! keeping up to a pipeline depth of rounds in flight. The two engines differ only in how rounds
//! are planned: the static engine ([`RoundRobin`], [`Rotation`]) knows the plan ahead and needs
//! no scheduler state; the dynamic engine ([`DynamicScheduler`]) samples parameters by priority
//! and filters them through an application's [`Dependency`] score.
//!
//! This crate starts no threads and does no IO: transports that do live in `strads-runtime`. Its
//! own launcher, [`Inline`], runs every worker on the calling thread, one after another.

#![warn(clippy::unwrap_used)]

mod driver;
mod dynamic;
mod inline;
mod static_plan;
mod sumtree;
mod transport;

pub use driver::{RunStats, drive, drive_checkpointed};
pub use dynamic::{
    CandidateOrder, Dependency, DynamicConfig, DynamicScheduler, NoDependency, ParamId, Priority, SelectStats,
};
pub use inline::Inline;
pub use static_plan::{Rotation, RoundRobin};
pub use sumtree::SumTree;
pub use transport::{Transport, checkpoint_failed, push_on};
