//! A plain sequential Lasso solver and optimality checks: the oracle scheduled runs are tested against.
//!
//! Nothing here uses the engine: cyclic coordinate descent over all rows at once, the objective,
//! and the violation of the optimality (KKT) conditions, written as directly as possible.

use strads_data::Dataset;

use crate::program::soft_threshold;

/// `||y - beta0 - X beta||^2 / (2n) + lambda ||beta||_1`.
pub fn objective(data: &Dataset, beta: &[f64], beta0: f64, lambda: f64) -> f64 {
    let n = data.y.len() as f64;
    let fitted = data.x.mul(beta);
    let rss: f64 = data.y.iter().zip(&fitted).map(|(y, f)| (y - beta0 - f).powi(2)).sum();
    rss / (2.0 * n) + lambda * beta.iter().map(|b| b.abs()).sum::<f64>()
}

/// The largest violation of the Lasso optimality conditions, in units of `lambda`'s scale:
/// `|x_j . r / n - lambda sign(beta_j)|` for nonzero `beta_j`, `max(|x_j . r| / n - lambda, 0)` for
/// zero ones, and `|mean(r)|` for the intercept when there is one.
pub fn kkt_violation(data: &Dataset, beta: &[f64], beta0: f64, lambda: f64, intercept: bool) -> f64 {
    let n = data.y.len() as f64;
    let fitted = data.x.mul(beta);
    let r: Vec<f64> = data.y.iter().zip(&fitted).map(|(y, f)| y - beta0 - f).collect();
    let grad = data.x.to_columns().transpose_mul(&r);
    let mut worst = 0.0f64;
    for (g, b) in grad.iter().zip(beta) {
        let g = g / n;
        let violation = if *b != 0.0 { (g - lambda * b.signum()).abs() } else { (g.abs() - lambda).max(0.0) };
        worst = worst.max(violation);
    }
    if intercept {
        worst = worst.max((r.iter().sum::<f64>() / n).abs());
    }
    worst
}

/// Cyclic coordinate descent, one coordinate at a time over all rows, until no coefficient moves
/// more than `tol` times the largest one in a sweep (or `max_sweeps` sweeps). Returns `(beta, beta0)`.
pub fn cyclic_descent(data: &Dataset, lambda: f64, intercept: bool, tol: f64, max_sweeps: usize) -> (Vec<f64>, f64) {
    let x = data.x.to_columns();
    let n = data.y.len() as f64;
    let p = x.cols();
    let norms: Vec<f64> = (0..p).map(|j| x.sq_norm(j)).collect();
    let mut beta = vec![0.0; p];
    let mut beta0 = if intercept { data.y.iter().sum::<f64>() / n } else { 0.0 };
    let mut r: Vec<f64> = data.y.iter().map(|y| y - beta0).collect();
    for _ in 0..max_sweeps {
        let mut max_change = 0.0f64;
        for j in 0..p {
            if norms[j] == 0.0 {
                continue;
            }
            let z = x.dot(j, &r) + norms[j] * beta[j];
            let new = soft_threshold(z, n * lambda) / norms[j];
            let delta = new - beta[j];
            if delta != 0.0 {
                x.axpy(j, -delta, &mut r);
                beta[j] = new;
                max_change = max_change.max(delta.abs());
            }
        }
        if intercept {
            let shift = r.iter().sum::<f64>() / n;
            beta0 += shift;
            r.iter_mut().for_each(|v| *v -= shift);
            max_change = max_change.max(shift.abs());
        }
        let largest = beta.iter().fold(0.0f64, |m, b| m.max(b.abs())).max(beta0.abs());
        if max_change <= tol * largest.max(f64::MIN_POSITIVE) {
            break;
        }
    }
    (beta, beta0)
}
