//! `strads lasso`, `strads logreg` and `strads predict`: flags to checked settings, load, train on the
//! embedded runtime (one lambda, a path, or a path with cross-validation), write the outputs.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use strads_core::{Checkpoints, NoCheckpoints};
use strads_data::RowSource;
use strads_data::{Dataset, Format, Header, IndexBase, LabelColumn, LoadOptions, write_atomic, write_string_atomic};
use strads_engine::CandidateOrder;
use strads_lasso::{
    CheckedParams, GapEvery, LabelForm, Lambda, LassoFit, LassoParams, LinearModel, LogisticUpdate, Loss, PriorityRule,
    SchedulerKind, TracePoint, check_labels, dense, mean_std, score,
};

use crate::checkpoint;
use crate::cli::{
    CandidateOrderArg, DataArgs, FormatArg, HeaderArg, IndexBaseArg, LassoArgs, LogregArgs, PredictArgs, PriorityArg,
    SchedulerArg, Switch, UpdateArg,
};
use crate::failure::Failure;
use crate::progress::Progress;
use crate::runtime;

/// Everything `strads lasso` needs, checked.
pub struct Settings {
    /// How to read the data.
    pub load: LoadOptions,
    /// The model's settings.
    pub params: CheckedParams,
    /// Worker threads.
    pub workers: usize,
}

/// Turns the data flags into reader options.
pub fn load_options(args: &DataArgs) -> LoadOptions {
    LoadOptions {
        format: args.format.map(|f| match f {
            FormatArg::Libsvm => Format::Libsvm,
            FormatArg::Mm => Format::MatrixMarket,
            FormatArg::Csv => Format::Csv,
        }),
        labels: args.labels.clone(),
        index_base: match args.index_base {
            IndexBaseArg::Auto => IndexBase::Auto,
            IndexBaseArg::Zero => IndexBase::Zero,
            IndexBaseArg::One => IndexBase::One,
        },
        header: match args.header {
            HeaderArg::Auto => Header::Auto,
            HeaderArg::Yes => Header::Yes,
            HeaderArg::No => Header::No,
        },
        label_column: match &args.label_column {
            None => LabelColumn::Auto,
            Some(text) => match text.parse::<usize>() {
                Ok(index) => LabelColumn::Index(index),
                Err(_) => LabelColumn::Name(text.clone()),
            },
        },
    }
}

impl Settings {
    /// Checks every flag before any work starts.
    pub fn from_args(args: &LassoArgs, loss: Loss, update: LogisticUpdate) -> Result<Self, Failure> {
        let lambda = match (args.lambda, args.lambda_ratio) {
            (Some(l), None) => Lambda::Value(l),
            (None, Some(r)) => Lambda::Ratio(r),
            _ => return Err(Failure::input("give exactly one of --lambda and --lambda-ratio")),
        };
        if args.workers == 0 {
            return Err(Failure::input("--workers must be at least 1"));
        }
        let gap_every = count_or_auto("--gap-every", &args.gap_every)?.map_or(GapEvery::Auto, GapEvery::Rounds);
        if args.cv.is_some_and(|k| k < 2) {
            return Err(Failure::input("--cv needs at least 2 folds"));
        }
        if args.cv.is_some() && args.checkpoints.any() {
            return Err(Failure::input(
                "checkpoints cover one fit or one path; --cv runs one per fold: drop --cv or the checkpoint flags",
            ));
        }
        let mut params = LassoParams::new(lambda);
        params.loss = loss;
        params.update = update;
        params.l1_ratio = args.l1_ratio;
        params.intercept = args.intercept;
        params.positive = args.positive;
        params.scheduler = match args.scheduler {
            SchedulerArg::Block => SchedulerKind::Block,
            SchedulerArg::Dynamic => SchedulerKind::Dynamic,
            SchedulerArg::Shotgun => SchedulerKind::Shotgun,
            SchedulerArg::Cyclic => SchedulerKind::Cyclic,
            SchedulerArg::Sequential => SchedulerKind::Sequential,
        };
        params.set_size = args.set_size;
        params.candidates = args.candidates;
        params.rho = args.rho;
        params.candidate_order = match args.candidate_order {
            CandidateOrderArg::Drawn => CandidateOrder::Drawn,
            CandidateOrderArg::Priority => CandidateOrder::Priority,
        };
        params.priority = match args.priority {
            PriorityArg::Abs => PriorityRule::Absolute { base_fraction: args.priority_base },
            PriorityArg::Square => PriorityRule::Squared { eta: args.eta },
        };
        params.warmup_rounds = args.warmup_rounds;
        params.screening = args.screening.map(|s| s == Switch::On);
        // Given as off: `Some(0)`; not given: `None` (the scheduler's default).
        let given = |flag: &str, text: Option<&str>| -> Result<Option<usize>, Failure> {
            Ok(text.map(|t| count_or_off(flag, t)).transpose()?.map(|n| n.unwrap_or(0)))
        };
        params.anderson = given("--anderson", args.anderson.as_deref())?;
        params.split_min = args.split_min;
        params.working_set = given("--working-set", args.working_set.as_deref())?;
        params.tol = args.tol;
        params.coef_tol = args.coef_tol;
        params.max_rounds = args.max_rounds;
        params.path = match (args.path, args.cv) {
            (None, Some(_)) => Some(DEFAULT_CV_PATH),
            (path, _) => path,
        };
        params.max_seconds = args.max_seconds;
        params.gap_every = gap_every;
        params.pipeline_depth = args.pipeline_depth;
        params.seed = args.seed;
        params.max_memory = parse_memory(&args.max_memory)?;
        let params = params.check()?;
        Ok(Settings { load: load_options(&args.data), params, workers: args.workers })
    }
}

