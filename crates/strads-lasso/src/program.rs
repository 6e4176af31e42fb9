//! The program of L1-regularized linear models (Lasso, elastic net, sparse logistic regression): its
//! typed messages and the arithmetic of the losses and penalties; the worker (`push`, `sync`) is in
//! `worker.rs`, the aggregator (`pull`) in `aggregator.rs`.
//!
//! Workers own row shards of `X` and `y` and the residuals `r = y - beta0 - X beta` of their rows
//! (squared loss) or the margins `z = beta0 + X beta` with the loss' derivatives (logistic loss).
//! For a round's coordinates they return the partial sums `x_j . r` over their rows; the
//! aggregator adds them up, applies the coordinate update
//! `beta_j <- S(x_j . r + ||x_j||^2 beta_j, n lambda) / ||x_j||^2` and commits the changes, which
//! the workers fold into their residuals. The intercept is kept as a lazy offset on the residuals
//! so that moving it costs nothing per row. A first round gathers column statistics (norms, sums,
//! `X^T y`), so the aggregator never needs the data itself; gap rounds gather `X^T r` over the
//! coordinates not yet screened out, from which the aggregator computes the duality gap and the
//! gap-safe screening test.
//!
//! The logistic loss works the same way with two sums per coordinate: the gradient `x_j . u` with
//! `u_i = y_i sigma(-y_i z_i)` and the curvature `sum x_ij^2 p_i (1 - p_i)`; its intercept moves by a
//! Newton step at every gap check. Its duality gap is that of the problem with the intercept fixed,
//! at the dual point `a_i = s p_i` (`s` the scale of the previous check, which the workers hold), plus
//! the intercept's Newton decrement. The elastic net's L2 term enters the updates' denominators and
//! the dual through the conjugate of the penalty, `S(|x_j . u|, n lambda l1_ratio)^2 / (2 n lambda (1 - l1_ratio))`.

use serde::{Deserialize, Serialize};
use strads_core::Program;

use crate::Status;

/// The Lasso program's message types.
pub struct LassoProgram;

impl Program for LassoProgram {
    type Task = Task;
    type Partial = Partial;
    type Commit = Commit;
    type Feedback = Feedback;
    type Block = ();
}

/// What the scheduler asks of every worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Task {
    /// Column statistics of the shard (first round).
    Stats,
    /// Partial sums `x_j . r` for these coordinates.
    Update(Vec<u32>),
    /// `X^T r` over the active coordinates and residual sums, for the duality gap.
    Gap {
        /// The one worker given it (block mode, worker 0 alone) sums every active column, not its share.
        whole: bool,
    },
    /// Combine the residual snapshots in these slots with these coefficients (Anderson
    /// extrapolation) and report the objective's residual term for the result and for now.
    Extrapolate(Vec<(u8, f64)>),
    /// Block mode: solve the subproblem of these coordinates against the worker's residual.
    Solve(SolveTask),
}

/// A block-mode worker's share of a round: its group of the working set and how far to solve it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolveTask {
    /// The group's coordinates (sorted; empty for an idle worker).
    pub coords: Vec<u32>,
    /// How to solve it.
    pub spec: SolveSpec,
    /// Return the residual change as a dense vector (more than one worker holds a residual).
    pub dense: bool,
    /// Several groups move in this round: return what the aggregator weighs them by (the slope,
    /// the curvatures and the gain). A round with one group takes the step 1 and needs none of it.
    pub split: bool,
}

/// How far a block-mode round solves its subproblem, as the aggregator sets it at each gap check.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolveSpec {
    /// `n lambda l1_ratio`, the L1 weight of the unscaled objective.
    pub alpha: f64,
    /// `n lambda (1 - l1_ratio)`, its L2 weight.
    pub ridge: f64,
    /// Stop once the group's subproblem has an unscaled duality gap below this.
    pub target: f64,
    /// Most passes over the group.
    pub max_epochs: u32,
    /// Anderson extrapolation over this many differences of passes (0: none).
    pub anderson: u8,
    /// Logistic loss: the curvature bound `||x_j||^2 / 4` instead of the exact curvature.
    pub bound: bool,
    /// With an intercept: every update moves the intercept with it (implicit centring), so a
    /// coordinate steps along its centred column (squared loss) or its column centred by the
    /// curvature-weighted mean in each Newton model (logistic loss).
    pub centre: bool,
    /// Every coefficient `>= 0`.
    pub positive: bool,
}

