//! The LDA aggregator: merges the topic totals and, data parallel, the workers' changes; gathers
//! the counts at the end and checks their invariants.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{Aggregator, Assignment, BoxError, Pulled, Round};

use crate::eval::{minka_step, totals_part};
use crate::layout::VocabularyBlocks;
use crate::params::{CheckedParams, Mode};
use crate::program::{Block, Commit, Feedback, Lda, Partial, Report, Task, merge_changes};
use crate::sampler::DocTopicCounts;

/// The whole model gathered from the workers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gathered {
    /// `n_wk`, `V x K`, row by word id.
    pub word_topic: Vec<u32>,
    /// `n_dk`, each document's nonzero counts, by document.
    pub doc_topic: DocTopicCounts,
    /// `N_d`.
    pub lengths: Vec<u32>,
    /// `n_k`.
    pub totals: Vec<i64>,
    /// Every token's topic, when asked.
    pub assignments: Option<Vec<Vec<u32>>>,
}

/// Merges the workers' changes of the shared counts; gathers and checks the model when asked.
pub struct LdaAggregator {
    params: CheckedParams,
    vocabulary: Arc<VocabularyBlocks>,
    documents: usize,
    tokens: u64,
    totals: Vec<i64>,
    /// The `alpha` the workers sample with.
    alpha: f64,
    gathered: Option<Gathered>,
}

impl LdaAggregator {
    /// An aggregator for a corpus of `documents` documents and `tokens` tokens.
    pub fn new(params: CheckedParams, vocabulary: Arc<VocabularyBlocks>, documents: usize, tokens: u64) -> Self {
        let k = params.topics;
        let alpha = params.alpha;
        LdaAggregator { params, vocabulary, documents, tokens, totals: vec![0; k], alpha, gathered: None }
    }

    /// The model gathered by the last report.
    pub fn into_gathered(self) -> Option<Gathered> {
        self.gathered
    }

    fn gather(&mut self, mut reports: Vec<Report>, keep: bool) -> Result<(), String> {
        let k = self.params.topics;
        let v = self.vocabulary.block_of.len();
        let mut word_topic = vec![0u32; v * k];
        let mut seen = vec![false; self.vocabulary.blocks()];
        let place = |block: &Block, word_topic: &mut [u32]| {
            for (slot, &w) in self.vocabulary.words[block.index].iter().enumerate() {
                word_topic[w as usize * k..(w as usize + 1) * k]
                    .copy_from_slice(&block.counts[slot * k..(slot + 1) * k]);
            }
        };
        let mut doc_topic = DocTopicCounts::with_documents(self.documents);
        let mut lengths = vec![0u32; self.documents];
        let mut order: Vec<usize> = (0..reports.len()).collect();
        order.sort_by_key(|&p| reports[p].first_document);
        for &p in &order {
            if reports[p].first_document != doc_topic.documents() {
                return Err(format!("worker {p}'s documents do not follow the previous worker's"));
            }
            doc_topic.extend(&std::mem::take(&mut reports[p].doc_topic));
        }
        if doc_topic.documents() != self.documents {
            return Err(format!("the workers hold {} of the {} documents", doc_topic.documents(), self.documents));
        }
        let mut recounted: Vec<(u32, u32, u32)> = Vec::new();
        let mut assignments = keep.then(|| vec![Vec::new(); self.documents]);
        for p in 0..reports.len() {
            let report = &reports[p];
            match self.params.mode {
                Mode::ModelParallel => {
                    for block in &report.blocks {
                        if std::mem::replace(&mut seen[block.index], true) {
                            return Err(format!("block {} is held by two workers", block.index));
                        }
                        place(block, &mut word_topic);
                    }
                }
                Mode::DataParallel if p == 0 => {
                    for block in &report.blocks {
                        seen[block.index] = true;
                        place(block, &mut word_topic);
                    }
                }
                Mode::DataParallel => {
                    if report.blocks != reports[0].blocks {
                        return Err(format!("worker {p}'s copy of the word-topic table differs from worker 0's"));
                    }
                }
            }
            if !report.doc_counts_match {
                return Err(format!("worker {p}'s document-topic counts differ from its assignments"));
            }
            if report.totals != self.totals {
                return Err(format!("worker {p}'s topic totals differ from the merged ones"));
            }
            let first = report.first_document;
            let local = report.lengths.len();
            lengths[first..first + local].copy_from_slice(&report.lengths);
            if let (Some(all), Some(mine)) = (&mut assignments, &report.assignments) {
                for (d, topics) in mine.iter().enumerate() {
                    all[first + d].clone_from(topics);
                }
            }
            // What has been placed and checked is freed at once, so the gathered table does not
            // coexist with every worker's copy (worker 0's stays for the data-parallel comparison).
            let report = &mut reports[p];
            recounted.append(&mut report.recounted);
            if self.params.mode == Mode::ModelParallel || p > 0 {
                report.blocks = Vec::new();
            }
        }
        if let Some(b) = seen.iter().position(|&s| !s) {
            return Err(format!("block {b} is held by no worker"));
        }
        let tokens = self.tokens;
        if let Some(c) = word_topic.iter().copied().chain(doc_topic.counts()).find(|&c| u64::from(c) > tokens) {
            return Err(format!("a count of {c} exceeds the {tokens} tokens (a negative count wrapped)"));
        }
        let words: u64 = word_topic.iter().map(|&c| u64::from(c)).sum();
        let docs: u64 = doc_topic.counts().map(u64::from).sum();
        if words != tokens || docs != tokens {
            return Err(format!("sum of n_wk = {words}, sum of n_dk = {docs}, tokens = {tokens}"));
        }
        let mut totals = vec![0i64; k];
        for row in word_topic.chunks(k) {
            for (t, &c) in row.iter().enumerate() {
                totals[t] += i64::from(c);
            }
        }
        if totals != self.totals {
            return Err("n_k differs from the sum over words of n_wk".into());
        }
        if !matches_recount(&word_topic, k, recounted) {
            return Err("n_wk differs from the recount of the assignments".into());
        }
        self.gathered = Some(Gathered { word_topic, doc_topic, lengths, totals, assignments });
        Ok(())
    }
}

