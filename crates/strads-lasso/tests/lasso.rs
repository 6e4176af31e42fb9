//! Scheduled Lasso against the plain sequential solver, the optimality conditions and each other.

mod common;

use common::{ALL, centred_features, dense_shifted, lambda_max};
use strads_data::Dataset;
use strads_lasso::reference::{cyclic_descent, kkt_violation, objective};
use strads_lasso::{
    GapEvery, GeneratorSpec, Lambda, LassoFit, LassoParams, PriorityRule, SchedulerKind, Status, fit, generate,
};
use strads_runtime::Embedded;

fn problem(correlation: f64, seed: u64) -> Dataset {
    let spec =
        GeneratorSpec { rows: 300, features: 200, block: 5, correlation, density: 0.3, support: 12, noise: 0.5, seed };
    generate(&spec).data
}

/// Blocks of ten features correlated at 0.9: where parallel updates of dependent coordinates fight.
fn strongly_correlated() -> Dataset {
    let spec = GeneratorSpec {
        rows: 200,
        features: 100,
        block: 10,
        correlation: 0.9,
        density: 1.0,
        support: 4,
        noise: 0.1,
        seed: 3,
    };
    generate(&spec).data
}

fn run(data: &Dataset, params: LassoParams, workers: usize) -> LassoFit {
    let checked = params.check().unwrap();
    let launcher = Embedded::new(workers).unwrap();
    fit(data, &checked, &launcher, &mut |_| {}).unwrap().unwrap()
}

fn params(scheduler: SchedulerKind, lambda: f64, intercept: bool) -> LassoParams {
    let mut p = LassoParams::new(Lambda::Value(lambda));
    p.scheduler = scheduler;
    p.intercept = intercept;
    p.tol = 1e-11;
    p.set_size = if scheduler == SchedulerKind::Sequential { None } else { Some(4) };
    // Block: split every working set between the workers, however small the test problem.
    p.split_min = Some(0);
    p
}

#[test]
fn every_scheduler_and_worker_count_reaches_the_sequential_optimum() {
    let data = problem(0.5, 1);
    for intercept in [false, true] {
        let lambda_max = lambda_max(&data, intercept);
        let lambda = lambda_max / 20.0;
        let (beta, beta0) = cyclic_descent(&data, lambda, intercept, 1e-13, 100_000);
        let optimum = objective(&data, &beta, beta0, lambda);
        assert!(kkt_violation(&data, &beta, beta0, lambda, intercept) < 1e-8 * lambda_max);
        for scheduler in ALL {
            for workers in [1, 2, 4] {
                let model = run(&data, params(scheduler, lambda, intercept), workers);
                let label = format!("{} P={workers} intercept={intercept}", scheduler.name());
                assert_eq!(model.status, Status::Converged, "{label}");
                let reached = objective(&data, &model.beta, model.intercept, lambda);
                assert!((reached - model.objective).abs() <= 1e-9 * optimum, "{label}: reported objective is off");
                assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
                let kkt = kkt_violation(&data, &model.beta, model.intercept, lambda, intercept);
                assert!(kkt <= 1e-4 * lambda, "{label}: KKT violation {kkt} at lambda {lambda}");
                assert!(model.duality_gap <= 1e-11, "{label}");
            }
        }
    }
}

#[test]
fn the_dynamic_scheduler_needs_fewer_updates_than_shotgun_on_correlated_data() {
    let data = problem(0.9, 2);
    let lambda_max = lambda_max(&data, false);
    let target = {
        let (beta, beta0) = cyclic_descent(&data, lambda_max / 50.0, false, 1e-13, 100_000);
        objective(&data, &beta, beta0, lambda_max / 50.0)
    };
    for workers in [1, 2] {
        let updates = |scheduler| {
            let mut p = params(scheduler, lambda_max / 50.0, false);
            p.set_size = Some(8);
            p.screening = Some(false);
            p.tol = 1e-6;
            p.gap_every = GapEvery::Rounds(5);
            p.max_rounds = Some(200_000);
            let model = run(&data, p, workers);
            let reached = model.trace.iter().find(|t| t.objective <= target * (1.0 + 1e-4));
            reached.map(|t| t.updates).unwrap_or(u64::MAX)
        };
        let dynamic = updates(SchedulerKind::Dynamic);
        let shotgun = updates(SchedulerKind::Shotgun);
        assert!(dynamic < shotgun, "P={workers}: dynamic {dynamic} updates, shotgun {shotgun}");
    }
}

