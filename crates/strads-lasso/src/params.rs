//! Lasso parameters: raw settings, checked once into [`CheckedParams`] before any work starts.
//!
//! | name | default | meaning | range |
//! |---|---|---|---|
//! | `lambda` | (required) | the penalty weight, or a fraction of `lambda_max`, the smallest weight at which every coefficient is zero (`||X^T y||_inf / (n l1_ratio)` for the squared loss) | `> 0`; ratio in `(0, 1]` |
//! | `loss` | `squared` | `squared` (Lasso, elastic net) or `logistic` (labels -1/1) | |
//! | `l1_ratio` | 1 | the penalty is `lambda (l1_ratio ||beta||_1 + (1 - l1_ratio) ||beta||^2 / 2)` (scikit-learn's elastic net); 1 is the Lasso | `(0, 1]` |
//! | `update` | `newton` | logistic coordinate step: `newton` (the exact curvature `sum x_ij^2 p_i (1 - p_i)`, in a trust region that guarantees descent) or `bound` (the curvature bound `||x_j||^2 / 4`: STRADS' update) | |
//! | `intercept` | `false` | fit an unpenalized intercept | |
//! | `warm_start` | none | start from these coefficients (and intercept) instead of zero; not with `path` | finite, `>= 0` with `positive` |
//! | `positive` | `false` | constrain every coefficient to be `>= 0` (non-negative Lasso, elastic net, logistic regression) | |
//! | `scheduler` | `block` | `block` (feature-clustered block coordinate descent: each worker solves a group of correlated coordinates of the working set per round), `dynamic`, `shotgun`, `cyclic`, `sequential` | |
//! | `set_size` | 1 for dynamic and sequential, the number of workers `P` for shotgun and cyclic; unused by block (one group per worker) | `L`: coordinates updated in parallel per round | `>= 1` |
//! | `candidates` | `2 L` | `L'`: candidates sampled before the dependency check (dynamic); raised to `L` if smaller | `>= 1` |
//! | `candidate_order` | `drawn` | order in which the check considers candidates: `drawn` (random, biased to high priority) or `priority` | |
//! | `rho` | 0.1 | keep a candidate only if `|corr|` with every kept one is below `rho` | `(0, 1]` |
//! | `priority` | `abs` with `b = 0.01 x mean |beta_j != 0|` | `abs`: `|delta| + b`; `square`: `delta^2 + eta` | `b, eta > 0` |
//! | `anderson` | 5 for block, off otherwise | Anderson extrapolation of the iterates, one snapshot per pass over the working set, over this many differences; kept only when it lowers the objective (it pays off with `cyclic`, whose passes are a fixed map; `dynamic`'s random draws rarely extrapolate well); with block, each round's passes over a group are extrapolated (squared loss, Lasso and elastic net) | `1..=64` |
//! | `warmup_rounds` | `ceil(3 p / L)`, 0 with a working set | rounds of uniform sampling before priorities | `>= 0` |
//! | `screening` | on for block and dynamic, off otherwise | gap-safe screening: coordinates proven zero get priority 0 (logistic loss: with l1-ratio 1 and no intercept only) | |
//! | `working_set` | 100 for block and dynamic, off otherwise | working sets: only the coordinates closest to their optimality bound (at least this many, and twice the nonzeros) get a priority above 0 until the next gap check | `>= 1` |
//! | `split_min` | never | block: a working set whose pass visits fewer nonzeros is solved by one worker (by default every working set is: splitting was slower on every problem of the suite); 0 always splits | `>= 0` |
//! | `tol` | 1e-6 | stop when the relative duality gap is at most this | `>= 0` |
//! | `coef_tol` | none | also stop when no coefficient moved more than `coef_tol x max |beta|` between two gap checks | `>= 0` |
//! | `path` | none | solve for this many `lambda` values, geometric from `lambda_max` down to `lambda`, each from the previous solution | `>= 2` |
//! | `path_top` | `lambda_max` of the data | the first `lambda` of a path (cross-validation folds share the full data's grid) | `> 0` |
//! | `max_rounds` | none | stop after this many rounds | `>= 1` |
//! | `max_seconds` | none | stop after this much training time | `> 0` |
//! | `gap_every` | auto | rounds between duality-gap checks; auto checks after coordinate work of twice what a check costs | `>= 1` |
//! | `pipeline_depth` | 0 | rounds pushed ahead of the pull (bounded staleness; block rounds always wait for the previous one's step) | `>= 0` |
//! | `seed` | 0 | seed of the scheduler's sampling | |
//! | `max_memory` | none | refuse a run whose estimated memory (model, worker columns, scheduler) exceeds this many bytes | `>= 1` |

