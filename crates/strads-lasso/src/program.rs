//! The program of L1-regularized linear models (Lasso, elastic net, sparse logistic regression): its
//! typed messages, the worker (`push`, `sync`) and the aggregator (`pull`).
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

use std::ops::Range;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode, expect_len};
use strads_core::{Aggregator, Assignment, BoxError, Program, Pulled, Round, Worker};
use strads_data::Columns;

use crate::{Lambda, LogisticUpdate, Loss, Status, TracePoint};

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
    Gap,
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

/// A worker: one row shard of the data and its residuals (or margins), or in block mode every
/// row and column, the whole residual and the share of the gap's sums this worker computes.
pub struct LassoWorker {
    pub(crate) loss: Loss,
    pub(crate) x: Arc<Columns>,
    pub(crate) y: Vec<f64>,
    /// Squared loss: residuals without the intercept, the true residual is `r - offset`. Logistic
    /// loss: margins without the intercept, `z = r + offset`.
    pub(crate) r: Vec<f64>,
    pub(crate) offset: f64,
    /// Logistic loss: `u_i = y_i p_i` and `w_i = p_i (1 - p_i)`, `p_i = sigma(-y_i z_i)`.
    pub(crate) u: Vec<f64>,
    pub(crate) w: Vec<f64>,
    /// Logistic loss: the scale of the dual point `a = s p` the next gap check evaluates.
    dual_scale: f64,
    pub(crate) col_sum: Vec<f64>,
    active: Vec<u32>,
    /// Residual snapshots (stored residual and intercept offset) for Anderson extrapolation.
    snapshots: Vec<(Vec<f64>, f64)>,
    /// The extrapolated residual awaiting the aggregator's verdict.
    pending: Option<(Vec<f64>, f64)>,
    /// Block mode: the share of the sums, the coefficients, and the state of the last solve.
    pub(crate) block: Option<BlockState>,
}

/// What a block-mode worker holds besides the data and the residual.
pub(crate) struct BlockState {
    /// This worker's index and the number of workers: it sums the columns `j` with `j % workers == index`.
    pub(crate) index: usize,
    pub(crate) workers: usize,
    /// The rows whose residual terms this worker sums: all of them on the first worker, none elsewhere.
    pub(crate) rows: Range<usize>,
    /// Every coefficient, as committed.
    pub(crate) beta: Vec<f64>,
    pub(crate) col_sq: Vec<f64>,
    pub(crate) col_max: Vec<f64>,
    /// The residual (margins) and logistic derivatives of the last solve.
    pub(crate) local: Vec<f64>,
    pub(crate) local_u: Vec<f64>,
    pub(crate) local_w: Vec<f64>,
}

impl LassoWorker {
    /// A squared-loss worker for one shard's columns and labels.
    pub fn new(x: Columns, y: Vec<f64>) -> Self {
        Self::with_loss(Loss::Squared, x, y)
    }

    /// A worker for one shard's columns and labels (-1 or 1 for the logistic loss).
    pub fn with_loss(loss: Loss, x: Columns, y: Vec<f64>) -> Self {
        Self::shared(loss, Arc::new(x), y)
    }

    fn shared(loss: Loss, x: Arc<Columns>, y: Vec<f64>) -> Self {
        let col_sum = (0..x.cols()).map(|j| x.sum(j)).collect();
        let active = (0..x.cols() as u32).collect();
        let (r, u, w) = match loss {
            Loss::Squared => (y.clone(), vec![], vec![]),
            Loss::Logistic => (vec![0.0; y.len()], y.iter().map(|y| 0.5 * y).collect(), vec![0.25; y.len()]),
        };
        LassoWorker {
            loss,
            x,
            y,
            r,
            offset: 0.0,
            u,
            w,
            dual_scale: 1.0,
            col_sum,
            active,
            snapshots: vec![],
            pending: None,
            block: None,
        }
    }

    /// Block mode: worker `index` of `workers`, holding every row and column of the data (`x`
    /// shared between the workers of one process) and summing every `workers`-th column for the
    /// statistics and gap checks. The first worker sums every row's terms: a sum over rows split
    /// between workers would round differently on each number of workers, and the run would take
    /// another path; the rows cost `n` per check against the columns' `nnz`.
    pub fn block(loss: Loss, x: Arc<Columns>, y: Vec<f64>, index: usize, workers: usize) -> Self {
        let n = y.len();
        let rows = if index == 0 { 0..n } else { n..n };
        let mut worker = Self::shared(loss, x, y);
        let x = &worker.x;
        worker.block = Some(BlockState {
            index,
            workers: workers.max(1),
            rows,
            beta: vec![0.0; x.cols()],
            col_sq: (0..x.cols()).map(|j| x.sq_norm(j)).collect(),
            col_max: (0..x.cols()).map(|j| x.max_abs(j)).collect(),
            local: vec![],
            local_u: vec![],
            local_w: vec![],
        });
        worker
    }

    /// Whether this worker sums column `j` (always, outside block mode).
    fn sums_column(&self, j: usize) -> bool {
        self.block.as_ref().is_none_or(|b| j % b.workers == b.index)
    }

    /// The rows whose terms this worker sums.
    fn summed_rows(&self) -> Range<usize> {
        self.block.as_ref().map_or(0..self.y.len(), |b| b.rows.clone())
    }

    /// `x_j . r` for the active coordinates this worker sums (0 for the others).
    fn active_dots(&self) -> Vec<f64> {
        self.active.iter().map(|&j| if self.sums_column(j as usize) { self.dot(j as usize) } else { 0.0 }).collect()
    }

    #[inline]
    fn dot(&self, j: usize) -> f64 {
        match self.loss {
            Loss::Squared => self.x.dot(j, &self.r) - self.offset * self.col_sum[j],
            Loss::Logistic => self.x.dot(j, &self.u),
        }
    }

    /// Logistic loss: the gradient and curvature sums of coordinate `j`.
    #[inline]
    fn newton_sums(&self, j: usize) -> (f64, f64) {
        let (u, w) = (&self.u, &self.w);
        let (mut g, mut h) = (0.0, 0.0);
        self.x.for_each_entry(j, |i, v| {
            g += v * u[i];
            h += v * v * w[i];
        });
        (g, h)
    }

