//! Fitting a Lasso model: the application's one entry point, on whatever runtime it is given.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use strads_core::{Checkpoints, Launcher, Leading, NoCheckpoints, RunOptions, balanced_ranges};
use strads_data::{Features, RowSource};

use crate::block::Grouper;
use crate::program::{AggregatorSettings, LassoAggregator, LassoWorker, PathPoint};
use crate::scheduler::{Budget, Correlation, LassoScheduler};
use crate::{CheckedParams, LassoError, Loss, SchedulerKind};

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
    /// Gap checks whose column sums every worker shared; the others (all of them on one worker,
    /// and in block mode those over fewer than 500,000 active nonzeros) were worker 0's alone.
    pub shared_gap_checks: u64,
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
    /// Block: the nonzeros per pass below which one worker solved the working set, as given
    /// (`None`, the default: never split).
    pub split_min: Option<u64>,
    /// Block: rounds whose working set was split between workers and whose step was kept.
    pub split_rounds: u64,
    /// Block: split rounds dropped because the groups' changes fought (one worker solved on).
    pub dropped_rounds: u64,
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
    data: &(impl RowSource + ?Sized),
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<Option<LassoFit>, LassoError> {
    fit_checkpointed(data, params, launcher, observer, &mut NoCheckpoints)
}

/// [`fit`] on a launcher whose calling process leads (the embedded runtime): the model itself.
///
/// ```
/// use strads_lasso::{GeneratorSpec, Lambda, LassoParams, fit_model, generate};
///
/// let spec = GeneratorSpec { rows: 100, features: 50, block: 5, correlation: 0.5, density: 0.3, support: 5, noise: 0.1, seed: 1 };
/// let data = generate(&spec).data;
/// let params = LassoParams::new(Lambda::Ratio(0.1)).check()?;
/// let model = fit_model(&data, &params, &strads_runtime::Embedded::new(2)?, &mut |_| {})?;
/// assert!(model.nnz() > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_model<L: Leading>(
    data: &(impl RowSource + ?Sized),
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<LassoFit, LassoError> {
    fit(data, params, launcher, observer)?
        .ok_or_else(|| LassoError::Data("a run on a leading launcher ended without a model".into()))
}

