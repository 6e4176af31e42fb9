//! Topic mixes of new documents under a trained model: Gibbs sampling of their tokens with the topics held fixed.

use rand::RngExt;
use strads_corpus::Corpus;

use crate::program::worker_rng;

/// What inference needs of a trained model.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicModel {
    /// `K`.
    pub topics: usize,
    /// Document-topic prior.
    pub alpha: f64,
    /// Topic-word prior.
    pub beta: f64,
    /// `n_wk`, `V x K`, row by word id.
    pub word_topic: Vec<u32>,
}

impl TopicModel {
    /// `phi_kw` laid out by word: `V x K`.
    fn phi(&self) -> Vec<f64> {
        let k = self.topics;
        let v = self.word_topic.len() / k.max(1);
        let mut totals = vec![0u64; k];
        for row in self.word_topic.chunks(k) {
            for (t, &c) in row.iter().enumerate() {
                totals[t] += u64::from(c);
            }
        }
        let vbeta = v as f64 * self.beta;
        self.word_topic
            .chunks(k)
            .flat_map(|row| row.iter().zip(&totals).map(|(&c, &n)| (f64::from(c) + self.beta) / (n as f64 + vbeta)))
            .collect()
    }
}

/// Estimates `theta_d` for every document of `corpus` (whose word ids index the model's vocabulary):
/// `iterations` sweeps, the first half burn-in, the mean of `(n_dk + alpha) / (N_d + K alpha)` over the rest.
pub fn infer(model: &TopicModel, corpus: &Corpus, iterations: usize, seed: u64) -> Vec<Vec<f64>> {
    let k = model.topics;
    let phi = model.phi();
    let mut rng = worker_rng(seed, 0, 13);
    let burn_in = iterations / 2;
    let kept = (iterations - burn_in).max(1);
    let mut weights = vec![0.0; k];
    (0..corpus.documents())
        .map(|d| {
            let words = corpus.document(d);
            let mut z: Vec<usize> = words.iter().map(|_| rng.random_range(0..k)).collect();
            let mut counts = vec![0u32; k];
            for &t in &z {
                counts[t] += 1;
            }
            let mut theta = vec![0.0; k];
            let norm = words.len() as f64 + k as f64 * model.alpha;
            for sweep in 0..iterations.max(1) {
                for (i, &w) in words.iter().enumerate() {
                    counts[z[i]] -= 1;
                    let row = &phi[w as usize * k..(w as usize + 1) * k];
                    let mut sum = 0.0;
                    for (t, weight) in weights.iter_mut().enumerate() {
                        sum += (f64::from(counts[t]) + model.alpha) * row[t];
                        *weight = sum;
                    }
                    let u = rng.random::<f64>() * sum;
                    z[i] = weights.partition_point(|&c| c < u).min(k - 1);
                    counts[z[i]] += 1;
                }
                if sweep >= burn_in || iterations == 0 {
                    for (t, value) in theta.iter_mut().enumerate() {
                        *value += (f64::from(counts[t]) + model.alpha) / norm / kept as f64;
                    }
                }
            }
            theta
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_of_one_topic_are_assigned_to_it() {
        // Two topics over four words: words 0, 1 belong to topic 0, words 2, 3 to topic 1.
        let model = TopicModel { topics: 2, alpha: 0.1, beta: 0.01, word_topic: vec![50, 0, 50, 0, 0, 50, 0, 50] };
        let mut corpus =
            Corpus { offsets: vec![0], vocabulary: (0..4).map(|w| w.to_string()).collect(), ..Corpus::default() };
        for doc in [[0u32, 1, 0, 1], [2, 3, 3, 2]] {
            corpus.tokens.extend(doc);
            corpus.offsets.push(corpus.tokens.len());
        }
        let theta = infer(&model, &corpus, 40, 1);
        assert!(theta[0][0] > 0.9 && theta[1][1] > 0.9, "{theta:?}");
        assert!(theta.iter().all(|t| (t.iter().sum::<f64>() - 1.0).abs() < 1e-9));
    }
}
