//! The MF worker (`push`, `sync`): its block of W rows, its block of H rows, and the ratings (with
//! residuals) of both, with the kernels of every update rule (CCD++, row CCD, ALS exact and by
//! conjugate gradient, explicit and implicit feedback).

use std::borrow::Cow;
use std::ops::Range;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode, expect_len};
use strads_core::{BoxError, Round, Worker};

use crate::params::{Algorithm, Bias, CheckedParams, Implicit};
use crate::program::*;

/// Ratings of some rows in compressed form, each with the other side's index and a residual.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entries {
    ptr: Vec<usize>,
    other: Vec<u32>,
    value: Vec<f64>,
    residual: Vec<f64>,
}

impl Entries {
    /// Replaces the residuals with saved ones of the same entries.
    fn restore_residuals(&mut self, what: &str, residual: Vec<f64>) -> Result<(), BoxError> {
        expect_len(what, residual.len(), self.residual.len())?;
        self.residual = residual;
        Ok(())
    }

    /// Entries of `rows` local rows from `(local row, other index, value)` triplets, sorted by row then
    /// other index (so sums run in the same order whatever the partition).
    pub fn new(rows: usize, mut triplets: Vec<(u32, u32, f64)>) -> Entries {
        triplets.sort_unstable_by_key(|&(r, o, _)| (r, o));
        let mut ptr = vec![0usize; rows + 1];
        for &(r, _, _) in &triplets {
            ptr[r as usize + 1] += 1;
        }
        for r in 0..rows {
            ptr[r + 1] += ptr[r];
        }
        let residual = vec![0.0; triplets.len()];
        let (other, value) = triplets.into_iter().map(|(_, o, v)| (o, v)).unzip();
        Entries { ptr, other, value, residual }
    }

    fn rows(&self) -> usize {
        self.ptr.len() - 1
    }

    fn len(&self) -> usize {
        self.other.len()
    }

    fn range(&self, row: usize) -> Range<usize> {
        self.ptr[row]..self.ptr[row + 1]
    }

    /// `residual = value - mu - own_r . other(j)` for every entry, `own` holding the local rows.
    fn recompute<'a>(&mut self, mu: f64, d: usize, own: &[f64], other: impl Fn(usize) -> Cow<'a, [f64]>) {
        for r in 0..self.rows() {
            let mine = &own[r * d..(r + 1) * d];
            for e in self.range(r) {
                let theirs = other(self.other[e] as usize);
                self.residual[e] = self.value[e] - mu - dot(mine, &theirs);
            }
        }
    }

    /// `residual += sign * a_r * b_j` for every entry (a rank-one change).
    fn rank_one(&mut self, sign: f64, a: impl Fn(usize) -> f64, b: &[f64]) {
        for r in 0..self.rows() {
            let ar = sign * a(r);
            if ar == 0.0 {
                continue;
            }
            for e in self.range(r) {
                self.residual[e] += ar * b[self.other[e] as usize];
            }
        }
    }
}

/// Held-out ratings of the owned users (test or validation), with residuals kept like the training
/// ones, and whether each pair is cold (its user or item has no training rating).
#[derive(Clone, Debug, Default, PartialEq)]
struct Heldout {
    entries: Entries,
    cold: Vec<bool>,
}

impl Heldout {
    fn new(users: &Range<usize>, mut list: Vec<(u32, u32, f64, bool)>) -> Heldout {
        list.sort_unstable_by_key(|&(u, i, _, _)| (u, i));
        let cold = list.iter().map(|t| t.3).collect();
        let local = |u: u32| (u as usize - users.start) as u32;
        Heldout {
            entries: Entries::new(users.len(), list.iter().map(|&(u, i, v, _)| (local(u), i, v)).collect()),
            cold,
        }
    }

