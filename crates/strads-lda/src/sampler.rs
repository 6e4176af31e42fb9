//! The two collapsed Gibbs samplers for one block of tokens: SparseLDA buckets, and alias tables with Metropolis-Hastings.
//!
//! Both draw a token's topic from the same conditional, with the token's own assignment removed:
//!
//! `p(z = k) ∝ (n_dk + alpha) (n_wk + beta) / (n_k + V beta)`
//!
//! A block's tokens are visited word by word, so each word's row `n_w·` is in cache for all its tokens.
//!
//! *Sparse* splits the conditional into `alpha beta / (n_k + V beta)` (smoothing, all topics),
//! `alpha n_wk / (n_k + V beta)` (the word's topics) and `n_dk (n_wk + beta) / (n_k + V beta)` (the
//! document's topics); the first two sums are kept up to date as counts change, the third is summed
//! over the document's nonzero topics for each token. Exact draws.
//!
//! *Alias* draws a proposal in O(1) and accepts it with the Metropolis-Hastings ratio against the
//! exact conditional, alternating two proposals (LightLDA's cycle), each proportional to one factor
//! of the conditional over the *current* counts, so the chain is exact (no stale proposal):
//! the *word proposal* `q(k) ∝ n_wk + beta` takes the topic of another token of the word (an alias
//! table over the counts of tokens outside this segment, which cannot change while it is sampled,
//! or a random token of the segment) or a uniform topic; the *document proposal* `q(k) ∝ n_dk + alpha`
//! takes the topic of another token of the document or a uniform topic. Each is accepted with the
//! ratio of the remaining factors.

use rand::RngExt;
use rand::distr::Distribution;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::weighted::WeightedAliasIndex;

use crate::layout::Tokens;
use crate::params::SamplerKind;

/// Document-topic counts of a worker's documents, kept as the sampler reads them: dense rows of `K`
/// for the alias sampler (which looks up `n_dk` of two topics per proposal), or, for SparseLDA,
/// each document's nonzero `(topic, count)` pairs in a slot of `min(K, N_d)` entries, so the state
/// grows with the tokens rather than with `K x documents` and a short document's counts are one
/// cache line instead of a `4K`-byte row.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DocTopics {
    /// Dense rows (the alias sampler).
    Dense(DenseDocs),
    /// Nonzero pairs (SparseLDA).
    Sparse(SparseDocs),
}

/// Dense document-topic rows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DenseDocs {
    topics: usize,
    /// `n_dk`, row by row.
    pub counts: Vec<u32>,
    /// `N_d`.
    pub lengths: Vec<u32>,
}

/// Each document's nonzero `(topic, count)` pairs, unordered: a header `[len, capacity]` and a slot
/// of `capacity = min(K, N_d)` pairs after it, with every token's header position, so that a token reaches its
/// document's counts in one memory access.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SparseDocs {
    topics: usize,
    lengths: Vec<u32>,
    /// Header position of each document; `documents + 1` entries.
    start: Vec<usize>,
    /// Header position of each token's document.
    token_start: Vec<usize>,
    entries: Vec<[u32; 2]>,
}

impl DenseDocs {
    /// Counts of the documents whose tokens are `tokens`, from their current topics.
    pub fn new(topics: usize, tokens: &Tokens, documents: usize) -> Self {
        let mut counts = vec![0u32; documents * topics];
        for i in 0..tokens.len() {
            counts[tokens.doc[i] as usize * topics + tokens.topic[i] as usize] += 1;
        }
        DenseDocs { topics, counts, lengths: document_lengths(tokens, documents) }
    }

    /// Document `d`'s row.
    pub fn row(&self, d: usize) -> &[u32] {
        &self.counts[d * self.topics..(d + 1) * self.topics]
    }
}

