//! The worker of the L1-regularized linear models (`push`, `sync`): its row shard of `X` and `y`,
//! the residuals or margins of its rows, and the local solves of the block scheduler's rounds.

use std::ops::Range;
use std::sync::Arc;

use strads_core::checkpoint::{decode, encode, expect_len};
use strads_core::{BoxError, Round, Worker};
use strads_data::Columns;

use crate::Loss;
use crate::program::*;

/// A worker: one row shard of the data and its residuals (or margins), or in block mode every
/// row and column, the whole residual and the share of the gap's sums this worker computes.
pub struct LassoWorker {
    pub(crate) loss: Loss,
    pub(crate) x: Arc<Columns>,
    pub(crate) y: Vec<f64>,
    /// Squared loss: residuals without the intercept, the true residual is `r - offset scale`. Logistic
    /// loss: margins without the intercept, `z = r + offset`.
    pub(crate) r: Vec<f64>,
    pub(crate) offset: f64,
    /// Logistic loss: `u_i = y_i p_i` and `w_i = p_i (1 - p_i)`, `p_i = sigma(-y_i z_i)`.
    pub(crate) u: Vec<f64>,
    pub(crate) w: Vec<f64>,
    /// Logistic loss: the scale of the dual point `a = s p` the next gap check evaluates.
    dual_scale: f64,
    /// `x_j . scale` (the column sums, without sample weights).
    pub(crate) col_sum: Vec<f64>,
    /// With sample weights, the intercept's column on these rows: the square roots of the rows'
    /// weights, by which the rows of `x` and `y` are already multiplied. `None`: ones.
    pub(crate) scale: Option<Vec<f64>>,
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
            scale: None,
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
            beta: strads_data::written_zeros(x.cols()),
            col_sq: (0..x.cols()).map(|j| x.sq_norm(j)).collect(),
            col_max: (0..x.cols()).map(|j| x.max_abs(j)).collect(),
            local: vec![],
            local_u: vec![],
            local_w: vec![],
        });
        worker
    }

    /// With sample weights (the squared loss): `scale` is the intercept's column on this
    /// worker's rows, the square roots of their weights (see [`strads_data::WeightedDataset`]).
    pub fn with_scale(mut self, scale: Option<Vec<f64>>) -> Self {
        // Equal weights are no weights: the same sums, to the last bit.
        let scale = scale.filter(|s| s.iter().any(|&v| v != 1.0));
        if let Some(s) = &scale {
            self.col_sum = (0..self.x.cols()).map(|j| self.x.dot(j, s)).collect();
        }
        self.scale = scale;
        self
    }

    /// The intercept column's entry at row `i`.
    #[inline]
    pub(crate) fn scale_at(&self, i: usize) -> f64 {
        self.scale.as_ref().map_or(1.0, |s| s[i])
    }

    /// Whether this worker sums column `j` (always, outside block mode).
    fn sums_column(&self, j: usize) -> bool {
        self.block.as_ref().is_none_or(|b| j % b.workers == b.index)
    }

    /// The rows whose terms this worker sums.
    fn summed_rows(&self) -> Range<usize> {
        self.block.as_ref().map_or(0..self.y.len(), |b| b.rows.clone())
    }

    /// `x_j . r` for the active coordinates this worker sums (0 for the others), or for all of
    /// them (`whole`).
    fn active_dots(&self, whole: bool) -> Vec<f64> {
        let sums = |j: usize| whole || self.sums_column(j);
        self.active.iter().map(|&j| if sums(j as usize) { self.dot(j as usize) } else { 0.0 }).collect()
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

    fn logistic_gap(&self, whole: bool) -> GapPartial {
        let (mut loss, mut entropy, mut r_sum, mut curvature) = (0.0, 0.0, 0.0, 0.0);
        for i in self.summed_rows() {
            let y = self.y[i];
            loss += log1p_exp(-y * (self.r[i] + self.offset));
            entropy += binary_entropy(self.dual_scale * self.u[i] * y);
            r_sum += self.u[i];
            curvature += self.w[i];
        }
        let xtr = self.active_dots(whole);
        GapPartial { xtr, r_sq: 0.0, r_sum, r_dot_y: 0.0, loss, entropy, curvature }
    }
}

impl Worker<LassoProgram> for LassoWorker {
    fn push(&mut self, _round: Round, task: &Task) -> Partial {
        match task {
            Task::Stats => {
                let cols = self.x.cols();
                let mine = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
                    (0..cols).map(|j| if self.sums_column(j) { f(j) } else { 0.0 }).collect()
                };
                let rows = self.summed_rows();
                let y = &self.y[rows.clone()];
                Partial::Stats(ShardStats {
                    rows: y.len() as u64,
                    // A block worker computed its columns' norms and largest values when it was built.
                    col_sq: mine(&|j| self.block.as_ref().map_or_else(|| self.x.sq_norm(j), |b| b.col_sq[j])),
                    col_sum: mine(&|j| self.col_sum[j]),
                    col_nnz: (0..cols)
                        .map(|j| if self.sums_column(j) { self.x.col_nnz(j) as u64 } else { 0 })
                        .collect(),
                    xty: mine(&|j| self.x.dot(j, &self.y)),
                    y_sum: rows.map(|i| self.scale_at(i) * self.y[i]).sum(),
                    y_sq: y.iter().map(|v| v * v).sum(),
                    col_max: mine(&|j| self.block.as_ref().map_or_else(|| self.x.max_abs(j), |b| b.col_max[j])),
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
            &Task::Gap { whole } if self.loss == Loss::Logistic => Partial::Gap(self.logistic_gap(whole)),
            &Task::Gap { whole } => {
                let (mut r_sq, mut r_sum, mut r_dot_y) = (0.0, 0.0, 0.0);
                for i in self.summed_rows() {
                    let s = self.scale_at(i);
                    let r = self.r[i] - self.offset * s;
                    r_sq += r * r;
                    r_sum += s * r;
                    r_dot_y += r * self.y[i];
                }
                let xtr = self.active_dots(whole);
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
                for i in self.summed_rows() {
                    let s = self.scale_at(i);
                    let (a, r) = (candidate[i] - offset * s, self.r[i] - self.offset * s);
                    candidate_sq += a * a;
                    candidate_sum += s * a;
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