#[test]
fn shotgun_diverges_where_the_dependency_check_does_not() {
    // Strongly correlated features updated many at a time: Shotgun's parallel updates overshoot.
    let data = strongly_correlated();
    let lambda_max = lambda_max(&data, false);
    let mut p = params(SchedulerKind::Shotgun, lambda_max / 10.0, false);
    p.set_size = Some(32);
    p.tol = 1e-8;
    p.max_rounds = Some(20_000);
    let shotgun = run(&data, p.clone(), 2);
    assert_eq!(shotgun.status, Status::Diverged, "gap {}", shotgun.duality_gap);
    p.scheduler = SchedulerKind::Dynamic;
    let dynamic = run(&data, p, 2);
    assert_eq!(dynamic.status, Status::Converged, "{} rounds, gap {}", dynamic.rounds, dynamic.duality_gap);
    assert!(dynamic.rejected > 0);
}

#[test]
fn block_rounds_split_between_workers_and_reach_the_optimum() {
    // Weakly correlated columns: split rounds are kept. Strongly correlated ones: they may be
    // dropped and solved by one worker; either way the optimum is the sequential solver's.
    let tall = GeneratorSpec {
        rows: 3000,
        features: 60,
        block: 5,
        correlation: 0.2,
        density: 0.5,
        support: 20,
        noise: 0.5,
        seed: 5,
    };
    for (data, weak) in [(generate(&tall).data, true), (strongly_correlated(), false)] {
        let lambda = lambda_max(&data, false) / 30.0;
        let (beta, beta0) = cyclic_descent(&data, lambda, false, 1e-13, 100_000);
        let optimum = objective(&data, &beta, beta0, lambda);
        for workers in [1, 2, 4] {
            let model = run(&data, params(SchedulerKind::Block, lambda, false), workers);
            let label = format!("weak={weak} P={workers}");
            assert_eq!(model.status, Status::Converged, "{label}");
            let reached = objective(&data, &model.beta, model.intercept, lambda);
            assert!((reached - optimum).abs() <= 1e-8 * optimum, "{label}: {reached} vs {optimum}");
            assert!(kkt_violation(&data, &model.beta, model.intercept, lambda, false) <= 1e-4 * lambda, "{label}");
            if workers == 1 {
                assert_eq!((model.split_rounds, model.dropped_rounds), (0, 0), "{label}");
            } else if weak {
                // The probe is kept, and the rounds after it split too (a probe stops at its pass
                // cap, which does not make its groups settled).
                assert!(
                    model.split_rounds > 1,
                    "{label}: {} kept, {} dropped",
                    model.split_rounds,
                    model.dropped_rounds
                );
            }
        }
    }
    // By default one worker solves every working set, even one that splits when asked to.
    let data = generate(&tall).data;
    let lambda = lambda_max(&data, false) / 30.0;
    let mut p = params(SchedulerKind::Block, lambda, false);
    p.split_min = None;
    let model = run(&data, p, 2);
    assert_eq!((model.split_rounds, model.dropped_rounds, model.split_min), (0, 0, None));
    assert!(kkt_violation(&data, &model.beta, model.intercept, lambda, false) <= 1e-4 * lambda);
}

