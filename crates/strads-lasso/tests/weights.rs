//! Sample weights: a weighted fit is the fit on the rows repeated as often as their weights say.

mod common;

use common::{ALL, lambda_max};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use strads_data::{Dataset, WeightedDataset};
use strads_lasso::reference::{cyclic_descent, kkt_violation, objective};
use strads_lasso::{GeneratorSpec, Lambda, LassoParams, Loss, SchedulerKind, Status, fit, generate};
use strads_runtime::Embedded;

fn problem() -> Dataset {
    let spec = GeneratorSpec {
        rows: 240,
        features: 120,
        block: 5,
        correlation: 0.6,
        density: 0.3,
        support: 10,
        noise: 0.5,
        seed: 4,
    };
    generate(&spec).data
}

/// Integer weights from 0 to 3, and the data with each row repeated that often.
fn weights_and_repeats(data: &Dataset) -> (Vec<f64>, Dataset) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let weights: Vec<f64> = (0..data.y.len()).map(|_| f64::from(rng.random_range(0u32..4))).collect();
    let rows: Vec<usize> = weights.iter().enumerate().flat_map(|(i, &w)| std::iter::repeat_n(i, w as usize)).collect();
    (weights, data.select_rows(&rows))
}

fn params(scheduler: SchedulerKind, lambda: f64, intercept: bool) -> LassoParams {
    let mut p = LassoParams::new(Lambda::Value(lambda));
    p.scheduler = scheduler;
    p.intercept = intercept;
    p.tol = 1e-11;
    // Cyclic blocks of 4 coordinates fight on these correlated columns, weighted or repeated
    // alike (the relative gap stalls at 0.52): cyclic goes one coordinate at a time here.
    p.set_size = match scheduler {
        SchedulerKind::Sequential => None,
        SchedulerKind::Cyclic => Some(1),
        _ => Some(4),
    };
    p.split_min = Some(0);
    p.max_rounds = Some(50_000);
    p
}

#[test]
fn every_scheduler_reaches_the_optimum_of_the_repeated_rows() {
    let data = problem();
    let (weights, repeated) = weights_and_repeats(&data);
    let weighted = WeightedDataset::new(data.clone(), &weights).unwrap();
    for intercept in [false, true] {
        let lambda = lambda_max(&repeated, intercept) / 20.0;
        let (beta, beta0) = cyclic_descent(&repeated, lambda, intercept, 1e-13, 100_000);
        let optimum = objective(&repeated, &beta, beta0, lambda);
        for scheduler in ALL {
            for workers in [1, 2] {
                let checked = params(scheduler, lambda, intercept).check().unwrap();
                let model = fit(&weighted, &checked, &Embedded::new(workers).unwrap(), &mut |_| {}).unwrap().unwrap();
                let label = format!("{} P={workers} intercept={intercept}", scheduler.name());
                assert_eq!(model.status, Status::Converged, "{label}");
                let reached = objective(&repeated, &model.beta, model.intercept, lambda);
                assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
                assert!((reached - model.objective).abs() <= 1e-8 * optimum, "{label}: reported {}", model.objective);
                let kkt = kkt_violation(&repeated, &model.beta, model.intercept, lambda, intercept);
                assert!(kkt <= 1e-4 * lambda, "{label}: KKT violation {kkt} at lambda {lambda}");
                if intercept {
                    assert!((model.intercept - beta0).abs() <= 1e-5 * (1.0 + beta0.abs()), "{label}: intercept");
                } else {
                    assert_eq!(model.intercept, 0.0, "{label}");
                }
            }
        }
    }
}

#[test]
fn equal_weights_give_the_unweighted_model() {
    let data = problem();
    let weighted = WeightedDataset::new(data.clone(), &vec![2.5; data.y.len()]).unwrap();
    for intercept in [false, true] {
        let lambda = lambda_max(&data, intercept) / 20.0;
        for scheduler in [SchedulerKind::Block, SchedulerKind::Dynamic] {
            let checked = params(scheduler, lambda, intercept).check().unwrap();
            let launcher = Embedded::new(2).unwrap();
            let plain = fit(&data, &checked, &launcher, &mut |_| {}).unwrap().unwrap();
            let model = fit(&weighted, &checked, &launcher, &mut |_| {}).unwrap().unwrap();
            // Weights of 2.5 rescale to ones: the same rows, the same sums, the same model, bit for bit.
            assert_eq!(model.beta, plain.beta, "{} intercept={intercept}", scheduler.name());
            assert_eq!(model.intercept, plain.intercept, "{} intercept={intercept}", scheduler.name());
        }
    }
}

#[test]
fn bad_weights_and_the_logistic_loss_are_refused() {
    let data = problem();
    let n = data.y.len();
    let message = |w: Vec<f64>| WeightedDataset::new(data.clone(), &w).unwrap_err().to_string();
    assert!(message(vec![1.0; n - 1]).contains(&format!("{} sample weights for {n} rows", n - 1)));
    let mut negative = vec![1.0; n];
    negative[7] = -1.0;
    assert!(message(negative).contains("row 7"));
    let mut nan = vec![1.0; n];
    nan[3] = f64::NAN;
    assert!(message(nan).contains("row 3"));
    assert!(message(vec![0.0; n]).contains("at least one"));

    let mut labels = data.clone();
    labels.y.iter_mut().for_each(|y| *y = if *y > 0.0 { 1.0 } else { -1.0 });
    let weighted = WeightedDataset::new(labels, &vec![1.0; n]).unwrap();
    let mut p = LassoParams::new(Lambda::Ratio(0.1));
    p.loss = Loss::Logistic;
    let error = fit(&weighted, &p.check().unwrap(), &Embedded::new(1).unwrap(), &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("squared loss"), "{error}");
}
