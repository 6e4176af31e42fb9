//! Settings of a factorization as the user gives them, and the checked form the program runs with.

use serde::{Deserialize, Serialize};

/// How a half-iteration updates the rows of one factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// CCD++: one rank-one factor at a time over all rows, alternating `u` and `v` for some inner
    /// iterations (Yu, Hsieh, Si and Dhillon, 2012).
    Ccdpp,
    /// Row-wise coordinate descent: every coordinate of one row, then the next row (STRADS's MF).
    Ccd,
    /// Alternating least squares: each row solved exactly with the other factor fixed.
    Als,
}

impl Algorithm {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ccdpp => "ccdpp",
            Algorithm::Ccd => "ccd",
            Algorithm::Als => "als",
        }
    }
}

/// Which offsets the prediction adds to `w_i . h_j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bias {
    /// `w_i . h_j` alone.
    None,
    /// `mu + w_i . h_j`, with `mu` the mean training rating (fixed).
    Global,
    /// `mu + b_i + c_j + w_i . h_j`, with user and item biases learned (and regularized) like factors.
    Full,
}

impl Bias {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Bias::None => "none",
            Bias::Global => "global",
            Bias::Full => "full",
        }
    }
}

/// Settings as given.
#[derive(Clone, Debug, PartialEq)]
pub struct MfParams {
    /// The update rule.
    pub algorithm: Algorithm,
    /// `K`, the rank of `W` and `H`.
    pub rank: usize,
    /// `lambda`, the L2 weight.
    pub lambda: f64,
    /// Scale `lambda` for each row by its number of ratings (as Spark's ALS and LIBMF do).
    pub weighted_lambda: bool,
    /// Offsets of the prediction.
    pub bias: Bias,
    /// Outer iterations (a `W` half-step and an `H` half-step each).
    pub iterations: usize,
    /// CCD++: `u`/`v` alternations per rank-one factor; CCD: sweeps over a row's coordinates.
    pub inner_iterations: usize,
    /// Seed of the initial factors and of nothing else (the updates are deterministic).
    pub seed: u64,
    /// Initial entries are uniform in `[0, init_scale)`.
    pub init_scale: f64,
    /// Evaluate (objective, RMSE) every this many iterations, and after the last.
    pub eval_every: usize,
    /// Also evaluate after every half-step (tests of monotone descent).
    pub trace_half_steps: bool,
}

impl Default for MfParams {
    fn default() -> Self {
        MfParams {
            algorithm: Algorithm::Ccdpp,
            rank: 10,
            lambda: 0.1,
            weighted_lambda: false,
            bias: Bias::None,
            iterations: 20,
            inner_iterations: 3,
            seed: 0,
            init_scale: 0.1,
            eval_every: 1,
            trace_half_steps: false,
        }
    }
}

/// Settings checked once, for a number of workers.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedParams {
    /// The update rule.
    pub algorithm: Algorithm,
    /// `K`.
    pub rank: usize,
    /// `lambda`.
    pub lambda: f64,
    /// Frequency-weighted `lambda`.
    pub weighted_lambda: bool,
    /// Offsets.
    pub bias: Bias,
    /// Outer iterations.
    pub iterations: usize,
    /// Inner iterations.
    pub inner_iterations: usize,
    /// Seed.
    pub seed: u64,
    /// Initial scale.
    pub init_scale: f64,
    /// Evaluation period.
    pub eval_every: usize,
    /// Evaluate after every half-step.
    pub trace_half_steps: bool,
    /// Workers.
    pub workers: usize,
}

impl CheckedParams {
    /// Entries stored per row: `K` factors, then the user-bias slot and the item-bias slot with `Bias::Full`.
    pub fn stride(&self) -> usize {
        self.rank + if self.bias == Bias::Full { 2 } else { 0 }
    }
}

impl MfParams {
    /// Checks every setting for `workers` workers.
    pub fn check(&self, workers: usize) -> Result<CheckedParams, String> {
        if workers == 0 {
            return Err("workers must be at least 1".into());
        }
        if self.rank == 0 || self.rank > 100_000 {
            return Err(format!("rank must be in 1..=100000, got {}", self.rank));
        }
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(format!("lambda must be a finite number >= 0, got {}", self.lambda));
        }
        if self.iterations == 0 {
            return Err("iterations must be at least 1".into());
        }
        if self.inner_iterations == 0 {
            return Err("inner iterations must be at least 1".into());
        }
        if !(self.init_scale.is_finite() && self.init_scale > 0.0) {
            return Err(format!("the initial scale must be a finite number > 0, got {}", self.init_scale));
        }
        if self.eval_every == 0 {
            return Err("eval-every must be at least 1".into());
        }
        Ok(CheckedParams {
            algorithm: self.algorithm,
            rank: self.rank,
            lambda: self.lambda,
            weighted_lambda: self.weighted_lambda,
            bias: self.bias,
            iterations: self.iterations,
            inner_iterations: self.inner_iterations,
            seed: self.seed,
            init_scale: self.init_scale,
            eval_every: self.eval_every,
            trace_half_steps: self.trace_half_steps,
            workers,
        })
    }
}