    fn logistic_gap(&self) -> GapPartial {
        let (mut loss, mut entropy, mut r_sum, mut curvature) = (0.0, 0.0, 0.0, 0.0);
        for i in self.summed_rows() {
            let y = self.y[i];
            loss += log1p_exp(-y * (self.r[i] + self.offset));
            entropy += binary_entropy(self.dual_scale * self.u[i] * y);
            r_sum += self.u[i];
            curvature += self.w[i];
        }
        let xtr = self.active_dots();
        GapPartial { xtr, r_sq: 0.0, r_sum, r_dot_y: 0.0, loss, entropy, curvature }
    }
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

impl Worker<LassoProgram> for LassoWorker {
    fn push(&mut self, _round: Round, task: &Task) -> Partial {
        match task {
            Task::Stats => {
                let cols = self.x.cols();
                let mine = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
                    (0..cols).map(|j| if self.sums_column(j) { f(j) } else { 0.0 }).collect()
                };
                let y = &self.y[self.summed_rows()];
                Partial::Stats(ShardStats {
                    rows: y.len() as u64,
                    col_sq: mine(&|j| self.x.sq_norm(j)),
                    col_sum: mine(&|j| self.col_sum[j]),
                    col_nnz: (0..cols)
                        .map(|j| if self.sums_column(j) { self.x.col_nnz(j) as u64 } else { 0 })
                        .collect(),
                    xty: mine(&|j| self.x.dot(j, &self.y)),
                    y_sum: y.iter().sum(),
                    y_sq: y.iter().map(|v| v * v).sum(),
                    col_max: mine(&|j| self.x.max_abs(j)),
                })
            }
            Task::Update(coords) => match self.loss {
                Loss::Squared => Partial::Update(coords.iter().map(|&j| self.dot(j as usize)).collect()),
                Loss::Logistic => Partial::Update(
                    coords
                        .iter()
                        .flat_map(|&j| {
                            let (g, h) = self.newton_sums(j as usize);
                            [g, h]
                        })
                        .collect(),
                ),
            },
            Task::Gap if self.loss == Loss::Logistic => Partial::Gap(self.logistic_gap()),
            Task::Gap => {
                let (mut r_sq, mut r_sum, mut r_dot_y) = (0.0, 0.0, 0.0);
                let rows = self.summed_rows();
                for (r, y) in self.r[rows.clone()].iter().zip(&self.y[rows]) {
                    let r = r - self.offset;
                    r_sq += r * r;
                    r_sum += r;
                    r_dot_y += r * y;
                }
                let xtr = self.active_dots();
                Partial::Gap(GapPartial { xtr, r_sq, r_sum, r_dot_y, loss: 0.5 * r_sq, entropy: 0.0, curvature: 0.0 })
            }
            Task::Extrapolate(mix) => {
                let mut candidate = vec![0.0; self.r.len()];
                let mut offset = 0.0;
                for &(slot, c) in mix {
                    let Some((snapshot, snapshot_offset)) = self.snapshots.get(slot as usize) else { continue };
                    for (a, b) in candidate.iter_mut().zip(snapshot) {
                        *a += c * b;
                    }
                    offset += c * snapshot_offset;
                }
                let (mut candidate_sq, mut candidate_sum, mut current_sq) = (0.0, 0.0, 0.0);
                let rows = self.summed_rows();
                for (a, r) in candidate[rows.clone()].iter().zip(&self.r[rows]) {
                    let (a, r) = (a - offset, r - self.offset);
                    candidate_sq += a * a;
                    candidate_sum += a;
                    current_sq += r * r;
                }
                self.pending = Some((candidate, offset));
                Partial::Extrapolated { candidate_sq, candidate_sum, current_sq }
            }
            Task::Solve(task) => Partial::Solved(self.solve(task)),
        }
    }

    fn sync(&mut self, _round: Round, commit: &Commit) {
        if let Some(block) = &mut self.block {
            for &(j, delta) in &commit.deltas {
                block.beta[j as usize] += delta;
            }
        }
        if let Some(step) = &commit.solve {
            // The intercept first: a logistic step recomputes the derivatives at the new one.
            self.offset += commit.intercept_delta;
            self.apply_step(step, commit.intercept_delta != 0.0);
        }
        match self.loss {
            _ if commit.solve.is_some() => {}
            Loss::Squared => {
                for &(j, delta) in &commit.deltas {
                    self.x.axpy(j as usize, -delta, &mut self.r);
                }
                self.offset += commit.intercept_delta;
            }
            Loss::Logistic => {
                let (r, u, w, y, offset) = (&mut self.r, &mut self.u, &mut self.w, &self.y, self.offset);
                for &(j, delta) in &commit.deltas {
                    self.x.for_each_entry(j as usize, |i, v| {
                        r[i] += delta * v;
                        (u[i], w[i]) = logistic_derivatives(y[i], r[i] + offset);
                    });
                }
                if commit.intercept_delta != 0.0 {
                    self.offset += commit.intercept_delta;
                    for i in 0..self.y.len() {
                        (self.u[i], self.w[i]) = logistic_derivatives(self.y[i], self.r[i] + self.offset);
                    }
                }
            }
        }
        if let Some(scale) = commit.dual_scale {
            self.dual_scale = scale;
        }
        if !commit.screened.is_empty() {
            remove_sorted(&mut self.active, &commit.screened);
        }
        if commit.unscreen {
            self.active = (0..self.x.cols() as u32).collect();
        }
        if let Some(accept) = commit.extrapolation
            && let Some((candidate, offset)) = self.pending.take()
            && accept
        {
            self.r = candidate;
            self.offset = offset;
        }
        if let Some(slot) = commit.snapshot {
            let slot = slot as usize;
            if self.snapshots.len() <= slot {
                self.snapshots.resize_with(slot + 1, || (vec![], 0.0));
            }
            self.snapshots[slot].0.clone_from(&self.r);
            self.snapshots[slot].1 = self.offset;
        }
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        encode(&(
            (&self.r, self.offset, &self.u, &self.w, self.dual_scale),
            &self.active,
            (&self.snapshots, &self.pending),
            self.block.as_ref().map(|b| &b.beta),
        ))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        type Saved = (Vec<f64>, f64, Vec<f64>, Vec<f64>, f64);
        type Snapshots = (Vec<(Vec<f64>, f64)>, Option<(Vec<f64>, f64)>);
        let ((r, offset, u, w, dual_scale), active, (snapshots, pending), beta): (
            Saved,
            Vec<u32>,
            Snapshots,
            Option<Vec<f64>>,
        ) = decode(state)?;
        expect_len("residuals", r.len(), self.r.len())?;
        expect_len("logistic derivatives", u.len(), self.u.len())?;
        expect_len("logistic curvatures", w.len(), self.w.len())?;
        if let Some(&j) = active.iter().find(|&&j| j as usize >= self.x.cols()) {
            return Err(format!("the checkpoint names coordinate {j} but this shard has {}", self.x.cols()).into());
        }
        // Checked last, so that a refused checkpoint leaves the worker as it was.
        match (&mut self.block, beta) {
            (Some(block), Some(beta)) => {
                expect_len("coefficients", beta.len(), block.beta.len())?;
                block.beta = beta;
            }
            (None, None) => {}
            _ => return Err("the checkpoint was written by a worker of another scheduler".into()),
        }
        (self.r, self.offset, self.u, self.w, self.dual_scale) = (r, offset, u, w, dual_scale);
        (self.active, self.snapshots, self.pending) = (active, snapshots, pending);
        Ok(())
    }
}

