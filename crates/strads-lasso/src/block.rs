//! The `block` scheduling mode: feature-clustered block coordinate descent, many updates per round.
//!
//! Every worker holds every column (shared in memory by the embedded runtime) and a copy of the
//! whole residual. After each gap check the scheduler splits the working set into one group per
//! worker, with strongly correlated coordinates in the same group ([`Grouper`], after Scherrer et
//! al. 2012, "Feature clustering for accelerating parallel coordinate descent"). In a round each
//! worker solves its group's subproblem against its copy of the residual (cyclic passes with Anderson
//! extrapolation, as celer and skglm solve a working set) and returns its coefficient changes
//! and residual change; the aggregator adds them up, takes the step along the sum that lowers the
//! objective most ([`line_search`]: the step `1/m` for `m` groups is a descent by convexity, so the
//! groups' updates cannot fight) and commits it. One worker solves the whole working set in one
//! round, without any per-coordinate crossing of threads; small working sets are solved inline
//! by one worker, since splitting them would cost more than it saves.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use strads_data::Columns;

use crate::Loss;
use crate::program::{LassoWorker, SolveSpec, SolveStep, SolveTask, Solved, logistic_derivatives, reach, shrink};

/// Sketch length: 64 random signs per row, so a sketched correlation has a standard deviation of
/// about `1/8` (an uncorrelated pair passes `GROUP_RHO` with probability 6e-5). Grouping is a
/// heuristic (the line search keeps any grouping correct), so sketched correlations are not
/// checked exactly: on text data the columns a first working set picks are long, and exact
/// products of their pairs would cost more than the round.
const SKETCH: usize = 64;

/// Sketches read about this many rows (a fixed sample of them on taller data): a correlation
/// estimated from 4096 rows is as good as the sketch itself.
const SKETCH_ROWS: usize = 4096;

/// Coordinates whose columns correlate at least this much (in absolute value) share a group.
pub const GROUP_RHO: f64 = 0.5;

/// Once this many coordinates have been seen, a new one is compared with its neighbours in sketch
/// order only, not with every coordinate seen.
const ALL_PAIRS_UP_TO: usize = 3000;

/// Neighbours compared in sketch order for larger working sets.
const WINDOW: usize = 48;

/// The default of `split_min`: never split, for either loss. One worker solves each working set
/// and every worker shares the gap checks. On the suite's problems (bench/results/
/// lasso-suite-2026-12-07.md) one worker's passes over the whole working set beat block-Jacobi
/// rounds over two groups in wall time on every problem of 1M nonzeros or more: on news20 the
/// groups fight (a probe keeps 0.55 of their gains) and the probe is lost; on the tall and
/// generated problems kept split rounds need more passes in all (28% more updates on the tall
/// problem at lambda_max/1000) and two workers took 1.10x and 1.51x of one worker's time where
/// the inline solve took 0.92x and 1.03x. `--split-min N` still splits working sets whose pass
/// visits at least `N` nonzeros.
pub const SPLIT_NEVER: u64 = u64::MAX;

/// A gap check over fewer active nonzeros than this is made by worker 0 alone: waking another
/// thread costs 100 to 400 microseconds on a virtual machine, what a check of 100,000 to 400,000
/// nonzeros takes on one core.
pub const SHARED_GAP_NNZ: u64 = 500_000;

/// Passes of a probe, the first split round at a `lambda`: one pass shows whether the groups'
/// changes fight (news20's groups keep 0.55 of their gains after one pass and 0.57 after five),
/// and a dropped probe then costs one pass of half the working set.
pub const PROBE_EPOCHS: u32 = 1;

/// A split round into `m` groups whose combined step lowers the objective by less than
/// `min(0.75, 1.5 / m)` of what the groups' own changes would (their changes fight: the groups
/// are coupled, and `m` workers would not gain half again over one) is dropped, and one worker
/// solves the working set from then on (at this `lambda`).
pub fn split_efficiency(groups: usize) -> f64 {
    (1.5 / groups.max(1) as f64).min(0.75)
}

/// Splits working sets into groups of correlated coordinates, balanced by nonzeros.
///
/// Which pairs are correlated is found once per pair: each coordinate entering a working set for
/// the first time is compared with every coordinate seen before (by sketched correlations), and
/// its links are kept for later working sets.
pub struct Grouper {
    x: Arc<Columns>,
    /// Rows are sketched when the top half of their hash is below this.
    kept_rows: u64,
    row_signs: Vec<u64>,
    sketches: FxHashMap<u32, [f32; SKETCH]>,
    /// Coordinates compared with each other so far, in the order they came.
    seen: Vec<u32>,
    links: FxHashMap<u32, Vec<u32>>,
    split_min: u64,
}

impl Grouper {
    /// A grouper over the columns `x`; `seed` draws the sketch's signs; working sets whose pass
    /// visits fewer than `split_min` nonzeros (default: [`SPLIT_NEVER`]) go whole to the first
    /// worker.
    pub fn new(x: Arc<Columns>, seed: u64, split_min: Option<u64>) -> Self {
        // The same rows for every column: `kept_rows / 2^32` of them.
        let kept_rows = ((SKETCH_ROWS as f64 / x.rows().max(1) as f64).min(1.0) * (1u64 << 32) as f64) as u64;
        let row_signs = (0..x.rows() as u64).map(|i| splitmix(seed ^ splitmix(i))).collect();
        let split_min = split_min.unwrap_or(SPLIT_NEVER);
        Grouper {
            x,
            kept_rows,
            row_signs,
            sketches: FxHashMap::default(),
            seen: vec![],
            links: FxHashMap::default(),
            split_min,
        }
    }

