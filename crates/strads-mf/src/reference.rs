//! Test oracles: a plain sequential factorization with no workers or messages, the objective
//! computed from scratch, and its gradient (zero at a stationary point).

use crate::params::{Algorithm, Bias, CheckedParams};
use crate::program::{Side, cholesky_solve, free_slots, initial_row};
use crate::ratings::Rating;

/// `W` and `H`, `D` entries per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Plain {
    /// User rows.
    pub w: Vec<f64>,
    /// Item rows.
    pub h: Vec<f64>,
}

/// The offset `mu` a run uses.
pub fn offset(train: &[Rating], bias: Bias) -> f64 {
    if bias == Bias::None { 0.0 } else { train.iter().map(|r| r.value).sum::<f64>() / train.len() as f64 }
}

/// `params` with what is left to the data set from `train`, as a run sets it.
fn resolved(train: &[Rating], users: usize, items: usize, params: &CheckedParams) -> CheckedParams {
    let totals = crate::RatingTotals::of(train, &[], users, items);
    params.for_data(totals.mean(), totals.std(), totals.pairs_per_row())
}

fn regs(train: &[Rating], rows: usize, pick: impl Fn(&Rating) -> u32, params: &CheckedParams) -> Vec<f64> {
    let mut n = vec![0u32; rows];
    for r in train {
        n[pick(r) as usize] += 1;
    }
    n.iter().map(|&c| params.row_reg(c)).collect()
}

/// The objective `sum (A - mu - w~ . h~)^2 + sum_i reg_i |w~_i free|^2 + sum_j reg_j |h~_j free|^2`.
pub fn objective(train: &[Rating], users: usize, items: usize, model: &Plain, params: &CheckedParams) -> f64 {
    let params = &resolved(train, users, items, params);
    let d = params.stride();
    let mu = offset(train, params.bias);
    let loss: f64 = train
        .iter()
        .map(|r| {
            let (u, i) = (r.user as usize, r.item as usize);
            let p: f64 = (0..d).map(|t| model.w[u * d + t] * model.h[i * d + t]).sum();
            (r.value - mu - p).powi(2)
        })
        .sum();
    let mut penalty = 0.0;
    for (side, rows, reg) in [
        (Side::W, &model.w, regs(train, users, |r| r.user, params)),
        (Side::H, &model.h, regs(train, items, |r| r.item, params)),
    ] {
        for (row, lambda) in rows.chunks_exact(d).zip(reg) {
            penalty += lambda * free_slots(params, side).iter().map(|&t| row[t] * row[t]).sum::<f64>();
        }
    }
    loss + penalty
}

/// The largest absolute partial derivative of the objective over every learned entry.
pub fn max_gradient(train: &[Rating], users: usize, items: usize, model: &Plain, params: &CheckedParams) -> f64 {
    let params = &resolved(train, users, items, params);
    let d = params.stride();
    let mu = offset(train, params.bias);
    let mut gw = vec![0.0; users * d];
    let mut gh = vec![0.0; items * d];
    for r in train {
        let (u, i) = (r.user as usize, r.item as usize);
        let p: f64 = (0..d).map(|t| model.w[u * d + t] * model.h[i * d + t]).sum();
        let residual = r.value - mu - p;
        for t in 0..d {
            gw[u * d + t] -= 2.0 * residual * model.h[i * d + t];
            gh[i * d + t] -= 2.0 * residual * model.w[u * d + t];
        }
    }
    let mut worst: f64 = 0.0;
    for (side, rows, grad, reg) in [
        (Side::W, &model.w, &gw, regs(train, users, |r| r.user, params)),
        (Side::H, &model.h, &gh, regs(train, items, |r| r.item, params)),
    ] {
        for (k, lambda) in reg.iter().enumerate() {
            for t in free_slots(params, side) {
                worst = worst.max((grad[k * d + t] + 2.0 * lambda * rows[k * d + t]).abs());
            }
        }
    }
    worst
}

