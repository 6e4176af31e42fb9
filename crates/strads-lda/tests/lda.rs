//! LDA end to end on the embedded runtime: count invariants, sampler correctness, topic recovery, determinism.

use strads_corpus::Corpus;
use strads_lda::generate::{GeneratorSpec, best_match_overlap, generate};
use strads_lda::reference::{exact_agreement, plain_gibbs};
use strads_lda::{LdaFit, LdaParams, Mode, SamplerKind, Sync, fit};
use strads_runtime::Embedded;

fn run(corpus: &Corpus, test: Option<&Corpus>, params: &LdaParams, workers: usize) -> LdaFit {
    let checked = params.check(workers).expect("valid parameters");
    let launcher = Embedded::new(workers).unwrap();
    fit(corpus, test, &checked, &launcher, &mut |_| {}).expect("fit").expect("leader")
}

fn small_corpus(seed: u64) -> (Corpus, Vec<Vec<f64>>) {
    let g = generate(&GeneratorSpec {
        documents: 60,
        vocabulary: 40,
        topics: 4,
        mean_length: 30.0,
        alpha: 0.3,
        beta: 0.1,
        seed,
    })
    .unwrap();
    (g.corpus, g.topics)
}

const MODES: [(Mode, SamplerKind); 4] = [
    (Mode::ModelParallel, SamplerKind::Alias),
    (Mode::ModelParallel, SamplerKind::Sparse),
    (Mode::DataParallel, SamplerKind::Alias),
    (Mode::DataParallel, SamplerKind::Sparse),
];

#[test]
fn counts_stay_consistent_after_every_iteration_in_every_mode() {
    let (corpus, _) = small_corpus(1);
    let (test, _) = small_corpus(2);
    for (mode, sampler) in MODES {
        for workers in [1, 2, 3] {
            for sync in [Sync::Subround, Sync::Iteration] {
                let params = LdaParams {
                    topics: 5,
                    iterations: 4,
                    mode,
                    sampler: Some(sampler),
                    sync,
                    blocks: Some(workers + 1),
                    verify: true,
                    eval_every: 2,
                    ..LdaParams::default()
                };
                let fit = run(&corpus, Some(&test), &params, workers);
                let sum: u64 = fit.counts.word_topic.iter().map(|&c| u64::from(c)).sum();
                assert_eq!(sum, corpus.token_count() as u64, "{mode:?} {sampler:?} P={workers}");
                assert_eq!(fit.trace.len(), 2);
                assert!(fit.trace.iter().all(|p| p.test_perplexity.is_some_and(|x| x.is_finite() && x > 1.0)));
            }
        }
    }
}

