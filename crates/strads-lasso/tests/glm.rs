//! Sparse logistic regression and the elastic net on the same engine, against plain sequential solvers
//! and the optimality conditions.

mod common;

use common::ALL;

use strads_data::Dataset;
use strads_lasso::reference::{
    glm_descent, glm_descent_positive, glm_kkt_violation, glm_kkt_violation_positive, glm_objective,
};
use strads_lasso::{
    GeneratorSpec, LabelForm, Lambda, LassoFit, LassoParams, LogisticUpdate, Loss, SchedulerKind, Status, WarmStart,
    check_labels, fit, generate, generate_classes,
};
use strads_runtime::Embedded;

fn spec(seed: u64) -> GeneratorSpec {
    GeneratorSpec { rows: 240, features: 120, block: 4, correlation: 0.3, density: 0.3, support: 10, noise: 0.5, seed }
}

fn classes(seed: u64) -> Dataset {
    generate_classes(&spec(seed)).data
}

fn run(data: &Dataset, params: LassoParams, workers: usize) -> LassoFit {
    let checked = params.check().unwrap();
    let launcher = Embedded::new(workers).unwrap();
    fit(data, &checked, &launcher, &mut |_| {}).unwrap().unwrap()
}

fn params(loss: Loss, scheduler: SchedulerKind, lambda: Lambda, l1_ratio: f64, intercept: bool) -> LassoParams {
    let mut p = LassoParams::new(lambda);
    p.loss = loss;
    p.l1_ratio = l1_ratio;
    p.scheduler = scheduler;
    p.intercept = intercept;
    p.tol = 1e-11;
    p.set_size = if scheduler == SchedulerKind::Sequential { None } else { Some(4) };
    // Block: split every working set between the workers, however small the test problem.
    p.split_min = Some(0);
    p
}

/// Every scheduler on 1, 2 and 4 workers reaches the sequential solver's objective to 1e-8 and
/// meets the optimality conditions.
fn check_every_scheduler(data: &Dataset, loss: Loss, l1_ratio: f64, intercept: bool) {
    // lambda_max as the aggregator computes it, from a run at lambda_max itself.
    let top = run(data, params(loss, SchedulerKind::Sequential, Lambda::Ratio(1.0), l1_ratio, intercept), 1);
    let above = params(loss, SchedulerKind::Sequential, Lambda::Value(top.lambda_max * 1.0001), l1_ratio, intercept);
    assert_eq!(run(data, above, 1).nnz(), 0, "above lambda_max every coefficient is zero");
    let below = params(loss, SchedulerKind::Sequential, Lambda::Value(top.lambda_max * 0.99), l1_ratio, intercept);
    assert!(run(data, below, 1).nnz() > 0, "below lambda_max some coefficient is not");
    let lambda = top.lambda_max / 10.0;
    let (beta, beta0) = glm_descent(data, loss, lambda, l1_ratio, intercept, 1e-14, 200_000);
    let optimum = glm_objective(data, loss, &beta, beta0, lambda, l1_ratio);
    let kkt = glm_kkt_violation(data, loss, &beta, beta0, lambda, l1_ratio, intercept);
    assert!(kkt < 1e-8 * lambda, "the reference is optimal: {kkt}");
    assert!(beta.iter().any(|&b| b != 0.0) && beta.contains(&0.0), "a sparse, nonzero optimum");
    for scheduler in ALL {
        for workers in [1, 2, 4] {
            let model = run(data, params(loss, scheduler, Lambda::Value(lambda), l1_ratio, intercept), workers);
            let label =
                format!("{} {} l1_ratio={l1_ratio} P={workers} intercept={intercept}", loss.name(), scheduler.name());
            assert_eq!(model.status, Status::Converged, "{label}");
            let reached = glm_objective(data, loss, &model.beta, model.intercept, lambda, l1_ratio);
            assert!(
                (reached - model.objective).abs() <= 1e-9 * optimum,
                "{label}: reported {} vs {reached}",
                model.objective
            );
            assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
            let kkt = glm_kkt_violation(data, loss, &model.beta, model.intercept, lambda, l1_ratio, intercept);
            assert!(kkt <= 1e-4 * lambda, "{label}: KKT violation {kkt} at lambda {lambda}");
            assert!(model.duality_gap <= 1e-11, "{label}: gap {}", model.duality_gap);
        }
    }
}