/// Features far from zero mean, with an intercept: every scheduler takes its steps along centred
/// columns (the intercept moving with each update) and converges as on centred data. Stepping at
/// a fixed intercept, the coefficients and the intercept are coupled through the columns' means
/// and thousands of rounds did not reach the gap.
#[test]
fn features_far_from_zero_mean_converge_with_an_intercept() {
    let data = dense_shifted(&problem(0.5, 9), 100.0);
    // The reference: the sequential solver on the centred data, whose intercept is then exact.
    let (mut centred, means) = centred_features(&data);
    let y_mean = data.y.iter().sum::<f64>() / data.y.len() as f64;
    centred.y.iter_mut().for_each(|y| *y -= y_mean);
    let lambda = lambda_max(&data, true) / 20.0;
    let (beta, _) = cyclic_descent(&centred, lambda, false, 1e-13, 100_000);
    let beta0 = y_mean - means.iter().zip(&beta).map(|(m, b)| m * b).sum::<f64>();
    let optimum = objective(&data, &beta, beta0, lambda);
    for scheduler in ALL {
        let mut p = params(scheduler, lambda, true);
        p.tol = 1e-9;
        p.max_rounds = Some(if scheduler == SchedulerKind::Block { 50 } else { 20_000 });
        let model = run(&data, p, 2);
        let label = scheduler.name();
        assert_eq!(model.status, Status::Converged, "{label}: {} rounds, gap {}", model.rounds, model.duality_gap);
        let reached = objective(&data, &model.beta, model.intercept, lambda);
        assert!((reached - optimum).abs() <= 1e-7 * optimum, "{label}: {reached} vs {optimum}");
        assert!(
            (model.intercept - beta0).abs() <= 1e-4 * beta0.abs().max(1.0),
            "{label}: intercept {} vs {beta0}",
            model.intercept
        );
    }
}

/// Block mode by default (one worker solves each working set, the others share the gap checks'
/// column sums) takes the one-worker run's path: the same coefficients, bit for bit, on any number
/// of workers, for the Lasso and the elastic net, with and without an intercept.
#[test]
fn block_default_gives_the_one_worker_model_on_any_number_of_workers() {
    let data = problem(0.7, 6);
    for (l1_ratio, intercept) in [(1.0, false), (1.0, true), (0.5, true)] {
        let mut p = LassoParams::new(Lambda::Ratio(0.01));
        p.l1_ratio = l1_ratio;
        p.intercept = intercept;
        p.tol = 1e-10;
        let one = run(&data, p.clone(), 1);
        assert_eq!(one.status, Status::Converged);
        for workers in [2, 3, 4] {
            let model = run(&data, p.clone(), workers);
            let label = format!("l1_ratio={l1_ratio} intercept={intercept} P={workers}");
            assert_eq!(model.beta, one.beta, "{label}");
            assert_eq!(
                (model.intercept, model.updates, model.rounds),
                (one.intercept, one.updates, one.rounds),
                "{label}"
            );
        }
    }
}

/// A problem of more active nonzeros than worker 0 checks alone: its first gap checks are shared
/// by the workers (each sums its columns), the later ones, once screening has left fewer, are
/// worker 0's; the model is still the one-worker model bit for bit, and reaches the optimum.
#[test]
fn block_gap_checks_shared_or_alone_give_the_one_worker_model() {
    let spec = GeneratorSpec {
        rows: 1200,
        features: 500,
        block: 5,
        correlation: 0.5,
        density: 1.0,
        support: 10,
        noise: 0.5,
        seed: 8,
    };
    let data = generate(&spec).data;
    let mut p = LassoParams::new(Lambda::Ratio(0.05));
    p.tol = 1e-10;
    let one = run(&data, p.clone(), 1);
    assert_eq!(one.status, Status::Converged);
    assert_eq!(one.shared_gap_checks, 0);
    for workers in [2, 3] {
        let model = run(&data, p.clone(), workers);
        assert!(
            model.shared_gap_checks >= 1 && model.shared_gap_checks < model.gap_checks,
            "P={workers}: {} shared of {} checks",
            model.shared_gap_checks,
            model.gap_checks
        );
        assert_eq!(model.beta, one.beta, "P={workers}");
        assert_eq!((model.updates, model.rounds), (one.updates, one.rounds), "P={workers}");
    }
    let kkt = kkt_violation(&data, &one.beta, 0.0, one.lambda, false);
    assert!(kkt <= 1e-4 * one.lambda, "KKT violation {kkt} at lambda {}", one.lambda);
}