/// Writes `None` as `"never"` and a count as a number (summaries have no null field).
fn never_or_count<S: serde::Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(n) => serializer.serialize_u64(*n),
        None => serializer.serialize_str("never"),
    }
}

/// A `N|off` flag's value: `None` for off, else a positive count; anything else is refused with
/// the flag's name.
pub fn count_or_off(flag: &str, text: &str) -> Result<Option<usize>, Failure> {
    match text {
        "off" => Ok(None),
        _ => match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(Failure::input(format!("{flag} must be a positive number or off, got '{text}'"))),
        },
    }
}

/// A `N|auto` flag's value: `None` for auto, else the number; anything else is refused with the
/// flag's name.
pub fn count_or_auto<T: std::str::FromStr>(flag: &str, text: &str) -> Result<Option<T>, Failure> {
    match text {
        "auto" => Ok(None),
        _ => {
            text.parse().map(Some).map_err(|_| Failure::input(format!("{flag} must be a number or auto, got '{text}'")))
        }
    }
}

/// `--max-memory`: bytes (`8G`, `512M`, `1.5T`, `1000000`), `off`, or `auto` (80% of the machine's
/// memory as /proc/meminfo gives it; no limit where it cannot be read).
pub fn parse_memory(text: &str) -> Result<Option<u64>, Failure> {
    match text {
        "off" => return Ok(None),
        "auto" => {
            let total_kb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
            });
            return Ok(total_kb.map(|kb| kb * 1024 / 10 * 8));
        }
        _ => {}
    }
    let trimmed = text.trim().trim_end_matches(['B', 'b']);
    let (number, scale) = match trimmed.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let scale = match c.to_ascii_uppercase() {
                'K' => 1e3,
                'M' => 1e6,
                'G' => 1e9,
                'T' => 1e12,
                _ => return Err(Failure::input(format!("--max-memory: unknown unit in '{text}' (K, M, G or T)"))),
            };
            (&trimmed[..i], scale)
        }
        _ => (trimmed, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some((v * scale) as u64)),
        _ => Err(Failure::input(format!("--max-memory must be a size such as 8G, auto or off, got '{text}'"))),
    }
}

/// The path length `--cv` uses when `--path` is not given.
const DEFAULT_CV_PATH: usize = 20;

