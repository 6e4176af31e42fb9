//! K-fold cross-validation over the lambdas of a path: each fold fits the same grid on the other
//! folds and scores every lambda on its own rows; the lambda of the least mean held-out loss wins.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use strads_data::Dataset;

use crate::LassoError;
use crate::fit::LassoFit;
use crate::model::{dense, score};
use crate::params::{CheckedParams, Lambda, Loss};

/// The held-out losses of a cross-validation, and its choice.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossValidation {
    /// Per lambda of the path (largest first): the lambda and the held-out loss of every fold
    /// (mean squared error, or mean log loss). Lambdas a fold did not reach (a budget) are left out.
    pub rows: Vec<(f64, Vec<f64>)>,
    /// The index in `rows` of the least mean held-out loss.
    pub best: usize,
}

impl CrossValidation {
    /// The mean held-out loss at each lambda of `rows`.
    pub fn means(&self) -> Vec<f64> {
        self.rows.iter().map(|(_, losses)| mean_std(losses).0).collect()
    }
}

/// The mean and the (population) standard deviation.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Cross-validates `full`, a path fitted on `data` with `params`, over `folds` folds.
///
/// Rows go to folds by a shuffle seeded with `seed`; logistic folds are stratified (each class is
/// dealt round-robin, so every fold sees both; labels -1 and 1). `fit_fold(k, rows, params)` fits
/// fold `k`'s training rows with the path's grid: the caller chooses the launcher, the progress
/// and what to add to an error. Moves `full` to the chosen lambda (its coefficients, intercept,
/// objective and gap at that point of the path).
pub fn cross_validate<E: From<LassoError>>(
    data: &Dataset,
    params: &CheckedParams,
    full: &mut LassoFit,
    folds: usize,
    seed: u64,
    mut fit_fold: impl FnMut(usize, &Dataset, &CheckedParams) -> Result<LassoFit, E>,
) -> Result<CrossValidation, E> {
    let n = data.y.len();
    if folds > n {
        return Err(LassoError::Folds { folds, samples: n }.into());
    }
    let (Some(first), Some(last)) = (full.path.first(), full.path.last()) else {
        return Err(LassoError::NoPath.into());
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6376_666f_6c64));
    let loss = params.raw().loss;
    let mut fold_of = vec![0; n];
    let mut dealt = [0usize; 2];
    for &row in &order {
        let class = usize::from(loss == Loss::Logistic && data.y[row] > 0.0);
        fold_of[row] = dealt[class] % folds;
        dealt[class] += 1;
    }
    let mut raw = params.raw().clone();
    raw.lambda = Lambda::Value(last.lambda);
    raw.path_top = Some(first.lambda);
    raw.path = Some(full.path.len().max(2));
    let fold_params = raw.check()?;
    let features = full.beta.len();
    let mut rows: Vec<(f64, Vec<f64>)> = full.path.iter().map(|p| (p.lambda, Vec::with_capacity(folds))).collect();
    for fold in 0..folds {
        let (inside, outside): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| fold_of[i] != fold);
        let (train, held_out) = (data.select_rows(&inside), data.select_rows(&outside));
        let fitted = fit_fold(fold, &train, &fold_params)?;
        for (row, point) in rows.iter_mut().zip(&fitted.path) {
            let beta = dense(&point.coefficients, features);
            row.1.push(score(loss, &beta, point.intercept, &held_out.x, &held_out.y).loss);
        }
    }
    rows.truncate(rows.iter().take_while(|(_, values)| values.len() == folds).count());
    let means: Vec<f64> = rows.iter().map(|(_, losses)| mean_std(losses).0).collect();
    let best = (0..means.len()).min_by(|&a, &b| means[a].total_cmp(&means[b])).ok_or(LassoError::NoPath)?;
    // A fold whose path ended early leaves the lambdas after it unscored: `rows` is a prefix of the path.
    let point = &full.path[best];
    full.beta = dense(&point.coefficients, features);
    full.intercept = point.intercept;
    full.lambda = point.lambda;
    full.objective = point.objective;
    full.duality_gap = point.duality_gap;
    full.status = point.status;
    Ok(CrossValidation { rows, best })
}