/// `||x_j - mean(x_j)||^2` from `||x_j||^2` and `sum x_j` over `n` rows; 0 for a constant column
/// (rounding may leave a sliver of its norm, which would make a step blow up).
pub(crate) fn centred_sq(sq: f64, sum: f64, n: f64) -> f64 {
    let centred = sq - sum * sum / n;
    if centred > 1e-12 * sq { centred } else { 0.0 }
}

/// `total += part`, element by element: how the aggregator adds up the workers' partial sums.
fn add_into<T: Copy + std::ops::AddAssign>(total: &mut [T], part: &[T]) {
    for (a, &b) in total.iter_mut().zip(part) {
        *a += b;
    }
}

/// Removes from a sorted list the members of another sorted list.
fn remove_sorted(list: &mut Vec<u32>, remove: &[u32]) {
    let mut k = 0;
    list.retain(|&j| {
        while k < remove.len() && remove[k] < j {
            k += 1;
        }
        !(k < remove.len() && remove[k] == j)
    });
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

/// The settings the aggregator needs.
#[derive(Clone, Copy, Debug)]
pub struct AggregatorSettings {
    /// The penalty weight as given.
    pub lambda: Lambda,
    /// The data term.
    pub loss: Loss,
    /// The share of the L1 term in the penalty.
    pub l1_ratio: f64,
    /// The logistic coordinate step.
    pub update: LogisticUpdate,
    /// The first `lambda` of a path, when not the data's `lambda_max`.
    pub path_top: Option<f64>,
    /// Fit an intercept.
    pub intercept: bool,
    /// Every coefficient `>= 0`.
    pub positive: bool,
    /// Gap-safe screening.
    pub screening: bool,
    /// Relative duality gap to stop at.
    pub tol: f64,
    /// Coefficient-change tolerance.
    pub coef_tol: Option<f64>,
    /// Initial working-set size, when working sets are on.
    pub working_set: Option<usize>,
    /// Anderson extrapolation over this many snapshot differences, when on.
    pub anderson: Option<usize>,
    /// Solve for this many `lambda` values, from `lambda_max` down to `lambda` (geometric, with
    /// warm starts), when set.
    pub path: Option<usize>,
    /// Block mode: each round solves the working set's groups, with Anderson extrapolation of their
    /// passes over this many differences (0: none).
    pub block: Option<u8>,
}

/// Block mode: a round's passes stop once the gap of each group's subproblem is below this
/// fraction of the last duality gap (celer solves its working sets to 0.3 of the outer gap).
const SOLVE_TARGET: f64 = 0.3;

/// Block mode: a round's passes need not bring a group's gap below this fraction of the gap at
/// which the run stops (`tol x` the primal): solving the working set further cannot stop the run
/// sooner. Without it, a last round started just above the stopping gap solved to 0.3 of it, and
/// where the round's gap check fell decided whether that took 1 or 5 rounds' worth of passes.
const STOP_FRACTION: f64 = 0.5;

/// Block mode: most passes over a group in one round.
const SOLVE_MAX_EPOCHS: u32 = 200;

const NEVER: u64 = u64::MAX;

/// The aggregator: the coefficients, their updates, the duality gap and screening.
pub struct LassoAggregator<'o> {
    settings: AggregatorSettings,
    started: std::time::Instant,
    observer: &'o mut dyn FnMut(&TracePoint),
    n: f64,
    /// `n lambda l1_ratio`: the threshold of the unscaled update.
    alpha: f64,
    /// `n lambda (1 - l1_ratio)`: the L2 weight of the unscaled objective.
    ridge: f64,
    lambda: f64,
    lambda_max: f64,
    beta: Vec<f64>,
    beta0: f64,
    col_sq: Vec<f64>,
    col_sum: Vec<f64>,
    col_max: Vec<f64>,
    /// Logistic loss: the scale of the dual point the workers evaluate at the next check.
    dual_scale: f64,
    /// The objective at `beta = 0` with the best intercept.
    initial: f64,
    y_sum: f64,
    y_sq: f64,
    /// Sum of the true residuals, tracked through commits and refreshed at every gap check.
    r_sum: f64,
    last_commit: Vec<u64>,
    screened: Vec<bool>,
    active: Vec<u32>,
    l1: f64,
    nonzeros: usize,
    max_change: f64,
    working_set_size: usize,
    /// Coordinates whose snapshots Anderson extrapolation combines (the working set).
    tracked: Vec<u32>,
    /// Snapshots of `beta[tracked]` and the intercept, one pass over `tracked` apart.
    snapshots: Vec<(Vec<f64>, f64)>,
    updates_since_snapshot: u64,
    pub(crate) extrapolations: (u64, u64),
    /// The `lambda` values of a regularization path and the index of the current one.
    grid: Vec<f64>,
    stage: usize,
    pub(crate) path: Vec<PathPoint>,
    /// The outcome of the latest gap check.
    pub(crate) last: Option<GapReport>,
    pub(crate) trace: Vec<TracePoint>,
    pub(crate) updates: u64,
    pub(crate) update_rounds: u64,
    pub(crate) stale_skips: u64,
    pub(crate) status: Option<Status>,
    pub(crate) split_rounds: u64,
    pub(crate) dropped_rounds: u64,
    /// The model the run starts from, committed after the statistics round.
    warm_start: Option<crate::WarmStart>,
}

/// The model reached at one `lambda` of a regularization path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathPoint {
    /// The L1 weight.
    pub lambda: f64,
    /// Primal objective at this `lambda`.
    pub objective: f64,
    /// Relative duality gap at this `lambda`.
    pub duality_gap: f64,
    /// Nonzero coefficients.
    pub nnz: usize,
    /// Seconds of training since the start of the path.
    pub seconds: f64,
    /// Coordinate updates since the start of the path.
    pub updates: u64,
    /// How this `lambda` ended.
    pub status: Status,
    /// The intercept.
    pub intercept: f64,
    /// The nonzero coefficients, by index.
    pub coefficients: Vec<(u32, f64)>,
}

/// The numbers of one gap check.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GapReport {
    /// Primal objective `||r||^2 / (2n) + lambda ||beta||_1`.
    pub primal: f64,
    /// Dual objective at the rescaled residual.
    pub dual: f64,
    /// `(primal - dual) / primal`.
    pub relative_gap: f64,
}

