//! The one call an application makes to run a program, whatever carries it.
//!
//! An application builds its workers through a factory (so a process of a cluster can build only
//! the workers it hosts, loading only their data) and its scheduler and aggregator through a second
//! factory (called only on the process that leads). The [`Launcher`] chosen at start-up decides
//! where those run; the application never learns whether it was threads or processes.

use crate::{Aggregator, BoxError, Checkpoints, EngineError, NoCheckpoints, Program, Scheduler, Worker, WorkerId};

/// Options every engine honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// How many further rounds may be scheduled and pushed before an earlier one is pulled.
    /// `0` is fully synchronous: every worker has synced round `t` before it pushes round `t + 1`.
    pub pipeline_depth: usize,
}

/// Runs scheduled programs on some set of workers: threads of this process, or processes of a cluster.
pub trait Launcher {
    /// Total number of workers across every process of the run.
    fn workers(&self) -> usize;

    /// Whether this process hosts the scheduler and aggregator (and so gets the result of [`Launcher::run`]).
    fn is_leader(&self) -> bool;

    /// Runs one program until its scheduler stops and every round in flight is pulled.
    ///
    /// `make_worker(p)` builds worker `p`; it is called once for every worker this process hosts.
    /// `make_leader()` builds the scheduler and aggregator; it is called only where
    /// [`Launcher::is_leader`] holds. Returns them at the end on the leader, `None` elsewhere.
    fn run<P, W, S, A>(
        &self,
        options: RunOptions,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>,
    {
        self.run_checkpointed(options, &mut NoCheckpoints, make_worker, make_leader)
    }

    /// [`Launcher::run`] with checkpoints: resumes from `checkpoints.resume()` if it gives a
    /// snapshot, and saves one whenever `checkpoints.due(..)` says so, at a round boundary.
    fn run_checkpointed<P, W, S, A>(
        &self,
        options: RunOptions,
        checkpoints: &mut dyn Checkpoints,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>;
}

/// A launcher whose calling process leads every run it starts (the embedded runtime): its runs
/// always return the scheduler and aggregator, so an application's `fit_model` returns the model
/// itself, with no `Option` for the processes that do not lead.
pub trait Leading: Launcher {}

impl<L: Leading> Leading for Interruptible<'_, L> {}

/// A launcher whose runs end early when `stop()` says so, as if the scheduler had stopped: no
/// further round is scheduled, and the rounds in flight are still pulled. For a caller that must
/// answer an interruption (Ctrl-C in an interpreter, a progress callback that gives up); `stop`
/// is asked on the leader before every round, so it should be cheap. [`Interruptible::interrupted`]
/// tells whether a run ended that way; its model is then whatever the rounds so far made.
pub struct Interruptible<'a, L> {
    launcher: &'a L,
    stop: &'a (dyn Fn() -> bool + Sync),
    interrupted: std::cell::Cell<bool>,
}

impl<'a, L: Launcher> Interruptible<'a, L> {
    /// `launcher`, asking `stop` before every round.
    pub fn new(launcher: &'a L, stop: &'a (dyn Fn() -> bool + Sync)) -> Self {
        Interruptible { launcher, stop, interrupted: std::cell::Cell::new(false) }
    }

    /// Whether `stop` ended a run.
    pub fn interrupted(&self) -> bool {
        self.interrupted.get()
    }
}

/// The scheduler of an [`Interruptible`] run: the program's own, until `stop` says otherwise.
struct Stoppable<'a, S> {
    inner: S,
    stop: &'a (dyn Fn() -> bool + Sync),
    interrupted: &'a std::cell::Cell<bool>,
}

impl<P: Program, S: Scheduler<P>> Scheduler<P> for Stoppable<'_, S> {
    fn schedule(&mut self, slot: crate::Slot) -> crate::Decision<P::Task> {
        if self.interrupted.get() || (self.stop)() {
            self.interrupted.set(true);
            return crate::Decision::Stop;
        }
        self.inner.schedule(slot)
    }

    fn feedback(&mut self, round: crate::Round, feedback: P::Feedback) {
        self.inner.feedback(round, feedback);
    }

    fn iteration(&self) -> Option<u64> {
        self.inner.iteration()
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        self.inner.save()
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        self.inner.restore(state)
    }
}

impl<L: Launcher> Launcher for Interruptible<'_, L> {
    fn workers(&self) -> usize {
        self.launcher.workers()
    }

    fn is_leader(&self) -> bool {
        self.launcher.is_leader()
    }

    fn run_checkpointed<P, W, S, A>(
        &self,
        options: RunOptions,
        checkpoints: &mut dyn Checkpoints,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>,
    {
        let (stop, interrupted) = (self.stop, &self.interrupted);
        let leader = move || {
            let (inner, aggregator) = make_leader();
            (Stoppable { inner, stop, interrupted }, aggregator)
        };
        let ended = self.launcher.run_checkpointed::<P, W, _, A>(options, checkpoints, make_worker, leader)?;
        Ok(ended.map(|(scheduler, aggregator)| (scheduler.inner, aggregator)))
    }
}