#[test]
fn the_invariant_check_catches_a_count_that_does_not_match() {
    // A test corpus whose vocabulary is smaller than the training corpus's is refused up front,
    // and a broken count is reported by the aggregator's check (exercised through its error text).
    let (corpus, _) = small_corpus(1);
    let mut bad = corpus.clone();
    bad.vocabulary.pop();
    let checked = LdaParams::default().check(1).unwrap();
    let err = fit(&corpus, Some(&bad), &checked, &Embedded::new(1).unwrap(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("vocabulary"), "{err}");
}

/// Draws the final state of many independent short chains and compares, for every pair of tokens, how
/// often they share a topic with the exact posterior probability (a binomial z-test per pair,
/// Bonferroni-corrected). Panics naming the first pair that disagrees.
fn assert_agreement(label: &str, exact: &[Vec<f64>], samples: &[Vec<u32>]) {
    let n = samples.len() as f64;
    let tokens = exact.len();
    let pairs = (tokens * (tokens - 1) / 2) as f64;
    // |z| above 4.9 has probability below 1e-6; over all pairs, well below 1e-4.
    let threshold = if pairs > 0.0 { 4.9 } else { 0.0 };
    for i in 0..tokens {
        for j in i + 1..tokens {
            let p = exact[i][j];
            let observed = samples.iter().filter(|s| s[i] == s[j]).count() as f64;
            let z = (observed - n * p) / (n * p * (1.0 - p)).sqrt();
            assert!(
                z.abs() < threshold,
                "{label}: tokens {i} and {j} agree {observed} times, expected {:.1}, z = {z:.1}",
                n * p
            );
        }
    }
}

/// The largest difference between sampled and exact agreement over all pairs.
fn max_deviation(exact: &[Vec<f64>], samples: &[Vec<u32>]) -> f64 {
    let n = samples.len() as f64;
    let mut worst = 0.0f64;
    for i in 0..exact.len() {
        for j in i + 1..exact.len() {
            let observed = samples.iter().filter(|s| s[i] == s[j]).count() as f64 / n;
            worst = worst.max((observed - exact[i][j]).abs());
        }
    }
    worst
}

fn tiny() -> Corpus {
    let docs: Vec<Vec<u32>> = vec![vec![0, 1, 0], vec![1, 2], vec![2, 2, 0]];
    let mut c = Corpus { offsets: vec![0], vocabulary: vec!["a".into(), "b".into(), "c".into()], ..Corpus::default() };
    for (d, doc) in docs.iter().enumerate() {
        c.tokens.extend(doc);
        c.offsets.push(c.tokens.len());
        c.ids.push(d);
    }
    c
}

/// The final topics of 1200 chains of 10 iterations on the tiny corpus (K = 3, alpha 0.5, beta 0.3,
/// two vocabulary blocks), one chain per seed.
fn tiny_chains(
    corpus: &Corpus,
    mode: Mode,
    sampler: SamplerKind,
    mh_steps: Option<usize>,
    workers: usize,
) -> Vec<Vec<u32>> {
    (0..1200)
        .map(|seed| {
            let params = LdaParams {
                topics: 3,
                alpha: Some(0.5),
                beta: 0.3,
                iterations: 10,
                mode,
                sampler: Some(sampler),
                mh_steps,
                blocks: Some(2),
                seed,
                eval_every: 10,
                keep_assignments: true,
                optimize_alpha: None,
                ..LdaParams::default()
            };
            run(corpus, None, &params, workers).counts.assignments.as_ref().unwrap().concat()
        })
        .collect()
}

#[test]
fn every_sampler_and_mode_samples_the_exact_posterior() {
    let corpus = tiny();
    let (topics, alpha, beta) = (3, 0.5, 0.3);
    let exact = exact_agreement(&corpus, topics, alpha, beta);
    let chains = 1200;
    let flatten = |a: &Vec<Vec<u32>>| a.concat();
    let plain: Vec<Vec<u32>> =
        (0..chains).map(|seed| flatten(&plain_gibbs(&corpus, topics, alpha, beta, 10, seed).assignments)).collect();
    assert_agreement("plain Gibbs", &exact, &plain);
    for (mode, sampler) in MODES {
        for workers in [1, 2] {
            let samples = tiny_chains(&corpus, mode, sampler, LdaParams::default().mh_steps, workers);
            let label = format!("{mode:?} {sampler:?} P={workers}");
            if mode == Mode::DataParallel && workers > 1 {
                // Stale copies of n_wk: not an exact sampler (the point of the comparison), but close.
                let worst = max_deviation(&exact, &samples);
                assert!(worst < 0.25, "{label}: agreement off by {worst:.3}");
            } else if sampler == SamplerKind::Alias && workers > 1 {
                // n_k seen one sub-round late: the default's 4 proposals per token come as close to
                // that stale conditional as the test below's 8, which is close, not exact.
                let worst = max_deviation(&exact, &samples);
                assert!(worst < 0.1, "{label}: agreement off by {worst:.3}");
            } else {
                assert_agreement(&label, &exact, &samples);
            }
        }
    }
}

/// With more Metropolis-Hastings steps the alias sampler approaches its conditional with the topic
/// totals as the worker sees them. One worker sees them exactly and stays exact; two workers see the
/// other's changes one sub-round late, the paper's one approximation, which SparseLDA's exact draws
/// share: both are close, not exact (max deviations 0.053 for SparseLDA and 0.065 for 8 steps, against
/// 0.020 for one worker).
#[test]
fn the_alias_sampler_with_many_steps_is_exact_on_one_worker_and_close_on_two() {
    let corpus = tiny();
    let (topics, alpha, beta) = (3, 0.5, 0.3);
    let exact = exact_agreement(&corpus, topics, alpha, beta);
    for workers in [1, 2] {
        let samples = tiny_chains(&corpus, Mode::ModelParallel, SamplerKind::Alias, Some(8), workers);
        if workers == 1 {
            assert_agreement("alias, 8 steps, P=1", &exact, &samples);
        } else {
            let worst = max_deviation(&exact, &samples);
            assert!(worst < 0.1, "alias, 8 steps, P=2: agreement off by {worst:.3}");
        }
    }
}

#[test]
fn a_wrong_prior_fails_the_posterior_check() {
    // The check has power: chains that sample the posterior of another alpha are caught.
    let corpus = tiny();
    let exact = exact_agreement(&corpus, 3, 0.5, 0.3);
    let samples: Vec<Vec<u32>> =
        (0..1200).map(|seed| plain_gibbs(&corpus, 3, 5.0, 0.3, 10, seed).assignments.concat()).collect();
    let result = std::panic::catch_unwind(|| assert_agreement("alpha 5 against alpha 0.5", &exact, &samples));
    assert!(result.is_err());
}

#[test]
fn learned_topics_match_the_generating_ones() {
    let g = generate(&GeneratorSpec {
        documents: 800,
        vocabulary: 200,
        topics: 5,
        mean_length: 60.0,
        alpha: 0.2,
        beta: 0.05,
        seed: 3,
    })
    .unwrap();
    for (mode, sampler) in MODES {
        let params = LdaParams {
            topics: 5,
            alpha: Some(0.2),
            beta: 0.05,
            iterations: 150,
            mode,
            sampler: Some(sampler),
            seed: 5,
            eval_every: 50,
            ..LdaParams::default()
        };
        let fit = run(&g.corpus, None, &params, 2);
        let learned: Vec<Vec<f64>> = (0..5).map(|k| fit.topic_words(k)).collect();
        let overlap = best_match_overlap(&g.topics, &learned);
        assert!(overlap > 0.8, "{mode:?} {sampler:?}: best-match overlap {overlap:.3}");
    }
}

#[test]
fn every_mode_reaches_the_log_likelihood_of_the_plain_sampler() {
    let (corpus, _) = small_corpus(4);
    let reference = plain_gibbs(&corpus, 4, 0.3, 0.1, 200, 1);
    let lengths: Vec<u32> = (0..corpus.documents()).map(|d| corpus.document(d).len() as u32).collect();
    let target = strads_lda::eval::log_likelihood(&reference.doc_topic, &lengths, &reference.word_topic, 4, 0.3, 0.1)
        / corpus.token_count() as f64;
    for (mode, sampler) in MODES {
        for workers in [1, 2] {
            let params = LdaParams {
                topics: 4,
                alpha: Some(0.3),
                beta: 0.1,
                iterations: 200,
                mode,
                sampler: Some(sampler),
                eval_every: 200,
                optimize_alpha: None,
                ..LdaParams::default()
            };
            let fit = run(&corpus, None, &params, workers);
            let got = fit.last().unwrap().log_likelihood_per_token;
            let direct = strads_lda::eval::log_likelihood(
                &fit.counts.doc_topic.to_dense(4),
                &fit.counts.lengths,
                &fit.counts.word_topic,
                4,
                0.3,
                0.1,
            ) / corpus.token_count() as f64;
            assert!((got - direct).abs() < 1e-9, "the distributed evaluation agrees with the dense one");
            assert!((got - target).abs() < 0.05, "{mode:?} {sampler:?} P={workers}: {got} against {target}");
        }
    }
}

#[test]
fn a_seed_and_worker_count_give_the_same_model() {
    let (corpus, _) = small_corpus(5);
    for (mode, sampler) in MODES {
        let params =
            LdaParams { topics: 6, iterations: 5, mode, sampler: Some(sampler), seed: 9, ..LdaParams::default() };
        let a = run(&corpus, None, &params, 2);
        let b = run(&corpus, None, &params, 2);
        assert_eq!(a.counts, b.counts, "{mode:?} {sampler:?}");
        assert_eq!(a.trace[0].log_likelihood_per_token, b.trace[0].log_likelihood_per_token);
        let c = run(&corpus, None, &LdaParams { seed: 10, ..params }, 2);
        assert_ne!(a.counts, c.counts);
    }
}

#[test]
fn model_parallel_workers_hold_a_part_of_the_table() {
    let corpus = generate(&GeneratorSpec {
        documents: 100,
        vocabulary: 2000,
        topics: 4,
        mean_length: 50.0,
        alpha: 0.3,
        beta: 0.5,
        seed: 6,
    })
    .unwrap()
    .corpus;
    let bytes = |mode, workers| {
        let params = LdaParams { topics: 8, iterations: 1, mode, ..LdaParams::default() };
        run(&corpus, None, &params, workers).last().unwrap().model_bytes_per_worker
    };
    let whole = (corpus.vocabulary_size() * 8 * 4) as u64;
    assert_eq!(bytes(Mode::ModelParallel, 1), whole);
    assert!(bytes(Mode::ModelParallel, 2) <= whole * 6 / 10);
    assert!(bytes(Mode::DataParallel, 2) >= whole);
}

#[test]
fn held_out_perplexity_improves_with_training() {
    let (all, _) = small_corpus(7);
    let split = |docs: std::ops::Range<usize>| {
        let mut c = Corpus { offsets: vec![0], vocabulary: all.vocabulary.clone(), ..Corpus::default() };
        for d in docs {
            c.tokens.extend(all.document(d));
            c.offsets.push(c.tokens.len());
            c.ids.push(d);
        }
        c
    };
    let (corpus, test) = (split(0..45), split(45..60));
    let perplexity = |iterations| {
        let params = LdaParams { topics: 4, iterations, test_every: Some(iterations), ..LdaParams::default() };
        run(&corpus, Some(&test), &params, 2).last().unwrap().test_perplexity.unwrap()
    };
    let (early, late) = (perplexity(1), perplexity(60));
    assert!(late < early && late < corpus.vocabulary_size() as f64, "{early} then {late}");
}

#[test]
fn bad_parameters_are_refused() {
    let bad = [
        (LdaParams { topics: 0, ..LdaParams::default() }, "topics"),
        (LdaParams { alpha: Some(-1.0), ..LdaParams::default() }, "alpha"),
        (LdaParams { beta: f64::NAN, ..LdaParams::default() }, "beta"),
        (LdaParams { blocks: Some(1), ..LdaParams::default() }, "blocks"),
        (LdaParams { mh_steps: Some(0), ..LdaParams::default() }, "mh_steps"),
        (LdaParams { optimize_alpha: Some(0), ..LdaParams::default() }, "optimize_alpha"),
    ];
    for (params, parameter) in bad {
        match params.check(2) {
            Err(strads_lda::LdaError::Params(error)) => assert_eq!(error.parameter, parameter, "{error}"),
            other => panic!("{params:?}: {other:?}"),
        }
    }
    let (corpus, _) = small_corpus(1);
    let few = Corpus { offsets: corpus.offsets[..2].to_vec(), ids: vec![0], ..corpus.clone() };
    let checked = LdaParams::default().check(2).unwrap();
    assert!(fit(&few, None, &checked, &Embedded::new(2).unwrap(), &mut |_| {}).is_err());
    // More blocks than words is refused before anything is allocated for them.
    let huge = LdaParams { blocks: Some(1 << 40), ..LdaParams::default() }.check(1).unwrap();
    let err = fit(&corpus, None, &huge, &Embedded::new(1).unwrap(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("blocks"), "{err}");
}

#[test]
fn a_run_stopped_at_any_round_and_resumed_gives_the_same_model_bit_for_bit() {
    use strads_core::{EngineError, InMemory};
    use strads_lda::{LdaError, fit_checkpointed};
    let (corpus, _) = small_corpus(3);
    let (test, _) = small_corpus(4);
    for (mode, sampler) in MODES {
        for (workers, sync) in [(1, Sync::Subround), (2, Sync::Iteration), (3, Sync::Subround)] {
            let params = LdaParams {
                topics: 5,
                iterations: 4,
                mode,
                sampler: Some(sampler),
                sync,
                blocks: Some(workers + 1),
                eval_every: 2,
                keep_assignments: true,
                optimize_alpha: Some(2),
                ..LdaParams::default()
            };
            let checked = params.check(workers).unwrap();
            let launcher = Embedded::new(workers).unwrap();
            let whole = fit(&corpus, Some(&test), &checked, &launcher, &mut |_| {}).unwrap().unwrap();
            let mut counted = InMemory { every: 1, ..InMemory::default() };
            fit_checkpointed(&corpus, Some(&test), &checked, &launcher, &mut |_| {}, &mut counted).unwrap();
            let rounds = counted.saves;
            for stop in [1, rounds / 3, rounds / 2 + 1, rounds - 1] {
                let what = format!("{mode:?} {sampler:?} P={workers} stopped after {stop} of {rounds} rounds");
                let mut first = InMemory::stopping_after(stop);
                let stopped = fit_checkpointed(&corpus, Some(&test), &checked, &launcher, &mut |_| {}, &mut first);
                assert!(matches!(stopped, Err(LdaError::Engine(EngineError::Interrupted { .. }))), "{what}");
                let mut second = InMemory::resuming(first.last.expect("a snapshot at the stop"));
                let resumed = fit_checkpointed(&corpus, Some(&test), &checked, &launcher, &mut |_| {}, &mut second)
                    .unwrap()
                    .unwrap();
                assert_eq!(resumed.counts, whole.counts, "{what}");
                assert_eq!(resumed.alphas, whole.alphas, "{what}");
                assert_eq!(resumed.alpha.to_bits(), whole.alpha.to_bits(), "{what}");
                let perplexities =
                    |f: &LdaFit| f.trace.iter().map(|t| t.test_perplexity.map(f64::to_bits)).collect::<Vec<_>>();
                assert_eq!(perplexities(&resumed), perplexities(&whole), "{what}");
                let likelihoods =
                    |f: &LdaFit| f.trace.iter().map(|t| t.log_likelihood_per_token.to_bits()).collect::<Vec<_>>();
                assert_eq!(likelihoods(&resumed), likelihoods(&whole), "{what}");
            }
        }
    }
}

/// Minka's fixed point for a symmetric alpha, plainly: one step from `alpha` on dense counts.
fn minka_reference(alpha: f64, topics: usize, doc_topic: &[u32], lengths: &[u32]) -> f64 {
    let sum = |base: f64, c: u32| (0..c).map(|i| 1.0 / (base + f64::from(i))).sum::<f64>();
    let numerator: f64 = doc_topic.iter().map(|&c| sum(alpha, c)).sum();
    let denominator: f64 = lengths.iter().map(|&n| sum(topics as f64 * alpha, n)).sum();
    alpha * numerator / (topics as f64 * denominator)
}

/// Re-estimating alpha (the default) recovers the generator's alpha from a start 25 times too
/// large, in every mode and on 1, 2 and 3 workers; the last re-estimation, made after the last
/// sweep, is the plain fixed-point step on the gathered counts; a fixed alpha stays fixed.
#[test]
fn alpha_re_estimation_recovers_the_generators_alpha_in_every_mode() {
    let g = generate(&GeneratorSpec {
        documents: 400,
        vocabulary: 300,
        topics: 5,
        mean_length: 80.0,
        alpha: 0.2,
        beta: 0.05,
        seed: 11,
    })
    .unwrap();
    for (mode, sampler) in MODES {
        for workers in [1, 2, 3] {
            let params = LdaParams {
                topics: 5,
                alpha: Some(5.0),
                beta: 0.05,
                iterations: 60,
                mode,
                sampler: Some(sampler),
                optimize_alpha: Some(5),
                eval_every: 60,
                ..LdaParams::default()
            };
            let fit = run(&g.corpus, None, &params, workers);
            let what = format!("{mode:?} {sampler:?} P={workers}");
            assert_eq!(fit.alphas.len(), 12, "{what}");
            assert!(fit.alphas.iter().map(|a| a.0).eq((1..=12).map(|i| 5 * i)), "{what}");
            assert!((fit.alpha / 0.2).ln().abs() < 0.5f64.ln().abs(), "{what}: alpha {} against 0.2", fit.alpha);
            let before = fit.alphas[fit.alphas.len() - 2].1;
            let plain = minka_reference(before, 5, &fit.counts.doc_topic.to_dense(5), &fit.counts.lengths);
            assert!((fit.alpha - plain).abs() <= 1e-12 * plain, "{what}: {} against the plain step {plain}", fit.alpha);
        }
    }
    let fixed = LdaParams { topics: 5, iterations: 20, optimize_alpha: None, ..LdaParams::default() };
    let fit = run(&g.corpus, None, &fixed, 2);
    assert!(fit.alphas.is_empty() && fit.alpha == 10.0, "50 / K, never moved: {}", fit.alpha);
}

/// A saved model folder loads back to the fit's counts and priors and the corpus's words, infers
/// as the fit's own model does, and a folder whose files disagree is refused naming the file.
#[test]
fn a_saved_model_loads_back_exactly_and_a_damaged_folder_is_refused() {
    use strads_lda::model::{SaveOptions, load, rows_by_input, save};
    let (corpus, _) = small_corpus(12);
    let params = LdaParams { topics: 5, iterations: 4, seed: 3, ..LdaParams::default() };
    let fitted = run(&corpus, None, &params, 2);
    let dir = tempfile::tempdir().unwrap();
    let tokenizer = strads_corpus::TokenizerOptions { lowercase: false, ..Default::default() };
    save(dir.path(), &fitted, &corpus, &tokenizer, SaveOptions { top_words: 3, dense_doc_topic: true }).unwrap();
    let saved = load(dir.path()).unwrap();
    assert_eq!(saved.model.word_topic, fitted.counts.word_topic);
    assert_eq!((saved.model.topics, saved.model.alpha, saved.model.beta), (5, fitted.alpha, fitted.beta));
    assert_eq!(saved.vocabulary, corpus.vocabulary);
    assert!(!saved.lowercase && saved.token_pattern == tokenizer.pattern);
    let theta = strads_lda::infer(&saved.model, &corpus, 5, 1);
    assert_eq!(theta.len(), corpus.documents());
    let rows: Vec<f32> = rows_by_input(&corpus, 5, |d| fitted.document_topics(d)).collect();
    let dense = strads_data::read_npy::<f32>(&dir.path().join("doc_topic.npy"), corpus.documents(), 5, "").unwrap();
    assert_eq!(dense, rows);
    let topics = std::fs::read_to_string(dir.path().join("topics.txt")).unwrap();
    assert_eq!(topics.lines().count(), 5);

    std::fs::write(dir.path().join("vocab.txt"), "a\nb\n").unwrap();
    let error = load(dir.path()).unwrap_err().to_string();
    assert!(error.contains("vocab.txt") && error.contains("2 words, model.json says 40"), "{error}");
    assert!(load(&dir.path().join("none")).unwrap_err().to_string().contains("model.json"));
}

/// The inline launcher (every worker on the calling thread, blocks passed around the ring in
/// place) gives the threaded runtime's model bit for bit in every mode, and `LdaParams::fit` is the
/// one-worker fit.
#[test]
fn inline_runs_give_the_threaded_model_bit_for_bit() {
    let (corpus, _) = small_corpus(21);
    for (mode, sampler) in MODES {
        let params =
            LdaParams { topics: 5, iterations: 4, mode, sampler: Some(sampler), seed: 2, ..LdaParams::default() };
        let threads = run(&corpus, None, &params, 3);
        let checked = params.check(3).unwrap();
        let inline =
            strads_lda::fit_model(&corpus, None, &checked, &strads_engine::Inline::new(3).unwrap(), &mut |_| {})
                .unwrap();
        assert_eq!(inline.counts, threads.counts, "{mode:?} {sampler:?}");
        assert_eq!(inline.trace[0].log_likelihood_per_token, threads.trace[0].log_likelihood_per_token);
    }
    let params = LdaParams { topics: 5, iterations: 3, seed: 4, ..LdaParams::default() };
    assert_eq!(params.fit(&corpus).unwrap().counts, run(&corpus, None, &params, 1).counts);
}