#[test]
fn the_same_seed_and_workers_give_identical_coefficients() {
    let data = problem(0.7, 4);
    for scheduler in ALL {
        for (workers, depth) in [(1, 0), (3, 0), (2, 2)] {
            let mut p = params(scheduler, 0.05, true);
            p.seed = 11;
            p.tol = 1e-7;
            p.pipeline_depth = depth;
            // A pipelined static plan updates consecutive, correlated coordinates concurrently and
            // need not converge; determinism holds either way.
            p.max_rounds = Some(20_000);
            let a = run(&data, p.clone(), workers);
            let b = run(&data, p, workers);
            assert_eq!(a.beta, b.beta, "{} P={workers} s={depth}", scheduler.name());
            assert_eq!(a.intercept, b.intercept);
            assert_eq!(a.updates, b.updates);
        }
    }
}

#[test]
fn pipelined_rounds_still_reach_the_optimum() {
    let data = problem(0.3, 5);
    let lambda = 0.02;
    let (beta, beta0) = cyclic_descent(&data, lambda, false, 1e-13, 100_000);
    let optimum = objective(&data, &beta, beta0, lambda);
    for scheduler in [SchedulerKind::Dynamic, SchedulerKind::Cyclic] {
        for depth in [1, 3] {
            let mut p = params(scheduler, lambda, false);
            p.pipeline_depth = depth;
            let model = run(&data, p, 2);
            let reached = objective(&data, &model.beta, model.intercept, lambda);
            assert_eq!(model.status, Status::Converged);
            assert!((reached - optimum).abs() <= 1e-8 * optimum, "{} s={depth}", scheduler.name());
        }
    }
}

#[test]
fn screening_and_priority_rules_do_not_change_the_solution() {
    let data = problem(0.5, 6);
    let lambda = 0.05;
    let (beta, beta0) = cyclic_descent(&data, lambda, true, 1e-13, 100_000);
    let optimum = objective(&data, &beta, beta0, lambda);
    let mut screened_any = false;
    for screening in [false, true] {
        for priority in [PriorityRule::Absolute { base_fraction: 0.01 }, PriorityRule::Squared { eta: 1e-6 }] {
            let mut p = params(SchedulerKind::Dynamic, lambda, true);
            p.screening = Some(screening);
            p.priority = priority;
            let model = run(&data, p, 2);
            screened_any |= model.screened > 0;
            let reached = objective(&data, &model.beta, model.intercept, lambda);
            assert!((reached - optimum).abs() <= 1e-8 * optimum, "screening={screening} {priority:?}");
            if screening {
                // Every screened coordinate is zero at the optimum.
                assert!(model.screened <= beta.iter().filter(|&&b| b == 0.0).count());
            }
        }
    }
    assert!(screened_any, "gap-safe screening removed nothing");
}

#[test]
fn lambda_at_or_above_lambda_max_gives_all_zero_coefficients() {
    let data = problem(0.5, 7);
    for scheduler in ALL {
        let mut p = params(scheduler, 1.0, true);
        p.lambda = Lambda::Ratio(1.0);
        let model = run(&data, p, 2);
        assert_eq!(model.nnz(), 0, "{}", scheduler.name());
        let expected = lambda_max(&data, true);
        assert!((model.lambda_max - expected).abs() <= 1e-12 * expected, "the statistics round finds lambda_max");
        assert_eq!(model.status, Status::Converged);
        let mean = data.y.iter().sum::<f64>() / data.y.len() as f64;
        assert!((model.intercept - mean).abs() < 1e-12);
    }
}