/// Runs `params.iterations` outer iterations sequentially, from the same initial rows as the program.
pub fn fit(train: &[Rating], users: usize, items: usize, params: &CheckedParams) -> Plain {
    let params = &resolved(train, users, items, params);
    let d = params.stride();
    let mu = offset(train, params.bias);
    let mut model = Plain {
        w: (0..users).flat_map(|u| initial_row(params, Side::W, u)).collect(),
        h: (0..items).flat_map(|i| initial_row(params, Side::H, i)).collect(),
    };
    // Ratings grouped by user (sorted by item) and by item (sorted by user), as indices into `sorted`.
    let mut sorted: Vec<Rating> = train.to_vec();
    sorted.sort_by_key(|r| (r.user, r.item));
    let mut by_item: Vec<usize> = (0..sorted.len()).collect();
    by_item.sort_by_key(|&k| (sorted[k].item, sorted[k].user));
    let reg_w = regs(train, users, |r| r.user, params);
    let reg_h = regs(train, items, |r| r.item, params);
    let group = |keys: Vec<usize>, key: &dyn Fn(usize) -> usize, rows: usize| {
        let mut groups = vec![Vec::new(); rows];
        for k in keys {
            groups[key(k)].push(k);
        }
        groups
    };
    let user_groups = group((0..sorted.len()).collect(), &|k| sorted[k].user as usize, users);
    let item_groups = group(by_item, &|k| sorted[k].item as usize, items);
    let predict = |m: &Plain, k: usize| {
        let (u, i) = (sorted[k].user as usize, sorted[k].item as usize);
        (0..d).map(|t| m.w[u * d + t] * m.h[i * d + t]).sum::<f64>()
    };
    let mut residual: Vec<f64> = (0..sorted.len()).map(|k| sorted[k].value - mu - predict(&model, k)).collect();
    for _ in 0..params.iterations {
        match params.algorithm {
            Algorithm::Ccdpp => {
                let k = params.rank;
                let mut order: Vec<(usize, bool, bool, usize)> = Vec::new();
                if params.bias == Bias::Full {
                    order.push((k, true, false, 1));
                    order.push((k + 1, false, true, 1));
                }
                order.extend((0..k).map(|t| (t, true, true, params.inner_iterations)));
                for (t, do_w, do_h, inner) in order {
                    let mut u: Vec<f64> = (0..users).map(|x| model.w[x * d + t]).collect();
                    let mut v: Vec<f64> = (0..items).map(|x| model.h[x * d + t]).collect();
                    for (kk, r) in sorted.iter().enumerate() {
                        residual[kk] += u[r.user as usize] * v[r.item as usize];
                    }
                    for _ in 0..inner {
                        if do_w {
                            for (x, ks) in user_groups.iter().enumerate() {
                                let num: f64 = ks.iter().map(|&kk| residual[kk] * v[sorted[kk].item as usize]).sum();
                                let den =
                                    reg_w[x] + ks.iter().map(|&kk| v[sorted[kk].item as usize].powi(2)).sum::<f64>();
                                u[x] = if ks.is_empty() || den <= 0.0 { 0.0 } else { num / den };
                            }
                        }
                        if do_h {
                            for (x, ks) in item_groups.iter().enumerate() {
                                let num: f64 = ks.iter().map(|&kk| residual[kk] * u[sorted[kk].user as usize]).sum();
                                let den =
                                    reg_h[x] + ks.iter().map(|&kk| u[sorted[kk].user as usize].powi(2)).sum::<f64>();
                                v[x] = if ks.is_empty() || den <= 0.0 { 0.0 } else { num / den };
                            }
                        }
                    }
                    for (kk, r) in sorted.iter().enumerate() {
                        residual[kk] -= u[r.user as usize] * v[r.item as usize];
                    }
                    for (row, value) in model.w.chunks_exact_mut(d).zip(&u) {
                        row[t] = *value;
                    }
                    for (row, value) in model.h.chunks_exact_mut(d).zip(&v) {
                        row[t] = *value;
                    }
                }
            }
            Algorithm::Ccd | Algorithm::Als => {
                for side in [Side::W, Side::H] {
                    let (groups, reg) = match side {
                        Side::W => (&user_groups, &reg_w),
                        Side::H => (&item_groups, &reg_h),
                    };
                    for (x, ks) in groups.iter().enumerate() {
                        let other_of = |kk: usize| match side {
                            Side::W => sorted[kk].item as usize,
                            Side::H => sorted[kk].user as usize,
                        };
                        let (mine, theirs) = match side {
                            Side::W => (&mut model.w, &model.h),
                            Side::H => (&mut model.h, &model.w),
                        };
                        let free = free_slots(params, side);
                        if ks.is_empty() {
                            for &t in &free {
                                mine[x * d + t] = 0.0;
                            }
                            continue;
                        }
                        if params.algorithm == Algorithm::Als {
                            als_row(
                                &mut mine[x * d..(x + 1) * d],
                                ks,
                                &sorted,
                                theirs,
                                &other_of,
                                &free,
                                d,
                                reg[x],
                                mu,
                                params.cg_steps(),
                            );
                            continue;
                        }
                        // Residuals of this row, fresh.
                        let mut r: Vec<f64> = ks
                            .iter()
                            .map(|&kk| {
                                let o = other_of(kk);
                                let p: f64 = (0..d).map(|t| mine[x * d + t] * theirs[o * d + t]).sum();
                                sorted[kk].value - mu - p
                            })
                            .collect();
                        for _ in 0..params.inner_iterations {
                            for &t in &free {
                                let old = mine[x * d + t];
                                let mut num = 0.0;
                                let mut den = reg[x];
                                for (e, &kk) in ks.iter().enumerate() {
                                    let o = theirs[other_of(kk) * d + t];
                                    num += (r[e] + old * o) * o;
                                    den += o * o;
                                }
                                let new = if den > 0.0 { num / den } else { 0.0 };
                                for (e, &kk) in ks.iter().enumerate() {
                                    r[e] -= (new - old) * theirs[other_of(kk) * d + t];
                                }
                                mine[x * d + t] = new;
                            }
                        }
                    }
                }
            }
        }
    }
    model
}