    fn sketch(&self, j: u32) -> [f32; SKETCH] {
        if let Some(s) = self.sketches.get(&j) {
            return *s;
        }
        let mut acc = [0.0f64; SKETCH];
        let mut sq = 0.0;
        let (signs, kept) = (&self.row_signs, self.kept_rows);
        self.x.for_each_entry(j as usize, |i, v| {
            let bits = signs[i];
            if splitmix(bits) >> 32 >= kept {
                return;
            }
            sq += v * v;
            for (c, a) in acc.iter_mut().enumerate() {
                *a += if bits >> c & 1 == 1 { v } else { -v };
            }
        });
        let scale = if sq > 0.0 { 1.0 / (sq * SKETCH as f64).sqrt() } else { 0.0 };
        let mut s = [0.0f32; SKETCH];
        for (s, a) in s.iter_mut().zip(acc) {
            *s = (a * scale) as f32;
        }
        s
    }

    /// Splits `coords` (sorted) into `workers` groups, each sorted: coordinates correlated at
    /// [`GROUP_RHO`] or more are kept together where the balance allows, and the groups' nonzeros
    /// (`col_nnz`) are as even as the clusters let them be. A working set too small to split (see
    /// [`Grouper::new`]) goes whole to the first worker.
    pub fn groups(&mut self, coords: &[u32], col_nnz: &[u64], workers: usize) -> Vec<Vec<u32>> {
        let mut groups = vec![Vec::new(); workers.max(1)];
        let total: u64 = coords.iter().map(|&j| col_nnz[j as usize]).sum();
        if workers <= 1 || coords.len() < 2 || total < self.split_min {
            groups[0] = coords.to_vec();
            return groups;
        }
        let clusters = self.clusters(coords);
        // Largest cluster first, each to the lightest group; a cluster larger than a group's share
        // is dealt out coordinate by coordinate.
        let weight = |c: &[u32]| c.iter().map(|&j| col_nnz[j as usize]).sum::<u64>();
        let mut order: Vec<(u64, Vec<u32>)> = clusters.into_iter().map(|c| (weight(&c), c)).collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1[0].cmp(&b.1[0])));
        let share = total.div_ceil(workers as u64);
        let mut load = vec![0u64; workers];
        let lightest = |load: &[u64]| (0..load.len()).min_by_key(|&k| (load[k], k)).unwrap_or(0);
        for (w, cluster) in order {
            if w > share {
                for j in cluster {
                    let k = lightest(&load);
                    load[k] += col_nnz[j as usize];
                    groups[k].push(j);
                }
            } else {
                let k = lightest(&load);
                load[k] += w;
                groups[k].extend(cluster);
            }
        }
        for g in &mut groups {
            g.sort_unstable();
        }
        groups
    }

    /// Compares the coordinates of `coords` not seen before with every coordinate seen (or, past
    /// [`ALL_PAIRS_UP_TO`] coordinates seen, with their neighbours in sketch order) and keeps the links.
    fn meet(&mut self, coords: &[u32]) {
        let new: Vec<u32> = coords.iter().copied().filter(|j| !self.links.contains_key(j)).collect();
        if new.is_empty() {
            return;
        }
        for &j in &new {
            self.links.insert(j, vec![]);
            let sketch = self.sketch(j);
            self.sketches.insert(j, sketch);
        }
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        if self.seen.len() + new.len() <= ALL_PAIRS_UP_TO {
            for (k, &a) in new.iter().enumerate() {
                pairs.extend(self.seen.iter().map(|&b| (a, b)));
                pairs.extend(new[k + 1..].iter().map(|&b| (a, b)));
            }
        } else {
            // Sketches' sign patterns put similar columns near each other; four rotations of the
            // pattern give four orders, and each new coordinate meets its neighbours in each.
            let all: Vec<u32> = self.seen.iter().chain(&new).copied().collect();
            for rotation in 0..4u32 {
                let key = |j: u32| {
                    let s = &self.sketches[&j];
                    s.iter()
                        .enumerate()
                        .fold(0u64, |k, (c, v)| k | (u64::from(*v >= 0.0) << c))
                        .rotate_left(16 * rotation)
                };
                let mut order: Vec<(u64, u32)> = all.iter().map(|&j| (key(j), j)).collect();
                order.sort_unstable();
                for (k, &(_, a)) in order.iter().enumerate() {
                    let lo = k.saturating_sub(WINDOW);
                    pairs.extend(order[lo..k].iter().map(|&(_, b)| (a, b)));
                }
            }
            pairs.retain(|(a, b)| new.binary_search(a).is_ok() || new.binary_search(b).is_ok());
        }
        for (a, b) in pairs {
            let (sa, sb) = (&self.sketches[&a], &self.sketches[&b]);
            let dot: f32 = sa.iter().zip(sb).map(|(x, y)| x * y).sum();
            if f64::from(dot.abs()) >= GROUP_RHO {
                let links = &mut self.links;
                if let Some(l) = links.get_mut(&a)
                    && !l.contains(&b)
                {
                    l.push(b);
                }
                if let Some(l) = links.get_mut(&b)
                    && !l.contains(&a)
                {
                    l.push(a);
                }
            }
        }
        self.seen.extend(new);
    }

    /// The connected components of "correlated at `GROUP_RHO` or more" over `coords` (sorted).
    fn clusters(&mut self, coords: &[u32]) -> Vec<Vec<u32>> {
        self.meet(coords);
        let index: FxHashMap<u32, usize> = coords.iter().enumerate().map(|(k, &j)| (j, k)).collect();
        let mut parent: Vec<usize> = (0..coords.len()).collect();
        for (k, &a) in coords.iter().enumerate() {
            for b in &self.links[&a] {
                if let Some(&kb) = index.get(b) {
                    let (ra, rb) = (find(&mut parent, k), find(&mut parent, kb));
                    if ra != rb {
                        parent[ra.max(rb)] = ra.min(rb);
                    }
                }
            }
        }
        let mut members: FxHashMap<usize, Vec<u32>> = FxHashMap::default();
        for (k, &j) in coords.iter().enumerate() {
            let root = find(&mut parent, k);
            members.entry(root).or_default().push(j);
        }
        let mut clusters: Vec<Vec<u32>> = members.into_values().collect();
        clusters.sort_by_key(|c| c[0]);
        clusters
    }
}

