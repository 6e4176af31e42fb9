//! The Python extension module `strads._strads`: the fits that the estimators of `python/strads`
//! call (linear models, matrix factorization, topic models), on arrays those estimators have already validated
//! (scikit-learn's checks run in Python).
//!
//! Each function copies its arrays into a [`Dataset`], releases the interpreter while the workers
//! run, and returns plain numbers and numpy arrays; errors of the parameters or the data become
//! `ValueError`, an engine failure `strads.EngineError` (a `RuntimeError`). A fit calls its settings' `callback` with each
//! progress point, and Ctrl-C (or a callback that raises) ends it with that exception.

use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use strads_corpus::Corpus;

use strads_data::{Columns, Dataset, DenseColumns, Features, RowSource, SparseColumns, SparseRows, WeightedDataset};
use strads_lasso::{Lambda, LassoError, LassoParams, Loss, SchedulerKind, Status};

mod watch;
use watch::watched;

pyo3::create_exception!(
    _strads,
    EngineError,
    PyRuntimeError,
    "A failure of strads' engine rather than of the data or the settings: a worker that could not start or stopped, a broken count invariant. The message is the Rust error's."
);

/// Maps the library's error to the Python exception a scikit-learn user expects.
fn to_py(error: LassoError) -> PyErr {
    match error {
        LassoError::Engine(_) => EngineError::new_err(error.to_string()),
        LassoError::File(strads_data::DataError::Io { .. }) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The settings a linear estimator passes, as a dict with exactly these keys (scikit-learn's
/// names where they exist).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct LinearSettings {
    /// "squared" or "logistic".
    loss: String,
    /// The penalty weight (strads' lambda).
    alpha: f64,
    l1_ratio: f64,
    fit_intercept: bool,
    /// Every coefficient `>= 0`.
    positive: bool,
    /// Start from these coefficients and `warm_intercept` (scikit-learn's `warm_start`).
    warm_coef: Option<Vec<f64>>,
    warm_intercept: f64,
    /// The relative duality gap to stop at.
    tol: f64,
    /// Most rounds, or None.
    max_iter: Option<u64>,
    n_workers: usize,
    /// A scheduler's name.
    scheduler: String,
    seed: u64,
    /// A regularization path of this many weights, geometric from `path_top` (or the data's
    /// `lambda_max`) down to `alpha`, each from the previous solution; or None.
    path: Option<usize>,
    path_top: Option<f64>,
    /// Called with a dict of each gap check.
    callback: Option<Py<PyAny>>,
}

fn scheduler_named(name: &str) -> PyResult<SchedulerKind> {
    let all = [
        SchedulerKind::Block,
        SchedulerKind::Dynamic,
        SchedulerKind::Shotgun,
        SchedulerKind::Cyclic,
        SchedulerKind::Sequential,
    ];
    all.into_iter().find(|s| s.name() == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|s| s.name()).collect();
        PyValueError::new_err(format!("scheduler must be one of {}, got {name:?}", names.join(", ")))
    })
}

fn loss_named(name: &str) -> PyResult<Loss> {
    match name {
        "squared" => Ok(Loss::Squared),
        "logistic" => Ok(Loss::Logistic),
        _ => Err(PyValueError::new_err(format!("loss must be squared or logistic, got {name:?}"))),
    }
}

