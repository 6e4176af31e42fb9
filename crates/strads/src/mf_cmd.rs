//! `strads mf` (train), `strads mf predict`, `strads mf recommend` and `strads gen mf`: rating files in,
//! factors with their original ids, summary and trace out.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use strads_data::{DataError, write_atomic, write_string_atomic};
use strads_mf::ratings::{Duplicates, Ids, RatingsFormat, ReadOptions, read_pairs, split};
use strads_mf::{
    Algorithm, Bias, MfFit, MfParams, Model, RatingSource, TestSet, TracePoint, Trained, rated_rows, write_factor_csv,
};

use crate::checkpoint::{self, CheckpointArgs};
use crate::cli::{
    AlgorithmArg, BiasArg, DuplicatesArg, GenMfArgs, MfPredictArgs, MfRecommendArgs, MfTrainArgs, RatingsFormatArg,
    ShapeArg,
};
use crate::failure::{Failure, check_memory};
use crate::lasso_cmd::check_out_dir;
use crate::lda_cmd::to_json;
use crate::progress::Progress;
use crate::runtime;

impl From<strads_mf::MfError> for Failure {
    fn from(error: strads_mf::MfError) -> Self {
        match error {
            strads_mf::MfError::Engine(engine) => Failure::engine(engine),
            _ => Failure::Input(error.into()),
        }
    }
}

/// What `summary.json` holds.
#[derive(Debug, Serialize)]
struct Summary {
    train_rmse: f64,
    test_rmse: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    validation_rmse: Option<f64>,
    objective: f64,
    rank: usize,
    lambda: f64,
    lambda_from_data: bool,
    init_scale: f64,
    init_scale_from_data: bool,
    weighted_lambda: bool,
    lambda_exponent: f64,
    bias: &'static str,
    iterations: u64,
    best_iteration: u64,
    stopped_early: bool,
    converged: bool,
    tol: f64,
    validation_ratings: usize,
    patience: usize,
    inner_iterations: usize,
    /// ALS: conjugate-gradient steps per row (0: exact solves).
    #[serde(skip_serializing_if = "Option::is_none")]
    cg_steps: Option<usize>,
    seconds: f64,
    loading_seconds: f64,
    workers: usize,
    #[serde(flatten)]
    scale: runtime::Scale,
    algorithm: &'static str,
    seed: u64,
    users: usize,
    items: usize,
    train_ratings: usize,
    test_ratings: usize,
    test_cold_pairs: usize,
    test_cold_users: usize,
    test_cold_items: usize,
    data: String,
    test: Option<String>,
    /// Implicit feedback: its settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    implicit: Option<strads_mf::Implicit>,
    /// Implicit feedback with a test set: ranking metrics of the test pairs, each user's training
    /// items left out of its ranking.
    #[serde(skip_serializing_if = "Option::is_none")]
    ranking: Option<strads_mf::ranking::RankingMetrics>,
}

fn params(args: &MfTrainArgs) -> Result<strads_mf::CheckedParams, Failure> {
    let defaults = if args.implicit { MfParams::implicit(args.alpha) } else { MfParams::default() };
    let algorithm = match args.algorithm {
        Some(AlgorithmArg::Ccdpp) => Algorithm::Ccdpp,
        Some(AlgorithmArg::Ccd) => Algorithm::Ccd,
        Some(AlgorithmArg::Als) => Algorithm::Als,
        None => defaults.algorithm,
    };
    let params = MfParams {
        algorithm,
        rank: args.rank,
        lambda: args.lambda.or(defaults.lambda),
        weighted_lambda: args.weighted_lambda.unwrap_or(defaults.weighted_lambda),
        lambda_exponent: args.lambda_exponent.unwrap_or(defaults.lambda_exponent),
        bias: match args.bias {
            Some(BiasArg::None) => Bias::None,
            Some(BiasArg::Global) => Bias::Global,
            Some(BiasArg::Full) => Bias::Full,
            None => defaults.bias,
        },
        iterations: args.iterations.unwrap_or(defaults.iterations),
        inner_iterations: args.inner_iterations.unwrap_or(if algorithm == Algorithm::Ccdpp { 3 } else { 1 }),
        seed: args.seed,
        init_scale: args.init_scale.or(defaults.init_scale),
        patience: args.patience,
        tol: args.tol,
        eval_every: args.eval_every,
        trace_half_steps: false,
        implicit: defaults.implicit,
        cg_steps: args.cg_steps,
    };
    if args.implicit && args.top_k == 0 {
        return Err(Failure::input("--top-k must be at least 1"));
    }
    if !(0.0..1.0).contains(&args.validation) {
        return Err(Failure::input(format!("--validation must be in [0, 1), got {}", args.validation)));
    }
    params.check(args.workers).map_err(Failure::input)
}

