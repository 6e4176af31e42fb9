//! The MF scheduler: the static plan of a run (which half-steps, in which order, when to evaluate,
//! when to stop early or on convergence).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{BoxError, Decision, Plan, Round, Scheduler, Slot};

use crate::params::{Algorithm, Bias, CheckedParams};
use crate::program::{Evaluation, Mf, Side, Task};

/// One evaluation of the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Outer iterations completed.
    pub iteration: u64,
    /// Half-steps completed (CCD++ counts every `u` and `v` solve).
    pub half_steps: u64,
    /// Seconds of training so far (evaluations excluded).
    pub seconds: f64,
    /// `sum R^2 + regularization`.
    pub objective: f64,
    /// Root mean squared training error.
    pub train_rmse: f64,
    /// Root mean squared test error, with a test set.
    pub test_rmse: Option<f64>,
    /// Root mean squared error on the validation ratings, with early stopping.
    #[serde(default)]
    pub validation_rmse: Option<f64>,
}

/// The rounds of one outer iteration.
pub fn iteration_tasks(params: &CheckedParams) -> Vec<Task> {
    match params.algorithm {
        Algorithm::Ccd | Algorithm::Als => vec![Task::Rows(Side::W), Task::Rows(Side::H)],
        Algorithm::Ccdpp => {
            let k = params.rank;
            let mut tasks = Vec::new();
            if params.bias == Bias::Full {
                tasks.extend([Task::Begin(k), Task::Solve { t: k, side: Side::W, finish: true }]);
                tasks.extend([Task::Begin(k + 1), Task::Solve { t: k + 1, side: Side::H, finish: true }]);
            }
            for t in 0..k {
                tasks.push(Task::Begin(t));
                for s in 0..params.inner_iterations {
                    tasks.push(Task::Solve { t, side: Side::W, finish: false });
                    let finish = s + 1 == params.inner_iterations;
                    tasks.push(Task::Solve { t, side: Side::H, finish });
                }
            }
            tasks
        }
    }
}

/// The scheduler: the iterations' rounds in order, an evaluation where asked, a gather at the end.
pub struct MfScheduler<'o> {
    params: CheckedParams,
    tasks: Vec<Task>,
    has_test: bool,
    has_validation: bool,
    iteration: u64,
    next_task: usize,
    half_steps: u64,
    evaluated_at: Option<(u64, u64)>,
    gathered: bool,
    started: Option<Instant>,
    training: Duration,
    trace: Vec<TracePoint>,
    stopping: Stopping,
    observer: &'o mut dyn FnMut(&TracePoint),
}

/// Early stopping's state: the best validation RMSE so far and where it was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Stopping {
    /// The best validation RMSE and the index of its trace point.
    best: Option<(f64, usize)>,
    /// Evaluations since the best.
    since_best: usize,
    /// The workers must keep a copy of their rows before the next round.
    keep: bool,
    /// Patience ran out.
    stopped: bool,
    /// The objective at the end of the last iteration evaluated, and whether the iteration after
    /// it lowered it by less than the tolerance.
    last_objective: Option<f64>,
    converged: bool,
    /// The evaluation in flight closes an outer iteration.
    at_iteration_end: bool,
}

impl<'o> MfScheduler<'o> {
    /// A scheduler for `params`; `observer` sees every evaluation. With validation ratings and a
    /// patience, it stops early and has the workers keep the rows of the best validation RMSE.
    pub fn new(
        params: CheckedParams,
        has_test: bool,
        has_validation: bool,
        observer: &'o mut dyn FnMut(&TracePoint),
    ) -> Self {
        MfScheduler {
            tasks: iteration_tasks(&params),
            params,
            has_test,
            has_validation,
            iteration: 0,
            next_task: 0,
            half_steps: 0,
            evaluated_at: None,
            gathered: false,
            started: None,
            training: Duration::ZERO,
            trace: Vec::new(),
            stopping: Stopping::default(),
            observer,
        }
    }

    /// The trace point of the model the run returns: the best validation RMSE's with early
    /// stopping, else the last.
    pub fn returned(&self) -> Option<usize> {
        match self.stopping.best {
            Some((_, index)) if self.early_stopping() => Some(index),
            _ => self.trace.len().checked_sub(1),
        }
    }

    /// Whether patience ran out before the last iteration.
    pub fn stopped_early(&self) -> bool {
        self.stopping.stopped
    }

    /// Whether the run stopped because an iteration lowered the objective by less than the tolerance.
    pub fn converged(&self) -> bool {
        self.stopping.converged
    }

    fn early_stopping(&self) -> bool {
        self.has_validation && self.params.patience > 0
    }

