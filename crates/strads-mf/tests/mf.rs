//! MF against its oracles: the sequential reference, monotone descent, stationarity, recovery of a
//! known low-rank matrix, the fallback for cold users and items, determinism.

use strads_mf::generate::{GeneratorSpec, generate};
use strads_mf::ratings::{Ids, Rating};
use strads_mf::reference::{self, Plain};
use strads_mf::{Algorithm, Bias, CheckedParams, MfFit, MfParams, Model, TracePoint, fit};
use strads_runtime::Embedded;

const ALGORITHMS: [Algorithm; 3] = [Algorithm::Ccdpp, Algorithm::Ccd, Algorithm::Als];

struct Problem {
    train: Vec<Rating>,
    test: Vec<Rating>,
    users: usize,
    items: usize,
}

/// A generated problem with a test set that also holds a user and an item never seen in training.
fn problem(users: usize, items: usize, rank: usize, density: f64, noise: f64, seed: u64) -> Problem {
    let g = generate(&GeneratorSpec { users, items, rank, density, noise, seed });
    let (mut train, mut test) = strads_mf::ratings::split(&g.ratings, 0.2, seed).unwrap();
    // Keep every user and item in training, so the only cold ones are those added below.
    let mut seen_u = vec![false; users];
    let mut seen_i = vec![false; items];
    for r in &train {
        seen_u[r.user as usize] = true;
        seen_i[r.item as usize] = true;
    }
    let (back, kept): (Vec<Rating>, Vec<Rating>) =
        test.into_iter().partition(|r| !seen_u[r.user as usize] || !seen_i[r.item as usize]);
    train.extend(back);
    test = kept;
    test.push(Rating { user: users as u32, item: 0, value: 1.0 });
    test.push(Rating { user: 0, item: items as u32, value: -1.0 });
    Problem { train, test, users: users + 1, items: items + 1 }
}

fn params(algorithm: Algorithm, bias: Bias, weighted: bool, iterations: usize, workers: usize) -> CheckedParams {
    MfParams {
        algorithm,
        rank: 4,
        lambda: Some(if weighted { 0.05 } else { 0.5 }),
        weighted_lambda: weighted,
        lambda_exponent: 1.0,
        bias,
        iterations,
        inner_iterations: 2,
        seed: 7,
        init_scale: Some(0.3),
        patience: 0,
        tol: 0.0,
        eval_every: 1,
        trace_half_steps: false,
        implicit: None,
        cg_steps: Some(0),
    }
    .check(workers)
    .unwrap()
}

fn run(p: &Problem, params: &CheckedParams) -> (MfFit, Vec<TracePoint>) {
    let launcher = Embedded::new(params.workers).unwrap();
    let mut seen = Vec::new();
    let fit = fit(&p.train, &p.test, p.users, p.items, params, &launcher, &mut |t| seen.push(*t)).unwrap().unwrap();
    (fit, seen)
}