#[test]
fn logistic_regression_reaches_the_sequential_optimum_with_every_scheduler() {
    let data = classes(1);
    check_every_scheduler(&data, Loss::Logistic, 1.0, false);
    check_every_scheduler(&data, Loss::Logistic, 1.0, true);
}

#[test]
fn the_elastic_net_reaches_the_sequential_optimum_for_both_losses() {
    check_every_scheduler(&classes(2), Loss::Logistic, 0.5, true);
    let regression = generate(&spec(3)).data;
    check_every_scheduler(&regression, Loss::Squared, 0.5, false);
    check_every_scheduler(&regression, Loss::Squared, 0.3, true);
}

#[test]
fn strads_bound_update_reaches_the_same_optimum_as_newton_in_more_updates() {
    let data = classes(4);
    let mut newton = params(Loss::Logistic, SchedulerKind::Cyclic, Lambda::Ratio(0.1), 1.0, false);
    newton.tol = 1e-9;
    let mut bound = newton.clone();
    bound.update = LogisticUpdate::Bound;
    let (a, b) = (run(&data, newton, 2), run(&data, bound, 2));
    assert_eq!((a.status, b.status), (Status::Converged, Status::Converged));
    assert!((a.objective - b.objective).abs() <= 1e-8 * a.objective, "{} vs {}", a.objective, b.objective);
    assert!(a.updates < b.updates, "Newton {} updates, bound {}", a.updates, b.updates);
}

/// The block default's proximal Newton steps (one worker solves each working set, however many are
/// given) reach the sequential solver's optimum, in fewer coordinate updates than cyclic
/// single-coordinate Newton steps in their trust region.
#[test]
fn block_proximal_newton_reaches_the_optimum_inline_in_fewer_updates_than_trust_region_steps() {
    let data = classes(5);
    let top = run(&data, params(Loss::Logistic, SchedulerKind::Sequential, Lambda::Ratio(1.0), 1.0, false), 1);
    let lambda = top.lambda_max / 20.0;
    let (beta, beta0) = glm_descent(&data, Loss::Logistic, lambda, 1.0, false, 1e-14, 200_000);
    let optimum = glm_objective(&data, Loss::Logistic, &beta, beta0, lambda, 1.0);
    let mut cyclic = params(Loss::Logistic, SchedulerKind::Cyclic, Lambda::Value(lambda), 1.0, false);
    cyclic.tol = 1e-9;
    let trust_region = run(&data, cyclic, 1);
    let mut one: Option<LassoFit> = None;
    for workers in [1, 2, 4] {
        let mut block = LassoParams::new(Lambda::Value(lambda));
        block.loss = Loss::Logistic;
        block.tol = 1e-9;
        let model = run(&data, block, workers);
        assert_eq!(model.status, Status::Converged, "P={workers}");
        assert_eq!(model.split_rounds, 0, "P={workers}: the logistic default solves inline");
        let reached = glm_objective(&data, Loss::Logistic, &model.beta, model.intercept, lambda, 1.0);
        assert!((reached - optimum).abs() <= 1e-8 * optimum, "P={workers}: {reached} vs {optimum}");
        let kkt = glm_kkt_violation(&data, Loss::Logistic, &model.beta, model.intercept, lambda, 1.0, false);
        assert!(kkt <= 1e-3 * lambda, "P={workers}: KKT violation {kkt} at lambda {lambda}");
        assert!(
            model.updates < trust_region.updates,
            "P={workers}: {} updates against the trust region's {}",
            model.updates,
            trust_region.updates
        );
        // Every worker count takes the one-worker run's path, to the last bit.
        if let Some(one) = &one {
            assert_eq!(
                (&model.beta, model.intercept, model.updates),
                (&one.beta, one.intercept, one.updates),
                "P={workers}"
            );
        }
        one.get_or_insert(model);
    }
}

