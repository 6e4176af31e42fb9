//! Kernel benchmarks (`cargo bench -p strads-lda`): one sweep of each sampler over one worker's tokens.
//!
//! A corpus is drawn from a known model (2,000 documents of about 100 tokens over 5,000 words), all
//! of it in one vocabulary block; each sampler first runs five sweeps from random topics, then the
//! next five are timed one by one and the best is reported in nanoseconds per token (the alias sampler
//! with its default proposals per token for K).

use std::time::Instant;

use rand::RngExt;
use strads_lda::SamplerKind;
use strads_lda::generate::{GeneratorSpec, generate};
use strads_lda::layout::{Tokens, VocabularyBlocks};
use strads_lda::sampler::{DocTopics, Priors, Sampler};

fn main() {
    let corpus = generate(&GeneratorSpec {
        documents: 2000,
        vocabulary: 5000,
        topics: 50,
        mean_length: 100.0,
        alpha: 0.1,
        beta: 0.01,
        seed: 1,
    })
    .expect("a valid generator")
    .corpus;
    let v = corpus.vocabulary_size();
    let blocks = VocabularyBlocks::new(&vec![1; v], 1, 1);
    println!("{} tokens, {} documents, {} words", corpus.token_count(), corpus.documents(), v);
    for k in [100usize, 1000] {
        for kind in [SamplerKind::Sparse, SamplerKind::Alias] {
            let mut tokens = Tokens::new(corpus.documents(), |d| corpus.document(d), &blocks);
            let mut rng = strads_lda::worker_rng(1, 0, 0);
            for z in tokens.topic.iter_mut() {
                *z = rng.random_range(0..k as u32);
            }
            tokens.refresh_by_doc();
            let mut docs = DocTopics::new(k, &tokens, corpus.documents(), kind);
            let mut rows = vec![0u32; v * k];
            let mut totals = vec![0i64; k];
            for i in 0..tokens.len() {
                let (slot, z) = (blocks.slot_of[tokens.word[i] as usize] as usize, tokens.topic[i] as usize);
                rows[slot * k + z] += 1;
                totals[z] += 1;
            }
            let priors = Priors { topics: k, alpha: 50.0 / k as f64, beta: 0.01, vbeta: v as f64 * 0.01 };
            let mut sampler = Sampler::new(priors, strads_lda::choose_mh_steps(k));
            let mut sweep = || {
                let start = Instant::now();
                let n = sampler.sample(0, &mut tokens, &mut docs, &mut rows, &mut totals, &mut rng);
                start.elapsed().as_nanos() as f64 / n as f64
            };
            for _ in 0..5 {
                sweep();
            }
            let best = (0..5).map(|_| sweep()).fold(f64::INFINITY, f64::min);
            println!("{:<44} {best:>8.1} ns/token", format!("{} sampler, K = {k}, one sweep", kind.name()));
        }
    }
}