impl SparseDocs {
    /// Counts of the documents whose tokens are `tokens`, from their current topics.
    pub fn new(topics: usize, tokens: &Tokens, documents: usize) -> Self {
        let lengths = document_lengths(tokens, documents);
        let mut start = Vec::with_capacity(documents + 1);
        let mut entries = Vec::new();
        count_documents(tokens, documents, topics, |d, pairs| {
            let capacity = (lengths[d] as usize).min(topics);
            start.push(entries.len());
            entries.push([pairs.len() as u32, capacity as u32]);
            entries.extend(pairs.iter().map(|&(t, c)| [t, c]));
            entries.resize(entries.len() + capacity - pairs.len(), [0, 0]);
        });
        start.push(entries.len());
        let token_start = tokens.doc.iter().map(|&d| start[d as usize]).collect();
        SparseDocs { topics, lengths, start, token_start, entries }
    }

    /// Document `d`'s nonzero `(topic, count)` pairs.
    pub fn pairs(&self, d: usize) -> &[[u32; 2]] {
        let header = self.start[d];
        &self.entries[header + 1..header + 1 + self.entries[header][0] as usize]
    }
}

/// Sparse document-topic counts: each document's nonzero `(topic, count)` pairs in topic order, so
/// a gathered model grows with the tokens, not with `K x documents`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DocTopicCounts {
    /// Document `d`'s pairs are `pairs[offsets[d]..offsets[d + 1]]`.
    offsets: Vec<usize>,
    pairs: Vec<(u32, u32)>,
}

impl DocTopicCounts {
    /// No documents yet, room for `documents`.
    pub fn with_documents(documents: usize) -> Self {
        let mut offsets = Vec::with_capacity(documents + 1);
        offsets.push(0);
        DocTopicCounts { offsets, pairs: Vec::new() }
    }

    /// The counts of the tokens' documents, recounted from their topics.
    pub fn recount(tokens: &Tokens, documents: usize, topics: usize) -> Self {
        let mut rows = DocTopicCounts::with_documents(documents);
        count_documents(tokens, documents, topics, |_, pairs| {
            let mut sorted = pairs.to_vec();
            sorted.sort_unstable();
            rows.push_row(sorted);
        });
        rows
    }

    /// Appends a document with these pairs.
    pub fn push_row(&mut self, pairs: impl IntoIterator<Item = (u32, u32)>) {
        self.pairs.extend(pairs);
        self.offsets.push(self.pairs.len());
    }

    /// Appends every document of `other`.
    pub fn extend(&mut self, other: &DocTopicCounts) {
        let base = self.pairs.len();
        self.pairs.extend_from_slice(&other.pairs);
        self.offsets.extend(other.offsets[1..].iter().map(|&o| base + o));
    }

    /// Number of documents.
    pub fn documents(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Document `d`'s nonzero `(topic, count)` pairs, in topic order.
    pub fn row(&self, d: usize) -> &[(u32, u32)] {
        &self.pairs[self.offsets[d]..self.offsets[d + 1]]
    }

    /// Every nonzero count.
    pub fn counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.pairs.iter().map(|&(_, c)| c)
    }

    /// Document `d`'s dense row of `topics` counts.
    pub fn dense_row(&self, d: usize, topics: usize) -> Vec<u32> {
        let mut row = vec![0u32; topics];
        for &(t, c) in self.row(d) {
            row[t as usize] = c;
        }
        row
    }

    /// The dense `documents x topics` rows.
    pub fn to_dense(&self, topics: usize) -> Vec<u32> {
        (0..self.documents()).flat_map(|d| self.dense_row(d, topics)).collect()
    }
}

/// Calls `row(d, pairs)` for each document in order with its nonzero `(topic, count)` pairs, in the
/// order its tokens first show each topic.
fn count_documents(tokens: &Tokens, documents: usize, topics: usize, mut row: impl FnMut(usize, &[(u32, u32)])) {
    let mut seen = vec![0u32; topics];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for d in 0..documents {
        for &p in tokens.positions(d) {
            let t = tokens.topic[p as usize] as usize;
            if seen[t] == 0 {
                pairs.push((t as u32, 0));
            }
            seen[t] += 1;
        }
        for pair in &mut pairs {
            pair.1 = std::mem::take(&mut seen[pair.0 as usize]);
        }
        row(d, &pairs);
        pairs.clear();
    }
}

fn document_lengths(tokens: &Tokens, documents: usize) -> Vec<u32> {
    (0..documents).map(|d| (tokens.doc_start[d + 1] - tokens.doc_start[d]) as u32).collect()
}