impl<'o> LassoAggregator<'o> {
    /// Seconds since the run started (for a resumed run, counting the time before its snapshot).
    pub fn elapsed_seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// An aggregator that reports each gap check to `observer`.
    pub fn new(
        mut settings: AggregatorSettings,
        started: std::time::Instant,
        observer: &'o mut dyn FnMut(&TracePoint),
    ) -> Self {
        // Extrapolation is implemented for the Lasso, and the logistic screening test for l1_ratio 1
        // without an intercept: whatever the caller asks, nothing else runs them.
        // An extrapolated point may leave the non-negative orthant: positive runs do without.
        if settings.loss != Loss::Squared || settings.l1_ratio < 1.0 || settings.block.is_some() || settings.positive {
            settings.anderson = None;
        }
        if settings.positive {
            settings.block = settings.block.map(|_| 0);
        }
        if settings.loss == Loss::Logistic && (settings.l1_ratio < 1.0 || settings.intercept) {
            settings.screening = false;
        }
        LassoAggregator {
            settings,
            started,
            observer,
            n: 0.0,
            alpha: 0.0,
            ridge: 0.0,
            lambda: 0.0,
            lambda_max: 0.0,
            beta: vec![],
            beta0: 0.0,
            col_sq: vec![],
            col_sum: vec![],
            col_max: vec![],
            dual_scale: 1.0,
            initial: 0.0,
            y_sum: 0.0,
            y_sq: 0.0,
            r_sum: 0.0,
            last_commit: vec![],
            screened: vec![],
            active: vec![],
            l1: 0.0,
            nonzeros: 0,
            max_change: 0.0,
            working_set_size: 0,
            tracked: vec![],
            snapshots: vec![],
            updates_since_snapshot: 0,
            extrapolations: (0, 0),
            grid: vec![],
            stage: 0,
            path: vec![],
            last: None,
            trace: vec![],
            updates: 0,
            update_rounds: 0,
            stale_skips: 0,
            status: None,
            split_rounds: 0,
            dropped_rounds: 0,
            warm_start: None,
        }
    }

    /// The coefficients.
    pub fn beta(&self) -> &[f64] {
        &self.beta
    }

    /// The intercept.
    pub fn intercept(&self) -> f64 {
        self.beta0
    }

    /// The L1 weight in use.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The smallest `lambda` at which every coefficient is zero: `||X^T (y - mean)||_inf / (n l1_ratio)`
    /// for the squared loss (centred when there is an intercept), `||X^T u||_inf / (n l1_ratio)` at
    /// `beta = 0` for the logistic loss.
    pub fn lambda_max(&self) -> f64 {
        self.lambda_max
    }

    /// Coordinates screened out so far.
    pub fn screened(&self) -> usize {
        self.screened.iter().filter(|&&s| s).count()
    }

    fn set_lambda(&mut self, lambda: f64) {
        self.lambda = lambda;
        self.alpha = self.n * lambda * self.settings.l1_ratio;
        self.ridge = self.n * lambda * (1.0 - self.settings.l1_ratio);
    }

    fn set_beta(&mut self, j: usize, value: f64) {
        let old = self.beta[j];
        self.l1 += value.abs() - old.abs();
        self.nonzeros = self.nonzeros + usize::from(value != 0.0) - usize::from(old != 0.0);
        self.beta[j] = value;
    }

    fn mean_nonzero(&self) -> f64 {
        if self.nonzeros == 0 { 0.0 } else { self.l1 / self.nonzeros as f64 }
    }

    /// Starts the run from `start` instead of zero: after the statistics round, its coefficients
    /// (and intercept, with one) are committed as the first deltas, so every worker moves its
    /// residuals there as it would for updates.
    pub fn starting_from(mut self, start: Option<crate::WarmStart>) -> Self {
        self.warm_start = start;
        self
    }

    fn stats(&mut self, round: Round, partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let mut total: Option<ShardStats> = None;
        for partial in partials {
            let Partial::Stats(s) = partial else { continue };
            match &mut total {
                None => total = Some(s),
                Some(t) => {
                    t.rows += s.rows;
                    t.y_sum += s.y_sum;
                    t.y_sq += s.y_sq;
                    add_into(&mut t.col_sq, &s.col_sq);
                    add_into(&mut t.col_sum, &s.col_sum);
                    add_into(&mut t.col_nnz, &s.col_nnz);
                    add_into(&mut t.xty, &s.xty);
                    for (a, &b) in t.col_max.iter_mut().zip(&s.col_max) {
                        *a = a.max(b);
                    }
                }
            }
        }
        let Some(t) = total else {
            return Pulled { commit: None, feedback: Feedback::Ready { col_nnz: vec![], excluded: vec![] } };
        };
        let p = t.col_sq.len();
        self.n = t.rows as f64;
        let n = self.n;
        // The intercept at beta = 0, and the gradient's largest entry there.
        let positive = self.settings.positive;
        let (intercept, max_gradient) = match self.settings.loss {
            Loss::Squared => {
                let y_mean = if self.settings.intercept { t.y_sum / n } else { 0.0 };
                self.initial = (t.y_sq - n * y_mean * y_mean).max(0.0) / (2.0 * n.max(1.0));
                let g = t
                    .xty
                    .iter()
                    .zip(&t.col_sum)
                    .map(|(xty, sum)| reach(xty - y_mean * sum, positive))
                    .fold(0.0, f64::max);
                (y_mean, g)
            }
            Loss::Logistic => {
                // Labels are -1 and 1: y_sum = n_pos - n_neg, and x_j . 1_pos = (sum_j + xty_j) / 2.
                let n_pos = (n + t.y_sum) / 2.0;
                let n_neg = n - n_pos;
                let b0 = if self.settings.intercept && n_pos > 0.0 && n_neg > 0.0 { (n_pos / n_neg).ln() } else { 0.0 };
                self.initial = (n_pos * log1p_exp(-b0) + n_neg * log1p_exp(b0)) / n.max(1.0);
                // u_i = y_i sigma(-y_i b0): sigma(-b0) for the positives, sigma(b0) for the negatives.
                let (up, un) = (1.0 / (1.0 + b0.exp()), 1.0 / (1.0 + (-b0).exp()));
                let g = t
                    .xty
                    .iter()
                    .zip(&t.col_sum)
                    .map(|(xty, sum)| reach(up * (sum + xty) / 2.0 - un * (sum - xty) / 2.0, positive))
                    .fold(0.0, f64::max);
                (b0, g)
            }
        };
        self.lambda_max = max_gradient / (n * self.settings.l1_ratio);
        let mut lambda = match self.settings.lambda {
            Lambda::Value(l) => l,
            Lambda::Ratio(r) => r * self.lambda_max,
        };
        if let Some(points) = self.settings.path {
            // From lambda_max (or the given top) down to lambda, evenly spaced on a log scale.
            let top = self.settings.path_top.unwrap_or(self.lambda_max).max(lambda);
            let ratio = lambda / top;
            self.grid = (0..points).map(|i| top * ratio.powf(i as f64 / (points - 1).max(1) as f64)).collect();
            lambda = self.grid[0];
        }
        self.set_lambda(lambda);
        self.beta = vec![0.0; p];
        self.last_commit = vec![NEVER; p];
        self.screened = vec![false; p];
        self.active = (0..p as u32).collect();
        self.y_sum = t.y_sum;
        self.y_sq = t.y_sq;
        self.beta0 = intercept;
        self.r_sum = t.y_sum - self.n * intercept;
        self.col_max = t.col_max;
        let excluded: Vec<u32> = (0..p as u32).filter(|&j| t.col_sq[j as usize] <= 0.0).collect();
        self.col_sq = t.col_sq;
        self.col_sum = t.col_sum;
        let mut deltas = Vec::new();
        if let Some(start) = self.warm_start.take() {
            for (j, &value) in start.coefficients.iter().enumerate() {
                // An empty column's coefficient stays zero, as updates would leave it.
                if value != 0.0 && self.col_sq[j] > 0.0 {
                    self.set_beta(j, value);
                    self.last_commit[j] = round.index;
                    self.r_sum -= value * self.col_sum[j];
                    deltas.push((j as u32, value));
                }
            }
            if self.settings.intercept {
                self.r_sum -= self.n * (start.intercept - intercept);
                self.beta0 = start.intercept;
            }
        }
        let intercept_delta = self.beta0;
        let commit = (intercept_delta != 0.0 || !deltas.is_empty())
            .then(|| Assignment::All(Commit { deltas, intercept_delta, ..Commit::default() }));
        Pulled { commit, feedback: Feedback::Ready { col_nnz: t.col_nnz, excluded } }
    }

