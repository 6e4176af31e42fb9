//! Test data shared by the Lasso and GLM tests: features far from zero mean, and their centring;
//! every scheduler, and the smallest all-zero lambda.

// Each test crate includes this module and uses some of it.
#![allow(dead_code)]

use strads_data::{Dataset, DenseRows, Features};
use strads_lasso::SchedulerKind;

/// Every scheduler.
pub const ALL: [SchedulerKind; 5] = [
    SchedulerKind::Block,
    SchedulerKind::Dynamic,
    SchedulerKind::Shotgun,
    SchedulerKind::Cyclic,
    SchedulerKind::Sequential,
];

/// `||X^T (y - mean)||_inf / n` (centred with an intercept): the smallest all-zero lambda.
pub fn lambda_max(data: &Dataset, intercept: bool) -> f64 {
    let n = data.y.len() as f64;
    let mean = if intercept { data.y.iter().sum::<f64>() / n } else { 0.0 };
    let centred: Vec<f64> = data.y.iter().map(|y| y - mean).collect();
    data.x.to_columns().transpose_mul(&centred).iter().fold(0.0f64, |m, g| m.max(g.abs())) / n
}

/// `data` as dense rows, every feature moved by `shift`.
pub fn dense_shifted(data: &Dataset, shift: f64) -> Dataset {
    let (n, p) = (data.x.rows(), data.x.cols());
    let mut values = vec![shift; n * p];
    for j in 0..p {
        let mut unit = vec![0.0; p];
        unit[j] = 1.0;
        for (i, v) in data.x.mul(&unit).into_iter().enumerate() {
            values[i * p + j] += v;
        }
    }
    Dataset { x: Features::Dense(DenseRows { rows: n, cols: p, data: values }), y: data.y.clone(), feature_names: None }
}

/// The dense `data` with every feature centred (labels as they are), and the features' means: a
/// model `(beta, b)` fitted on it is `(beta, b - means . beta)` on `data`.
pub fn centred_features(data: &Dataset) -> (Dataset, Vec<f64>) {
    let Features::Dense(rows) = &data.x else { panic!("centred_features takes dense rows") };
    let (n, p) = (rows.rows, rows.cols);
    let means: Vec<f64> = (0..p).map(|j| (0..n).map(|i| rows.data[i * p + j]).sum::<f64>() / n as f64).collect();
    let values = (0..n * p).map(|k| rows.data[k] - means[k % p]).collect();
    let centred = Dataset {
        x: Features::Dense(DenseRows { rows: n, cols: p, data: values }),
        y: data.y.clone(),
        feature_names: None,
    };
    (centred, means)
}
