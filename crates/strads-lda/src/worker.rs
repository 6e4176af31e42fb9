//! The LDA worker (`push`, `sync`): its documents' tokens grouped by vocabulary block, their
//! topics and document-topic counts, the word-topic blocks it holds, and the samplers over them.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use strads_core::checkpoint::{decode, encode, expect_len};
use strads_core::{BoxError, Round, Worker};
use strads_engine::Rotation;

use crate::eval::{LogGammaTable, count_terms};
use crate::layout::{Segment, Tokens, VocabularyBlocks};
use crate::params::{CheckedParams, Mode};
use crate::program::*;
use crate::sampler::{DenseDocs, DocTopicCounts, DocTopics, Priors, Sampler};

/// A worker's test documents: observed halves (sampled) and held-out halves (scored).
#[derive(Debug)]
pub struct TestShard {
    /// Observed tokens and their topics.
    pub observed: Tokens,
    /// Document-topic counts of the observed tokens.
    pub docs: DenseDocs,
    /// Held-out tokens.
    pub heldout: Tokens,
}

/// One worker: its documents' tokens and counts, and the blocks it holds.
#[derive(Debug)]
pub struct Shard {
    worker: usize,
    mode: Mode,
    priors: Priors,
    rotation: Rotation,
    rotations: u64,
    first_document: usize,
    tokens: Tokens,
    docs: DocTopics,
    /// Model parallel: the hand, front active. Data parallel: every block, by index.
    blocks: VecDeque<Block>,
    totals: Vec<i64>,
    merged_totals: Vec<i64>,
    /// Data parallel: changes applied here since the last merge, and whether they are applied yet.
    own: Vec<(u32, u32, i32)>,
    own_applied: bool,
    /// The most changes held between two merges while sampling (for the memory report).
    own_peak: usize,
    sampler: Sampler,
    rng: Xoshiro256PlusPlus,
    test: Option<TestShard>,
    doc_table: LogGammaTable,
    word_table: LogGammaTable,
    vocabulary: Arc<VocabularyBlocks>,
}

/// `(word, topic, count)` of the tokens of `segments`, counted word by word through a dense row.
fn recount<'a>(tokens: &'a Tokens, segments: &'a [Segment], k: usize) -> impl Iterator<Item = (u32, u32, u32)> + 'a {
    let mut row = vec![0u32; k];
    segments.iter().flat_map(move |seg| {
        for i in seg.start..seg.end {
            row[tokens.topic[i] as usize] += 1;
        }
        let counts: Vec<(u32, u32, u32)> = row
            .iter_mut()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(t, c)| (seg.word, t as u32, std::mem::take(c)))
            .collect();
        counts
    })
}