/// A block-mode worker's answer: what its group's subproblem moved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Solved {
    /// Coefficient changes, by coordinate.
    pub deltas: Vec<(u32, f64)>,
    /// The change of the residual (squared loss) or margins (logistic), when asked for; in a
    /// round with one group (`replace`), the new residual itself.
    pub dr: Vec<f64>,
    /// `dr` holds the new residual, not a change: the other workers copy it, so every worker
    /// holds the residual the solving worker computed, bit for bit, on any number of workers.
    pub replace: bool,
    /// Logistic loss with an intercept: how far the group's Newton steps moved it.
    pub intercept_shift: f64,
    /// The data term's slope along `dr` at the current point: `(r - offset) . dr` (squared),
    /// `-u . dr` (logistic).
    pub slope: f64,
    /// Logistic loss, from the first worker: the curvatures `p_i (1 - p_i)` of every row.
    pub curvature: Vec<f64>,
    /// Coordinate updates made.
    pub updates: u64,
    /// How much the group's changes alone lower the (unscaled) objective (when `dense` was asked).
    pub gain: f64,
    /// Passes made over the group.
    pub epochs: u32,
    /// Whether the passes reached the group's target by its first gap check (and did not stop at
    /// the round's cap on passes, as a probe round's do).
    pub settled: bool,
}

/// Column statistics of one shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardStats {
    /// Rows in the shard.
    pub rows: u64,
    /// `||x_j||^2` over the shard's rows.
    pub col_sq: Vec<f64>,
    /// Column sums over the shard's rows.
    pub col_sum: Vec<f64>,
    /// Stored values per column.
    pub col_nnz: Vec<u64>,
    /// `X^T y` over the shard's rows.
    pub xty: Vec<f64>,
    /// Sum of the shard's labels.
    pub y_sum: f64,
    /// Sum of squares of the shard's labels.
    pub y_sq: f64,
    /// `max_i |x_ij|` over the shard's rows.
    pub col_max: Vec<f64>,
}

/// What a worker computes for a gap check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GapPartial {
    /// `x_j . r` for every active coordinate, in increasing order of `j`.
    pub xtr: Vec<f64>,
    /// `||r||^2` over the shard.
    pub r_sq: f64,
    /// Sum of `r` over the shard.
    pub r_sum: f64,
    /// `r . y` over the shard.
    pub r_dot_y: f64,
    /// Logistic loss: `sum log(1 + exp(-y_i z_i))` over the shard.
    pub loss: f64,
    /// Logistic loss: `sum H(s p_i)` over the shard, `H` the binary entropy, `s` the dual scale.
    pub entropy: f64,
    /// Logistic loss: `sum p_i (1 - p_i)`, the intercept's curvature.
    pub curvature: f64,
}

/// One worker's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Partial {
    /// Answer to [`Task::Stats`].
    Stats(ShardStats),
    /// `x_j . r` for the task's coordinates, in the task's order (squared loss); `x_j . u` and
    /// `sum x_ij^2 p_i (1 - p_i)` for each, one after the other (logistic loss).
    Update(Vec<f64>),
    /// Answer to [`Task::Gap`].
    Gap(GapPartial),
    /// Answer to [`Task::Solve`].
    Solved(Solved),
    /// Answer to [`Task::Extrapolate`], over the shard.
    Extrapolated {
        /// `||r||^2` of the extrapolated residual.
        candidate_sq: f64,
        /// Sum of the extrapolated residual.
        candidate_sum: f64,
        /// `||r||^2` of the current residual.
        current_sq: f64,
    },
}

/// What the aggregator commits to every worker.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// `beta_j += delta`, so `r -= delta x_j`.
    pub deltas: Vec<(u32, f64)>,
    /// `beta0 += delta`, so `r -= delta`.
    pub intercept_delta: f64,
    /// Coordinates proven zero at the optimum: no longer part of gap checks.
    pub screened: Vec<u32>,
    /// Keep or drop the extrapolated residual of the last [`Task::Extrapolate`].
    pub extrapolation: Option<bool>,
    /// A regularization path moved to the next `lambda`: every coordinate is active again.
    pub unscreen: bool,
    /// After applying the rest, keep a snapshot of the residual in this slot.
    pub snapshot: Option<u8>,
    /// Logistic loss: the scale of the dual point for the next gap check.
    pub dual_scale: Option<f64>,
    /// Block mode: `deltas` are a round's solved changes, already scaled by the step; they move
    /// the coefficients, and the residual moves by `step x dr` (or, when `dr` is empty, the one
    /// worker that solved keeps its own residual).
    pub solve: Option<SolveStep>,
}

/// The step a block-mode round takes along its workers' summed changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SolveStep {
    /// The step, in `(0, 1]`.
    pub step: f64,
    /// The summed residual (or margin) change; empty when one worker holds the only residual.
    pub dr: Vec<f64>,
    /// `dr` is the new residual (a round of one group on more than one worker): copied, not added.
    pub replace: bool,
}