/// `summary.json`: what a run reached and how.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The loss: `squared` or `logistic`.
    pub loss: &'static str,
    /// The share of the L1 term in the penalty.
    pub l1_ratio: f64,
    /// The logistic coordinate step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<&'static str>,
    /// Final primal objective.
    pub objective: f64,
    /// Final relative duality gap.
    pub duality_gap: f64,
    /// The L1 weight used.
    pub lambda: f64,
    /// The smallest L1 weight giving an all-zero model.
    pub lambda_max: f64,
    /// Nonzero coefficients.
    pub nnz: usize,
    /// Update rounds.
    pub rounds: u64,
    /// Coordinate updates.
    pub updates: u64,
    /// Seconds of training, without loading.
    pub seconds: f64,
    /// The scheduler.
    pub scheduler: &'static str,
    /// Workers (over every rank).
    pub workers: usize,
    /// Ranks, peak memory per rank and bytes sent per round.
    #[serde(flatten)]
    pub scale: runtime::Scale,
    /// How the run ended.
    pub status: &'static str,
    /// The intercept (0 when not fitted).
    pub intercept: f64,
    /// Whether an intercept was fitted.
    pub fit_intercept: bool,
    /// Duality-gap checks.
    pub gap_checks: u64,
    /// Gap checks shared by every worker (the others were worker 0's alone).
    pub shared_gap_checks: u64,
    /// Coordinates screened out.
    pub screened: usize,
    /// Candidates rejected by the dependency check.
    pub rejected: u64,
    /// Updates skipped as stale under pipelining.
    pub stale_skips: u64,
    /// Anderson extrapolations kept.
    pub extrapolations_kept: u64,
    /// Anderson extrapolations refused (they would not have lowered the objective).
    pub extrapolations_refused: u64,
    /// Block: nonzeros per pass below which one worker solves the working set (`"never"`, the
    /// default: no working set is split).
    #[serde(serialize_with = "never_or_count")]
    pub split_min: Option<u64>,
    /// Block: rounds split between workers (kept).
    pub split_rounds: u64,
    /// Block: split rounds dropped because the groups' changes fought; one worker solved on.
    pub dropped_rounds: u64,
    /// Coordinates per round.
    pub set_size: usize,
    /// Candidates per round.
    pub candidates: usize,
    /// Dependency threshold.
    pub rho: f64,
    /// Pipeline depth.
    pub pipeline_depth: usize,
    /// Seed.
    pub seed: u64,
    /// Samples.
    pub rows: usize,
    /// Features.
    pub features: usize,
    /// Stored values of the feature matrix.
    pub stored_values: usize,
    /// Seconds spent reading the data.
    pub loading_seconds: f64,
    /// The data file.
    pub data: String,
    /// Metrics on the training data (and the test data, with `--test`).
    #[serde(flatten)]
    pub metrics: Metrics,
    /// The test file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// Cross-validation folds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cv_folds: Option<usize>,
    /// The mean held-out loss (log loss or mean squared error) at the chosen lambda.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cv_loss: Option<f64>,
}

/// Quality of a model on labelled data.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Metrics {
    /// Logistic: share of training rows whose class is predicted right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_accuracy: Option<f64>,
    /// Squared loss: root mean squared error on the training rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_rmse: Option<f64>,
    /// Logistic: share of test rows whose class is predicted right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_accuracy: Option<f64>,
    /// Logistic: mean log loss on the test rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_log_loss: Option<f64>,
    /// Squared loss: root mean squared error on the test rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_rmse: Option<f64>,
}

/// Labels as the logistic loss wants them (-1 and 1), from -1/1 or 0/1; `file` names the data in errors.
fn signs(y: &[f64], file: &Path) -> Result<Vec<f64>, Failure> {
    strads_lasso::to_signs(y).map_err(|e| Failure::input(format!("{}: {e}", file.display())))
}

