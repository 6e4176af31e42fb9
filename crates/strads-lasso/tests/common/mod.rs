//! Test data shared by the Lasso and GLM tests: features far from zero mean, and their centring.

use strads_data::{Dataset, DenseRows, Features};

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
