//! The Lasso scheduler: which coordinates each round updates, and when to check the duality gap.
//!
//! `dynamic` and `shotgun` run on the dynamic engine's [`DynamicScheduler`] (with priorities and
//! the correlation check, or uniformly without it); `cyclic` and `sequential` run on the static
//! engine's [`RoundRobin`] plan. All four share the rest: a first statistics round, gap checks
//! after about one pass of work over the data (with the pipeline drained, so the gap is computed
//! on one consistent model), screened coordinates leaving the schedule, and a final gap check
//! when a budget of rounds or seconds runs out.

use std::collections::HashMap;
use std::time::Instant;

use strads_core::{Decision, Plan, Round, Scheduler, Slot};
use strads_data::Columns;
use strads_engine::{Dependency, DynamicConfig, DynamicScheduler, Priority, RoundRobin, SelectStats};

use crate::program::{Feedback, LassoProgram, Task};
use crate::{CheckedParams, GapEvery, PriorityRule, SchedulerKind, Status};

/// `|corr(x_a, x_b)|` between two columns (centred when the model has an intercept), cached.
pub struct Correlation<'a> {
    x: &'a Columns,
    mean: Vec<f64>,
    norm: Vec<f64>,
    rows: f64,
    centered: bool,
    cache: HashMap<u64, f32>,
}

/// Pairs cached before the cache is cleared (about 100 MB at most).
const CACHE_LIMIT: usize = 4_000_000;

impl<'a> Correlation<'a> {
    /// Correlations between the columns of `x`.
    pub fn new(x: &'a Columns, centered: bool) -> Self {
        let rows = x.rows() as f64;
        let (mut mean, mut norm) = (Vec::with_capacity(x.cols()), Vec::with_capacity(x.cols()));
        for j in 0..x.cols() {
            let m = if centered && rows > 0.0 { x.sum(j) / rows } else { 0.0 };
            mean.push(m);
            norm.push((x.sq_norm(j) - rows * m * m).max(0.0).sqrt());
        }
        Correlation { x, mean, norm, rows, centered, cache: HashMap::new() }
    }
}

impl Dependency for Correlation<'_> {
    fn dependency(&mut self, a: usize, b: usize) -> f64 {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let key = ((lo as u64) << 32) | hi as u64;
        if let Some(&c) = self.cache.get(&key) {
            return f64::from(c);
        }
        let denominator = self.norm[lo] * self.norm[hi];
        let corr = if denominator > 0.0 {
            let mut dot = self.x.dot_columns(lo, hi);
            if self.centered {
                dot -= self.rows * self.mean[lo] * self.mean[hi];
            }
            (dot / denominator).abs().min(1.0)
        } else {
            0.0
        };
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(key, corr as f32);
        corr
    }
}

enum Order<'a> {
    Dynamic { sampler: DynamicScheduler, dependency: Correlation<'a>, rule: PriorityRule },
    Shotgun { sampler: DynamicScheduler },
    Cyclic { plan: RoundRobin, excluded: Vec<bool>, next: u64 },
}

/// What bounds a run besides convergence.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most update rounds.
    pub max_rounds: u64,
    /// When training must end.
    pub deadline: Option<Instant>,
}

/// The scheduler role of the Lasso program.
pub struct LassoScheduler<'a> {
    order: Order<'a>,
    gap_every: GapEvery,
    budget: Budget,
    started: bool,
    ready: bool,
    done: bool,
    gap_pending: bool,
    final_gap: bool,
    col_nnz: Vec<u64>,
    active_nnz: u64,
    work_since_gap: u64,
    rounds_since_gap: u64,
    pub(crate) update_rounds: u64,
    pub(crate) gap_checks: u64,
    pub(crate) status: Option<Status>,
}

impl<'a> LassoScheduler<'a> {
    /// A scheduler for `features` coordinates; `columns` (all rows) is needed by `dynamic` only.
    pub fn new(params: &CheckedParams, features: usize, columns: Option<&'a Columns>, budget: Budget) -> Self {
        let raw = params.raw();
        let config = |priority, rho: Option<f64>| DynamicConfig {
            params: features,
            set_size: params.set_size,
            candidates: if rho.is_some() { params.candidates } else { params.set_size },
            rho,
            priority,
            order: raw.candidate_order,
            warmup_rounds: params.warmup_rounds(features),
            seed: raw.seed,
        };
        let order = match (raw.scheduler, columns) {
            (SchedulerKind::Dynamic, Some(columns)) => Order::Dynamic {
                sampler: DynamicScheduler::new(config(Priority::Weighted, Some(raw.rho))),
                dependency: Correlation::new(columns, raw.intercept),
                rule: raw.priority,
            },
            (SchedulerKind::Dynamic | SchedulerKind::Shotgun, _) => {
                Order::Shotgun { sampler: DynamicScheduler::new(config(Priority::Uniform, None)) }
            }
            (SchedulerKind::Cyclic | SchedulerKind::Sequential, _) => Order::Cyclic {
                plan: RoundRobin::new(features, params.set_size),
                excluded: vec![false; features],
                next: 0,
            },
        };
        LassoScheduler {
            order,
            gap_every: raw.gap_every,
            budget,
            started: false,
            ready: false,
            done: false,
            gap_pending: false,
            final_gap: false,
            col_nnz: vec![],
            active_nnz: 0,
            work_since_gap: 0,
            rounds_since_gap: 0,
            update_rounds: 0,
            gap_checks: 0,
            status: None,
        }
    }