#[allow(clippy::too_many_arguments)]
fn als_row(
    row: &mut [f64],
    ks: &[usize],
    sorted: &[Rating],
    theirs: &[f64],
    other_of: &dyn Fn(usize) -> usize,
    free: &[usize],
    d: usize,
    reg: f64,
    mu: f64,
    cg_steps: usize,
) {
    let f = free.len();
    let fixed: Vec<usize> = (0..d).filter(|t| !free.contains(t)).collect();
    let mut a = vec![0.0; f * f];
    let mut b = vec![0.0; f];
    for x in 0..f {
        a[x * f + x] = reg;
    }
    for &kk in ks {
        let o = &theirs[other_of(kk) * d..(other_of(kk) + 1) * d];
        let target = sorted[kk].value - mu - fixed.iter().map(|&s| row[s] * o[s]).sum::<f64>();
        for x in 0..f {
            b[x] += target * o[free[x]];
            for y in 0..=x {
                a[x * f + y] += o[free[x]] * o[free[y]];
            }
        }
    }
    if cg_steps > 0 {
        // Plain conjugate gradient on the formed matrix (lower triangle) from the row's free entries.
        let entry = |x: usize, y: usize| if y <= x { a[x * f + y] } else { a[y * f + x] };
        let times = |v: &[f64]| (0..f).map(|x| (0..f).map(|y| entry(x, y) * v[y]).sum::<f64>()).collect::<Vec<f64>>();
        let mut v: Vec<f64> = free.iter().map(|&t| row[t]).collect();
        plain_cg(&mut v, &b, cg_steps, times);
        for x in 0..f {
            row[free[x]] = v[x];
        }
        return;
    }
    if cholesky_solve(&mut a, &mut b, f).is_some() {
        for x in 0..f {
            row[free[x]] = b[x];
        }
    }
}

/// Implicit feedback, densely: the confidence and preference of every (user, item) pair.
fn dense_implicit(train: &[Rating], users: usize, items: usize, params: &CheckedParams) -> (Vec<f64>, Vec<f64>) {
    let implicit = params.implicit.expect("implicit feedback settings");
    let mut confidence = vec![1.0; users * items];
    let mut preference = vec![0.0; users * items];
    for r in train {
        if r.value > 0.0 {
            let at = r.user as usize * items + r.item as usize;
            confidence[at] = implicit.confidence(r.value);
            preference[at] = 1.0;
        }
    }
    (confidence, preference)
}

/// Implicit feedback: `sum over every pair c (p - w . h)^2 + sum_i reg_i |w_i|^2 + sum_j reg_j |h_j|^2`,
/// summed over all `users x items` pairs.
pub fn implicit_objective(train: &[Rating], users: usize, items: usize, model: &Plain, params: &CheckedParams) -> f64 {
    let params = &resolved(train, users, items, params);
    let d = params.stride();
    let (confidence, preference) = dense_implicit(train, users, items, params);
    let mut total = 0.0;
    for u in 0..users {
        for i in 0..items {
            let s: f64 = (0..d).map(|t| model.w[u * d + t] * model.h[i * d + t]).sum();
            total += confidence[u * items + i] * (preference[u * items + i] - s).powi(2);
        }
    }
    for (rows, reg) in
        [(&model.w, regs(train, users, |r| r.user, params)), (&model.h, regs(train, items, |r| r.item, params))]
    {
        for (row, lambda) in rows.chunks_exact(d).zip(reg) {
            total += lambda * row.iter().map(|x| x * x).sum::<f64>();
        }
    }
    total
}

