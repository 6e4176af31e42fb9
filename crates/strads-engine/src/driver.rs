//! The round loop: schedule, push, pull, sync, feedback, with up to a pipeline depth of rounds in flight.
//!
//! Rounds are pulled in the order they were pushed, and every worker applies commits in that order
//! before its next push, so the result depends only on the scheduler, the aggregator and the
//! workers, never on the timing of the transport.

use std::collections::VecDeque;
use std::sync::Arc;

use strads_core::checkpoint::{decode, encode};
use strads_core::{
    Aggregator, Checkpoints, Decision, Due, EngineError, NoCheckpoints, Plan, Position, Program, Round, RunOptions,
    Scheduler, Slot, Snapshot,
};

use crate::Transport;

/// What the driver counted over one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Rounds pushed and pulled.
    pub rounds: u64,
    /// Times the scheduler asked to wait for a round in flight.
    pub waits: u64,
}

/// Runs rounds until the scheduler stops and every round in flight is pulled.
///
/// With `options.pipeline_depth = s`, up to `s + 1` rounds are pushed and not yet pulled: round
/// `t + s + 1` is scheduled once round `t` has been pulled, so workers push it without the
/// commits of the `s` rounds still in flight (bounded staleness). `s = 0` is synchronous.
pub fn drive<P, S, A, T>(
    scheduler: &mut S,
    aggregator: &mut A,
    transport: &mut T,
    options: RunOptions,
) -> Result<RunStats, EngineError>
where
    P: Program,
    S: Scheduler<P>,
    A: Aggregator<P>,
    T: Transport<P>,
{
    drive_checkpointed(scheduler, aggregator, transport, options, &mut NoCheckpoints)
}

/// A round pushed and not yet pulled; its partials once collected ahead of the pull (for a snapshot).
struct InFlight<P: Program> {
    round: Round,
    plan: Arc<Plan<P::Task>>,
    partials: Option<Vec<P::Partial>>,
}

/// A round in flight as a snapshot stores it.
type SavedRound<P> = (Round, Plan<<P as Program>::Task>, Vec<<P as Program>::Partial>);

fn checkpoint_error(what: &str, error: impl std::fmt::Display) -> EngineError {
    EngineError::Checkpoint(format!("{what}: {error}"))
}

