//! LDA parameters: raw settings, checked once into [`CheckedParams`] before any work starts.
//!
//! | name | default | meaning | range |
//! |---|---|---|---|
//! | `topics` | 100 | `K` | `1..=65535` |
//! | `alpha` | `50 / K` | symmetric Dirichlet prior on each document's topic mix, per topic | `> 0` |
//! | `beta` | 0.01 | symmetric Dirichlet prior on each topic's word distribution | `> 0` |
//! | `iterations` | 100 | sweeps over every token | `>= 1` |
//! | `sampler` | `None`: chosen from the corpus by [`choose_sampler`] | `sparse` (SparseLDA buckets, an exact draw per token) or `alias` (O(1) per token: alias tables + Metropolis-Hastings; more tokens per second, slower mixing per sweep) | |
//! | `mh_steps` | `None`: chosen from `K` by [`choose_mh_steps`] (4 up to K = 100, 8 from K = 1000) | proposals per token for `alias`, alternating word and document proposals | `1..=16` |
//! | `mode` | `model-parallel` | `model-parallel` (word rows rotate in blocks) or `data-parallel` (full stale copies) | |
//! | `blocks` | `P` | `U`: vocabulary blocks, at least the number of workers | `P..=max(V, P)` (V checked by `fit`) |
//! | `sync` | `subround` | when topic totals (and, data parallel, word-topic changes) are merged: `subround` or `iteration` | |
//! | `eval_every` | 10 | iterations between log-likelihood evaluations (and at the last) | `>= 1` |
//! | `test_every` | `eval_every` | iterations between held-out perplexities (when a test set is given) | `>= 1` |
//! | `fold_in_sweeps` | 10 | Gibbs sweeps over the observed half of each test document per evaluation | `>= 1` |
//! | `seed` | 0 | seed of the vocabulary shuffle and every worker's sampler | |
//! | `optimize_alpha` | 10 | every this many iterations, move the symmetric `alpha` by one step of Minka's fixed point (as tomotopy's `optim_interval`, for a symmetric prior; `None`: `alpha` stays fixed) | `>= 1` |
//! | `verify` | off | after every iteration, gather all counts and check their invariants (slow; for tests) | |

use strads_core::ParamError;

use crate::LdaError;

/// Which conditional sampler draws a token's topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplerKind {
    /// SparseLDA's split of the conditional into a smoothing, a word and a document bucket.
    Sparse,
    /// Alias tables for the word proposal, a token of the document for the document proposal,
    /// each corrected by a Metropolis-Hastings step (LightLDA's cycle).
    Alias,
}

impl SamplerKind {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            SamplerKind::Sparse => "sparse",
            SamplerKind::Alias => "alias",
        }
    }
}

/// Tokens per topic in the token-weighted mean document length from which [`choose_sampler`] takes
/// the alias sampler (1,600-token documents at K = 100, 16,000 at K = 1000).
pub const ALIAS_FROM_TOKENS_PER_TOPIC: f64 = 16.0;

/// The sampler with the shorter time to a given log-likelihood for `topics` topics and documents of
/// these `lengths` (measured in bench/results/lda-suite-2026-12-06.md): SparseLDA's cost per token
/// grows with the distinct topics of the token's document, at most `min(K, N_d)`, while the alias
/// sampler's is a few proposals whatever the document; it mixes more slowly per sweep, the more so the
/// larger `K`, and its cheaper sweeps win only where documents are very long for the number of topics:
/// the token-weighted mean length at least [`ALIAS_FROM_TOKENS_PER_TOPIC`] `x K`. On 2,000-token
/// documents it reached tomotopy's likelihood in 0.66x SparseLDA's time at K = 50, 0.67x at K = 100
/// and 1.8x at K = 1000; short texts and news articles (9 to 700 tokens, 12 K tokens or fewer) went
/// faster with SparseLDA at K = 50 to 5000.
pub fn choose_sampler(lengths: &[u64], topics: usize) -> SamplerKind {
    let tokens: f64 = lengths.iter().map(|&n| n as f64).sum();
    let weighted: f64 = lengths.iter().map(|&n| n as f64 * n as f64).sum();
    if tokens > 0.0 && weighted / tokens >= ALIAS_FROM_TOKENS_PER_TOPIC * topics as f64 {
        SamplerKind::Alias
    } else {
        SamplerKind::Sparse
    }
}

