//! The embedded runtime against a plain sequential computation, with rotation and failures.

use strads_core::{
    Aggregator, Assignment, Decision, EngineError, Interruptible, Launcher, Plan, Program, Pulled, Round, RunOptions,
    Scheduler, Slot, Worker,
};
use strads_engine::Rotation;
use strads_runtime::Embedded;

/// Workers own slices of a vector; each round every worker returns the dot product of its slice
/// with the committed weights' current scalar, and the aggregator moves the scalar.
struct Dot;
impl Program for Dot {
    type Task = f64;
    type Partial = f64;
    type Commit = f64;
    type Feedback = f64;
    type Block = ();
}

struct Shard {
    values: Vec<f64>,
    scale: f64,
}
impl Worker<Dot> for Shard {
    fn push(&mut self, _round: Round, task: &f64) -> f64 {
        self.values.iter().map(|v| v * self.scale * task).sum()
    }
    fn sync(&mut self, _round: Round, commit: &f64) {
        self.scale = *commit;
    }
}

struct Steps {
    rounds: u64,
    history: Vec<f64>,
}
impl Scheduler<Dot> for Steps {
    fn schedule(&mut self, slot: Slot) -> Decision<f64> {
        if slot.round < self.rounds { Decision::Run(Plan::all(1.0 + slot.round as f64)) } else { Decision::Stop }
    }
    fn feedback(&mut self, _round: Round, feedback: f64) {
        self.history.push(feedback);
    }
}

struct Mean;
impl Aggregator<Dot> for Mean {
    fn pull(&mut self, _round: Round, _tasks: &Assignment<f64>, partials: Vec<f64>) -> Pulled<f64, f64> {
        let total: f64 = partials.iter().sum();
        let next = 1.0 + (total / 1000.0).sin();
        Pulled { commit: Some(Assignment::All(next)), feedback: total }
    }
}

fn data() -> Vec<f64> {
    (0..103).map(|i| ((i * 37) % 11) as f64 - 4.5).collect()
}

fn run_dot(workers: usize, depth: usize) -> Vec<f64> {
    dot_on(&Embedded::new(workers).unwrap(), depth)
}

/// The dot-product program on `launcher`, pipelined `depth` rounds deep.
fn dot_on(launcher: &impl Launcher, depth: usize) -> Vec<f64> {
    let (all, workers) = (data(), launcher.workers());
    let (steps, _) = launcher
        .run(
            RunOptions { pipeline_depth: depth },
            |p| Ok(Shard { values: all[strads_core::shard_range(all.len(), workers, p)].to_vec(), scale: 1.0 }),
            || (Steps { rounds: 12, history: vec![] }, Mean),
        )
        .unwrap()
        .unwrap();
    steps.history
}

/// The same computation written as a plain loop.
fn sequential_dot(depth: usize) -> Vec<f64> {
    let all = data();
    let sum: f64 = all.iter().sum();
    let mut scales = vec![1.0];
    let mut history = vec![];
    for round in 0..12usize {
        // With pipelining, round t sees the commit of round t - depth - 1.
        let seen = if round > depth { scales[round - depth] } else { 1.0 };
        let total = sum * seen * (1.0 + round as f64);
        history.push(total);
        scales.push(1.0 + (total / 1000.0).sin());
    }
    history
}

#[test]
fn every_worker_count_matches_the_sequential_loop() {
    for depth in 0..3 {
        let reference = sequential_dot(depth);
        for workers in 1..=4 {
            let got = run_dot(workers, depth);
            assert_eq!(got.len(), reference.len());
            for (a, b) in got.iter().zip(&reference) {
                assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "P={workers} s={depth}: {got:?} vs {reference:?}");
            }
            assert_eq!(got, run_dot(workers, depth), "P={workers} s={depth} is not deterministic");
        }
    }
}