/// The validation fraction and seed of a run: only without a test set.
fn validation(args: &MfTrainArgs) -> Option<(f64, u64)> {
    (args.test.is_none() && args.test_fraction.is_none() && args.validation > 0.0 && !args.implicit)
        .then_some((args.validation, args.seed))
}

fn read_options(args: &MfTrainArgs) -> ReadOptions {
    ReadOptions {
        format: match args.format {
            RatingsFormatArg::Auto => RatingsFormat::Auto,
            RatingsFormatArg::Mm => RatingsFormat::MatrixMarket,
            RatingsFormatArg::Delimited => RatingsFormat::Delimited,
        },
        duplicates: match args.duplicates {
            DuplicatesArg::Error => Duplicates::Error,
            DuplicatesArg::Last => Duplicates::Last,
            DuplicatesArg::Mean => Duplicates::Mean,
        },
        nonnegative: args.implicit,
    }
}

/// The ratings of a training run -- in memory, or (in an MPI job, for a delimited file without
/// `--test-fraction`) this rank's share -- and their ids (on rank 0 only in an MPI job).
fn load(args: &MfTrainArgs, options: &ReadOptions) -> Result<(Box<dyn RatingSource>, Ids), Failure> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = runtime::job()
        && args.test_fraction.is_none()
        && !strads_mf::ratings::is_matrix_market(&args.data, options.format)?
    {
        let (shares, ids) = strads_mf::load_ratings_share(
            &*mpi,
            &args.data,
            args.test.as_deref(),
            options,
            args.workers,
            validation(args),
        )?;
        runtime::note_input_read(shares.bytes_read);
        return Ok((Box::new(shares), ids));
    }
    let test = match (&args.test, args.test_fraction) {
        (Some(path), _) => TestSet::File(path),
        (None, Some(fraction)) => TestSet::Fraction(fraction, args.seed),
        (None, None) => TestSet::None,
    };
    let (ratings, ids) = strads_mf::load_ratings(&args.data, test, options, validation(args))?;
    runtime::note_input_file(&args.data);
    Ok((Box::new(ratings), ids))
}

