//! Training an LDA model on any launcher: checks the corpus, lays out the shards, runs the plan, returns the model.

use std::sync::Arc;

use rand::seq::SliceRandom;
use strads_core::{Checkpoints, Launcher, Leading, NoCheckpoints, RunOptions, balanced_ranges};
use strads_corpus::Corpus;

use crate::LdaError;
use crate::aggregator::{Gathered, LdaAggregator};
use crate::layout::VocabularyBlocks;
use crate::params::{CheckedParams, Mode, SamplerKind};
use crate::program::{Lda, Shard, worker_rng};
use crate::scheduler::{LdaScheduler, TracePoint};

/// The training documents, as a process of a run sees them: counts over the whole corpus, and the
/// tokens of the documents its workers own (all of them for a [`Corpus`] in memory).
pub trait DocumentSource: Sync {
    /// Documents in the whole corpus.
    fn documents(&self) -> usize;
    /// Size of the vocabulary.
    fn vocabulary_size(&self) -> usize;
    /// Tokens in the whole corpus.
    fn token_count(&self) -> usize;
    /// Tokens of each word over the whole corpus.
    fn frequencies(&self) -> Vec<u64>;
    /// Tokens of each document of the whole corpus.
    fn lengths(&self) -> Vec<u64>;
    /// The word ids of document `d`, which this process must hold.
    fn document(&self, d: usize) -> &[u32];
    /// The largest word id, where this process sees one beyond the vocabulary.
    fn beyond_vocabulary(&self) -> Option<u32>;
}

/// The documents an MPI rank's workers own (`strads_corpus::load_prepared_share`).
impl DocumentSource for strads_corpus::RankCorpus {
    fn documents(&self) -> usize {
        strads_corpus::RankCorpus::documents(self)
    }

    fn vocabulary_size(&self) -> usize {
        strads_corpus::RankCorpus::vocabulary_size(self)
    }

    fn token_count(&self) -> usize {
        strads_corpus::RankCorpus::token_count(self)
    }

    fn frequencies(&self) -> Vec<u64> {
        strads_corpus::RankCorpus::frequencies(self).to_vec()
    }

    fn lengths(&self) -> Vec<u64> {
        strads_corpus::RankCorpus::lengths(self).to_vec()
    }

    fn document(&self, d: usize) -> &[u32] {
        strads_corpus::RankCorpus::document(self, d)
    }

    fn beyond_vocabulary(&self) -> Option<u32> {
        None // every share was parsed against the vocabulary
    }
}

impl DocumentSource for Corpus {
    fn documents(&self) -> usize {
        Corpus::documents(self)
    }

    fn vocabulary_size(&self) -> usize {
        Corpus::vocabulary_size(self)
    }

    fn token_count(&self) -> usize {
        Corpus::token_count(self)
    }

    fn frequencies(&self) -> Vec<u64> {
        let mut frequencies = vec![0u64; self.vocabulary_size()];
        for &w in &self.tokens {
            if let Some(f) = frequencies.get_mut(w as usize) {
                *f += 1;
            }
        }
        frequencies
    }

    fn lengths(&self) -> Vec<u64> {
        (0..Corpus::documents(self)).map(|d| Corpus::document(self, d).len() as u64).collect()
    }

    fn document(&self, d: usize) -> &[u32] {
        Corpus::document(self, d)
    }

    fn beyond_vocabulary(&self) -> Option<u32> {
        self.tokens.iter().copied().find(|&w| w as usize >= self.vocabulary_size())
    }
}

/// A trained topic model and how it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct LdaFit {
    /// `K`.
    pub topics: usize,
    /// `alpha` sampled with last: the given one, or its last re-estimation.
    pub alpha: f64,
    /// `(iteration, alpha)` after each re-estimation of `alpha` (empty when it stays fixed).
    pub alphas: Vec<(u64, f64)>,
    /// `beta` used.
    pub beta: f64,
    /// The sampler that ran (chosen from the corpus unless one was asked for).
    pub sampler: SamplerKind,
    /// The gathered counts: `n_wk`, `n_dk` (in corpus order), `n_k`, and assignments if asked.
    pub counts: Gathered,
    /// Tokens in the training corpus.
    pub tokens: u64,
    /// Iterations run.
    pub iterations: u64,
    /// Seconds of training (evaluations excluded).
    pub seconds: f64,
    /// The evaluation points, the last one after the last iteration.
    pub trace: Vec<TracePoint>,
}