fn find(parent: &mut [usize], mut a: usize) -> usize {
    while parent[a] != a {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    a
}

impl LassoWorker {
    /// Solves a group's subproblem against a copy of the residual: cyclic passes over the group
    /// until a pass lowers the objective by less than the target, with Anderson extrapolation of
    /// the passes (squared loss) kept when it lowers the subproblem's objective.
    pub(crate) fn solve(&mut self, task: &SolveTask) -> Solved {
        let (loss, mut offset, mut spec) = (self.loss, self.offset, task.spec);
        let scale = self.scale.as_deref();
        if task.split && loss == Loss::Logistic {
            // The groups of a split round are weighed at the intercept they started from.
            spec.centre = false;
        }
        // An empty group (a worker left out of the round) moves nothing, not even the intercept.
        let Some(block) = self.block.as_mut().filter(|_| !task.coords.is_empty()) else {
            return Solved {
                deltas: vec![],
                dr: vec![],
                slope: 0.0,
                curvature: vec![],
                updates: 0,
                gain: 0.0,
                epochs: 0,
                settled: true,
                replace: false,
                intercept_shift: 0.0,
            };
        };
        let (x, y, col_sum) = (&*self.x, &self.y, &self.col_sum);
        block.local.clone_from(&self.r);
        if loss == Loss::Logistic {
            block.local_u.clone_from(&self.u);
            block.local_w.clone_from(&self.w);
        }
        let coords = &task.coords;
        let start: Vec<f64> = coords.iter().map(|&j| block.beta[j as usize]).collect();
        let mut b = start.clone();
        let anderson = if loss == Loss::Squared { usize::from(spec.anderson) } else { 0 };
        let mut snapshots: Vec<Vec<f64>> = if anderson > 0 { vec![b.clone()] } else { vec![] };
        let mut scratch: Vec<f64> = vec![];
        let mut updates = 0u64;
        let mut epochs = 0u32;
        // The gap of the group's subproblem decides when to stop, checked every few passes; the
        // logistic elastic net, without that gap, stops when a pass gains little.
        let gap_known = loss == Loss::Squared || spec.ridge == 0.0;
        let outside_sq: f64 = if loss == Loss::Squared && spec.ridge > 0.0 {
            let inside: f64 = start.iter().map(|b| b * b).sum();
            block.beta.iter().map(|b| b * b).sum::<f64>() - inside
        } else {
            0.0
        };
        let context_at = |offset: f64| GapContext {
            x,
            y,
            col_sum,
            scale,
            offset,
            alpha: spec.alpha,
            ridge: spec.ridge,
            outside_sq,
            positive: spec.positive,
        };
        // Whether the cyclic passes below solve the group: the squared loss, the bound step, and a
        // proximal Newton step that rounding stopped (single-coordinate steps always make progress).
        let mut cyclic = true;
        // Whether the passes stopped at the target (not at `spec.max_epochs`).
        let mut met = false;
        // Logistic loss with an intercept: how far the Newton steps moved it.
        let mut intercept_shift = 0.0;
        if loss == Loss::Logistic && !spec.bound {
            let context = context_at(offset);
            let newton = context.prox_newton(
                coords,
                &mut b,
                &block.col_sq,
                (&mut block.local, &mut block.local_u, &mut block.local_w),
                spec,
            );
            let shift;
            (updates, epochs, cyclic, shift) = newton;
            intercept_shift = shift;
            offset = self.offset + shift;
            met = !cyclic && epochs < spec.max_epochs.max(1);
        }
        let cyclic_epochs = if cyclic { spec.max_epochs.max(1) } else { 0 };
        // Implicit centring (squared loss with an intercept): the intercept moves with each update
        // so that the residual keeps its mean of zero, and each step is along the centred column.
        // Without it, features far from zero mean couple every coefficient to the intercept and
        // passes at a fixed intercept crawl.
        let n = y.len() as f64;
        let centre = spec.centre && loss == Loss::Squared && n > 0.0;
        let curvatures: Vec<f64> = coords
            .iter()
            .map(|&j| {
                let jj = j as usize;
                if centre { crate::program::centred_sq(block.col_sq[jj], col_sum[jj], n) } else { block.col_sq[jj] }
            })
            .collect();
        for epoch in 1..=cyclic_epochs {
            epochs = epoch;
            let mut decrease = 0.0;
            for (k, &j) in coords.iter().enumerate() {
                let jj = j as usize;
                let norm = block.col_sq[jj];
                if norm <= 0.0 || curvatures[k] <= 0.0 {
                    continue;
                }
                updates += 1;
                let old = b[k];
                let (new, curvature) = match loss {
                    Loss::Squared => {
                        let g = x.dot(jj, &block.local) - offset * col_sum[jj];
                        let h = curvatures[k];
                        (shrink(g + h * old, spec.alpha, spec.positive) / (h + spec.ridge), h)
                    }
                    Loss::Logistic => {
                        let (u, w) = (&block.local_u, &block.local_w);
                        let (mut g, mut h) = (0.0, 0.0);
                        x.for_each_entry(jj, |i, v| {
                            g += v * u[i];
                            h += v * v * w[i];
                        });
                        let h = if spec.bound { 0.25 * norm } else { h.max(1e-12 * norm) };
                        let new = shrink(g + h * old, spec.alpha, spec.positive) / (h + spec.ridge);
                        if spec.bound {
                            (new, h)
                        } else {
                            // The trust region of the row-sharded Newton step: it lowers the objective.
                            let limit = 0.5 / block.col_max[jj];
                            (old + (new - old).clamp(-limit, limit), h)
                        }
                    }
                };
                let d = new - old;
                if d == 0.0 || !d.is_finite() {
                    continue;
                }
                b[k] = new;
                decrease += 0.5 * (curvature + spec.ridge) * d * d;
                match loss {
                    Loss::Squared => {
                        x.axpy(jj, -d, &mut block.local);
                        if centre {
                            offset -= d * col_sum[jj] / n;
                        }
                    }
                    Loss::Logistic => {
                        let (z, u, w) = (&mut block.local, &mut block.local_u, &mut block.local_w);
                        x.for_each_entry(jj, |i, v| {
                            z[i] += d * v;
                            (u[i], w[i]) = logistic_derivatives(y[i], z[i] + offset);
                        });
                    }
                }
            }
            if anderson > 0 {
                snapshots.push(b.clone());
                if snapshots.len() > anderson {
                    extrapolate(
                        x,
                        coords,
                        &mut b,
                        &mut block.local,
                        &mut scratch,
                        &snapshots,
                        (offset, scale),
                        spec.alpha,
                        spec.ridge,
                    );
                    snapshots.clear();
                    snapshots.push(b.clone());
                    if centre {
                        // The intercept that centres the extrapolated residual.
                        offset = scale_dot(&block.local, scale) / n;
                    }
                }
            }
            let stop = if decrease == 0.0 {
                true
            } else if gap_known {
                epoch % GAP_EPOCHS == 0 && {
                    let context = context_at(offset);
                    context.group_gap(loss, coords, &b, &block.local, &block.local_u) <= spec.target
                }
            } else {
                decrease <= DECREASE_FRACTION * spec.target
            };
            if stop {
                met = true;
                break;
            }
        }
        let deltas: Vec<(u32, f64)> = coords
            .iter()
            .zip(b.iter().zip(&start))
            .filter(|(_, (b, s))| b != s)
            .map(|(&j, (b, s))| (j, b - s))
            .collect();
        let (mut dr, mut slope, mut curvature) = (vec![], 0.0, vec![]);
        // One group on several workers: the new residual itself, so that the others copy it exactly.
        let moved = !deltas.is_empty() || intercept_shift != 0.0;
        let replace = task.dense && !task.split && moved;
        if replace {
            dr.clone_from(&block.local);
        } else if task.dense && !deltas.is_empty() {
            dr = block.local.iter().zip(&self.r).map(|(l, r)| l - r).collect();
            if task.split {
                slope = match loss {
                    Loss::Squared => self
                        .r
                        .iter()
                        .zip(&dr)
                        .enumerate()
                        .map(|(i, (r, d))| (r - self.offset * scale.map_or(1.0, |s| s[i])) * d)
                        .sum(),
                    Loss::Logistic => -self.u.iter().zip(&dr).map(|(u, d)| u * d).sum::<f64>(),
                };
            }
        }
        if task.split && loss == Loss::Logistic && block.index == 0 {
            curvature.clone_from(&self.w);
        }
        let penalty = |b: &[f64]| b.iter().map(|&v| penalty_term(spec.alpha, spec.ridge, v)).sum::<f64>();
        // The data term at the start (the worker's intercept) and at the end (the intercept the
        // passes moved to, when centring).
        let data_term = |r: &[f64], offset: f64| match loss {
            Loss::Squared => 0.5 * shifted_sq(r, offset, scale),
            Loss::Logistic => y.iter().zip(r).map(|(y, z)| crate::program::log1p_exp(-y * (z + offset))).sum(),
        };
        // What the aggregator weighs a split round by; one group's round needs no weighing.
        let gain = if deltas.is_empty() || !(task.dense && task.split) {
            0.0
        } else {
            data_term(&self.r, self.offset) + penalty(&start) - data_term(&block.local, offset) - penalty(&b)
        };
        let settled = met && epochs <= GAP_EPOCHS;
        Solved { deltas, dr, slope, curvature, updates, gain, epochs, settled, replace, intercept_shift }
    }

    /// Moves the residual by a block round's step (see [`crate::program::Commit::solve`]).
    /// `moved`: the intercept (already in `self.offset`) moved, so every row's logistic derivatives change.
    pub(crate) fn apply_step(&mut self, step: &SolveStep, moved: bool) {
        let Some(block) = self.block.as_mut() else { return };
        if step.dr.is_empty() {
            if block.local.len() == self.r.len() {
                std::mem::swap(&mut self.r, &mut block.local);
                if self.loss == Loss::Logistic {
                    std::mem::swap(&mut self.u, &mut block.local_u);
                    std::mem::swap(&mut self.w, &mut block.local_w);
                }
            }
            return;
        }
        if step.replace {
            for (i, (r, new)) in self.r.iter_mut().zip(&step.dr).enumerate() {
                let changed = *r != *new;
                *r = *new;
                if self.loss == Loss::Logistic && (changed || moved) {
                    (self.u[i], self.w[i]) = logistic_derivatives(self.y[i], *r + self.offset);
                }
            }
            return;
        }
        for (i, (r, d)) in self.r.iter_mut().zip(&step.dr).enumerate() {
            if *d != 0.0 {
                *r += step.step * d;
                if self.loss == Loss::Logistic {
                    (self.u[i], self.w[i]) = logistic_derivatives(self.y[i], *r + self.offset);
                }
            }
        }
    }
}

/// Passes between two checks of a group's gap.
pub(crate) const GAP_EPOCHS: u32 = 5;

/// Without a gap (logistic elastic net), a round stops once a pass lowers the objective by less
/// than this fraction of the target gap.
const DECREASE_FRACTION: f64 = 0.01;

/// What a group's gap needs besides the group itself.
#[derive(Clone, Copy)]
struct GapContext<'a> {
    x: &'a Columns,
    y: &'a [f64],
    col_sum: &'a [f64],
    /// The intercept's column (sample weights' square roots), ones when `None`.
    scale: Option<&'a [f64]>,
    offset: f64,
    alpha: f64,
    ridge: f64,
    /// `||beta||^2` over the coordinates outside the group (elastic net).
    outside_sq: f64,
    /// Every coefficient `>= 0`.
    positive: bool,
}