impl DocTopics {
    /// Counts of the documents whose tokens are `tokens`, from their current topics, kept as `sampler` reads them.
    pub fn new(topics: usize, tokens: &Tokens, documents: usize, sampler: SamplerKind) -> Self {
        match sampler {
            SamplerKind::Sparse => DocTopics::Sparse(SparseDocs::new(topics, tokens, documents)),
            SamplerKind::Alias => DocTopics::Dense(DenseDocs::new(topics, tokens, documents)),
        }
    }

    /// Number of documents.
    pub fn documents(&self) -> usize {
        self.lengths().len()
    }

    /// `N_d` of every document.
    pub fn lengths(&self) -> &[u32] {
        match self {
            DocTopics::Dense(d) => &d.lengths,
            DocTopics::Sparse(s) => &s.lengths,
        }
    }

    /// Whether `other` holds as many documents and counts in the same representation (a restored state fits).
    pub fn same_shape(&self, other: &DocTopics) -> bool {
        match (self, other) {
            (DocTopics::Dense(a), DocTopics::Dense(b)) => a.counts.len() == b.counts.len(),
            (DocTopics::Sparse(a), DocTopics::Sparse(b)) => a.start == b.start,
            _ => false,
        }
    }

    /// Each document's nonzero counts as `(topic, count)` pairs in topic order.
    pub fn sparse(&self) -> DocTopicCounts {
        let mut rows = DocTopicCounts::with_documents(self.documents());
        for d in 0..self.documents() {
            match self {
                DocTopics::Dense(dense) => {
                    rows.push_row(dense.row(d).iter().enumerate().filter(|(_, c)| **c > 0).map(|(t, &c)| (t as u32, c)))
                }
                DocTopics::Sparse(s) => {
                    let mut pairs: Vec<(u32, u32)> = s.pairs(d).iter().map(|&[t, c]| (t, c)).collect();
                    pairs.sort_unstable();
                    rows.push_row(pairs);
                }
            }
        }
        rows
    }

    /// These documents' sums of Minka's fixed point for a symmetric `alpha` over `K` topics:
    /// `sum_d sum_k psi(n_dk + alpha) - psi(alpha)` and `sum_d psi(N_d + K alpha) - psi(K alpha)`,
    /// each difference of digammas at an integer distance `c` taken exactly as `sum_{i < c} 1 / (base + i)`.
    pub fn alpha_statistics(&self, alpha: f64) -> (f64, f64) {
        let lengths = self.lengths();
        let k = match self {
            DocTopics::Dense(d) => d.topics,
            DocTopics::Sparse(s) => s.topics,
        };
        let longest = lengths.iter().copied().max().unwrap_or(0) as usize;
        let counts = crate::eval::inverse_rising_sums(alpha, longest);
        let totals = crate::eval::inverse_rising_sums(k as f64 * alpha, longest);
        let numerator: f64 = match self {
            DocTopics::Dense(d) => d.counts.iter().map(|&c| counts[c as usize]).sum(),
            DocTopics::Sparse(s) => {
                (0..s.lengths.len()).flat_map(|d| s.pairs(d).iter().map(|&[_, c]| counts[c as usize])).sum()
            }
        };
        let denominator = lengths.iter().map(|&n| totals[n as usize]).sum();
        (numerator, denominator)
    }

    /// The documents' part of the joint log-likelihood, as [`crate::eval::document_part`] computes it from dense rows.
    pub fn log_likelihood_part(&self, alpha: f64, table: &crate::eval::LogGammaTable) -> f64 {
        match self {
            DocTopics::Dense(d) => crate::eval::document_part(&d.counts, &d.lengths, d.topics, alpha, table),
            DocTopics::Sparse(s) => crate::eval::document_part_by(&s.lengths, s.topics, alpha, |d| {
                s.pairs(d).iter().map(|&[_, c]| table.get(u64::from(c))).sum()
            }),
        }
    }
}

/// The model's priors and sizes, as the kernels use them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// `K`.
    pub topics: usize,
    /// `alpha`.
    pub alpha: f64,
    /// `beta`.
    pub beta: f64,
    /// `V beta`.
    pub vbeta: f64,
}