    /// The evaluations, the first one of the initial model.
    pub fn trace(&self) -> &[TracePoint] {
        &self.trace
    }

    /// Seconds of training (evaluations excluded).
    pub fn training_seconds(&self) -> f64 {
        self.training.as_secs_f64()
    }

    /// Outer iterations completed.
    pub fn iterations(&self) -> u64 {
        self.iteration
    }

    fn wants_evaluation(&self) -> bool {
        if self.evaluated_at == Some((self.iteration, self.half_steps)) {
            return false;
        }
        let end_of_iteration = self.next_task == 0;
        let last = self.iteration as usize == self.params.iterations;
        let periodic = (self.iteration as usize).is_multiple_of(self.params.eval_every);
        if end_of_iteration && (self.iteration == 0 || last || periodic) {
            return true;
        }
        let previous = self.tasks[(self.next_task + self.tasks.len() - 1) % self.tasks.len()];
        self.params.trace_half_steps && self.half_steps > 0 && matches!(previous, Task::Rows(_) | Task::Solve { .. })
    }
}

impl Scheduler<Mf> for MfScheduler<'_> {
    fn schedule(&mut self, _slot: Slot) -> Decision<Task> {
        if self.stopping.keep {
            self.stopping.keep = false;
            return Decision::Run(Plan::all(Task::Keep));
        }
        let done = self.stopping.stopped || self.stopping.converged;
        if !done && self.wants_evaluation() {
            self.evaluated_at = Some((self.iteration, self.half_steps));
            self.stopping.at_iteration_end = self.next_task == 0;
            return Decision::Run(Plan::all(Task::Evaluate));
        }
        if self.iteration as usize == self.params.iterations || done {
            if self.gathered {
                return Decision::Stop;
            }
            self.gathered = true;
            return Decision::Run(Plan::all(Task::Gather));
        }
        let task = self.tasks[self.next_task];
        self.next_task += 1;
        if matches!(task, Task::Rows(_) | Task::Solve { .. }) {
            self.half_steps += 1;
        }
        if self.next_task == self.tasks.len() {
            self.next_task = 0;
            self.iteration += 1;
        }
        self.started = Some(Instant::now());
        Decision::Run(Plan::all(task))
    }

    fn feedback(&mut self, _round: Round, feedback: Option<Evaluation>) {
        if let Some(started) = self.started.take() {
            self.training += started.elapsed();
        }
        if let Some(e) = feedback {
            let point = TracePoint {
                iteration: self.iteration,
                half_steps: self.half_steps,
                seconds: self.training.as_secs_f64(),
                objective: e.loss + e.regularization,
                train_rmse: (e.squared_error / e.ratings.max(1) as f64).sqrt(),
                test_rmse: (self.has_test && e.test_ratings > 0)
                    .then(|| (e.test_squared_error / e.test_ratings as f64).sqrt()),
                validation_rmse: (e.validation_ratings > 0)
                    .then(|| (e.validation_squared_error / e.validation_ratings as f64).sqrt()),
            };
            (self.observer)(&point);
            self.trace.push(point);
            if self.stopping.at_iteration_end {
                let objective = point.objective;
                if let Some(before) = self.stopping.last_objective {
                    self.stopping.converged = self.params.tol > 0.0
                        && (self.iteration as usize) < self.params.iterations
                        && before - objective < self.params.tol * before.abs();
                }
                self.stopping.last_objective = Some(objective);
            }
            if let (true, true, Some(rmse)) =
                (self.early_stopping(), self.stopping.at_iteration_end, point.validation_rmse)
            {
                let stopping = &mut self.stopping;
                if stopping.best.is_none_or(|(best, _)| rmse < best) {
                    stopping.best = Some((rmse, self.trace.len() - 1));
                    stopping.since_best = 0;
                    stopping.keep = true;
                } else {
                    stopping.since_best += 1;
                    stopping.stopped = stopping.since_best >= self.params.patience;
                }
            }
        }
    }

    fn iteration(&self) -> Option<u64> {
        Some(self.iteration)
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        let state = (
            self.iteration,
            self.next_task,
            self.half_steps,
            self.evaluated_at,
            self.gathered,
            self.training,
            &self.trace,
            self.tasks.len(),
            self.stopping,
        );
        encode(&state)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let tasks;
        (
            self.iteration,
            self.next_task,
            self.half_steps,
            self.evaluated_at,
            self.gathered,
            self.training,
            self.trace,
            tasks,
            self.stopping,
        ) = decode(state)?;
        strads_core::checkpoint::expect_len("iteration plan", tasks, self.tasks.len())
    }
}