impl LdaFit {
    /// The last evaluation point.
    pub fn last(&self) -> Option<&TracePoint> {
        self.trace.last()
    }

    /// `phi_kw = (n_wk + beta) / (n_k + V beta)` for topic `k`, over the vocabulary.
    pub fn topic_words(&self, k: usize) -> Vec<f64> {
        let v = self.counts.word_topic.len() / self.topics;
        let norm = self.counts.totals[k] as f64 + v as f64 * self.beta;
        (0..v).map(|w| (f64::from(self.counts.word_topic[w * self.topics + k]) + self.beta) / norm).collect()
    }

    /// `theta_dk = (n_dk + alpha) / (N_d + K alpha)` for document `d` (in corpus order).
    pub fn document_topics(&self, d: usize) -> Vec<f64> {
        let k = self.topics;
        let norm = f64::from(self.counts.lengths[d]) + k as f64 * self.alpha;
        self.counts.doc_topic.dense_row(d, k).iter().map(|&c| (f64::from(c) + self.alpha) / norm).collect()
    }
}

/// Splits each test document's tokens into an observed half and a held-out half, by a seeded shuffle.
pub fn split_for_completion(test: &Corpus, seed: u64) -> Vec<(Vec<u32>, Vec<u32>)> {
    let mut rng = worker_rng(seed, usize::MAX, 2);
    (0..test.documents())
        .map(|d| {
            let mut tokens = test.document(d).to_vec();
            tokens.shuffle(&mut rng);
            let heldout = tokens.split_off(tokens.len() / 2);
            (tokens, heldout)
        })
        .collect()
}

/// Checks that a corpus can be trained on `workers` workers and that every word id fits its vocabulary.
fn check_corpus(
    corpus: &(impl DocumentSource + ?Sized),
    test: Option<&Corpus>,
    workers: usize,
) -> Result<(), LdaError> {
    if corpus.token_count() == 0 {
        return Err(LdaError::Data("the corpus has no token".into()));
    }
    if corpus.documents() < workers {
        return Err(LdaError::Data(format!("{} documents cannot be shared by {workers} workers", corpus.documents())));
    }
    if let Some(w) = corpus.beyond_vocabulary() {
        return Err(LdaError::Data(format!("the training corpus has word id {w} beyond its vocabulary")));
    }
    if let Some(test) = test {
        if test.vocabulary_size() != corpus.vocabulary_size() {
            return Err(LdaError::Data(format!(
                "the test corpus has a vocabulary of {} words, the training corpus {}",
                test.vocabulary_size(),
                corpus.vocabulary_size()
            )));
        }
        if let Some(w) = test.beyond_vocabulary() {
            return Err(LdaError::Data(format!("the test corpus has word id {w} beyond its vocabulary")));
        }
    }
    Ok(())
}

