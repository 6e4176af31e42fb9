//! Matrix factorization of explicit ratings and implicit feedback by scheduled coordinate descent,
//! model parallel.
//!
//! Users and items are split into contiguous blocks, one of each per worker; a worker owns the
//! rows of `W` and `H` of its blocks and the ratings of both, with their residuals. A half-step
//! updates every worker's `W` rows with `H` fixed, the next every worker's `H` rows with `W` fixed,
//! on the static engine: CCD++ (one rank-one factor at a time), row-wise CCD (STRADS's MF) and
//! ALS (the baseline of the paper) share the layout.

mod aggregator;
mod error;
mod fit;
pub mod generate;
mod model;
mod params;
mod program;
mod rank_ratings;
pub mod ranking;
pub mod ratings;
pub mod reference;
mod scheduler;
mod worker;

pub use aggregator::{Factors, MfAggregator};
pub use error::MfError;
pub use fit::{
    InMemory, MfFit, RatingSource, RatingTotals, fit, fit_checkpointed, fit_model, fit_source, memory_estimate,
};
pub use model::{Model, Trained, rated_rows, write_factor_csv};
pub use params::{Algorithm, Bias, CheckedParams, Implicit, MfParams, default_cg_steps};
pub use program::{
    Commit, Evaluation, Mf, Partial, Shard, ShardData, Side, Task, cholesky_solve, free_slots, initial_row,
};
pub use rank_ratings::{RankRatings, TestSet, load_ratings, load_ratings_share};
pub use scheduler::{MfScheduler, TracePoint, iteration_tasks};
