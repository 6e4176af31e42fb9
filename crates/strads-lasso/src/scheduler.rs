//! The Lasso scheduler: which coordinates each round updates, and when to check the duality gap.
//!
//! `block` hands every worker its group of the working set each round (see [`crate::block`]), with
//! a gap check after every round, since a round solves the working set.
//! `dynamic` and `shotgun` run on the dynamic engine's [`DynamicScheduler`] (with priorities and
//! the correlation check, or uniformly without it); `cyclic` and `sequential` run on the static
//! engine's [`RoundRobin`] plan. All four share the rest: a first statistics round, gap checks
//! after coordinate work of twice what a check costs (with the pipeline drained, so the gap is computed
//! on one consistent model), screened coordinates leaving the schedule, and a final gap check
//! when a budget of rounds or seconds runs out.

use rustc_hash::FxHashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use strads_core::checkpoint::{decode, encode, expect_len};
use strads_core::{BoxError, Decision, Plan, Round, Scheduler, Slot};
use strads_data::{Columns, SparseRows};
use strads_engine::{Dependency, DynamicConfig, DynamicScheduler, Priority, RoundRobin, SelectStats};

use crate::block::Grouper;
use crate::program::{Feedback, LassoProgram, SolveSpec, SolveTask, Task};
use crate::{CheckedParams, GapEvery, PriorityRule, SchedulerKind, Status};

/// The dependency of two coordinates: `|x_a . x_b| / (||x_a|| ||x_b||)`, the normalized
/// off-diagonal of the Hessian, which is what makes parallel updates of `a` and `b` interfere.
///
/// Pairs are scored on demand and cached. On sparse data, once a coordinate has been kept often
/// enough to pay for it, the coordinates that depend on it are listed by walking the rows it
/// appears in, so the filter marks them instead of scoring pairs. A list of `a` costs about
/// `nnz(x_a) x` the mean row length; scoring `a` against the other candidates of a round costs
/// about `2 nnz(x_a) L'`; so `a` is listed after it was kept `mean row length / (2 L')` times,
/// and only when rounds draw many candidates (cached pair scores win otherwise).
pub struct Correlation<'a> {
    x: &'a Columns,
    rows: Option<&'a SparseRows>,
    norm: Vec<f64>,
    cache: FxHashMap<u64, f32>,
    lists: Vec<Option<Box<[usize]>>>,
    kept: Vec<u32>,
    list_after: u32,
    /// The column last scattered into `dense`.
    scattered: Option<usize>,
    dense: Vec<f64>,
    sums: Vec<f64>,
}

/// With `--gap-every auto`, a gap check comes after coordinate work (nonzeros visited) of this many
/// times the nonzeros the check itself visits: a third of the time goes to checks (measured on
/// news20 and a generated problem; 1 spends half the time checking, 4 delays convergence).
const GAP_WORK: u64 = 2;

/// Pairs cached before the cache is cleared (about 100 MB at most).
const CACHE_LIMIT: usize = 4_000_000;

/// Rounds drawing fewer candidates than this never list dependents (measured on news20 and a
/// generated problem: lists cost more than they save below about 32 candidates).
const LIST_FROM_CANDIDATES: usize = 32;

impl<'a> Correlation<'a> {
    /// Correlations between the columns of `x`; `rows` is the same matrix by rows, when sparse;
    /// `candidates` is the number of candidates a round draws (`L'`).
    pub fn new(x: &'a Columns, rows: Option<&'a SparseRows>, candidates: usize) -> Self {
        let norm = (0..x.cols()).map(|j| x.sq_norm(j).sqrt()).collect();
        let p = x.cols();
        let listing = rows.is_some();
        let mean_row = x.nnz() as f64 / x.rows().max(1) as f64;
        // With few candidates a round, cached pair scores are cheaper than any list.
        let list_after = if candidates < LIST_FROM_CANDIDATES {
            u32::MAX
        } else {
            (mean_row / (2.0 * candidates as f64)).ceil().clamp(1.0, 1e6) as u32
        };
        Correlation {
            x,
            rows,
            norm,
            cache: FxHashMap::default(),
            lists: if listing { vec![None; p] } else { vec![] },
            kept: if listing { vec![0; p] } else { vec![] },
            list_after,
            scattered: None,
            dense: vec![],
            sums: if listing { vec![0.0; p] } else { vec![] },
        }
    }
}