/// SparseLDA's running sums, with `inv[t] = 1 / (n_t + V beta)`, all kept in step with every count
/// change; the document bucket's `(n_wt + beta) inv[t]` is kept for every topic as `coef`, so a
/// document's term is one load and one product per topic.
struct Buckets {
    priors: Priors,
    inv: Vec<f64>,
    /// `(n_wt + beta) inv[t]` for the current word: `beta inv[t]` outside its topics, set for its
    /// topics when a segment starts ([`Buckets::enter`]) and reset when it ends ([`Buckets::leave`]).
    coef: Vec<f64>,
    /// `sum inv[t]` over each run of [`GROUP`] topics, so a smoothing draw scans `K / GROUP` sums
    /// and one run instead of all `K` topics.
    groups: Vec<f64>,
    /// `alpha beta sum_t inv[t]`.
    smooth: f64,
    /// `alpha sum_t n_wt inv[t]` for the current word.
    word_mass: f64,
}

/// Topics per group of the smoothing bucket's sums.
const GROUP: usize = 32;

impl Buckets {
    fn new(totals: &[i64], priors: Priors) -> Self {
        let inv: Vec<f64> = totals.iter().map(|&n| 1.0 / (n as f64 + priors.vbeta)).collect();
        let smooth = priors.alpha * priors.beta * inv.iter().sum::<f64>();
        let groups = inv.chunks(GROUP).map(|g| g.iter().sum()).collect();
        let coef = inv.iter().map(|&x| priors.beta * x).collect();
        Buckets { priors, inv, coef, groups, smooth, word_mass: 0.0 }
    }

    /// The current word has `c > 0` tokens of topic `t`.
    #[inline]
    fn enter(&mut self, t: usize, c: u32) {
        self.word_mass += self.priors.alpha * c as f64 * self.inv[t];
        self.coef[t] = (c as f64 + self.priors.beta) * self.inv[t];
    }

    /// The segment of a word with topic `t` among its topics is done.
    #[inline]
    fn leave(&mut self, t: usize) {
        self.coef[t] = self.priors.beta * self.inv[t];
    }

    /// Moves the current word's count of topic `t` (and `n_t`) by `delta`.
    #[inline]
    fn shift(&mut self, t: usize, delta: i64, row: &mut [u32], totals: &mut [i64]) {
        let Priors { alpha, beta, vbeta, .. } = self.priors;
        let before = self.inv[t];
        self.word_mass -= alpha * row[t] as f64 * before;
        row[t] = (i64::from(row[t]) + delta) as u32;
        totals[t] += delta;
        let after = 1.0 / (totals[t] as f64 + vbeta);
        self.inv[t] = after;
        self.coef[t] = (row[t] as f64 + beta) * after;
        self.word_mass += alpha * row[t] as f64 * after;
        self.smooth += alpha * beta * (after - before);
        self.groups[t / GROUP] += after - before;
    }

    /// The topic at `u` in `[0, sum inv)` of the smoothing bucket (the last topic if rounding puts `u` past the end).
    fn smoothing_draw(&self, mut u: f64) -> usize {
        for (g, &sum) in self.groups.iter().enumerate() {
            if u < sum {
                let first = g * GROUP;
                for (t, &x) in self.inv[first..(first + GROUP).min(self.inv.len())].iter().enumerate() {
                    u -= x;
                    if u <= 0.0 {
                        return first + t;
                    }
                }
                return (first + GROUP).min(self.inv.len()) - 1;
            }
            u -= sum;
        }
        self.inv.len() - 1
    }
}

/// `sum_j c_j coef[t_j]` over a document's `(t, c)` pairs, in four interleaved sums.
#[inline]
fn document_mass(pairs: &[[u32; 2]], coef: &[f64]) -> f64 {
    let mut sums = [0.0f64; 4];
    let mut quads = pairs.chunks_exact(4);
    for q in &mut quads {
        for (sum, &[t, c]) in sums.iter_mut().zip(q) {
            *sum += c as f64 * coef[t as usize];
        }
    }
    for (sum, &[t, c]) in sums.iter_mut().zip(quads.remainder()) {
        *sum += c as f64 * coef[t as usize];
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3])
}