/// Builds the summary of a fit.
///
/// The training scores need the whole data set; on a rank of an MPI job without it they are left out.
pub fn summary(
    fit: &LassoFit,
    params: &CheckedParams,
    data: &(impl RowSource + ?Sized),
    path: &Path,
    loading_seconds: f64,
) -> Summary {
    let raw = params.raw();
    let train = data.whole().map(|whole| score(raw.loss, &fit.beta, fit.intercept, &whole.x, &whole.y));
    Summary {
        loss: raw.loss.name(),
        l1_ratio: raw.l1_ratio,
        update: (raw.loss == Loss::Logistic).then_some(raw.update.name()),
        metrics: Metrics {
            train_accuracy: train.and_then(|t| t.accuracy),
            train_rmse: train.filter(|_| raw.loss == Loss::Squared).map(|t| t.loss.sqrt()),
            ..Metrics::default()
        },
        test: None,
        cv_folds: None,
        cv_loss: None,
        objective: fit.objective,
        duality_gap: fit.duality_gap,
        lambda: fit.lambda,
        lambda_max: fit.lambda_max,
        nnz: fit.nnz(),
        rounds: fit.rounds,
        updates: fit.updates,
        seconds: fit.seconds,
        scheduler: fit.scheduler.name(),
        workers: fit.workers,
        status: fit.status.name(),
        intercept: fit.intercept,
        fit_intercept: raw.intercept,
        gap_checks: fit.gap_checks,
        shared_gap_checks: fit.shared_gap_checks,
        screened: fit.screened,
        rejected: fit.rejected,
        stale_skips: fit.stale_skips,
        extrapolations_kept: fit.extrapolations.0,
        extrapolations_refused: fit.extrapolations.1,
        split_min: fit.split_min,
        split_rounds: fit.split_rounds,
        dropped_rounds: fit.dropped_rounds,
        set_size: fit.set_size,
        candidates: fit.candidates,
        rho: raw.rho,
        pipeline_depth: raw.pipeline_depth,
        seed: raw.seed,
        rows: data.rows(),
        features: data.features(),
        stored_values: data.row_weights().iter().sum::<u64>() as usize - data.rows(),
        loading_seconds,
        data: path.display().to_string(),
        scale: runtime::here(),
    }
}

/// Refuses an output path that cannot be a folder, before any work.
pub fn check_out_dir(out: &Path) -> Result<(), Failure> {
    if out.exists() && !out.is_dir() {
        return Err(Failure::input(format!("{}: --out must be a folder, and this is a file", out.display())));
    }
    Ok(())
}

/// A lambda and the held-out loss of each cross-validation fold there.
pub type CvRow = (f64, Vec<f64>);

