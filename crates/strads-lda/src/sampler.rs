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

/// Document-topic counts of a worker's documents: dense rows, and lists of nonzero topics for SparseLDA.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DocTopics {
    topics: usize,
    /// `n_dk`, row by row.
    pub counts: Vec<u32>,
    /// `N_d`.
    pub lengths: Vec<u32>,
    nonzero: Option<Nonzeros>,
}

/// Each document's nonzero topics, in a slot of `min(K, N_d)` entries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Nonzeros {
    start: Vec<usize>,
    len: Vec<u32>,
    topics: Vec<u32>,
}

impl DocTopics {
    /// Counts of the documents whose tokens are `tokens`, from their current topics.
    pub fn new(topics: usize, tokens: &Tokens, documents: usize, with_nonzero_lists: bool) -> Self {
        let mut counts = vec![0u32; documents * topics];
        let lengths: Vec<u32> =
            (0..documents).map(|d| (tokens.doc_start[d + 1] - tokens.doc_start[d]) as u32).collect();
        for i in 0..tokens.len() {
            counts[tokens.doc[i] as usize * topics + tokens.topic[i] as usize] += 1;
        }
        let nonzero = with_nonzero_lists.then(|| {
            let mut start = Vec::with_capacity(documents + 1);
            let mut len = Vec::with_capacity(documents);
            let mut list = Vec::new();
            for d in 0..documents {
                start.push(list.len());
                let row = &counts[d * topics..(d + 1) * topics];
                let before = list.len();
                list.extend((0..topics as u32).filter(|&k| row[k as usize] > 0));
                len.push((list.len() - before) as u32);
                list.resize(before + (lengths[d] as usize).min(topics), 0);
            }
            start.push(list.len());
            Nonzeros { start, len, topics: list }
        });
        DocTopics { topics, counts, lengths, nonzero }
    }

    /// Number of documents.
    pub fn documents(&self) -> usize {
        self.lengths.len()
    }

    /// Document `d`'s row.
    pub fn row(&self, d: usize) -> &[u32] {
        &self.counts[d * self.topics..(d + 1) * self.topics]
    }

    fn nonzero(&self, d: usize) -> &[u32] {
        match &self.nonzero {
            Some(nz) => &nz.topics[nz.start[d]..nz.start[d] + nz.len[d] as usize],
            None => &[],
        }
    }

    #[inline]
    fn decrement(&mut self, d: usize, k: u32) {
        let c = &mut self.counts[d * self.topics + k as usize];
        *c -= 1;
        if *c == 0
            && let Some(nz) = &mut self.nonzero
        {
            let list = &mut nz.topics[nz.start[d]..nz.start[d] + nz.len[d] as usize];
            if let Some(at) = list.iter().position(|&t| t == k) {
                let last = list.len() - 1;
                list.swap(at, last);
                nz.len[d] -= 1;
            }
        }
    }