impl GapContext<'_> {
    /// The duality gap of the subproblem over `coords` (coefficients `b`), the other coordinates
    /// fixed: residual (or margins) `r`, logistic derivatives `u`; unscaled.
    ///
    /// Squared loss, as a Lasso on `X` stacked over `sqrt(ridge) I` (the elastic net): with the
    /// augmented residual's correlations `a_j = x_j . r - ridge b_j` and `||r_aug||^2 = ||r||^2 +
    /// ridge ||beta||^2`, the dual point `s r_aug`, `s = min(1, alpha / max |a_j|)`, gives the gap
    /// `(1 - s)^2 ||r_aug||^2 / 2 + alpha ||b||_1 - s sum b_j a_j`. Logistic loss (no ridge): the
    /// dual point `s p` gives `sum log(1 + e^(-y z)) + alpha ||b||_1 - sum H(s p) + s u . z - s sum b_j c_j`,
    /// `c_j = x_j . u`.
    fn group_gap(&self, loss: Loss, coords: &[u32], b: &[f64], r: &[f64], u: &[f64]) -> f64 {
        let l1: f64 = b.iter().map(|v| v.abs()).sum();
        match loss {
            Loss::Squared => {
                let a: Vec<f64> = coords
                    .iter()
                    .zip(b)
                    .map(|(&j, bj)| {
                        self.x.dot(j as usize, r) - self.offset * self.col_sum[j as usize] - self.ridge * bj
                    })
                    .collect();
                let max = a.iter().fold(0.0f64, |m, &v| m.max(reach(v, self.positive)));
                let s = if max > self.alpha { self.alpha / max } else { 1.0 };
                let inside: f64 = b.iter().map(|v| v * v).sum();
                let r_sq = shifted_sq(r, self.offset, self.scale) + self.ridge * (self.outside_sq + inside);
                let ba: f64 = b.iter().zip(&a).map(|(b, a)| b * a).sum();
                0.5 * (1.0 - s) * (1.0 - s) * r_sq + self.alpha * l1 - s * ba
            }
            Loss::Logistic => {
                let c: Vec<f64> = coords.iter().map(|&j| self.x.dot(j as usize, u)).collect();
                let max = c.iter().fold(0.0f64, |m, &v| m.max(reach(v, self.positive)));
                let s = if max > self.alpha { self.alpha / max } else { 1.0 };
                let mut value = self.alpha * l1 - s * b.iter().zip(&c).map(|(b, c)| b * c).sum::<f64>();
                for ((&y, &z), &u) in self.y.iter().zip(r).zip(u) {
                    let z = z + self.offset;
                    value += crate::program::log1p_exp(-y * z) - crate::program::binary_entropy(s * u * y) + s * u * z;
                }
                value
            }
        }
    }
}