/// Proposals per token of the alias sampler for `topics` topics: 4 up to K = 100, 8 from K = 1000,
/// and between them 4 x (K / 100)^(log10 2) rounded, so each tenfold K doubles them. Measured on
/// 2,000-token documents (bench/results/lda-mh-steps-2026-12-07.md), in time to tomotopy's
/// likelihood: at K = 50 and 100, 4 proposals took as long as 2 (LightLDA's one cycle; 4 is its
/// default of two) and 6 longer, and at 100 iterations 4 end within 0.02 of SparseLDA's likelihood per
/// token where 2 trail by 0.04; at K = 1000, where a proposal is accepted less often, 8 took 0.63x the
/// time of 2 and 0.83x that of 4, and 12 and 16 no less than 8. Not measured above K = 1000, so
/// larger K keeps 8.
pub fn choose_mh_steps(topics: usize) -> usize {
    let steps = 4.0 * (topics as f64 / 100.0).powf(std::f64::consts::LOG10_2);
    (steps.round() as usize).clamp(4, 8)
}

/// Where the word-topic table lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// STRADS: the table is cut into vocabulary blocks that rotate over the workers.
    ModelParallel,
    /// YahooLDA-style baseline: every worker keeps the whole table and merges stale changes.
    DataParallel,
}

impl Mode {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Mode::ModelParallel => "model-parallel",
            Mode::DataParallel => "data-parallel",
        }
    }
}

/// When shared counts are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sync {
    /// After every sub-round (the paper).
    Subround,
    /// After every iteration (the release).
    Iteration,
}

/// LDA settings as the user gives them.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LdaParams {
    /// Number of topics `K`.
    pub topics: usize,
    /// Document-topic prior per topic; `None` is `50 / K`.
    pub alpha: Option<f64>,
    /// Topic-word prior.
    pub beta: f64,
    /// Sweeps over every token.
    pub iterations: u64,
    /// The conditional sampler; `None` chooses it from the corpus ([`choose_sampler`]).
    pub sampler: Option<SamplerKind>,
    /// Proposals per token for the alias sampler; `None` chooses them from `K` ([`choose_mh_steps`]).
    pub mh_steps: Option<usize>,
    /// Model or data parallel.
    pub mode: Mode,
    /// Vocabulary blocks `U`; `None` is the number of workers.
    pub blocks: Option<usize>,
    /// When shared counts are merged.
    pub sync: Sync,
    /// Iterations between log-likelihood evaluations.
    pub eval_every: u64,
    /// Iterations between held-out perplexities; `None` is `eval_every`.
    pub test_every: Option<u64>,
    /// Fold-in sweeps per held-out evaluation.
    pub fold_in_sweeps: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Check the count invariants after every iteration.
    pub verify: bool,
    /// Return every token's final topic.
    pub keep_assignments: bool,
    /// Re-estimate `alpha` every this many iterations (Minka's fixed point), or keep it fixed.
    pub optimize_alpha: Option<u64>,
}

impl Default for LdaParams {
    fn default() -> Self {
        LdaParams {
            topics: 100,
            alpha: None,
            beta: 0.01,
            iterations: 100,
            sampler: None,
            mh_steps: None,
            mode: Mode::ModelParallel,
            blocks: None,
            sync: Sync::Subround,
            eval_every: 10,
            test_every: None,
            fold_in_sweeps: 10,
            seed: 0,
            verify: false,
            keep_assignments: false,
            optimize_alpha: Some(10),
        }
    }
}

/// Parameters checked against their ranges and the number of workers, defaults resolved.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CheckedParams {
    /// `K`.
    pub topics: usize,
    /// Resolved `alpha`.
    pub alpha: f64,
    /// `beta`.
    pub beta: f64,
    /// Iterations.
    pub iterations: u64,
    /// Sampler: the one asked for, or, when `auto_sampler`, SparseLDA until [`crate::fit`] has
    /// chosen from the corpus ([`CheckedParams::for_corpus`]).
    pub sampler: SamplerKind,
    /// Whether the sampler is chosen from the corpus.
    pub auto_sampler: bool,
    /// Proposals per token (alias).
    pub mh_steps: usize,
    /// Mode.
    pub mode: Mode,
    /// Resolved `U`.
    pub blocks: usize,
    /// Workers `P` the parameters were checked for.
    pub workers: usize,
    /// Merge policy.
    pub sync: Sync,
    /// Evaluation period.
    pub eval_every: u64,
    /// Held-out period.
    pub test_every: u64,
    /// Fold-in sweeps.
    pub fold_in_sweeps: usize,
    /// Seed.
    pub seed: u64,
    /// Verify invariants every iteration.
    pub verify: bool,
    /// Return the final assignments.
    pub keep_assignments: bool,
    /// Period of the `alpha` re-estimation, if any.
    pub optimize_alpha: Option<u64>,
}