/// What the aggregator tells the scheduler.
#[derive(Clone, Debug, PartialEq)]
pub enum Feedback {
    /// Column statistics are in.
    Ready {
        /// Stored values per column over all rows.
        col_nnz: Vec<u64>,
        /// Coordinates that can never move (all-zero columns).
        excluded: Vec<u32>,
    },
    /// An update round was pulled.
    Updated {
        /// Each scheduled coordinate with its change (0 when unchanged or skipped).
        changes: Vec<(u32, f64)>,
        /// Mean magnitude of the nonzero coefficients, for the priority base.
        mean_nonzero: f64,
        /// Set when the run should end (a coefficient diverged).
        stop: Option<Status>,
        /// Snapshot slots and coefficients of an Anderson extrapolation, when one is due.
        extrapolate: Option<Vec<(u8, f64)>>,
    },
    /// A block-mode round was pulled.
    Solved {
        /// Set when the run should end.
        stop: Option<Status>,
        /// The groups were coupled: one worker should solve the whole working set from now on (at this `lambda`).
        inline: bool,
        /// The round was split between workers and kept.
        split: bool,
    },
    /// An extrapolation was pulled.
    Extrapolated {
        /// Coordinates the accepted extrapolation moved, with their change (empty when refused).
        changes: Vec<(u32, f64)>,
    },
    /// A gap check was pulled.
    Checked {
        /// Coordinates newly screened out.
        screened: Vec<u32>,
        /// The coordinates to update until the next check (sorted), when working sets are on.
        working_set: Option<Vec<u32>>,
        /// Set when the run should end.
        stop: Option<Status>,
        /// A regularization path moved to the next `lambda`: coordinates screened or left out of
        /// the working set come back, and a check at the new `lambda` is due at once.
        restart: bool,
        /// How far block-mode rounds solve until the next check.
        spec: SolveSpec,
    },
}

/// `(u, w) = (y p, p (1 - p))` with `p = sigma(-y z)`, the logistic loss' negative derivative and curvature.
#[inline]
pub(crate) fn logistic_derivatives(y: f64, z: f64) -> (f64, f64) {
    let p = 1.0 / (1.0 + (y * z).exp());
    (y * p, p * (1.0 - p))
}

/// `log(1 + exp(t))` without overflow.
#[inline]
pub fn log1p_exp(t: f64) -> f64 {
    if t > 0.0 { t + (-t).exp().ln_1p() } else { t.exp().ln_1p() }
}

/// `-a ln a - (1 - a) ln (1 - a)`, 0 at 0 and 1.
#[inline]
pub(crate) fn binary_entropy(a: f64) -> f64 {
    let term = |v: f64| if v > 0.0 { -v * v.ln() } else { 0.0 };
    term(a) + term(1.0 - a)
}

/// `||x_j - mean(x_j)||^2` from `||x_j||^2` and `sum x_j` over `n` rows; 0 for a constant column
/// (rounding may leave a sliver of its norm, which would make a step blow up).
pub(crate) fn centred_sq(sq: f64, sum: f64, n: f64) -> f64 {
    let centred = sq - sum * sum / n;
    if centred > 1e-12 * sq { centred } else { 0.0 }
}

/// `total += part`, element by element: how the aggregator adds up the workers' partial sums.
pub(crate) fn add_into<T: Copy + std::ops::AddAssign>(total: &mut [T], part: &[T]) {
    for (a, &b) in total.iter_mut().zip(part) {
        *a += b;
    }
}

/// The nonzero entries of a coefficient vector, as `(index, value)`: how paths and model files keep them.
pub fn nonzero_coefficients(beta: &[f64]) -> Vec<(u32, f64)> {
    beta.iter().enumerate().filter(|(_, b)| **b != 0.0).map(|(j, b)| (j as u32, *b)).collect()
}

/// `S(z, t) = sign(z) max(|z| - t, 0)`.
#[inline]
pub fn soft_threshold(z: f64, t: f64) -> f64 {
    if z > t {
        z - t
    } else if z < -t {
        z + t
    } else {
        0.0
    }
}

/// `S(z, t)`, or with `positive` its projection `max(z - t, 0)` on the non-negative half-line.
#[inline]
pub fn shrink(z: f64, t: f64, positive: bool) -> f64 {
    if positive { (z - t).max(0.0) } else { soft_threshold(z, t) }
}

/// What a correlation `c = x_j . r` is held against `alpha` by: `|c|`, or `c` alone when every
/// coefficient is `>= 0` (the dual constraint `x_j . theta <= alpha` is one-sided then).
#[inline]
pub fn reach(c: f64, positive: bool) -> f64 {
    if positive { c } else { c.abs() }
}

/// Removes from a sorted list the members of another sorted list.
pub(crate) fn remove_sorted(list: &mut Vec<u32>, remove: &[u32]) {
    let mut k = 0;
    list.retain(|&j| {
        while k < remove.len() && remove[k] < j {
            k += 1;
        }
        !(k < remove.len() && remove[k] == j)
    });
}

pub use crate::aggregator::{AggregatorSettings, GapReport, LassoAggregator, PathPoint};
pub use crate::worker::LassoWorker;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_threshold_shrinks_towards_zero() {
        assert_eq!(soft_threshold(3.0, 1.0), 2.0);
        assert_eq!(soft_threshold(-3.0, 1.0), -2.0);
        assert_eq!(soft_threshold(0.5, 1.0), 0.0);
        assert_eq!(soft_threshold(-1.0, 1.0), 0.0);
    }

    #[test]
    fn removing_sorted_members() {
        let mut list = vec![1, 3, 5, 7, 9];
        remove_sorted(&mut list, &[0, 3, 4, 9, 11]);
        assert_eq!(list, vec![1, 5, 7]);
    }
}