/// One coefficient's elastic-net penalty, `alpha |b| + ridge b^2 / 2` (unscaled weights).
fn penalty_term(alpha: f64, ridge: f64, b: f64) -> f64 {
    alpha * b.abs() + 0.5 * ridge * b * b
}

/// Most halvings of a proximal Newton step before the group's solve gives up (the step is then
/// below `2^-20` of the model's).
const LINE_SEARCH_HALVINGS: u32 = 20;

/// Armijo's constant: a step is taken when it lowers the objective by at least this fraction of
/// what the quadratic model predicts for it (liblinear's newGLMNET uses the same).
const ARMIJO: f64 = 0.01;

/// The inner passes over a quadratic model stop once a pass lowers the model by less than this
/// fraction of what the first pass did.
const INNER_FRACTION: f64 = 0.05;

impl GapContext<'_> {
    /// The group's logistic subproblem by proximal Newton steps (GLMNET, as liblinear's newGLMNET
    /// and skglm's ProxNewton solve it): at the margins `z` (derivatives `u`, curvatures `w`), cyclic
    /// passes of coordinate descent minimize the quadratic model of the data term plus the exact
    /// penalty, keeping `v = u - W X d` so that a coordinate's gradient is one dot product and no
    /// exponential is evaluated inside a pass; then a backtracking line search on the true
    /// objective, over the rows the step moves, takes the step, and the derivatives are refreshed
    /// on those rows only. Stops at the group's gap target (the decrease of a step for the elastic
    /// net) or after `spec.max_epochs` passes in all. Returns the coordinate updates and passes
    /// made, and whether no step lowered the objective in rounding (the caller then falls back to
    /// single-coordinate steps).
    fn prox_newton(
        &self,
        coords: &[u32],
        b: &mut [f64],
        col_sq: &[f64],
        (z, u, w): (&mut [f64], &mut [f64], &mut [f64]),
        spec: SolveSpec,
    ) -> (u64, u32, bool, f64) {
        let (x, y, alpha, ridge) = (self.x, self.y, spec.alpha, spec.ridge);
        // With an intercept (`spec.centre`), each Newton model also moves it: every coordinate
        // steps along its column centred by the curvature-weighted mean `m_j = s_j / W` (`s_j =
        // x_j . w`, `W = sum w`), the model's intercept step `c` kept at its optimum (`sum v = c W`,
        // with `v` the sparse part), as scikit-learn centres its data. The intercept's total move
        // is `shift`, the margins' offset `self.offset + shift`.
        let mut shift = 0.0;
        let offset = |shift: f64| self.offset + shift;
        let n = z.len();
        let (mut v, mut q) = (vec![0.0; n], vec![0.0; n]);
        let mut h = vec![0.0; coords.len()];
        let mut s = vec![0.0; coords.len()];
        let mut full_q: Vec<f64> = vec![];
        let all_rows: Vec<usize> = if spec.centre { (0..n).collect() } else { vec![] };
        let mut d = vec![0.0; coords.len()];
        let mut touched: Vec<usize> = vec![];
        let mut snapshots: Vec<Vec<f64>> = vec![];
        let mut scratch = (vec![0.0; n], vec![0.0; n]);
        let (mut updates, mut passes) = (0u64, 0u32);
        let budget = spec.max_epochs.max(1);
        let gap_known = ridge == 0.0;
        while passes < budget {
            let total_w: f64 = if spec.centre { w.iter().sum() } else { 0.0 };
            let centre = total_w > 0.0;
            for (k, &j) in coords.iter().enumerate() {
                let (mut sum, mut weighted) = (0.0, 0.0);
                x.for_each_entry(j as usize, |i, xv| {
                    sum += xv * xv * w[i];
                    weighted += xv * w[i];
                });
                if centre {
                    sum -= weighted * weighted / total_w;
                    s[k] = weighted;
                }
                h[k] = sum.max(1e-12 * col_sq[j as usize]);
            }
            v.copy_from_slice(u);
            q.fill(0.0);
            d.fill(0.0);
            let c0 = if centre { u.iter().sum::<f64>() / total_w } else { 0.0 };
            let mut c = c0;
            let mut first = None;
            snapshots.clear();
            snapshots.push(d.clone());
            while passes < budget {
                passes += 1;
                let mut decrease = 0.0;
                for (k, &j) in coords.iter().enumerate() {
                    let jj = j as usize;
                    if col_sq[jj] <= 0.0 {
                        continue;
                    }
                    let old = b[k] + d[k];
                    let g = x.dot(jj, &v) - c * s[k];
                    let new = shrink(g + h[k] * old, alpha, self.positive) / (h[k] + ridge);
                    let delta = new - old;
                    if delta == 0.0 || !delta.is_finite() {
                        continue;
                    }
                    updates += 1;
                    d[k] += delta;
                    if centre {
                        c -= delta * s[k] / total_w;
                    }
                    decrease += 0.5 * (h[k] + ridge) * delta * delta;
                    x.for_each_entry(jj, |i, xv| {
                        q[i] += delta * xv;
                        v[i] -= delta * xv * w[i];
                    });
                }
                if spec.anderson > 0 {
                    snapshots.push(d.clone());
                    if snapshots.len() > usize::from(spec.anderson) {
                        let state = (&mut d[..], &mut q[..], &mut v[..]);
                        let intercept = centre.then_some((&s[..], total_w, c0));
                        if let Some(moved) =
                            self.extrapolate_model(coords, b, state, (u, w), &snapshots, &mut scratch, spec, intercept)
                        {
                            c = moved;
                        }
                        snapshots.clear();
                        snapshots.push(d.clone());
                    }
                }
                let first = *first.get_or_insert(decrease);
                if decrease <= INNER_FRACTION * first {
                    break;
                }
            }
            if d.iter().all(|&d| d == 0.0) && c == 0.0 {
                break;
            }
            let (step_q, rows) = if c != 0.0 {
                // The intercept's step moves every row.
                full_q.clear();
                full_q.extend(q.iter().map(|q| q + c));
                (&full_q[..], &all_rows[..])
            } else {
                touched.clear();
                touched.extend((0..n).filter(|&i| q[i] != 0.0));
                (&q[..], &touched[..])
            };
            let Some((t, change)) = armijo(y, u, step_q, rows, b, &d, alpha, ridge) else {
                return (updates, passes, true, shift);
            };
            for (bk, dk) in b.iter_mut().zip(&d) {
                *bk += t * dk;
            }
            if c != 0.0 {
                shift += t * c;
            }
            let margin = offset(shift);
            for &i in rows {
                z[i] += t * q[i];
                (u[i], w[i]) = logistic_derivatives(y[i], z[i] + margin);
            }
            let at = GapContext { offset: margin, ..*self };
            let done = if gap_known {
                at.group_gap(Loss::Logistic, coords, b, z, u) <= spec.target
            } else {
                -change <= DECREASE_FRACTION * spec.target
            };
            if done {
                break;
            }
        }
        (updates, passes, false, shift)
    }

    /// Anderson extrapolation of the inner passes of [`Self::prox_newton`]: the combination of the
    /// snapshots of the step `d` is taken when it lowers the quadratic model
    /// `-u . q + (1/2) sum w q^2 + penalty(b + d)`, `q = X d`, with `q` and `v = u - W q` moved along.
    /// With an intercept (`intercept = (s, W, c0)`), the model's intercept step is `c0 - s . d / W`;
    /// returns the kept candidate's.
    #[allow(clippy::too_many_arguments)]
    fn extrapolate_model(
        &self,
        coords: &[u32],
        b: &[f64],
        (d, q, v): (&mut [f64], &mut [f64], &mut [f64]),
        (u, w): (&[f64], &[f64]),
        snapshots: &[Vec<f64>],
        (q2, v2): &mut (Vec<f64>, Vec<f64>),
        spec: SolveSpec,
        intercept: Option<(&[f64], f64, f64)>,
    ) -> Option<f64> {
        let candidate = crate::anderson::extrapolated(snapshots)?;
        q2.copy_from_slice(q);
        v2.copy_from_slice(v);
        for (k, &j) in coords.iter().enumerate() {
            let delta = candidate[k] - d[k];
            if delta != 0.0 {
                self.x.for_each_entry(j as usize, |i, xv| {
                    q2[i] += delta * xv;
                    v2[i] -= delta * xv * w[i];
                });
            }
        }
        let step_of = |d: &[f64]| -> f64 {
            intercept.map_or(0.0, |(s, total, c0)| c0 - s.iter().zip(d).map(|(s, d)| s * d).sum::<f64>() / total)
        };
        let model = |q: &[f64], d: &[f64]| -> f64 {
            let c = step_of(d);
            let data: f64 = q.iter().zip(u).zip(w).map(|((q, u), w)| (q + c) * (0.5 * w * (q + c) - u)).sum();
            let penalty: f64 = b.iter().zip(d).map(|(b, d)| penalty_term(spec.alpha, spec.ridge, b + d)).sum();
            data + penalty
        };
        let new = model(q2, &candidate);
        if new.is_finite() && new < model(q, d) {
            q.copy_from_slice(q2);
            v.copy_from_slice(v2);
            d.copy_from_slice(&candidate);
            return Some(step_of(d));
        }
        None
    }
}

