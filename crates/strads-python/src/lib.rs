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
fn fit_linear(py: Python<'_>, data: Dataset, settings: LinearSettings) -> PyResult<Py<PyDict>> {
    let mut params = LassoParams::new(Lambda::Value(settings.alpha));
    params.loss = loss_named(&settings.loss)?;
    params.l1_ratio = settings.l1_ratio;
    params.intercept = settings.fit_intercept;
    params.tol = settings.tol;
    params.max_rounds = settings.max_iter;
    params.scheduler = scheduler_named(&settings.scheduler)?;
    params.seed = settings.seed;
    params.path = settings.path;
    params.path_top = settings.path_top;
    let checked = params.check().map_err(to_py)?;
    let (workers, features) = (settings.n_workers, data.x.cols());
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

/// Fits a Lasso, elastic net or L1 logistic regression on dense rows (float64).
#[pyfunction]
fn fit_linear_dense(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    settings: LinearSettings,
) -> PyResult<Py<PyDict>> {
    let x = x.as_array();
    let (rows, cols) = x.dim();
    let values = x.iter().copied().collect();
    let features = Features::Dense(DenseRows { rows, cols, data: values });
    let data = Dataset { x: features, y: y.as_array().to_vec(), feature_names: None };
    fit_linear(py, data, settings)
}

/// Fits on compressed sparse rows (`indptr`, sorted `indices` without duplicates, `values`).
#[pyfunction]
fn fit_linear_csr(
    py: Python<'_>,
    indptr: PyReadonlyArray1<'_, u64>,
    indices: PyReadonlyArray1<'_, u32>,
    values: PyReadonlyArray1<'_, f64>,
    shape: (usize, usize),
    y: PyReadonlyArray1<'_, f64>,
    settings: LinearSettings,
) -> PyResult<Py<PyDict>> {
    let indptr: Vec<usize> = indptr.as_array().iter().map(|&p| p as usize).collect();
    let matrix = SparseRows::try_new(shape, indptr, indices.as_array().to_vec(), values.as_array().to_vec())
        .map_err(|(_, _, _, e)| PyValueError::new_err(format!("invalid compressed sparse rows: {e}")))?;
    let data = Dataset { x: Features::Sparse(matrix), y: y.as_array().to_vec(), feature_names: None };
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
