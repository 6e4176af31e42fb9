//! The joint log-likelihood log p(w, z) of STRADS.md 3.1, in parts each worker can sum over what it holds.
//!
//! `sum_d [lgamma(K alpha) - lgamma(N_d + K alpha) + sum_k (lgamma(n_dk + alpha) - lgamma(alpha))]`
//! `+ sum_k [lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_wk + beta) - lgamma(beta))]`.
//! Zero counts contribute nothing, so each part is a sum over nonzero counts, read from a table of
//! `lgamma(n + a) - lgamma(a)` for small `n`.

/// `lgamma(n + a) - lgamma(a)` for integer `n`, tabulated below a bound.
#[derive(Clone, Debug)]
pub struct LogGammaTable {
    a: f64,
    base: f64,
    values: Vec<f64>,
}

const TABLE: usize = 1 << 14;

impl LogGammaTable {
    /// The table for offset `a`.
    pub fn new(a: f64) -> Self {
        let base = libm::lgamma(a);
        let mut values = Vec::with_capacity(TABLE);
        let mut acc = 0.0;
        for n in 0..TABLE {
            values.push(acc);
            acc += (n as f64 + a).ln();
        }
        LogGammaTable { a, base, values }
    }

    /// `lgamma(n + a) - lgamma(a)`.
    #[inline]
    pub fn get(&self, n: u64) -> f64 {
        match self.values.get(n as usize) {
            Some(&v) => v,
            None => libm::lgamma(n as f64 + self.a) - self.base,
        }
    }
}

/// `sum over counts of lgamma(c + a) - lgamma(a)`.
pub fn count_terms(counts: &[u32], table: &LogGammaTable) -> f64 {
    counts.iter().filter(|&&c| c > 0).map(|&c| table.get(u64::from(c))).sum()
}

/// The documents' part: rows of `n_dk` with their lengths.
pub fn document_part(counts: &[u32], lengths: &[u32], topics: usize, alpha: f64, table: &LogGammaTable) -> f64 {
    document_part_by(lengths, topics, alpha, |d| count_terms(&counts[d * topics..(d + 1) * topics], table))
}

/// The documents' part, with `terms(d)` giving document `d`'s `sum_k lgamma(n_dk + alpha) - lgamma(alpha)`.
pub fn document_part_by(lengths: &[u32], topics: usize, alpha: f64, terms: impl Fn(usize) -> f64) -> f64 {
    let k_alpha = topics as f64 * alpha;
    let head = libm::lgamma(k_alpha);
    lengths.iter().enumerate().map(|(d, &n)| head - libm::lgamma(f64::from(n) + k_alpha) + terms(d)).sum()
}

/// `S[c] = sum_{i < c} 1 / (base + i)` for `c` in `0..=longest`: `psi(base + c) - psi(base)`, exactly.
pub fn inverse_rising_sums(base: f64, longest: usize) -> Vec<f64> {
    let mut sums = Vec::with_capacity(longest + 1);
    let mut sum = 0.0;
    sums.push(sum);
    for i in 0..longest {
        sum += 1.0 / (base + i as f64);
        sums.push(sum);
    }
    sums
}

/// One step of Minka's fixed point for a symmetric Dirichlet prior over `topics` topics, from the
/// statistics of [`crate::sampler::DocTopics::alpha_statistics`] summed over every document:
/// `alpha' = alpha sum_d sum_k (psi(n_dk + alpha) - psi(alpha)) / (K sum_d (psi(N_d + K alpha) - psi(K alpha)))`.
/// The current `alpha` when the statistics are empty.
pub fn minka_step(alpha: f64, topics: usize, numerator: f64, denominator: f64) -> f64 {
    let next = alpha * numerator / (topics as f64 * denominator);
    if next.is_finite() && next > 0.0 { next } else { alpha }
}

/// The topic totals' part: `sum_k lgamma(V beta) - lgamma(n_k + V beta)`.
pub fn totals_part(totals: &[i64], vocabulary: usize, beta: f64) -> f64 {
    let vbeta = vocabulary as f64 * beta;
    let head = libm::lgamma(vbeta);
    totals.iter().map(|&n| head - libm::lgamma(n as f64 + vbeta)).sum()
}

/// The whole joint log-likelihood of dense tables (the sequential reference and tests use it).
pub fn log_likelihood(
    doc_topic: &[u32],
    lengths: &[u32],
    word_topic: &[u32],
    topics: usize,
    alpha: f64,
    beta: f64,
) -> f64 {
    let vocabulary = word_topic.len() / topics.max(1);
    let mut totals = vec![0i64; topics];
    for row in word_topic.chunks(topics) {
        for (t, &c) in row.iter().enumerate() {
            totals[t] += i64::from(c);
        }
    }
    document_part(doc_topic, lengths, topics, alpha, &LogGammaTable::new(alpha))
        + count_terms(word_topic, &LogGammaTable::new(beta))
        + totals_part(&totals, vocabulary, beta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_lgamma_inside_and_beyond() {
        let t = LogGammaTable::new(0.37);
        for n in [0u64, 1, 2, 17, 1000, (TABLE - 1) as u64, TABLE as u64, 100_000] {
            let exact = libm::lgamma(n as f64 + 0.37) - libm::lgamma(0.37);
            assert!((t.get(n) - exact).abs() < 1e-8 * exact.abs().max(1.0), "n = {n}");
        }
    }
}
