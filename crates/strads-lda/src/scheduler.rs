//! The LDA scheduler: the static plan of rotating sub-rounds (model parallel) or shared blocks
//! (data parallel), with the evaluations, the held-out perplexity and alpha's re-estimation rounds.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{BoxError, Decision, Plan, Round, Scheduler, Slot};

use crate::params::{CheckedParams, Mode, Sync};
use crate::program::{Feedback, Lda, Task};

/// One evaluation point of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Iterations done.
    pub iteration: u64,
    /// Seconds of training so far (evaluations excluded).
    pub seconds: f64,
    /// `log p(w, z)` divided by the number of tokens.
    pub log_likelihood_per_token: f64,
    /// Tokens sampled per second of training so far.
    pub tokens_per_second: f64,
    /// Held-out perplexity by document completion, when a test set is given and due.
    pub test_perplexity: Option<f64>,
    /// The most word-topic bytes held by one worker.
    pub model_bytes_per_worker: u64,
}

/// What a round in flight was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Init,
    Sample,
    Evaluate,
    OptimizeAlpha,
    FoldIn,
    Score { last: bool },
    Verify,
    Final,
}

#[derive(Serialize, Deserialize)]
enum Step {
    Round(Plan<Task>, Kind),
    /// The iteration's evaluations are complete: emit its trace point.
    EndOfIteration,
}

/// The static plan: an initial counting pass, then per iteration `U` sampling sub-rounds and the evaluations due.
pub struct LdaScheduler<'o> {
    params: CheckedParams,
    tokens: u64,
    has_test: bool,
    steps: VecDeque<Step>,
    iteration: u64,
    in_flight: VecDeque<(Kind, Instant)>,
    training: Duration,
    pending: Option<TracePoint>,
    score: (f64, u64),
    trace: Vec<TracePoint>,
    /// `(iteration, alpha)` after each re-estimation.
    alphas: Vec<(u64, f64)>,
    failure: Option<(u64, String)>,
    finished: bool,
    observer: &'o mut dyn FnMut(&TracePoint),
}

impl<'o> LdaScheduler<'o> {
    /// A scheduler for `tokens` training tokens; `has_test` when test documents are loaded.
    pub fn new(params: CheckedParams, tokens: u64, has_test: bool, observer: &'o mut dyn FnMut(&TracePoint)) -> Self {
        let mut scheduler = LdaScheduler {
            params,
            tokens,
            has_test,
            steps: VecDeque::new(),
            iteration: 0,
            in_flight: VecDeque::new(),
            training: Duration::ZERO,
            pending: None,
            score: (0.0, 0),
            trace: Vec::new(),
            alphas: Vec::new(),
            failure: None,
            finished: false,
            observer,
        };
        let init = scheduler.pass(Task::Init, Kind::Init);
        match scheduler.params.mode {
            Mode::ModelParallel => scheduler.steps.extend(init),
            Mode::DataParallel => scheduler.steps.push_back(Step::Round(Plan::all(Task::Init), Kind::Init)),
        }
        if scheduler.params.verify {
            scheduler.steps.push_back(Step::Round(Plan::all(Task::Report { assignments: false }), Kind::Verify));
        }
        scheduler
    }

    /// `U` rotating rounds of `task` (model parallel), or one round over all blocks (data parallel).
    fn pass(&self, task: Task, kind: Kind) -> Vec<Step> {
        match self.params.mode {
            Mode::ModelParallel => {
                (0..self.params.blocks).map(|_| Step::Round(Plan::all(task.clone()).rotating(), kind)).collect()
            }
            Mode::DataParallel => vec![Step::Round(Plan::all(task), kind)],
        }
    }

    fn plan_iteration(&mut self) {
        self.iteration += 1;
        let u = self.params.blocks;
        let last = self.iteration == self.params.iterations;
        for b in 0..u {
            let sync = self.params.sync == Sync::Subround || b + 1 == u;
            let plan = Plan::all(Task::Sample { block: b, sync });
            let plan = if self.params.mode == Mode::ModelParallel { plan.rotating() } else { plan };
            self.steps.push_back(Step::Round(plan, Kind::Sample));
        }
        let evaluate = last || self.iteration.is_multiple_of(self.params.eval_every);
        let test = self.has_test && (last || self.iteration.is_multiple_of(self.params.test_every));
        if evaluate || test {
            self.steps.push_back(Step::Round(Plan::all(Task::Evaluate), Kind::Evaluate));
        }
        if test {
            for _ in 0..self.params.fold_in_sweeps {
                let sweep = self.pass(Task::FoldIn, Kind::FoldIn);
                self.steps.extend(sweep);
            }
            let mut score = self.pass(Task::Score, Kind::Score { last: false });
            if let Some(Step::Round(_, kind)) = score.last_mut() {
                *kind = Kind::Score { last: true };
            }
            self.steps.extend(score);
        }
        if self.params.optimize_alpha.is_some_and(|n| self.iteration.is_multiple_of(n)) {
            self.steps.push_back(Step::Round(Plan::all(Task::OptimizeAlpha), Kind::OptimizeAlpha));
        }
        if self.params.verify {
            self.steps.push_back(Step::Round(Plan::all(Task::Report { assignments: false }), Kind::Verify));
        }
        self.steps.push_back(Step::EndOfIteration);
    }