use strads_core::ParamError;
use strads_engine::CandidateOrder;

use crate::LassoError;

/// The L1 weight, given directly or relative to the smallest weight at which every coefficient is zero.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum Lambda {
    /// `lambda` itself.
    Value(f64),
    /// `lambda = ratio x lambda_max`.
    Ratio(f64),
}

/// The data term of the objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Loss {
    /// `||y - beta0 - X beta||^2 / (2n)`: the Lasso and the elastic net.
    Squared,
    /// `(1/n) sum log(1 + exp(-y_i (beta0 + x_i . beta)))`, labels -1 and 1: sparse logistic regression.
    Logistic,
}

impl Loss {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Squared => "squared",
            Loss::Logistic => "logistic",
        }
    }
}

/// The coordinate step of the logistic loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum LogisticUpdate {
    /// A Newton step with the exact curvature, kept short enough to lower the objective.
    Newton,
    /// The step of the curvature bound `||x_j||^2 / 4` (STRADS' update).
    Bound,
}

impl LogisticUpdate {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            LogisticUpdate::Newton => "newton",
            LogisticUpdate::Bound => "bound",
        }
    }
}

/// Which coordinates each round updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    /// Feature-clustered block coordinate descent: each round, every worker solves its group of
    /// correlated coordinates of the working set, and the groups' changes are merged by a line search.
    Block,
    /// STRADS: priority sampling, then the dependency check (dynamic engine).
    Dynamic,
    /// Shotgun: `L` coordinates uniformly at random, no check (dynamic engine, uniform).
    Shotgun,
    /// Round-robin blocks of `L` consecutive coordinates (static engine).
    Cyclic,
    /// One coordinate per round in order: the sequential reference (static engine).
    Sequential,
}

impl SchedulerKind {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Block => "block",
            SchedulerKind::Dynamic => "dynamic",
            SchedulerKind::Shotgun => "shotgun",
            SchedulerKind::Cyclic => "cyclic",
            SchedulerKind::Sequential => "sequential",
        }
    }
}

/// How a coordinate's priority follows its last change `delta`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum PriorityRule {
    /// `|delta| + b`, `b = base_fraction x` the mean magnitude of the nonzero coefficients (the release).
    Absolute {
        /// The fraction of the mean nonzero magnitude used as the base.
        base_fraction: f64,
    },
    /// `delta^2 + eta` (the paper).
    Squared {
        /// The base.
        eta: f64,
    },
}

impl PriorityRule {
    /// A coordinate's own weight after a change of `delta`.
    pub fn weight(self, delta: f64) -> f64 {
        match self {
            PriorityRule::Absolute { .. } => delta.abs(),
            PriorityRule::Squared { .. } => delta * delta,
        }
    }

    /// The base every coordinate has on top of its weight, given the mean nonzero magnitude.
    pub fn base(self, mean_nonzero: f64) -> f64 {
        match self {
            PriorityRule::Absolute { base_fraction } => base_fraction * mean_nonzero,
            PriorityRule::Squared { eta } => eta,
        }
    }
}

/// When to compute the duality gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum GapEvery {
    /// After coordinate work (nonzeros visited) of twice what a check visits (checks take a third of the time).
    Auto,
    /// Every this many update rounds.
    Rounds(u64),
}

/// A model to start a fit from: scikit-learn's `warm_start`, the previous fit's solution.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WarmStart {
    /// One coefficient per feature.
    pub coefficients: Vec<f64>,
    /// The intercept (used when the fit has one).
    pub intercept: f64,
}

