//! Anderson extrapolation of coordinate-descent iterates (as skglm and celer use it).
//!
//! Given snapshots `w_0 .. w_K` taken one pass over the working set apart, the extrapolated point
//! is `sum_k c_k w_k` over `k = 1..K`, where `c` minimizes `|| sum_k c_k (w_k - w_{k-1}) ||` subject
//! to `sum_k c_k = 1`: solve `(U^T U) z = 1` for the differences `U`, then `c = z / sum(z)`. Because
//! the residual is affine in `w`, the same coefficients combine the workers' residual snapshots, so
//! the objective of the extrapolated point costs one pass over the rows, not over the data.

/// The coefficients `c_1 .. c_K` for snapshots `w_0 .. w_K` (each the same length), or `None`
/// when the differences are (numerically) dependent.
pub fn coefficients(snapshots: &[Vec<f64>]) -> Option<Vec<f64>> {
    let k = snapshots.len().checked_sub(1)?;
    if k == 0 {
        return None;
    }
    let diffs: Vec<Vec<f64>> =
        (1..=k).map(|i| snapshots[i].iter().zip(&snapshots[i - 1]).map(|(a, b)| a - b).collect()).collect();
    let mut gram = vec![vec![0.0; k]; k];
    for i in 0..k {
        for j in i..k {
            let dot: f64 = diffs[i].iter().zip(&diffs[j]).map(|(a, b)| a * b).sum();
            gram[i][j] = dot;
            gram[j][i] = dot;
        }
    }
    let z = solve(gram, vec![1.0; k])?;
    let total: f64 = z.iter().sum();
    if !total.is_finite() || total.abs() < f64::MIN_POSITIVE {
        return None;
    }
    let c: Vec<f64> = z.iter().map(|v| v / total).collect();
    c.iter().all(|v| v.is_finite()).then_some(c)
}

/// The extrapolated point `sum_k c_k w_k` of [`coefficients`], or `None` when they are undefined.
pub fn extrapolated(snapshots: &[Vec<f64>]) -> Option<Vec<f64>> {
    let c = coefficients(snapshots)?;
    let mut point = vec![0.0; snapshots[0].len()];
    for (ck, snapshot) in c.iter().zip(&snapshots[1..]) {
        for (a, s) in point.iter_mut().zip(snapshot) {
            *a += ck * s;
        }
    }
    Some(point)
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let scale = (0..n).map(|i| a[i][i].abs()).fold(0.0, f64::max);
    if scale.is_nan() || scale <= 0.0 || !scale.is_finite() {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-14 * scale {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let tail: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `w <- A w + b` for a contraction `A` (a slow one: its spectrum runs up to 0.95).
    fn step(w: &[f64]) -> Vec<f64> {
        let n = w.len();
        (0..n)
            .map(|i| {
                let coupling = if i + 1 < n { 0.02 * w[i + 1] } else { 0.0 };
                (0.5 + 0.45 * i as f64 / n as f64) * w[i] + coupling + 1.0
            })
            .collect()
    }

    #[test]
    fn extrapolation_lands_much_closer_to_the_limit_than_the_last_iterate() {
        let dim = 20;
        let mut limit = vec![0.0; dim];
        for _ in 0..5000 {
            limit = step(&limit);
        }
        let mut w = vec![0.0; dim];
        let mut snapshots = vec![w.clone()];
        for _ in 0..5 {
            w = step(&w);
            snapshots.push(w.clone());
        }
        let c = coefficients(&snapshots).unwrap();
        assert!((c.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let extrapolated: Vec<f64> =
            (0..dim).map(|d| c.iter().zip(&snapshots[1..]).map(|(ck, s)| ck * s[d]).sum()).collect();
        let distance = |v: &[f64]| v.iter().zip(&limit).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
        assert!(
            distance(&extrapolated) < 0.2 * distance(&w),
            "extrapolated {} vs last {}",
            distance(&extrapolated),
            distance(&w)
        );
    }

    #[test]
    fn dependent_differences_give_no_coefficients() {
        let snapshots = vec![vec![0.0, 0.0], vec![1.0, 1.0], vec![2.0, 2.0], vec![3.0, 3.0]];
        assert!(coefficients(&snapshots).is_none());
        assert!(coefficients(&[vec![1.0]]).is_none());
        assert!(coefficients(&[vec![1.0], vec![1.0]]).is_none());
    }
}