/// `strads mf`.
pub fn train(args: &MfTrainArgs, checkpoint_args: &CheckpointArgs) -> Result<(), Failure> {
    let checked = params(args)?;
    check_out_dir(&args.out)?;
    let started = Instant::now();
    let options = read_options(args);
    let loading = Progress::phase("mf", args.quiet, &format!("reading {}", args.data.display()));
    let (ratings, ids) = load(args, &options)?;
    let totals = ratings.totals();
    loading.finish();
    let loading_seconds = started.elapsed().as_secs_f64();
    if let Some(limit) = crate::lasso_cmd::parse_memory(&args.max_memory)? {
        let (users, items) = (totals.users, totals.items);
        let needed = strads_mf::memory_estimate(
            totals.ratings,
            totals.test_ratings,
            users,
            items,
            checked.stride(),
            args.workers,
            checked.algorithm,
        );
        let what = format!("{} ratings of {users} users and {items} items at rank {}", totals.ratings, checked.rank);
        check_memory(needed, limit, &what)?;
    }
    let launcher = runtime::launcher(args.workers)?;
    let progress = Progress::counted("mf", args.quiet, checked.iterations as u64);
    let mut observe = |p: &TracePoint| {
        let mut test = p.test_rmse.map(|x| format!(", test RMSE {x:.4}")).unwrap_or_default();
        if let Some(x) = p.validation_rmse {
            test += &format!(", validation RMSE {x:.4}");
        }
        progress.update(
            p.iteration,
            format!("objective {:.6e}, train RMSE {:.4}{test}", p.objective, p.train_rmse),
            &[("objective", p.objective), ("train_rmse", p.train_rmse), ("test_rmse", p.test_rmse.unwrap_or(f64::NAN))],
        );
    };
    let mut checkpoints = checkpoint::open(checkpoint_args, "mf", || {
        let mut extra = vec![
            ("data", args.data.display().to_string()),
            ("data_contents", checkpoint::file_identity(&args.data)),
            ("training_ratings", totals.ratings.to_string()),
            ("test_ratings", totals.test_ratings.to_string()),
            ("users", totals.users.to_string()),
            ("items", totals.items.to_string()),
        ];
        if let Some(path) = &args.test {
            extra.push(("test", path.display().to_string()));
            extra.push(("test_contents", checkpoint::file_identity(path)));
        }
        checkpoint::fingerprint(&checked, &[], &extra)
    })?;
    let outcome = strads_mf::fit_source(&*ratings, &checked, &launcher, &mut observe, &mut checkpoints);
    progress.finish();
    let scale = runtime::scale();
    let pairs = runtime::gather_on_leader(ratings.pairs()).map_err(Failure::engine)?;
    // Implicit feedback is scored on rank 0 over every rank's test pairs.
    let ranked = checked.implicit.is_some() && totals.test_ratings > 0;
    let local_test = if ranked { ratings.test_by_users(0..totals.users) } else { Vec::new() };
    let test_pairs =
        runtime::gather_on_leader(local_test.iter().map(|r| (r.user, r.item)).collect()).map_err(Failure::engine)?;
    let Some(fit) = outcome? else { return Ok(()) };
    let last = *fit.returned_point().ok_or_else(|| Failure::Run(anyhow::anyhow!("the run made no evaluation")))?;
    let model = Model::from_fit(&fit, &ids, checked.bias);
    let ranking = ranked.then(|| {
        let (w, h) = (&fit.factors.w, &fit.factors.h);
        strads_mf::ranking::ranking_metrics(w, h, fit.stride, fit.rank, &pairs, &test_pairs, args.top_k)
    });
    let summary = Summary {
        train_rmse: last.train_rmse,
        test_rmse: last.test_rmse,
        validation_rmse: last.validation_rmse,
        objective: last.objective,
        rank: checked.rank,
        lambda: fit.lambda,
        lambda_from_data: checked.lambda.is_none(),
        init_scale: fit.init_scale,
        init_scale_from_data: checked.init_scale.is_none(),
        weighted_lambda: checked.weighted_lambda,
        lambda_exponent: checked.lambda_exponent,
        bias: checked.bias.name(),
        iterations: fit.iterations,
        best_iteration: last.iteration,
        stopped_early: fit.stopped_early,
        converged: fit.converged,
        tol: checked.tol,
        validation_ratings: totals.validation_ratings,
        patience: checked.patience,
        inner_iterations: checked.inner_iterations,
        cg_steps: (checked.algorithm == Algorithm::Als).then_some(fit.cg_steps),
        seconds: fit.seconds,
        loading_seconds,
        workers: checked.workers,
        scale,
        algorithm: checked.algorithm.name(),
        seed: checked.seed,
        users: model.ids.users.len(),
        items: model.ids.items.len(),
        train_ratings: totals.ratings,
        test_ratings: totals.test_ratings,
        test_cold_pairs: fit.test_cold_pairs,
        test_cold_users: fit.user_counts.iter().filter(|&&n| n == 0).count(),
        test_cold_items: fit.item_counts.iter().filter(|&&n| n == 0).count(),
        data: args.data.display().to_string(),
        test: args.test.as_ref().map(|p| p.display().to_string()),
        implicit: checked.implicit,
        ranking,
    };
    let trained = Trained {
        algorithm: checked.algorithm,
        lambda: fit.lambda,
        weighted_lambda: checked.weighted_lambda,
        lambda_exponent: checked.lambda_exponent,
    };
    write_outputs(&args.out, &model, &fit, &pairs, &summary, trained)?;
    if !args.quiet {
        let mut test = last.test_rmse.map(|x| format!(", test RMSE {x:.4}")).unwrap_or_default();
        if let Some(x) = last.validation_rmse {
            let stop = if fit.stopped_early { ", stopped early" } else { "" };
            test += &format!(", validation RMSE {x:.4} at iteration {}{stop}", last.iteration);
        }
        if fit.converged {
            test += &format!(", converged (objective down by less than {:e} in an iteration)", checked.tol);
        }
        if let Some(m) = ranking {
            test += &format!(
                ", test precision@{k} {:.4}, MAP@{k} {:.4}, NDCG@{k} {:.4} over {} users",
                m.precision,
                m.map,
                m.ndcg,
                m.users,
                k = m.k
            );
        }
        println!(
            "mf: {} rank {}, {} iterations in {:.2} s, train RMSE {:.4}{test} -> {}",
            checked.algorithm.name(),
            checked.rank,
            fit.iterations,
            fit.seconds,
            last.train_rmse,
            args.out.display()
        );
    }
    Ok(())
}