/// Fits on `data` with the embedded runtime, the interpreter released. The dict holds the final
/// model (`coef`, `intercept`, `n_iter`, `dual_gap`, ...) and, for a path, each weight's
/// `path_alphas`, `path_coefs` (weights x features), `path_intercepts` and `path_gaps`.
fn fit_linear(
    py: Python<'_>,
    data: Dataset,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    settings: LinearSettings,
) -> PyResult<Py<PyDict>> {
    let weighted;
    let data: &dyn RowSource = match sample_weight {
        None => &data,
        Some(w) => {
            weighted =
                WeightedDataset::new(data, &w.as_array().to_vec()).map_err(|e| PyValueError::new_err(e.to_string()))?;
            &weighted
        }
    };
    let mut params = LassoParams::new(Lambda::Value(settings.alpha));
    params.loss = loss_named(&settings.loss)?;
    params.l1_ratio = settings.l1_ratio;
    params.intercept = settings.fit_intercept;
    params.positive = settings.positive;
    params.warm_start = settings
        .warm_coef
        .map(|coefficients| strads_lasso::WarmStart { coefficients, intercept: settings.warm_intercept });
    params.tol = settings.tol;
    params.max_rounds = settings.max_iter;
    params.scheduler = scheduler_named(&settings.scheduler)?;
    params.seed = settings.seed;
    params.path = settings.path;
    params.path_top = settings.path_top;
    let checked = params.check().map_err(to_py)?;
    let (workers, features) = (settings.n_workers, data.features());
    let model = watched(
        py,
        settings.callback,
        workers,
        |launcher, watch| strads_lasso::fit_model(data, &checked, launcher, &mut |p| watch.report(p)),
        to_py,
    )?;
    let out = PyDict::new(py);
    out.set_item("coef", model.beta.clone().into_pyarray(py))?;
    out.set_item("intercept", model.intercept)?;
    out.set_item("n_iter", model.rounds)?;
    out.set_item("dual_gap", model.duality_gap)?;
    out.set_item("objective", model.objective)?;
    out.set_item("lambda_max", model.lambda_max)?;
    out.set_item("converged", model.status == Status::Converged)?;
    out.set_item("status", format!("{:?}", model.status).to_lowercase())?;
    out.set_item("updates", model.updates)?;
    out.set_item("seconds", model.seconds)?;
    if !model.path.is_empty() {
        let mut coefs = vec![0.0; model.path.len() * features];
        for (row, point) in coefs.chunks_exact_mut(features).zip(&model.path) {
            for &(j, value) in &point.coefficients {
                row[j as usize] = value;
            }
        }
        let coefs = numpy::ndarray::Array2::from_shape_vec((model.path.len(), features), coefs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let column = |f: fn(&strads_lasso::PathPoint) -> f64| -> Vec<f64> { model.path.iter().map(f).collect() };
        out.set_item("path_alphas", column(|p| p.lambda).into_pyarray(py))?;
        out.set_item("path_coefs", coefs.into_pyarray(py))?;
        out.set_item("path_intercepts", column(|p| p.intercept).into_pyarray(py))?;
        out.set_item("path_gaps", column(|p| p.duality_gap).into_pyarray(py))?;
    }
    Ok(out.unbind())
}

/// The values of a one-dimensional numpy array of float64 or float32, as float64.
fn floats(values: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    if let Ok(array) = values.extract::<PyReadonlyArray1<'_, f64>>() {
        return Ok(array.as_array().to_vec());
    }
    if let Ok(array) = values.extract::<PyReadonlyArray1<'_, f32>>() {
        return Ok(array.as_array().iter().map(|&v| f64::from(v)).collect());
    }
    Err(PyValueError::new_err("values must be a one-dimensional array of float64 or float32"))
}

/// The values of `x` column after column. A row-major (C-ordered) array is copied in tiles of
/// 32 x 32, so that both sides stay in cache: reading it in column order touches a new cache line
/// for every value (a 2000 x 500 array took 2.5 ms so, a quarter of the whole fit).
fn column_major<T: Copy>(x: numpy::ndarray::ArrayView2<'_, T>, convert: impl Fn(T) -> f64) -> Vec<f64> {
    const TILE: usize = 32;
    let (rows, cols) = x.dim();
    if let Some(values) = x.t().as_slice() {
        return values.iter().map(|&v| convert(v)).collect();
    }
    let Some(values) = x.as_slice() else {
        return x.t().iter().map(|&v| convert(v)).collect();
    };
    let mut out = vec![0.0; rows * cols];
    for i0 in (0..rows).step_by(TILE) {
        for j0 in (0..cols).step_by(TILE) {
            for i in i0..(i0 + TILE).min(rows) {
                let row = &values[i * cols..(i + 1) * cols];
                for j in j0..(j0 + TILE).min(cols) {
                    out[j * rows + i] = convert(row[j]);
                }
            }
        }
    }
    out
}