#[test]
fn budgets_stop_the_run_with_a_final_gap_check() {
    let data = problem(0.5, 8);
    let mut p = params(SchedulerKind::Sequential, 0.01, false);
    p.max_rounds = Some(50);
    let model = run(&data, p, 2);
    assert_eq!(model.status, Status::MaxRounds);
    assert_eq!(model.rounds, 50);
    let reached = objective(&data, &model.beta, model.intercept, 0.01);
    assert!((reached - model.objective).abs() <= 1e-12 * reached, "the final check measures the final model");
}

/// Regression: with candidates considered strictly by priority and `L'` covering every eligible
/// coordinate, the top coordinate of a correlated block won every round and its neighbours were
/// never updated, so the gap stalled at 2e-2. Considering them in draw order lets everyone in.
#[test]
fn drawn_candidate_order_does_not_starve_dependent_coordinates() {
    let data = strongly_correlated();
    let lambda_max = lambda_max(&data, false);
    let mut p = params(SchedulerKind::Dynamic, lambda_max / 10.0, false);
    p.set_size = Some(32);
    p.tol = 1e-8;
    p.max_rounds = Some(20_000);
    let drawn = run(&data, p.clone(), 1);
    assert_eq!(drawn.status, Status::Converged, "gap {}", drawn.duality_gap);
    p.candidate_order = strads_engine::CandidateOrder::Priority;
    let by_priority = run(&data, p, 1);
    assert!(by_priority.duality_gap > 1e3 * drawn.duality_gap, "strict priority order no longer stalls here");
}

/// The same problem stored densely (as read from CSV) reaches the same optimum.
#[test]
fn dense_features_reach_the_same_optimum_as_sparse_ones() {
    let sparse = problem(0.5, 9);
    let strads_data::Features::Sparse(rows) = &sparse.x else { unreachable!("the generator makes sparse rows") };
    let (n, p) = rows.shape();
    let mut data = vec![0.0; n * p];
    for (i, row) in rows.outer_iterator().enumerate() {
        for (j, v) in row.iter() {
            data[i * p + j] = *v;
        }
    }
    let dense = Dataset {
        x: strads_data::Features::Dense(strads_data::DenseRows { rows: n, cols: p, data }),
        y: sparse.y.clone(),
        feature_names: None,
    };
    let lambda = 0.03;
    let (beta, beta0) = cyclic_descent(&sparse, lambda, true, 1e-13, 100_000);
    let optimum = objective(&sparse, &beta, beta0, lambda);
    for scheduler in ALL {
        for workers in [1, 2] {
            let model = run(&dense, params(scheduler, lambda, true), workers);
            let reached = objective(&sparse, &model.beta, model.intercept, lambda);
            assert!((reached - optimum).abs() <= 1e-8 * optimum, "{} P={workers}", scheduler.name());
        }
    }
}

#[test]
fn columns_handed_over_give_the_model_of_the_rows_on_every_scheduler() {
    let rows = problem(0.5, 4);
    let dense = dense_shifted(&rows, 0.0);
    let lambda = 0.2 * lambda_max(&rows, true);
    for data in [&rows, &dense] {
        let columns = Dataset {
            x: strads_data::Features::Columns(std::sync::Arc::new(data.x.to_columns())),
            y: data.y.clone(),
            feature_names: None,
        };
        for scheduler in ALL {
            for workers in [1, 2] {
                let from_rows = run(data, params(scheduler, lambda, true), workers);
                let from_columns = run(&columns, params(scheduler, lambda, true), workers);
                // The same columns in the same order: the same model to the last bit.
                assert_eq!(from_columns.beta, from_rows.beta, "{} P={workers}", scheduler.name());
                assert_eq!(from_columns.intercept, from_rows.intercept);
            }
        }
    }
}

#[test]
fn the_coefficient_tolerance_and_the_time_budget_stop_a_run() {
    let data = problem(0.5, 10);
    let mut p = params(SchedulerKind::Cyclic, 0.01, false);
    p.tol = 0.0;
    p.coef_tol = Some(1e-3);
    let model = run(&data, p, 1);
    assert_eq!(model.status, Status::CoefficientsStable);
    let mut p = params(SchedulerKind::Sequential, 0.001, false);
    p.tol = 0.0;
    p.max_seconds = Some(0.2);
    let started = std::time::Instant::now();
    let model = run(&data, p, 2);
    assert_eq!(model.status, Status::MaxSeconds);
    assert!(started.elapsed().as_secs_f64() < 5.0);
}

