//! A user-written scheduled program: PageRank with model-parallel, rotating rank accumulators.
//!
//! It uses only the public API (`strads-core`, `strads-engine`, `strads-runtime`). Each worker
//! owns a range of vertices: their ranks and their out-edges. The new ranks are accumulated in
//! blocks, one per worker's vertex range, that travel around the ring of workers (the static
//! engine's rotation): in each sub-round a worker adds the contributions of its edges into the
//! block it holds, so no two workers ever write the same accumulator, and after one pass every
//! block is back with its owner, complete. An `Apply` round then turns the sums into ranks and
//! reports how much they moved; the scheduler stops when they no longer move.
//!
//! Run it with `cargo run --release -p strads-examples --example pagerank -- [WORKERS] [VERTICES]`.
//! It checks the result against a plain sequential power iteration on the same graph.

use std::collections::VecDeque;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use strads_core::{
    Aggregator, Assignment, Decision, Launcher, Plan, Program, Pulled, Round, RunOptions, Scheduler, Slot, Worker,
    shard_range,
};
use strads_engine::Rotation;
use strads_runtime::Embedded;

const DAMPING: f64 = 0.85;

/// The program's typed messages.
struct PageRank;

impl Program for PageRank {
    type Task = Task;
    type Partial = Partial;
    type Commit = ();
    type Feedback = Partial;
    type Block = Accumulator;
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Task {
    /// Add your edges' contributions into the block you hold (then pass it on).
    Accumulate,
    /// Turn your own block's sums into new ranks.
    Apply,
    /// Send your ranks.
    Report,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Partial {
    Nothing,
    /// Sum of |new rank - old rank| over the worker's vertices.
    Moved(f64),
    /// The worker's first vertex and its ranks.
    Ranks(usize, Vec<f64>),
}

/// Sums of incoming contributions for the vertices `first..first + sums.len()`.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Accumulator {
    first: usize,
    sums: Vec<f64>,
}

struct Shard {
    vertices: std::ops::Range<usize>,
    ranks: Vec<f64>,
    /// Out-edges of each owned vertex.
    edges: Vec<Vec<usize>>,
    hand: VecDeque<Accumulator>,
    total: usize,
}

impl Worker<PageRank> for Shard {
    fn push(&mut self, _round: Round, task: &Task) -> Partial {
        match task {
            Task::Accumulate => {
                let Some(block) = self.hand.front_mut() else { return Partial::Nothing };
                let end = block.first + block.sums.len();
                for (rank, targets) in self.ranks.iter().zip(&self.edges) {
                    let share = rank / targets.len() as f64;
                    for &v in targets.iter().filter(|&&v| v >= block.first && v < end) {
                        block.sums[v - block.first] += share;
                    }
                }
                Partial::Nothing
            }
            Task::Apply => {
                let Some(own) = self.hand.front_mut() else { return Partial::Nothing };
                debug_assert_eq!(own.first, self.vertices.start, "a full pass brings the block home");
                let base = (1.0 - DAMPING) / self.total as f64;
                let mut moved = 0.0;
                for (rank, sum) in self.ranks.iter_mut().zip(own.sums.iter_mut()) {
                    let new = base + DAMPING * *sum;
                    moved += (new - *rank).abs();
                    *rank = new;
                    *sum = 0.0;
                }
                Partial::Moved(moved)
            }
            Task::Report => Partial::Ranks(self.vertices.start, self.ranks.clone()),
        }
    }

    fn sync(&mut self, _round: Round, _commit: &()) {}

    fn pass_block(&mut self) -> Option<Accumulator> {
        self.hand.pop_front()
    }

    fn receive_block(&mut self, block: Accumulator) {
        self.hand.push_back(block);
    }
}

/// The static plan: `P` rotating sub-rounds, one apply round, until the ranks stop moving.
struct Iterations {
    workers: u64,
    step: u64,
    moved: f64,
    iterations: u64,
    reported: bool,
    ranks: Vec<(usize, Vec<f64>)>,
}

impl Scheduler<PageRank> for Iterations {
    fn schedule(&mut self, _slot: Slot) -> Decision<Task> {
        if self.reported {
            return Decision::Stop;
        }
        if self.moved < 1e-12 || self.iterations == 200 {
            self.reported = true;
            return Decision::Run(Plan::all(Task::Report));
        }
        self.step += 1;
        if self.step <= self.workers {
            Decision::Run(Plan::all(Task::Accumulate).rotating())
        } else {
            self.step = 0;
            self.iterations += 1;
            Decision::Run(Plan::all(Task::Apply))
        }
    }