/// What a run writes besides the summary and the trace.
pub struct Extras {
    /// `model.json`.
    pub model: LinearModel,
    /// A test metric's name and its value at each point of the path (`path.csv`'s last column).
    pub path_test: Option<(&'static str, Vec<f64>)>,
    /// Cross-validation: the metric's name and, per lambda, the held-out loss of each fold.
    pub cv: Option<(&'static str, Vec<CvRow>)>,
}

impl Extras {
    /// The model file of a fit and nothing else.
    pub fn of(fit: &LassoFit, params: &CheckedParams, labels: Option<LabelForm>) -> Extras {
        Extras { model: LinearModel::of(fit, params, labels), path_test: None, cv: None }
    }
}

/// Writes `summary.json`, `trace.csv`, `coefficients.csv` and `model.json` (with a path, `path.csv`
/// and `path_coefficients.csv`; with cross-validation, `cv.csv`), each atomically.
pub fn write_outputs(out: &Path, fit: &LassoFit, summary: &Summary, extras: &Extras) -> Result<(), Failure> {
    let run = |e: strads_data::DataError| Failure::Run(e.into());
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::Run(anyhow::anyhow!("{}: cannot create the folder: {e}", out.display())))?;
    let json = serde_json::to_string_pretty(summary).map_err(|e| Failure::Run(e.into()))?;
    write_string_atomic(&out.join("summary.json"), &(json + "\n")).map_err(run)?;
    write_atomic(&out.join("trace.csv"), |w| {
        writeln!(w, "round,seconds,objective,duality_gap,nnz,updates,lambda")?;
        for t in &fit.trace {
            let (round, seconds, objective, gap, nnz, updates) =
                (t.round, t.seconds, t.objective, t.duality_gap, t.nnz, t.updates);
            writeln!(w, "{round},{seconds},{objective},{gap},{nnz},{updates},{}", t.lambda)?;
        }
        Ok(())
    })
    .map_err(run)?;
    if !fit.path.is_empty() {
        write_atomic(&out.join("path.csv"), |w| {
            write!(w, "lambda,objective,duality_gap,nnz,seconds,updates,status")?;
            match &extras.path_test {
                Some((name, _)) => writeln!(w, ",{name}")?,
                None => writeln!(w)?,
            }
            for (k, p) in fit.path.iter().enumerate() {
                let (lambda, objective, gap, nnz, seconds) = (p.lambda, p.objective, p.duality_gap, p.nnz, p.seconds);
                write!(w, "{lambda},{objective},{gap},{nnz},{seconds},{},{}", p.updates, p.status.name())?;
                match &extras.path_test {
                    Some((_, values)) => writeln!(w, ",{}", values[k])?,
                    None => writeln!(w)?,
                }
            }
            Ok(())
        })
        .map_err(run)?;
        write_atomic(&out.join("path_coefficients.csv"), |w| {
            writeln!(w, "lambda,index,value")?;
            for p in &fit.path {
                if p.intercept != 0.0 {
                    writeln!(w, "{},intercept,{}", p.lambda, p.intercept)?;
                }
                for (j, b) in &p.coefficients {
                    writeln!(w, "{},{j},{b}", p.lambda)?;
                }
            }
            Ok(())
        })
        .map_err(run)?;
    }
    if let Some((name, rows)) = &extras.cv {
        write_atomic(&out.join("cv.csv"), |w| {
            let folds = rows.first().map_or(0, |(_, f)| f.len());
            write!(w, "lambda,mean_{name},std_{name}")?;
            for k in 0..folds {
                write!(w, ",fold{}", k + 1)?;
            }
            writeln!(w)?;
            for (lambda, values) in rows {
                let (mean, std) = mean_std(values);
                write!(w, "{lambda},{mean},{std}")?;
                for v in values {
                    write!(w, ",{v}")?;
                }
                writeln!(w)?;
            }
            Ok(())
        })
        .map_err(run)?;
    }
    // Optional outputs of an earlier run in the same folder would not describe this one.
    let stale: &[&str] = match (fit.path.is_empty(), extras.cv.is_none()) {
        (true, true) => &["path.csv", "path_coefficients.csv", "cv.csv"],
        (true, false) => &["path.csv", "path_coefficients.csv"],
        (false, true) => &["cv.csv"],
        (false, false) => &[],
    };
    for name in stale {
        let _ = std::fs::remove_file(out.join(name));
    }
    extras.model.save(&out.join("model.json")).map_err(|e| Failure::Run(e.into()))?;
    write_atomic(&out.join("coefficients.csv"), |w| {
        writeln!(w, "index,value")?;
        if fit.intercept != 0.0 {
            writeln!(w, "intercept,{}", fit.intercept)?;
        }
        for (j, b) in fit.beta.iter().enumerate() {
            if *b != 0.0 {
                writeln!(w, "{j},{b}")?;
            }
        }
        Ok(())
    })
    .map_err(run)
}

/// Trains on loaded data with a progress spinner; shared by `strads lasso` and `strads demo`.
pub fn train(
    data: &Dataset,
    settings: &Settings,
    label: &str,
    quiet: bool,
    checkpoints: &mut dyn Checkpoints,
) -> Result<LassoFit, Failure> {
    train_here(data, settings, label, quiet, checkpoints)?
        .ok_or_else(|| Failure::Run(anyhow::anyhow!("this process does not lead the run")))
}

/// [`train`] on this process's share of a run: the fit on the leader, `None` on other MPI ranks.
fn train_here(
    data: &(impl RowSource + ?Sized),
    settings: &Settings,
    label: &str,
    quiet: bool,
    checkpoints: &mut dyn Checkpoints,
) -> Result<Option<LassoFit>, Failure> {
    let launcher = runtime::launcher(settings.workers)?;
    let progress = Progress::new(label, quiet);
    let mut observer = |t: &TracePoint| {
        progress.update(
            t.round,
            format!(
                "round {}  updates {}  objective {:.6e}  gap {:.2e}  nnz {}",
                t.round, t.updates, t.objective, t.duality_gap, t.nnz
            ),
            &[
                ("updates", t.updates as f64),
                ("objective", t.objective),
                ("duality_gap", t.duality_gap),
                ("nnz", t.nnz as f64),
                ("lambda", t.lambda),
            ],
        );
    };
    let fit = strads_lasso::fit_checkpointed(data, &settings.params, &launcher, &mut observer, checkpoints);
    progress.finish();
    Ok(fit?)
}

/// `strads lasso`.
pub fn run(args: &LassoArgs) -> Result<Option<LassoFit>, Failure> {
    command(args, Loss::Squared, LogisticUpdate::Newton, "lasso")
}

/// `strads logreg`.
pub fn run_logreg(args: &LogregArgs) -> Result<Option<LassoFit>, Failure> {
    let update = match args.update {
        UpdateArg::Newton => LogisticUpdate::Newton,
        UpdateArg::Bound => LogisticUpdate::Bound,
    };
    command(&args.model, Loss::Logistic, update, "logreg")
}

/// Loads the training data -- the whole file, or (in an MPI job, for LIBSVM files) this rank's
/// workers' rows -- and, for the logistic loss, checks the labels and makes them -1 and 1.
fn load_training(path: &Path, settings: &Settings) -> Result<(Box<dyn RowSource>, Option<LabelForm>), Failure> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = runtime::job()
        && matches!(strads_data::detect_format(path, settings.load.format)?, Format::Libsvm)
    {
        let whole = match settings.params.raw().scheduler {
            strads_lasso::SchedulerKind::Dynamic => strads_data::WholeOn::Leader,
            strads_lasso::SchedulerKind::Block => strads_data::WholeOn::Everywhere,
            _ => strads_data::WholeOn::Nowhere,
        };
        let mut rows = strads_data::load_libsvm_share(&*mpi, path, settings.load.index_base, settings.workers, whole)?;
        let labels = match settings.params.raw().loss {
            Loss::Logistic => {
                let distinct = strads_data::distinct_labels(&*mpi, rows.labels())?;
                let form = check_labels(&distinct).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
                rows.map_labels(|y| signs(y, path))?;
                Some(form)
            }
            Loss::Squared => None,
        };
        runtime::note_input_read(rows.bytes_read);
        return Ok((Box::new(rows), labels));
    }
    let mut data = strads_data::load(path, &settings.load)?;
    runtime::note_input_file(path);
    let labels = match settings.params.raw().loss {
        Loss::Logistic => {
            let form = check_labels(&data.y).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
            data.y = signs(&data.y, path)?;
            Some(form)
        }
        Loss::Squared => None,
    };
    Ok((Box::new(data), labels))
}