/// [`drive`] with checkpoints: restores every role from `checkpoints.resume()` first, if it gives a
/// snapshot, and saves one after a pulled round whenever `checkpoints.due(..)` asks.
///
/// A snapshot is taken between rounds without draining the pipeline: the partials of the rounds
/// still in flight are collected early and saved with their plans, and every worker saves its state
/// after the operations issued so far, so a run resumed from it carries on exactly as the saved one
/// would have. Taking a snapshot never changes what a run computes.
pub fn drive_checkpointed<P, S, A, T>(
    scheduler: &mut S,
    aggregator: &mut A,
    transport: &mut T,
    options: RunOptions,
    checkpoints: &mut dyn Checkpoints,
) -> Result<RunStats, EngineError>
where
    P: Program,
    S: Scheduler<P>,
    A: Aggregator<P>,
    T: Transport<P>,
{
    let workers = transport.workers();
    let mut in_flight: VecDeque<InFlight<P>> = VecDeque::new();
    let mut stats = RunStats::default();
    let mut next = 0u64;
    let mut synced = 0u64;
    let mut stopped = false;
    if let Some(snapshot) = checkpoints.resume() {
        if snapshot.workers.len() != workers {
            return Err(EngineError::Checkpoint(format!(
                "the checkpoint has {} workers but this run has {workers}",
                snapshot.workers.len()
            )));
        }
        scheduler.restore(&snapshot.scheduler).map_err(|e| checkpoint_error("restoring the scheduler", e))?;
        aggregator.restore(&snapshot.aggregator).map_err(|e| checkpoint_error("restoring the aggregator", e))?;
        let saved: Vec<SavedRound<P>> =
            decode(&snapshot.in_flight).map_err(|e| checkpoint_error("restoring the rounds in flight", e))?;
        in_flight = saved
            .into_iter()
            .map(|(round, plan, partials)| InFlight { round, plan: Arc::new(plan), partials: Some(partials) })
            .collect();
        transport.restore(snapshot.workers)?;
        next = snapshot.next_round;
        synced = snapshot.synced;
        stats = RunStats { rounds: snapshot.rounds, waits: snapshot.waits };
    }
    loop {
        while !stopped && in_flight.len() <= options.pipeline_depth {
            match scheduler.schedule(Slot { round: next, in_flight: in_flight.len() }) {
                Decision::Run(plan) => {
                    if !plan.tasks.fits(workers) {
                        return Err(EngineError::PlanShape {
                            round: next,
                            addressed: match &plan.tasks {
                                strads_core::Assignment::Each(tasks) => tasks.len(),
                                strads_core::Assignment::All(_) => workers,
                            },
                            workers,
                        });
                    }
                    if plan.leader_only && plan.rotate {
                        return Err(EngineError::Options(format!(
                            "round {next}: a plan for worker 0 alone cannot rotate blocks"
                        )));
                    }
                    let round = Round { index: next, synced };
                    let plan = Arc::new(plan);
                    transport.push(round, Arc::clone(&plan))?;
                    in_flight.push_back(InFlight { round, plan, partials: None });
                    next += 1;
                }
                Decision::Wait => {
                    if in_flight.is_empty() {
                        return Err(EngineError::Stalled { round: next });
                    }
                    stats.waits += 1;
                    break;
                }
                Decision::Stop => stopped = true,
            }
        }
        let Some(InFlight { round, plan, partials }) = in_flight.pop_front() else {
            break;
        };
        let partials = match partials {
            Some(partials) => partials,
            None => transport.collect()?,
        };
        let pulled = aggregator.pull(round, &plan.tasks, partials);
        if let Some(commit) = pulled.commit {
            if !commit.fits(workers) {
                return Err(EngineError::PlanShape {
                    round: round.index,
                    addressed: match &commit {
                        strads_core::Assignment::Each(values) => values.len(),
                        strads_core::Assignment::All(_) => workers,
                    },
                    workers,
                });
            }
            transport.sync(round, Arc::new(commit))?;
        }
        synced = round.index + 1;
        stats.rounds += 1;
        scheduler.feedback(round, pulled.feedback);
        if stopped {
            continue;
        }
        let due = checkpoints.due(Position { rounds: stats.rounds, iteration: scheduler.iteration() });
        if due == Due::No {
            continue;
        }
        for flight in in_flight.iter_mut() {
            if flight.partials.is_none() {
                flight.partials = Some(transport.collect()?);
            }
        }
        let saved: Vec<_> =
            in_flight.iter().filter_map(|f| f.partials.as_ref().map(|p| (&f.round, &*f.plan, p))).collect();
        let snapshot = Snapshot {
            next_round: next,
            synced,
            rounds: stats.rounds,
            waits: stats.waits,
            iteration: scheduler.iteration(),
            scheduler: scheduler.save().map_err(|e| checkpoint_error("saving the scheduler", e))?,
            aggregator: aggregator.save().map_err(|e| checkpoint_error("saving the aggregator", e))?,
            workers: transport.save()?,
            in_flight: encode(&saved).map_err(|e| checkpoint_error("saving the rounds in flight", e))?,
        };
        checkpoints.save(&snapshot).map_err(|e| checkpoint_error("writing", e))?;
        if due == Due::SaveAndStop {
            return Err(EngineError::Interrupted { rounds: stats.rounds });
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strads_core::{Assignment, BoxError, Pulled, Worker};

    /// A program whose workers record the order of what they see, to check the pipeline's staleness.
    struct Echo;
    impl Program for Echo {
        type Task = u64;
        type Partial = (u64, u64);
        type Commit = u64;
        type Feedback = ();
        type Block = ();
    }

    struct Recorder {
        last_synced: Option<u64>,
        log: Vec<String>,
    }
    impl Worker<Echo> for Recorder {
        fn push(&mut self, round: Round, task: &u64) -> (u64, u64) {
            self.log.push(format!("push {}", round.index));
            (*task, self.last_synced.map_or(0, |s| s + 1))
        }
        fn sync(&mut self, round: Round, commit: &u64) {
            assert_eq!(round.index, *commit);
            self.log.push(format!("sync {}", round.index));
            self.last_synced = Some(*commit);
        }
        fn save(&self) -> Result<Vec<u8>, BoxError> {
            encode(&(self.last_synced, &self.log))
        }
        fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
            (self.last_synced, self.log) = decode(state)?;
            Ok(())
        }
    }

    /// One worker, run inline: the simplest transport.
    struct Inline {
        worker: Recorder,
        pending: VecDeque<(u64, u64)>,
    }
    impl Transport<Echo> for Inline {
        fn workers(&self) -> usize {
            1
        }
        fn push(&mut self, round: Round, plan: Arc<Plan<u64>>) -> Result<(), EngineError> {
            let partial = crate::push_on(&mut self.worker, 0, round, &plan)?;
            self.pending.push_back(partial);
            Ok(())
        }
        fn collect(&mut self) -> Result<Vec<(u64, u64)>, EngineError> {
            Ok(self.pending.pop_front().into_iter().collect())
        }
        fn sync(&mut self, round: Round, commit: Arc<Assignment<u64>>) -> Result<(), EngineError> {
            if let Some(value) = commit.for_worker(0) {
                self.worker.sync(round, value);
            }
            Ok(())
        }
        fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
            Ok(vec![self.worker.save().map_err(|e| EngineError::Checkpoint(e.to_string()))?])
        }
        fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
            self.worker.restore(&states[0]).map_err(|e| EngineError::Checkpoint(e.to_string()))
        }
    }

    struct Count {
        limit: u64,
        wait_at: Option<u64>,
        waited: bool,
    }
    impl Scheduler<Echo> for Count {
        fn schedule(&mut self, slot: Slot) -> Decision<u64> {
            if Some(slot.round) == self.wait_at && slot.in_flight > 0 {
                self.waited = true;
                return Decision::Wait;
            }
            if slot.round < self.limit { Decision::Run(Plan::all(slot.round)) } else { Decision::Stop }
        }
        fn feedback(&mut self, _round: Round, _feedback: ()) {}
        fn save(&self) -> Result<Vec<u8>, BoxError> {
            encode(&self.waited)
        }
        fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
            self.waited = decode(state)?;
            Ok(())
        }
    }

    struct Check;
    impl Aggregator<Echo> for Check {
        fn pull(&mut self, round: Round, tasks: &Assignment<u64>, partials: Vec<(u64, u64)>) -> Pulled<u64, ()> {
            assert_eq!(tasks.for_worker(0), Some(&round.index));
            // The worker had synced exactly the rounds the driver says it had.
            assert_eq!(partials[0], (round.index, round.synced));
            Pulled { commit: Some(Assignment::All(round.index)), feedback: () }
        }
        fn save(&self) -> Result<Vec<u8>, BoxError> {
            Ok(vec![])
        }
        fn restore(&mut self, _state: &[u8]) -> Result<(), BoxError> {
            Ok(())
        }
    }

    fn run(depth: usize, wait_at: Option<u64>) -> (RunStats, Vec<String>, bool) {
        let mut transport = Inline { worker: Recorder { last_synced: None, log: vec![] }, pending: VecDeque::new() };
        let mut scheduler = Count { limit: 6, wait_at, waited: false };
        let stats = drive(&mut scheduler, &mut Check, &mut transport, RunOptions { pipeline_depth: depth }).unwrap();
        (stats, transport.worker.log, scheduler.waited)
    }

    #[test]
    fn synchronous_rounds_alternate_push_and_sync() {
        let (stats, log, _) = run(0, None);
        assert_eq!(stats.rounds, 6);
        let expected: Vec<String> = (0..6).flat_map(|r| [format!("push {r}"), format!("sync {r}")]).collect();
        assert_eq!(log, expected);
    }

    #[test]
    fn pipelined_rounds_push_ahead_by_the_depth() {
        let (stats, log, _) = run(2, None);
        assert_eq!(stats.rounds, 6);
        assert_eq!(&log[..6], ["push 0", "push 1", "push 2", "sync 0", "push 3", "sync 1"].map(String::from));
        assert_eq!(log.last().map(String::as_str), Some("sync 5"));
    }

    #[test]
    fn waiting_drains_the_pipeline_before_the_next_round() {
        let (stats, log, waited) = run(2, Some(3));
        assert!(waited);
        assert!(stats.waits >= 1);
        let push3 = log.iter().position(|l| l == "push 3").unwrap();
        let sync2 = log.iter().position(|l| l == "sync 2").unwrap();
        assert!(sync2 < push3, "round 3 was pushed before round 2 was synced: {log:?}");
    }

    #[test]
    fn waiting_with_nothing_in_flight_is_an_error() {
        struct AlwaysWait;
        impl Scheduler<Echo> for AlwaysWait {
            fn schedule(&mut self, _slot: Slot) -> Decision<u64> {
                Decision::Wait
            }
            fn feedback(&mut self, _round: Round, _feedback: ()) {}
        }
        let mut transport = Inline { worker: Recorder { last_synced: None, log: vec![] }, pending: VecDeque::new() };
        let result = drive(&mut AlwaysWait, &mut Check, &mut transport, RunOptions::default());
        assert!(matches!(result, Err(EngineError::Stalled { round: 0 })));
    }

    /// Saves after chosen rounds, stopping at one of them; resumes from a given snapshot.
    struct Store {
        resume: Option<Snapshot>,
        save_after: Vec<u64>,
        stop_after: Option<u64>,
        saved: Vec<Snapshot>,
    }
    impl Checkpoints for Store {
        fn resume(&mut self) -> Option<Snapshot> {
            self.resume.take()
        }
        fn due(&mut self, position: Position) -> Due {
            if Some(position.rounds) == self.stop_after {
                Due::SaveAndStop
            } else if self.save_after.contains(&position.rounds) {
                Due::Save
            } else {
                Due::No
            }
        }
        fn save(&mut self, snapshot: &Snapshot) -> Result<(), BoxError> {
            self.saved.push(snapshot.clone());
            Ok(())
        }
    }

    #[test]
    fn a_run_stopped_at_a_checkpoint_and_resumed_does_what_an_uninterrupted_run_does() {
        for depth in [0, 2] {
            for wait_at in [None, Some(3)] {
                let (stats, log, waited) = run(depth, wait_at);
                for stop in 1..(6 - depth as u64) {
                    let fresh =
                        || Inline { worker: Recorder { last_synced: None, log: vec![] }, pending: VecDeque::new() };
                    let options = RunOptions { pipeline_depth: depth };
                    let mut first = Store { resume: None, save_after: vec![1], stop_after: Some(stop), saved: vec![] };
                    let mut scheduler = Count { limit: 6, wait_at, waited: false };
                    let stopped = drive_checkpointed(&mut scheduler, &mut Check, &mut fresh(), options, &mut first);
                    assert!(matches!(stopped, Err(EngineError::Interrupted { rounds }) if rounds == stop));
                    let snapshot = first.saved.pop().unwrap();
                    assert_eq!(snapshot.rounds, stop);
                    let mut second =
                        Store { resume: Some(snapshot), save_after: vec![], stop_after: None, saved: vec![] };
                    let mut scheduler = Count { limit: 6, wait_at, waited: false };
                    let mut transport = fresh();
                    let resumed =
                        drive_checkpointed(&mut scheduler, &mut Check, &mut transport, options, &mut second).unwrap();
                    assert_eq!(resumed, stats, "depth {depth}, stop after {stop}");
                    assert_eq!(transport.worker.log, log, "depth {depth}, stop after {stop}");
                    assert_eq!(scheduler.waited, waited);
                }
            }
        }
    }

    #[test]
    fn a_snapshot_for_another_number_of_workers_is_refused() {
        let mut store = Store { resume: None, save_after: vec![], stop_after: Some(2), saved: vec![] };
        let mut transport = Inline { worker: Recorder { last_synced: None, log: vec![] }, pending: VecDeque::new() };
        let mut scheduler = Count { limit: 6, wait_at: None, waited: false };
        let _ = drive_checkpointed(&mut scheduler, &mut Check, &mut transport, RunOptions::default(), &mut store);
        let mut snapshot = store.saved.pop().unwrap();
        snapshot.workers.push(vec![]);
        let mut store = Store { resume: Some(snapshot), save_after: vec![], stop_after: None, saved: vec![] };
        let mut scheduler = Count { limit: 6, wait_at: None, waited: false };
        let result = drive_checkpointed(&mut scheduler, &mut Check, &mut transport, RunOptions::default(), &mut store);
        assert!(matches!(result, Err(EngineError::Checkpoint(message)) if message.contains("2 workers")));
    }
}