/// The backtracking (Armijo) line search of a proximal Newton step `d` (margin change `q`, nonzero
/// on the rows `touched`) from coefficients `b`: the first of `t = 1, 1/2, 1/4, ...` whose change of
/// the true objective is at most [`ARMIJO`] `t` times the first-order prediction, as `(t, change)`;
/// `None` when no step lowers the objective (in rounding, or after [`LINE_SEARCH_HALVINGS`]).
#[allow(clippy::too_many_arguments)]
fn armijo(
    y: &[f64],
    u: &[f64],
    q: &[f64],
    touched: &[usize],
    b: &[f64],
    d: &[f64],
    alpha: f64,
    ridge: f64,
) -> Option<(f64, f64)> {
    // The change of the penalty, in the difference form (no cancellation of two penalties).
    let penalty = |t: f64| -> f64 {
        b.iter()
            .zip(d)
            .map(|(&b, &d)| {
                let m = b + t * d;
                alpha * (m.abs() - b.abs()) + 0.5 * ridge * (m * m - b * b)
            })
            .sum()
    };
    let slope: f64 = -touched.iter().map(|&i| u[i] * q[i]).sum::<f64>();
    let predicted = slope + penalty(1.0);
    // Row by row, `log(1 + e^(a + s)) - log(1 + e^a) = ln_1p(sigma(a) expm1(s))` with
    // `sigma(-y z) = p = y u`: no cancellation, however short the step.
    let loss_change =
        |t: f64| -> f64 { touched.iter().map(|&i| (y[i] * u[i] * (-y[i] * t * q[i]).exp_m1()).ln_1p()).sum() };
    let mut t = 1.0;
    let mut change = loss_change(t) + penalty(t);
    let mut halvings = 0;
    // Armijo's test, false on NaN.
    let sufficient = |change: f64, t: f64| change <= ARMIJO * t * predicted;
    while !sufficient(change, t) && halvings < LINE_SEARCH_HALVINGS {
        t *= 0.5;
        halvings += 1;
        change = loss_change(t) + penalty(t);
    }
    (change < 0.0).then_some((t, change))
}