/// Blocks of counters rotate; each worker adds its id + 1 to the counter of the block it holds.
#[test]
fn an_interrupted_run_ends_after_the_rounds_so_far_with_their_results() {
    for (workers, depth) in [(1, 0), (2, 0), (3, 2)] {
        let runtime = Embedded::new(workers).unwrap();
        let asked = std::sync::atomic::AtomicU64::new(0);
        // Says stop at the sixth time it is asked.
        let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 5;
        let interruptible = Interruptible::new(&runtime, &stop);
        assert_eq!(dot_on(&interruptible, depth), run_dot(workers, depth)[..5], "P={workers} s={depth}");
        assert!(interruptible.interrupted());

        let never = || false;
        let uninterrupted = Interruptible::new(&runtime, &never);
        assert_eq!(dot_on(&uninterrupted, depth), run_dot(workers, depth));
        assert!(!uninterrupted.interrupted());
    }
}

struct Spin;
impl Program for Spin {
    type Task = u64;
    type Partial = Vec<(usize, Vec<u64>)>;
    type Commit = ();
    type Feedback = Vec<Vec<(usize, Vec<u64>)>>;
    type Block = (usize, Vec<u64>);
}

struct Hand {
    id: usize,
    blocks: std::collections::VecDeque<(usize, Vec<u64>)>,
    rotation: Rotation,
}
impl Worker<Spin> for Hand {
    fn push(&mut self, _round: Round, subround: &u64) -> Vec<(usize, Vec<u64>)> {
        if *subround == u64::MAX {
            return self.blocks.iter().cloned().collect();
        }
        let front = self.blocks.front_mut().unwrap();
        assert_eq!(front.0, self.rotation.active_block(self.id, *subround));
        front.1[self.id] += self.id as u64 + 1;
        vec![]
    }
    fn sync(&mut self, _round: Round, _commit: &()) {}
    fn pass_block(&mut self) -> Option<(usize, Vec<u64>)> {
        self.blocks.pop_front()
    }
    fn receive_block(&mut self, block: (usize, Vec<u64>)) {
        self.blocks.push_back(block);
    }
}

struct Passes {
    subrounds: u64,
    collected: Vec<Vec<(usize, Vec<u64>)>>,
}
impl Scheduler<Spin> for Passes {
    fn schedule(&mut self, slot: Slot) -> Decision<u64> {
        match slot.round {
            r if r < self.subrounds => Decision::Run(Plan::all(r).rotating()),
            r if r == self.subrounds => Decision::Run(Plan::all(u64::MAX)),
            _ => Decision::Stop,
        }
    }
    fn feedback(&mut self, _round: Round, feedback: Vec<Vec<(usize, Vec<u64>)>>) {
        self.collected = feedback;
    }
}
struct Gather;
impl Aggregator<Spin> for Gather {
    fn pull(
        &mut self,
        _round: Round,
        _tasks: &Assignment<u64>,
        partials: Vec<Vec<(usize, Vec<u64>)>>,
    ) -> Pulled<(), Vec<Vec<(usize, Vec<u64>)>>> {
        Pulled { commit: None, feedback: partials }
    }
}

#[test]
fn rotating_blocks_visit_every_worker_once_per_pass() {
    for workers in 1..=4 {
        for blocks in [workers, workers + 1, 2 * workers + 1] {
            let rotation = Rotation::new(blocks, workers).unwrap();
            let passes = 3;
            let runtime = Embedded::new(workers).unwrap();
            let (result, _) = runtime
                .run(
                    RunOptions::default(),
                    |p| {
                        let blocks = rotation.initial_hand(p).map(|b| (b, vec![0; workers])).collect();
                        Ok(Hand { id: p, blocks, rotation })
                    },
                    || (Passes { subrounds: passes * blocks as u64, collected: vec![] }, Gather),
                )
                .unwrap()
                .unwrap();
            let mut all: Vec<(usize, Vec<u64>)> = result.collected.into_iter().flatten().collect();
            all.sort();
            assert_eq!(all.len(), blocks);
            for (b, (id, counters)) in all.iter().enumerate() {
                assert_eq!(*id, b);
                for (p, &c) in counters.iter().enumerate() {
                    assert_eq!(c, passes * (p as u64 + 1), "block {b} worker {p} ({workers} workers, {blocks} blocks)");
                }
            }
        }
    }
}