    fn update(&mut self, round: Round, coords: &[u32], partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let per = if self.settings.loss == Loss::Logistic { 2 } else { 1 };
        let mut sums = vec![0.0; per * coords.len()];
        for partial in &partials {
            if let Partial::Update(dots) = partial {
                for (s, d) in sums.iter_mut().zip(dots) {
                    *s += d;
                }
            }
        }
        let mut deltas = Vec::with_capacity(coords.len());
        let mut changes = Vec::with_capacity(coords.len());
        // With an intercept, the residual the workers summed has mean zero (the intercept was
        // recentred after the last commit) and a squared-loss step along the centred column,
        // followed by that recentring, minimizes over the coefficient and the intercept together.
        let centre = self.settings.intercept && self.settings.loss == Loss::Squared && self.n > 0.0;
        let positive = self.settings.positive;
        for (k, &j) in coords.iter().enumerate() {
            let jj = j as usize;
            let norm = if centre { centred_sq(self.col_sq[jj], self.col_sum[jj], self.n) } else { self.col_sq[jj] };
            let last = self.last_commit[jj];
            if self.screened[jj] || norm <= 0.0 {
                changes.push((j, 0.0));
                continue;
            }
            if last != NEVER && last >= round.synced {
                // A commit of this coordinate had not reached the workers when they pushed.
                self.stale_skips += 1;
                changes.push((j, 0.0));
                continue;
            }
            let old = self.beta[jj];
            let new = match self.settings.loss {
                Loss::Squared => shrink(sums[k] + norm * old, self.alpha, positive) / (norm + self.ridge),
                Loss::Logistic => {
                    let g = sums[2 * k];
                    let h = match self.settings.update {
                        LogisticUpdate::Newton => sums[2 * k + 1].max(1e-12 * norm),
                        LogisticUpdate::Bound => 0.25 * norm,
                    };
                    let new = shrink(g + h * old, self.alpha, positive) / (h + self.ridge);
                    if self.settings.update == LogisticUpdate::Newton {
                        // Within |delta| max_i |x_ij| <= 1/2 every row's curvature stays within
                        // e^(1/2) < 2 of where it was measured, which makes the step lower the objective.
                        let limit = 0.5 / self.col_max[jj];
                        old + (new - old).clamp(-limit, limit)
                    } else {
                        new
                    }
                }
            };
            if !new.is_finite() {
                self.status = Some(Status::Diverged);
                changes.push((j, 0.0));
                continue;
            }
            let delta = new - old;
            self.updates += 1;
            if delta != 0.0 {
                self.set_beta(jj, new);
                self.last_commit[jj] = round.index;
                self.max_change = self.max_change.max(delta.abs());
                self.r_sum -= delta * self.col_sum[jj];
                deltas.push((j, delta));
            }
            changes.push((j, delta));
        }
        self.update_rounds += 1;
        let intercept_delta = self.recentre_intercept();
        self.updates_since_snapshot += coords.len() as u64;
        let (snapshot, extrapolate) = self.maybe_snapshot();
        let commit = (!deltas.is_empty() || intercept_delta != 0.0 || snapshot.is_some())
            .then(|| Assignment::All(Commit { deltas, intercept_delta, snapshot, ..Commit::default() }));
        let feedback = Feedback::Updated { changes, mean_nonzero: self.mean_nonzero(), stop: self.status, extrapolate };
        Pulled { commit, feedback }
    }

    /// Squared loss with an intercept: moves the intercept to the residuals' mean (its exact
    /// coordinate step) after a round's updates; returns the change (0 without one).
    fn recentre_intercept(&mut self) -> f64 {
        if !(self.settings.intercept && self.n > 0.0 && self.settings.loss == Loss::Squared) {
            return 0.0;
        }
        let delta = self.r_sum / self.n;
        self.beta0 += delta;
        self.r_sum -= delta * self.n;
        delta
    }

    /// Takes a snapshot once a pass over the tracked coordinates has been made since the last
    /// one; with `K + 1` snapshots, proposes an extrapolation. Returns the slot to snapshot in and
    /// the extrapolation to run, if any.
    fn maybe_snapshot(&mut self) -> (Option<u8>, Option<Vec<(u8, f64)>>) {
        let Some(k) = self.settings.anderson else { return (None, None) };
        if self.tracked.is_empty()
            || self.snapshots.len() > k
            || self.updates_since_snapshot < self.tracked.len() as u64
            || self.status.is_some()
        {
            return (None, None);
        }
        self.updates_since_snapshot = 0;
        let slot = self.snapshots.len() as u8;
        self.snapshots.push((self.tracked.iter().map(|&j| self.beta[j as usize]).collect(), self.beta0));
        if self.snapshots.len() <= k {
            return (Some(slot), None);
        }
        // Each snapshot is the tracked coefficients followed by the intercept.
        let points: Vec<Vec<f64>> =
            self.snapshots.iter().map(|(b, b0)| b.iter().copied().chain(std::iter::once(*b0)).collect()).collect();
        match crate::anderson::coefficients(&points) {
            Some(c) => (Some(slot), Some(c.into_iter().enumerate().map(|(i, c)| ((i + 1) as u8, c)).collect())),
            None => {
                // Start a new window from this snapshot.
                let last = self.snapshots.pop();
                self.snapshots.clear();
                self.snapshots.extend(last);
                (Some(0), None)
            }
        }
    }

