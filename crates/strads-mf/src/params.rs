//! Settings of a factorization as the user gives them, and the checked form the program runs with.

use serde::{Deserialize, Serialize};
use strads_core::ParamError;

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

/// Implicit feedback (Hu, Koren and Volinsky, 2008): every (user, item) pair is a preference
/// `p = 1` if observed with a value `r > 0`, else `p = 0`, weighted by the confidence `c = 1 + alpha r`
/// (1 for every unobserved pair), and the objective is `sum over all pairs c (p - w . h)^2` plus the
/// L2 term. The unobserved pairs enter through the Gram matrix of the other factor, so a half-step
/// costs the observed pairs plus `rows x K^2`, never `users x items`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Implicit {
    /// The confidence slope: `c = 1 + alpha r`.
    pub alpha: f64,
}

impl Implicit {
    /// The confidence of an observed value `r`.
    pub fn confidence(&self, r: f64) -> f64 {
        1.0 + self.alpha * r
    }
}

/// ALS's conjugate-gradient steps chosen from the data: 3 when they cost less than the exact solve
/// of a row of `pairs` ratings at rank `k`, else 0 (exact). A step applies the row's normal matrix
/// to a vector without forming it: `2 n K` multiply-adds over the row's ratings, plus `K^2` for the
/// Gram matrix with implicit feedback; one more application gives the first residual. The exact
/// solve forms the matrix (`n K^2 / 2`) and factors it (`K^3 / 6`). CG wins from about rank 14
/// (ratings) or 16 (implicit feedback), whatever the row length.
pub fn default_cg_steps(k: usize, pairs: f64, implicit: bool) -> usize {
    let k = k as f64;
    let step = 2.0 * pairs * k + if implicit { k * k } else { k };
    let exact = pairs * k * k / 2.0 + k * k * k / 6.0;
    if 4.0 * step < exact { 3 } else { 0 }
}

/// Settings as given.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MfParams {
    /// The update rule.
    pub algorithm: Algorithm,
    /// `K`, the rank of `W` and `H`.
    pub rank: usize,
    /// `lambda`, the L2 weight; `None` sets it from the data: `0.1 x` the standard deviation of the
    /// training ratings (0.1 per rating on 1-5 stars, as LIBMF's and Spark's defaults; the optimum
    /// scales with the ratings, since scaling them by `c` scales the loss by `c^2`, a factor norm by `c`).
    pub lambda: Option<f64>,
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
    /// Initial entries are uniform in `[0, init_scale)`; `None` sets it from the data (see
    /// [`CheckedParams::for_data`]).
    pub init_scale: Option<f64>,
    /// Early stopping: stop after this many evaluations without a better validation RMSE and keep
    /// the factors of the best one (0: run every iteration, keep the last). Needs validation ratings.
    pub patience: usize,
    /// Convergence: stop after an outer iteration that lowers the training objective by less than
    /// `tol` times it (0: never). Checked at every evaluation that ends an iteration.
    pub tol: f64,
    /// Evaluate (objective, RMSE) every this many iterations, and after the last.
    pub eval_every: usize,
    /// Also evaluate after every half-step (tests of monotone descent).
    pub trace_half_steps: bool,
    /// Implicit feedback instead of explicit ratings (`None`: ratings are fitted as values).
    pub implicit: Option<Implicit>,
    /// ALS: conjugate-gradient steps per row, warm-started from the row's current value (Takacs,
    /// Pilaszy and Tikk, 2011; the `implicit` library's solver); `Some(0)` solves each row exactly by
    /// Cholesky; `None` chooses from the data ([`default_cg_steps`]).
    pub cg_steps: Option<usize>,
}

impl Default for MfParams {
    fn default() -> Self {
        MfParams {
            algorithm: Algorithm::Ccdpp,
            rank: 10,
            lambda: None,
            weighted_lambda: true,
            bias: Bias::Full,
            iterations: 20,
            inner_iterations: 3,
            seed: 0,
            init_scale: None,
            patience: 3,
            tol: 1e-3,
            eval_every: 1,
            trace_half_steps: false,
            implicit: None,
            cg_steps: None,
        }
    }
}

impl MfParams {
    /// The defaults for implicit feedback with confidence slope `alpha`, those of the `implicit`
    /// library: ALS (3 conjugate-gradient steps per row where they cost less than the exact solve,
    /// see [`default_cg_steps`]), no offsets (an unobserved pair's
    /// preference is 0, not a mean), one `lambda = 0.01` for every row (the confidences already weigh
    /// a row by its interactions), initial entries below 0.01, 15 iterations and no validation hold-out.
    pub fn implicit(alpha: f64) -> MfParams {
        MfParams {
            algorithm: Algorithm::Als,
            iterations: 15,
            lambda: Some(0.01),
            weighted_lambda: false,
            bias: Bias::None,
            init_scale: Some(0.01),
            patience: 0,
            inner_iterations: 1,
            implicit: Some(Implicit { alpha }),
            ..MfParams::default()
        }
    }
}

/// Settings checked once, for a number of workers.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CheckedParams {
    /// The update rule.
    pub algorithm: Algorithm,
    /// `K`.
    pub rank: usize,
    /// `lambda` (`None`: from the data).
    pub lambda: Option<f64>,
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
    /// Initial scale (`None`: from the data).
    pub init_scale: Option<f64>,
    /// Evaluations without improvement before an early stop (0: never).
    pub patience: usize,
    /// Relative decrease of the objective below which the run has converged (0: never).
    pub tol: f64,
    /// Evaluation period.
    pub eval_every: usize,
    /// Evaluate after every half-step.
    pub trace_half_steps: bool,
    /// Implicit feedback.
    pub implicit: Option<Implicit>,
    /// ALS's CG steps per row (`Some(0)`: exact; `None`: from the data).
    pub cg_steps: Option<usize>,
    /// Workers.
    pub workers: usize,
}

