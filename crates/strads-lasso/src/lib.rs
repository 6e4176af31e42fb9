//! Lasso by scheduled coordinate descent, as STRADS runs it, with the paper's baselines.
//!
//! The objective is scikit-learn's, `||y - beta0 - X beta||^2 / (2n) + lambda ||beta||_1`, so
//! results compare directly. Workers own row shards and their residuals; each round the scheduler
//! picks coordinates (STRADS' `dynamic` priority sampling with a correlation check, `shotgun`,
//! `cyclic` or `sequential`), workers push partial sums, the aggregator commits the soft-threshold
//! updates. The run stops at a relative duality gap, a coefficient tolerance, or a budget.
//!
//! ```no_run
//! use strads_lasso::{Lambda, LassoParams, fit};
//! # fn demo(data: &strads_data::Dataset, launcher: &impl strads_core::Launcher) -> Result<(), strads_lasso::LassoError> {
//! let params = LassoParams::new(Lambda::Ratio(0.01)).check()?;
//! let model = fit(data, &params, launcher, &mut |_| {})?.expect("this process leads");
//! println!("objective {} with {} nonzeros", model.objective, model.nnz());
//! # Ok(()) }
//! ```

#![warn(clippy::unwrap_used)]

mod aggregator;
mod anderson;
mod block;
mod cv;
mod error;
mod fit;
mod generate;
mod model;
mod params;
pub mod program;
pub mod reference;
mod scheduler;
mod worker;

pub use cv::{CrossValidation, cross_validate, mean_std};
pub use error::LassoError;
pub use fit::{
    LabelForm, LassoFit, Status, TracePoint, check_labels, fit, fit_checkpointed, fit_model, human_bytes,
    memory_estimate, to_signs,
};
pub use generate::{Generated, GeneratorSpec, generate, generate_classes};
pub use model::{LinearModel, Scores, dense, score};
pub use params::{
    CheckedParams, GapEvery, Lambda, LassoParams, LogisticUpdate, Loss, PriorityRule, SchedulerKind, WarmStart,
};
pub use program::PathPoint;
pub use scheduler::{Correlation, LassoScheduler};