    /// Starts a new extrapolation window on `tracked`, snapshotting the current model in slot 0.
    fn start_window(&mut self, tracked: Vec<u32>) -> Option<u8> {
        self.settings.anderson?;
        self.tracked = tracked;
        self.updates_since_snapshot = 0;
        self.snapshots = vec![(self.tracked.iter().map(|&j| self.beta[j as usize]).collect(), self.beta0)];
        Some(0)
    }

    fn extrapolate(&mut self, round: Round, mix: &[(u8, f64)], partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let (mut candidate_sq, mut candidate_sum, mut current_sq) = (0.0, 0.0, 0.0);
        for partial in &partials {
            if let Partial::Extrapolated { candidate_sq: a, candidate_sum: b, current_sq: c } = partial {
                candidate_sq += a;
                candidate_sum += b;
                current_sq += c;
            }
        }
        let mut point = vec![0.0; self.tracked.len()];
        let mut intercept = 0.0;
        for &(slot, c) in mix {
            if let Some((beta, beta0)) = self.snapshots.get(slot as usize) {
                for (p, b) in point.iter_mut().zip(beta) {
                    *p += c * b;
                }
                intercept += c * beta0;
            }
        }
        let n = self.n.max(1.0);
        let tracked_l1 = |values: &mut dyn Iterator<Item = f64>| values.map(f64::abs).sum::<f64>();
        let current_tracked = tracked_l1(&mut self.tracked.iter().map(|&j| self.beta[j as usize]));
        let candidate_l1 = self.l1 - current_tracked + tracked_l1(&mut point.iter().copied());
        let candidate = candidate_sq / (2.0 * n) + self.lambda * candidate_l1;
        let current = current_sq / (2.0 * n) + self.lambda * self.l1;
        let accept = candidate.is_finite() && candidate < current;
        let mut changes = Vec::new();
        if accept {
            self.extrapolations.0 += 1;
            let tracked = std::mem::take(&mut self.tracked);
            for (&j, &value) in tracked.iter().zip(&point) {
                let jj = j as usize;
                let delta = value - self.beta[jj];
                if delta != 0.0 {
                    self.set_beta(jj, value);
                    self.last_commit[jj] = round.index;
                    changes.push((j, delta));
                }
            }
            self.tracked = tracked;
            self.beta0 = intercept;
            self.r_sum = candidate_sum;
        } else {
            self.extrapolations.1 += 1;
        }
        let tracked = std::mem::take(&mut self.tracked);
        let snapshot = self.start_window(tracked);
        let commit = Commit { extrapolation: Some(accept), snapshot, ..Commit::default() };
        Pulled { commit: Some(Assignment::All(commit)), feedback: Feedback::Extrapolated { changes } }
    }

    /// Block mode: adds up the groups' changes, takes the step along them that lowers the objective
    /// most (a full step when one group moved, so the round is exact coordinate descent), and
    /// commits it.
    fn solve(&mut self, round: Round, partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let (mut moves, mut dr, mut slope, mut curvature, mut groups) = (Vec::new(), Vec::new(), 0.0, Vec::new(), 0);
        let (mut gains, mut replace, mut intercept_shift) = (0.0, false, 0.0);
        // Whether every group was solved at its first gap check: given the other groups, each was
        // (nearly) at its optimum, so what is left lies across the groups, which parallel rounds
        // cannot reach any faster than one worker solving the whole working set.
        let mut settled = true;
        for partial in partials {
            let Partial::Solved(s) = partial else { continue };
            self.updates += s.updates;
            if s.deltas.is_empty() && s.intercept_shift == 0.0 {
                continue;
            }
            groups += 1;
            gains += s.gain;
            settled &= s.settled;
            moves.extend(s.deltas);
            replace = s.replace;
            intercept_shift = s.intercept_shift;
            slope += s.slope;
            if dr.is_empty() {
                dr = s.dr;
            } else {
                add_into(&mut dr, &s.dr);
            }
            if !s.curvature.is_empty() {
                curvature = s.curvature;
            }
        }
        let mut efficiency = 1.0;
        let step = if groups <= 1 {
            1.0
        } else {
            let quad = match self.settings.loss {
                Loss::Squared => dr.iter().map(|d| d * d).sum(),
                Loss::Logistic => dr.iter().zip(&curvature).map(|(d, w)| w * d * d).sum(),
            };
            let pairs: Vec<(f64, f64)> = moves.iter().map(|&(j, d)| (self.beta[j as usize], d)).collect();
            let line = crate::block::Line { lin: slope, quad, alpha: self.alpha, ridge: self.ridge, moves: &pairs };
            let step = crate::block::line_search(&line, 1.0 / groups as f64);
            if gains > 0.0 {
                efficiency = -line.at(step) / gains;
            }
            step
        };
        if groups > 1 && efficiency < crate::block::split_efficiency(groups) {
            // The groups fought: the round is dropped, and redone by one worker.
            self.update_rounds += 1;
            self.dropped_rounds += 1;
            return Pulled {
                commit: None,
                feedback: Feedback::Solved { stop: self.status, inline: true, split: false },
            };
        }
        self.split_rounds += u64::from(groups > 1);
        let mut deltas = Vec::with_capacity(moves.len());
        for (j, d) in moves {
            let jj = j as usize;
            let d = step * d;
            let new = self.beta[jj] + d;
            if !new.is_finite() {
                self.status = Some(Status::Diverged);
                continue;
            }
            self.set_beta(jj, new);
            self.last_commit[jj] = round.index;
            self.max_change = self.max_change.max(d.abs());
            self.r_sum -= d * self.col_sum[jj];
            deltas.push((j, d));
        }
        self.update_rounds += 1;
        let mut intercept_delta = self.recentre_intercept();
        if self.settings.loss == Loss::Logistic && groups <= 1 && intercept_shift != 0.0 {
            // The group's Newton steps moved the intercept with the coefficients.
            self.beta0 += intercept_shift;
            intercept_delta += intercept_shift;
        }
        let commit = (!deltas.is_empty() || intercept_delta != 0.0).then(|| {
            Assignment::All(Commit {
                deltas,
                intercept_delta,
                solve: Some(SolveStep { step, dr, replace }),
                ..Commit::default()
            })
        });
        let feedback = Feedback::Solved { stop: self.status, inline: groups > 1 && settled, split: groups > 1 };
        Pulled { commit, feedback }
    }

