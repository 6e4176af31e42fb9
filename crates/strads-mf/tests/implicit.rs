//! Implicit feedback against its oracles: the dense `users x items` reference for ALS (exact and
//! conjugate gradient) and row CCD at every worker count, monotone descent, CG that reaches the exact
//! solve, the ranking metrics against a plain implementation, and refused settings and values.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use strads_mf::ranking::{RankingMetrics, ranking_metrics};
use strads_mf::ratings::Rating;
use strads_mf::reference;
use strads_mf::{Algorithm, Bias, CheckedParams, Implicit, MfFit, MfParams, TracePoint, default_cg_steps, fit};
use strads_runtime::Embedded;

struct Problem {
    train: Vec<Rating>,
    users: usize,
    items: usize,
}

/// Counts of 1 to 5 on about `density` of the pairs, users in two groups that favour one half of the
/// items each; one pair of value 0 (an unobserved pair, written out) and a last user without pairs.
fn problem(users: usize, items: usize, density: f64, seed: u64) -> Problem {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut train = Vec::new();
    for u in 0..users {
        for i in 0..items {
            let favoured = (u % 2 == 0) == (i < items / 2);
            let p = if favoured { 2.0 * density } else { density / 2.0 };
            if rng.random::<f64>() < p {
                train.push(Rating { user: u as u32, item: i as u32, value: f64::from(rng.random_range(1..=5u32)) });
            }
        }
    }
    if !train.iter().any(|r| r.user == 0 && r.item == 1) {
        train.push(Rating { user: 0, item: 1, value: 0.0 });
    }
    Problem { train, users: users + 1, items }
}

fn params(algorithm: Algorithm, cg_steps: usize, iterations: usize, workers: usize) -> CheckedParams {
    MfParams {
        algorithm,
        rank: 4,
        lambda: Some(0.1),
        iterations,
        inner_iterations: 2,
        seed: 3,
        init_scale: Some(0.3),
        tol: 0.0,
        implicit: Some(Implicit { alpha: 2.0 }),
        cg_steps: Some(cg_steps),
        ..MfParams::implicit(2.0)
    }
    .check(workers)
    .unwrap()
}

fn run(p: &Problem, params: &CheckedParams) -> (MfFit, Vec<TracePoint>) {
    let launcher = Embedded::new(params.workers).unwrap();
    let mut seen = Vec::new();
    let fit = fit(&p.train, &[], p.users, p.items, params, &launcher, &mut |t| seen.push(*t)).unwrap().unwrap();
    (fit, seen)
}