#[test]
fn zero_workers_are_refused() {
    assert!(matches!(Embedded::new(0), Err(EngineError::Options(_))));
}

#[test]
fn a_worker_that_cannot_start_is_reported_by_id() {
    let runtime = Embedded::new(3).unwrap();
    let result = runtime.run(
        RunOptions::default(),
        |p| {
            if p == 2 { Err("shard 2 is missing".into()) } else { Ok(Shard { values: vec![1.0], scale: 1.0 }) }
        },
        || (Steps { rounds: 3, history: vec![] }, Mean),
    );
    match result {
        Err(EngineError::Setup { worker, source }) => {
            assert_eq!(worker, 2);
            assert!(source.to_string().contains("missing"));
        }
        other => panic!("expected a setup error, got {:?}", other.map(|_| ())),
    }
}

/// A worker that panics in its push stops the run with an error instead of hanging it.
struct Fragile {
    id: usize,
}
impl Worker<Dot> for Fragile {
    fn push(&mut self, round: Round, _task: &f64) -> f64 {
        if self.id == 1 && round.index == 2 {
            panic!("worker 1 broke in round 2");
        }
        1.0
    }
    fn sync(&mut self, _round: Round, _commit: &f64) {}
}

#[test]
fn a_panicking_worker_ends_the_run_with_its_message() {
    let runtime = Embedded::new(2).unwrap();
    let result =
        runtime.run(RunOptions::default(), |p| Ok(Fragile { id: p }), || (Steps { rounds: 10, history: vec![] }, Mean));
    match result {
        Err(EngineError::WorkerFailed { worker, reason }) => {
            assert_eq!(worker, 1);
            assert!(reason.contains("round 2"), "{reason}");
        }
        other => panic!("expected a worker failure, got {:?}", other.map(|_| ())),
    }
}

/// Every third round is for worker 0 alone; each worker answers with its id and how many rounds
/// it has pushed and commits it has synced so far.
struct Count;
impl Program for Count {
    type Task = ();
    type Partial = (usize, u64, u64);
    type Commit = u64;
    type Feedback = ();
    type Block = ();
}

struct Counter {
    id: usize,
    pushes: u64,
    syncs: u64,
}
impl Worker<Count> for Counter {
    fn push(&mut self, _round: Round, _task: &()) -> (usize, u64, u64) {
        self.pushes += 1;
        (self.id, self.pushes, self.syncs)
    }
    fn sync(&mut self, _round: Round, commit: &u64) {
        self.syncs = *commit;
    }
}

struct Alternate;
impl Scheduler<Count> for Alternate {
    fn schedule(&mut self, slot: Slot) -> Decision<()> {
        match slot.round {
            r if r >= 10 => Decision::Stop,
            r if r.is_multiple_of(3) => Decision::Run(Plan::leader(())),
            _ => Decision::Run(Plan::all(())),
        }
    }
    fn feedback(&mut self, _round: Round, _feedback: ()) {}
}

#[derive(Default)]
struct Record(Vec<Vec<(usize, u64, u64)>>);
impl Aggregator<Count> for Record {
    fn pull(&mut self, round: Round, _tasks: &Assignment<()>, partials: Vec<(usize, u64, u64)>) -> Pulled<u64, ()> {
        self.0.push(partials);
        // Commit number `round + 1`: a worker's count of syncs is the last commit it applied.
        Pulled { commit: Some(Assignment::All(round.index + 1)), feedback: () }
    }
}

fn count_on(launcher: &impl Launcher, depth: usize) -> Vec<Vec<(usize, u64, u64)>> {
    let (_, record) = launcher
        .run(
            RunOptions { pipeline_depth: depth },
            |id| Ok(Counter { id, pushes: 0, syncs: 0 }),
            || (Alternate, Record::default()),
        )
        .unwrap()
        .unwrap();
    record.0
}