/// `sum_i (r_i - offset s_i)^2`, the squared residual at an intercept `offset` whose column is
/// `s` (ones when `None`).
pub(crate) fn shifted_sq(r: &[f64], offset: f64, scale: Option<&[f64]>) -> f64 {
    match scale {
        None => r.iter().map(|v| (v - offset) * (v - offset)).sum(),
        Some(s) => r.iter().zip(s).map(|(v, s)| (v - offset * s) * (v - offset * s)).sum(),
    }
}

/// `s . v` for the intercept's column `s` (the sum of `v` when `None`).
pub(crate) fn scale_dot(v: &[f64], scale: Option<&[f64]>) -> f64 {
    match scale {
        None => v.iter().sum(),
        Some(s) => v.iter().zip(s).map(|(v, s)| v * s).sum(),
    }
}

/// Anderson extrapolation of a group's passes (squared loss): the combination of the snapshots
/// `b` is moved to when it lowers `||r - offset s||^2 / 2 + alpha ||b||_1 + ridge ||b||^2 / 2`
/// (`(offset, s)`: the intercept and its column), with the residual `r` moved along.
#[allow(clippy::too_many_arguments)]
fn extrapolate(
    x: &Columns,
    coords: &[u32],
    b: &mut Vec<f64>,
    r: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
    snapshots: &[Vec<f64>],
    (offset, scale): (f64, Option<&[f64]>),
    alpha: f64,
    ridge: f64,
) {
    let Some(candidate) = crate::anderson::extrapolated(snapshots) else { return };
    scratch.clone_from(r);
    for (k, &j) in coords.iter().enumerate() {
        let d = candidate[k] - b[k];
        if d != 0.0 {
            x.axpy(j as usize, -d, scratch);
        }
    }
    let objective = |r: &[f64], b: &[f64]| {
        0.5 * shifted_sq(r, offset, scale) + b.iter().map(|&b| penalty_term(alpha, ridge, b)).sum::<f64>()
    };
    let new = objective(scratch, &candidate);
    if new.is_finite() && new < objective(r, b) {
        std::mem::swap(r, scratch);
        *b = candidate;
    }
}