/// Settings of a Lasso fit, as given.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LassoParams {
    /// The penalty weight.
    pub lambda: Lambda,
    /// The data term.
    pub loss: Loss,
    /// The share of the L1 term in the penalty (1 for the Lasso).
    pub l1_ratio: f64,
    /// The logistic coordinate step.
    pub update: LogisticUpdate,
    /// The first `lambda` of a path, or `None` for the data's `lambda_max`.
    pub path_top: Option<f64>,
    /// Fit an unpenalized intercept.
    pub intercept: bool,
    /// Constrain every coefficient to be `>= 0`.
    pub positive: bool,
    /// Start from this model instead of zero (one coefficient per feature).
    pub warm_start: Option<WarmStart>,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// `L`, or `None` for 1 (`dynamic`, `sequential`) or the number of workers (`shotgun`, `cyclic`).
    pub set_size: Option<usize>,
    /// `L'`, or `None` for `2 L`.
    pub candidates: Option<usize>,
    /// The dependency threshold.
    pub rho: f64,
    /// Order in which the dependency check considers the candidates.
    pub candidate_order: CandidateOrder,
    /// The priority rule of the dynamic scheduler.
    pub priority: PriorityRule,
    /// Uniform rounds before priorities are used, or `None` for `ceil(3 p / L)`.
    pub warmup_rounds: Option<u64>,
    /// Gap-safe screening, or `None` for on with `dynamic` and off otherwise.
    pub screening: Option<bool>,
    /// Initial working-set size (`Some(0)` turns working sets off), or `None` for 100 with
    /// `dynamic` and off otherwise.
    pub working_set: Option<usize>,
    /// Anderson extrapolation memory `K`, or `None` (or `Some(0)`) for none.
    pub anderson: Option<usize>,
    /// Block: nonzeros per pass below which one worker solves the working set, or `None` for
    /// never (one worker solves every working set; the others share the gap checks).
    pub split_min: Option<u64>,
    /// A regularization path of this many `lambda` values, ending at `lambda`.
    pub path: Option<usize>,
    /// Relative duality gap to stop at.
    pub tol: f64,
    /// Coefficient-change tolerance to stop at, relative to the largest coefficient.
    pub coef_tol: Option<f64>,
    /// Most update rounds, or `None` for no limit.
    pub max_rounds: Option<u64>,
    /// Most seconds of training.
    pub max_seconds: Option<f64>,
    /// When to compute the duality gap.
    pub gap_every: GapEvery,
    /// Pipeline depth.
    pub pipeline_depth: usize,
    /// Seed.
    pub seed: u64,
    /// Refuse runs whose estimated memory exceeds this many bytes.
    pub max_memory: Option<u64>,
}

impl LassoParams {
    /// Defaults for everything but the L1 weight.
    pub fn new(lambda: Lambda) -> Self {
        LassoParams {
            lambda,
            loss: Loss::Squared,
            l1_ratio: 1.0,
            update: LogisticUpdate::Newton,
            path_top: None,
            intercept: false,
            positive: false,
            warm_start: None,
            scheduler: SchedulerKind::Block,
            set_size: None,
            candidates: None,
            rho: 0.1,
            candidate_order: CandidateOrder::Drawn,
            priority: PriorityRule::Absolute { base_fraction: 0.01 },
            warmup_rounds: None,
            screening: None,
            working_set: None,
            anderson: None,
            split_min: None,
            path: None,
            tol: 1e-6,
            coef_tol: None,
            max_rounds: None,
            max_seconds: None,
            gap_every: GapEvery::Auto,
            pipeline_depth: 0,
            seed: 0,
            max_memory: None,
        }
    }