#[test]
fn anderson_extrapolation_keeps_the_optimum_and_speeds_up_cyclic_descent() {
    let data = problem(0.7, 12);
    let lambda = 0.01;
    let (beta, beta0) = cyclic_descent(&data, lambda, true, 1e-13, 100_000);
    let optimum = objective(&data, &beta, beta0, lambda);
    let mut cyclic = params(SchedulerKind::Cyclic, lambda, true);
    cyclic.set_size = Some(1);
    cyclic.gap_every = GapEvery::Rounds(2000);
    let plain = run(&data, cyclic.clone(), 1);
    cyclic.anderson = Some(5);
    for workers in [1, 2] {
        let extrapolated = run(&data, cyclic.clone(), workers);
        let reached = objective(&data, &extrapolated.beta, extrapolated.intercept, lambda);
        assert!((reached - optimum).abs() <= 1e-8 * optimum, "P={workers}");
        assert!(extrapolated.extrapolations.0 > 0, "no extrapolation was kept");
        assert!(extrapolated.updates < plain.updates, "{} vs {}", extrapolated.updates, plain.updates);
    }
    // Refused or kept, extrapolation never leads the other schedulers astray.
    for scheduler in [SchedulerKind::Dynamic, SchedulerKind::Shotgun] {
        let mut p = params(scheduler, lambda, true);
        p.anderson = Some(3);
        p.pipeline_depth = 2;
        let model = run(&data, p, 2);
        let reached = objective(&data, &model.beta, model.intercept, lambda);
        assert!((reached - optimum).abs() <= 1e-8 * optimum, "{}", scheduler.name());
    }
}

#[test]
fn a_regularization_path_matches_independent_fits_with_fewer_updates() {
    let data = problem(0.5, 13);
    let points = 6;
    for scheduler in [SchedulerKind::Dynamic, SchedulerKind::Cyclic] {
        for workers in [1, 2] {
            let mut p = params(scheduler, 1.0, true);
            p.lambda = Lambda::Ratio(0.01);
            p.tol = 1e-10;
            p.path = Some(points);
            // Blocks of consecutive correlated coordinates updated together oscillate at small lambda.
            p.set_size = Some(1);
            p.max_seconds = Some(60.0);
            let path = run(&data, p.clone(), workers);
            assert_eq!(path.path.len(), points, "{} P={workers}", scheduler.name());
            assert_eq!(path.status, Status::Converged);
            let mut independent_updates = 0;
            for (i, point) in path.path.iter().enumerate() {
                assert_eq!(point.status, Status::Converged);
                if i > 0 {
                    assert!(point.lambda < path.path[i - 1].lambda, "the grid decreases");
                }
                let mut single = p.clone();
                single.path = None;
                single.lambda = Lambda::Value(point.lambda);
                let alone = run(&data, single, workers);
                independent_updates += alone.updates;
                let mut beta = vec![0.0; alone.beta.len()];
                for &(j, v) in &point.coefficients {
                    beta[j as usize] = v;
                }
                let on_path = objective(&data, &beta, point.intercept, point.lambda);
                let reached = objective(&data, &alone.beta, alone.intercept, point.lambda);
                assert!((on_path - reached).abs() <= 1e-8 * reached, "lambda {}", point.lambda);
            }
            assert!((path.path[0].lambda - path.lambda_max).abs() <= 1e-12 * path.lambda_max);
            assert_eq!(path.path[0].nnz, 0, "nothing is active at lambda_max");
            assert!(
                path.updates < independent_updates,
                "{} P={workers}: warm starts took {} updates, independent fits {independent_updates}",
                scheduler.name(),
                path.updates
            );
        }
    }
}

