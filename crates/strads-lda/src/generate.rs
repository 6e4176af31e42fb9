//! A corpus drawn from a known LDA model, for tests, demos and `strads gen lda`.

use rand::RngExt;
use rand_distr::multi::Dirichlet;
use rand_distr::{Distribution, Poisson};
use strads_corpus::Corpus;

use crate::program::worker_rng;

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratorSpec {
    /// Documents.
    pub documents: usize,
    /// Vocabulary size `V`.
    pub vocabulary: usize,
    /// Topics `K`.
    pub topics: usize,
    /// Mean document length (Poisson, at least 1).
    pub mean_length: f64,
    /// Dirichlet parameter of each document's topic mix.
    pub alpha: f64,
    /// Dirichlet parameter of each topic's word distribution (small: peaked topics).
    pub beta: f64,
    /// Seed.
    pub seed: u64,
}

/// A generated corpus and the model it was drawn from.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// The corpus; its words are named `w0`, `w1`, ...
    pub corpus: Corpus,
    /// The true topics: `K` rows of `V` probabilities.
    pub topics: Vec<Vec<f64>>,
}

/// Draws a corpus: `phi_k ~ Dirichlet(beta)`, `theta_d ~ Dirichlet(alpha)`, `N_d ~ Poisson(mean)`,
/// then each token's topic from `theta_d` and its word from `phi_z`.
pub fn generate(spec: &GeneratorSpec) -> Result<Generated, String> {
    if spec.documents == 0 || spec.vocabulary < 2 || spec.topics < 2 {
        return Err("need at least 1 document, 2 words and 2 topics".into());
    }
    if !(spec.alpha > 0.0 && spec.beta > 0.0 && spec.mean_length >= 1.0) {
        return Err("alpha and beta must be positive and the mean length at least 1".into());
    }
    let mut rng = worker_rng(spec.seed, 0, 11);
    let word_prior = Dirichlet::new(&vec![spec.beta; spec.vocabulary][..]).map_err(|e| e.to_string())?;
    let topic_prior = Dirichlet::new(&vec![spec.alpha; spec.topics][..]).map_err(|e| e.to_string())?;
    let lengths = Poisson::new(spec.mean_length).map_err(|e| e.to_string())?;
    let topics: Vec<Vec<f64>> = (0..spec.topics).map(|_| word_prior.sample(&mut rng)).collect();
    let cumulative: Vec<Vec<f64>> = topics
        .iter()
        .map(|phi| {
            phi.iter()
                .scan(0.0, |acc, p| {
                    Some({
                        *acc += p;
                        *acc
                    })
                })
                .collect()
        })
        .collect();
    let draw = |cdf: &[f64], u: f64| cdf.partition_point(|&c| c < u * cdf[cdf.len() - 1]).min(cdf.len() - 1);
    let mut corpus = Corpus {
        offsets: vec![0],
        vocabulary: (0..spec.vocabulary).map(|w| format!("w{w}")).collect(),
        ..Corpus::default()
    };
    for d in 0..spec.documents {
        let theta: Vec<f64> = topic_prior.sample(&mut rng);
        let theta_cdf: Vec<f64> = theta
            .iter()
            .scan(0.0, |acc, p| {
                Some({
                    *acc += p;
                    *acc
                })
            })
            .collect();
        let n = (lengths.sample(&mut rng) as usize).max(1);
        for _ in 0..n {
            let k = draw(&theta_cdf, rng.random::<f64>());
            corpus.tokens.push(draw(&cumulative[k], rng.random::<f64>()) as u32);
        }
        corpus.offsets.push(corpus.tokens.len());
        corpus.ids.push(d);
    }
    Ok(Generated { corpus, topics })
}

/// For each true topic, the best histogram intersection `sum_w min(p_w, q_w)` with a learned topic;
/// their mean is 1 when every true topic was found exactly.
pub fn best_match_overlap(truth: &[Vec<f64>], learned: &[Vec<f64>]) -> f64 {
    let overlap = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a.min(*b)).sum::<f64>();
    let total: f64 = truth.iter().map(|p| learned.iter().map(|q| overlap(p, q)).fold(0.0, f64::max)).sum();
    total / truth.len().max(1) as f64
}