impl Shard {
    /// Worker `worker` over documents `first_document..` given by `documents`, with topics drawn uniformly.
    #[allow(clippy::too_many_arguments)]
    pub fn new<'a>(
        worker: usize,
        params: &CheckedParams,
        vocabulary: &Arc<VocabularyBlocks>,
        first_document: usize,
        documents: usize,
        doc_tokens: impl Fn(usize) -> &'a [u32],
        test: Option<&[(Vec<u32>, Vec<u32>)]>,
    ) -> Self {
        let k = params.topics;
        let v = vocabulary.block_of.len();
        let priors = Priors { topics: k, alpha: params.alpha, beta: params.beta, vbeta: v as f64 * params.beta };
        let mut rng = worker_rng(params.seed, worker, 0);
        let mut tokens = Tokens::new(documents, doc_tokens, vocabulary);
        for z in tokens.topic.iter_mut() {
            *z = rng.random_range(0..k as u32);
        }
        tokens.refresh_by_doc();
        let docs = DocTopics::new(k, &tokens, documents, params.sampler);
        let rotation = Rotation::new(params.blocks, params.workers).expect("blocks >= workers was checked");
        let held: Vec<usize> = match params.mode {
            Mode::ModelParallel => rotation.initial_hand(worker).collect(),
            Mode::DataParallel => (0..params.blocks).collect(),
        };
        let blocks =
            held.into_iter().map(|b| Block { index: b, counts: vec![0; vocabulary.words[b].len() * k] }).collect();
        let test = test.map(|split| {
            let count = split.len();
            let mut observed = Tokens::new(count, |d| &split[d].0, vocabulary);
            let heldout = Tokens::new(count, |d| &split[d].1, vocabulary);
            let mut test_rng = worker_rng(params.seed, worker, 1);
            for z in observed.topic.iter_mut() {
                *z = test_rng.random_range(0..k as u32);
            }
            let docs = DenseDocs::new(k, &observed, count);
            TestShard { observed, docs, heldout }
        });
        Shard {
            worker,
            mode: params.mode,
            priors,
            rotation,
            rotations: 0,
            first_document,
            tokens,
            docs,
            blocks,
            totals: vec![0; k],
            merged_totals: vec![0; k],
            own: Vec::new(),
            own_applied: false,
            own_peak: 0,
            sampler: Sampler::new(priors, params.mh_steps),
            rng,
            test,
            doc_table: LogGammaTable::new(params.alpha),
            word_table: LogGammaTable::new(params.beta),
            vocabulary: Arc::clone(vocabulary),
        }
    }

    /// Samples, evaluates and folds in with another `alpha` from now on.
    fn set_alpha(&mut self, alpha: f64) {
        self.priors.alpha = alpha;
        self.sampler.set_alpha(alpha);
        self.doc_table = LogGammaTable::new(alpha);
    }

    /// The block this worker works on now (model parallel).
    fn active(&self) -> usize {
        self.rotation.active_block(self.worker, self.rotations)
    }

    fn block_position(&self, index: usize) -> usize {
        match self.mode {
            Mode::ModelParallel => {
                debug_assert_eq!(
                    self.blocks.front().map(|b| b.index),
                    Some(index),
                    "worker {} holds the wrong block",
                    self.worker
                );
                0
            }
            Mode::DataParallel => index,
        }
    }

    fn totals_delta(&self) -> Vec<i64> {
        self.totals.iter().zip(&self.merged_totals).map(|(a, b)| a - b).collect()
    }

    fn init(&mut self) -> Partial {
        let k = self.priors.topics;
        match self.mode {
            Mode::ModelParallel => {
                let b = self.active();
                let first = self.rotations == 0;
                let at = self.block_position(b);
                let block = &mut self.blocks[at];
                for seg in self.tokens.block(b) {
                    let row = &mut block.counts[seg.slot as usize * k..(seg.slot as usize + 1) * k];
                    for i in seg.start..seg.end {
                        row[self.tokens.topic[i] as usize] += 1;
                    }
                }
                if first {
                    for &z in &self.tokens.topic {
                        self.totals[z as usize] += 1;
                    }
                }
                Partial::Sampled { block: Some(b), totals: first.then(|| self.totals_delta()), words: Vec::new() }
            }
            Mode::DataParallel => {
                let words: Vec<(u32, u32, i32)> =
                    recount(&self.tokens, &self.tokens.segments, k).map(|(w, t, c)| (w, t, c as i32)).collect();
                for &z in &self.tokens.topic {
                    self.totals[z as usize] += 1;
                }
                self.own = words.clone();
                self.own_applied = false;
                Partial::Sampled { block: None, totals: Some(self.totals_delta()), words }
            }
        }
    }

    fn sample(&mut self, block: usize, sync: bool) -> Partial {
        let b = match self.mode {
            Mode::ModelParallel => self.active(),
            Mode::DataParallel => block,
        };
        let at = self.block_position(b);
        // The block's tokens are contiguous; data parallel, remember their topics to send the changes.
        let span =
            self.tokens.block(b).first().map_or(0, |s| s.start)..self.tokens.block(b).last().map_or(0, |s| s.end);
        let before = (self.mode == Mode::DataParallel).then(|| self.tokens.topic[span.clone()].to_vec());
        self.sampler.sample(
            b,
            &mut self.tokens,
            &mut self.docs,
            &mut self.blocks[at].counts,
            &mut self.totals,
            &mut self.rng,
        );
        if let Some(before) = before {
            // Net changes of each word's row, one word at a time through a dense scratch row.
            let k = self.priors.topics;
            let mut delta = vec![0i32; k];
            for seg in self.tokens.block(b) {
                for i in seg.start..seg.end {
                    let (old, new) = (before[i - span.start], self.tokens.topic[i]);
                    if old != new {
                        delta[old as usize] -= 1;
                        delta[new as usize] += 1;
                    }
                }
                for (t, d) in delta.iter_mut().enumerate().filter(|(_, d)| **d != 0) {
                    self.own.push((seg.word, t as u32, std::mem::take(d)));
                }
            }
            self.own_applied = true;
            self.own_peak = self.own_peak.max(self.own.len());
        }
        let totals = sync.then(|| self.totals_delta());
        let words = if sync && self.mode == Mode::DataParallel {
            merge_changes(&mut self.own);
            self.own.clone()
        } else {
            Vec::new()
        };
        Partial::Sampled { block: (self.mode == Mode::ModelParallel).then_some(b), totals, words }
    }

    fn evaluate(&self) -> Partial {
        let documents = self.docs.log_likelihood_part(self.priors.alpha, &self.doc_table);
        let words = match self.mode {
            Mode::DataParallel if self.worker != 0 => 0.0,
            _ => self.blocks.iter().map(|b| count_terms(&b.counts, &self.word_table)).sum(),
        };
        let model_bytes = self.blocks.iter().map(|b| b.counts.len() as u64 * 4).sum::<u64>()
            + (self.own_peak * std::mem::size_of::<(u32, u32, i32)>()) as u64;
        Partial::Evaluated { documents, words, model_bytes }
    }

    /// Blocks to work on in a test round: the active one, or all of them (data parallel).
    fn test_blocks(&self) -> Vec<usize> {
        match self.mode {
            Mode::ModelParallel => vec![self.active()],
            Mode::DataParallel => (0..self.blocks.len()).collect(),
        }
    }

    fn fold_in(&mut self) -> Partial {
        let Priors { topics: k, alpha, beta, vbeta } = self.priors;
        let blocks: Vec<(usize, usize)> = self.test_blocks().into_iter().map(|b| (b, self.block_position(b))).collect();
        let Some(test) = &mut self.test else { return Partial::Nothing };
        let mut weights = vec![0.0; k];
        for (b, at) in blocks {
            let counts = &self.blocks[at].counts;
            for s in test.observed.segment_start[b]..test.observed.segment_start[b + 1] {
                let seg = test.observed.segments[s];
                let row = &counts[seg.slot as usize * k..(seg.slot as usize + 1) * k];
                for i in seg.start..seg.end {
                    let d = test.observed.doc[i] as usize;
                    let old = test.observed.topic[i] as usize;
                    test.docs.counts[d * k + old] -= 1;
                    let drow = &test.docs.counts[d * k..(d + 1) * k];
                    let mut sum = 0.0;
                    for t in 0..k {
                        sum += (drow[t] as f64 + alpha) * (row[t] as f64 + beta) / (self.totals[t] as f64 + vbeta);
                        weights[t] = sum;
                    }
                    let u = self.rng.random::<f64>() * sum;
                    let new = weights.partition_point(|&c| c < u).min(k - 1);
                    test.docs.counts[d * k + new] += 1;
                    test.observed.topic[i] = new as u32;
                }
            }
        }
        Partial::Nothing
    }

    fn score(&self) -> Partial {
        let Some(test) = &self.test else { return Partial::Nothing };
        let Priors { topics: k, alpha, beta, vbeta } = self.priors;
        let k_alpha = k as f64 * alpha;
        let (mut log_likelihood, mut tokens) = (0.0, 0);
        for b in self.test_blocks() {
            let counts = &self.blocks[self.block_position(b)].counts;
            for seg in test.heldout.block(b) {
                let row = &counts[seg.slot as usize * k..(seg.slot as usize + 1) * k];
                for i in seg.start..seg.end {
                    let d = test.heldout.doc[i] as usize;
                    let drow = test.docs.row(d);
                    let norm = test.docs.lengths[d] as f64 + k_alpha;
                    let p: f64 = (0..k)
                        .map(|t| {
                            (drow[t] as f64 + alpha) / norm * (row[t] as f64 + beta) / (self.totals[t] as f64 + vbeta)
                        })
                        .sum();
                    log_likelihood += p.ln();
                    tokens += 1;
                }
            }
        }
        Partial::Scored { log_likelihood, tokens }
    }

    fn report(&self, assignments: bool) -> Partial {
        let k = self.priors.topics;
        let doc_topic = self.docs.sparse();
        let doc_counts_match = DocTopicCounts::recount(&self.tokens, self.docs.documents(), k) == doc_topic;
        let recounted = recount(&self.tokens, &self.tokens.segments, k).collect();
        let assignments = assignments.then(|| {
            (0..self.docs.documents())
                .map(|d| self.tokens.positions(d).iter().map(|&p| self.tokens.topic[p as usize]).collect())
                .collect()
        });
        Partial::Report(Box::new(Report {
            worker: self.worker,
            first_document: self.first_document,
            doc_topic,
            lengths: self.docs.lengths().to_vec(),
            blocks: self.blocks.iter().cloned().collect(),
            totals: self.totals.clone(),
            recounted,
            doc_counts_match,
            assignments,
        }))
    }
}