impl CheckedParams {
    /// Entries stored per row: `K` factors, then the user-bias slot and the item-bias slot with `Bias::Full`.
    pub fn stride(&self) -> usize {
        self.rank + if self.bias == Bias::Full { 2 } else { 0 }
    }

    /// These settings with `lambda` and the initial scale set from the training ratings where they
    /// were left to the data (`std` is the ratings' standard deviation, `mean` their mean):
    /// `lambda = 0.1 std`, and an initial scale that makes the initial `w . h` small beside what it
    /// must fit, `sqrt(std / K) / 2` (with offsets the factors fit what the biases leave, of spread
    /// about `std`; CCD++ and CCD fit the residual one coordinate at a time and start best near
    /// zero with or without them) -- except for ALS without offsets, `2 sqrt(|mean| / K)`: its first
    /// half-step solves against the initial factor, which must then carry the mean (uniform entries
    /// in `[0, s)` give `E[w . h] = K s^2 / 4`). Implicit feedback takes `lambda = 0.01` and an
    /// initial scale of 0.01 whatever the values, as the `implicit` library does.
    /// `pairs` is the mean number of training ratings of a row (user or item), for the CG choice.
    pub fn for_data(&self, mean: f64, std: f64, pairs: f64) -> CheckedParams {
        let unit = if std.is_finite() && std > 0.0 { std } else { 1.0 };
        let k = self.rank as f64;
        let scale = match (self.algorithm, self.bias) {
            _ if self.implicit.is_some() => 0.01,
            (Algorithm::Als, Bias::None) if mean.abs() > 0.0 && mean.is_finite() => 2.0 * (mean.abs() / k).sqrt(),
            _ => (unit / k).sqrt() / 2.0,
        };
        let lambda = if self.implicit.is_some() { 0.01 } else { 0.1 * unit };
        let implicit = self.implicit.is_some();
        CheckedParams {
            cg_steps: Some(self.cg_steps.unwrap_or_else(|| default_cg_steps(self.rank, pairs, implicit))),
            lambda: Some(self.lambda.unwrap_or(lambda)),
            init_scale: Some(self.init_scale.unwrap_or(scale)),
            ..self.clone()
        }
    }

    /// ALS's CG steps per row (0: the exact solve, also before they are set from the data).
    pub fn cg_steps(&self) -> usize {
        self.cg_steps.unwrap_or(0)
    }

    /// The L2 weight (0.1 if not yet set from the data).
    pub fn lambda(&self) -> f64 {
        self.lambda.unwrap_or(0.1)
    }

    /// The initial scale (0.1 if not yet set from the data).
    pub fn init_scale(&self) -> f64 {
        self.init_scale.unwrap_or(0.1)
    }
}

impl MfParams {
    /// Checks every setting for `workers` workers.
    pub fn check(&self, workers: usize) -> Result<CheckedParams, ParamError> {
        let bad = |parameter: &'static str, message: String| Err(ParamError::new(parameter, message));
        if workers == 0 {
            return bad("workers", "workers must be at least 1".into());
        }
        if self.rank == 0 || self.rank > 100_000 {
            return bad("rank", format!("rank must be in 1..=100000, got {}", self.rank));
        }
        if let Some(lambda) = self.lambda
            && !(lambda.is_finite() && lambda >= 0.0)
        {
            return bad("lambda", format!("lambda must be a finite number >= 0, got {lambda}"));
        }
        if self.iterations == 0 {
            return bad("iterations", "iterations must be at least 1".into());
        }
        if self.inner_iterations == 0 {
            return bad("inner_iterations", "inner iterations must be at least 1".into());
        }
        if let Some(scale) = self.init_scale
            && !(scale.is_finite() && scale > 0.0)
        {
            return bad("init_scale", format!("the initial scale must be a finite number > 0, got {scale}"));
        }
        if !(self.tol.is_finite() && (0.0..1.0).contains(&self.tol)) {
            return bad("tol", format!("the tolerance must be in [0, 1), got {}", self.tol));
        }
        if self.eval_every == 0 {
            return bad("eval_every", "eval-every must be at least 1".into());
        }
        if let Some(implicit) = self.implicit {
            if !(implicit.alpha.is_finite() && implicit.alpha > 0.0) {
                return bad("implicit", format!("alpha must be a finite number > 0, got {}", implicit.alpha));
            }
            if self.algorithm == Algorithm::Ccdpp {
                return bad(
                    "algorithm",
                    "implicit feedback is trained by ALS or row-wise CCD (--algorithm als or ccd), \
                            not CCD++"
                        .into(),
                );
            }
            if self.bias != Bias::None {
                return bad(
                    "bias",
                    format!(
                        "implicit feedback fits preferences of 0 and 1 without offsets: --bias {} does not apply \
                     (use --bias none)",
                        self.bias.name()
                    ),
                );
            }
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
            patience: self.patience,
            tol: self.tol,
            eval_every: self.eval_every,
            trace_half_steps: self.trace_half_steps,
            implicit: self.implicit,
            cg_steps: self.cg_steps,
            workers,
        })
    }
}
