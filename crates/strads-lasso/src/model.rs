//! A fitted linear model: its coefficients, predictions and scores on labelled data, and its file
//! (`model.json`), saved atomically and checked when loaded.

use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_data::{DataError, Dataset, Features};

use crate::fit::{LabelForm, LassoFit};
use crate::params::{CheckedParams, Loss};
use crate::{LassoError, program};

/// A fitted Lasso, elastic net or sparse logistic regression, as `model.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// `squared` or `logistic`.
    pub loss: Loss,
    /// How the classes were written in the training labels (logistic).
    pub labels: Option<LabelForm>,
    /// The intercept.
    pub intercept: f64,
    /// Features of the training data.
    pub features: usize,
    /// The penalty weight.
    pub lambda: f64,
    /// The share of the L1 term.
    pub l1_ratio: f64,
    /// The nonzero coefficients, as (index, value).
    pub coefficients: Vec<(u32, f64)>,
}

/// How well a model does on labelled data: the mean loss (squared error, or log loss with labels
/// -1 and 1) and, for the logistic loss, the share of rows whose class it predicts right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Mean squared error or mean log loss.
    pub loss: f64,
    /// Logistic: accuracy.
    pub accuracy: Option<f64>,
}

impl LinearModel {
    /// The model of a fit with these parameters (`labels`: the training labels' form, logistic).
    pub fn of(fit: &LassoFit, params: &CheckedParams, labels: Option<LabelForm>) -> Self {
        let raw = params.raw();
        LinearModel {
            loss: raw.loss,
            labels,
            intercept: fit.intercept,
            features: fit.beta.len(),
            lambda: fit.lambda,
            l1_ratio: raw.l1_ratio,
            coefficients: program::nonzero_coefficients(&fit.beta),
        }
    }

    /// The coefficients as a dense vector of `features` entries (the model's own count, or fewer:
    /// coefficients of features beyond it are dropped).
    pub fn dense(&self, features: usize) -> Vec<f64> {
        dense(&self.coefficients, features)
    }

    /// `beta0 + x_i . beta` for every row of `x` (a feature the model does not have counts for nothing).
    pub fn decision_function(&self, x: &Features) -> Vec<f64> {
        let beta = self.dense(x.cols().min(self.features));
        x.mul(&beta).into_iter().map(|f| self.intercept + f).collect()
    }

    /// The label of the negative class, as the training labels wrote it (-1 without labels).
    pub fn negative_label(&self) -> f64 {
        self.labels.map_or(-1.0, LabelForm::negative)
    }

    /// Scores on `data`; logistic labels may be -1/1 or 0/1.
    pub fn score(&self, data: &Dataset) -> Result<Scores, LassoError> {
        let beta = self.dense(data.x.cols().min(self.features));
        match self.loss {
            Loss::Squared => Ok(score(self.loss, &beta, self.intercept, &data.x, &data.y)),
            Loss::Logistic => Ok(score(self.loss, &beta, self.intercept, &data.x, &crate::to_signs(&data.y)?)),
        }
    }

    /// Writes the model as JSON to `path`, atomically.
    pub fn save(&self, path: &Path) -> Result<(), LassoError> {
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| LassoError::File(DataError::invalid(path, format!("cannot encode the model: {e}"))))?;
        strads_data::write_string_atomic(path, &(json + "\n")).map_err(LassoError::File)
    }

    /// Reads a model written by [`LinearModel::save`], refusing one whose coefficients lie beyond its features.
    pub fn load(path: &Path) -> Result<Self, LassoError> {
        let bad = |problem: String| LassoError::File(DataError::invalid(path, problem));
        let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read the model: {e}")))?;
        let model: LinearModel =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a strads lasso/logreg model: {e}")))?;
        if let Some(&(j, _)) = model.coefficients.iter().find(|(j, _)| *j as usize >= model.features) {
            return Err(bad(format!("coefficient {j} beyond the {} features", model.features)));
        }
        Ok(model)
    }
}

