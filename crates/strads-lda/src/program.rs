//! LDA as a scheduled program: its typed messages; the worker is in `worker.rs`, the scheduler (the
//! static plan of rotating sub-rounds) in `scheduler.rs`, the aggregator in `aggregator.rs`.
//!
//! Model parallel: worker `p` owns a contiguous range of documents and a hand of vocabulary blocks.
//! In each sub-round it samples the tokens whose word lies in the block at the front of its hand,
//! then passes that block to its left neighbour and receives one from its right (the static
//! engine's [`Rotation`]); after `U` sub-rounds every token was sampled once. The word-topic rows
//! live only in the blocks, so each is written by one worker at a time and memory per worker is
//! about `1/P` of the table. The only shared state, the topic totals `n_k`, is merged by `pull`.
//!
//! Data parallel (the baseline): every worker keeps all blocks and samples the same block in the
//! same sub-round; `pull` merges the workers' changes and every worker applies the others'.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use strads_core::Program;

use crate::sampler::DocTopicCounts;

/// The message types of LDA.
pub struct Lda;

impl Program for Lda {
    type Task = Task;
    type Partial = Partial;
    type Commit = Commit;
    type Feedback = Feedback;
    type Block = Block;
}

/// The word-topic rows of one vocabulary block, `K` counts per word in the block's row order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Which block.
    pub index: usize,
    /// `n_wk`, row by row.
    pub counts: Vec<u32>,
}

/// What a worker is asked to do in one round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    /// Count your tokens into the active block (model parallel) or into every block (data parallel).
    Init,
    /// Sample your tokens of the active block (model parallel) or of block `block` (data parallel);
    /// send your changes of the shared counts when `sync`.
    Sample {
        /// The block, data parallel.
        block: usize,
        /// Whether this round's changes are merged.
        sync: bool,
    },
    /// Send your parts of the log-likelihood.
    Evaluate,
    /// Send your documents' statistics for a re-estimation of `alpha`.
    OptimizeAlpha,
    /// One fold-in sweep over your test documents' observed tokens of the active block (all blocks, data parallel).
    FoldIn,
    /// Score your test documents' held-out tokens of the active block (all blocks, data parallel).
    Score,
    /// Send your counts (and your assignments if asked).
    Report {
        /// Include every token's topic.
        assignments: bool,
    },
}

/// One worker's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Partial {
    /// Nothing to merge.
    Nothing,
    /// After sampling.
    Sampled {
        /// The block sampled (model parallel), for the check that no two workers shared one.
        block: Option<usize>,
        /// Changes of `n_k` since the last merge, when the task asked to sync.
        totals: Option<Vec<i64>>,
        /// Changes `(word, topic, delta)` of the table since the last merge (data parallel).
        words: Vec<(u32, u32, i32)>,
    },
    /// Parts of the log-likelihood.
    Evaluated {
        /// The documents' part.
        documents: f64,
        /// The word rows' part, over the blocks this worker holds (data parallel: worker 0 only).
        words: f64,
        /// Bytes of word-topic counts this worker holds.
        model_bytes: u64,
    },
    /// The worker's documents' sums of Minka's fixed point at the current `alpha`.
    AlphaStatistics {
        /// `sum_d sum_k psi(n_dk + alpha) - psi(alpha)`.
        numerator: f64,
        /// `sum_d psi(N_d + K alpha) - psi(K alpha)`.
        denominator: f64,
    },
    /// Held-out log-likelihood of the worker's test tokens (summed over the score sub-rounds).
    Scored {
        /// Sum of `log p(w)`.
        log_likelihood: f64,
        /// Tokens scored.
        tokens: u64,
    },
    /// Counts, for verification and for the result.
    Report(Box<Report>),
}

/// A worker's counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    /// The worker.
    pub worker: usize,
    /// Global index of the worker's first document.
    pub first_document: usize,
    /// `n_dk` of the worker's documents.
    pub doc_topic: DocTopicCounts,
    /// Lengths of the worker's documents.
    pub lengths: Vec<u32>,
    /// Blocks held (model parallel), or all blocks (data parallel, every worker: copies must agree).
    pub blocks: Vec<Block>,
    /// The worker's view of `n_k`.
    pub totals: Vec<i64>,
    /// `(word, topic, count)` recounted from the worker's assignments.
    pub recounted: Vec<(u32, u32, u32)>,
    /// Whether `n_dk` equals the recount of the worker's assignments.
    pub doc_counts_match: bool,
    /// Every token's topic, document by document in corpus order.
    pub assignments: Option<Vec<Vec<u32>>>,
}

/// What `pull` commits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// The merged `n_k`.
    pub totals: Vec<i64>,
    /// The merged changes of the table (data parallel).
    pub words: Vec<(u32, u32, i32)>,
    /// A re-estimated `alpha`, to sample with from now on.
    pub alpha: Option<f64>,
}

/// What `pull` tells the scheduler.
#[derive(Clone, Debug, PartialEq)]
pub enum Feedback {
    /// Nothing of note.
    Done,
    /// The joint log-likelihood and the largest model held by a worker.
    Evaluated {
        /// `log p(w, z)`.
        log_likelihood: f64,
        /// Bytes.
        model_bytes: u64,
    },
    /// Held-out score.
    Scored {
        /// Sum of `log p(w)`.
        log_likelihood: f64,
        /// Tokens scored.
        tokens: u64,
    },
    /// `alpha` was re-estimated to this.
    Alpha(f64),
    /// The counts were gathered: `Err` names a broken invariant.
    Reported(Result<(), String>),
}

/// Sorts `(word, topic, delta)` changes and sums those of the same word and topic, dropping zeros.
pub fn merge_changes(changes: &mut Vec<(u32, u32, i32)>) {
    changes.sort_unstable_by_key(|&(w, t, _)| (w, t));
    let mut merged = 0;
    for i in 0..changes.len() {
        let (w, t, d) = changes[i];
        if merged > 0 && changes[merged - 1].0 == w && changes[merged - 1].1 == t {
            changes[merged - 1].2 += d;
        } else {
            changes[merged] = (w, t, d);
            merged += 1;
        }
    }
    changes.truncate(merged);
    changes.retain(|c| c.2 != 0);
}

/// The random stream of worker `p` for `seed`.
pub fn worker_rng(seed: u64, worker: usize, stream: u64) -> Xoshiro256PlusPlus {
    let mut seeder = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x1da_5eed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seeder.random::<u64>() ^ (worker as u64) << 32 ^ stream);
    rng.random::<u64>();
    rng
}

pub use crate::worker::{Shard, TestShard};