/// Features far from zero mean, with an intercept: the block default's Newton models move the
/// intercept with each coordinate (columns centred by the curvature-weighted means), so the fit
/// converges in as few rounds as on centred data, to the same optimum, on 1 and 2 workers alike.
/// At a fixed intercept, 5,000 rounds had not reached a gap of 1e-3.
#[test]
fn block_logistic_regression_converges_on_features_far_from_zero_mean() {
    let data = common::dense_shifted(&classes(6), 100.0);
    let (centred, means) = common::centred_features(&data);
    let top = run(&centred, params(Loss::Logistic, SchedulerKind::Sequential, Lambda::Ratio(1.0), 1.0, true), 1);
    let lambda = top.lambda_max / 10.0;
    let (beta, beta0) = glm_descent(&centred, Loss::Logistic, lambda, 1.0, true, 1e-14, 200_000);
    let beta0 = beta0 - means.iter().zip(&beta).map(|(m, b)| m * b).sum::<f64>();
    let optimum = glm_objective(&data, Loss::Logistic, &beta, beta0, lambda, 1.0);
    let mut one: Option<LassoFit> = None;
    for workers in [1, 2] {
        let mut p = LassoParams::new(Lambda::Value(lambda));
        p.loss = Loss::Logistic;
        p.intercept = true;
        p.tol = 1e-9;
        p.max_rounds = Some(30);
        let model = run(&data, p, workers);
        assert_eq!(model.status, Status::Converged, "P={workers}: {} rounds, gap {}", model.rounds, model.duality_gap);
        let reached = glm_objective(&data, Loss::Logistic, &model.beta, model.intercept, lambda, 1.0);
        assert!((reached - optimum).abs() <= 1e-8 * optimum, "P={workers}: {reached} vs {optimum}");
        assert!((model.intercept - beta0).abs() <= 1e-3 * beta0.abs().max(1.0), "{} vs {beta0}", model.intercept);
        if let Some(one) = &one {
            assert_eq!((&model.beta, model.intercept), (&one.beta, one.intercept), "P={workers}");
        }
        one.get_or_insert(model);
    }
}

#[test]
fn sequential_newton_steps_never_raise_the_objective() {
    let data = classes(5);
    for intercept in [false, true] {
        let mut p = params(Loss::Logistic, SchedulerKind::Sequential, Lambda::Ratio(0.05), 1.0, intercept);
        p.gap_every = strads_lasso::GapEvery::Rounds(7);
        let model = run(&data, p, 1);
        for pair in model.trace.windows(2) {
            assert!(pair[1].objective <= pair[0].objective * (1.0 + 1e-12), "{:?} then {:?}", pair[0], pair[1]);
        }
    }
}

#[test]
fn zero_one_labels_give_the_model_of_minus_one_one_labels() {
    let data = classes(6);
    let mut zero_one = data.clone();
    zero_one.y.iter_mut().for_each(|y| *y = y.max(0.0));
    assert_eq!(check_labels(&data.y).unwrap(), LabelForm::MinusOne);
    assert_eq!(check_labels(&zero_one.y).unwrap(), LabelForm::Zero);
    let p = params(Loss::Logistic, SchedulerKind::Dynamic, Lambda::Ratio(0.1), 1.0, true);
    let (a, b) = (run(&data, p.clone(), 2), run(&zero_one, p, 2));
    assert_eq!(a.beta, b.beta);
    assert_eq!(a.intercept, b.intercept);
}

#[test]
fn labels_that_are_not_two_classes_are_refused() {
    let data = classes(7);
    let refused = |change: &dyn Fn(&mut Vec<f64>)| {
        let mut bad = data.clone();
        change(&mut bad.y);
        let checked = params(Loss::Logistic, SchedulerKind::Cyclic, Lambda::Ratio(0.1), 1.0, false).check().unwrap();
        let launcher = Embedded::new(1).unwrap();
        fit(&bad, &checked, &launcher, &mut |_| {}).unwrap_err().to_string()
    };
    assert!(refused(&|y| y[3] = 2.0).contains("row 4: label 2 is not a class"));
    assert!(refused(&|y| y[0] = 0.5).contains("row 1: label 0.5"));
    assert!(refused(&|y| y[5] = 0.0).contains("mix -1"));
    assert!(refused(&|y| y.iter_mut().for_each(|v| *v = 1.0)).contains("one class"));
}

#[test]
fn logistic_and_elastic_net_paths_match_independent_fits() {
    let cases = [
        (Loss::Logistic, classes(8), 1.0),
        (Loss::Logistic, classes(8), 0.7),
        (Loss::Squared, generate(&spec(8)).data, 0.5),
    ];
    for (loss, data, l1_ratio) in cases {
        let mut p = params(loss, SchedulerKind::Dynamic, Lambda::Ratio(0.02), l1_ratio, true);
        p.path = Some(6);
        p.tol = 1e-10;
        let path = run(&data, p.clone(), 2);
        assert_eq!(path.path.len(), 6);
        assert_eq!(path.path[0].nnz, 0, "the path starts at lambda_max");
        for point in &path.path {
            assert_eq!(point.status, Status::Converged);
            let mut single = p.clone();
            single.path = None;
            single.lambda = Lambda::Value(point.lambda);
            let alone = run(&data, single, 2);
            let mut beta = vec![0.0; alone.beta.len()];
            for &(j, b) in &point.coefficients {
                beta[j as usize] = b;
            }
            let on_path = glm_objective(&data, loss, &beta, point.intercept, point.lambda, l1_ratio);
            assert!(
                (on_path - alone.objective).abs() <= 1e-8 * alone.objective,
                "lambda {}: path {on_path} vs alone {}",
                point.lambda,
                alone.objective
            );
        }
    }
}