/// Ids `u0, u1, ...` and `i0, i1, ...` for the problem's users and items.
fn ids_of(p: &Problem) -> Ids {
    let mut ids = Ids::default();
    for u in 0..p.users {
        ids.user(&format!("u{u}"));
    }
    for i in 0..p.items {
        ids.item(&format!("i{i}"));
    }
    ids
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn every_algorithm_and_worker_count_equals_the_sequential_reference() {
    let p = problem(40, 30, 3, 0.35, 0.1, 1);
    for algorithm in ALGORITHMS {
        let cases = [
            (Bias::None, false, 1.0),
            (Bias::Global, true, 1.0),
            (Bias::Full, false, 1.0),
            (Bias::Full, true, 1.0),
            (Bias::Full, true, 0.5),
            (Bias::None, true, 0.3),
        ];
        for (bias, weighted, exponent) in cases {
            let with =
                |workers| CheckedParams { lambda_exponent: exponent, ..params(algorithm, bias, weighted, 4, workers) };
            let one = with(1);
            let plain = reference::fit(&p.train, p.users, p.items, &one);
            let (base, _) = run(&p, &one);
            let label = format!("{algorithm:?} {bias:?} weighted={weighted} exponent={exponent}");
            let scale = plain.w.iter().chain(&plain.h).fold(1.0f64, |m, x| m.max(x.abs()));
            assert!(max_abs_diff(&base.factors.w, &plain.w) <= 1e-9 * scale, "{label}: W differs from the reference");
            assert!(max_abs_diff(&base.factors.h, &plain.h) <= 1e-9 * scale, "{label}: H differs from the reference");
            let objective = reference::objective(&p.train, p.users, p.items, &plain, &one);
            let traced = base.last().unwrap().objective;
            assert!((traced - objective).abs() <= 1e-9 * objective, "{label}: objective {traced} vs {objective}");
            for workers in [2, 4] {
                let (other, _) = run(&p, &with(workers));
                assert!(max_abs_diff(&other.factors.w, &base.factors.w) <= 1e-12 * scale, "{label} P={workers}: W");
                assert!(max_abs_diff(&other.factors.h, &base.factors.h) <= 1e-12 * scale, "{label} P={workers}: H");
                let (a, b) = (other.last().unwrap(), base.last().unwrap());
                assert!((a.objective - b.objective).abs() <= 1e-9 * b.objective, "{label} P={workers}: objective");
            }
        }
    }
}

#[test]
fn als_by_conjugate_gradient_equals_the_sequential_reference_and_reaches_the_exact_solve() {
    let p = problem(40, 30, 3, 0.35, 0.1, 3);
    for (bias, weighted) in [(Bias::None, false), (Bias::Global, true), (Bias::Full, true)] {
        let label = format!("{bias:?} weighted={weighted}");
        let cg = |steps: usize, workers: usize| {
            let mut checked = params(Algorithm::Als, bias, weighted, 4, workers);
            checked.cg_steps = Some(steps);
            checked
        };
        let one = cg(3, 1);
        let plain = reference::fit(&p.train, p.users, p.items, &one);
        let (base, _) = run(&p, &one);
        let scale = plain.w.iter().chain(&plain.h).fold(1.0f64, |m, x| m.max(x.abs()));
        assert!(max_abs_diff(&base.factors.w, &plain.w) <= 1e-9 * scale, "{label}: W differs from the reference");
        assert!(max_abs_diff(&base.factors.h, &plain.h) <= 1e-9 * scale, "{label}: H differs from the reference");
        let objective = reference::objective(&p.train, p.users, p.items, &plain, &one);
        assert!((base.last().unwrap().objective - objective).abs() <= 1e-9 * objective, "{label}: objective");
        for workers in [2, 4] {
            let (other, _) = run(&p, &cg(3, workers));
            assert!(max_abs_diff(&other.factors.w, &base.factors.w) <= 1e-12 * scale, "{label} P={workers}: W");
            assert!(max_abs_diff(&other.factors.h, &base.factors.h) <= 1e-12 * scale, "{label} P={workers}: H");
        }
        // As many steps as free coordinates: CG solves the row's system, as Cholesky does.
        let free = 4 + usize::from(bias == Bias::Full);
        let (exact, _) = run(&p, &params(Algorithm::Als, bias, weighted, 4, 2));
        let (full, _) = run(&p, &cg(free, 2));
        assert!(max_abs_diff(&full.factors.w, &exact.factors.w) <= 1e-6 * scale, "{label}: CG in {free} steps");
    }
}

#[test]
fn the_objective_never_increases_across_half_steps() {
    let p = problem(50, 40, 3, 0.3, 0.2, 2);
    for algorithm in ALGORITHMS {
        for (bias, weighted) in [(Bias::None, false), (Bias::Full, true), (Bias::Global, false)] {
            for workers in [1, 3] {
                let mut checked = params(algorithm, bias, weighted, 5, workers);
                checked.trace_half_steps = true;
                let (_, trace) = run(&p, &checked);
                let steps = match algorithm {
                    Algorithm::Ccdpp => 5 * (4 * 2 * 2 + if bias == Bias::Full { 2 } else { 0 }),
                    _ => 5 * 2,
                };
                assert_eq!(trace.last().unwrap().half_steps, steps as u64);
                assert!(trace.len() > steps, "{algorithm:?}: an evaluation after every half-step");
                for pair in trace.windows(2) {
                    assert!(
                        pair[1].objective <= pair[0].objective * (1.0 + 1e-12),
                        "{algorithm:?} {bias:?} P={workers}: objective rose from {} to {} at half-step {}",
                        pair[0].objective,
                        pair[1].objective,
                        pair[1].half_steps
                    );
                }
            }
        }
    }
}

#[test]
fn long_runs_reach_a_stationary_point() {
    let p = problem(30, 25, 2, 0.5, 0.1, 3);
    for (algorithm, iterations) in [(Algorithm::Als, 300), (Algorithm::Ccd, 600), (Algorithm::Ccdpp, 600)] {
        for (bias, weighted) in [(Bias::None, false), (Bias::Full, false), (Bias::Full, true)] {
            let mut checked = params(algorithm, bias, weighted, iterations, 2);
            checked.lambda_exponent = 0.5;
            checked.rank = 2;
            checked.eval_every = iterations;
            let (fit, _) = run(&p, &checked);
            let model = Plain { w: fit.factors.w.clone(), h: fit.factors.h.clone() };
            let gradient = reference::max_gradient(&p.train, p.users, p.items, &model, &checked);
            assert!(
                gradient < 1e-5,
                "{algorithm:?} {bias:?} weighted={weighted}: largest partial derivative {gradient}"
            );
        }
    }
}

#[test]
fn a_generated_low_rank_matrix_is_recovered_to_the_noise_level() {
    let noise = 0.1;
    let g = generate(&GeneratorSpec { users: 300, items: 200, rank: 4, density: 0.5, noise, seed: 5 });
    let (train, test) = strads_mf::ratings::split(&g.ratings, 0.2, 5).unwrap();
    // The error of the true model on the test set: the noise level, as sampled.
    let truth: f64 = test
        .iter()
        .map(|r| {
            let (u, i) = (r.user as usize * 4, r.item as usize * 4);
            let p: f64 = (0..4).map(|t| g.w[u + t] * g.h[i + t]).sum();
            (r.value - p).powi(2)
        })
        .sum::<f64>();
    let floor = (truth / test.len() as f64).sqrt();
    assert!((floor - noise).abs() < 0.01 * 3.0, "sampled noise {floor}");
    let p = Problem { train, test, users: 300, items: 200 };
    for algorithm in ALGORITHMS {
        let mut checked = params(algorithm, Bias::None, true, 60, 2);
        checked.lambda = Some(0.001);
        checked.rank = 4;
        checked.inner_iterations = if algorithm == Algorithm::Ccdpp { 3 } else { 1 };
        let (fit, _) = run(&p, &checked);
        let rmse = fit.last().unwrap().test_rmse.unwrap();
        assert!(rmse < 1.05 * floor, "{algorithm:?}: test RMSE {rmse} against the true model's {floor}");
    }
}

#[test]
fn cold_users_and_items_get_the_fallback_and_the_model_predicts_as_training_evaluated() {
    let p = problem(40, 30, 3, 0.35, 0.1, 4);
    let ids = ids_of(&p);
    for algorithm in ALGORITHMS {
        for bias in [Bias::None, Bias::Global, Bias::Full] {
            let (fit, _) = run(&p, &params(algorithm, bias, false, 5, 2));
            assert_eq!(fit.test_cold_pairs, 2);
            let model = Model::from_fit(&fit, &ids, bias);
            assert_eq!(model.ids.users.len(), p.users - 1, "the test-only user is not in the model");
            let mut squared = 0.0;
            for r in &p.test {
                let prediction = model.predict(&ids.users[r.user as usize], &ids.items[r.item as usize]);
                assert!(prediction.value.is_finite());
                let cold = r.user as usize == p.users - 1 || r.item as usize == p.items - 1;
                assert_eq!(prediction.cold, cold);
                if cold && bias == Bias::None {
                    assert_eq!(prediction.value, fit.train_mean);
                }
                squared += (r.value - prediction.value).powi(2);
            }
            let rmse = (squared / p.test.len() as f64).sqrt();
            let traced = fit.last().unwrap().test_rmse.unwrap();
            assert!((rmse - traced).abs() < 1e-9, "{algorithm:?} {bias:?}: {rmse} vs traced {traced}");
            let top = model.recommend("u0", 5, &[]).unwrap();
            assert_eq!(top.len(), 5);
            assert!(top.windows(2).all(|w| w[0].1 >= w[1].1));
            let best = top[0];
            let again = model.recommend("u0", 5, &[best.0 as u32]).unwrap();
            assert!(again.iter().all(|&(i, _)| i != best.0));
            assert!(model.recommend("nobody", 5, &[]).is_none());
        }
    }
}

#[test]
fn a_seed_gives_the_same_model_and_another_seed_another() {
    let p = problem(30, 20, 2, 0.4, 0.1, 6);
    let a = run(&p, &params(Algorithm::Ccdpp, Bias::Full, false, 3, 2)).0;
    let b = run(&p, &params(Algorithm::Ccdpp, Bias::Full, false, 3, 2)).0;
    assert_eq!(a.factors, b.factors);
    let mut other = params(Algorithm::Ccdpp, Bias::Full, false, 3, 2);
    other.seed = 8;
    assert_ne!(run(&p, &other).0.factors, a.factors);
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_run_stopped_at_any_round_and_resumed_gives_the_same_model_bit_for_bit() {
    use strads_core::InMemory;
    use strads_mf::fit_checkpointed;
    let p = problem(30, 20, 3, 0.3, 0.1, 5);
    for algorithm in ALGORITHMS {
        for (bias, workers) in [(Bias::None, 1), (Bias::Full, 2), (Bias::Global, 3)] {
            let params = params(algorithm, bias, algorithm == Algorithm::Als, 3, workers);
            let (whole, trace) = run(&p, &params);
            let launcher = Embedded::new(workers).unwrap();
            let mut counted = InMemory { every: 1, ..InMemory::default() };
            fit_checkpointed(&p.train, &p.test, p.users, p.items, &params, &launcher, &mut |_| {}, &mut counted)
                .unwrap();
            let rounds = counted.saves;
            assert!(rounds > 5, "{algorithm:?}: only {rounds} rounds");
            for stop in [1, rounds / 3, rounds / 2 + 1, rounds - 1] {
                let mut first = InMemory::stopping_after(stop);
                let stopped =
                    fit_checkpointed(&p.train, &p.test, p.users, p.items, &params, &launcher, &mut |_| {}, &mut first);
                assert!(matches!(
                    stopped,
                    Err(strads_mf::MfError::Engine(strads_core::EngineError::Interrupted { .. }))
                ));
                let mut second = InMemory::resuming(first.last.expect("a snapshot at the stop"));
                let resumed =
                    fit_checkpointed(&p.train, &p.test, p.users, p.items, &params, &launcher, &mut |_| {}, &mut second)
                        .unwrap()
                        .unwrap();
                let what = format!("{algorithm:?} {bias:?} P={workers} stopped after {stop} of {rounds} rounds");
                assert_eq!(bits(&resumed.factors.w), bits(&whole.factors.w), "{what}");
                assert_eq!(bits(&resumed.factors.h), bits(&whole.factors.h), "{what}");
                let objectives = |t: &[TracePoint]| t.iter().map(|t| t.objective.to_bits()).collect::<Vec<_>>();
                assert_eq!(objectives(&resumed.trace), objectives(&trace), "{what}");
            }
        }
    }
}

/// A fit with validation ratings held out of `p.train` by the library's hash split.
fn run_validated(p: &Problem, params: &CheckedParams, fraction: f64) -> MfFit {
    let (train, held) = strads_mf::ratings::hold_out(p.train.clone(), fraction, 3);
    assert!(!held.is_empty() && held.len() < train.len());
    let source =
        strads_mf::InMemory::new(train, p.test.clone(), p.users, p.items).unwrap().with_validation(held).unwrap();
    let launcher = Embedded::new(params.workers).unwrap();
    strads_mf::fit_source(&source, params, &launcher, &mut |_| {}, &mut strads_core::NoCheckpoints).unwrap().unwrap()
}

#[test]
fn early_stopping_returns_the_factors_of_the_best_validation_iteration() {
    // Little regularization and much noise: the validation RMSE turns up after a few iterations.
    let p = problem(60, 40, 2, 0.3, 1.0, 11);
    for algorithm in ALGORITHMS {
        let mut checked = params(algorithm, Bias::Full, true, 40, 2);
        checked.lambda = Some(0.0005);
        checked.rank = 8;
        checked.patience = 2;
        let stopped = run_validated(&p, &checked, 0.2);
        let best = stopped.returned_point().unwrap();
        let rmse = |t: &TracePoint| t.validation_rmse.unwrap();
        let least = stopped.trace.iter().map(rmse).fold(f64::INFINITY, f64::min);
        assert_eq!(rmse(best), least, "{algorithm:?}: the returned point is not the least validation RMSE");
        assert!(stopped.stopped_early, "{algorithm:?}: patience never ran out in 40 iterations");
        assert!(stopped.iterations < 40 && stopped.iterations >= best.iteration + 2, "{algorithm:?}");
        // The same run without early stopping, to the best iteration, ends at the returned factors,
        // on every worker count.
        for workers in [1, 2, 4] {
            let mut exact = checked.clone();
            exact.patience = 0;
            exact.workers = workers;
            exact.iterations = best.iteration as usize;
            let plain = run_validated(&p, &exact, 0.2);
            let what = format!("{algorithm:?} P={workers}, best iteration {}", best.iteration);
            assert!(max_abs_diff(&plain.factors.w, &stopped.factors.w) < 1e-9, "{what}");
            assert!(max_abs_diff(&plain.factors.h, &stopped.factors.h) < 1e-9, "{what}");
            assert!(!plain.stopped_early && plain.returned + 1 == plain.trace.len(), "{what}");
        }
    }
}

#[test]
fn an_early_stopped_run_resumes_from_any_round_to_the_same_model() {
    use strads_core::InMemory as Store;
    let p = problem(50, 30, 2, 0.3, 1.0, 12);
    let mut checked = params(Algorithm::Ccdpp, Bias::Full, true, 30, 2);
    checked.lambda = Some(0.0005);
    checked.rank = 6;
    checked.patience = 2;
    let (train, held) = strads_mf::ratings::hold_out(p.train.clone(), 0.2, 3);
    let source =
        strads_mf::InMemory::new(train, p.test.clone(), p.users, p.items).unwrap().with_validation(held).unwrap();
    let launcher = Embedded::new(2).unwrap();
    let mut counted = Store { every: 1, ..Store::default() };
    let whole = strads_mf::fit_source(&source, &checked, &launcher, &mut |_| {}, &mut counted).unwrap().unwrap();
    assert!(whole.stopped_early);
    let rounds = counted.saves;
    for stop in [rounds / 2, rounds - 2] {
        let mut first = Store::stopping_after(stop);
        assert!(strads_mf::fit_source(&source, &checked, &launcher, &mut |_| {}, &mut first).is_err());
        let mut second = Store::resuming(first.last.expect("a snapshot"));
        let resumed = strads_mf::fit_source(&source, &checked, &launcher, &mut |_| {}, &mut second).unwrap().unwrap();
        assert_eq!(bits(&resumed.factors.w), bits(&whole.factors.w), "stopped after {stop} of {rounds}");
        assert_eq!(resumed.returned, whole.returned);
    }
}

#[test]
fn settings_left_to_the_data_follow_the_scale_of_the_ratings() {
    // Scaling every rating by c scales the loss by c^2; lambda = 0.1 std and an initial scale in
    // sqrt(std) or sqrt(mean) keep the objective's shape, so predictions scale by c exactly.
    let p = problem(40, 30, 3, 0.35, 0.2, 13);
    let c = 20.0;
    let scaled = Problem {
        train: p.train.iter().map(|r| Rating { value: r.value * c, ..*r }).collect(),
        test: p.test.iter().map(|r| Rating { value: r.value * c, ..*r }).collect(),
        users: p.users,
        items: p.items,
    };
    for bias in [Bias::None, Bias::Global] {
        for algorithm in ALGORITHMS {
            let mut checked = params(algorithm, bias, true, 5, 2);
            checked.lambda = None;
            checked.init_scale = None;
            let (a, _) = run(&p, &checked);
            let (b, _) = run(&scaled, &checked);
            assert!((b.lambda / a.lambda - c).abs() < 1e-9, "{bias:?}: lambda {} then {}", a.lambda, b.lambda);
            let ra = a.last().unwrap().test_rmse.unwrap();
            let rb = b.last().unwrap().test_rmse.unwrap();
            assert!((rb / ra - c).abs() < 1e-6 * c, "{algorithm:?} {bias:?}: test RMSE {ra} then {rb}");
        }
    }
}

#[test]
fn a_converged_run_stops_where_the_objective_stalls_with_the_model_of_that_iteration() {
    let p = problem(60, 40, 3, 0.3, 0.3, 14);
    for algorithm in ALGORITHMS {
        let mut checked = params(algorithm, Bias::Full, true, 60, 2);
        checked.tol = 1e-3;
        let (stopped, trace) = run(&p, &checked);
        assert!(stopped.converged && stopped.iterations < 60, "{algorithm:?}: ran {} iterations", stopped.iterations);
        let n = trace.len();
        let decrease = |a: &TracePoint, b: &TracePoint| (a.objective - b.objective) / a.objective;
        assert!(decrease(&trace[n - 2], &trace[n - 1]) < 1e-3, "{algorithm:?}");
        assert!(trace.windows(2).take(n - 2).all(|w| decrease(&w[0], &w[1]) >= 1e-3), "{algorithm:?}: stopped late");
        for workers in [1, 4] {
            let mut exact = checked.clone();
            exact.tol = 0.0;
            exact.workers = workers;
            exact.iterations = stopped.iterations as usize;
            let (plain, _) = run(&p, &exact);
            assert!(max_abs_diff(&plain.factors.w, &stopped.factors.w) < 1e-9, "{algorithm:?} P={workers}");
            assert!(!plain.converged);
        }
    }
}

/// A saved model folder loads back to the same model, bit for bit; `rated.txt` holds, per user,
/// the model rows of the items that user rated in training; a folder whose files disagree with
/// `model.json` is refused naming the file.
#[test]
fn a_saved_model_loads_back_exactly_and_a_damaged_folder_is_refused() {
    let p = problem(25, 15, 3, 0.4, 0.1, 8);
    let ids = ids_of(&p);
    let dir = tempfile::tempdir().unwrap();
    for bias in [Bias::None, Bias::Full] {
        let (fit, _) = run(&p, &params(Algorithm::Ccdpp, bias, true, 3, 2));
        let model = Model::from_fit(&fit, &ids, bias);
        let pairs: Vec<(u32, u32)> = p.train.iter().map(|r| (r.user, r.item)).collect();
        let rated = strads_mf::rated_rows(&fit, &pairs);
        let trained = strads_mf::Trained {
            algorithm: Algorithm::Ccdpp,
            lambda: 0.05,
            weighted_lambda: true,
            lambda_exponent: 0.5,
        };
        let folder = dir.path().join(format!("{bias:?}"));
        model.save(&folder, trained, &rated).unwrap();
        let loaded = Model::load(&folder).unwrap();
        assert_eq!(loaded, model, "{bias:?}");
        for (row, user) in model.ids.users.iter().enumerate() {
            let mut expected: Vec<u32> = p
                .train
                .iter()
                .filter(|r| &ids.users[r.user as usize] == user)
                .map(|r| model.ids.find_item(&ids.items[r.item as usize]).unwrap())
                .collect();
            expected.sort_unstable();
            assert_eq!(Model::load_rated(&folder, row as u32, user).unwrap(), expected, "{user}");
        }
    }
    let folder = dir.path().join("Full");
    std::fs::write(folder.join("users.txt"), "u0\nu1\n").unwrap();
    let error = Model::load(&folder).unwrap_err().to_string();
    assert!(error.contains("users.txt") && error.contains("2 lines, model.json says"), "{error}");
    let none = dir.path().join("None");
    std::fs::copy(none.join("item_factors.npy"), none.join("user_factors.npy")).unwrap();
    let error = Model::load(&none).unwrap_err().to_string();
    assert!(error.contains("user_factors.npy") && error.contains("model.json says"), "{error}");
    assert!(Model::load(&dir.path().join("nothing")).unwrap_err().to_string().contains("model.json"));
}

/// The inline launcher (every worker on the calling thread) gives the threaded runtime's factors
/// bit for bit for every algorithm, and `MfParams::fit` is the one-worker fit.
#[test]
fn inline_runs_give_the_threaded_model_bit_for_bit() {
    let p = problem(30, 20, 3, 0.3, 0.1, 9);
    for algorithm in ALGORITHMS {
        let checked = params(algorithm, Bias::Full, true, 3, 3);
        let threads = run(&p, &checked).0;
        let ratings = strads_mf::InMemory::new(&p.train[..], &p.test[..], p.users, p.items).unwrap();
        let inline =
            strads_mf::fit_model(&ratings, &checked, &strads_engine::Inline::new(3).unwrap(), &mut |_| {}).unwrap();
        assert_eq!(inline.factors, threads.factors, "{algorithm:?}");
    }
    let one = params(Algorithm::Ccdpp, Bias::Full, true, 3, 1);
    let raw = MfParams {
        algorithm: one.algorithm,
        rank: one.rank,
        lambda: one.lambda,
        weighted_lambda: one.weighted_lambda,
        lambda_exponent: one.lambda_exponent,
        bias: one.bias,
        iterations: one.iterations,
        inner_iterations: one.inner_iterations,
        seed: one.seed,
        init_scale: one.init_scale,
        patience: one.patience,
        tol: one.tol,
        eval_every: one.eval_every,
        trace_half_steps: one.trace_half_steps,
        implicit: one.implicit,
        cg_steps: one.cg_steps,
    };
    let ratings = strads_mf::InMemory::new(&p.train[..], &p.test[..], p.users, p.items).unwrap();
    assert_eq!(raw.fit(&ratings).unwrap().factors, run(&p, &one).0.factors);
}
