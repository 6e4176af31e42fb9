//! LDA topic models by collapsed Gibbs sampling, model parallel by vocabulary rotation.
//!
//! Documents are split over `P` workers; the vocabulary is shuffled and cut into `U >= P` blocks
//! whose word-topic rows travel from worker to worker (the static engine's rotation), so no row is
//! ever written by two workers at once and each worker holds about `1/P` of the model. Two
//! samplers draw from the same conditional: SparseLDA's buckets and an O(1) alias/Metropolis-Hastings
//! sampler. A data-parallel mode (full stale copies merged by `pull`) is the baseline to compare with.

mod aggregator;
mod error;
pub mod eval;
mod fit;
pub mod generate;
mod infer;
pub mod layout;
pub mod model;
mod params;
mod program;
pub mod reference;
pub mod sampler;
mod scheduler;
mod worker;

pub use aggregator::{Gathered, LdaAggregator};
pub use error::LdaError;
pub use fit::{DocumentSource, LdaFit, fit, fit_checkpointed, fit_model, memory_estimate, split_for_completion};
pub use infer::{TopicModel, infer};
pub use params::{
    ALIAS_FROM_TOKENS_PER_TOPIC, CheckedParams, LdaParams, Mode, SamplerKind, Sync, choose_mh_steps, choose_sampler,
};
pub use program::{Block, Commit, Feedback, Lda, Partial, Report, Shard, Task, TestShard, worker_rng};
pub use scheduler::{LdaScheduler, TracePoint};