    /// The evaluation points so far.
    pub fn trace(&self) -> &[TracePoint] {
        &self.trace
    }

    /// `(iteration, alpha)` after each re-estimation of `alpha`.
    pub fn alphas(&self) -> &[(u64, f64)] {
        &self.alphas
    }

    /// Seconds of training (sampling, merging and re-estimating `alpha`; evaluations excluded).
    pub fn training_seconds(&self) -> f64 {
        self.training.as_secs_f64()
    }

    /// The first broken invariant, with its iteration, under `verify`.
    pub fn failure(&self) -> Option<&(u64, String)> {
        self.failure.as_ref()
    }

    /// Iterations run.
    pub fn iterations(&self) -> u64 {
        self.iteration
    }
}

impl Scheduler<Lda> for LdaScheduler<'_> {
    fn schedule(&mut self, _slot: Slot) -> Decision<Task> {
        loop {
            if self.failure.is_some() || self.finished {
                return Decision::Stop;
            }
            if self.steps.is_empty() {
                if self.iteration < self.params.iterations {
                    self.plan_iteration();
                } else {
                    self.steps.push_back(Step::Round(
                        Plan::all(Task::Report { assignments: self.params.keep_assignments }),
                        Kind::Final,
                    ));
                }
            }
            match self.steps.pop_front() {
                Some(Step::Round(plan, kind)) => {
                    self.in_flight.push_back((kind, Instant::now()));
                    return Decision::Run(plan);
                }
                Some(Step::EndOfIteration) => {
                    if let Some(point) = self.pending.take() {
                        (self.observer)(&point);
                        self.trace.push(point);
                    }
                }
                None => return Decision::Stop,
            }
        }
    }

    fn feedback(&mut self, _round: Round, feedback: Feedback) {
        let Some((kind, started)) = self.in_flight.pop_front() else { return };
        if matches!(kind, Kind::Init | Kind::Sample | Kind::OptimizeAlpha) {
            self.training += started.elapsed();
        }
        match feedback {
            Feedback::Evaluated { log_likelihood, model_bytes } => {
                let seconds = self.training.as_secs_f64();
                self.pending = Some(TracePoint {
                    iteration: self.iteration,
                    seconds,
                    log_likelihood_per_token: log_likelihood / self.tokens.max(1) as f64,
                    tokens_per_second: if seconds > 0.0 {
                        (self.tokens * self.iteration) as f64 / seconds
                    } else {
                        0.0
                    },
                    test_perplexity: None,
                    model_bytes_per_worker: model_bytes,
                });
            }
            Feedback::Scored { log_likelihood, tokens } => {
                self.score.0 += log_likelihood;
                self.score.1 += tokens;
                if kind == (Kind::Score { last: true }) {
                    let (sum, count) = std::mem::take(&mut self.score);
                    if let Some(point) = &mut self.pending {
                        point.test_perplexity = Some(if count > 0 { (-sum / count as f64).exp() } else { f64::NAN });
                    }
                }
            }
            Feedback::Alpha(alpha) => self.alphas.push((self.iteration, alpha)),
            Feedback::Reported(Err(message)) => self.failure = Some((self.iteration, message)),
            Feedback::Reported(Ok(())) => {
                if kind == Kind::Final {
                    self.finished = true;
                }
            }
            Feedback::Done => {}
        }
    }

    fn iteration(&self) -> Option<u64> {
        Some(self.iteration)
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        let in_flight: Vec<Kind> = self.in_flight.iter().map(|(kind, _)| *kind).collect();
        encode(&(
            &self.steps,
            self.iteration,
            in_flight,
            self.training,
            self.pending,
            self.score,
            &self.trace,
            &self.alphas,
            &self.failure,
            self.finished,
        ))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let in_flight: Vec<Kind>;
        (
            self.steps,
            self.iteration,
            in_flight,
            self.training,
            self.pending,
            self.score,
            self.trace,
            self.alphas,
            self.failure,
            self.finished,
        ) = decode(state)?;
        let now = Instant::now();
        self.in_flight = in_flight.into_iter().map(|kind| (kind, now)).collect();
        Ok(())
    }
}