impl Correlation<'_> {
    /// Puts back the listing state of a checkpoint: how often each column was kept, and the lists built.
    fn restore(&mut self, kept: Vec<u32>, lists: Vec<Option<Box<[usize]>>>) -> Result<(), BoxError> {
        expect_len("listing counts", kept.len(), self.kept.len())?;
        expect_len("dependent lists", lists.len(), self.lists.len())?;
        (self.kept, self.lists) = (kept, lists);
        Ok(())
    }

    /// `x_a . x_b`. The filter asks about one candidate `a` against each kept `b` in turn, so a
    /// sparse `b` is scattered into a dense column once and every `a` gathered against it.
    fn dot(&mut self, a: usize, b: usize) -> f64 {
        let Columns::Sparse(m) = self.x else { return self.x.dot_columns(a, b) };
        if self.scattered != Some(b) {
            if let Some(old) = self.scattered.take() {
                for &i in &m.indices[m.indptr[old]..m.indptr[old + 1]] {
                    self.dense[i as usize] = 0.0;
                }
            }
            if self.dense.len() != m.rows {
                self.dense = vec![0.0; m.rows];
            }
            let range = m.indptr[b]..m.indptr[b + 1];
            for (&i, &v) in m.indices[range.clone()].iter().zip(&m.data[range]) {
                self.dense[i as usize] = v;
            }
            self.scattered = Some(b);
        }
        self.x.dot(a, &self.dense)
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
        let corr = if denominator > 0.0 { (self.dot(a, b) / denominator).abs().min(1.0) } else { 0.0 };
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        // Rounded as the cache keeps it, so a score is the same whether it was cached or not.
        let corr = corr as f32;
        self.cache.insert(key, corr);
        f64::from(corr)
    }

    fn dependents(&mut self, a: usize, rho: f64) -> Option<&[usize]> {
        let rows = self.rows?;
        if self.lists[a].is_none() {
            if self.kept[a] < self.list_after {
                self.kept[a] += 1;
                return None;
            }
            let Columns::Sparse(columns) = self.x else { return None };
            let range = columns.indptr[a]..columns.indptr[a + 1];
            let indptr = rows.indptr();
            let indptr = indptr.raw_storage();
            let (row_indices, row_values) = (rows.indices(), rows.data());
            let entries = || columns.indices[range.clone()].iter().zip(&columns.data[range.clone()]);
            // Two passes over the same rows: add up every dot product with `a`, then read each
            // one back once (zeroing it, so a coordinate seen in several rows is read once).
            for (&i, &v) in entries() {
                let row = indptr[i as usize]..indptr[i as usize + 1];
                for (&k, &w) in row_indices[row.clone()].iter().zip(&row_values[row]) {
                    self.sums[k as usize] += v * w;
                }
            }
            let bound = rho * self.norm[a];
            let mut list = Vec::new();
            for (&i, _) in entries() {
                let row = indptr[i as usize]..indptr[i as usize + 1];
                for &k in &row_indices[row] {
                    let k = k as usize;
                    let sum = std::mem::take(&mut self.sums[k]);
                    if sum != 0.0 && k != a && sum.abs() >= bound * self.norm[k] {
                        list.push(k);
                    }
                }
            }
            list.sort_unstable();
            self.lists[a] = Some(list.into_boxed_slice());
        }
        self.lists[a].as_deref()
    }
}