/// Writes the model folder ([`Model::save`]), `trace.csv` and `summary.json`.
fn write_outputs(
    out: &Path,
    model: &Model,
    fit: &MfFit,
    pairs: &[(u32, u32)],
    summary: &Summary,
    trained: Trained,
) -> Result<(), Failure> {
    let run = |e: DataError| Failure::Run(e.into());
    model.save(out, trained, &rated_rows(fit, pairs)).map_err(|e| Failure::Run(e.into()))?;
    write_atomic(&out.join("trace.csv"), |w| {
        writeln!(w, "iteration,seconds,objective,train_rmse,test_rmse,validation_rmse")?;
        for p in &fit.trace {
            let test = p.test_rmse.map_or(String::new(), |x| x.to_string());
            let validation = p.validation_rmse.map_or(String::new(), |x| x.to_string());
            writeln!(w, "{},{},{},{},{test},{validation}", p.iteration, p.seconds, p.objective, p.train_rmse)?;
        }
        Ok(())
    })
    .map_err(run)?;
    write_string_atomic(&out.join("summary.json"), &to_json(summary)?).map_err(run)?;
    Ok(())
}

/// Reads a model folder written by `strads mf`.
fn load_model(dir: &Path) -> Result<Model, Failure> {
    Model::load(dir).map_err(|e| Failure::Input(e.into()))
}

/// `strads mf predict`.
pub fn predict(args: &MfPredictArgs) -> Result<(), Failure> {
    let model = load_model(&args.model)?;
    let pairs = read_pairs(&args.data)?;
    let (mut squared, mut rated, mut cold) = (0.0, 0usize, 0usize);
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["user", "item", "prediction"]).map_err(|e| Failure::Run(e.into()))?;
    for pair in &pairs {
        let p = model.predict(&pair.user, &pair.item);
        cold += usize::from(p.cold);
        if let Some(r) = pair.rating {
            squared += (r - p.value).powi(2);
            rated += 1;
        }
        writer
            .write_record([pair.user.as_str(), pair.item.as_str(), &p.value.to_string()])
            .map_err(|e| Failure::Run(e.into()))?;
    }
    let body = writer.into_inner().map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
    let text = String::from_utf8_lossy(&body);
    match &args.out {
        Some(path) => write_string_atomic(path, &text).map_err(|e| Failure::Run(e.into()))?,
        None => print!("{text}"),
    }
    let rmse = (rated > 0).then(|| format!(", RMSE {:.4} over the {rated} rated", (squared / rated as f64).sqrt()));
    eprintln!(
        "mf predict: {} pairs, {cold} with an unknown user or item (predicted by {}){}",
        pairs.len(),
        if model.bias == Bias::None { "the mean training rating" } else { "the bias model" },
        rmse.unwrap_or_default()
    );
    Ok(())
}

/// `strads mf recommend`.
pub fn recommend(args: &MfRecommendArgs) -> Result<(), Failure> {
    let model = load_model(&args.model)?;
    let Some(row) = model.ids.find_user(&args.user) else {
        return Err(Failure::input(format!(
            "user '{}' is not in the model {} (it had no training rating)",
            args.user,
            args.model.display()
        )));
    };
    let exclude = if args.exclude_rated {
        Model::load_rated(&args.model, row, &args.user).map_err(|e| Failure::Input(e.into()))?
    } else {
        Vec::new()
    };
    let top = model.recommend(&args.user, args.top, &exclude).unwrap_or_default();
    let mut writer = csv::Writer::from_writer(std::io::stdout());
    let io = |e: csv::Error| Failure::Run(e.into());
    writer.write_record(["rank", "item", "score"]).map_err(io)?;
    for (n, (i, score)) in top.iter().enumerate() {
        writer.write_record([(n + 1).to_string(), model.ids.items[*i].clone(), score.to_string()]).map_err(io)?;
    }
    writer.flush().map_err(|e| Failure::Run(e.into()))?;
    Ok(())
}

