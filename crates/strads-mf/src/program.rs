//! The MF program: its messages; the worker, which owns a block of W rows, a block of H rows and the
//! ratings (with residuals) of both, is in `worker.rs`, the scheduler in `scheduler.rs`, the
//! aggregator in `aggregator.rs`.
//!
//! Worker `p` owns users `U_p` and items `I_p` (contiguous index ranges balanced by ratings). It
//! keeps the ratings of its users row by row and the ratings of its items column by column, each
//! with its residual `R_ij = A_ij - mu - w~_i . h~_j`, so a `W` half-step and an `H` half-step both
//! read only local ratings. Rows carry `D = K` entries, or `K + 2` with biases: the user bias sits
//! in slot `K` of `w~_i` (slot `K` of `h~_j` is fixed at 1) and the item bias in slot `K + 1` of
//! `h~_j` (slot `K + 1` of `w~_i` is fixed at 1), so biases are coordinates like any other.
//!
//! CCD++ keeps both residual copies exact by applying every rank-one change with the full `u`
//! and `v` vectors of the current factor (the only model state replicated on every worker: one
//! column of `W` and of `H`). Row-wise CCD and ALS need the whole other factor for a half-step,
//! as STRADS's MF did: the aggregator broadcasts it and workers recompute the residuals of the
//! copy that went stale.

use serde::{Deserialize, Serialize};
use strads_core::Program;

/// The MF program's message types.
pub struct Mf;

impl Program for Mf {
    type Task = Task;
    type Partial = Partial;
    type Commit = Commit;
    type Feedback = Option<Evaluation>;
    type Block = ();
}

/// Which factor a step updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    /// User factors `W`.
    W,
    /// Item factors `H`.
    H,
}

/// What every worker does in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    /// CCD or ALS: update every owned row of one factor with the other fixed.
    Rows(Side),
    /// CCD++: send the owned entries of column `t` of `W` and `H`; every worker then adds the rank-one
    /// term `w_t h_t^T` back to its residuals.
    Begin(usize),
    /// CCD++: solve `u` (side W) or `v` (side H) of factor `t`; `finish` closes the factor.
    Solve {
        /// The factor.
        t: usize,
        /// Which vector.
        side: Side,
        /// Subtract `u v^T` from the residuals and store `u`, `v` as column `t` after this step.
        finish: bool,
    },
    /// Report objective parts and squared test and validation errors.
    Evaluate,
    /// Keep a copy of the owned rows (the best model so far, for early stopping).
    Keep,
    /// Send the owned rows of `W` and `H`: the kept copy if there is one, else the current rows.
    Gather,
}

/// What a worker sends back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Partial {
    /// Values for the owned rows, in order (whole rows, or one entry per row for CCD++).
    Values(Vec<f64>),
    /// CCD++ `Begin`: the owned entries of `w_t` and of `h_t`.
    Pair(Vec<f64>, Vec<f64>),
    /// Sums over the owned ratings and rows.
    Evaluation(Evaluation),
    /// The owned rows of `W` and of `H`.
    Rows(Vec<f64>, Vec<f64>),
}

/// Objective parts summed over workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The loss term of the objective: `squared_error`, or with implicit feedback the
    /// confidence-weighted loss over every (user, item) pair.
    pub loss: f64,
    /// Sum of squared training residuals (implicit feedback: of the preferences, over the observed pairs).
    pub squared_error: f64,
    /// The regularization term.
    pub regularization: f64,
    /// Training ratings.
    pub ratings: u64,
    /// Sum of squared test errors.
    pub test_squared_error: f64,
    /// Test ratings.
    pub test_ratings: u64,
    /// Sum of squared validation errors.
    pub validation_squared_error: f64,
    /// Validation ratings.
    pub validation_ratings: u64,
}

/// What the aggregator sends every worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Commit {
    /// CCD or ALS: the whole factor after its half-step, `rows x D`.
    Factor(Side, Vec<f64>),
    /// CCD++: the whole `w_t` and `h_t` at the start of factor `t`.
    Begin {
        /// The factor.
        t: usize,
        /// `w_t` over all users.
        u: Vec<f64>,
        /// `h_t` over all items.
        v: Vec<f64>,
    },
    /// CCD++: the new `u` (side W) or `v` (side H), over all rows.
    Vector {
        /// Which vector.
        side: Side,
        /// Its values.
        values: Vec<f64>,
        /// Close the factor after storing it.
        finish: bool,
    },
}

pub use crate::worker::{Shard, ShardData, cholesky_solve, free_slots, initial_row};