/// What a checkpoint keeps of the coordinate order (the correlation cache is not kept: a cached
/// score equals a recomputed one).
#[derive(Serialize, Deserialize)]
enum OrderState<'s> {
    Dynamic { sampler: Cow<'s, DynamicScheduler>, kept: Cow<'s, [u32]>, lists: Cow<'s, [Option<Box<[usize]>>]> },
    Shotgun { sampler: Cow<'s, DynamicScheduler> },
    Cyclic { excluded: Cow<'s, [bool]>, next: u64 },
    Block { groups: Cow<'s, [Vec<u32>]>, spec: Option<SolveSpec>, inline: bool, proven: bool },
}

enum Order<'a> {
    Dynamic {
        sampler: DynamicScheduler,
        dependency: Box<Correlation<'a>>,
        rule: PriorityRule,
    },
    Shotgun {
        sampler: DynamicScheduler,
    },
    Cyclic {
        plan: RoundRobin,
        excluded: Vec<bool>,
        next: u64,
    },
    Block {
        grouper: Box<Grouper>,
        groups: Vec<Vec<u32>>,
        spec: Option<SolveSpec>,
        workers: usize,
        /// The groups were found coupled at this `lambda`: one worker solves the working set.
        inline: bool,
        /// A split round was kept at this `lambda`; until one is, split rounds are short probes.
        proven: bool,
    },
}

/// What bounds a run besides convergence.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most update rounds.
    pub max_rounds: Option<u64>,
    /// When training must end.
    pub deadline: Option<Instant>,
}

/// The scheduler role of the Lasso program.
pub struct LassoScheduler<'a> {
    /// Workers of the run.
    workers: usize,
    order: Order<'a>,
    gap_every: GapEvery,
    budget: Budget,
    started: bool,
    ready: bool,
    done: bool,
    gap_pending: bool,
    final_gap: bool,
    col_nnz: Vec<u64>,
    screened: Vec<bool>,
    zero_columns: Vec<bool>,
    /// Membership of the current working set; everything is in it until the first check.
    in_working_set: Vec<bool>,
    working_sets: bool,
    check_now: bool,
    active_nnz: u64,
    work_since_gap: u64,
    rounds_since_gap: u64,
    /// An Anderson extrapolation proposed by the aggregator, not yet scheduled.
    extrapolation: Option<Vec<(u8, f64)>>,
    extrapolating: bool,
    anderson: bool,
    extrapolated_since_gap: bool,
    pub(crate) update_rounds: u64,
    pub(crate) gap_checks: u64,
    /// Gap checks whose column sums every worker shared (the others: worker 0's alone).
    pub(crate) shared_gap_checks: u64,
    pub(crate) status: Option<Status>,
}

impl<'a> LassoScheduler<'a> {
    /// A scheduler for `features` coordinates; `dependency` (over all rows) is needed by `dynamic`
    /// only, `grouper` by `block` only.
    pub fn new(
        params: &CheckedParams,
        features: usize,
        workers: usize,
        dependency: Option<Correlation<'a>>,
        grouper: Option<Grouper>,
        budget: Budget,
    ) -> Self {
        let raw = params.raw();
        let config = |priority, rho: Option<f64>| DynamicConfig {
            params: features,
            set_size: params.set_size(workers),
            candidates: if rho.is_some() { params.candidates(workers) } else { params.set_size(workers) },
            rho,
            priority,
            order: raw.candidate_order,
            warmup_rounds: params.warmup_rounds(features, workers),
            seed: raw.seed,
        };
        let order = match (raw.scheduler, dependency) {
            (SchedulerKind::Block, _) if let Some(grouper) = grouper => Order::Block {
                grouper: Box::new(grouper),
                groups: vec![],
                spec: None,
                workers: workers.max(1),
                inline: false,
                proven: false,
            },
            (SchedulerKind::Dynamic, Some(dependency)) => Order::Dynamic {
                sampler: DynamicScheduler::new(config(Priority::Weighted, Some(raw.rho))),
                dependency: Box::new(dependency),
                rule: raw.priority,
            },
            (SchedulerKind::Dynamic | SchedulerKind::Shotgun | SchedulerKind::Block, _) => {
                Order::Shotgun { sampler: DynamicScheduler::new(config(Priority::Uniform, None)) }
            }
            (SchedulerKind::Cyclic | SchedulerKind::Sequential, _) => Order::Cyclic {
                plan: RoundRobin::new(features, params.set_size(workers)),
                excluded: vec![false; features],
                next: 0,
            },
        };
        LassoScheduler {
            order,
            workers,
            gap_every: raw.gap_every,
            budget,
            started: false,
            ready: false,
            done: false,
            gap_pending: false,
            final_gap: false,
            col_nnz: vec![],
            screened: vec![false; features],
            zero_columns: vec![false; features],
            in_working_set: vec![true; features],
            working_sets: params.working_set.is_some(),
            check_now: false,
            active_nnz: 0,
            work_since_gap: 0,
            rounds_since_gap: 0,
            extrapolation: None,
            extrapolating: false,
            anderson: params.anderson.is_some(),
            extrapolated_since_gap: false,
            update_rounds: 0,
            gap_checks: 0,
            shared_gap_checks: 0,
            status: None,
        }
    }