impl Worker<Lda> for Shard {
    fn push(&mut self, _round: Round, task: &Task) -> Partial {
        match task {
            Task::Init => self.init(),
            Task::Sample { block, sync } => self.sample(*block, *sync),
            Task::Evaluate => self.evaluate(),
            Task::OptimizeAlpha => {
                let (numerator, denominator) = self.docs.alpha_statistics(self.priors.alpha);
                Partial::AlphaStatistics { numerator, denominator }
            }
            Task::FoldIn => self.fold_in(),
            Task::Score => self.score(),
            Task::Report { assignments } => self.report(*assignments),
        }
    }

    fn sync(&mut self, _round: Round, commit: &Commit) {
        let k = self.priors.topics;
        if let Some(alpha) = commit.alpha {
            self.set_alpha(alpha);
        }
        self.totals.clone_from(&commit.totals);
        self.merged_totals.clone_from(&commit.totals);
        if self.mode == Mode::DataParallel {
            let vocabulary = &self.vocabulary;
            let blocks = &mut self.blocks;
            let mut apply = |(w, t, delta): (u32, u32, i32)| {
                let block = &mut blocks[vocabulary.block_of[w as usize] as usize];
                let c = &mut block.counts[vocabulary.slot_of[w as usize] as usize * k + t as usize];
                *c = (i64::from(*c) + i64::from(delta)) as u32;
            };
            for &change in &commit.words {
                apply(change);
            }
            if self.own_applied {
                for &(w, t, delta) in &self.own {
                    apply((w, t, -delta));
                }
            }
            // Dropped rather than cleared: the first merge (all counts) is far larger than the rest.
            self.own = Vec::new();
            self.own_applied = false;
        }
    }

