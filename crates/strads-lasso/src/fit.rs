//! Fitting a Lasso model: the application's one entry point, on whatever runtime it is given.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use strads_core::{Launcher, RunOptions, balanced_ranges};
use strads_data::{Features, RowSource};

use crate::program::{AggregatorSettings, LassoAggregator, LassoWorker, PathPoint};
use crate::scheduler::{Budget, Correlation, LassoScheduler};
use crate::{CheckedParams, LassoError, SchedulerKind};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The relative duality gap reached the tolerance.
    Converged,
    /// No coefficient moved more than the coefficient tolerance between two checks.
    CoefficientsStable,
    /// The budget of rounds ran out.
    MaxRounds,
    /// The budget of seconds ran out.
    MaxSeconds,
    /// The objective blew up (parallel updates of dependent coordinates, as Shotgun can).
    Diverged,
}

impl Status {
    /// The name used in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::CoefficientsStable => "coefficients-stable",
            Status::MaxRounds => "max-rounds",
            Status::MaxSeconds => "max-seconds",
            Status::Diverged => "diverged",
        }
    }
}

/// One gap check, as written to `trace.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Update rounds so far.
    pub round: u64,
    /// Seconds of training so far.
    pub seconds: f64,
    /// Primal objective `||y - X beta||^2 / (2n) + lambda ||beta||_1`.
    pub objective: f64,
    /// Relative duality gap.
    pub duality_gap: f64,
    /// Nonzero coefficients.
    pub nnz: usize,
    /// Coordinate updates so far.
    pub updates: u64,
    /// The L1 weight (it changes along a regularization path).
    pub lambda: f64,
}

/// A fitted Lasso model and how it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct LassoFit {
    /// Coefficients, one per feature.
    pub beta: Vec<f64>,
    /// The intercept (0 without one).
    pub intercept: f64,
    /// The L1 weight used.
    pub lambda: f64,
    /// The smallest L1 weight at which every coefficient is zero.
    pub lambda_max: f64,
    /// Final primal objective.
    pub objective: f64,
    /// Final relative duality gap.
    pub duality_gap: f64,
    /// How the run ended.
    pub status: Status,
    /// Update rounds.
    pub rounds: u64,
    /// Coordinate updates.
    pub updates: u64,
    /// Duality-gap checks.
    pub gap_checks: u64,
    /// Seconds of training (after the workers were built).
    pub seconds: f64,
    /// Every gap check.
    pub trace: Vec<TracePoint>,
    /// Coordinates screened out.
    pub screened: usize,
    /// Candidates the dependency check rejected.
    pub rejected: u64,
    /// Updates skipped because a pipelined partial predated a commit of the same coordinate.
    pub stale_skips: u64,
    /// Anderson extrapolations kept and refused.
    pub extrapolations: (u64, u64),
    /// The model at every `lambda` of a regularization path (empty without one).
    pub path: Vec<PathPoint>,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// Workers.
    pub workers: usize,
    /// Coordinates updated per round (`L`).
    pub set_size: usize,
    /// Candidates drawn per round (`L'`).
    pub candidates: usize,
}

impl LassoFit {
    /// Number of nonzero coefficients.
    pub fn nnz(&self) -> usize {
        self.beta.iter().filter(|&&b| b != 0.0).count()
    }
}

/// Fits a Lasso model on `launcher`'s workers; `observer` sees every gap check as it happens.
///
/// Each worker asks `data` for its own rows only. The `dynamic` scheduler also needs every row on
/// the leader, to score correlations between columns (`RowSource::whole`); without it the run
/// is refused. Returns `None` on processes that do not lead the run (other ranks of a cluster).
pub fn fit<L: Launcher>(
    data: &impl RowSource,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<Option<LassoFit>, LassoError> {
    let rows = data.rows();
    let features = data.features();
    if rows == 0 || features == 0 {
        return Err(LassoError::Data(format!("{rows} rows and {features} features: nothing to fit")));
    }
    if let Some(whole) = data.whole()
        && whole.y.len() != rows
    {
        return Err(LassoError::Data(format!("{} labels for {rows} rows", whole.y.len())));
    }
    let raw = params.raw();
    let workers = launcher.workers();
    let ranges = balanced_ranges(&data.row_weights(), workers);
    let whole = data.whole();
    let columns = match (raw.scheduler, launcher.is_leader(), whole) {
        (SchedulerKind::Dynamic, true, Some(whole)) => Some(whole.x.to_columns()),
        (SchedulerKind::Dynamic, true, None) => {
            return Err(LassoError::Data(
                "the dynamic scheduler scores column correlations and needs every row on the leader".into(),
            ));
        }
        _ => None,
    };
    let rows = match whole.map(|w| &w.x) {
        Some(Features::Sparse(rows)) => Some(rows),
        _ => None,
    };
    let settings = AggregatorSettings {
        lambda: raw.lambda,
        intercept: raw.intercept,
        screening: params.screening,
        tol: raw.tol,
        coef_tol: raw.coef_tol,
        working_set: params.working_set,
        anderson: params.anderson,
        path: raw.path,
    };
    let mut started = None;
    let outcome = launcher.run(
        RunOptions { pipeline_depth: raw.pipeline_depth },
        |p| {
            let (shard, labels) = data.shard(ranges[p].clone())?;
            Ok(LassoWorker::new(shard.to_columns(), labels))
        },
        || {
            let now = Instant::now();
            started = Some(now);
            let budget = Budget {
                max_rounds: raw.max_rounds,
                deadline: raw.max_seconds.map(|s| now + Duration::from_secs_f64(s)),
            };
            (
                LassoScheduler::new(
                    params,
                    features,
                    workers,
                    columns.as_ref().map(|c| Correlation::new(c, rows, params.candidates(workers))),
                    budget,
                ),
                LassoAggregator::new(settings, now, observer),
            )
        },
    )?;
    let Some((scheduler, aggregator)) = outcome else { return Ok(None) };
    let seconds = started.map_or(0.0, |s| s.elapsed().as_secs_f64());
    let report = aggregator.last.ok_or_else(|| LassoError::Data("the run ended before any gap check".into()))?;
    Ok(Some(LassoFit {
        beta: aggregator.beta().to_vec(),
        intercept: aggregator.intercept(),
        lambda: aggregator.lambda(),
        lambda_max: aggregator.lambda_max(),
        objective: report.primal,
        duality_gap: report.relative_gap,
        status: scheduler.status.or(aggregator.status).unwrap_or(Status::MaxRounds),
        rounds: aggregator.update_rounds,
        updates: aggregator.updates,
        gap_checks: scheduler.gap_checks,
        seconds,
        screened: aggregator.screened(),
        rejected: scheduler.select_stats().rejected,
        stale_skips: aggregator.stale_skips,
        extrapolations: aggregator.extrapolations,
        path: aggregator.path,
        trace: aggregator.trace,
        scheduler: raw.scheduler,
        workers,
        set_size: params.set_size(workers),
        candidates: params.candidates(workers),
    }))
}