#[test]
fn a_round_for_the_leader_alone_reaches_worker_0_and_every_commit_reaches_all() {
    for depth in 0..3 {
        for workers in 1..=3 {
            let rounds = count_on(&Embedded::new(workers).unwrap(), depth);
            assert_eq!(rounds, count_on(&strads_engine::Inline::new(workers).unwrap(), depth), "P={workers} s={depth}");
            assert_eq!(rounds.len(), 10);
            for (r, partials) in rounds.iter().enumerate() {
                let r = r as u64;
                let alone = r.is_multiple_of(3);
                let ids: Vec<usize> = partials.iter().map(|p| p.0).collect();
                let expected: Vec<usize> = if alone { vec![0] } else { (0..workers).collect() };
                assert_eq!(ids, expected, "P={workers} s={depth} round {r}");
                // Rounds 0..r that every worker pushed: those not divisible by 3.
                let shared_before = (0..r).filter(|k| !k.is_multiple_of(3)).count() as u64;
                for &(id, pushes, syncs) in partials {
                    let want = if id == 0 { r + 1 } else { shared_before + 1 };
                    assert_eq!(pushes, want, "P={workers} s={depth} round {r} worker {id}");
                    // Every worker, pushing or not, applied the commits of rounds 0..r - depth.
                    assert_eq!(syncs, r.saturating_sub(depth as u64), "P={workers} s={depth} round {r} worker {id}");
                }
            }
        }
    }
}

/// Forty rounds for worker 0 alone, then two shared ones: the others are sent nothing for the
/// forty (their commits are held, more of them than the hold keeps at once), and at the shared
/// rounds every worker has applied every commit, in order.
struct LongAlone;
impl Scheduler<Count> for LongAlone {
    fn schedule(&mut self, slot: Slot) -> Decision<()> {
        match slot.round {
            r if r >= 42 => Decision::Stop,
            r if r < 40 => Decision::Run(Plan::leader(())),
            _ => Decision::Run(Plan::all(())),
        }
    }
    fn feedback(&mut self, _round: Round, _feedback: ()) {}
}

#[test]
fn commits_held_through_a_long_run_of_leader_rounds_all_reach_the_others_in_order() {
    for depth in 0..3 {
        for workers in 1..=3 {
            let on = |embedded: bool| {
                let make = |id| Ok(Counter { id, pushes: 0, syncs: 0 });
                let options = RunOptions { pipeline_depth: depth };
                let result = if embedded {
                    Embedded::new(workers).unwrap().run(options, make, || (LongAlone, Record::default()))
                } else {
                    strads_engine::Inline::new(workers).unwrap().run(options, make, || (LongAlone, Record::default()))
                };
                result.unwrap().unwrap().1.0
            };
            let rounds = on(true);
            assert_eq!(rounds, on(false), "P={workers} s={depth}");
            for (r, partials) in rounds.iter().enumerate().skip(40) {
                let r = r as u64;
                assert_eq!(partials.len(), workers, "round {r}");
                for &(id, pushes, syncs) in partials {
                    let want = if id == 0 { r + 1 } else { r - 39 };
                    assert_eq!(pushes, want, "P={workers} s={depth} round {r} worker {id}");
                    assert_eq!(syncs, r.saturating_sub(depth as u64), "P={workers} s={depth} round {r} worker {id}");
                }
            }
        }
    }
}

#[test]
fn a_rotating_plan_for_the_leader_alone_is_refused() {
    struct Bad;
    impl Scheduler<Count> for Bad {
        fn schedule(&mut self, _slot: Slot) -> Decision<()> {
            Decision::Run(Plan::leader(()).rotating())
        }
        fn feedback(&mut self, _round: Round, _feedback: ()) {}
    }
    let result = Embedded::new(2).unwrap().run(
        RunOptions::default(),
        |id| Ok(Counter { id, pushes: 0, syncs: 0 }),
        || (Bad, Record::default()),
    );
    let error = result.err().expect("a rotating leader-only plan ran");
    assert!(error.to_string().contains("cannot rotate"), "{error}");
}