    fn feedback(&mut self, _round: Round, feedback: Partial) {
        match feedback {
            Partial::Moved(moved) => self.moved = moved,
            Partial::Ranks(first, ranks) => self.ranks.push((first, ranks)),
            Partial::Nothing => {}
        }
    }
}

/// `pull`: adds up how far the ranks moved; collects them at the end. Nothing to commit.
struct Totals;

impl Aggregator<PageRank> for Totals {
    fn pull(&mut self, _round: Round, _tasks: &Assignment<Task>, partials: Vec<Partial>) -> Pulled<(), Partial> {
        let mut moved = None;
        let mut ranks = vec![];
        for partial in partials {
            match partial {
                Partial::Moved(m) => *moved.get_or_insert(0.0) += m,
                Partial::Ranks(first, values) => {
                    ranks.extend(values.into_iter().enumerate().map(|(i, r)| (first + i, r)))
                }
                Partial::Nothing => {}
            }
        }
        let feedback = match moved {
            Some(m) => Partial::Moved(m),
            None if !ranks.is_empty() => Partial::Ranks(0, ranks.into_iter().map(|(_, r)| r).collect()),
            None => Partial::Nothing,
        };
        Pulled { commit: None, feedback }
    }
}

/// A random graph in which every vertex links to at least one other.
fn graph(vertices: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..vertices)
        .map(|u| {
            let degree = rng.random_range(1..8);
            (0..degree).map(|_| (u + rng.random_range(1..vertices)) % vertices).collect()
        })
        .collect()
}

/// Plain power iteration, for comparison.
fn sequential(edges: &[Vec<usize>]) -> Vec<f64> {
    let n = edges.len();
    let mut ranks = vec![1.0 / n as f64; n];
    for _ in 0..200 {
        let mut sums = vec![0.0; n];
        for (u, targets) in edges.iter().enumerate() {
            for &v in targets {
                sums[v] += ranks[u] / targets.len() as f64;
            }
        }
        let new: Vec<f64> = sums.iter().map(|s| (1.0 - DAMPING) / n as f64 + DAMPING * s).collect();
        let moved: f64 = new.iter().zip(&ranks).map(|(a, b)| (a - b).abs()).sum();
        ranks = new;
        if moved < 1e-12 {
            break;
        }
    }
    ranks
}

/// Runs the scheduled PageRank on `workers` worker threads; returns the ranks and the iterations.
fn pagerank(edges: &[Vec<usize>], workers: usize) -> Result<(Vec<f64>, u64), Box<dyn std::error::Error>> {
    let vertices = edges.len();
    let runtime = Embedded::new(workers)?;
    let rotation = Rotation::new(workers, workers).ok_or("at least one worker, and no more than vertices")?;
    let (scheduler, _) = runtime
        .run(
            RunOptions::default(),
            |p| {
                let range = shard_range(vertices, workers, p);
                let hand = rotation
                    .initial_hand(p)
                    .map(|b| {
                        let block = shard_range(vertices, workers, b);
                        Accumulator { first: block.start, sums: vec![0.0; block.len()] }
                    })
                    .collect();
                Ok(Shard {
                    ranks: vec![1.0 / vertices as f64; range.len()],
                    edges: edges[range.clone()].to_vec(),
                    vertices: range,
                    hand,
                    total: vertices,
                })
            },
            || {
                let plan = Iterations {
                    workers: workers as u64,
                    step: 0,
                    moved: f64::INFINITY,
                    iterations: 0,
                    reported: false,
                    ranks: vec![],
                };
                (plan, Totals)
            },
        )?
        .ok_or("this process does not lead the run")?;
    let ranks = scheduler.ranks.into_iter().flat_map(|(_, r)| r).collect();
    Ok((ranks, scheduler.iterations))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let workers: usize = args.next().map_or(Ok(3), |a| a.parse())?;
    let vertices: usize = args.next().map_or(Ok(10_000), |a| a.parse())?;
    let edges = graph(vertices, 7);
    let (ranks, iterations) = pagerank(&edges, workers)?;
    let reference = sequential(&edges);
    let worst = ranks.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let mut top: Vec<(usize, f64)> = ranks.iter().copied().enumerate().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("PageRank of {vertices} vertices on {workers} workers, {iterations} iterations");
    for (v, r) in top.iter().take(5) {
        println!("  vertex {v:>6}  rank {r:.6e}");
    }
    println!("largest difference from a sequential power iteration: {worst:.2e}");
    if worst > 1e-10 {
        return Err("the scheduled run disagrees with the sequential one".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_worker_count_matches_the_sequential_power_iteration() {
        let edges = graph(3_000, 11);
        let reference = sequential(&edges);
        for workers in 1..=4 {
            let (ranks, _) = pagerank(&edges, workers).unwrap();
            assert_eq!(ranks.len(), reference.len());
            let worst = ranks.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-12, "{workers} workers: off by {worst}");
            assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9, "ranks sum to one");
        }
    }
}