/// Sparse coefficients as a dense vector of `features` entries; indices beyond it are dropped.
pub fn dense(coefficients: &[(u32, f64)], features: usize) -> Vec<f64> {
    let mut beta = vec![0.0; features];
    for &(j, b) in coefficients {
        if let Some(slot) = beta.get_mut(j as usize) {
            *slot = b;
        }
    }
    beta
}

/// Scores the model (`beta`, `beta0`) on rows `x` with labels `y` (-1 and 1 for the logistic loss).
pub fn score(loss: Loss, beta: &[f64], beta0: f64, x: &Features, y: &[f64]) -> Scores {
    let fitted = x.mul(beta);
    let n = y.len().max(1) as f64;
    match loss {
        Loss::Squared => Scores {
            loss: y.iter().zip(&fitted).map(|(y, f)| (y - beta0 - f).powi(2)).sum::<f64>() / n,
            accuracy: None,
        },
        Loss::Logistic => {
            let (mut log_loss, mut right) = (0.0, 0usize);
            for (y, f) in y.iter().zip(&fitted) {
                let margin = y * (beta0 + f);
                log_loss += program::log1p_exp(-margin);
                right += usize::from(margin > 0.0);
            }
            Scores { loss: log_loss / n, accuracy: Some(right as f64 / n) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strads_data::DenseRows;

    fn rows(values: &[&[f64]]) -> Features {
        let cols = values[0].len();
        Features::Dense(DenseRows { rows: values.len(), cols, data: values.concat() })
    }

    #[test]
    fn scores_are_the_plain_sums() {
        let x = rows(&[&[1.0, 0.0], &[0.0, 2.0], &[1.0, 1.0]]);
        let s = score(Loss::Squared, &[1.0, 0.5], 0.5, &x, &[2.0, 1.0, 1.0]);
        // fitted 1.5, 1.5, 2.0 -> errors 0.5, -0.5, -1.0
        assert!((s.loss - 1.5 / 3.0).abs() < 1e-15 && s.accuracy.is_none());
        let s = score(Loss::Logistic, &[1.0, -1.0], 0.0, &x, &[1.0, -1.0, 1.0]);
        // margins y (beta0 + x . beta): 1, 2, 0
        let expected = ((1.0 + (-1.0f64).exp()).ln() + (1.0 + (-2.0f64).exp()).ln() + 2.0f64.ln()) / 3.0;
        assert!((s.loss - expected).abs() < 1e-15, "{s:?}");
        assert_eq!(s.accuracy, Some(2.0 / 3.0));
    }

    #[test]
    fn a_saved_model_loads_back_and_a_bad_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.json");
        let model = LinearModel {
            loss: Loss::Logistic,
            labels: Some(LabelForm::Zero),
            intercept: 0.25,
            features: 3,
            lambda: 0.1,
            l1_ratio: 1.0,
            coefficients: vec![(0, 1.5), (2, -0.1 - 0.2)],
        };
        model.save(&path).unwrap();
        assert_eq!(LinearModel::load(&path).unwrap(), model);
        let x = rows(&[&[1.0, 5.0, 0.0, 9.0]]);
        assert_eq!(model.decision_function(&x), vec![0.25 + 1.5]);
        assert_eq!(model.negative_label(), 0.0);

        let beyond = LinearModel { coefficients: vec![(3, 1.0)], ..model };
        std::fs::write(&path, serde_json::to_string(&beyond).unwrap()).unwrap();
        let error = LinearModel::load(&path).unwrap_err().to_string();
        assert!(error.contains("model.json") && error.contains("coefficient 3 beyond the 3 features"), "{error}");
        std::fs::write(&path, "{").unwrap();
        assert!(LinearModel::load(&path).unwrap_err().to_string().contains("not a strads lasso/logreg model"));
    }
}