#[test]
fn a_path_can_start_from_a_given_top() {
    let data = classes(9);
    let mut p = params(Loss::Logistic, SchedulerKind::Sequential, Lambda::Value(0.01), 1.0, false);
    p.path = Some(3);
    p.path_top = Some(0.04);
    let model = run(&data, p, 1);
    let lambdas: Vec<f64> = model.path.iter().map(|q| q.lambda).collect();
    assert_eq!(lambdas.len(), 3);
    assert!(
        (lambdas[0] - 0.04).abs() < 1e-15 && (lambdas[1] - 0.02).abs() < 1e-15 && (lambdas[2] - 0.01).abs() < 1e-15
    );
}

#[test]
fn gap_safe_screening_of_the_elastic_net_keeps_the_solution() {
    let data = generate(&spec(10)).data;
    let mut on = params(Loss::Squared, SchedulerKind::Dynamic, Lambda::Ratio(0.2), 0.5, true);
    on.screening = Some(true);
    let mut off = on.clone();
    off.screening = Some(false);
    let (a, b) = (run(&data, on, 2), run(&data, off, 2));
    assert!(a.screened > 0, "something was screened");
    assert_eq!(b.screened, 0);
    assert!((a.objective - b.objective).abs() <= 1e-9 * b.objective, "{} vs {}", a.objective, b.objective);
    let kkt = glm_kkt_violation(&data, Loss::Squared, &a.beta, a.intercept, a.lambda, 0.5, true);
    assert!(kkt <= 1e-4 * a.lambda, "KKT violation {kkt}");
}

#[test]
fn non_negative_fits_reach_the_projected_optimum_with_every_scheduler() {
    let regression = generate(&spec(21)).data;
    let labelled = classes(22);
    for (data, loss) in [(&regression, Loss::Squared), (&labelled, Loss::Logistic)] {
        for (l1_ratio, intercept) in [(1.0, false), (1.0, true), (0.5, true)] {
            let positive = |scheduler, lambda| {
                let mut p = params(loss, scheduler, lambda, l1_ratio, intercept);
                p.positive = true;
                p
            };
            // lambda_max of the constrained problem: the largest gradient entry pushing a coefficient up.
            let top = run(data, positive(SchedulerKind::Sequential, Lambda::Ratio(1.0)), 1);
            assert_eq!(
                run(data, positive(SchedulerKind::Sequential, Lambda::Value(top.lambda_max * 1.0001)), 1).nnz(),
                0
            );
            let lambda = top.lambda_max / 10.0;
            let (beta, beta0) = glm_descent_positive(data, loss, lambda, l1_ratio, intercept, 1e-14, 200_000);
            let optimum = glm_objective(data, loss, &beta, beta0, lambda, l1_ratio);
            assert!(glm_kkt_violation_positive(data, loss, &beta, beta0, lambda, l1_ratio, intercept) < 1e-8 * lambda);
            // The constraint binds: the unconstrained optimum has negative coefficients.
            let (free, free0) = glm_descent(data, loss, lambda, l1_ratio, intercept, 1e-14, 200_000);
            assert!(free.iter().any(|&b| b < 0.0), "{}: a problem where the constraint matters", loss.name());
            assert!(glm_objective(data, loss, &free, free0, lambda, l1_ratio) < optimum);
            for scheduler in ALL {
                for workers in [1, 2, 4] {
                    let model = run(data, positive(scheduler, Lambda::Value(lambda)), workers);
                    let label = format!(
                        "{} {} l1_ratio={l1_ratio} intercept={intercept} P={workers}",
                        loss.name(),
                        scheduler.name()
                    );
                    assert_eq!(model.status, Status::Converged, "{label}");
                    assert!(model.beta.iter().all(|&b| b >= 0.0), "{label}: a negative coefficient");
                    let reached = glm_objective(data, loss, &model.beta, model.intercept, lambda, l1_ratio);
                    assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
                    let kkt = glm_kkt_violation_positive(
                        data,
                        loss,
                        &model.beta,
                        model.intercept,
                        lambda,
                        l1_ratio,
                        intercept,
                    );
                    assert!(kkt <= 1e-4 * lambda, "{label}: KKT violation {kkt}");
                }
            }
        }
    }
}

