//! Test oracles: a plain, obviously correct collapsed Gibbs sampler and the exact posterior of a tiny corpus.

use rand::RngExt;
use strads_corpus::Corpus;

use crate::eval::log_likelihood;
use crate::program::worker_rng;

/// The state of a plain sampler: every token's topic and the three count tables.
#[derive(Clone, Debug, PartialEq)]
pub struct PlainState {
    /// Topic of each token, document by document.
    pub assignments: Vec<Vec<u32>>,
    /// `n_wk`, `V x K`.
    pub word_topic: Vec<u32>,
    /// `n_dk`, `D x K`.
    pub doc_topic: Vec<u32>,
    /// `n_k`.
    pub totals: Vec<u32>,
}

/// Runs `iterations` sweeps of textbook collapsed Gibbs sampling: documents in order, tokens in order,
/// each topic drawn from the full conditional computed over all `K` topics.
pub fn plain_gibbs(corpus: &Corpus, topics: usize, alpha: f64, beta: f64, iterations: u64, seed: u64) -> PlainState {
    let v = corpus.vocabulary_size();
    let mut rng = worker_rng(seed, 0, 7);
    let mut state = PlainState {
        assignments: Vec::new(),
        word_topic: vec![0; v * topics],
        doc_topic: vec![0; corpus.documents() * topics],
        totals: vec![0; topics],
    };
    for d in 0..corpus.documents() {
        let z: Vec<u32> = corpus.document(d).iter().map(|_| rng.random_range(0..topics as u32)).collect();
        for (&w, &k) in corpus.document(d).iter().zip(&z) {
            state.word_topic[w as usize * topics + k as usize] += 1;
            state.doc_topic[d * topics + k as usize] += 1;
            state.totals[k as usize] += 1;
        }
        state.assignments.push(z);
    }
    let mut p = vec![0.0; topics];
    for _ in 0..iterations {
        for d in 0..corpus.documents() {
            for (i, &w) in corpus.document(d).iter().enumerate() {
                let (w, old) = (w as usize, state.assignments[d][i] as usize);
                state.word_topic[w * topics + old] -= 1;
                state.doc_topic[d * topics + old] -= 1;
                state.totals[old] -= 1;
                let mut sum = 0.0;
                for (k, cumulative) in p.iter_mut().enumerate() {
                    sum += (f64::from(state.doc_topic[d * topics + k]) + alpha)
                        * (f64::from(state.word_topic[w * topics + k]) + beta)
                        / (f64::from(state.totals[k]) + v as f64 * beta);
                    *cumulative = sum;
                }
                let u = rng.random::<f64>() * sum;
                let new = p.iter().position(|&c| u < c).unwrap_or(topics - 1);
                state.word_topic[w * topics + new] += 1;
                state.doc_topic[d * topics + new] += 1;
                state.totals[new] += 1;
                state.assignments[d][i] = new as u32;
            }
        }
    }
    state
}

/// The exact posterior probability that tokens `i` and `j` share a topic, `p(z_i = z_j | w)`, for every
/// pair (tokens numbered document by document), by enumerating all `K^N` assignments. Only for tiny
/// corpora. (Single-token marginals are uniform by the symmetry of topic labels; pairs are not.)
pub fn exact_agreement(corpus: &Corpus, topics: usize, alpha: f64, beta: f64) -> Vec<Vec<f64>> {
    let n = corpus.token_count();
    let states = (topics as u64).checked_pow(n as u32).filter(|&s| s <= 1 << 22).expect("a tiny corpus");
    let v = corpus.vocabulary_size();
    let lengths: Vec<u32> = (0..corpus.documents()).map(|d| corpus.document(d).len() as u32).collect();
    let doc_of: Vec<usize> =
        (0..corpus.documents()).flat_map(|d| std::iter::repeat_n(d, corpus.document(d).len())).collect();
    let mut agreement = vec![vec![0.0; n]; n];
    let mut total = 0.0;
    let mut z = vec![0usize; n];
    let mut weighted = Vec::with_capacity(states as usize);
    for s in 0..states {
        let mut rest = s;
        for zi in z.iter_mut() {
            *zi = (rest % topics as u64) as usize;
            rest /= topics as u64;
        }
        let mut word_topic = vec![0u32; v * topics];
        let mut doc_topic = vec![0u32; corpus.documents() * topics];
        for (i, &w) in corpus.tokens.iter().enumerate() {
            word_topic[w as usize * topics + z[i]] += 1;
            doc_topic[doc_of[i] * topics + z[i]] += 1;
        }
        weighted.push(log_likelihood(&doc_topic, &lengths, &word_topic, topics, alpha, beta));
    }
    let max = weighted.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    for (s, &l) in weighted.iter().enumerate() {
        let p = (l - max).exp();
        total += p;
        let mut rest = s as u64;
        for zi in z.iter_mut() {
            *zi = (rest % topics as u64) as usize;
            rest /= topics as u64;
        }
        for i in 0..n {
            for j in 0..n {
                if z[i] == z[j] {
                    agreement[i][j] += p;
                }
            }
        }
    }
    for row in &mut agreement {
        for a in row.iter_mut() {
            *a /= total;
        }
    }
    agreement
}