    #[inline]
    fn increment(&mut self, d: usize, k: u32) {
        let c = &mut self.counts[d * self.topics + k as usize];
        *c += 1;
        if *c == 1
            && let Some(nz) = &mut self.nonzero
        {
            nz.topics[nz.start[d] + nz.len[d] as usize] = k;
            nz.len[d] += 1;
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

/// SparseLDA's running sums, with `inv[t] = 1 / (n_t + V beta)` and, for the current word,
/// `e[t] = (n_wt + beta) inv[t]`, all kept in step with every count change.
struct Buckets {
    priors: Priors,
    inv: Vec<f64>,
    e: Vec<f64>,
    /// `alpha beta sum_t inv[t]`.
    smooth: f64,
    /// `alpha sum_t n_wt inv[t]` for the current word.
    word_mass: f64,
}

impl Buckets {
    fn new(totals: &[i64], priors: Priors) -> Self {
        let inv: Vec<f64> = totals.iter().map(|&n| 1.0 / (n as f64 + priors.vbeta)).collect();
        let smooth = priors.alpha * priors.beta * inv.iter().sum::<f64>();
        Buckets { priors, e: vec![0.0; inv.len()], inv, smooth, word_mass: 0.0 }
    }

    /// Moves the current word's count of topic `t` (and `n_t`) by `delta`.
    #[inline]
    fn shift(&mut self, t: usize, delta: i64, row: &mut [u32], totals: &mut [i64]) {
        let Priors { alpha, beta, vbeta, .. } = self.priors;
        self.word_mass -= alpha * row[t] as f64 * self.inv[t];
        self.smooth -= alpha * beta * self.inv[t];
        row[t] = (i64::from(row[t]) + delta) as u32;
        totals[t] += delta;
        self.inv[t] = 1.0 / (totals[t] as f64 + vbeta);
        self.e[t] = (row[t] as f64 + beta) * self.inv[t];
        self.word_mass += alpha * row[t] as f64 * self.inv[t];
        self.smooth += alpha * beta * self.inv[t];
    }
}

/// A sampler with its scratch space, reused from block to block.
#[derive(Debug)]
pub struct Sampler {
    kind: SamplerKind,
    priors: Priors,
    mh_steps: usize,
    /// Scratch of `K` numbers: the segment's own counts, or the bucket terms.
    scratch: Vec<f64>,
    /// Scratch of `K` flags: topic already in the word's list.
    listed: Vec<bool>,
    word_topics: Vec<u32>,
    weights: Vec<f64>,
}

impl Sampler {
    /// A sampler for `priors`.
    pub fn new(kind: SamplerKind, priors: Priors, mh_steps: usize) -> Self {
        let k = priors.topics;
        Sampler {
            kind,
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
        match self.kind {
            SamplerKind::Sparse => self.sample_sparse(block, tokens, docs, rows, totals, rng),
            SamplerKind::Alias => self.sample_alias(block, tokens, docs, rows, totals, rng),
        }
    }

    fn sample_sparse(
        &mut self,
        block: usize,
        tokens: &mut Tokens,
        docs: &mut DocTopics,
        rows: &mut [u32],
        totals: &mut [i64],
        rng: &mut Xoshiro256PlusPlus,
    ) -> u64 {
        let Priors { topics: k, alpha, beta, .. } = self.priors;
        let mut b = Buckets::new(totals, self.priors);
        let mut sampled = 0u64;
        for at in tokens.segment_start[block]..tokens.segment_start[block + 1] {
            let seg = tokens.segments[at];
            let row = &mut rows[seg.slot as usize * k..(seg.slot as usize + 1) * k];
            self.word_topics.clear();
            b.word_mass = 0.0;
            for (t, &c) in row.iter().enumerate() {
                b.e[t] = (c as f64 + beta) * b.inv[t];
                if c > 0 {
                    self.word_topics.push(t as u32);
                    self.listed[t] = true;
                    b.word_mass += alpha * c as f64 * b.inv[t];
                }
            }
            for i in seg.start..seg.end {
                let d = tokens.doc[i] as usize;
                let old = tokens.topic[i] as usize;
                b.shift(old, -1, row, totals);
                docs.decrement(d, old as u32);
                // Document bucket, over the document's nonzero topics.
                let drow = &docs.counts[d * k..(d + 1) * k];
                let mut doc_mass = 0.0;
                for &t in docs.nonzero(d) {
                    let term = drow[t as usize] as f64 * b.e[t as usize];
                    self.scratch[t as usize] = term;
                    doc_mass += term;
                }
                let (smooth, word_mass) = (b.smooth, b.word_mass);
                let mut u = rng.random::<f64>() * (smooth + word_mass + doc_mass);
                let new = 'draw: {
                    let nz = docs.nonzero(d);
                    if u < doc_mass {
                        for &t in nz {
                            u -= self.scratch[t as usize];
                            if u <= 0.0 {
                                break 'draw t as usize;
                            }
                        }
                        if let Some(&t) = nz.last() {
                            break 'draw t as usize;
                        }
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
                                break 'draw t as usize;
                            }
                        }
                        if let Some(t) = last {
                            break 'draw t;
                        }
                    }
                    u -= word_mass;
                    let mut u = u.clamp(0.0, smooth);
                    for (t, &x) in b.inv.iter().enumerate() {
                        u -= alpha * beta * x;
                        if u <= 0.0 {
                            break 'draw t;
                        }
                    }
                    k - 1
                };
                b.shift(new, 1, row, totals);
                docs.increment(d, new as u32);
                if !self.listed[new] {
                    self.listed[new] = true;
                    self.word_topics.push(new as u32);
                }
                tokens.topic[i] = new as u32;
                sampled += 1;
            }
            for &t in &self.word_topics {
                self.listed[t as usize] = false;
            }
        }
        sampled
    }

    fn sample_alias(
        &mut self,
        block: usize,
        tokens: &mut Tokens,
        docs: &mut DocTopics,
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