    /// The sum of squared errors, `current` giving an entry's residual; a cold pair of a model without
    /// offsets is predicted by `fallback`.
    fn squared_error(&self, current: impl Fn(&Entries, usize, usize) -> f64, fallback: Option<f64>) -> f64 {
        let mut total = 0.0;
        for r in 0..self.entries.rows() {
            for e in self.entries.range(r) {
                let error = match fallback {
                    Some(f) if self.cold[e] => self.entries.value[e] - f,
                    _ => current(&self.entries, r, e),
                };
                total += error * error;
            }
        }
        total
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The entries of a side's row that are fixed at 1 (the other side's bias partner), if any.
fn fixed_slot(params: &CheckedParams, side: Side) -> Option<usize> {
    (params.bias == Bias::Full).then_some(match side {
        Side::W => params.rank + 1,
        Side::H => params.rank,
    })
}

/// The coordinates of a side's rows that are learned.
pub fn free_slots(params: &CheckedParams, side: Side) -> Vec<usize> {
    let fixed = fixed_slot(params, side);
    (0..params.stride()).filter(|&t| Some(t) != fixed).collect()
}

/// The initial row `row` of a side: factor entries uniform in `[0, init_scale)` from a generator
/// seeded by (seed, side, row), so any worker can produce any row; biases 0, fixed slots 1.
pub fn initial_row(params: &CheckedParams, side: Side, row: usize) -> Vec<f64> {
    let tag = match side {
        Side::W => 0x57u64,
        Side::H => 0x48u64,
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        params.seed ^ tag.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (row as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9),
    );
    let mut out: Vec<f64> = (0..params.rank).map(|_| rng.random::<f64>() * params.init_scale()).collect();
    if params.bias == Bias::Full {
        out.extend([0.0, 0.0]);
        out[fixed_slot(params, side).unwrap_or(0)] = 1.0;
    }
    out
}

/// `sum a_k b_k` with four running sums (so that the loop vectorizes and pipelines).
fn dot_unrolled(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0f64; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = a4.remainder().iter().zip(b4.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a4.zip(b4) {
        for l in 0..4 {
            sums[l] += x[l] * y[l];
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// Solves `a x = b` for a symmetric positive definite `a` (`n x n`, row-major, lower triangle read)
/// by Cholesky; `None` if `a` is not positive definite. Row by row (`L_ij` from rows `i` and `j` of
/// `L` left of column `j`), so every inner product runs over two contiguous rows.
pub fn cholesky_solve(a: &mut [f64], b: &mut [f64], n: usize) -> Option<()> {
    for i in 0..n {
        let (done, rest) = a.split_at_mut(i * n);
        let row = &mut rest[..n];
        for j in 0..i {
            let lj = &done[j * n..j * n + j];
            let s = row[j] - dot_unrolled(&row[..j], lj);
            row[j] = s / done[j * n + j];
        }
        let d = row[i] - dot_unrolled(&row[..i], &row[..i]);
        if d <= 0.0 || !d.is_finite() {
            return None;
        }
        row[i] = d.sqrt();
    }
    for i in 0..n {
        let s = b[i] - dot_unrolled(&a[i * n..i * n + i], &b[..i]);
        b[i] = s / a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[k * n + i] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    Some(())
}

/// The data a worker is built from: its index ranges and the ratings it needs (global indices).
#[derive(Clone, Debug, Default)]
pub struct ShardData {
    /// Owned users.
    pub users: Range<usize>,
    /// Owned items.
    pub items: Range<usize>,
    /// Ratings of the owned users: `(user, item, value)`.
    pub user_ratings: Vec<(u32, u32, f64)>,
    /// Ratings of the owned items.
    pub item_ratings: Vec<(u32, u32, f64)>,
    /// Test ratings of the owned users, and whether each is cold (user or item without training ratings).
    pub test: Vec<(u32, u32, f64, bool)>,
    /// Validation ratings of the owned users (held out of training for early stopping), the same way.
    pub validation: Vec<(u32, u32, f64, bool)>,
    /// Training ratings of every owned user, then of every owned item.
    pub user_counts: Vec<u32>,
    /// Training ratings of every owned item.
    pub item_counts: Vec<u32>,
    /// Users in total.
    pub all_users: usize,
    /// Items in total.
    pub all_items: usize,
}

/// A worker: its rows of `W` and `H`, and the ratings of its users and of its items.
pub struct Shard {
    params: CheckedParams,
    d: usize,
    mu: f64,
    fallback: f64,
    users: Range<usize>,
    items: Range<usize>,
    w: Vec<f64>,
    h: Vec<f64>,
    reg_w: Vec<f64>,
    reg_h: Vec<f64>,
    cold_w: Vec<bool>,
    cold_h: Vec<bool>,
    by_user: Entries,
    by_item: Entries,
    test: Heldout,
    validation: Heldout,
    /// The rows of the best model so far (early stopping), `(w, h)`.
    kept: Option<(Vec<f64>, Vec<f64>)>,
    /// CCD and ALS: the whole other factor, as last committed.
    full_w: Vec<f64>,
    full_h: Vec<f64>,
    /// Whether `by_user` residuals match `w` and `full_h` (CCD).
    by_user_fresh: bool,
    /// CCD++: the current factor's `u` and `v` over all rows, and the factor open (residuals hold `R + u v^T`).
    u: Vec<f64>,
    v: Vec<f64>,
    open: Option<usize>,
}

impl Shard {
    /// Builds a worker; `mu` is the prediction's offset and `fallback` the prediction for a cold test pair
    /// when the model has no offset.
    pub fn new(params: &CheckedParams, data: ShardData, mu: f64, fallback: f64) -> Shard {
        let d = params.stride();
        let users = data.users.clone();
        let items = data.items.clone();
        let local = |range: &Range<usize>, r: u32| (r as usize - range.start) as u32;
        let by_user =
            Entries::new(users.len(), data.user_ratings.iter().map(|&(u, i, v)| (local(&users, u), i, v)).collect());
        let by_item =
            Entries::new(items.len(), data.item_ratings.iter().map(|&(u, i, v)| (local(&items, i), u, v)).collect());
        let test = Heldout::new(&users, data.test);
        let validation = Heldout::new(&users, data.validation);
        let w: Vec<f64> = users.clone().flat_map(|u| initial_row(params, Side::W, u)).collect();
        let h: Vec<f64> = items.clone().flat_map(|i| initial_row(params, Side::H, i)).collect();
        let (full_w, full_h) = match params.algorithm {
            Algorithm::Ccdpp => (Vec::new(), Vec::new()),
            Algorithm::Ccd | Algorithm::Als => (
                (0..data.all_users).flat_map(|u| initial_row(params, Side::W, u)).collect(),
                (0..data.all_items).flat_map(|i| initial_row(params, Side::H, i)).collect(),
            ),
        };
        let mut shard = Shard {
            params: params.clone(),
            d,
            mu,
            fallback,
            w,
            h,
            reg_w: data.user_counts.iter().map(|&n| params.row_reg(n)).collect(),
            reg_h: data.item_counts.iter().map(|&n| params.row_reg(n)).collect(),
            cold_w: data.user_counts.iter().map(|&n| n == 0).collect(),
            cold_h: data.item_counts.iter().map(|&n| n == 0).collect(),
            by_user,
            by_item,
            test,
            validation,
            kept: None,
            full_w,
            full_h,
            by_user_fresh: false,
            u: Vec::new(),
            v: Vec::new(),
            open: None,
            users,
            items,
        };
        if params.algorithm == Algorithm::Ccdpp {
            shard.u = vec![0.0; data.all_users];
            shard.v = vec![0.0; data.all_items];
            let p = shard.params.clone();
            let generated_h = |i| Cow::Owned(initial_row(&p, Side::H, i));
            shard.by_user.recompute(mu, d, &shard.w, generated_h);
            shard.by_item.recompute(mu, d, &shard.h, |u| Cow::Owned(initial_row(&p, Side::W, u)));
            shard.test.entries.recompute(mu, d, &shard.w, generated_h);
            shard.validation.entries.recompute(mu, d, &shard.w, generated_h);
        }
        shard
    }

    /// CCD and ALS: makes the residuals of the owned users' ratings match `w` and the whole `H`.
    fn refresh_by_user(&mut self) {
        if self.by_user_fresh {
            return;
        }
        let (d, full_h) = (self.d, &self.full_h);
        self.by_user.recompute(self.mu, d, &self.w, |i| Cow::Borrowed(&full_h[i * d..(i + 1) * d]));
        self.by_user_fresh = true;
    }

    /// CCD or ALS half-step over the owned rows of `side`.
    fn update_rows(&mut self, side: Side) -> Vec<f64> {
        let d = self.d;
        let free = free_slots(&self.params, side);
        let fixed = fixed_slot(&self.params, side);
        let als = self.params.algorithm == Algorithm::Als;
        if !als {
            match side {
                Side::W => self.refresh_by_user(),
                Side::H => {
                    let full_w = &self.full_w;
                    self.by_item.recompute(self.mu, d, &self.h, |u| Cow::Borrowed(&full_w[u * d..(u + 1) * d]));
                }
            }
        }
        let (rows, entries, other, reg, cold) = match side {
            Side::W => (&mut self.w, &mut self.by_user, &self.full_h, &self.reg_w, &self.cold_w),
            Side::H => (&mut self.h, &mut self.by_item, &self.full_w, &self.reg_h, &self.cold_h),
        };
        let mut scratch = AlsScratch::default();
        // Implicit feedback: every unobserved pair enters through the Gram matrix of the other factor.
        let g = self.params.implicit.map(|_| gram(other, d));
        for r in 0..entries.rows() {
            let row = &mut rows[r * d..(r + 1) * d];
            if cold[r] {
                for &t in &free {
                    row[t] = 0.0;
                }
                continue;
            }
            let range = entries.range(r);
            if let (Some(implicit), Some(g)) = (self.params.implicit, &g) {
                if als {
                    let rated = Rated { entries: &*entries, range, other, d, implicit };
                    match self.params.cg_steps() {
                        0 => implicit_exact_row(row, &rated, g, reg[r], &mut scratch),
                        steps => implicit_cg_row(row, &rated, g, reg[r], steps, &mut scratch),
                    }
                } else {
                    let inner = self.params.inner_iterations;
                    implicit_ccd_row(row, entries, range, other, d, implicit, g, reg[r], inner, &mut scratch.product);
                }
            } else if als {
                match self.params.cg_steps() {
                    0 => solve_row(row, entries, range, other, d, &free, fixed, reg[r], self.mu, &mut scratch),
                    steps => {
                        let rated = Rows { entries: &*entries, range, other, d, fixed, mu: self.mu };
                        explicit_cg_row(row, &rated, reg[r], steps, &mut scratch);
                    }
                }
            } else {
                for _ in 0..self.params.inner_iterations {
                    for &t in &free {
                        ccd_coordinate(row, t, entries, range.clone(), other, d, reg[r]);
                    }
                }
            }
        }
        if side == Side::W {
            self.by_user_fresh = !als;
        }
        rows.clone()
    }

    /// CCD++: solves the owned entries of `u` (side W) or `v` (side H) of the open factor.
    fn solve_vector(&mut self, side: Side) -> Vec<f64> {
        let (entries, other, reg, cold) = match side {
            Side::W => (&self.by_user, &self.v, &self.reg_w, &self.cold_w),
            Side::H => (&self.by_item, &self.u, &self.reg_h, &self.cold_h),
        };
        (0..entries.rows())
            .map(|r| {
                if cold[r] {
                    return 0.0;
                }
                let (mut num, mut den) = (0.0, reg[r]);
                for e in entries.range(r) {
                    let o = other[entries.other[e] as usize];
                    num += entries.residual[e] * o;
                    den += o * o;
                }
                if den > 0.0 { num / den } else { 0.0 }
            })
            .collect()
    }

    fn evaluate(&mut self) -> Evaluation {
        let d = self.d;
        if self.params.algorithm != Algorithm::Ccdpp {
            self.refresh_by_user();
            let full_h = &self.full_h;
            for heldout in [&mut self.test, &mut self.validation] {
                heldout.entries.recompute(self.mu, d, &self.w, |i| Cow::Borrowed(&full_h[i * d..(i + 1) * d]));
            }
        }
        // With a CCD++ factor open the residuals hold R + u v^T and column t is u, v.
        let open = self.open;
        let (u, v) = (&self.u, &self.v);
        let (users, items) = (self.users.start, self.items.start);
        let current = |entries: &Entries, r: usize, e: usize| match open {
            Some(_) => entries.residual[e] - u[users + r] * v[entries.other[e] as usize],
            None => entries.residual[e],
        };
        let mut squared_error = 0.0;
        let mut loss = 0.0;
        if let Some(implicit) = self.params.implicit {
            // sum over all pairs c (p - s)^2 = sum_u w_u^T G_H w_u + sum over observed pairs
            // [c (1 - s)^2 - s^2]: every pair at confidence 1 and preference 0, corrected where observed.
            let g = gram(&self.full_h, d);
            for row in self.w.chunks_exact(d) {
                loss += (0..d).map(|a| row[a] * dot(&g[a * d..(a + 1) * d], row)).sum::<f64>();
            }
            let entries = &self.by_user;
            for e in 0..entries.len() {
                let value = entries.value[e];
                if value > 0.0 {
                    let s = value - entries.residual[e];
                    loss += implicit.confidence(value) * (1.0 - s).powi(2) - s * s;
                    squared_error += (1.0 - s).powi(2);
                }
            }
        } else {
            for r in 0..self.by_user.rows() {
                for e in self.by_user.range(r) {
                    squared_error += current(&self.by_user, r, e).powi(2);
                }
            }
            loss = squared_error;
        }
        let fallback = (self.params.bias == Bias::None).then_some(self.fallback);
        let test_squared_error = self.test.squared_error(current, fallback);
        let validation_squared_error = self.validation.squared_error(current, fallback);
        let mut regularization = 0.0;
        for (side, rows, reg, start, vector) in
            [(Side::W, &self.w, &self.reg_w, users, u), (Side::H, &self.h, &self.reg_h, items, v)]
        {
            let free = free_slots(&self.params, side);
            for (r, &lambda) in reg.iter().enumerate() {
                let row = &rows[r * d..(r + 1) * d];
                let norm: f64 = free
                    .iter()
                    .map(|&t| if Some(t) == open { vector[start + r].powi(2) } else { row[t] * row[t] })
                    .sum();
                regularization += lambda * norm;
            }
        }
        Evaluation {
            loss,
            squared_error,
            regularization,
            ratings: self.by_user.len() as u64,
            test_squared_error,
            test_ratings: self.test.entries.len() as u64,
            validation_squared_error,
            validation_ratings: self.validation.entries.len() as u64,
        }
    }
}

/// One CCD coordinate update of `row[t]`, keeping the residuals of the row's entries current.
fn ccd_coordinate(
    row: &mut [f64],
    t: usize,
    entries: &mut Entries,
    range: Range<usize>,
    other: &[f64],
    d: usize,
    reg: f64,
) {
    let old = row[t];
    let (mut num, mut den) = (0.0, reg);
    for e in range.clone() {
        let o = other[entries.other[e] as usize * d + t];
        num += (entries.residual[e] + old * o) * o;
        den += o * o;
    }
    let new = if den > 0.0 { num / den } else { 0.0 };
    let delta = new - old;
    if delta != 0.0 {
        for e in range {
            entries.residual[e] -= delta * other[entries.other[e] as usize * d + t];
        }
    }
    row[t] = new;
}

/// Ratings an ALS row adds to its normal equations at once (the `k` of the rank-k update).
const SYRK_BLOCK: usize = 8;

/// Reusable buffers of ALS rows: the normal equations, and a block of gathered rows of the other
/// factor with their targets.
#[derive(Default)]
struct AlsScratch {
    system: Vec<f64>,
    rhs: Vec<f64>,
    block: Vec<f64>,
    targets: [f64; SYRK_BLOCK],
    /// Implicit feedback: conjugate-gradient vectors (or the row CCD's `G w`).
    residual: Vec<f64>,
    direction: Vec<f64>,
    product: Vec<f64>,
}

/// `lower(system) += sum_j x_j x_j^T` and `rhs += sum_j t_j x_j` over the `SYRK_BLOCK` rows `x_j`
/// of `block` (`f` entries each): a symmetric rank-8 update of the lower triangle, whose inner loop
/// runs along a row of `system` with eight products per load and store of it.
fn syrk_block(system: &mut [f64], rhs: &mut [f64], block: &[f64], targets: &[f64; SYRK_BLOCK], f: usize) {
    let x: [&[f64]; SYRK_BLOCK] = std::array::from_fn(|j| &block[j * f..(j + 1) * f]);
    for a in 0..f {
        let xa: [f64; SYRK_BLOCK] = std::array::from_fn(|j| x[j][a]);
        rhs[a] += (0..SYRK_BLOCK).map(|j| xa[j] * targets[j]).sum::<f64>();
        let n = a + 1;
        let row = &mut system[a * f..a * f + n];
        let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
        let (x4, x5, x6, x7) = (&x[4][..n], &x[5][..n], &x[6][..n], &x[7][..n]);
        for c in 0..n {
            row[c] += (xa[0] * x0[c] + xa[1] * x1[c] + xa[2] * x2[c] + xa[3] * x3[c])
                + (xa[4] * x4[c] + xa[5] * x5[c] + xa[6] * x6[c] + xa[7] * x7[c]);
        }
    }
}

/// Adds one row per item to the normal equations, `SYRK_BLOCK` rows at a time: `fill(item, x)` writes
/// the item's row `x` (`f` numbers) into `block` and returns its target. Returns how many rows are
/// left in `block` for the rank-1 tail of [`solve_normal_equations`].
fn add_blocked<T>(
    system: &mut [f64],
    rhs: &mut [f64],
    block: &mut Vec<f64>,
    targets: &mut [f64; SYRK_BLOCK],
    f: usize,
    items: impl IntoIterator<Item = T>,
    mut fill: impl FnMut(T, &mut [f64]) -> f64,
) -> usize {
    block.resize(SYRK_BLOCK * f, 0.0);
    let mut filled = 0;
    for item in items {
        targets[filled] = fill(item, &mut block[filled * f..(filled + 1) * f]);
        filled += 1;
        if filled == SYRK_BLOCK {
            syrk_block(system, rhs, block, targets, f);
            filled = 0;
        }
    }
    filled
}

/// One ALS row: the free coordinates solved exactly with the other factor (and the fixed slot) given:
/// the normal equations built by blocked rank-8 updates (a rank-1 update for the last few ratings),
/// then a Cholesky solve; no allocation once `scratch` has grown to the rank.
#[allow(clippy::too_many_arguments)]
fn solve_row(
    row: &mut [f64],
    entries: &Entries,
    range: Range<usize>,
    other: &[f64],
    d: usize,
    free: &[usize],
    fixed: Option<usize>,
    reg: f64,
    mu: f64,
    scratch: &mut AlsScratch,
) {
    let f = free.len();
    let AlsScratch { system, rhs, block, targets, .. } = scratch;
    system.clear();
    system.resize(f * f, 0.0);
    rhs.clear();
    rhs.resize(f, 0.0);
    let filled = add_blocked(system, rhs, block, targets, f, range, |e, x| {
        let o = &other[entries.other[e] as usize * d..(entries.other[e] as usize + 1) * d];
        for (x, &t) in x.iter_mut().zip(free) {
            *x = o[t];
        }
        entries.value[e] - mu - fixed.map_or(0.0, |s| row[s] * o[s])
    });
    if solve_normal_equations(system, rhs, &block[..filled * f], &targets[..filled], f, reg).is_some() {
        for (a, &t) in free.iter().enumerate() {
            row[t] = rhs[a];
        }
    }
}

/// Adds the last rows of a block (fewer than `SYRK_BLOCK`, with their targets) to the lower triangle
/// of `system` and to `rhs` one by one, `reg` to the diagonal, and solves by Cholesky (`rhs` then
/// holds the solution).
fn solve_normal_equations(
    system: &mut [f64],
    rhs: &mut [f64],
    rows: &[f64],
    targets: &[f64],
    f: usize,
    reg: f64,
) -> Option<()> {
    add_rows(system, rhs, rows, targets, f);
    for a in 0..f {
        system[a * f + a] += reg;
    }
    cholesky_solve(system, rhs, f)
}

/// `lower(system) += sum_j x_j x_j^T` and `rhs += sum_j t_j x_j` over the rows `x_j` of `rows`
/// (`f` entries each), one rank-1 update at a time.
fn add_rows(system: &mut [f64], rhs: &mut [f64], rows: &[f64], targets: &[f64], f: usize) {
    for (x, &target) in rows.chunks_exact(f).zip(targets) {
        for a in 0..f {
            rhs[a] += target * x[a];
            for (s, &xc) in system[a * f..a * f + a + 1].iter_mut().zip(x) {
                *s += x[a] * xc;
            }
        }
    }
}

/// The Gram matrix `sum_j x_j x_j^T` of the rows of `factor` (`d` entries each), `d x d`, both triangles.
fn gram(factor: &[f64], d: usize) -> Vec<f64> {
    let mut g = vec![0.0; d * d];
    let mut rhs = vec![0.0; d];
    let zeros = [0.0; SYRK_BLOCK];
    let blocks = factor.chunks_exact(SYRK_BLOCK * d);
    let tail = blocks.remainder();
    for block in blocks {
        syrk_block(&mut g, &mut rhs, block, &zeros, d);
    }
    add_rows(&mut g, &mut rhs, tail, &zeros[..tail.len() / d], d);
    for a in 0..d {
        for c in a + 1..d {
            g[a * d + c] = g[c * d + a];
        }
    }
    g
}

/// The observed pairs of one row under implicit feedback: its entries and the other factor.
struct Rated<'a> {
    entries: &'a Entries,
    range: Range<usize>,
    other: &'a [f64],
    d: usize,
    implicit: Implicit,
}

impl Rated<'_> {
    /// `(confidence, other row)` of every pair with a positive value (the others are unobserved pairs).
    fn pairs(&self) -> impl Iterator<Item = (f64, &[f64])> + '_ {
        self.range.clone().filter(|&e| self.entries.value[e] > 0.0).map(|e| {
            let j = self.entries.other[e] as usize;
            (self.implicit.confidence(self.entries.value[e]), &self.other[j * self.d..(j + 1) * self.d])
        })
    }

    /// `out = (G + reg I + sum (c - 1) o o^T) x`, the row's normal matrix times `x`.
    fn apply(&self, g: &[f64], reg: f64, x: &[f64], out: &mut [f64]) {
        for (a, slot) in out.iter_mut().enumerate() {
            *slot = dot_unrolled(&g[a * self.d..(a + 1) * self.d], x) + reg * x[a];
        }
        for (c, o) in self.pairs() {
            let coef = (c - 1.0) * dot_unrolled(o, x);
            for (slot, &oa) in out.iter_mut().zip(o) {
                *slot += coef * oa;
            }
        }
    }
}

/// An implicit-feedback ALS row solved exactly: `(G + sum (c - 1) o o^T + reg I) w = sum c o`, the
/// observed pairs added by the blocked rank-8 update (as `sqrt(c - 1) o` with target
/// `c / sqrt(c - 1)`), then a Cholesky solve.
fn implicit_exact_row(row: &mut [f64], rated: &Rated, g: &[f64], reg: f64, scratch: &mut AlsScratch) {
    let f = rated.d;
    let AlsScratch { system, rhs, block, targets, .. } = scratch;
    system.clear();
    system.extend_from_slice(g);
    rhs.clear();
    rhs.resize(f, 0.0);
    let filled = add_blocked(system, rhs, block, targets, f, rated.pairs(), |(c, o), x| {
        let root = (c - 1.0).sqrt();
        for (x, &oa) in x.iter_mut().zip(o) {
            *x = root * oa;
        }
        c / root
    });
    if solve_normal_equations(system, rhs, &block[..filled * f], &targets[..filled], f, reg).is_some() {
        row.copy_from_slice(rhs);
    }
}

/// `steps` conjugate-gradient steps on `A x = b` from `x`, `residual` holding `b` on entry and
/// `apply(v, out)` setting `out = A v`; stops early once the residual vanishes. The vectors live in
/// `scratch`, so a row allocates nothing.
fn conjugate_gradient(
    x: &mut [f64],
    steps: usize,
    mut apply: impl FnMut(&[f64], &mut [f64]),
    scratch: &mut AlsScratch,
) {
    let f = x.len();
    let AlsScratch { residual, direction, product, .. } = scratch;
    product.resize(f, 0.0);
    apply(x, product);
    for (r, &ax) in residual.iter_mut().zip(product.iter()) {
        *r -= ax;
    }
    direction.clear();
    direction.extend_from_slice(residual);
    let mut old = dot_unrolled(residual, residual);
    for _ in 0..steps {
        if old < 1e-20 {
            break;
        }
        apply(direction, product);
        let curvature = dot_unrolled(direction, product);
        if curvature <= 0.0 || !curvature.is_finite() {
            break;
        }
        let step = old / curvature;
        for a in 0..f {
            x[a] += step * direction[a];
            residual[a] -= step * product[a];
        }
        let new = dot_unrolled(residual, residual);
        for a in 0..f {
            direction[a] = residual[a] + (new / old) * direction[a];
        }
        old = new;
    }
}

/// An implicit-feedback ALS row by `steps` conjugate-gradient steps on the same system, from the
/// row's current value; each step costs `K^2` plus two passes over the row's observed pairs.
fn implicit_cg_row(row: &mut [f64], rated: &Rated, g: &[f64], reg: f64, steps: usize, scratch: &mut AlsScratch) {
    let residual = &mut scratch.residual;
    residual.clear();
    residual.resize(rated.d, 0.0);
    for (c, o) in rated.pairs() {
        for (slot, &oa) in residual.iter_mut().zip(o) {
            *slot += c * oa;
        }
    }
    conjugate_gradient(row, steps, |v, out| rated.apply(g, reg, v, out), scratch);
}

/// The ratings of one row for an explicit ALS solve: the row's entries, the other factor, the
/// prediction's offset and the slot fixed at 1 (whose product with the other row is a known offset).
struct Rows<'a> {
    entries: &'a Entries,
    range: Range<usize>,
    other: &'a [f64],
    d: usize,
    fixed: Option<usize>,
    mu: f64,
}

/// An explicit ALS row by `steps` conjugate-gradient steps on its normal equations `(sum o o^T +
/// reg I) x = sum t o` over the free slots, `t = value - mu - row[fixed] o[fixed]`, from the row's
/// current value: each step two passes over the row's ratings (`o . v`, then `out += (o . v) o`),
/// never the `K x K` matrix. The vectors keep the fixed slot at 0, so it drops out of every product.
fn explicit_cg_row(row: &mut [f64], rated: &Rows, reg: f64, steps: usize, scratch: &mut AlsScratch) {
    let (d, fixed) = (rated.d, rated.fixed);
    let kept = fixed.map(|s| row[s]);
    // The row's other rows, gathered once into one contiguous block (with the fixed slot zeroed, so
    // it drops out of every product) that the CG's passes then stream through.
    let mut block = std::mem::take(&mut scratch.block);
    block.clear();
    let residual = &mut scratch.residual;
    residual.clear();
    residual.resize(d, 0.0);
    for e in rated.range.clone() {
        let j = rated.entries.other[e] as usize;
        let o = &rated.other[j * d..(j + 1) * d];
        let target = rated.entries.value[e] - rated.mu - fixed.map_or(0.0, |s| row[s] * o[s]);
        for (slot, &oa) in residual.iter_mut().zip(o) {
            *slot += target * oa;
        }
        block.extend_from_slice(o);
        if let Some(s) = fixed {
            let at = block.len() - d + s;
            block[at] = 0.0;
        }
    }
    if let Some(s) = fixed {
        residual[s] = 0.0;
        row[s] = 0.0;
    }
    let apply = |v: &[f64], out: &mut [f64]| {
        for (slot, &x) in out.iter_mut().zip(v) {
            *slot = reg * x;
        }
        for o in block.chunks_exact(d) {
            let coef = dot_unrolled(o, v);
            for (slot, &oa) in out.iter_mut().zip(o) {
                *slot += coef * oa;
            }
        }
        if let Some(s) = fixed {
            out[s] = 0.0;
        }
    };
    conjugate_gradient(row, steps, apply, scratch);
    scratch.block = block;
    if let (Some(s), Some(value)) = (fixed, kept) {
        row[s] = value;
    }
}

/// An implicit-feedback row by coordinate descent (iCD: Bayer et al., 2017): each coordinate takes
/// the exact minimizer of the row's objective along it, `G w` kept current in `K` per update and the
/// row's residuals (`value - w . o`) in one pass over its pairs.
#[allow(clippy::too_many_arguments)]
fn implicit_ccd_row(
    row: &mut [f64],
    entries: &mut Entries,
    range: Range<usize>,
    other: &[f64],
    d: usize,
    implicit: Implicit,
    g: &[f64],
    reg: f64,
    inner: usize,
    gw: &mut Vec<f64>,
) {
    gw.resize(d, 0.0);
    for (a, slot) in gw.iter_mut().enumerate() {
        *slot = dot_unrolled(&g[a * d..(a + 1) * d], row);
    }
    for _ in 0..inner {
        for t in 0..d {
            let (mut grad, mut curvature) = (gw[t] + reg * row[t], g[t * d + t] + reg);
            for e in range.clone() {
                let value = entries.value[e];
                if value > 0.0 {
                    let c = implicit.confidence(value);
                    let o = other[entries.other[e] as usize * d + t];
                    let s = value - entries.residual[e];
                    grad += ((c - 1.0) * s - c) * o;
                    curvature += (c - 1.0) * o * o;
                }
            }
            if curvature <= 0.0 {
                continue;
            }
            let delta = -grad / curvature;
            if delta == 0.0 {
                continue;
            }
            row[t] += delta;
            for e in range.clone() {
                entries.residual[e] -= delta * other[entries.other[e] as usize * d + t];
            }
            for (a, slot) in gw.iter_mut().enumerate() {
                *slot += delta * g[a * d + t];
            }
        }
    }
}

impl Worker<Mf> for Shard {
    fn push(&mut self, _round: Round, task: &Task) -> Partial {
        match *task {
            Task::Rows(side) => Partial::Values(self.update_rows(side)),
            Task::Begin(t) => {
                let d = self.d;
                let column = |rows: &[f64]| rows.chunks_exact(d).map(|row| row[t]).collect::<Vec<f64>>();
                Partial::Pair(column(&self.w), column(&self.h))
            }
            Task::Solve { side, .. } => Partial::Values(self.solve_vector(side)),
            Task::Evaluate => Partial::Evaluation(self.evaluate()),
            Task::Keep => {
                self.kept = Some((self.w.clone(), self.h.clone()));
                Partial::Values(Vec::new())
            }
            Task::Gather => match &self.kept {
                Some((w, h)) => Partial::Rows(w.clone(), h.clone()),
                None => Partial::Rows(self.w.clone(), self.h.clone()),
            },
        }
    }

    fn sync(&mut self, _round: Round, commit: &Commit) {
        match commit {
            Commit::Factor(side, values) => match side {
                Side::W => {
                    self.full_w.clone_from(values);
                }
                Side::H => {
                    self.full_h.clone_from(values);
                    self.by_user_fresh = false;
                }
            },
            Commit::Begin { t, u, v } => {
                self.u.clone_from(u);
                self.v.clone_from(v);
                self.open = Some(*t);
                self.rank_one(1.0);
            }
            Commit::Vector { side, values, finish } => {
                match side {
                    Side::W => self.u.clone_from(values),
                    Side::H => self.v.clone_from(values),
                }
                if *finish {
                    self.rank_one(-1.0);
                    if let Some(t) = self.open.take() {
                        let d = self.d;
                        for (r, row) in self.w.chunks_exact_mut(d).enumerate() {
                            row[t] = self.u[self.users.start + r];
                        }
                        for (r, row) in self.h.chunks_exact_mut(d).enumerate() {
                            row[t] = self.v[self.items.start + r];
                        }
                    }
                }
            }
        }
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        encode(&ShardState {
            w: Cow::Borrowed(&self.w),
            h: Cow::Borrowed(&self.h),
            by_user: Cow::Borrowed(&self.by_user.residual),
            by_item: Cow::Borrowed(&self.by_item.residual),
            test: Cow::Borrowed(&self.test.entries.residual),
            validation: Cow::Borrowed(&self.validation.entries.residual),
            kept: self.kept.as_ref().map(|(w, h)| (Cow::Borrowed(&w[..]), Cow::Borrowed(&h[..]))),
            full_w: Cow::Borrowed(&self.full_w),
            full_h: Cow::Borrowed(&self.full_h),
            by_user_fresh: self.by_user_fresh,
            u: Cow::Borrowed(&self.u),
            v: Cow::Borrowed(&self.v),
            open: self.open,
        })
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let state: ShardState = decode(state)?;
        expect_len("user factors", state.w.len(), self.w.len())?;
        expect_len("item factors", state.h.len(), self.h.len())?;
        self.by_user.restore_residuals("user residuals", state.by_user.into_owned())?;
        self.by_item.restore_residuals("item residuals", state.by_item.into_owned())?;
        self.test.entries.restore_residuals("test residuals", state.test.into_owned())?;
        self.validation.entries.restore_residuals("validation residuals", state.validation.into_owned())?;
        if let Some((w, h)) = &state.kept {
            expect_len("kept user factors", w.len(), self.w.len())?;
            expect_len("kept item factors", h.len(), self.h.len())?;
        }
        self.kept = state.kept.map(|(w, h)| (w.into_owned(), h.into_owned()));
        self.w = state.w.into_owned();
        self.h = state.h.into_owned();
        self.full_w = state.full_w.into_owned();
        self.full_h = state.full_h.into_owned();
        self.by_user_fresh = state.by_user_fresh;
        self.u = state.u.into_owned();
        self.v = state.v.into_owned();
        self.open = state.open;
        Ok(())
    }
}

/// The rows of `W` and `H` a worker kept for early stopping, as saved.
type KeptRows<'a> = (Cow<'a, [f64]>, Cow<'a, [f64]>);

/// What a worker saves in a checkpoint: its rows, every residual, and the replicated vectors.
#[derive(Serialize, Deserialize)]
struct ShardState<'a> {
    w: Cow<'a, [f64]>,
    h: Cow<'a, [f64]>,
    by_user: Cow<'a, [f64]>,
    by_item: Cow<'a, [f64]>,
    test: Cow<'a, [f64]>,
    validation: Cow<'a, [f64]>,
    kept: Option<KeptRows<'a>>,
    full_w: Cow<'a, [f64]>,
    full_h: Cow<'a, [f64]>,
    by_user_fresh: bool,
    u: Cow<'a, [f64]>,
    v: Cow<'a, [f64]>,
    open: Option<usize>,
}

impl Shard {
    /// CCD++: adds `sign * u v^T` to every residual copy.
    fn rank_one(&mut self, sign: f64) {
        let (u, v, users, items) = (&self.u, &self.v, self.users.start, self.items.start);
        self.by_user.rank_one(sign, |r| u[users + r], v);
        self.test.entries.rank_one(sign, |r| u[users + r], v);
        self.validation.entries.rank_one(sign, |r| u[users + r], v);
        self.by_item.rank_one(sign, |r| v[items + r], u);
    }
}
