//! What a fit says to Python while it runs: progress to a callback, and the interruptions
//! (Ctrl-C, a callback that raises) that end it early with that exception.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use strads_core::{EngineError, Interruptible};
use strads_runtime::Embedded;

/// Runs `fit` on `workers` embedded workers with the interpreter released: the launcher it gets
/// stops at Ctrl-C or at an exception of `callback`, which `fit` passes each progress point to by
/// [`Watch::report`]. Returns the model, or the exception that ended the fit, or `fit`'s error
/// through `to_py`.
pub(crate) fn watched<T: Send, E: From<EngineError> + Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    workers: usize,
    fit: impl FnOnce(&Interruptible<'_, Embedded>, &Watch) -> Result<T, E> + Send,
    to_py: impl FnOnce(E) -> PyErr,
) -> PyResult<T> {
    let watch = Watch::new(callback);
    let fitted = py.detach(|| {
        let launcher = Embedded::new(workers)?;
        let stop = || watch.stop();
        fit(&Interruptible::new(&launcher, &stop), &watch)
    });
    watch.finish(fitted.map_err(to_py))
}

/// How often a running fit asks the interpreter whether Ctrl-C was pressed.
const SIGNAL_EVERY: Duration = Duration::from_millis(20);

/// The Python side of one fit: shared by the launcher's stop check and the fit's observer, both
/// on the thread that called the fit (the interpreter released in between).
pub(crate) struct Watch {
    callback: Option<Py<PyAny>>,
    /// The first exception raised while the fit ran: it ends the fit and is raised in its place.
    failure: Mutex<Option<PyErr>>,
    /// Whether `failure` holds one (read before every round, so without the lock).
    failed: AtomicBool,
    started: Instant,
    /// Nanoseconds from `started` to the last question to the interpreter.
    last_check: AtomicU64,
}

impl Watch {
    /// A watch that calls `callback(point)` with a dict of each progress point, if given.
    pub(crate) fn new(callback: Option<Py<PyAny>>) -> Self {
        Watch {
            callback,
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            started: Instant::now(),
            last_check: AtomicU64::new(0),
        }
    }

    fn fail(&self, error: PyErr) {
        let mut failure = self.failure.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        failure.get_or_insert(error);
        self.failed.store(true, Ordering::Release);
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Whether the fit must end: an exception is pending, or a signal handler (Ctrl-C's
    /// KeyboardInterrupt) raised one; the interpreter is asked at most every [`SIGNAL_EVERY`].
    pub(crate) fn stop(&self) -> bool {
        if self.failed() {
            return true;
        }
        // Only the thread that called the fit asks, so a plain load and store suffice.
        let now = self.started.elapsed().as_nanos() as u64;
        if now.saturating_sub(self.last_check.load(Ordering::Relaxed)) < SIGNAL_EVERY.as_nanos() as u64 {
            return false;
        }
        self.last_check.store(now, Ordering::Relaxed);
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(error) => {
                self.fail(error);
                true
            }
        }
    }

    /// Passes one progress point to the callback as a dict of its fields (`None` for a missing
    /// value); an exception it raises ends the fit.
    pub(crate) fn report(&self, point: &impl Serialize) {
        let Some(callback) = &self.callback else { return };
        if self.failed() {
            return;
        }
        let called = Python::attach(|py| -> PyResult<()> {
            let fields = PyDict::new(py);
            if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(point) {
                for (name, value) in map {
                    match value {
                        serde_json::Value::Number(n) if n.is_u64() => fields.set_item(name, n.as_u64())?,
                        serde_json::Value::Number(n) => fields.set_item(name, n.as_f64())?,
                        serde_json::Value::Bool(b) => fields.set_item(name, b)?,
                        serde_json::Value::String(s) => fields.set_item(name, s)?,
                        _ => fields.set_item(name, py.None())?,
                    }
                }
            }
            callback.call1(py, (fields,))?;
            Ok(())
        });
        if let Err(error) = called {
            self.fail(error);
        }
    }

    /// The fit's result, unless an exception ended it: then that exception.
    pub(crate) fn finish<T>(self, result: PyResult<T>) -> PyResult<T> {
        match self.failure.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()) {
            Some(error) => Err(error),
            None => result,
        }
    }
}