    fn pass_block(&mut self) -> Option<Block> {
        self.rotations += 1;
        match self.mode {
            Mode::ModelParallel => self.blocks.pop_front(),
            Mode::DataParallel => None,
        }
    }

    fn receive_block(&mut self, block: Block) {
        self.blocks.push_back(block);
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        let test = self.test.as_ref().map(|t| (&t.observed.topic, &t.observed.by_doc, &t.docs));
        encode(&(
            self.rotations,
            (&self.tokens.topic, &self.tokens.by_doc),
            &self.docs,
            &self.blocks,
            (&self.totals, &self.merged_totals),
            (&self.own, self.own_applied, self.own_peak),
            &self.rng,
            test,
            self.priors.alpha,
        ))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        type TestState = Option<(Vec<u32>, Vec<u16>, DenseDocs)>;
        type State = (
            u64,
            (Vec<u32>, Vec<u16>),
            DocTopics,
            VecDeque<Block>,
            (Vec<i64>, Vec<i64>),
            (Vec<(u32, u32, i32)>, bool, usize),
            Xoshiro256PlusPlus,
            TestState,
            f64,
        );
        let (rotations, (topic, by_doc), docs, blocks, (totals, merged_totals), own, rng, test, alpha): State =
            decode(state)?;
        expect_len("token topics", topic.len(), self.tokens.topic.len())?;
        expect_len("token topics by document", by_doc.len(), self.tokens.by_doc.len())?;
        if !docs.same_shape(&self.docs) {
            return Err("document-topic counts of another shape than this run's".into());
        }
        expect_len("topic totals", totals.len(), self.totals.len())?;
        match (&mut self.test, test) {
            (None, None) => {}
            (Some(shard), Some((topic, by_doc, docs))) => {
                expect_len("test token topics", topic.len(), shard.observed.topic.len())?;
                expect_len("test document-topic counts", docs.counts.len(), shard.docs.counts.len())?;
                shard.observed.topic = topic;
                shard.observed.by_doc = by_doc;
                shard.docs = docs;
            }
            _ => return Err("the checkpoint and this run differ in having test documents".into()),
        }
        self.rotations = rotations;
        self.tokens.topic = topic;
        self.tokens.by_doc = by_doc;
        self.docs = docs;
        self.blocks = blocks;
        self.totals = totals;
        self.merged_totals = merged_totals;
        (self.own, self.own_applied, self.own_peak) = own;
        self.rng = rng;
        self.set_alpha(alpha);
        Ok(())
    }
}