/// Implicit feedback: `params.iterations` outer iterations over the dense `users x items` problem,
/// each row by the rule of `params` (ALS solved exactly or by conjugate-gradient steps, or
/// coordinate descent), from the program's initial rows. Rows without training pairs are zero.
pub fn fit_implicit(train: &[Rating], users: usize, items: usize, params: &CheckedParams) -> Plain {
    let params = &resolved(train, users, items, params);
    let d = params.stride();
    let (confidence, preference) = dense_implicit(train, users, items, params);
    let mut model = Plain {
        w: (0..users).flat_map(|u| initial_row(params, Side::W, u)).collect(),
        h: (0..items).flat_map(|i| initial_row(params, Side::H, i)).collect(),
    };
    let reg_w = regs(train, users, |r| r.user, params);
    let reg_h = regs(train, items, |r| r.item, params);
    let mut rated_w = vec![false; users];
    let mut rated_h = vec![false; items];
    for r in train {
        rated_w[r.user as usize] = true;
        rated_h[r.item as usize] = true;
    }
    for _ in 0..params.iterations {
        for side in [Side::W, Side::H] {
            let (rows, others, reg, rated) = match side {
                Side::W => (users, items, &reg_w, &rated_w),
                Side::H => (items, users, &reg_h, &rated_h),
            };
            let at = |x: usize, o: usize| match side {
                Side::W => x * items + o,
                Side::H => o * items + x,
            };
            let (mine, theirs) = match side {
                Side::W => (&mut model.w, &model.h),
                Side::H => (&mut model.h, &model.w),
            };
            for x in 0..rows {
                let row = &mut mine[x * d..(x + 1) * d];
                if !rated[x] {
                    row.fill(0.0);
                    continue;
                }
                let c: Vec<f64> = (0..others).map(|o| confidence[at(x, o)]).collect();
                let p: Vec<f64> = (0..others).map(|o| preference[at(x, o)]).collect();
                let other = |o: usize| &theirs[o * d..(o + 1) * d];
                // A v = reg v + sum_o c_o (h_o . v) h_o over every other row.
                let apply = |v: &[f64]| {
                    let mut out: Vec<f64> = v.iter().map(|a| reg[x] * a).collect();
                    for (o, &co) in c.iter().enumerate() {
                        let s: f64 = other(o).iter().zip(v).map(|(a, b)| a * b).sum();
                        for (slot, a) in out.iter_mut().zip(other(o)) {
                            *slot += co * s * a;
                        }
                    }
                    out
                };
                let mut b = vec![0.0; d];
                for o in 0..others {
                    for (slot, a) in b.iter_mut().zip(other(o)) {
                        *slot += c[o] * p[o] * a;
                    }
                }
                match (params.algorithm, params.cg_steps()) {
                    (Algorithm::Als, 0) => {
                        let mut a = vec![0.0; d * d];
                        for t in 0..d {
                            let mut unit = vec![0.0; d];
                            unit[t] = 1.0;
                            for (s, value) in apply(&unit).into_iter().enumerate() {
                                a[s * d + t] = value;
                            }
                        }
                        if cholesky_solve(&mut a, &mut b, d).is_some() {
                            row.copy_from_slice(&b);
                        }
                    }
                    (Algorithm::Als, steps) => plain_cg(row, &b, steps, apply),
                    _ => {
                        for _ in 0..params.inner_iterations {
                            for t in 0..d {
                                let (mut grad, mut curvature) = (reg[x] * row[t], reg[x]);
                                for o in 0..others {
                                    let s: f64 = other(o).iter().zip(row.iter()).map(|(a, b)| a * b).sum();
                                    grad += c[o] * (s - p[o]) * other(o)[t];
                                    curvature += c[o] * other(o)[t] * other(o)[t];
                                }
                                if curvature > 0.0 {
                                    row[t] -= grad / curvature;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    model
}

/// `steps` steps of textbook conjugate gradient on `A v = b` from `v`, `times(p)` giving `A p`;
/// stops once the residual vanishes.
fn plain_cg(v: &mut [f64], b: &[f64], steps: usize, times: impl Fn(&[f64]) -> Vec<f64>) {
    let av = times(v);
    let mut r: Vec<f64> = b.iter().zip(&av).map(|(b, a)| b - a).collect();
    let mut p = r.clone();
    let mut old: f64 = r.iter().map(|x| x * x).sum();
    for _ in 0..steps {
        if old < 1e-20 {
            break;
        }
        let ap = times(&p);
        let curvature: f64 = p.iter().zip(&ap).map(|(x, y)| x * y).sum();
        if curvature <= 0.0 {
            break;
        }
        let step = old / curvature;
        for x in 0..v.len() {
            v[x] += step * p[x];
            r[x] -= step * ap[x];
        }
        let new: f64 = r.iter().map(|x| x * x).sum();
        for x in 0..v.len() {
            p[x] = r[x] + (new / old) * p[x];
        }
        old = new;
    }
}