/// Cross-validation holds every row out exactly once, fits every fold on the path's grid, and
/// moves the fit to the lambda of the least mean held-out error, which on a sparse truth with
/// noise lies inside the path, not at its ends.
#[test]
fn cross_validation_scores_each_fold_and_picks_the_least_mean_held_out_error() {
    let data = problem(0.3, 11);
    let mut p = params(SchedulerKind::Block, 0.0, true);
    p.lambda = Lambda::Ratio(1e-3);
    p.path = Some(20);
    p.tol = 1e-9;
    let checked = p.check().unwrap();
    let launcher = Embedded::new(2).unwrap();
    let mut full = fit(&data, &checked, &launcher, &mut |_| {}).unwrap().unwrap();
    let path = full.path.clone();
    let mut held_out_rows = 0;
    let mut fold_fits = Vec::new();
    let validation = strads_lasso::cross_validate(&data, &checked, &mut full, 5, 7, |fold, rows, params| {
        held_out_rows += data.y.len() - rows.y.len();
        let fitted = fit(rows, params, &launcher, &mut |_| {})?.expect("embedded leads");
        fold_fits.push((fold, fitted.clone()));
        Ok::<_, strads_lasso::LassoError>(fitted)
    })
    .unwrap();
    assert_eq!(held_out_rows, data.y.len(), "every row is held out once");
    assert_eq!(fold_fits.iter().map(|(k, _)| *k).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    for (_, fold_fit) in &fold_fits {
        let lambdas: Vec<f64> = fold_fit.path.iter().map(|q| q.lambda).collect();
        assert_eq!(lambdas, path.iter().map(|q| q.lambda).collect::<Vec<_>>(), "each fold fits the same grid");
    }
    assert_eq!(validation.rows.len(), path.len());
    let means = validation.means();
    let best = validation.best;
    assert!(means.iter().all(|&m| m >= means[best]));
    assert!(best > 0 && best + 1 < path.len(), "chose lambda {best} of {}: {means:?}", path.len());
    assert_eq!(full.lambda, path[best].lambda);
    assert_eq!(full.beta, strads_lasso::dense(&path[best].coefficients, full.beta.len()));
    assert_eq!(full.intercept, path[best].intercept);

    let too_many = strads_lasso::cross_validate(&data, &checked, &mut full, data.y.len() + 1, 7, |_, _, _| {
        Err::<LassoFit, _>(strads_lasso::LassoError::NoPath)
    });
    assert!(matches!(too_many, Err(strads_lasso::LassoError::Folds { .. })));
}

/// The inline launcher (every worker on the calling thread) gives the threaded runtime's model bit
/// for bit for the same number of workers, pipelined rounds included, and `LassoParams::fit` is
/// the one-worker fit.
#[test]
fn inline_runs_give_the_threaded_model_bit_for_bit() {
    let data = problem(0.5, 4);
    let lambda = lambda_max(&data, true) / 10.0;
    for scheduler in [SchedulerKind::Block, SchedulerKind::Dynamic, SchedulerKind::Cyclic] {
        for workers in [1, 3] {
            let mut p = params(scheduler, lambda, true);
            p.pipeline_depth = if scheduler == SchedulerKind::Cyclic { 2 } else { 0 };
            let checked = p.clone().check().unwrap();
            let threads = run(&data, p, workers);
            let inline =
                strads_lasso::fit_model(&data, &checked, &strads_engine::Inline::new(workers).unwrap(), &mut |_| {})
                    .unwrap();
            let label = format!("{} P={workers}", scheduler.name());
            assert_eq!(inline.beta, threads.beta, "{label}");
            assert_eq!((inline.intercept, inline.rounds), (threads.intercept, threads.rounds), "{label}");
        }
    }
    let p = params(SchedulerKind::Block, lambda, true);
    let one = run(&data, p.clone(), 1);
    let convenient = p.fit(&data).unwrap();
    assert_eq!((convenient.beta, convenient.intercept), (one.beta, one.intercept));
}
