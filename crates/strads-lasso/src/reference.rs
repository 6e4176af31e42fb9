//! Plain sequential solvers (Lasso, elastic net, logistic) and optimality checks: the oracles scheduled
//! runs are tested against.
//!
//! Nothing here uses the engine: cyclic coordinate descent over all rows at once, the objective,
//! and the violation of the optimality (KKT) conditions, written as directly as possible.

use strads_data::Dataset;

use crate::Loss;
use crate::program::{log1p_exp, reach, shrink, soft_threshold};

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

/// `u_i`, the loss' negative derivative in the fitted value of row `i`: the residual
/// `y_i - beta0 - x_i . beta` (squared loss) or `y_i sigma(-y_i (beta0 + x_i . beta))` (logistic,
/// labels -1 and 1).
fn negative_derivatives(data: &Dataset, loss: Loss, beta: &[f64], beta0: f64) -> Vec<f64> {
    let fitted = data.x.mul(beta);
    data.y
        .iter()
        .zip(&fitted)
        .map(|(&y, f)| match loss {
            Loss::Squared => y - beta0 - f,
            Loss::Logistic => y / (1.0 + (y * (beta0 + f)).exp()),
        })
        .collect()
}

/// The objective of any loss with the elastic-net penalty:
/// `loss / n + lambda (l1_ratio ||beta||_1 + (1 - l1_ratio) ||beta||^2 / 2)`.
pub fn glm_objective(data: &Dataset, loss: Loss, beta: &[f64], beta0: f64, lambda: f64, l1_ratio: f64) -> f64 {
    let n = data.y.len() as f64;
    let fitted = data.x.mul(beta);
    let data_term: f64 = data
        .y
        .iter()
        .zip(&fitted)
        .map(|(&y, f)| match loss {
            Loss::Squared => 0.5 * (y - beta0 - f).powi(2),
            Loss::Logistic => log1p_exp(-y * (beta0 + f)),
        })
        .sum();
    let l1: f64 = beta.iter().map(|b| b.abs()).sum();
    let l2: f64 = beta.iter().map(|b| b * b).sum();
    data_term / n + lambda * (l1_ratio * l1 + 0.5 * (1.0 - l1_ratio) * l2)
}

/// The largest violation of the optimality conditions of [`glm_objective`]: with `g_j = x_j . u / n`,
/// `|g_j - lambda (1 - l1_ratio) beta_j - lambda l1_ratio sign(beta_j)|` for nonzero `beta_j`,
/// `max(|g_j| - lambda l1_ratio, 0)` for zero ones, and `|mean(u)|` for the intercept.
pub fn glm_kkt_violation(
    data: &Dataset,
    loss: Loss,
    beta: &[f64],
    beta0: f64,
    lambda: f64,
    l1_ratio: f64,
    intercept: bool,
) -> f64 {
    kkt_violation_of(data, loss, beta, beta0, (lambda, l1_ratio), intercept, false)
}

/// [`glm_kkt_violation`] of the fit constrained to `beta >= 0`: a nonzero `beta_j` as there, a zero
/// one `max(g_j - lambda l1_ratio, 0)` (only a gradient pushing it up violates), and `-beta_j` for
/// a negative one.
pub fn glm_kkt_violation_positive(
    data: &Dataset,
    loss: Loss,
    beta: &[f64],
    beta0: f64,
    lambda: f64,
    l1_ratio: f64,
    intercept: bool,
) -> f64 {
    kkt_violation_of(data, loss, beta, beta0, (lambda, l1_ratio), intercept, true)
}

fn kkt_violation_of(
    data: &Dataset,
    loss: Loss,
    beta: &[f64],
    beta0: f64,
    (lambda, l1_ratio): (f64, f64),
    intercept: bool,
    positive: bool,
) -> f64 {
    let n = data.y.len() as f64;
    let u = negative_derivatives(data, loss, beta, beta0);
    let grad = data.x.to_columns().transpose_mul(&u);
    let (l1, l2) = (lambda * l1_ratio, lambda * (1.0 - l1_ratio));
    let mut worst = 0.0f64;
    for (g, &b) in grad.iter().zip(beta) {
        let g = g / n;
        let violation = if positive && b < 0.0 {
            -b
        } else if b != 0.0 {
            (g - l2 * b - l1 * b.signum()).abs()
        } else {
            (reach(g, positive) - l1).max(0.0)
        };
        worst = worst.max(violation);
    }
    if intercept {
        worst = worst.max((u.iter().sum::<f64>() / n).abs());
    }
    worst
}