/// How many tokens ahead SparseLDA touches a document's counts.
const LOOKAHEAD: usize = 4;

/// A sampler with its scratch space, reused from block to block. The document counts it is given
/// decide the kernel: nonzero pairs for SparseLDA, dense rows for the alias sampler.
#[derive(Debug)]
pub struct Sampler {
    priors: Priors,
    mh_steps: usize,
    /// Scratch of `K` numbers: the alias sampler's counts of the segment's own tokens.
    scratch: Vec<f64>,
    /// Scratch of `K` flags: topic already in the word's list.
    listed: Vec<bool>,
    word_topics: Vec<u32>,
    weights: Vec<f64>,
}

impl Sampler {
    /// Samples with another `alpha` from now on.
    pub fn set_alpha(&mut self, alpha: f64) {
        self.priors.alpha = alpha;
    }

    /// A sampler for `priors`, with `mh_steps` proposals per token for the alias kernel.
    pub fn new(priors: Priors, mh_steps: usize) -> Self {
        let k = priors.topics;
        Sampler {
            priors,
            mh_steps,
            scratch: vec![0.0; k],
            listed: vec![false; k],
            word_topics: Vec::with_capacity(k),
            weights: Vec::with_capacity(k),
        }
    }

    /// Samples every token of block `block` once. `rows` holds the block's word-topic rows by slot;
    /// `totals` is this worker's view of `n_k`. Returns the number of tokens sampled.
    pub fn sample(
        &mut self,
        block: usize,
        tokens: &mut Tokens,
        docs: &mut DocTopics,
        rows: &mut [u32],
        totals: &mut [i64],
        rng: &mut Xoshiro256PlusPlus,
    ) -> u64 {
        match docs {
            DocTopics::Sparse(docs) => self.sample_sparse(block, tokens, docs, rows, totals, rng),
            DocTopics::Dense(docs) => self.sample_alias(block, tokens, docs, rows, totals, rng),
        }
    }