    /// Checks every setting once; nothing downstream checks again.
    pub fn check(self) -> Result<CheckedParams, LassoError> {
        let bad =
            |parameter: &'static str, message: String| Err(LassoError::Params(ParamError::new(parameter, message)));
        if let Some(start) = &self.warm_start {
            if self.path.is_some() {
                return bad(
                    "warm_start",
                    "a warm start and a path do not go together: a path starts from zero at its top".into(),
                );
            }
            if let Some((j, v)) = start.coefficients.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return bad("warm_start", format!("the warm start's coefficient {j} is {v}, not a finite number"));
            }
            if !start.intercept.is_finite() {
                return bad(
                    "warm_start",
                    format!("the warm start's intercept is {}, not a finite number", start.intercept),
                );
            }
            if self.positive
                && let Some((j, v)) = start.coefficients.iter().enumerate().find(|(_, v)| **v < 0.0)
            {
                return bad(
                    "warm_start",
                    format!("the warm start's coefficient {j} is {v}, but positive asks for every one >= 0"),
                );
            }
        }
        match self.lambda {
            Lambda::Value(l) if !(l.is_finite() && l > 0.0) => {
                return bad("lambda", format!("lambda must be > 0, got {l}"));
            }
            Lambda::Ratio(r) if !(r.is_finite() && r > 0.0 && r <= 1.0) => {
                return bad("lambda", format!("lambda ratio must be in (0, 1], got {r}"));
            }
            _ => {}
        }
        if !(self.l1_ratio.is_finite() && self.l1_ratio > 0.0 && self.l1_ratio <= 1.0) {
            return bad("l1_ratio", format!("l1-ratio must be in (0, 1], got {}", self.l1_ratio));
        }
        if let Some(top) = self.path_top
            && !(top.is_finite() && top > 0.0)
        {
            return bad("path_top", format!("the top of a path must be > 0, got {top}"));
        }
        let anderson_asked = self.anderson.is_some_and(|k| k > 0);
        let block = self.scheduler == SchedulerKind::Block;
        if anderson_asked && !block && (self.loss != Loss::Squared || self.l1_ratio < 1.0) {
            return bad(
                "anderson",
                "Anderson extrapolation is implemented for the Lasso only (squared loss, l1-ratio 1)".into(),
            );
        }
        if self.screening == Some(true) && self.loss == Loss::Logistic && (self.intercept || self.l1_ratio < 1.0) {
            return bad(
                "screening",
                "gap-safe screening of the logistic loss is implemented for l1-ratio 1 without an intercept only"
                    .into(),
            );
        }
        if self.set_size == Some(0) {
            return bad("set_size", "set size must be at least 1".into());
        }
        if self.scheduler == SchedulerKind::Sequential && self.set_size.is_some_and(|l| l != 1) {
            return bad(
                "set_size",
                format!(
                    "the sequential scheduler updates one coordinate per round, got a set size of {}",
                    self.set_size.unwrap_or(1)
                ),
            );
        }
        if let (Some(l), Some(c)) = (self.set_size, self.candidates)
            && c < l
        {
            return bad("candidates", format!("candidates ({c}) must be at least the set size ({l})"));
        }
        if self.candidates == Some(0) {
            return bad("candidates", "candidates must be at least 1".into());
        }
        if !(self.rho > 0.0 && self.rho <= 1.0) {
            return bad("rho", format!("rho must be in (0, 1], got {}", self.rho));
        }
        match self.priority {
            PriorityRule::Absolute { base_fraction: b } if !(b.is_finite() && b > 0.0) => {
                return bad("priority", format!("the priority base fraction must be > 0, got {b}"));
            }
            PriorityRule::Squared { eta } if !(eta.is_finite() && eta > 0.0) => {
                return bad("priority", format!("eta must be > 0, got {eta}"));
            }
            _ => {}
        }
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return bad("tol", format!("tol must be >= 0, got {}", self.tol));
        }
        if let Some(t) = self.coef_tol
            && !(t.is_finite() && t >= 0.0)
        {
            return bad("coef_tol", format!("coef-tol must be >= 0, got {t}"));
        }
        if self.path.is_some_and(|n| n < 2) {
            return bad("path", "a path needs at least 2 lambda values".into());
        }
        if self.max_rounds == Some(0) {
            return bad("max_rounds", "max rounds must be at least 1".into());
        }
        if let Some(s) = self.max_seconds
            && !(s.is_finite() && s > 0.0)
        {
            return bad("max_seconds", format!("max seconds must be > 0, got {s}"));
        }
        if self.gap_every == GapEvery::Rounds(0) {
            return bad("gap_every", "gap-every must be at least 1 round".into());
        }
        // The gap-safe test needs the dual of the whole problem: off by default where it is not implemented.
        let screenable = self.loss == Loss::Squared || (self.l1_ratio >= 1.0 && !self.intercept);
        let prioritized = matches!(self.scheduler, SchedulerKind::Dynamic | SchedulerKind::Block);
        let screening = self.screening.unwrap_or(prioritized && screenable);
        let working_set = match self.working_set {
            Some(0) => None,
            Some(size) => Some(size),
            None => prioritized.then_some(100),
        };
        let anderson = match self.anderson {
            None if block => Some(5),
            None | Some(0) => None,
            Some(k) if k > 64 => return bad("anderson", format!("anderson memory must be at most 64, got {k}")),
            Some(k) => Some(k),
        };
        Ok(CheckedParams { screening, working_set, anderson, raw: self })
    }
}

/// Settings that passed every check, with the scheduler-dependent defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedParams {
    /// Whether gap-safe screening is on.
    pub screening: bool,
    /// The initial working-set size, when working sets are on.
    pub working_set: Option<usize>,
    /// Anderson extrapolation memory, when on.
    pub anderson: Option<usize>,
    raw: LassoParams,
}

impl CheckedParams {
    /// The settings as given.
    pub fn raw(&self) -> &LassoParams {
        &self.raw
    }

