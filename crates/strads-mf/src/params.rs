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
    /// Scale `lambda` for each row by a power of its number of ratings, `n^lambda_exponent`.
    pub weighted_lambda: bool,
    /// The power of a row's number of ratings that scales its `lambda` when `weighted_lambda`:
    /// 1 (the default) is LIBMF's and Spark's scaling, the same weight per rating; 0.5 regularizes a
    /// row of few ratings more per rating than a row of many, which scored the lower test RMSE on
    /// MovieLens 100K and on a shape of few ratings per user, and the higher on two generated shapes
    /// (`bench/results/mf-lambda-exponent-2026-12-07.md`).
    pub lambda_exponent: f64,
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
            lambda_exponent: 1.0,
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

/// The number of ratings of a row at which the default `lambda` weighs as `0.1 std` per rating,
/// whatever `lambda_exponent`: `lambda = 0.1 std REFERENCE_RATINGS^(1 - exponent)` (0.1 per rating
/// is LIBMF's and Spark's default at exponent 1; an unweighted `lambda` is exponent 0).
pub const REFERENCE_RATINGS: f64 = 144.0;

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
    /// The power of a row's number of ratings in its weight.
    pub lambda_exponent: f64,
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
    /// `lambda = 0.1 std REFERENCE_RATINGS^(1 - e)` with `e` the lambda exponent (0 unweighted):
    /// `0.1 std` at the default 1 (LIBMF's), `1.2 std` at 0.5, `14.4 std` unweighted, and an initial scale that makes the initial `w . h` small beside what it
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
        let lambda =
            if self.implicit.is_some() { 0.01 } else { 0.1 * unit * REFERENCE_RATINGS.powf(1.0 - self.exponent()) };
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

    /// The power of a row's number of ratings in its L2 weight: 0 when `lambda` is not weighted.
    fn exponent(&self) -> f64 {
        if self.weighted_lambda { self.lambda_exponent } else { 0.0 }
    }

    /// The L2 weight of a row of `n` ratings: `lambda n^lambda_exponent` when weighted, else `lambda`.
    pub fn row_reg(&self, n: u32) -> f64 {
        let n = f64::from(n);
        match self.exponent() {
            0.0 => self.lambda(),
            1.0 => self.lambda() * n,
            0.5 => self.lambda() * n.sqrt(),
            e => self.lambda() * n.powf(e),
        }
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
        if !(self.lambda_exponent.is_finite() && (0.0..=1.0).contains(&self.lambda_exponent)) {
            return bad(
                "lambda_exponent",
                format!("the lambda exponent must be in [0, 1], got {}", self.lambda_exponent),
            );
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
            lambda_exponent: self.lambda_exponent,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(weighted: bool, exponent: f64) -> CheckedParams {
        MfParams { weighted_lambda: weighted, lambda_exponent: exponent, ..MfParams::default() }.check(1).unwrap()
    }

    #[test]
    fn the_default_lambda_weighs_a_row_of_the_reference_count_as_a_tenth_of_the_spread_per_rating() {
        let std = 1.25;
        for (weighted, exponent) in [(true, 1.0), (true, 0.5), (true, 0.25), (false, 0.5)] {
            let fitted = checked(weighted, exponent).for_data(3.5, std, 50.0);
            let per_rating = fitted.row_reg(REFERENCE_RATINGS as u32) / REFERENCE_RATINGS;
            assert!((per_rating - 0.1 * std).abs() < 1e-12, "weighted={weighted} exponent={exponent}: {per_rating}");
        }
        let fitted = checked(true, 0.5).for_data(3.5, std, 50.0);
        assert!((fitted.lambda() - 1.2 * std).abs() < 1e-12);
        assert_eq!(fitted.row_reg(9), fitted.lambda() * 3.0);
        assert_eq!(checked(true, 1.0).for_data(3.5, std, 50.0).row_reg(7), 0.1 * std * 7.0);
        assert_eq!(checked(false, 1.0).row_reg(7), checked(false, 1.0).lambda());
        let given = MfParams { lambda: Some(0.3), ..MfParams::default() }.check(1).unwrap().for_data(3.5, std, 50.0);
        assert_eq!(given.lambda(), 0.3);
    }

    #[test]
    fn an_exponent_outside_zero_to_one_is_refused_by_name() {
        for exponent in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
            let error = MfParams { lambda_exponent: exponent, ..MfParams::default() }.check(1).unwrap_err();
            assert_eq!(error.parameter, "lambda_exponent", "{exponent}");
        }
    }
}
