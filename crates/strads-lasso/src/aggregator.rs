//! The aggregator of the L1-regularized linear models (`pull`): it adds the workers' partial sums,
//! applies the coordinate updates, commits the changes, computes the duality gap and the screening
//! test from gap rounds, and keeps the path and the trace.

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{Aggregator, Assignment, BoxError, Pulled, Round};

use crate::program::*;
use crate::{Lambda, LogisticUpdate, Loss, Status, TracePoint};

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
        self.beta = strads_data::written_zeros(p);
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
        // The first partial's products are the sum's start (0 + a is a, so the sum is the same):
        // a leader-only check allocates nothing here.
        let mut sum: Option<Vec<f64>> = None;
        let mut total =
            GapPartial { xtr: vec![], r_sq: 0.0, r_sum: 0.0, r_dot_y: 0.0, loss: 0.0, entropy: 0.0, curvature: 0.0 };
        for partial in partials {
            if let Partial::Gap(g) = partial {
                match &mut sum {
                    Some(xtr) => add_into(xtr, &g.xtr),
                    None => {
                        let mut first = g.xtr;
                        first.resize(self.active.len(), 0.0);
                        sum = Some(first);
                    }
                }
                total.r_sq += g.r_sq;
                total.r_sum += g.r_sum;
                total.r_dot_y += g.r_dot_y;
                total.loss += g.loss;
                total.entropy += g.entropy;
                total.curvature += g.curvature;
            }
        }
        let mut xtr = sum.unwrap_or_else(|| vec![0.0; self.active.len()]);
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
            Some(Task::Gap { .. }) | None => self.gap(partials),
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