/// A 64-bit mix (splitmix64's finalizer), for the sketch's signs.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The objective along the summed direction, `phi(t) = t lin + t^2 quad / 2 + penalty(t) - penalty(0)`:
/// `lin` and `quad` the data term's slope and curvature, the penalty
/// `alpha |beta_j + t d_j| + ridge (beta_j + t d_j)^2 / 2` over the moved coordinates `(beta_j, d_j)`.
pub struct Line<'a> {
    /// The data term's slope at `t = 0`.
    pub lin: f64,
    /// The data term's curvature (exact for the squared loss, at `t = 0` for the logistic loss).
    pub quad: f64,
    /// The L1 weight (unscaled).
    pub alpha: f64,
    /// The L2 weight (unscaled).
    pub ridge: f64,
    /// Each moved coordinate's coefficient and summed change.
    pub moves: &'a [(f64, f64)],
}

impl Line<'_> {
    /// `phi(t)`.
    pub fn at(&self, t: f64) -> f64 {
        let penalty: f64 = self
            .moves
            .iter()
            .map(|&(b, d)| {
                let n = b + t * d;
                self.alpha * (n.abs() - b.abs()) + 0.5 * self.ridge * (n * n - b * b)
            })
            .sum();
        t * self.lin + 0.5 * t * t * self.quad + penalty
    }
}

/// The step in `[0, 1]` that minimizes `line` (a convex function), by golden-section search, and
/// never worse than `floor` (a step known to lower the objective) or a full step.
pub fn line_search(line: &Line, floor: f64) -> f64 {
    let ratio = 0.5 * (5f64.sqrt() - 1.0);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut a, mut b) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut fa, mut fb) = (line.at(a), line.at(b));
    for _ in 0..48 {
        if fa <= fb {
            hi = b;
            (b, fb) = (a, fa);
            a = hi - ratio * (hi - lo);
            fa = line.at(a);
        } else {
            lo = a;
            (a, fa) = (b, fb);
            b = lo + ratio * (hi - lo);
            fb = line.at(b);
        }
    }
    let middle = 0.5 * (lo + hi);
    [(middle, line.at(middle)), (1.0, line.at(1.0)), (floor, line.at(floor))]
        .into_iter()
        .filter(|(_, f)| f.is_finite())
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .map_or(floor, |(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strads_data::DenseColumns;

    #[test]
    fn line_search_finds_the_minimum_of_a_piecewise_quadratic() {
        // phi(t) = -2 t + t^2 + |1 - 2t| - 1: slope -2 + 2t - 2 for t < 1/2, -2 + 2t + 2 above,
        // so the minimum is at t = 1/2.
        let moves = [(1.0, -2.0)];
        let line = Line { lin: -2.0, quad: 2.0, alpha: 1.0, ridge: 0.0, moves: &moves };
        let t = line_search(&line, 0.25);
        assert!((t - 0.5).abs() < 1e-6, "{t}");
        // A pure quadratic with its minimum past 1 takes the full step.
        let line = Line { lin: -4.0, quad: 2.0, alpha: 0.0, ridge: 0.0, moves: &[] };
        assert_eq!(line_search(&line, 0.5), 1.0);
    }

    #[test]
    fn correlated_columns_share_a_group_and_groups_balance() {
        // Ten blocks of four columns; within a block the columns are equal up to small noise.
        let (rows, blocks) = (2000usize, 10usize);
        let mut data = Vec::new();
        let mut state = 7u64;
        let mut noise = || {
            state = splitmix(state);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for _ in 0..blocks {
            let base: Vec<f64> = (0..rows).map(|_| noise()).collect();
            for _ in 0..4 {
                data.extend(base.iter().map(|b| b + 0.1 * noise()));
            }
        }
        let x = Arc::new(Columns::Dense(DenseColumns { rows, cols: 4 * blocks, data }));
        let mut grouper = Grouper::new(x.clone(), 3, Some(20 * rows as u64));
        let coords: Vec<u32> = (0..40).collect();
        let col_nnz = vec![rows as u64; 40];
        let groups = grouper.groups(&coords, &col_nnz, 2);
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 40);
        assert_eq!(groups[0].len(), 20, "{groups:?}");
        for g in &groups {
            for &j in g {
                assert!(g.contains(&(j / 4 * 4)), "column {j} is apart from its block: {groups:?}");
            }
        }
        // Too little work to split: everything on the first worker; so by default.
        let small = grouper.groups(&coords, &vec![rows as u64 / 4; 40], 2);
        assert_eq!((small[0].len(), small[1].len()), (40, 0));
        let never = Grouper::new(x, 3, None).groups(&coords, &col_nnz, 2);
        assert_eq!((never[0].len(), never[1].len()), (40, 0));
    }
}