/// The (user, item) pairs of some ratings, as the ranking metrics take them.
fn pairs(ratings: &[Rating]) -> Vec<(u32, u32)> {
    ratings.iter().map(|r| (r.user, r.item)).collect()
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

const RULES: [(Algorithm, usize); 3] = [(Algorithm::Als, 0), (Algorithm::Als, 3), (Algorithm::Ccd, 0)];

#[test]
fn every_rule_and_worker_count_equals_the_dense_reference() {
    let p = problem(36, 28, 0.15, 1);
    for (algorithm, cg_steps) in RULES {
        let one = params(algorithm, cg_steps, 4, 1);
        let plain = reference::fit_implicit(&p.train, p.users, p.items, &one);
        let (base, _) = run(&p, &one);
        let label = format!("{algorithm:?} cg_steps={cg_steps}");
        let scale = plain.w.iter().chain(&plain.h).fold(1.0f64, |m, x| m.max(x.abs()));
        assert!(max_abs_diff(&base.factors.w, &plain.w) <= 1e-9 * scale, "{label}: W differs from the reference");
        assert!(max_abs_diff(&base.factors.h, &plain.h) <= 1e-9 * scale, "{label}: H differs from the reference");
        let user = p.users - 1;
        assert!(base.user_factors(user).iter().all(|&x| x == 0.0), "{label}: a user without pairs has zero factors");
        let objective = reference::implicit_objective(&p.train, p.users, p.items, &plain, &one);
        let traced = base.last().unwrap().objective;
        assert!((traced - objective).abs() <= 1e-9 * objective, "{label}: objective {traced} vs {objective}");
        for workers in [2, 4] {
            let (other, _) = run(&p, &params(algorithm, cg_steps, 4, workers));
            assert!(max_abs_diff(&other.factors.w, &base.factors.w) <= 1e-12 * scale, "{label} P={workers}: W");
            assert!(max_abs_diff(&other.factors.h, &base.factors.h) <= 1e-12 * scale, "{label} P={workers}: H");
            let (a, b) = (other.last().unwrap(), base.last().unwrap());
            assert!((a.objective - b.objective).abs() <= 1e-9 * b.objective, "{label} P={workers}: objective");
            let (again, _) = run(&p, &params(algorithm, cg_steps, 4, workers));
            assert_eq!(again.factors.w, other.factors.w, "{label} P={workers}: the same seed gives the same model");
        }
    }
}

#[test]
fn the_objective_never_increases_across_half_steps() {
    let p = problem(40, 30, 0.2, 2);
    for (algorithm, cg_steps) in RULES {
        for workers in [1, 3] {
            let mut checked = params(algorithm, cg_steps, 6, workers);
            checked.trace_half_steps = true;
            let (_, trace) = run(&p, &checked);
            assert!(trace.len() > 12, "{algorithm:?}: an evaluation after every half-step");
            for pair in trace.windows(2) {
                assert!(
                    pair[1].objective <= pair[0].objective * (1.0 + 1e-12),
                    "{algorithm:?} cg_steps={cg_steps} P={workers}: objective rose from {} to {} at half-step {}",
                    pair[0].objective,
                    pair[1].objective,
                    pair[1].half_steps
                );
            }
        }
    }
}

#[test]
fn conjugate_gradient_with_rank_steps_reaches_the_exact_solve() {
    let p = problem(30, 24, 0.2, 3);
    let (exact, _) = run(&p, &params(Algorithm::Als, 0, 3, 2));
    let (cg, _) = run(&p, &params(Algorithm::Als, 4, 3, 2));
    let scale = exact.factors.w.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    assert!(max_abs_diff(&cg.factors.w, &exact.factors.w) <= 1e-6 * scale, "CG in K steps solves a K x K system");
    assert!(max_abs_diff(&cg.factors.h, &exact.factors.h) <= 1e-6 * scale);
}

#[test]
fn the_model_ranks_held_out_pairs_of_the_planted_groups_above_popularity() {
    let all = problem(120, 80, 0.12, 4);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for (n, r) in all.train.iter().enumerate() {
        if r.value > 0.0 && n % 5 == 0 { test.push(*r) } else { train.push(*r) }
    }
    let p = Problem { train, ..all };
    let mut checked = params(Algorithm::Als, 3, 15, 2);
    checked.rank = 8;
    let (model, _) = run(&p, &checked);
    let k = 10;
    let ours = ranking_metrics(
        &model.factors.w,
        &model.factors.h,
        model.stride,
        model.rank,
        &pairs(&p.train),
        &pairs(&test),
        k,
    );
    // Popularity: every user scores an item by its training count (rank-1 factors).
    let mut counts = vec![0.0; p.items];
    for r in &p.train {
        counts[r.item as usize] += 1.0;
    }
    let ones = vec![1.0; p.users];
    let popular = ranking_metrics(&ones, &counts, 1, 1, &pairs(&p.train), &pairs(&test), k);
    assert!(ours.users > 50 && ours.users == popular.users);
    assert!(
        ours.ndcg > popular.ndcg + 0.05 && ours.precision > popular.precision,
        "the factorization finds the groups: {ours:?} against popularity {popular:?}"
    );
}

/// The metrics by their definitions: a full sort of every item per user.
fn plain_metrics(w: &[f64], h: &[f64], rank: usize, train: &[Rating], test: &[Rating], k: usize) -> RankingMetrics {
    let (users, items) = (w.len() / rank, h.len() / rank);
    let mut out = RankingMetrics { k, users: 0, cold_users: 0, precision: 0.0, map: 0.0, ndcg: 0.0 };
    let (mut hits, mut possible) = (0, 0);
    for u in 0..users {
        let seen: Vec<usize> = train.iter().filter(|r| r.user as usize == u).map(|r| r.item as usize).collect();
        let mut likes: Vec<usize> = test.iter().filter(|r| r.user as usize == u).map(|r| r.item as usize).collect();
        likes.sort_unstable();
        likes.dedup();
        if likes.is_empty() {
            continue;
        }
        if seen.is_empty() {
            out.cold_users += 1;
            continue;
        }
        let score = |i: usize| (0..rank).map(|t| w[u * rank + t] * h[i * rank + t]).sum::<f64>();
        let mut order: Vec<usize> = (0..items).filter(|i| !seen.contains(i)).collect();
        order.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
        order.truncate(k);
        let relevant = k.min(likes.len());
        let (mut found, mut ap, mut dcg) = (0, 0.0, 0.0);
        for (n, i) in order.iter().enumerate() {
            if likes.contains(i) {
                found += 1;
                ap += found as f64 / (n + 1) as f64;
                dcg += 1.0 / ((n + 2) as f64).log2();
            }
        }
        let idcg: f64 = (0..relevant).map(|n| 1.0 / ((n + 2) as f64).log2()).sum();
        hits += found;
        possible += relevant;
        out.map += ap / relevant as f64;
        out.ndcg += dcg / idcg;
        out.users += 1;
    }
    out.precision = hits as f64 / possible as f64;
    out.map /= out.users as f64;
    out.ndcg /= out.users as f64;
    out
}

#[test]
fn ranking_metrics_equal_a_plain_implementation() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let (users, items, rank) = (25, 40, 2);
    // Small integer factors, so that many scores tie and the tie-break is exercised.
    let w: Vec<f64> = (0..users * rank).map(|_| f64::from(rng.random_range(0..3u32))).collect();
    let h: Vec<f64> = (0..items * rank).map(|_| f64::from(rng.random_range(0..3u32))).collect();
    let pick = |rng: &mut Xoshiro256PlusPlus, n: usize| {
        (0..n)
            .map(|_| Rating {
                user: rng.random_range(0..users as u32 - 1),
                item: rng.random_range(0..items as u32),
                value: 1.0,
            })
            .collect::<Vec<_>>()
    };
    let train = pick(&mut rng, 150);
    let mut test = pick(&mut rng, 80);
    test.push(Rating { user: users as u32 - 1, item: 0, value: 1.0 });
    for k in [1, 3, 10, 50] {
        let fast = ranking_metrics(&w, &h, rank, rank, &pairs(&train), &pairs(&test), k);
        let plain = plain_metrics(&w, &h, rank, &train, &test, k);
        assert_eq!((fast.users, fast.cold_users), (plain.users, plain.cold_users), "k={k}");
        assert_eq!(fast.cold_users, 1, "the last user has no training pair");
        for (a, b, what) in [
            (fast.precision, plain.precision, "precision"),
            (fast.map, plain.map, "MAP"),
            (fast.ndcg, plain.ndcg, "NDCG"),
        ] {
            assert!((a - b).abs() <= 1e-12, "k={k} {what}: {a} vs {b}");
        }
    }
    // One user, ranking item 0, then 1, then 2; held out: 0 and 2.
    let one = ranking_metrics(&[1.0], &[3.0, 2.0, 1.0], 1, 1, &[], &[], 3);
    assert_eq!(one.users, 0);
    let seen = [Rating { user: 0, item: 3, value: 1.0 }];
    let held = [Rating { user: 0, item: 0, value: 1.0 }, Rating { user: 0, item: 2, value: 1.0 }];
    let m = ranking_metrics(&[1.0], &[3.0, 2.0, 1.0, 9.0], 1, 1, &pairs(&seen), &pairs(&held), 3);
    assert_eq!(m.precision, 1.0);
    assert!((m.map - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
    assert!((m.ndcg - (1.0 + 0.5) / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-15);
}

#[test]
fn conjugate_gradient_is_chosen_where_it_costs_less_than_the_exact_solve() {
    for pairs in [5.0, 60.0, 1000.0] {
        for implicit in [false, true] {
            assert_eq!(default_cg_steps(4, pairs, implicit), 0);
            assert_eq!(default_cg_steps(10, pairs, implicit), 0);
            assert_eq!(default_cg_steps(50, pairs, implicit), 3);
            assert_eq!(default_cg_steps(200, pairs, implicit), 3);
        }
    }
    let p = problem(20, 16, 0.3, 6);
    for (rank, steps) in [(4, 0), (24, 3)] {
        let checked = MfParams { rank, init_scale: Some(0.3), ..MfParams::implicit(1.0) }.check(1).unwrap();
        let (fit, _) = run(&p, &checked);
        assert_eq!(fit.cg_steps, steps, "rank {rank}");
    }
}

#[test]
fn settings_and_values_that_do_not_apply_are_refused() {
    let base = MfParams::implicit(1.0);
    let ccdpp = MfParams { algorithm: Algorithm::Ccdpp, ..base.clone() }.check(1).unwrap_err();
    assert!(ccdpp.parameter == "algorithm" && ccdpp.message.contains("not CCD++"), "{ccdpp}");
    let bias = MfParams { bias: Bias::Full, ..base.clone() }.check(1).unwrap_err();
    assert!(bias.parameter == "bias" && bias.message.contains("--bias none"), "{bias}");
    let alpha = MfParams { implicit: Some(Implicit { alpha: -1.0 }), ..base.clone() }.check(1).unwrap_err();
    assert!(alpha.parameter == "implicit" && alpha.message.contains("alpha"), "{alpha}");
    let negative = vec![Rating { user: 0, item: 0, value: 1.0 }, Rating { user: 1, item: 1, value: -2.0 }];
    let checked = base.check(1).unwrap();
    let launcher = Embedded::new(1).unwrap();
    let error = fit(&negative, &[], 2, 2, &checked, &launcher, &mut |_| {}).unwrap_err().to_string();
    assert!(error.contains("values >= 0"), "{error}");
}