/// Loads labelled data; logistic labels become -1 and 1.
fn load_labelled(path: &Path, settings: &Settings) -> Result<Dataset, Failure> {
    let mut data = strads_data::load(path, &settings.load)?;
    if settings.params.raw().loss == Loss::Logistic {
        data.y = signs(&data.y, path)?;
    }
    Ok(data)
}

fn command(args: &LassoArgs, loss: Loss, update: LogisticUpdate, label: &str) -> Result<Option<LassoFit>, Failure> {
    let settings = Settings::from_args(args, loss, update)?;
    if args.cv.is_some() && runtime::rank().1 > 1 {
        return Err(Failure::input("--cv runs one fit per fold in one process: start it without mpirun"));
    }
    check_out_dir(&args.out)?;
    let started = Instant::now();
    let path = &args.data.data;
    let loading = Progress::phase(label, args.quiet, &format!("loading {}", path.display()));
    let (data, labels) = load_training(path, &settings)?;
    // Only the leader scores the test set: the other ranks of an MPI job never read it.
    let test = match args.test.as_deref() {
        Some(p) if runtime::is_leader() => Some(load_labelled(p, &settings)?),
        _ => None,
    };
    loading.finish();
    let loading_seconds = started.elapsed().as_secs_f64();
    let mut checkpoints = checkpoint::open(&args.checkpoints, label, || {
        let extra = [
            ("data", path.display().to_string()),
            ("data_contents", checkpoint::file_identity(path)),
            ("rows", data.rows().to_string()),
            ("features", data.features().to_string()),
            ("workers", settings.workers.to_string()),
        ];
        checkpoint::fingerprint(settings.params.raw(), &["max_seconds", "max_memory"], &extra)
    })?;
    let fit = train_here(&*data, &settings, label, args.quiet, &mut checkpoints)?;
    let scale = runtime::scale();
    let Some(mut fit) = fit else { return Ok(None) };
    let features = fit.beta.len();
    let metric = match loss {
        Loss::Logistic => "log_loss",
        Loss::Squared => "mse",
    };
    let path_test = match &test {
        Some(test) if !fit.path.is_empty() => Some((
            if loss == Loss::Logistic { "test_log_loss" } else { "test_mse" },
            fit.path
                .iter()
                .map(|p| score(loss, &dense(&p.coefficients, features), p.intercept, &test.x, &test.y).loss)
                .collect(),
        )),
        _ => None,
    };
    let mut cv = None;
    let mut cv_loss = None;
    if let Some(folds) = args.cv {
        let whole = data.whole().ok_or_else(|| Failure::input("--cv needs the whole data set in one process"))?;
        let fit_fold = |fold: usize, rows: &Dataset, params: &CheckedParams| {
            let fold_settings =
                Settings { load: settings.load.clone(), params: params.clone(), workers: settings.workers };
            let name = format!("{label} cv fold {}/{folds}", fold + 1);
            train(rows, &fold_settings, &name, args.quiet, &mut NoCheckpoints).map_err(|failure| match failure {
                Failure::Input(e) => Failure::Input(e.context(format!("cross-validation fold {}", fold + 1))),
                Failure::Run(e) => Failure::Run(e.context(format!("cross-validation fold {}", fold + 1))),
                Failure::Interrupted(e) => Failure::Interrupted(e),
            })
        };
        let validation = strads_lasso::cross_validate(whole, &settings.params, &mut fit, folds, args.seed, fit_fold)?;
        cv_loss = Some(validation.means()[validation.best]);
        cv = Some((metric, validation.rows));
    }
    let mut summary = summary(&fit, &settings.params, &*data, path, loading_seconds);
    if let (Some(test), Some(test_path)) = (&test, &args.test) {
        let scores = score(loss, &fit.beta, fit.intercept, &test.x, &test.y);
        match loss {
            Loss::Logistic => {
                summary.metrics.test_accuracy = scores.accuracy;
                summary.metrics.test_log_loss = Some(scores.loss);
            }
            Loss::Squared => summary.metrics.test_rmse = Some(scores.loss.sqrt()),
        }
        summary.test = Some(test_path.display().to_string());
    }
    summary.cv_folds = args.cv;
    summary.cv_loss = cv_loss;
    summary.scale = scale;
    let mut extras = Extras::of(&fit, &settings.params, labels);
    extras.path_test = path_test;
    extras.cv = cv;
    write_outputs(&args.out, &fit, &summary, &extras)?;
    if !args.quiet {
        println!(
            "{}: objective {:.10e}, duality gap {:.2e}, {} nonzeros, {} updates in {} rounds, {:.3} s ({} scheduler, {} workers) -> {}",
            fit.status.name(),
            fit.objective,
            fit.duality_gap,
            fit.nnz(),
            fit.updates,
            fit.rounds,
            fit.seconds,
            fit.scheduler.name(),
            fit.workers,
            args.out.display(),
        );
        if let Some(loss) = cv_loss {
            println!("cross-validation: lambda {:.6e} has the least mean held-out {metric}, {loss:.6}", fit.lambda);
        }
    }
    Ok(Some(fit))
}