/// Whether the dense `V x K` table `word_topic` holds exactly the `(word, topic, count)` triples of
/// `recounted` (summed where a word and topic repeat), compared in sparse form so the check costs
/// memory by the tokens, not a second table.
fn matches_recount(word_topic: &[u32], k: usize, mut recounted: Vec<(u32, u32, u32)>) -> bool {
    recounted.sort_unstable_by_key(|&(w, t, _)| (w, t));
    let mut merged = recounted.into_iter().peekable();
    let mut sums = std::iter::from_fn(|| {
        let (w, t, mut c) = merged.next()?;
        while let Some((_, _, more)) = merged.next_if(|&(w2, t2, _)| (w2, t2) == (w, t)) {
            c += more;
        }
        Some((w as usize * k + t as usize, c))
    });
    let mut nonzero = word_topic.iter().enumerate().filter(|(_, c)| **c > 0).map(|(at, &c)| (at, c));
    loop {
        match (nonzero.next(), sums.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

impl Aggregator<Lda> for LdaAggregator {
    fn pull(&mut self, _round: Round, tasks: &Assignment<Task>, partials: Vec<Partial>) -> Pulled<Commit, Feedback> {
        let task = match tasks {
            Assignment::All(task) => task.clone(),
            Assignment::Each(tasks) => tasks.first().cloned().unwrap_or(Task::Evaluate),
        };
        let nothing = Pulled { commit: None, feedback: Feedback::Done };
        match task {
            Task::Init | Task::Sample { .. } => {
                let mut merged = false;
                let mut words = Vec::new();
                let mut blocks = Vec::new();
                for partial in partials {
                    if let Partial::Sampled { block, totals, words: changes } = partial {
                        blocks.extend(block);
                        if let Some(delta) = totals {
                            merged = true;
                            for (n, d) in self.totals.iter_mut().zip(delta) {
                                *n += d;
                            }
                        }
                        words.extend(changes);
                    }
                }
                blocks.sort_unstable();
                debug_assert!(blocks.windows(2).all(|w| w[0] != w[1]), "two workers sampled the same block");
                if !merged {
                    return nothing;
                }
                merge_changes(&mut words);
                Pulled {
                    commit: Some(Assignment::All(Commit { totals: self.totals.clone(), words, alpha: None })),
                    feedback: Feedback::Done,
                }
            }
            Task::Evaluate => {
                let (mut documents, mut words, mut bytes) = (0.0, 0.0, 0u64);
                for partial in partials {
                    if let Partial::Evaluated { documents: d, words: w, model_bytes } = partial {
                        documents += d;
                        words += w;
                        bytes = bytes.max(model_bytes);
                    }
                }
                let v = self.vocabulary.block_of.len();
                let log_likelihood = documents + words + totals_part(&self.totals, v, self.params.beta);
                Pulled { commit: None, feedback: Feedback::Evaluated { log_likelihood, model_bytes: bytes } }
            }
            Task::OptimizeAlpha => {
                let (mut numerator, mut denominator) = (0.0, 0.0);
                for partial in partials {
                    if let Partial::AlphaStatistics { numerator: a, denominator: b } = partial {
                        numerator += a;
                        denominator += b;
                    }
                }
                self.alpha = minka_step(self.alpha, self.params.topics, numerator, denominator);
                let commit = Commit { totals: self.totals.clone(), words: Vec::new(), alpha: Some(self.alpha) };
                Pulled { commit: Some(Assignment::All(commit)), feedback: Feedback::Alpha(self.alpha) }
            }
            Task::FoldIn => nothing,
            Task::Score => {
                let (mut sum, mut count) = (0.0, 0);
                for partial in partials {
                    if let Partial::Scored { log_likelihood, tokens } = partial {
                        sum += log_likelihood;
                        count += tokens;
                    }
                }
                Pulled { commit: None, feedback: Feedback::Scored { log_likelihood: sum, tokens: count } }
            }
            Task::Report { assignments } => {
                let reports: Vec<Report> = partials
                    .into_iter()
                    .filter_map(|p| match p {
                        Partial::Report(r) => Some(*r),
                        _ => None,
                    })
                    .collect();
                Pulled { commit: None, feedback: Feedback::Reported(self.gather(reports, assignments)) }
            }
        }
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        encode(&(&self.totals, &self.gathered, self.alpha))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let (totals, gathered, alpha): (Vec<i64>, Option<Gathered>, f64) = decode(state)?;
        strads_core::checkpoint::expect_len("topic totals", totals.len(), self.totals.len())?;
        (self.totals, self.gathered, self.alpha) = (totals, gathered, alpha);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recount_check_sums_repeats_and_catches_a_missing_or_extra_count() {
        // V = 2, K = 2: word 0 has 2 tokens of topic 1, word 1 one of topic 0.
        let table = [0, 2, 1, 0];
        assert!(matches_recount(&table, 2, vec![(1, 0, 1), (0, 1, 1), (0, 1, 1)]));
        assert!(!matches_recount(&table, 2, vec![(0, 1, 2)]));
        assert!(!matches_recount(&table, 2, vec![(0, 1, 2), (1, 0, 1), (1, 1, 1)]));
        assert!(!matches_recount(&table, 2, vec![(0, 1, 1), (1, 0, 1)]));
        assert!(matches_recount(&[0, 0], 2, Vec::new()));
    }
}
