//! The round loop: schedule, push, pull, sync, feedback, with up to a pipeline depth of rounds in flight.
//!
//! Rounds are pulled in the order they were pushed, and every worker applies commits in that order
//! before its next push, so the result depends only on the scheduler, the aggregator and the
//! workers, never on the timing of the transport.

use std::collections::VecDeque;
use std::sync::Arc;

use strads_core::{Aggregator, Decision, EngineError, Plan, Program, Round, RunOptions, Scheduler, Slot};

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
    let workers = transport.workers();
    let mut in_flight: VecDeque<(Round, Arc<Plan<P::Task>>)> = VecDeque::new();
    let mut stats = RunStats::default();
    let mut next = 0u64;
    let mut synced = 0u64;
    let mut stopped = false;
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
                    let round = Round { index: next, synced };
                    let plan = Arc::new(plan);
                    transport.push(round, Arc::clone(&plan))?;
                    in_flight.push_back((round, plan));
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
        let Some((round, plan)) = in_flight.pop_front() else {
            break;
        };
        let partials = transport.collect()?;
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
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strads_core::{Assignment, Pulled, Worker};

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
    }

    struct Check;
    impl Aggregator<Echo> for Check {
        fn pull(&mut self, round: Round, tasks: &Assignment<u64>, partials: Vec<(u64, u64)>) -> Pulled<u64, ()> {
            assert_eq!(tasks.for_worker(0), Some(&round.index));
            // The worker had synced exactly the rounds the driver says it had.
            assert_eq!(partials[0], (round.index, round.synced));
            Pulled { commit: Some(Assignment::All(round.index)), feedback: () }
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
}