/// `strads gen mf`.
pub fn generate(args: &GenMfArgs) -> Result<(), Failure> {
    check_out_dir(&args.out)?;
    if args.users == 0 || args.items == 0 || args.rank == 0 {
        return Err(Failure::input("users, items and rank must be at least 1"));
    }
    if !(args.density > 0.0 && args.density <= 1.0 && args.noise.is_finite() && args.noise >= 0.0) {
        return Err(Failure::input("the density must be in (0, 1] and the noise a number >= 0"));
    }
    if args.shape == ShapeArg::Netflix {
        return generate_netflix(args);
    }
    let spec = strads_mf::generate::GeneratorSpec {
        users: args.users,
        items: args.items,
        rank: args.rank,
        density: args.density,
        noise: args.noise,
        seed: args.seed,
    };
    let g = strads_mf::generate::generate(&spec);
    let (train, test) = split(&g.ratings, 0.2, args.seed).map_err(Failure::input)?;
    let run = |e: DataError| Failure::Run(e.into());
    std::fs::create_dir_all(&args.out).map_err(|e| Failure::Run(anyhow::anyhow!("{}: {e}", args.out.display())))?;
    write_ratings(&args.out, &[("ratings.tsv", &g.ratings), ("train.tsv", &train), ("test.tsv", &test)])?;
    let ids = |n: usize| (1..=n).map(|x| x.to_string()).collect::<Vec<_>>();
    write_factor_csv(&args.out.join("true_user_factors.csv"), "user", &ids(args.users), &g.w, None, args.rank)
        .map_err(|e| Failure::Run(e.into()))?;
    write_factor_csv(&args.out.join("true_item_factors.csv"), "item", &ids(args.items), &g.h, None, args.rank)
        .map_err(|e| Failure::Run(e.into()))?;
    let truth = serde_json::json!({
        "users": args.users, "items": args.items, "rank": args.rank, "density": args.density,
        "noise": args.noise, "seed": args.seed, "ratings": g.ratings.len(),
        "train_ratings": train.len(), "test_ratings": test.len(),
    });
    write_string_atomic(&args.out.join("truth.json"), &to_json(&truth)?).map_err(run)?;
    println!(
        "gen mf: {} ratings of {} users x {} items (rank {}, noise {}) -> {}",
        g.ratings.len(),
        args.users,
        args.items,
        args.rank,
        args.noise,
        args.out.display()
    );
    Ok(())
}

/// Writes rating files as `user item rating` lines (1-based ids), atomically.
fn write_ratings(out: &Path, sets: &[(&str, &[strads_mf::ratings::Rating])]) -> Result<(), Failure> {
    for (name, set) in sets {
        write_atomic(&out.join(name), |w| {
            writeln!(w, "user\titem\trating")?;
            for r in set.iter() {
                writeln!(w, "{}\t{}\t{}", r.user + 1, r.item + 1, r.value)?;
            }
            Ok(())
        })
        .map_err(|e| Failure::Run(e.into()))?;
    }
    Ok(())
}

/// `strads gen mf --shape netflix`: Netflix Prize's shape at `--ratings`, with progress.
fn generate_netflix(args: &GenMfArgs) -> Result<(), Failure> {
    let (users, items, _) = strads_mf::generate::NETFLIX;
    if args.ratings == 0 || !(args.noise.is_finite() && args.noise >= 0.0) {
        return Err(Failure::input("--ratings must be at least 1 and the noise a number >= 0"));
    }
    let spec = strads_mf::generate::ShapedSpec {
        users,
        items,
        ratings: args.ratings,
        rank: args.rank,
        noise: args.noise,
        seed: args.seed,
    };
    let progress = Progress::counted("gen mf", false, users as u64);
    let ratings = strads_mf::generate::generate_shaped(&spec, &mut |done| {
        progress.update(done as u64, format!("{done} of {users} users"), &[]);
    });
    progress.finish();
    let (train, test) = split(&ratings, 0.2, args.seed).map_err(Failure::input)?;
    std::fs::create_dir_all(&args.out).map_err(|e| Failure::Run(anyhow::anyhow!("{}: {e}", args.out.display())))?;
    let writing = Progress::phase("gen mf", false, &format!("writing {}", args.out.display()));
    write_ratings(&args.out, &[("train.tsv", &train), ("test.tsv", &test)])?;
    writing.finish();
    let truth = serde_json::json!({
        "shape": "netflix", "users": users, "items": items, "rank": args.rank, "noise": args.noise,
        "seed": args.seed, "ratings": ratings.len(), "train_ratings": train.len(), "test_ratings": test.len(),
    });
    write_string_atomic(&args.out.join("truth.json"), &to_json(&truth)?).map_err(|e| Failure::Run(e.into()))?;
    println!(
        "gen mf: {} ratings of {users} users x {items} items, Netflix-shaped (rank {}, noise {}) -> {}",
        ratings.len(),
        args.rank,
        args.noise,
        args.out.display()
    );
    Ok(())
}