    /// What the dependency filter did (dynamic and shotgun).
    pub fn select_stats(&self) -> SelectStats {
        match &self.order {
            Order::Dynamic { sampler, .. } | Order::Shotgun { sampler } => sampler.stats(),
            Order::Cyclic { .. } | Order::Block { .. } => SelectStats::default(),
        }
    }

    /// Block mode: splits what is left of the working set into the workers' groups.
    fn regroup(&mut self) {
        let Order::Block { grouper, groups, workers, inline, .. } = &mut self.order else { return };
        let coords: Vec<u32> = (0..self.screened.len())
            .filter(|&j| self.in_working_set[j] && !self.screened[j])
            .map(|j| j as u32)
            .collect();
        *groups = if *inline {
            let mut groups = vec![vec![]; *workers];
            groups[0] = coords;
            groups
        } else {
            grouper.groups(&coords, &self.col_nnz, *workers)
        };
    }

    /// Block mode: the next round's plan, or `None` when no group has a coordinate left.
    fn block_plan(&mut self) -> Option<Plan<Task>> {
        let Order::Block { groups, spec: Some(spec), workers, proven, .. } = &self.order else { return None };
        if groups.iter().all(Vec::is_empty) {
            return None;
        }
        let dense = *workers > 1;
        let split = groups.iter().filter(|g| !g.is_empty()).count() > 1;
        let mut spec = *spec;
        if !*proven && split {
            // A first split round is a probe: one pass tells whether the groups fight.
            spec.max_epochs = spec.max_epochs.min(crate::block::PROBE_EPOCHS);
        }
        let task = |coords: &Vec<u32>| Task::Solve(SolveTask { coords: coords.clone(), spec, dense, split });
        if !split {
            // One group: worker 0 solves it, and the others are not woken for nothing.
            let group = groups.iter().find(|g| !g.is_empty())?;
            return Some(Plan::leader(task(group)));
        }
        Some(Plan::each(groups.iter().map(task).collect()))
    }

    /// Removes a coordinate for good (screened out, or a column of zeros).
    fn screen(&mut self, j: u32) {
        let jj = j as usize;
        if !self.screened[jj] {
            self.screened[jj] = true;
            self.active_nnz -= self.col_nnz.get(jj).copied().unwrap_or(0);
            self.set_excluded(jj, true);
        }
    }

    /// A regularization path moved to its next `lambda`: every coordinate but the all-zero
    /// columns is back in play, and a gap check at the new `lambda` comes first.
    fn restart(&mut self) {
        self.final_gap = false;
        if let Order::Block { inline, proven, .. } = &mut self.order {
            (*inline, *proven) = (false, false);
        }
        self.extrapolation = None;
        let mut changes = Vec::with_capacity(self.screened.len());
        for j in 0..self.screened.len() {
            let zero = self.zero_columns[j];
            if self.screened[j] && !zero {
                self.screened[j] = false;
                self.active_nnz += self.col_nnz.get(j).copied().unwrap_or(0);
            }
            self.in_working_set[j] = true;
            changes.push((j, zero));
        }
        self.set_excluded_many(&changes);
        self.check_now = true;
    }

    /// Replaces the working set: coordinates outside it wait for the next gap check.
    fn set_working_set(&mut self, set: &[u32]) {
        let mut inside = vec![false; self.screened.len()];
        for &j in set {
            inside[j as usize] = true;
        }
        let previous = std::mem::replace(&mut self.in_working_set, inside);
        let mut changes = Vec::new();
        for (j, &was_inside) in previous.iter().enumerate() {
            if was_inside != self.in_working_set[j] || (self.screened[j] && was_inside) {
                changes.push((j, self.screened[j] || !self.in_working_set[j]));
            }
        }
        self.set_excluded_many(&changes);
    }

    /// [`Self::set_excluded`] for many coordinates, in one pass over the sampler's trees.
    fn set_excluded_many(&mut self, changes: &[(usize, bool)]) {
        match &mut self.order {
            Order::Dynamic { sampler, .. } | Order::Shotgun { sampler } => sampler.set_excluded_many(changes),
            Order::Cyclic { excluded: flags, .. } => {
                for &(j, excluded) in changes {
                    flags[j] = excluded;
                }
            }
            // Groups are recut from the working set at every check.
            Order::Block { .. } => {}
        }
    }

    fn set_excluded(&mut self, j: usize, excluded: bool) {
        match &mut self.order {
            Order::Dynamic { sampler, .. } | Order::Shotgun { sampler } => sampler.set_excluded(j, excluded),
            Order::Cyclic { excluded: flags, .. } => flags[j] = excluded,
            Order::Block { .. } => {}
        }
    }