/// [`fit`] with checkpoints: resumes from `checkpoints` if it holds a snapshot of the same run,
/// and saves snapshots when it asks (see [`Checkpoints`]). It counts rounds; the clock of the
/// trace and of `seconds` goes on from the snapshot's.
pub fn fit_checkpointed<L: Launcher>(
    data: &(impl RowSource + ?Sized),
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
    checkpoints: &mut dyn Checkpoints,
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
    let scales = data.row_scales();
    if let Some(scales) = scales {
        if raw.loss == Loss::Logistic {
            return Err(LassoError::Params(strads_core::ParamError::new(
                "sample_weight",
                "sample weights are supported for the squared loss (Lasso, elastic net), not the logistic loss",
            )));
        }
        if scales.len() != rows {
            return Err(LassoError::Data(format!("{} sample weights for {rows} rows", scales.len())));
        }
    }
    if let Some(start) = &raw.warm_start
        && start.coefficients.len() != features
    {
        let message = format!("the warm start has {} coefficients for {features} features", start.coefficients.len());
        return Err(LassoError::Params(strads_core::ParamError::new("warm_start", message)));
    }
    if let Some(limit) = raw.max_memory {
        let needed =
            memory_estimate(rows, features, data.whole().map(|w| w.x.nnz()), launcher.workers(), raw.scheduler);
        if needed > limit {
            return Err(LassoError::Data(format!(
                "{rows} rows and {features} features need about {} of memory, above the limit of {} (raise --max-memory, or check the feature indices)",
                human_bytes(needed),
                human_bytes(limit)
            )));
        }
    }
    if let Some(whole) = data.whole() {
        check_magnitudes(&whole.x, &whole.y, 0)?;
        if raw.loss == Loss::Logistic {
            check_labels(&whole.y)?;
        }
    }
    let workers = launcher.workers();
    let ranges = balanced_ranges(&data.row_weights(), workers);
    let whole = data.whole();
    let block = raw.scheduler == SchedulerKind::Block;
    // Block mode: every worker reads every column, shared in memory; so does the grouper.
    let shared = match (block, whole) {
        (true, Some(whole)) => {
            let labels = if raw.loss == Loss::Logistic { to_signs(&whole.y)? } else { whole.y.clone() };
            Some((whole.x.shared_columns(), labels))
        }
        (true, None) => {
            return Err(LassoError::Data(
                "the block scheduler gives every worker every row; this process does not hold them all (use --scheduler dynamic on shares)".into(),
            ));
        }
        (false, _) => None,
    };
    let columns = match (raw.scheduler, launcher.is_leader(), whole) {
        (SchedulerKind::Dynamic, true, Some(whole)) => Some(whole.x.shared_columns()),
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
        loss: raw.loss,
        l1_ratio: raw.l1_ratio,
        update: raw.update,
        path_top: raw.path_top,
        intercept: raw.intercept,
        positive: raw.positive,
        screening: params.screening,
        tol: raw.tol,
        coef_tol: raw.coef_tol,
        working_set: params.working_set,
        anderson: params.anderson,
        path: raw.path,
        block: block.then(|| params.anderson.map_or(0, |k| k.min(u8::MAX as usize) as u8)),
    };
    let outcome = launcher.run_checkpointed(
        RunOptions { pipeline_depth: raw.pipeline_depth },
        checkpoints,
        |p| {
            if let Some((x, labels)) = &shared {
                let worker = LassoWorker::block(raw.loss, x.clone(), labels.clone(), p, workers);
                return Ok(worker.with_scale(scales.map(<[f64]>::to_vec)));
            }
            let (shard, mut labels) = data.shard(ranges[p].clone())?;
            if whole.is_none() {
                // Checked above on the whole data when this process has it.
                check_magnitudes(&shard, &labels, ranges[p].start)?;
            }
            if raw.loss == Loss::Logistic {
                labels = to_signs(&labels)?;
            }
            let scale = scales.map(|s| s[ranges[p].clone()].to_vec());
            Ok(LassoWorker::with_loss(raw.loss, shard.to_columns(), labels).with_scale(scale))
        },
        || {
            let now = Instant::now();
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
                    shared.as_ref().map(|(x, _)| Grouper::new(x.clone(), raw.seed, raw.split_min)),
                    budget,
                ),
                LassoAggregator::new(settings, now, observer).starting_from(raw.warm_start.clone()),
            )
        },
    )?;
    let Some((scheduler, aggregator)) = outcome else { return Ok(None) };
    let seconds = aggregator.elapsed_seconds();
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
        shared_gap_checks: scheduler.shared_gap_checks,
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
        split_min: raw.split_min,
        split_rounds: aggregator.split_rounds,
        dropped_rounds: aggregator.dropped_rounds,
    }))
}

/// How the classes of a logistic regression are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelForm {
    /// -1 and 1.
    MinusOne,
    /// 0 and 1.
    Zero,
}

impl LabelForm {
    /// The label of the negative class.
    pub fn negative(self) -> f64 {
        match self {
            LabelForm::MinusOne => -1.0,
            LabelForm::Zero => 0.0,
        }
    }
}

/// The classes seen in a logistic regression's labels: the first -1 and the first 0 (rows, 0-based),
/// and whether a 1 appears. A label that is none of -1, 0 and 1, or a mix of -1 and 0, is an error
/// naming its row (1-based).
fn scan_labels(y: &[f64]) -> Result<(Option<usize>, Option<usize>, bool), LassoError> {
    let (mut minus, mut zero, mut plus) = (None, None, false);
    for (i, &v) in y.iter().enumerate() {
        if v == 1.0 {
            plus = true;
        } else if v == -1.0 {
            minus = minus.or(Some(i));
        } else if v == 0.0 {
            zero = zero.or(Some(i));
        } else {
            return Err(LassoError::Data(format!(
                "row {}: label {v} is not a class; logistic regression takes -1 and 1, or 0 and 1",
                i + 1
            )));
        }
    }
    if let (Some(a), Some(b)) = (minus, zero) {
        return Err(LassoError::Data(format!(
            "labels mix -1 (row {}) and 0 (row {}); logistic regression takes -1 and 1, or 0 and 1",
            a + 1,
            b + 1
        )));
    }
    Ok((minus, zero, plus))
}

/// Checks the labels of a logistic regression: both classes present, written either as -1 and 1
/// or as 0 and 1. Returns the form, or an error naming the first bad label and its row (1-based).
pub fn check_labels(y: &[f64]) -> Result<LabelForm, LassoError> {
    match scan_labels(y)? {
        (Some(_), None, true) => Ok(LabelForm::MinusOne),
        (None, Some(_), true) => Ok(LabelForm::Zero),
        _ => Err(LassoError::Data("the labels have one class only; logistic regression needs two".into())),
    }
}

