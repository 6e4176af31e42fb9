//! The Python extension module `strads._strads`: the fits that the estimators of `python/strads`
//! call, on arrays those estimators have already validated (scikit-learn's checks run in Python).
//!
//! Each function copies its arrays into a [`Dataset`], releases the interpreter while the workers
//! run, and returns plain numbers and numpy arrays; errors of the parameters or the data become
//! `ValueError`, an engine failure `RuntimeError`.

use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use strads_data::{Dataset, DenseRows, Features, SparseRows};
use strads_lasso::{Lambda, LassoError, LassoFit, LassoParams, Loss, SchedulerKind, Status};
use strads_runtime::Embedded;

/// Maps the library's error to the Python exception a scikit-learn user expects.
fn to_py(error: LassoError) -> PyErr {
    match error {
        LassoError::Params(_) | LassoError::Data(_) => PyValueError::new_err(error.to_string()),
        LassoError::Engine(_) => PyRuntimeError::new_err(error.to_string()),
    }
}

/// The settings a linear estimator passes, in strads' terms.
struct LinearSettings {
    loss: Loss,
    lambda: f64,
    l1_ratio: f64,
    intercept: bool,
    tol: f64,
    max_rounds: Option<u64>,
    workers: usize,
    scheduler: SchedulerKind,
    seed: u64,
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

/// Fits on `data` with the embedded runtime, the interpreter released.
fn fit_linear(py: Python<'_>, data: Dataset, settings: LinearSettings) -> PyResult<Py<PyDict>> {
    let mut params = LassoParams::new(Lambda::Value(settings.lambda));
    params.loss = settings.loss;
    params.l1_ratio = settings.l1_ratio;
    params.intercept = settings.intercept;
    params.tol = settings.tol;
    params.max_rounds = settings.max_rounds;
    params.scheduler = settings.scheduler;
    params.seed = settings.seed;
    let checked = params.check().map_err(to_py)?;
    let workers = settings.workers;
    let fitted: Result<LassoFit, LassoError> = py.detach(move || {
        let launcher = Embedded::new(workers)?;
        strads_lasso::fit(&data, &checked, &launcher, &mut |_| {})?
            .ok_or_else(|| LassoError::Data("the embedded run has no leader".into()))
    });
    let model = fitted.map_err(to_py)?;
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
    Ok(out.unbind())
}

/// Fits a Lasso, elastic net or L1 logistic regression on dense rows (C order, float64).
#[pyfunction]
#[pyo3(signature = (x, y, *, loss, alpha, l1_ratio, fit_intercept, tol, max_iter, n_workers, scheduler, seed))]
#[allow(clippy::too_many_arguments)]
fn fit_linear_dense(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    loss: &str,
    alpha: f64,
    l1_ratio: f64,
    fit_intercept: bool,
    tol: f64,
    max_iter: Option<u64>,
    n_workers: usize,
    scheduler: &str,
    seed: u64,
) -> PyResult<Py<PyDict>> {
    let x = x.as_array();
    let (rows, cols) = x.dim();
    let values = x.iter().copied().collect();
    let features = Features::Dense(DenseRows { rows, cols, data: values });
    let data = Dataset { x: features, y: y.as_array().to_vec(), feature_names: None };
    let settings = LinearSettings {
        loss: loss_named(loss)?,
        lambda: alpha,
        l1_ratio,
        intercept: fit_intercept,
        tol,
        max_rounds: max_iter,
        workers: n_workers,
        scheduler: scheduler_named(scheduler)?,
        seed,
    };
    fit_linear(py, data, settings)
}

/// Fits on compressed sparse rows (`indptr`, sorted `indices` without duplicates, `data`).
#[pyfunction]
#[pyo3(signature = (indptr, indices, values, shape, y, *, loss, alpha, l1_ratio, fit_intercept, tol, max_iter, n_workers, scheduler, seed))]
#[allow(clippy::too_many_arguments)]
fn fit_linear_csr(
    py: Python<'_>,
    indptr: PyReadonlyArray1<'_, u64>,
    indices: PyReadonlyArray1<'_, u32>,
    values: PyReadonlyArray1<'_, f64>,
    shape: (usize, usize),
    y: PyReadonlyArray1<'_, f64>,
    loss: &str,
    alpha: f64,
    l1_ratio: f64,
    fit_intercept: bool,
    tol: f64,
    max_iter: Option<u64>,
    n_workers: usize,
    scheduler: &str,
    seed: u64,
) -> PyResult<Py<PyDict>> {
    let indptr: Vec<usize> = indptr.as_array().iter().map(|&p| p as usize).collect();
    let matrix = SparseRows::try_new(shape, indptr, indices.as_array().to_vec(), values.as_array().to_vec())
        .map_err(|(_, _, _, e)| PyValueError::new_err(format!("invalid compressed sparse rows: {e}")))?;
    let data = Dataset { x: Features::Sparse(matrix), y: y.as_array().to_vec(), feature_names: None };
    let settings = LinearSettings {
        loss: loss_named(loss)?,
        lambda: alpha,
        l1_ratio,
        intercept: fit_intercept,
        tol,
        max_rounds: max_iter,
        workers: n_workers,
        scheduler: scheduler_named(scheduler)?,
        seed,
    };
    fit_linear(py, data, settings)
}

/// The module: `strads._strads`.
#[pymodule]
fn _strads(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(fit_linear_dense, m)?)?;
    m.add_function(wrap_pyfunction!(fit_linear_csr, m)?)?;
    Ok(())
}