    /// `L` on `workers` workers.
    pub fn set_size(&self, workers: usize) -> usize {
        match (self.raw.set_size, self.raw.scheduler) {
            (Some(l), _) => l,
            (None, SchedulerKind::Dynamic | SchedulerKind::Sequential) => 1,
            (None, SchedulerKind::Shotgun | SchedulerKind::Cyclic | SchedulerKind::Block) => workers.max(1),
        }
    }

    /// `L'` on `workers` workers.
    pub fn candidates(&self, workers: usize) -> usize {
        let set_size = self.set_size(workers);
        self.raw.candidates.unwrap_or(2 * set_size).max(set_size)
    }

    /// Uniform warm-up rounds for `features` coordinates on `workers` workers.
    pub fn warmup_rounds(&self, features: usize, workers: usize) -> u64 {
        match (self.raw.warmup_rounds, self.working_set) {
            (Some(rounds), _) => rounds,
            (None, Some(_)) => 0,
            (None, None) => (3 * features).div_ceil(self.set_size(workers)) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_refused_with_their_name() {
        let check = |f: fn(&mut LassoParams)| {
            let mut p = LassoParams::new(Lambda::Ratio(0.1));
            f(&mut p);
            p.check().map(|_| ()).map_err(|e| e.to_string())
        };
        assert!(check(|_| {}).is_ok());
        assert_eq!(
            check(|p| p.lambda = Lambda::Value(-1.0)).unwrap_err(),
            "invalid parameter: lambda must be > 0, got -1"
        );
        assert!(check(|p| p.lambda = Lambda::Ratio(1.5)).unwrap_err().contains("ratio"));
        assert!(check(|p| p.lambda = Lambda::Value(f64::NAN)).is_err());
        assert!(check(|p| p.rho = 0.0).unwrap_err().contains("rho"));
        assert!(check(|p| p.rho = 1.5).unwrap_err().contains("rho"));
        assert!(check(|p| p.set_size = Some(0)).unwrap_err().contains("set size"));
        assert!(
            check(|p| {
                p.set_size = Some(4);
                p.candidates = Some(1);
            })
            .unwrap_err()
            .contains("candidates")
        );
        assert!(check(|p| p.candidates = Some(0)).unwrap_err().contains("candidates"));
        assert!(check(|p| p.tol = -1.0).unwrap_err().contains("tol"));
        assert!(check(|p| p.max_rounds = Some(0)).unwrap_err().contains("max rounds"));
        assert!(check(|p| p.gap_every = GapEvery::Rounds(0)).unwrap_err().contains("gap-every"));
        assert!(
            check(|p| {
                p.scheduler = SchedulerKind::Sequential;
                p.set_size = Some(4);
            })
            .unwrap_err()
            .contains("one coordinate")
        );
    }

    #[test]
    fn defaults_depend_on_the_scheduler() {
        let block = LassoParams::new(Lambda::Ratio(0.1)).check().unwrap();
        assert_eq!(block.raw().scheduler, SchedulerKind::Block, "block is the default");
        assert_eq!(
            (block.set_size(4), block.screening, block.working_set, block.anderson),
            (4, true, Some(100), Some(5))
        );
        let mut p = LassoParams::new(Lambda::Ratio(0.1));
        p.scheduler = SchedulerKind::Dynamic;
        let dynamic = p.check().unwrap();
        assert_eq!((dynamic.set_size(4), dynamic.candidates(4), dynamic.screening), (1, 2, true));
        let mut p = LassoParams::new(Lambda::Ratio(0.1));
        p.scheduler = SchedulerKind::Shotgun;
        assert_eq!(p.check().unwrap().set_size(4), 4, "Shotgun: P coordinates in parallel");
        assert_eq!(dynamic.working_set, Some(100));
        assert_eq!(dynamic.warmup_rounds(100, 4), 0);
        let mut p = LassoParams::new(Lambda::Ratio(0.1));
        p.scheduler = SchedulerKind::Dynamic;
        p.working_set = Some(0);
        assert_eq!(p.clone().check().unwrap().warmup_rounds(100, 10), 300);
        p.scheduler = SchedulerKind::Shotgun;
        assert_eq!(p.clone().check().unwrap().warmup_rounds(100, 10), 30);
        p.candidates = Some(3);
        assert_eq!(p.check().unwrap().candidates(8), 8, "raised to L");
        let mut p = LassoParams::new(Lambda::Ratio(0.1));
        p.scheduler = SchedulerKind::Sequential;
        let sequential = p.check().unwrap();
        assert_eq!((sequential.set_size(4), sequential.screening, sequential.working_set), (1, false, None));
    }
}