/// Logistic labels as the loss takes them, -1 and 1, from -1/1 or 0/1; one class is allowed (a test
/// set may have one), anything else is refused as [`check_labels`] refuses it.
pub fn to_signs(y: &[f64]) -> Result<Vec<f64>, LassoError> {
    scan_labels(y)?;
    Ok(y.iter().map(|&v| if v == 0.0 { -1.0 } else { v }).collect())
}

/// Refuses values whose squares, summed over a column, could overflow: the coordinate updates and
/// the duality gap need `||x_j||^2` and `||y||^2` as finite numbers. `first_row` numbers the rows of
/// a shard in the whole data (1-based in the message).
fn check_magnitudes(x: &strads_data::Features, y: &[f64], first_row: usize) -> Result<(), LassoError> {
    let rows = x.rows().max(y.len()).max(1) as f64;
    let limit = (f64::MAX / rows).sqrt() / 4.0;
    let too_large = |what: &str, row: usize, v: f64| {
        LassoError::Data(format!(
            "row {}: {what} {v:e} is too large (squares summed over {rows} rows would overflow past {limit:.1e}); rescale the data",
            first_row + row + 1
        ))
    };
    if let Some((i, &v)) = y.iter().enumerate().find(|(_, v)| v.abs() > limit) {
        return Err(too_large("label", i, v));
    }
    match x {
        strads_data::Features::Sparse(m) => {
            for (i, row) in m.outer_iterator().enumerate() {
                if let Some(&v) = row.data().iter().find(|v| v.abs() > limit) {
                    return Err(too_large("feature value", i, v));
                }
            }
        }
        strads_data::Features::Dense(d) => {
            if let Some((k, &v)) = d.data.iter().enumerate().find(|(_, v)| v.abs() > limit) {
                return Err(too_large("feature value", k / d.cols.max(1), v));
            }
        }
        strads_data::Features::Columns(c) => {
            for j in 0..c.cols() {
                let mut found = None;
                c.for_each_entry(j, |i, v| {
                    if found.is_none() && v.abs() > limit {
                        found = Some((i, v));
                    }
                });
                if let Some((i, v)) = found {
                    return Err(too_large("feature value", i, v));
                }
            }
        }
    }
    Ok(())
}

/// Bytes a run needs, roughly: per worker its columns (an offset per feature, 12 bytes per stored
/// value) and residuals; on the leader the model and the aggregator's per-feature statistics, the
/// sampler's trees, and (dynamic) every column for the correlations. Stored values are those of the
/// whole data when known, else one per row and feature up to 2^31.
pub fn memory_estimate(
    rows: usize,
    features: usize,
    stored: Option<usize>,
    workers: usize,
    scheduler: SchedulerKind,
) -> u64 {
    let (n, p, w) = (rows as u64, features as u64, workers.max(1) as u64);
    let nnz = stored.map_or_else(|| n.saturating_mul(p).min(1 << 31), |s| s as u64);
    let workers_part = if scheduler == SchedulerKind::Block {
        // One shared copy of the columns; per worker the coefficients, column statistics, and
        // the residual and derivatives twice (committed and solved).
        nnz.saturating_mul(12).saturating_add(w.saturating_mul(p * 48 + n.saturating_mul(56)))
    } else {
        w.saturating_mul((p + 1) * 8 + 40 * p / w) + nnz.saturating_mul(12) + n.saturating_mul(48)
    };
    let leader = p.saturating_mul(96);
    let correlations = if scheduler == SchedulerKind::Dynamic { (p + 1) * 8 + nnz.saturating_mul(12) } else { 0 };
    workers_part.saturating_add(leader).saturating_add(correlations)
}

/// `1.5 GB`, `12 MB`, `800 B`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} KB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

impl crate::LassoParams {
    /// Checks these settings and fits `data` with them on the calling thread, with the model's
    /// trace unobserved: a Lasso from Rust in one line,
    /// `LassoParams::new(Lambda::Ratio(0.01)).fit(&data)?`. For several workers, progress or a
    /// cluster, use [`fit_model`] or [`fit`] with a launcher.
    pub fn fit(&self, data: &(impl RowSource + ?Sized)) -> Result<LassoFit, LassoError> {
        let checked = self.clone().check()?;
        fit_model(data, &checked, &strads_engine::Inline::new(1)?, &mut |_| {})
    }
}