    /// What the dependency filter did (dynamic and shotgun).
    pub fn select_stats(&self) -> SelectStats {
        match &self.order {
            Order::Dynamic { sampler, .. } | Order::Shotgun { sampler } => sampler.stats(),
            Order::Cyclic { .. } => SelectStats::default(),
        }
    }

    fn exclude(&mut self, j: u32) {
        let jj = j as usize;
        match &mut self.order {
            Order::Dynamic { sampler, .. } | Order::Shotgun { sampler } => {
                if !sampler.is_excluded(jj) {
                    sampler.set_excluded(jj, true);
                    self.active_nnz -= self.col_nnz.get(jj).copied().unwrap_or(0);
                }
            }
            Order::Cyclic { excluded, .. } => {
                if !excluded[jj] {
                    excluded[jj] = true;
                    self.active_nnz -= self.col_nnz.get(jj).copied().unwrap_or(0);
                }
            }
        }
    }

    fn next_coords(&mut self) -> Vec<u32> {
        match &mut self.order {
            Order::Dynamic { sampler, dependency, .. } => {
                sampler.select(dependency).into_iter().map(|j| j as u32).collect()
            }
            Order::Shotgun { sampler } => {
                sampler.select(&mut strads_engine::NoDependency).into_iter().map(|j| j as u32).collect()
            }
            Order::Cyclic { plan, excluded, next } => {
                for _ in 0..plan.blocks() {
                    let block = plan.block_of(*next);
                    *next += 1;
                    let coords: Vec<u32> = block.filter(|&j| !excluded[j]).map(|j| j as u32).collect();
                    if !coords.is_empty() {
                        return coords;
                    }
                }
                vec![]
            }
        }
    }

    fn gap_due(&self) -> bool {
        match self.gap_every {
            GapEvery::Rounds(k) => self.rounds_since_gap >= k,
            GapEvery::Auto => self.rounds_since_gap > 0 && self.work_since_gap >= self.active_nnz,
        }
    }

    fn gap(&mut self, slot: Slot) -> Decision<Task> {
        if slot.in_flight > 0 {
            return Decision::Wait;
        }
        self.gap_pending = true;
        self.work_since_gap = 0;
        self.rounds_since_gap = 0;
        self.gap_checks += 1;
        Decision::Run(Plan::all(Task::Gap))
    }
}

impl Scheduler<LassoProgram> for LassoScheduler<'_> {
    fn schedule(&mut self, slot: Slot) -> Decision<Task> {
        if self.done {
            return Decision::Stop;
        }
        if !self.started {
            self.started = true;
            return Decision::Run(Plan::all(Task::Stats));
        }
        if !self.ready || self.gap_pending {
            return Decision::Wait;
        }
        let out_of_budget = self.update_rounds >= self.budget.max_rounds
            || self.budget.deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if out_of_budget {
            self.final_gap = true;
            if self.status.is_none() {
                self.status = Some(if self.update_rounds >= self.budget.max_rounds {
                    Status::MaxRounds
                } else {
                    Status::MaxSeconds
                });
            }
            return self.gap(slot);
        }
        if self.gap_due() {
            return self.gap(slot);
        }
        let coords = self.next_coords();
        if coords.is_empty() {
            if slot.in_flight > 0 {
                return Decision::Wait;
            }
            // Nothing is left to update: every coordinate is screened out or cannot move.
            self.final_gap = true;
            return self.gap(slot);
        }
        self.update_rounds += 1;
        self.rounds_since_gap += 1;
        self.work_since_gap += coords.iter().map(|&j| self.col_nnz[j as usize]).sum::<u64>();
        Decision::Run(Plan::all(Task::Update(coords)))
    }

    fn feedback(&mut self, _round: Round, feedback: Feedback) {
        match feedback {
            Feedback::Ready { col_nnz, excluded } => {
                self.active_nnz = col_nnz.iter().sum();
                self.col_nnz = col_nnz;
                for j in excluded {
                    self.exclude(j);
                }
                self.ready = true;
            }
            Feedback::Updated { changes, mean_nonzero, stop } => {
                match &mut self.order {
                    Order::Dynamic { sampler, rule, .. } => {
                        let coords: Vec<usize> = changes.iter().map(|&(j, _)| j as usize).collect();
                        sampler.complete(&coords);
                        for &(j, delta) in &changes {
                            let weight = match rule {
                                PriorityRule::Absolute { .. } => delta.abs(),
                                PriorityRule::Squared { .. } => delta * delta,
                            };
                            sampler.set_weight(j as usize, weight);
                        }
                        sampler.set_base(match rule {
                            PriorityRule::Absolute { base_fraction } => *base_fraction * mean_nonzero,
                            PriorityRule::Squared { eta } => *eta,
                        });
                    }
                    Order::Shotgun { sampler } => {
                        let coords: Vec<usize> = changes.iter().map(|&(j, _)| j as usize).collect();
                        sampler.complete(&coords);
                    }
                    Order::Cyclic { .. } => {}
                }
                if let Some(stop) = stop {
                    self.status = Some(stop);
                    self.done = true;
                }
            }
            Feedback::Checked { screened, stop } => {
                self.gap_pending = false;
                for j in screened {
                    self.exclude(j);
                }
                if let Some(stop) = stop {
                    self.status = Some(stop);
                    self.done = true;
                }
                if self.final_gap {
                    self.done = true;
                    if self.status.is_none() {
                        self.status = Some(Status::Converged);
                    }
                }
            }
        }
    }
}