/// Fits a Lasso, elastic net or L1 logistic regression on a dense matrix (float64 or float32, in
/// any memory layout), read column by column into strads' columns: no transpose follows.
#[pyfunction]
#[pyo3(signature = (x, y, settings, sample_weight=None))]
fn fit_linear_dense(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: PyReadonlyArray1<'_, f64>,
    settings: LinearSettings,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Py<PyDict>> {
    let (rows, cols, data) = if let Ok(x) = x.extract::<PyReadonlyArray2<'_, f64>>() {
        let x = x.as_array();
        (x.nrows(), x.ncols(), column_major(x, |v| v))
    } else if let Ok(x) = x.extract::<PyReadonlyArray2<'_, f32>>() {
        let x = x.as_array();
        (x.nrows(), x.ncols(), column_major(x, f64::from))
    } else {
        return Err(PyValueError::new_err("X must be a two-dimensional array of float64 or float32"));
    };
    let columns = Columns::Dense(DenseColumns { rows, cols, data });
    let data = Dataset { x: Features::Columns(Arc::new(columns)), y: y.as_array().to_vec(), feature_names: None };
    fit_linear(py, data, sample_weight, settings)
}

/// Fits on a compressed sparse matrix (`indptr`, sorted `indices` without duplicates, `values` of
/// float64 or float32): rows, or with `by_columns` columns, which become strads' columns as they
/// are, without a transpose.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (indptr, indices, values, shape, by_columns, y, settings, sample_weight=None))]
fn fit_linear_sparse(
    py: Python<'_>,
    indptr: PyReadonlyArray1<'_, u64>,
    indices: PyReadonlyArray1<'_, u32>,
    values: &Bound<'_, PyAny>,
    shape: (usize, usize),
    by_columns: bool,
    y: PyReadonlyArray1<'_, f64>,
    settings: LinearSettings,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Py<PyDict>> {
    let indptr: Vec<usize> = indptr.as_array().iter().map(|&p| p as usize).collect();
    let (indices, values) = (indices.as_array().to_vec(), floats(values)?);
    let x = if by_columns {
        let columns = SparseColumns::try_new(shape.0, shape.1, indptr, indices, values)
            .map_err(|e| PyValueError::new_err(format!("invalid compressed sparse columns: {e}")))?;
        Features::Columns(Arc::new(Columns::Sparse(columns)))
    } else {
        let rows = SparseRows::try_new(shape, indptr, indices, values)
            .map_err(|(_, _, _, e)| PyValueError::new_err(format!("invalid compressed sparse rows: {e}")))?;
        Features::Sparse(rows)
    };
    let data = Dataset { x, y: y.as_array().to_vec(), feature_names: None };
    fit_linear(py, data, sample_weight, settings)
}

/// A factorization's settings, as a dict with exactly these keys; `None` takes strads' default
/// for explicit ratings, or for implicit feedback when `implicit_alpha` is given.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct MfSettings {
    rank: usize,
    /// "ccdpp", "ccd" or "als".
    algorithm: Option<String>,
    lambda: Option<f64>,
    weighted_lambda: Option<bool>,
    lambda_exponent: Option<f64>,
    /// "none", "global" or "full".
    bias: Option<String>,
    iterations: Option<usize>,
    /// Implicit feedback with this confidence slope.
    implicit_alpha: Option<f64>,
    init_scale: Option<f64>,
    /// Explicit ratings: the fraction held out for early stopping (0: none).
    validation: Option<f64>,
    patience: Option<usize>,
    tol: Option<f64>,
    cg_steps: Option<usize>,
    n_workers: usize,
    seed: u64,
    /// Called with a dict of each evaluation.
    callback: Option<Py<PyAny>>,
}