/// Trains LDA on `launcher`'s workers; `observer` sees every evaluation point as it happens.
///
/// Returns the model on the leading process and `None` on the others.
pub fn fit<L: Launcher>(
    corpus: &(impl DocumentSource + ?Sized),
    test: Option<&Corpus>,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<Option<LdaFit>, LdaError> {
    fit_checkpointed(corpus, test, params, launcher, observer, &mut NoCheckpoints)
}

/// [`fit`] on a launcher whose calling process leads (the embedded runtime): the model itself.
pub fn fit_model<L: Leading>(
    corpus: &(impl DocumentSource + ?Sized),
    test: Option<&Corpus>,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<LdaFit, LdaError> {
    fit(corpus, test, params, launcher, observer)?
        .ok_or_else(|| LdaError::Data("a run on a leading launcher ended without a model".into()))
}

/// [`fit`] with checkpoints: resumes from `checkpoints` if it holds a snapshot of the same run,
/// and saves snapshots when it asks (see [`Checkpoints`]). It counts Gibbs iterations.
pub fn fit_checkpointed<L: Launcher>(
    corpus: &(impl DocumentSource + ?Sized),
    test: Option<&Corpus>,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
    checkpoints: &mut dyn Checkpoints,
) -> Result<Option<LdaFit>, LdaError> {
    let workers = launcher.workers();
    if workers != params.workers {
        return Err(LdaError::Params(strads_core::ParamError::new(
            "workers",
            format!("parameters were checked for {} workers, the launcher has {workers}", params.workers),
        )));
    }
    check_corpus(corpus, test, workers)?;
    if params.blocks > corpus.vocabulary_size().max(workers) {
        return Err(LdaError::Params(strads_core::ParamError::new(
            "blocks",
            format!(
                "blocks (U = {}) must be at most the vocabulary size ({}) or the number of workers",
                params.blocks,
                corpus.vocabulary_size()
            ),
        )));
    }
    let lengths = corpus.lengths();
    let params = &params.for_corpus(&lengths);
    let frequencies = corpus.frequencies();
    let vocabulary = Arc::new(VocabularyBlocks::new(&frequencies, params.blocks, params.seed));
    let shards = balanced_ranges(&lengths, workers);
    let split = test.map(|t| split_for_completion(t, params.seed));
    let test_shards = split.as_ref().map(|s| {
        let lengths: Vec<u64> = s.iter().map(|(a, b)| (a.len() + b.len()) as u64).collect();
        balanced_ranges(&lengths, workers)
    });
    let tokens = corpus.token_count() as u64;
    let outcome = launcher.run_checkpointed::<Lda, _, _, _>(
        RunOptions { pipeline_depth: 0 },
        checkpoints,
        |p| {
            let range = shards[p].clone();
            let first = range.start;
            let test_part = match (&split, &test_shards) {
                (Some(split), Some(ranges)) => Some(&split[ranges[p].clone()]),
                _ => None,
            };
            Ok(Shard::new(p, params, &vocabulary, first, range.len(), |d| corpus.document(first + d), test_part))
        },
        || {
            (
                LdaScheduler::new(params.clone(), tokens, test.is_some(), observer),
                LdaAggregator::new(params.clone(), Arc::clone(&vocabulary), corpus.documents(), tokens),
            )
        },
    )?;
    let Some((scheduler, aggregator)) = outcome else { return Ok(None) };
    if let Some((iteration, message)) = scheduler.failure() {
        return Err(LdaError::Invariant { iteration: *iteration, message: message.clone() });
    }
    let trace = scheduler.trace().to_vec();
    let alphas = scheduler.alphas().to_vec();
    let alpha = alphas.last().map_or(params.alpha, |&(_, alpha)| alpha);
    let iterations = scheduler.iterations();
    let seconds = scheduler.training_seconds();
    let counts = aggregator
        .into_gathered()
        .ok_or_else(|| LdaError::Data("the run ended before the model was gathered".into()))?;
    Ok(Some(LdaFit {
        topics: params.topics,
        alpha,
        alphas,
        beta: params.beta,
        sampler: params.sampler,
        counts,
        tokens,
        iterations,
        seconds,
        trace,
    }))
}

/// Bytes a training run needs, about: per token its word, document, topic and positions (and the
/// corpus); the document-topic counts: SparseLDA's nonzero pairs (at most one per token, kept by the
/// worker, its report and the gathered model), or the alias sampler's dense rows; and the word-topic
/// table: once over the workers when model parallel, on every worker when data parallel, and once gathered.
pub fn memory_estimate(
    tokens: usize,
    documents: usize,
    vocabulary: usize,
    topics: usize,
    workers: usize,
    mode: Mode,
    sampler: SamplerKind,
) -> u64 {
    let (t, d, v, k) = (tokens as u64, documents as u64, vocabulary as u64, topics as u64);
    let copies = match mode {
        Mode::ModelParallel => 2,
        Mode::DataParallel => workers.max(1) as u64 + 1,
    };
    let pairs = t.min(d.saturating_mul(k)).saturating_mul(8).saturating_mul(3);
    let doc_topic = match sampler {
        SamplerKind::Sparse => pairs,
        SamplerKind::Alias => pairs.saturating_add(d.saturating_mul(k).saturating_mul(4)),
    };
    t.saturating_mul(30)
        .saturating_add(doc_topic)
        .saturating_add(v.saturating_mul(k).saturating_mul(4).saturating_mul(copies))
}

impl crate::LdaParams {
    /// Checks these settings and fits `corpus` with them on the calling thread (one worker), with
    /// the trace unobserved. For several workers, a held-out corpus or progress, use [`fit_model`].
    pub fn fit(&self, corpus: &(impl DocumentSource + ?Sized)) -> Result<LdaFit, LdaError> {
        let checked = self.check(1)?;
        fit_model(corpus, None, &checked, &strads_engine::Inline::new(1)?, &mut |_| {})
    }
}