impl CheckedParams {
    /// These parameters for a corpus whose documents have `lengths`: the sampler chosen when `auto_sampler`.
    pub fn for_corpus(&self, lengths: &[u64]) -> CheckedParams {
        let mut params = self.clone();
        if params.auto_sampler {
            params.sampler = choose_sampler(lengths, params.topics);
        }
        params
    }
}

impl LdaParams {
    /// Checks every setting for a run on `workers` workers.
    pub fn check(&self, workers: usize) -> Result<CheckedParams, LdaError> {
        let bad = |parameter: &'static str, m: String| Err(LdaError::Params(ParamError::new(parameter, m)));
        if !(1..=65535).contains(&self.topics) {
            return bad("topics", format!("topics must be in 1..=65535, got {}", self.topics));
        }
        let alpha = self.alpha.unwrap_or(50.0 / self.topics as f64);
        if !(alpha.is_finite() && alpha > 0.0) {
            return bad("alpha", format!("alpha must be a positive number, got {alpha}"));
        }
        if !(self.beta.is_finite() && self.beta > 0.0) {
            return bad("beta", format!("beta must be a positive number, got {}", self.beta));
        }
        if self.iterations == 0 {
            return bad("iterations", "iterations must be at least 1".into());
        }
        let mh_steps = self.mh_steps.unwrap_or_else(|| choose_mh_steps(self.topics));
        if !(1..=16).contains(&mh_steps) {
            return bad("mh_steps", format!("mh-steps must be in 1..=16, got {mh_steps}"));
        }
        if workers == 0 {
            return bad("workers", "workers must be at least 1".into());
        }
        let blocks = self.blocks.unwrap_or(workers);
        if blocks < workers {
            return bad("blocks", format!("blocks (U = {blocks}) must be at least the number of workers ({workers})"));
        }
        if self.eval_every == 0 || self.test_every == Some(0) {
            return bad("eval_every", "eval-every and test-every must be at least 1".into());
        }
        if self.fold_in_sweeps == 0 {
            return bad("fold_in_sweeps", "fold-in sweeps must be at least 1".into());
        }
        if self.optimize_alpha == Some(0) {
            return bad(
                "optimize_alpha",
                "optimize-alpha must be at least 1 (iterations between two re-estimations)".into(),
            );
        }
        Ok(CheckedParams {
            topics: self.topics,
            alpha,
            beta: self.beta,
            iterations: self.iterations,
            sampler: self.sampler.unwrap_or(SamplerKind::Sparse),
            auto_sampler: self.sampler.is_none(),
            mh_steps,
            mode: self.mode,
            blocks,
            workers,
            sync: self.sync,
            eval_every: self.eval_every,
            test_every: self.test_every.unwrap_or(self.eval_every),
            fold_in_sweeps: self.fold_in_sweeps,
            seed: self.seed,
            verify: self.verify,
            keep_assignments: self.keep_assignments,
            optimize_alpha: self.optimize_alpha,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_alias_sampler_only_for_very_long_documents() {
        assert_eq!(choose_sampler(&[9; 1000], 100), SamplerKind::Sparse);
        assert_eq!(choose_sampler(&[700; 100], 100), SamplerKind::Sparse);
        assert_eq!(choose_sampler(&[2000; 100], 100), SamplerKind::Alias);
        assert_eq!(choose_sampler(&[2000; 100], 1000), SamplerKind::Sparse);
        // Token-weighted: one long document among many short ones holds most tokens.
        assert_eq!(choose_sampler(&[[5; 100].as_slice(), &[100_000]].concat(), 1000), SamplerKind::Alias);
        assert_eq!(choose_sampler(&[], 100), SamplerKind::Sparse);
        let auto = LdaParams::default().check(2).unwrap();
        assert!(auto.auto_sampler);
        assert_eq!(auto.for_corpus(&[2000; 10]).sampler, SamplerKind::Alias);
        let given = LdaParams { sampler: Some(SamplerKind::Sparse), ..LdaParams::default() }.check(2).unwrap();
        assert_eq!(given.for_corpus(&[2000; 10]).sampler, SamplerKind::Sparse);
    }

    #[test]
    fn proposals_per_token_grow_with_the_topics_unless_given() {
        let steps = |topics| LdaParams { topics, ..LdaParams::default() }.check(1).unwrap().mh_steps;
        assert_eq!([steps(3), steps(50), steps(100), steps(300), steps(1000), steps(5000)], [4, 4, 4, 6, 8, 8]);
        let given = LdaParams { topics: 1000, mh_steps: Some(2), ..LdaParams::default() };
        assert_eq!(given.check(1).unwrap().mh_steps, 2);
        assert!(LdaParams { mh_steps: Some(17), ..LdaParams::default() }.check(1).is_err());
    }
}