fn mf_error(error: strads_mf::MfError) -> PyErr {
    match error {
        strads_mf::MfError::Engine(_) => EngineError::new_err(error.to_string()),
        strads_mf::MfError::File(strads_data::DataError::Io { .. }) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The library's parameters for `settings`, and the validation fraction.
fn mf_params(settings: &MfSettings) -> PyResult<(strads_mf::MfParams, f64)> {
    use strads_mf::{Algorithm, Bias, MfParams};
    let mut params = match settings.implicit_alpha {
        Some(alpha) => MfParams::implicit(alpha),
        None => MfParams::default(),
    };
    params.rank = settings.rank;
    params.seed = settings.seed;
    if let Some(name) = &settings.algorithm {
        params.algorithm = match name.as_str() {
            "ccdpp" => Algorithm::Ccdpp,
            "ccd" => Algorithm::Ccd,
            "als" => Algorithm::Als,
            _ => return Err(PyValueError::new_err(format!("algorithm must be ccdpp, ccd or als, got {name:?}"))),
        };
    }
    if let Some(name) = &settings.bias {
        params.bias = match name.as_str() {
            "none" => Bias::None,
            "global" => Bias::Global,
            "full" => Bias::Full,
            _ => return Err(PyValueError::new_err(format!("bias must be none, global or full, got {name:?}"))),
        };
    }
    if settings.lambda.is_some() {
        params.lambda = settings.lambda;
    }
    if let Some(weighted) = settings.weighted_lambda {
        params.weighted_lambda = weighted;
    }
    if let Some(exponent) = settings.lambda_exponent {
        params.lambda_exponent = exponent;
    }
    if let Some(iterations) = settings.iterations {
        params.iterations = iterations;
    }
    if settings.init_scale.is_some() {
        params.init_scale = settings.init_scale;
    }
    if let Some(patience) = settings.patience {
        params.patience = patience;
    }
    if let Some(tol) = settings.tol {
        params.tol = tol;
    }
    if settings.cg_steps.is_some() {
        params.cg_steps = settings.cg_steps;
    }
    // As the command line: 5% held out for early stopping on explicit ratings, none for implicit feedback.
    let default_validation = if settings.implicit_alpha.is_some() { 0.0 } else { 0.05 };
    let validation = settings.validation.unwrap_or(default_validation);
    if !(0.0..1.0).contains(&validation) {
        return Err(PyValueError::new_err(format!("validation must be in [0, 1), got {validation}")));
    }
    Ok((params, validation))
}

/// Factorizes the ratings `(users[k], items[k], values[k])` of a `shape = (users, items)` matrix.
/// Returns the factors `w` (users x K) and `h` (items x K), the biases, `mu`, the training mean,
/// the ratings per user and item, and what the run did.
#[pyfunction]
fn fit_mf(
    py: Python<'_>,
    users: PyReadonlyArray1<'_, u32>,
    items: PyReadonlyArray1<'_, u32>,
    values: PyReadonlyArray1<'_, f64>,
    shape: (usize, usize),
    settings: MfSettings,
) -> PyResult<Py<PyDict>> {
    use strads_mf::ratings::{Rating, hold_out, validation_applies};
    let (params, validation) = mf_params(&settings)?;
    let checked = params.check(settings.n_workers).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let ratings: Vec<Rating> = users
        .as_array()
        .iter()
        .zip(items.as_array().iter())
        .zip(values.as_array().iter())
        .map(|((&user, &item), &value)| Rating { user, item, value })
        .collect();
    let (train, held) = if params.implicit.is_none() && validation_applies(ratings.len(), validation) {
        hold_out(ratings, validation, settings.seed)
    } else {
        (ratings, Vec::new())
    };
    let source = strads_mf::InMemory::new(train, Vec::new(), shape.0, shape.1)
        .and_then(|source| source.with_validation(held))
        .map_err(mf_error)?;
    let (workers, algorithm, bias) = (settings.n_workers, checked.algorithm.name(), checked.bias.name());
    let model = watched(
        py,
        settings.callback,
        workers,
        |launcher, watch| {
            strads_mf::fit_model(&source, &checked, launcher, &mut |p: &strads_mf::TracePoint| watch.report(p))
        },
        mf_error,
    )?;
    let (n_users, n_items, k) = (shape.0, shape.1, model.rank);
    // The first K entries of each stored row (biases follow them).
    let rows = |stored: &[f64], n: usize| -> PyResult<numpy::ndarray::Array2<f64>> {
        let values: Vec<f64> = stored.chunks(model.stride).take(n).flat_map(|row| row[..k].iter().copied()).collect();
        numpy::ndarray::Array2::from_shape_vec((n, k), values).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    };
    let out = PyDict::new(py);
    out.set_item("w", rows(&model.factors.w, n_users)?.into_pyarray(py))?;
    out.set_item("h", rows(&model.factors.h, n_items)?.into_pyarray(py))?;
    out.set_item("user_bias", (0..n_users).map(|u| model.user_bias(u)).collect::<Vec<_>>().into_pyarray(py))?;
    out.set_item("item_bias", (0..n_items).map(|i| model.item_bias(i)).collect::<Vec<_>>().into_pyarray(py))?;
    out.set_item("user_counts", model.user_counts.clone().into_pyarray(py))?;
    out.set_item("item_counts", model.item_counts.clone().into_pyarray(py))?;
    out.set_item("mu", model.mu)?;
    out.set_item("train_mean", model.train_mean)?;
    out.set_item("iterations", model.iterations)?;
    out.set_item("stopped_early", model.stopped_early)?;
    out.set_item("converged", model.converged)?;
    out.set_item("lambda", model.lambda)?;
    out.set_item("init_scale", model.init_scale)?;
    out.set_item("algorithm", algorithm)?;
    out.set_item("bias", bias)?;
    let point = model.returned_point();
    out.set_item("objective", point.map(|p| p.objective))?;
    out.set_item("train_rmse", point.map(|p| p.train_rmse))?;
    out.set_item("validation_rmse", point.and_then(|p| p.validation_rmse))?;
    out.set_item("seconds", model.seconds)?;
    Ok(out.unbind())
}

/// A topic model's settings, as a dict with exactly these keys (`None`: strads' default).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct LdaSettings {
    topics: usize,
    /// Document-topic prior (None: 50 / K).
    alpha: Option<f64>,
    /// Topic-word prior.
    beta: f64,
    iterations: u64,
    /// "sparse" or "alias" (None: chosen from the corpus and K).
    sampler: Option<String>,
    /// Re-estimate alpha every this many iterations (0: never; None: strads' default).
    optimize_alpha: Option<u64>,
    /// Log-likelihood every this many iterations (and at the last).
    eval_every: u64,
    n_workers: usize,
    seed: u64,
    /// Called with a dict of each evaluation.
    callback: Option<Py<PyAny>>,
}

fn lda_error(error: strads_lda::LdaError) -> PyErr {
    match error {
        strads_lda::LdaError::Engine(_) | strads_lda::LdaError::Invariant { .. } => {
            EngineError::new_err(error.to_string())
        }
        strads_lda::LdaError::File(strads_data::DataError::Io { .. }) => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The corpus of documents `tokens[offsets[d]..offsets[d + 1]]` over `vocabulary`.
fn corpus(
    offsets: &PyReadonlyArray1<'_, u64>,
    tokens: &PyReadonlyArray1<'_, u32>,
    vocabulary: Vec<String>,
) -> PyResult<Corpus> {
    let offsets: Vec<usize> = offsets.as_array().iter().map(|&o| o as usize).collect();
    let tokens = tokens.as_array().to_vec();
    if offsets.first() != Some(&0) || offsets.last() != Some(&tokens.len()) || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(PyValueError::new_err("document offsets must rise from 0 to the number of tokens"));
    }
    if let Some(&word) = tokens.iter().find(|&&w| w as usize >= vocabulary.len()) {
        return Err(PyValueError::new_err(format!("word id {word} is beyond the vocabulary of {}", vocabulary.len())));
    }
    let documents = offsets.len() - 1;
    Ok(Corpus { offsets, tokens, vocabulary, ids: (0..documents).collect(), skipped_empty: 0, dropped_unknown: 0 })
}

/// Trains LDA by collapsed Gibbs sampling on the documents `tokens[offsets[d]..offsets[d + 1]]`.
/// Returns the word-topic counts (`V x K`), the document-topic counts in compressed rows
/// (`doc_indptr`, `doc_topics`, `doc_counts`), the priors (alpha as re-estimated), and the
/// log-likelihood per token at each evaluation.
#[pyfunction]
fn fit_lda(
    py: Python<'_>,
    offsets: PyReadonlyArray1<'_, u64>,
    tokens: PyReadonlyArray1<'_, u32>,
    vocabulary: Vec<String>,
    settings: LdaSettings,
) -> PyResult<Py<PyDict>> {
    let corpus = corpus(&offsets, &tokens, vocabulary)?;
    let mut params = strads_lda::LdaParams {
        topics: settings.topics,
        alpha: settings.alpha,
        beta: settings.beta,
        iterations: settings.iterations,
        eval_every: settings.eval_every,
        seed: settings.seed,
        ..strads_lda::LdaParams::default()
    };
    if let Some(name) = &settings.sampler {
        params.sampler = Some(match name.as_str() {
            "sparse" => strads_lda::SamplerKind::Sparse,
            "alias" => strads_lda::SamplerKind::Alias,
            _ => return Err(PyValueError::new_err(format!("sampler must be sparse or alias, got {name:?}"))),
        });
    }
    if let Some(every) = settings.optimize_alpha {
        params.optimize_alpha = (every > 0).then_some(every);
    }
    let checked = params.check(settings.n_workers).map_err(lda_error)?;
    let workers = settings.n_workers;
    let model = watched(
        py,
        settings.callback,
        workers,
        |launcher, watch| strads_lda::fit_model(&corpus, None, &checked, launcher, &mut |p| watch.report(p)),
        lda_error,
    )?;
    let k = model.topics;
    let words = model.counts.word_topic.len() / k.max(1);
    let word_topic = numpy::ndarray::Array2::from_shape_vec((words, k), model.counts.word_topic.clone())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let doc_topic = &model.counts.doc_topic;
    let mut indptr = Vec::with_capacity(doc_topic.documents() + 1);
    let (mut topics, mut counts) = (Vec::new(), Vec::new());
    indptr.push(0u64);
    for d in 0..doc_topic.documents() {
        for &(topic, count) in doc_topic.row(d) {
            topics.push(topic);
            counts.push(count);
        }
        indptr.push(topics.len() as u64);
    }
    let out = PyDict::new(py);
    out.set_item("word_topic", word_topic.into_pyarray(py))?;
    out.set_item("doc_indptr", indptr.into_pyarray(py))?;
    out.set_item("doc_topics", topics.into_pyarray(py))?;
    out.set_item("doc_counts", counts.into_pyarray(py))?;
    out.set_item("alpha", model.alpha)?;
    out.set_item("beta", model.beta)?;
    out.set_item("sampler", model.sampler.name())?;
    out.set_item("iterations", model.iterations)?;
    out.set_item("seconds", model.seconds)?;
    let trace: Vec<(u64, f64)> = model.trace.iter().map(|p| (p.iteration, p.log_likelihood_per_token)).collect();
    out.set_item("trace", trace)?;
    Ok(out.unbind())
}

/// Topic mixes (`documents x K`) of new documents under word-topic counts `word_topic` (`V x K`),
/// by Gibbs sampling of their tokens with the topics held fixed.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn infer_lda(
    py: Python<'_>,
    word_topic: PyReadonlyArray2<'_, u32>,
    alpha: f64,
    beta: f64,
    offsets: PyReadonlyArray1<'_, u64>,
    tokens: PyReadonlyArray1<'_, u32>,
    iterations: usize,
    seed: u64,
) -> PyResult<Py<numpy::PyArray2<f64>>> {
    let counts = word_topic.as_array();
    let (words, topics) = counts.dim();
    if topics == 0 || !(alpha > 0.0 && beta > 0.0) {
        return Err(PyValueError::new_err("a topic model needs K >= 1 topics and priors > 0"));
    }
    let model = strads_lda::TopicModel { topics, alpha, beta, word_topic: counts.iter().copied().collect() };
    let corpus = corpus(&offsets, &tokens, vec![String::new(); words])?;
    let theta = py.detach(move || strads_lda::infer(&model, &corpus, iterations.max(1), seed));
    let rows = theta.len();
    let dense = numpy::ndarray::Array2::from_shape_vec((rows, topics), theta.into_iter().flatten().collect())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(dense.into_pyarray(py).unbind())
}

/// The module: `strads._strads`.
#[pymodule]
fn _strads(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(fit_linear_dense, m)?)?;
    m.add_function(wrap_pyfunction!(fit_linear_sparse, m)?)?;
    m.add_function(wrap_pyfunction!(fit_mf, m)?)?;
    m.add_function(wrap_pyfunction!(fit_lda, m)?)?;
    m.add_function(wrap_pyfunction!(infer_lda, m)?)?;
    Ok(())
}