/// Cyclic coordinate descent for [`glm_objective`], one coordinate at a time over all rows: exact
/// steps for the squared loss, Newton steps with the exact curvature (at most `1 / (2 max |x_ij|)`
/// long) for the logistic loss, the intercept after every sweep. Stops when no coefficient moves
/// more than `tol` times the largest in a sweep (or after `max_sweeps`). Returns `(beta, beta0)`.
pub fn glm_descent(
    data: &Dataset,
    loss: Loss,
    lambda: f64,
    l1_ratio: f64,
    intercept: bool,
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, f64) {
    descent(data, loss, (lambda, l1_ratio), intercept, false, tol, max_sweeps)
}

/// [`glm_descent`] constrained to `beta >= 0`: each step is projected on the non-negative half-line.
pub fn glm_descent_positive(
    data: &Dataset,
    loss: Loss,
    lambda: f64,
    l1_ratio: f64,
    intercept: bool,
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, f64) {
    descent(data, loss, (lambda, l1_ratio), intercept, true, tol, max_sweeps)
}

fn descent(
    data: &Dataset,
    loss: Loss,
    (lambda, l1_ratio): (f64, f64),
    intercept: bool,
    positive: bool,
    tol: f64,
    max_sweeps: usize,
) -> (Vec<f64>, f64) {
    let x = data.x.to_columns();
    let n = data.y.len() as f64;
    let (alpha, ridge) = (n * lambda * l1_ratio, n * lambda * (1.0 - l1_ratio));
    let mut beta = vec![0.0; x.cols()];
    let mut beta0 = 0.0;
    // Fitted values without the intercept.
    let mut fitted = vec![0.0; data.y.len()];
    let derivatives = |fitted: &[f64], beta0: f64| -> (Vec<f64>, Vec<f64>) {
        data.y
            .iter()
            .zip(fitted)
            .map(|(&y, f)| match loss {
                Loss::Squared => (y - beta0 - f, 1.0),
                Loss::Logistic => {
                    let p = 1.0 / (1.0 + (y * (beta0 + f)).exp());
                    (y * p, p * (1.0 - p))
                }
            })
            .unzip()
    };
    for _ in 0..max_sweeps {
        let mut max_change = 0.0f64;
        for (j, b) in beta.iter_mut().enumerate() {
            let (u, w) = derivatives(&fitted, beta0);
            let (mut g, mut h) = (0.0, 0.0);
            x.for_each_entry(j, |i, v| {
                g += v * u[i];
                h += v * v * w[i];
            });
            if h <= 0.0 {
                continue;
            }
            let mut new = shrink(g + h * *b, alpha, positive) / (h + ridge);
            if loss == Loss::Logistic {
                let limit = 0.5 / x.max_abs(j);
                new = *b + (new - *b).clamp(-limit, limit);
            }
            let delta = new - *b;
            if delta != 0.0 {
                x.axpy(j, delta, &mut fitted);
                *b = new;
                max_change = max_change.max(delta.abs());
            }
        }
        if intercept {
            let (u, w) = derivatives(&fitted, beta0);
            let shift = match loss {
                Loss::Squared => u.iter().sum::<f64>() / n,
                Loss::Logistic => (u.iter().sum::<f64>() / w.iter().sum::<f64>()).clamp(-0.5, 0.5),
            };
            beta0 += shift;
            max_change = max_change.max(shift.abs());
        }
        let largest = beta.iter().fold(0.0f64, |m, b| m.max(b.abs())).max(beta0.abs());
        if max_change <= tol * largest.max(f64::MIN_POSITIVE) {
            break;
        }
    }
    (beta, beta0)
}