/// `strads predict`: a saved model on new data; prints accuracy or RMSE when the data has labels.
pub fn predict(args: &PredictArgs) -> Result<(), Failure> {
    let model = LinearModel::load(&args.model.join("model.json")).map_err(|e| Failure::Input(e.into()))?;
    let data = strads_data::load(&args.data.data, &load_options(&args.data))?;
    // Coefficients of features the data does not have contribute nothing: no allocation follows the
    // model file's claims, only the data's columns.
    let margins = model.decision_function(&data.x);
    let negative = model.negative_label();
    let write = |w: &mut dyn Write| -> std::io::Result<()> {
        match model.loss {
            Loss::Squared => writeln!(w, "prediction")?,
            Loss::Logistic => writeln!(w, "margin,probability,class")?,
        }
        for &margin in &margins {
            match model.loss {
                Loss::Squared => writeln!(w, "{margin}")?,
                Loss::Logistic => {
                    let probability = 1.0 / (1.0 + (-margin).exp());
                    writeln!(w, "{margin},{probability},{}", if margin > 0.0 { 1.0 } else { negative })?
                }
            }
        }
        Ok(())
    };
    match &args.out {
        Some(out) => write_atomic(out, |w| write(w)).map_err(|e| Failure::Run(e.into()))?,
        None => write(&mut std::io::stdout().lock()).map_err(|e| Failure::Run(e.into()))?,
    }
    // Labels in the file: report how well the model does (to standard error, not to mix with CSV).
    if let Ok(scores) = model.score(&data) {
        match scores.accuracy {
            Some(accuracy) => eprintln!("accuracy {accuracy:.6}, log loss {:.6}", scores.loss),
            None => eprintln!("rmse {:.6}", scores.loss.sqrt()),
        }
    }
    Ok(())
}