    /// How far block-mode rounds solve until the next check, given the unscaled gap and primal.
    fn solve_spec(&self, gap_scaled: f64, primal_scaled: f64) -> SolveSpec {
        SolveSpec {
            alpha: self.alpha,
            ridge: self.ridge,
            target: (SOLVE_TARGET * gap_scaled).max(STOP_FRACTION * self.settings.tol * primal_scaled),
            max_epochs: SOLVE_MAX_EPOCHS,
            anderson: self.settings.block.unwrap_or(0),
            bound: self.settings.update == LogisticUpdate::Bound,
            centre: self.settings.intercept,
            positive: self.settings.positive,
        }
    }

    fn gap(&mut self, partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let positive = self.settings.positive;
        let mut xtr = vec![0.0; self.active.len()];
        let mut total =
            GapPartial { xtr: vec![], r_sq: 0.0, r_sum: 0.0, r_dot_y: 0.0, loss: 0.0, entropy: 0.0, curvature: 0.0 };
        for partial in &partials {
            if let Partial::Gap(g) = partial {
                add_into(&mut xtr, &g.xtr);
                total.r_sq += g.r_sq;
                total.r_sum += g.r_sum;
                total.r_dot_y += g.r_dot_y;
                total.loss += g.loss;
                total.entropy += g.entropy;
                total.curvature += g.curvature;
            }
        }
        let n = self.n.max(1.0);
        let logistic = self.settings.loss == Loss::Logistic;
        // The squared loss' residual is centred when there is an intercept (the logistic loss
        // keeps its intercept fixed in the dual and moves it by a Newton step below).
        let (mean, centered) =
            if self.settings.intercept && !logistic { (total.r_sum / n, true) } else { (0.0, false) };
        if !logistic {
            self.r_sum = total.r_sum;
        }
        // X^T r_c (squared) or X^T u (logistic) over the active coordinates.
        let mut max_corr = 0.0f64;
        for (k, &j) in self.active.iter().enumerate() {
            if centered {
                xtr[k] -= mean * self.col_sum[j as usize];
            }
            max_corr = max_corr.max(reach(xtr[k], positive));
        }
        let l2: f64 = if self.ridge > 0.0 { self.beta.iter().map(|b| b * b).sum() } else { 0.0 };
        let primal_scaled = total.loss + self.alpha * self.l1 + 0.5 * self.ridge * l2;
        // The conjugate of the elastic net's penalty, at X^T u.
        let ridge_conjugate = || -> f64 {
            xtr.iter().map(|&c| (reach(c, positive) - self.alpha).max(0.0).powi(2)).sum::<f64>() / (2.0 * self.ridge)
        };
        let mut scale = if max_corr > self.alpha { self.alpha / max_corr } else { 1.0 };
        let mut intercept_delta = 0.0;
        let mut dual_scale = None;
        // The gap at the dual point the screening test is centred on, when not the reported one.
        let mut screening_gap = None;
        let (dual_scaled, intercept_gap) = if logistic {
            // D(a) = sum H(a_i) - beta0 sum y_i a_i at a = s p, s the scale the workers used.
            let at_used = total.entropy - self.dual_scale * self.beta0 * total.r_sum;
            let dual = if self.ridge > 0.0 {
                scale = 1.0;
                at_used - ridge_conjugate()
            } else if scale >= self.dual_scale {
                at_used
            } else {
                // s p is not feasible; the dual is concave in s and 0 at s = 0: the chord bounds it.
                scale / self.dual_scale * at_used
            };
            if self.ridge == 0.0 {
                dual_scale = Some(scale);
                self.dual_scale = scale;
            }
            let mut intercept_gap = 0.0;
            if self.settings.intercept && total.curvature > 0.0 {
                // The Newton decrement estimates what the intercept has left to gain.
                intercept_gap = 0.5 * total.r_sum * total.r_sum / total.curvature;
                intercept_delta = (total.r_sum / total.curvature).clamp(-0.5, 0.5);
            }
            (dual, intercept_gap)
        } else {
            let rc_sq = (total.r_sq - n * mean * mean).max(0.0);
            let rc_dot_y = total.r_dot_y - mean * self.y_sum;
            if self.ridge > 0.0 {
                // Two duals, both valid; the better one gives the gap. The elastic net is a Lasso on
                // X augmented by sqrt(ridge) I, with residual (r, -sqrt(ridge) beta): its rescaled
                // residual is the dual point the screening sphere is centred on.
                let augmented = self
                    .active
                    .iter()
                    .zip(&xtr)
                    .map(|(&j, c)| reach(c - self.ridge * self.beta[j as usize], positive))
                    .fold(0.0f64, f64::max);
                scale = if augmented > self.alpha { self.alpha / augmented } else { 1.0 };
                let augmented_dual = scale * rc_dot_y - 0.5 * scale * scale * (rc_sq + self.ridge * l2);
                screening_gap = Some((primal_scaled - augmented_dual).max(0.0));
                (augmented_dual.max(rc_dot_y - 0.5 * rc_sq - ridge_conjugate()), 0.0)
            } else {
                (scale * rc_dot_y - 0.5 * scale * scale * rc_sq, 0.0)
            }
        };
        let primal = primal_scaled / n;
        let dual = (dual_scaled - intercept_gap) / n;
        let gap_scaled = (primal_scaled - dual_scaled + intercept_gap).max(0.0);
        let relative_gap = if primal > 0.0 { (primal - dual).max(0.0) / primal } else { 0.0 };
        let report = GapReport { primal, dual, relative_gap };
        self.last = Some(report);

        let point = TracePoint {
            round: self.update_rounds,
            seconds: self.started.elapsed().as_secs_f64(),
            objective: primal,
            duality_gap: relative_gap,
            nnz: self.nonzeros,
            updates: self.updates,
            lambda: self.lambda,
        };
        (self.observer)(&point);
        self.trace.push(point);

        let initial = self.initial;
        if self.status.is_none() {
            if !primal.is_finite() || primal > 1e12 * initial.max(f64::MIN_POSITIVE) {
                self.status = Some(Status::Diverged);
            } else if relative_gap <= self.settings.tol {
                self.status = Some(Status::Converged);
            } else if let Some(tol) = self.settings.coef_tol {
                let largest = self.beta.iter().fold(0.0f64, |m, b| m.max(b.abs()));
                if self.updates > 0 && self.max_change <= tol * largest {
                    self.status = Some(Status::CoefficientsStable);
                }
            }
        }
        self.max_change = 0.0;
        if !self.grid.is_empty() && self.status.is_some() {
            self.record_point(report);
            if matches!(self.status, Some(Status::Converged | Status::CoefficientsStable))
                && self.stage + 1 < self.grid.len()
            {
                return self.next_lambda();
            }
        }
        let mut screened_now = Vec::new();
        let mut deltas = Vec::new();
        let screening = self.settings.screening && self.status.is_none() && primal.is_finite();
        // The dual is 1-strongly concave for the squared loss, 4-strongly for the logistic one.
        let sphere_gap = screening_gap.unwrap_or(gap_scaled);
        let radius = if logistic { (0.5 * sphere_gap).sqrt() } else { (2.0 * sphere_gap).sqrt() };
        // Distance of each remaining coordinate to its optimality bound, for the working set.
        let mut scores: Vec<(f64, u32)> = Vec::new();
        for (k, correlation) in xtr.iter().enumerate() {
            let j = self.active[k];
            let jj = j as usize;
            let norm =
                if centered { self.col_sq[jj] - self.col_sum[jj] * self.col_sum[jj] / n } else { self.col_sq[jj] };
            let norm = norm.max(0.0).sqrt();
            // The column and correlation of the augmented Lasso (the same as X's without L2).
            let augmented_norm = (norm * norm + self.ridge).sqrt();
            let augmented = correlation - self.ridge * self.beta[jj];
            if screening && scale * reach(augmented, positive) + radius * augmented_norm < self.alpha {
                screened_now.push(j);
                self.screened[jj] = true;
                let old = self.beta[jj];
                if old != 0.0 {
                    deltas.push((j, -old));
                    self.r_sum += old * self.col_sum[jj];
                    self.set_beta(jj, 0.0);
                }
                continue;
            }
            if self.settings.working_set.is_some() {
                let score = if self.beta[jj] != 0.0 {
                    f64::NEG_INFINITY
                } else if norm > 0.0 {
                    (self.alpha - scale * reach(*correlation, positive)) / norm
                } else {
                    f64::INFINITY
                };
                scores.push((score, j));
            }
        }
        if !screened_now.is_empty() {
            remove_sorted(&mut self.active, &screened_now);
        }
        let working_set = match self.settings.working_set {
            Some(minimum) if self.status.is_none() => {
                // Grow, never shrink: at least the minimum, twice the nonzeros and the last size.
                let size = minimum.max(2 * self.nonzeros).max(self.working_set_size).min(scores.len());
                self.working_set_size = size;
                if size < scores.len() {
                    scores.select_nth_unstable_by(size, |a, b| a.0.total_cmp(&b.0));
                    scores.truncate(size);
                }
                let mut set: Vec<u32> = scores.into_iter().map(|(_, j)| j).collect();
                set.sort_unstable();
                Some(set)
            }
            _ => None,
        };

        // A new extrapolation window over the working set (or every coordinate left).
        let snapshot = if self.status.is_none() {
            self.start_window(working_set.clone().unwrap_or_else(|| self.active.clone()))
        } else {
            None
        };
        if intercept_delta != 0.0 && self.status.is_none() {
            self.beta0 += intercept_delta;
        } else {
            intercept_delta = 0.0;
        }
        let commit = (!deltas.is_empty()
            || !screened_now.is_empty()
            || snapshot.is_some()
            || intercept_delta != 0.0
            || dual_scale.is_some())
        .then(|| {
            Assignment::All(Commit {
                deltas,
                screened: screened_now.clone(),
                snapshot,
                intercept_delta,
                dual_scale,
                ..Commit::default()
            })
        });
        let spec = self.solve_spec(gap_scaled, primal_scaled);
        let feedback =
            Feedback::Checked { screened: screened_now, working_set, stop: self.status, restart: false, spec };
        Pulled { commit, feedback }
    }