    fn sample_sparse(
        &mut self,
        block: usize,
        tokens: &mut Tokens,
        docs: &mut SparseDocs,
        rows: &mut [u32],
        totals: &mut [i64],
        rng: &mut Xoshiro256PlusPlus,
    ) -> u64 {
        let Priors { topics: k, alpha, beta, .. } = self.priors;
        let mut b = Buckets::new(totals, self.priors);
        let mut sampled = 0u64;
        let mut touched = 0u32;
        for at in tokens.segment_start[block]..tokens.segment_start[block + 1] {
            let seg = tokens.segments[at];
            let row = &mut rows[seg.slot as usize * k..(seg.slot as usize + 1) * k];
            self.word_topics.clear();
            b.word_mass = 0.0;
            for (t, &c) in row.iter().enumerate() {
                if c > 0 {
                    self.word_topics.push(t as u32);
                    self.listed[t] = true;
                    b.enter(t, c);
                }
            }
            for i in seg.start..seg.end {
                // Touch a later token's document now, so its cache miss overlaps this token's work.
                if let Some(&ahead) = docs.token_start.get(i + LOOKAHEAD) {
                    touched ^= docs.entries[ahead][0];
                }
                let old = tokens.topic[i];
                b.shift(old as usize, -1, row, totals);
                let header = docs.token_start[i];
                let capacity = docs.entries[header][1] as usize;
                let (head, rest) = docs.entries[header..header + 1 + capacity].split_at_mut(1);
                let mut len = head[0][0] as usize;
                let pairs = rest;
                // The token's topic is in its document's pairs: the counts were built from the topics.
                let p = pairs[..len].iter().position(|e| e[0] == old).unwrap_or(0);
                pairs[p][1] -= 1;
                if pairs[p][1] == 0 {
                    pairs.swap(p, len - 1);
                    len -= 1;
                }
                // Document bucket, over the document's nonzero topics: its total by four running
                // sums (no chain of dependent additions), and a draw in it walks the terms again.
                let doc_mass = document_mass(&pairs[..len], &b.coef);
                let (smooth, word_mass) = (b.smooth, b.word_mass);
                let mut u = rng.random::<f64>() * (smooth + word_mass + doc_mass);
                // The drawn topic, and its place in the document's pairs when it came from there.
                let (new, place) = 'draw: {
                    if u < doc_mass && len > 0 {
                        for (j, &[t, c]) in pairs[..len].iter().enumerate() {
                            u -= c as f64 * b.coef[t as usize];
                            if u <= 0.0 {
                                break 'draw (t as usize, Some(j));
                            }
                        }
                        break 'draw (pairs[len - 1][0] as usize, Some(len - 1));
                    }
                    u -= doc_mass;
                    if u < word_mass {
                        let mut last = None;
                        for &t in &self.word_topics {
                            let term = alpha * row[t as usize] as f64 * b.inv[t as usize];
                            u -= term;
                            if term > 0.0 {
                                last = Some(t as usize);
                            }
                            if u <= 0.0 && term > 0.0 {
                                break 'draw (t as usize, None);
                            }
                        }
                        if let Some(t) = last {
                            break 'draw (t, None);
                        }
                    }
                    u -= word_mass;
                    (b.smoothing_draw(u.clamp(0.0, smooth) / (alpha * beta)), None)
                };
                match place.or_else(|| pairs[..len].iter().position(|e| e[0] as usize == new)) {
                    Some(j) => pairs[j][1] += 1,
                    None => {
                        pairs[len] = [new as u32, 1];
                        len += 1;
                    }
                }
                head[0][0] = len as u32;
                b.shift(new, 1, row, totals);
                if !self.listed[new] {
                    self.listed[new] = true;
                    self.word_topics.push(new as u32);
                }
                tokens.topic[i] = new as u32;
                sampled += 1;
            }
            for &t in &self.word_topics {
                self.listed[t as usize] = false;
                b.leave(t as usize);
            }
        }
        std::hint::black_box(touched);
        sampled
    }

    fn sample_alias(
        &mut self,
        block: usize,
        tokens: &mut Tokens,
        docs: &mut DenseDocs,
        rows: &mut [u32],
        totals: &mut [i64],
        rng: &mut Xoshiro256PlusPlus,
    ) -> u64 {
        let Priors { topics: k, alpha, beta, vbeta } = self.priors;
        let k_alpha = k as f64 * alpha;
        let k_beta = k as f64 * beta;
        let mut sampled = 0u64;
        for at in tokens.segment_start[block]..tokens.segment_start[block + 1] {
            let seg = tokens.segments[at];
            let row = &mut rows[seg.slot as usize * k..(seg.slot as usize + 1) * k];
            // The row is this segment's tokens plus the others (other workers' tokens, which do not
            // change while the segment is sampled): an alias table over the others, built once.
            for i in seg.start..seg.end {
                self.scratch[tokens.topic[i] as usize] += 1.0;
            }
            self.word_topics.clear();
            self.weights.clear();
            for (t, &c) in row.iter().enumerate() {
                let others = f64::from(c) - self.scratch[t];
                self.scratch[t] = 0.0;
                if others > 0.0 {
                    self.word_topics.push(t as u32);
                    self.weights.push(others);
                }
            }
            let others_mass: f64 = self.weights.iter().sum();
            let others_table = WeightedAliasIndex::new(std::mem::take(&mut self.weights)).ok();
            let len = seg.end - seg.start;
            let own_mass = (len - 1) as f64;
            for i in seg.start..seg.end {
                let d = tokens.doc[i] as usize;
                let mut s = tokens.topic[i] as usize;
                row[s] -= 1;
                totals[s] -= 1;
                docs.counts[d * k + s] -= 1;
                let n_d = docs.lengths[d] as f64;
                let own_slot = tokens.doc_slot[i] as usize;
                let (doc_first, doc_last) = (tokens.doc_start[d], tokens.doc_start[d + 1] - 1);
                for step in 0..self.mh_steps {
                    let drow = &docs.counts[d * k..(d + 1) * k];
                    // Accept `t` with probability min(1, accept / against).
                    let (t, accept, against) = if step % 2 == 0 {
                        // Word proposal q(t) ∝ n_wt + beta over the current counts: another token of
                        // the word (an alias draw among the others' topics, or a token of this
                        // segment), or a uniform topic.
                        let u = rng.random::<f64>() * (others_mass + own_mass + k_beta);
                        let t = if u < others_mass {
                            match &others_table {
                                Some(table) => self.word_topics[table.sample(rng)] as usize,
                                None => rng.random_range(0..k),
                            }
                        } else if u < others_mass + own_mass {
                            let j = seg.start + rng.random_range(0..len - 1);
                            let j = if j >= i { j + 1 } else { j };
                            tokens.topic[j] as usize
                        } else {
                            rng.random_range(0..k)
                        };
                        if t == s {
                            continue;
                        }
                        let accept = (drow[t] as f64 + alpha) * (totals[s] as f64 + vbeta);
                        let against = (drow[s] as f64 + alpha) * (totals[t] as f64 + vbeta);
                        (t, accept, against)
                    } else {
                        // Document proposal q(t) ∝ n_dt + alpha: another token of the document, or a
                        // uniform topic.
                        let u = rng.random::<f64>() * (n_d - 1.0 + k_alpha);
                        let t = if u < n_d - 1.0 {
                            // Slot `r` of the document's other tokens: skip over this token's own slot.
                            let r = doc_first + u as usize;
                            let r = if r >= own_slot { r + 1 } else { r };
                            tokens.by_doc[r.min(doc_last)] as usize
                        } else {
                            rng.random_range(0..k)
                        };
                        if t == s {
                            continue;
                        }
                        let accept = (row[t] as f64 + beta) * (totals[s] as f64 + vbeta);
                        let against = (row[s] as f64 + beta) * (totals[t] as f64 + vbeta);
                        (t, accept, against)
                    };
                    if accept >= against || rng.random::<f64>() * against < accept {
                        s = t;
                    }
                }
                row[s] += 1;
                totals[s] += 1;
                docs.counts[d * k + s] += 1;
                tokens.topic[i] = s as u32;
                tokens.by_doc[own_slot] = s as u16;
                sampled += 1;
            }
        }
        sampled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::LogGammaTable;
    use crate::layout::VocabularyBlocks;
    use rand::SeedableRng;

    /// A sparse sweep keeps each document's pairs equal to a recount of its tokens' topics, and the
    /// two representations give the same dense rows and log-likelihood part.
    #[test]
    fn sparse_pairs_stay_a_recount_of_the_topics() {
        let docs: Vec<Vec<u32>> = (0..30u32).map(|d| (0..d % 7 + 1).map(|i| (i * 5 + d) % 11).collect()).collect();
        let blocks = VocabularyBlocks::new(&[1; 11], 1, 1);
        let mut tokens = Tokens::new(docs.len(), |d| &docs[d], &blocks);
        let k = 4;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for z in tokens.topic.iter_mut() {
            *z = rng.random_range(0..k as u32);
        }
        let mut sparse = DocTopics::new(k, &tokens, docs.len(), SamplerKind::Sparse);
        let mut rows = vec![0u32; 11 * k];
        let mut totals = vec![0i64; k];
        for i in 0..tokens.len() {
            rows[blocks.slot_of[tokens.word[i] as usize] as usize * k + tokens.topic[i] as usize] += 1;
            totals[tokens.topic[i] as usize] += 1;
        }
        let priors = Priors { topics: k, alpha: 0.3, beta: 0.1, vbeta: 1.1 };
        let mut sampler = Sampler::new(priors, 2);
        let table = LogGammaTable::new(0.3);
        for _ in 0..5 {
            sampler.sample(0, &mut tokens, &mut sparse, &mut rows, &mut totals, &mut rng);
            let dense = DocTopics::new(k, &tokens, docs.len(), SamplerKind::Alias);
            assert_eq!(sparse.sparse(), dense.sparse());
            assert_eq!(sparse.sparse(), DocTopicCounts::recount(&tokens, docs.len(), k));
            let (a, b) = (sparse.log_likelihood_part(0.3, &table), dense.log_likelihood_part(0.3, &table));
            assert!((a - b).abs() < 1e-9 * a.abs(), "{a} against {b}");
            let DocTopics::Sparse(s) = &sparse else { unreachable!() };
            assert!((0..docs.len()).all(|d| s.pairs(d).iter().all(|&[_, c]| c > 0)));
        }
    }
}
