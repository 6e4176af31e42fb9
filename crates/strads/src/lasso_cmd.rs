//! `strads lasso`: flags to checked settings, load, train on the embedded runtime, write the outputs.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use strads_data::{Dataset, Format, Header, IndexBase, LabelColumn, LoadOptions, write_atomic, write_string_atomic};
use strads_engine::CandidateOrder;
use strads_lasso::{CheckedParams, GapEvery, Lambda, LassoFit, LassoParams, PriorityRule, SchedulerKind, TracePoint};
use strads_runtime::Embedded;

use crate::cli::{
    CandidateOrderArg, DataArgs, FormatArg, HeaderArg, IndexBaseArg, LassoArgs, PriorityArg, SchedulerArg, Switch,
};
use crate::failure::Failure;
use crate::progress::Progress;

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
    pub fn from_args(args: &LassoArgs) -> Result<Self, Failure> {
        let lambda = match (args.lambda, args.lambda_ratio) {
            (Some(l), None) => Lambda::Value(l),
            (None, Some(r)) => Lambda::Ratio(r),
            _ => return Err(Failure::input("give exactly one of --lambda and --lambda-ratio")),
        };
        if args.workers == 0 {
            return Err(Failure::input("--workers must be at least 1"));
        }
        let gap_every = match args.gap_every.as_str() {
            "auto" => GapEvery::Auto,
            text => GapEvery::Rounds(
                text.parse()
                    .map_err(|_| Failure::input(format!("--gap-every must be a number or auto, got '{text}'")))?,
            ),
        };
        let mut params = LassoParams::new(lambda);
        params.intercept = args.intercept;
        params.scheduler = match args.scheduler {
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
        params.anderson = match args.anderson.as_deref() {
            None => None,
            Some("off") => Some(0),
            Some(text) => match text.parse::<usize>() {
                Ok(k) if k > 0 => Some(k),
                _ => return Err(Failure::input(format!("--anderson must be a positive number or off, got '{text}'"))),
            },
        };
        params.working_set = match args.working_set.as_deref() {
            None => None,
            Some("off") => Some(0),
            Some(text) => match text.parse::<usize>() {
                Ok(size) if size > 0 => Some(size),
                _ => {
                    return Err(Failure::input(format!(
                        "--working-set must be a positive number or off, got '{text}'"
                    )));
                }
            },
        };
        params.tol = args.tol;
        params.coef_tol = args.coef_tol;
        params.max_rounds = args.max_rounds;
        params.path = args.path;
        params.max_seconds = args.max_seconds;
        params.gap_every = gap_every;
        params.pipeline_depth = args.pipeline_depth;
        params.seed = args.seed;
        let params = params.check()?;
        Ok(Settings { load: load_options(&args.data), params, workers: args.workers })
    }
}

/// `summary.json`: what a run reached and how.
#[derive(Debug, Serialize)]
pub struct Summary {
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
    /// Worker threads.
    pub workers: usize,
    /// How the run ended.
    pub status: &'static str,
    /// The intercept (0 when not fitted).
    pub intercept: f64,
    /// Whether an intercept was fitted.
    pub fit_intercept: bool,
    /// Duality-gap checks.
    pub gap_checks: u64,
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
}

/// Builds the summary of a fit.
pub fn summary(fit: &LassoFit, params: &CheckedParams, data: &Dataset, path: &Path, loading_seconds: f64) -> Summary {
    let raw = params.raw();
    Summary {
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
        screened: fit.screened,
        rejected: fit.rejected,
        stale_skips: fit.stale_skips,
        extrapolations_kept: fit.extrapolations.0,
        extrapolations_refused: fit.extrapolations.1,
        set_size: fit.set_size,
        candidates: fit.candidates,
        rho: raw.rho,
        pipeline_depth: raw.pipeline_depth,
        seed: raw.seed,
        rows: data.x.rows(),
        features: data.x.cols(),
        stored_values: data.x.nnz(),
        loading_seconds,
        data: path.display().to_string(),
    }
}

/// Refuses an output path that cannot be a folder, before any work.
pub fn check_out_dir(out: &Path) -> Result<(), Failure> {
    if out.exists() && !out.is_dir() {
        return Err(Failure::input(format!("{}: --out must be a folder, and this is a file", out.display())));
    }
    Ok(())
}

/// Writes `summary.json`, `trace.csv` and `coefficients.csv`, each atomically.
pub fn write_outputs(out: &Path, fit: &LassoFit, summary: &Summary) -> Result<(), Failure> {
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
            writeln!(w, "lambda,objective,duality_gap,nnz,seconds,updates,status")?;
            for p in &fit.path {
                let (lambda, objective, gap, nnz, seconds) = (p.lambda, p.objective, p.duality_gap, p.nnz, p.seconds);
                writeln!(w, "{lambda},{objective},{gap},{nnz},{seconds},{},{}", p.updates, p.status.name())?;
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
pub fn train(data: &Dataset, settings: &Settings, label: &str, quiet: bool) -> Result<LassoFit, Failure> {
    let launcher = Embedded::new(settings.workers).map_err(Failure::input)?;
    let progress = Progress::new(label, quiet);
    let mut observer = |t: &TracePoint| {
        progress.message(format!(
            "round {}  updates {}  objective {:.6e}  gap {:.2e}  nnz {}",
            t.round, t.updates, t.objective, t.duality_gap, t.nnz
        ));
    };
    let fit = strads_lasso::fit(data, &settings.params, &launcher, &mut observer);
    progress.finish();
    fit?.ok_or_else(|| Failure::Run(anyhow::anyhow!("this process does not lead the run")))
}

/// `strads lasso`.
pub fn run(args: &LassoArgs) -> Result<LassoFit, Failure> {
    let settings = Settings::from_args(args)?;
    check_out_dir(&args.out)?;
    let started = Instant::now();
    let data = strads_data::load(&args.data.data, &settings.load)?;
    let loading_seconds = started.elapsed().as_secs_f64();
    let fit = train(&data, &settings, "lasso", args.quiet)?;
    let summary = summary(&fit, &settings.params, &data, &args.data.data, loading_seconds);
    write_outputs(&args.out, &fit, &summary)?;
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
    }
    Ok(fit)
}
