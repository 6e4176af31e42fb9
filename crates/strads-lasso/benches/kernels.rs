//! Kernel benchmarks (`cargo bench -p strads-lasso`): the inner loops a Lasso round is made of.
//!
//! Each kernel runs on fixed, seeded inputs and reports nanoseconds per operation (best of five
//! timings). Parameters are in each kernel's name. No external harness: the numbers are plain
//! wall-clock means over many repetitions, printed as a table.

use std::hint::black_box;
use std::time::Instant;

use strads_core::{Aggregator, Assignment, Decision, Launcher, Plan, Program, Pulled, Round, RunOptions, Scheduler};
use strads_core::{Slot, Worker};
use strads_engine::{DynamicConfig, DynamicScheduler, NoDependency, Priority, SumTree};
use strads_lasso::program::{LassoWorker, Partial, SolveSpec, SolveTask, Task};
use strads_lasso::{GeneratorSpec, Loss, generate};
use strads_runtime::Embedded;

/// Best of five: nanoseconds per operation of `run`, which performs `ops` operations.
fn time(ops: u64, mut run: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_nanos() as f64 / ops as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn report(name: &str, ns: f64) {
    println!("{name:<58} {ns:>12.1} ns/op");
}

/// A program whose rounds do nothing: what a round costs the runtime itself.
struct Empty;
impl Program for Empty {
    type Task = u32;
    type Partial = u32;
    type Commit = u32;
    type Feedback = ();
    type Block = ();
}
struct Idle;
impl Worker<Empty> for Idle {
    fn push(&mut self, _round: Round, task: &u32) -> u32 {
        *task
    }
    fn sync(&mut self, _round: Round, _commit: &u32) {}
}
struct Rounds(u64);
impl Scheduler<Empty> for Rounds {
    fn schedule(&mut self, slot: Slot) -> Decision<u32> {
        if slot.round < self.0 { Decision::Run(Plan::all(1)) } else { Decision::Stop }
    }
    fn feedback(&mut self, _round: Round, _feedback: ()) {}
}
struct Sum;
impl Aggregator<Empty> for Sum {
    fn pull(&mut self, _round: Round, _tasks: &Assignment<u32>, partials: Vec<u32>) -> Pulled<u32, ()> {
        Pulled { commit: Some(Assignment::All(partials.iter().sum())), feedback: () }
    }
}

fn main() {
    println!("{:<58} {:>15}", "kernel", "time");

    // Column kernels on a generated sparse problem: 2,000 rows, 50 stored values per column.
    let spec = GeneratorSpec { rows: 2000, features: 2000, block: 10, density: 0.025, ..GeneratorSpec::default() };
    let data = generate(&spec).data;
    let columns = data.x.to_columns();
    let mut residual: Vec<f64> = data.y.clone();
    let per_column = columns.nnz() as f64 / columns.cols() as f64;
    let ns = time(columns.cols() as u64 * 100, || {
        for _ in 0..100 {
            for j in 0..columns.cols() {
                black_box(columns.dot(j, black_box(&residual)));
            }
        }
    });
    report(&format!("sparse column dot (n=2000, {per_column:.0} values/column)"), ns);
    let ns = time(columns.cols() as u64 * 100, || {
        for _ in 0..100 {
            for j in 0..columns.cols() {
                columns.axpy(j, black_box(1e-9), &mut residual);
            }
        }
    });
    report(&format!("sparse column axpy (n=2000, {per_column:.0} values/column)"), ns);

    // A block round's passes: what one coordinate update costs per stored value it touches (a
    // dot and, when the coefficient moves, an axpy; 12 bytes streamed per value each). Compare
    // with scikit-learn's coordinate descent on the same columns: bench/kernel_peer.py.
    let shared = std::sync::Arc::new(columns.clone());
    let mut worker = LassoWorker::block(Loss::Squared, shared.clone(), data.y.clone(), 0, 1);
    let lambda_max = columns.transpose_mul(&data.y).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let epochs = 20;
    let spec = SolveSpec {
        alpha: 0.01 * lambda_max,
        ridge: 0.0,
        target: -1.0,
        max_epochs: epochs,
        anderson: 0,
        bound: false,
        centre: false,
        positive: false,
    };
    let task =
        Task::Solve(SolveTask { coords: (0..columns.cols() as u32).collect(), spec, dense: false, split: false });
    let ns = time(columns.nnz() as u64 * u64::from(epochs), || {
        black_box(worker.push(Round { index: 1, synced: 0 }, &task));
    });
    report(&format!("block pass, per stored value (n=2000, {per_column:.0} values/column)"), ns);

    // The logistic solve by proximal Newton steps, per stored value and inner pass: a dot and an
    // update of two row arrays per value, with each Newton step's curvatures, line search and gap
    // check spread over its passes. liblinear's newGLMNET does the same work per value.
    let signs: Vec<f64> = data.y.iter().map(|&v| if v > 0.0 { 1.0 } else { -1.0 }).collect();
    let half: Vec<f64> = signs.iter().map(|v| 0.5 * v).collect();
    let mut worker = LassoWorker::block(Loss::Logistic, shared, signs.clone(), 0, 1);
    let lambda_max = columns.transpose_mul(&half).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let spec = SolveSpec {
        alpha: 0.01 * lambda_max,
        ridge: 0.0,
        target: -1.0,
        max_epochs: epochs,
        anderson: 5,
        bound: false,
        centre: false,
        positive: false,
    };
    let task =
        Task::Solve(SolveTask { coords: (0..columns.cols() as u32).collect(), spec, dense: false, split: false });
    let round = Round { index: 1, synced: 0 };
    let Partial::Solved(solved) = worker.push(round, &task) else { unreachable!("a solve task gets a solve") };
    let ns = time(columns.nnz() as u64 * u64::from(solved.epochs), || {
        black_box(worker.push(round, &task));
    });
    report(&format!("logistic Newton pass, per stored value ({per_column:.0} values/column)"), ns);

    // Sampling structures.
    let mut tree = SumTree::new(1 << 16);
    let ns = time(1 << 20, || {
        for i in 0..(1u64 << 20) {
            tree.set((i as usize * 7919) & 0xffff, (i % 13) as f64);
        }
    });
    report("sum tree set (65,536 weights)", ns);
    let total = tree.total();
    let ns = time(1 << 20, || {
        for i in 0..(1u64 << 20) {
            black_box(tree.find((i as f64 * 0.618_033_988_7).fract() * total));
        }
    });
    report("sum tree find (65,536 weights)", ns);
    for (set_size, candidates) in [(1, 2), (8, 16), (32, 64)] {
        let mut scheduler = DynamicScheduler::new(DynamicConfig {
            params: 50_000,
            set_size,
            candidates,
            rho: None,
            priority: Priority::Weighted,
            order: Default::default(),
            warmup_rounds: 0,
            seed: 1,
        });
        for j in (0..50_000).step_by(7) {
            scheduler.set_weight(j, 1.0 + (j % 5) as f64);
        }
        scheduler.set_base(0.1);
        let ns = time(100_000, || {
            for _ in 0..100_000 {
                let kept = scheduler.select(&mut NoDependency);
                scheduler.complete(&kept);
            }
        });
        report(&format!("dynamic select + complete (p=50,000, L={set_size}, L'={candidates})"), ns);
    }

    // A round of the embedded runtime with nothing to compute.
    for workers in [1, 2] {
        let rounds = 20_000;
        let runtime = Embedded::new(workers).expect("workers");
        let ns = time(rounds, || {
            runtime.run(RunOptions::default(), |_| Ok(Idle), || (Rounds(rounds), Sum)).expect("the empty program runs");
        });
        report(&format!("empty round, embedded runtime (P={workers})"), ns);
    }
}