    /// Keeps the model reached at the current `lambda` of a path.
    fn record_point(&mut self, report: GapReport) {
        self.path.push(PathPoint {
            lambda: self.lambda,
            objective: report.primal,
            duality_gap: report.relative_gap,
            nnz: self.nonzeros,
            seconds: self.started.elapsed().as_secs_f64(),
            updates: self.updates,
            status: self.status.unwrap_or(Status::MaxRounds),
            intercept: self.beta0,
            coefficients: nonzero_coefficients(&self.beta),
        });
    }

    /// Moves a path to its next `lambda`, starting from the current model (a warm start).
    fn next_lambda(&mut self) -> Pulled<Commit, Feedback> {
        self.stage += 1;
        self.set_lambda(self.grid[self.stage]);
        self.status = None;
        // Screening is valid for one lambda only: everything is back in play.
        self.screened.iter_mut().for_each(|s| *s = false);
        self.active = (0..self.beta.len() as u32).collect();
        // The workers' dual scale must be the one the next check is judged by.
        let dual_scale = (self.settings.loss == Loss::Logistic).then_some(self.dual_scale);
        let commit = Commit { unscreen: true, dual_scale, ..Commit::default() };
        let spec = self.solve_spec(0.0, 0.0);
        let feedback = Feedback::Checked { screened: vec![], working_set: None, stop: None, restart: true, spec };
        Pulled { commit: Some(Assignment::All(commit)), feedback }
    }
}

impl Aggregator<LassoProgram> for LassoAggregator<'_> {
    fn pull(&mut self, round: Round, tasks: &Assignment<Task>, partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        match tasks.for_worker(0) {
            Some(Task::Stats) => self.stats(round, partials),
            Some(Task::Update(coords)) => self.update(round, coords, partials),
            Some(Task::Extrapolate(mix)) => self.extrapolate(round, mix, partials),
            Some(Task::Solve(_)) => self.solve(round, partials),
            Some(Task::Gap) | None => self.gap(partials),
        }
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        encode(&(
            self.started.elapsed(),
            (self.n, self.alpha, self.ridge, self.lambda, self.lambda_max),
            (&self.beta, self.beta0, &self.col_sq, &self.col_sum, &self.col_max),
            (self.dual_scale, self.initial, self.y_sum, self.y_sq, self.r_sum),
            (&self.last_commit, &self.screened, &self.active, self.l1, self.nonzeros, self.max_change),
            (self.working_set_size, &self.tracked, &self.snapshots, self.updates_since_snapshot, self.extrapolations),
            (&self.grid, self.stage, &self.path, self.last, &self.trace),
            (self.updates, self.update_rounds, self.stale_skips, self.status, self.split_rounds, self.dropped_rounds),
        ))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let elapsed: std::time::Duration;
        (
            elapsed,
            (self.n, self.alpha, self.ridge, self.lambda, self.lambda_max),
            (self.beta, self.beta0, self.col_sq, self.col_sum, self.col_max),
            (self.dual_scale, self.initial, self.y_sum, self.y_sq, self.r_sum),
            (self.last_commit, self.screened, self.active, self.l1, self.nonzeros, self.max_change),
            (self.working_set_size, self.tracked, self.snapshots, self.updates_since_snapshot, self.extrapolations),
            (self.grid, self.stage, self.path, self.last, self.trace),
            (self.updates, self.update_rounds, self.stale_skips, self.status, self.split_rounds, self.dropped_rounds),
        ) = decode(state)?;
        // The clock goes on from where the saved run stopped.
        self.started = std::time::Instant::now().checked_sub(elapsed).unwrap_or_else(std::time::Instant::now);
        Ok(())
    }
}

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
