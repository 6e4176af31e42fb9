//! Kernel benchmarks (`cargo bench -p strads-mf`): the half-steps an MF iteration is made of, in
//! nanoseconds per rating, beside a plain stream of the bytes a rating costs.
//!
//! One worker owns every user and item of a generated problem; each kernel is a `push` (or `sync`)
//! of that worker, timed best of five. A CCD++ vector solve streams, per rating, the other side's
//! index (4 bytes) and the residual (8 bytes) and gathers one entry of a vector that stays in cache;
//! the rank-one update reads and writes the residual as well; the `stream` line is a sum over 12
//! bytes per element of a buffer as large, the memory limit of such a pass on this machine.

use std::hint::black_box;
use std::time::Instant;

use strads_core::{Round, Worker};
use strads_mf::generate::{GeneratorSpec, generate};
use strads_mf::{Algorithm, Bias, CheckedParams, Commit, MfParams, Shard, ShardData, Side, Task};

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
    println!("{name:<58} {ns:>12.2} ns/rating");
}

const ROUND: Round = Round { index: 0, synced: 0 };

fn params(algorithm: Algorithm, rank: usize) -> CheckedParams {
    MfParams { algorithm, rank, lambda: Some(0.1), init_scale: Some(0.1), bias: Bias::Full, ..MfParams::default() }
        .check(1)
        .unwrap_or_else(|e| unreachable!("fixed settings: {e}"))
}

/// One worker holding every rating of the problem.
fn shard(params: &CheckedParams, users: usize, items: usize, ratings: &[(u32, u32, f64)]) -> Shard {
    let mut user_counts = vec![0u32; users];
    let mut item_counts = vec![0u32; items];
    for &(u, i, _) in ratings {
        user_counts[u as usize] += 1;
        item_counts[i as usize] += 1;
    }
    let data = ShardData {
        users: 0..users,
        items: 0..items,
        user_ratings: ratings.to_vec(),
        item_ratings: ratings.to_vec(),
        test: Vec::new(),
        validation: Vec::new(),
        user_counts,
        item_counts,
        all_users: users,
        all_items: items,
    };
    Shard::new(params, data, 0.0, 0.0)
}

fn main() {
    let (users, items) = (20_000, 4_000);
    let problem = generate(&GeneratorSpec { users, items, rank: 10, density: 0.0125, noise: 0.5, seed: 1 });
    let ratings: Vec<(u32, u32, f64)> = problem.ratings.iter().map(|r| (r.user, r.item, r.value)).collect();
    let n = ratings.len() as u64;
    println!("{} users x {} items, {} ratings (a rating is 12 bytes: index and residual)", users, items, n);

    let stream: Vec<(u32, f64)> = ratings.iter().map(|&(_, i, v)| (i, v)).collect();
    let ns = time(n, || {
        // Four running sums, so that the pass is bound by the loads and not by one chain of adds.
        let mut sums = [0.0f64; 4];
        let mut chunks = stream.chunks_exact(4);
        for chunk in &mut chunks {
            for (sum, &(i, v)) in sums.iter_mut().zip(chunk) {
                *sum += v * f64::from(i);
            }
        }
        let rest: f64 = chunks.remainder().iter().map(|&(i, v)| v * f64::from(i)).sum();
        black_box(sums.iter().sum::<f64>() + rest);
    });
    report("stream: one pass over 12 bytes per rating", ns);

    let ccdpp = params(Algorithm::Ccdpp, 10);
    let mut worker = shard(&ccdpp, users, items, &ratings);
    let (u, v): (Vec<f64>, Vec<f64>) = ((0..users).map(|x| x as f64 * 1e-5).collect(), vec![0.05; items]);
    worker.sync(ROUND, &Commit::Begin { t: 0, u: u.clone(), v: v.clone() });
    let ns = time(n, || {
        black_box(worker.push(ROUND, &Task::Solve { t: 0, side: Side::W, finish: false }));
    });
    report("ccdpp: solve u over the ratings by user", ns);
    // A finishing vector subtracts u v^T from both residual copies; a Begin adds it back.
    let ns = time(4 * n, || {
        worker.sync(ROUND, &Commit::Vector { side: Side::H, values: v.clone(), finish: true });
        worker.sync(ROUND, &Commit::Begin { t: 0, u: u.clone(), v: v.clone() });
    });
    report("ccdpp: rank-one update of one residual copy", ns);

    for rank in [10, 50] {
        let ccd = params(Algorithm::Ccd, rank);
        let mut worker = shard(&ccd, users, items, &ratings);
        black_box(worker.push(ROUND, &Task::Rows(Side::W)));
        let ns = time(n, || {
            black_box(worker.push(ROUND, &Task::Rows(Side::W)));
        });
        report(&format!("ccd: one sweep of every user row, K = {rank}"), ns);
        report(&format!("ccd: the same per rating and coordinate, K = {rank}"), ns / (rank + 1) as f64);

        let als = params(Algorithm::Als, rank);
        let mut worker = shard(&als, users, items, &ratings);
        let ns = time(n, || {
            black_box(worker.push(ROUND, &Task::Rows(Side::W)));
        });
        report(&format!("als: every user row solved, K = {rank}"), ns);
        let f = (rank + 1) as f64;
        report(&format!("als: the same per rating and f^2/2 products, K = {rank}"), ns / (f * f / 2.0));

        let cg = CheckedParams { cg_steps: Some(3), ..als };
        let mut worker = shard(&cg, users, items, &ratings);
        // Two item factors in turn, so that every solve starts away from its answer (CG from a
        // solved row stops after its first residual); the commit's copy is timed with it.
        let d = rank + 2;
        let factor = |shift: f64| -> Vec<f64> {
            (0..items * d).map(|x| if x % d == rank { 1.0 } else { ((x as f64 * 0.618 + shift) % 1.0) * 0.3 }).collect()
        };
        let (first, second) = (factor(0.1), factor(0.5));
        let mut turn = false;
        let ns = time(n, || {
            turn = !turn;
            worker.sync(ROUND, &Commit::Factor(Side::H, if turn { first.clone() } else { second.clone() }));
            black_box(worker.push(ROUND, &Task::Rows(Side::W)));
        });
        report(&format!("als, 3 CG steps: every user row, K = {rank}"), ns);
        // Four applications of the row's matrix, each two passes of (K + 2) entries over its ratings.
        report(&format!("als, 3 CG steps: per rating and multiply-add, K = {rank}"), ns / (8.0 * (f + 1.0)));
    }
}