#[test]
fn warm_starts_reach_the_optimum_and_start_from_it_at_once() {
    let regression = generate(&spec(31)).data;
    let labelled = classes(32);
    for (data, loss) in [(&regression, Loss::Squared), (&labelled, Loss::Logistic)] {
        for (l1_ratio, intercept) in [(1.0, false), (1.0, true), (0.7, true)] {
            let top = run(data, params(loss, SchedulerKind::Sequential, Lambda::Ratio(1.0), l1_ratio, intercept), 1);
            let lambda = top.lambda_max / 10.0;
            let (beta, beta0) = glm_descent(data, loss, lambda, l1_ratio, intercept, 1e-14, 200_000);
            let optimum = glm_objective(data, loss, &beta, beta0, lambda, l1_ratio);
            // A start far from the optimum: every coefficient nonzero, half of them negative.
            let far = WarmStart {
                coefficients: (0..beta.len()).map(|j| if j % 2 == 0 { 0.3 } else { -0.2 }).collect(),
                intercept: 0.7,
            };
            let cold_updates =
                run(data, params(loss, SchedulerKind::Block, Lambda::Value(lambda), l1_ratio, intercept), 1).updates;
            for scheduler in ALL {
                for workers in [1, 2, 4] {
                    let label = format!(
                        "{} {} l1_ratio={l1_ratio} intercept={intercept} P={workers}",
                        loss.name(),
                        scheduler.name()
                    );
                    let mut p = params(loss, scheduler, Lambda::Value(lambda), l1_ratio, intercept);
                    p.warm_start = Some(far.clone());
                    let model = run(data, p, workers);
                    assert_eq!(model.status, Status::Converged, "{label}");
                    let reached = glm_objective(data, loss, &model.beta, model.intercept, lambda, l1_ratio);
                    assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
                }
            }
            // From the previous solution, a fit has almost nothing left to do.
            let mut p = params(loss, SchedulerKind::Block, Lambda::Value(lambda), l1_ratio, intercept);
            p.warm_start = Some(WarmStart { coefficients: beta.clone(), intercept: beta0 });
            let again = run(data, p, 2);
            assert_eq!(again.status, Status::Converged);
            assert!(
                again.updates * 4 < cold_updates,
                "{}: {} updates warm, {cold_updates} cold",
                loss.name(),
                again.updates
            );
            let reached = glm_objective(data, loss, &again.beta, again.intercept, lambda, l1_ratio);
            assert!((reached - optimum).abs() <= 1e-8 * optimum);
        }
    }
}

#[test]
fn a_warm_start_that_does_not_fit_the_problem_is_refused() {
    let data = generate(&spec(33)).data;
    let features = data.x.cols();
    let with = |start: WarmStart, path: Option<usize>, positive: bool| {
        let mut p = params(Loss::Squared, SchedulerKind::Block, Lambda::Ratio(0.1), 1.0, true);
        p.warm_start = Some(start);
        p.path = path;
        p.positive = positive;
        p
    };
    let zeros = |n: usize| WarmStart { coefficients: vec![0.0; n], intercept: 0.0 };
    let launcher = Embedded::new(1).unwrap();
    let error =
        fit(&data, &with(zeros(features + 1), None, false).check().unwrap(), &launcher, &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains(&format!("{} coefficients for {features} features", features + 1)), "{error}");
    let error = with(zeros(features), Some(5), false).check().unwrap_err();
    assert!(error.to_string().contains("a warm start and a path"), "{error}");
    let mut negative = zeros(features);
    negative.coefficients[3] = -1.0;
    let error = with(negative, None, true).check().unwrap_err();
    assert!(error.to_string().contains("coefficient 3 is -1"), "{error}");
    let mut infinite = zeros(features);
    infinite.intercept = f64::NAN;
    assert!(matches!(
        with(infinite, None, false).check(),
        Err(strads_lasso::LassoError::Params(e)) if e.parameter == "warm_start"
    ));
}