    fn next_coords(&mut self) -> Vec<u32> {
        match &mut self.order {
            Order::Dynamic { sampler, dependency, .. } => {
                sampler.select(dependency.as_mut()).into_iter().map(|j| j as u32).collect()
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
            Order::Block { .. } => vec![],
        }
    }

    fn gap_due(&self) -> bool {
        self.check_now
            || match self.gap_every {
                GapEvery::Rounds(k) => self.rounds_since_gap >= k,
                GapEvery::Auto => {
                    let work = self.work_since_gap;
                    // With extrapolation, a check waits for the window's extrapolation (which needs
                    // K + 1 passes over the working set), up to four times the usual work.
                    let waiting =
                        self.anderson && !self.extrapolated_since_gap && work < 4 * GAP_WORK * self.active_nnz;
                    self.rounds_since_gap > 0 && work >= GAP_WORK * self.active_nnz && !waiting
                }
            }
    }

    fn gap(&mut self, slot: Slot) -> Decision<Task> {
        if slot.in_flight > 0 {
            return Decision::Wait;
        }
        self.gap_pending = true;
        self.check_now = false;
        self.extrapolated_since_gap = false;
        self.work_since_gap = 0;
        self.rounds_since_gap = 0;
        self.gap_checks += 1;
        // In block mode every worker holds every column and the whole residual, so worker 0 alone
        // can check a gap too small to be worth waking the others for.
        let block = matches!(self.order, Order::Block { .. });
        if self.workers == 1 || (block && self.active_nnz < crate::block::SHARED_GAP_NNZ) {
            return Decision::Run(Plan::leader(Task::Gap { whole: true }));
        }
        self.shared_gap_checks += 1;
        Decision::Run(Plan::all(Task::Gap { whole: false }))
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
        if !self.ready || self.gap_pending || self.extrapolating {
            return Decision::Wait;
        }
        let rounds_spent = self.budget.max_rounds.is_some_and(|max| self.update_rounds >= max);
        let out_of_budget = rounds_spent || self.budget.deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if out_of_budget {
            self.final_gap = true;
            if self.status.is_none() {
                self.status = Some(if rounds_spent { Status::MaxRounds } else { Status::MaxSeconds });
            }
            return self.gap(slot);
        }
        if self.gap_due() {
            return self.gap(slot);
        }
        if self.extrapolation.is_some() {
            // The extrapolated residual must combine snapshots of one consistent model.
            if slot.in_flight > 0 {
                return Decision::Wait;
            }
            self.extrapolating = true;
            let mix = self.extrapolation.take().unwrap_or_default();
            return Decision::Run(Plan::all(Task::Extrapolate(mix)));
        }
        if let Order::Block { .. } = self.order {
            // A round's step needs the previous round's: no pipelining.
            if slot.in_flight > 0 {
                return Decision::Wait;
            }
            let Some(plan) = self.block_plan() else {
                self.final_gap = true;
                return self.gap(slot);
            };
            self.update_rounds += 1;
            self.rounds_since_gap += 1;
            // A round solves the working set: the next check follows it.
            self.check_now = true;
            return Decision::Run(plan);
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
                    self.zero_columns[j as usize] = true;
                    self.screen(j);
                }
                self.ready = true;
                // A working set (and a block round's target) comes from a gap check: the first one
                // is made at once.
                self.check_now = self.working_sets || matches!(self.order, Order::Block { .. });
            }
            Feedback::Updated { changes, mean_nonzero, stop, extrapolate } => {
                if extrapolate.is_some() {
                    self.extrapolation = extrapolate;
                }
                let coords: Vec<usize> = changes.iter().map(|&(j, _)| j as usize).collect();
                match &mut self.order {
                    Order::Dynamic { sampler, rule, .. } => {
                        sampler.complete(&coords);
                        for &(j, delta) in &changes {
                            sampler.set_weight(j as usize, rule.weight(delta));
                        }
                        sampler.set_base(rule.base(mean_nonzero));
                    }
                    Order::Shotgun { sampler } => sampler.complete(&coords),
                    Order::Cyclic { .. } | Order::Block { .. } => {}
                }
                if let Some(stop) = stop {
                    self.status = Some(stop);
                    self.done = true;
                }
            }
            Feedback::Extrapolated { changes } => {
                self.extrapolating = false;
                self.extrapolated_since_gap = true;
                if let Order::Dynamic { sampler, rule, .. } = &mut self.order {
                    for (j, delta) in changes {
                        sampler.set_weight(j as usize, rule.weight(delta));
                    }
                }
            }
            Feedback::Solved { stop, inline: coupled, split } => {
                if let Order::Block { proven, .. } = &mut self.order {
                    *proven |= split;
                }
                if coupled && let Order::Block { inline, .. } = &mut self.order {
                    // One worker solves the same working set next, without a check in between.
                    *inline = true;
                    self.check_now = false;
                    self.regroup();
                }
                if let Some(stop) = stop {
                    self.status = Some(stop);
                    self.done = true;
                }
            }
            Feedback::Checked { screened, working_set, stop, restart, spec: next } => {
                self.gap_pending = false;
                if let Order::Block { spec, .. } = &mut self.order {
                    *spec = Some(next);
                }
                if restart {
                    self.restart();
                    return;
                }
                // The check started a new extrapolation window: a proposal from the old one is void.
                self.extrapolation = None;
                for j in screened {
                    self.screen(j);
                }
                if let Some(set) = working_set {
                    self.set_working_set(&set);
                }
                self.regroup();
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

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        let order = match &self.order {
            Order::Dynamic { sampler, dependency, .. } => OrderState::Dynamic {
                sampler: Cow::Borrowed(sampler),
                kept: Cow::Borrowed(&dependency.kept),
                lists: Cow::Borrowed(&dependency.lists),
            },
            Order::Shotgun { sampler } => OrderState::Shotgun { sampler: Cow::Borrowed(sampler) },
            Order::Cyclic { excluded, next, .. } => {
                OrderState::Cyclic { excluded: Cow::Borrowed(excluded), next: *next }
            }
            Order::Block { groups, spec, inline, proven, .. } => {
                OrderState::Block { groups: Cow::Borrowed(groups), spec: *spec, inline: *inline, proven: *proven }
            }
        };
        encode(&(
            order,
            (self.started, self.ready, self.done, self.gap_pending, self.final_gap, self.check_now),
            (&self.col_nnz, &self.screened, &self.zero_columns, &self.in_working_set),
            (self.active_nnz, self.work_since_gap, self.rounds_since_gap),
            (&self.extrapolation, self.extrapolating, self.extrapolated_since_gap),
            (self.update_rounds, self.gap_checks, self.shared_gap_checks, self.status),
        ))
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        let order: OrderState<'static>;
        let features = self.screened.len();
        (
            order,
            (self.started, self.ready, self.done, self.gap_pending, self.final_gap, self.check_now),
            (self.col_nnz, self.screened, self.zero_columns, self.in_working_set),
            (self.active_nnz, self.work_since_gap, self.rounds_since_gap),
            (self.extrapolation, self.extrapolating, self.extrapolated_since_gap),
            (self.update_rounds, self.gap_checks, self.shared_gap_checks, self.status),
        ) = decode(state)?;
        expect_len("coordinates", self.screened.len(), features)?;
        match (&mut self.order, order) {
            (Order::Dynamic { sampler, dependency, .. }, OrderState::Dynamic { sampler: saved, kept, lists }) => {
                *sampler = saved.into_owned();
                dependency.restore(kept.into_owned(), lists.into_owned())?;
            }
            (Order::Shotgun { sampler }, OrderState::Shotgun { sampler: saved }) => *sampler = saved.into_owned(),
            (Order::Cyclic { excluded, next, .. }, OrderState::Cyclic { excluded: saved, next: saved_next }) => {
                expect_len("excluded coordinates", saved.len(), excluded.len())?;
                (*excluded, *next) = (saved.into_owned(), saved_next);
            }
            (
                Order::Block { groups, spec, inline, proven, .. },
                OrderState::Block { groups: saved, spec: saved_spec, inline: saved_inline, proven: saved_proven },
            ) => {
                if let Some(&j) = saved.iter().flatten().find(|&&j| j as usize >= features) {
                    return Err(format!("the checkpoint names coordinate {j} of {features}").into());
                }
                (*groups, *spec, *inline, *proven) = (saved.into_owned(), saved_spec, saved_inline, saved_proven);
            }
            _ => return Err("the checkpoint was written by another scheduler".into()),
        }
        Ok(())
    }
}
