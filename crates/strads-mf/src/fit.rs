//! Training a factorization on any launcher: checks the ratings, partitions users and items, runs the plan.

use std::ops::Range;

use strads_core::{Checkpoints, Launcher, Leading, NoCheckpoints, RunOptions, balanced_ranges};

use crate::MfError;
use crate::aggregator::{Factors, MfAggregator};
use crate::params::{Algorithm, Bias, CheckedParams};
use crate::program::{Mf, Shard, ShardData};
use crate::ratings::Rating;
use crate::scheduler::{MfScheduler, TracePoint};

/// A trained factorization and how it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct MfFit {
    /// `W` (`users x D`) and `H` (`items x D`); `D = K`, or `K + 2` with biases (see [`MfFit::user_bias`]).
    pub factors: Factors,
    /// `K`.
    pub rank: usize,
    /// Entries per row.
    pub stride: usize,
    /// The prediction's offset `mu` (the mean training rating with a global or full bias, else 0).
    pub mu: f64,
    /// The mean training rating: the prediction for a cold pair when the model has no offset.
    pub train_mean: f64,
    /// Training ratings per user, per item (0 for those seen only in the test set).
    pub user_counts: Vec<u32>,
    /// Training ratings per item.
    pub item_counts: Vec<u32>,
    /// Test pairs whose user or item has no training rating.
    pub test_cold_pairs: usize,
    /// Outer iterations run.
    pub iterations: u64,
    /// Seconds of training (evaluations excluded).
    pub seconds: f64,
    /// The evaluations, the first of the initial model.
    pub trace: Vec<TracePoint>,
    /// The index in `trace` of the model returned: the best validation RMSE's with early
    /// stopping, else the last.
    pub returned: usize,
    /// Patience ran out before the last iteration.
    pub stopped_early: bool,
    /// An iteration lowered the objective by less than the tolerance, before the last iteration.
    pub converged: bool,
    /// The L2 weight and the initial scale the run used (set from the data unless given).
    pub lambda: f64,
    /// The initial scale.
    pub init_scale: f64,
    /// ALS's CG steps per row as chosen from the data (0: exact solves).
    pub cg_steps: usize,
}

impl MfFit {
    /// Row `u` of `W` (its `K` factors).
    pub fn user_factors(&self, u: usize) -> &[f64] {
        &self.factors.w[u * self.stride..u * self.stride + self.rank]
    }

    /// Row `i` of `H`.
    pub fn item_factors(&self, i: usize) -> &[f64] {
        &self.factors.h[i * self.stride..i * self.stride + self.rank]
    }

    /// The bias of user `u` (0 without biases).
    pub fn user_bias(&self, u: usize) -> f64 {
        if self.stride > self.rank { self.factors.w[u * self.stride + self.rank] } else { 0.0 }
    }

    /// The bias of item `i`.
    pub fn item_bias(&self, i: usize) -> f64 {
        if self.stride > self.rank { self.factors.h[i * self.stride + self.rank + 1] } else { 0.0 }
    }

    /// The last evaluation.
    pub fn last(&self) -> Option<&TracePoint> {
        self.trace.last()
    }

    /// The evaluation of the model returned (with early stopping, the best validation RMSE's).
    pub fn returned_point(&self) -> Option<&TracePoint> {
        self.trace.get(self.returned)
    }
}

/// Trains on `launcher`'s workers. Users and items are dense indices below `users` and `items`
/// (those of `test` included); `observer` sees every evaluation. Returns the model on the leading
/// process and `None` on the others. For early stopping, hold validation ratings out of `train`
/// with [`crate::ratings::hold_out`] and pass them by [`InMemory::with_validation`] to [`fit_source`].
pub fn fit<L: Launcher>(
    train: &[Rating],
    test: &[Rating],
    users: usize,
    items: usize,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<Option<MfFit>, MfError> {
    fit_checkpointed(train, test, users, items, params, launcher, observer, &mut NoCheckpoints)
}

/// [`fit`] with checkpoints: resumes from `checkpoints` if it holds a snapshot of the same run,
/// and saves snapshots when it asks (see [`Checkpoints`]). It counts outer iterations.
#[allow(clippy::too_many_arguments)]
pub fn fit_checkpointed<L: Launcher>(
    train: &[Rating],
    test: &[Rating],
    users: usize,
    items: usize,
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
    checkpoints: &mut dyn Checkpoints,
) -> Result<Option<MfFit>, MfError> {
    fit_source(&InMemory::new(train, test, users, items)?, params, launcher, observer, checkpoints)
}

/// What every process of a run knows about the ratings as a whole.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingTotals {
    /// Users (those of the test ratings included).
    pub users: usize,
    /// Items.
    pub items: usize,
    /// Training ratings.
    pub ratings: usize,
    /// Test ratings.
    pub test_ratings: usize,
    /// Test ratings whose user or item has no training rating.
    pub test_cold_pairs: usize,
    /// Training ratings per user.
    pub user_counts: Vec<u32>,
    /// Training ratings per item.
    pub item_counts: Vec<u32>,
    /// The sum of each user's training ratings, in the order they were read.
    pub user_sums: Vec<f64>,
    /// The sum of the squares of each user's training ratings.
    pub user_square_sums: Vec<f64>,
    /// Validation ratings (held out of training for early stopping).
    pub validation_ratings: usize,
}

impl RatingTotals {
    /// The totals of ratings held in memory.
    pub fn of(train: &[Rating], test: &[Rating], users: usize, items: usize) -> Self {
        let mut totals = RatingTotals {
            users,
            items,
            ratings: train.len(),
            test_ratings: test.len(),
            test_cold_pairs: 0,
            user_counts: vec![0; users],
            item_counts: vec![0; items],
            user_sums: vec![0.0; users],
            user_square_sums: vec![0.0; users],
            validation_ratings: 0,
        };
        for r in train {
            totals.user_counts[r.user as usize] += 1;
            totals.item_counts[r.item as usize] += 1;
            totals.user_sums[r.user as usize] += r.value;
            totals.user_square_sums[r.user as usize] += r.value * r.value;
        }
        totals.test_cold_pairs = test.iter().filter(|r| totals.is_cold(r)).count();
        totals
    }

    /// Whether a pair's user or item has no training rating.
    pub fn is_cold(&self, r: &Rating) -> bool {
        self.user_counts[r.user as usize] == 0 || self.item_counts[r.item as usize] == 0
    }

    /// The mean training rating: the users' sums added in user order, so that it does not depend on
    /// how the ratings were split between processes.
    pub fn mean(&self) -> f64 {
        self.user_sums.iter().sum::<f64>() / self.ratings.max(1) as f64
    }

    /// The mean number of training ratings of a row (a user or an item): each rating is in two rows.
    pub fn pairs_per_row(&self) -> f64 {
        2.0 * self.ratings as f64 / (self.users + self.items).max(1) as f64
    }

    /// The standard deviation of the training ratings, summed in user order like [`Self::mean`].
    pub fn std(&self) -> f64 {
        let mean = self.mean();
        let squares = self.user_square_sums.iter().sum::<f64>() / self.ratings.max(1) as f64;
        (squares - mean * mean).max(0.0).sqrt()
    }
}

/// The ratings a process of a run holds: the totals, and the ratings of the users and items its
/// workers own (all of them for ratings in memory), each in the order they were read.
pub trait RatingSource: Sync {
    /// The totals over every rating.
    fn totals(&self) -> &RatingTotals;
    /// The training ratings of `users`, as `(user, item, value)`.
    fn by_users(&self, users: Range<usize>) -> Vec<(u32, u32, f64)>;
    /// The training ratings of `items`.
    fn by_items(&self, items: Range<usize>) -> Vec<(u32, u32, f64)>;
    /// The test ratings of `users`.
    fn test_by_users(&self, users: Range<usize>) -> Vec<Rating>;
    /// The `(user, item)` pairs of the training ratings this process holds by user.
    fn pairs(&self) -> Vec<(u32, u32)>;
    /// The validation ratings of `users` (none by default).
    fn validation_by_users(&self, users: Range<usize>) -> Vec<Rating> {
        let _ = users;
        Vec::new()
    }
}

/// Ratings held in memory, all of them, as a [`RatingSource`]; `R` is a slice or a vector.
pub struct InMemory<R> {
    train: R,
    test: R,
    validation: Vec<Rating>,
    totals: RatingTotals,
}

impl<R: AsRef<[Rating]>> InMemory<R> {
    /// The training and test ratings of `users` users and `items` items; refuses a rating outside
    /// them or not finite, and no training rating at all.
    pub fn new(train: R, test: R, users: usize, items: usize) -> Result<Self, MfError> {
        if train.as_ref().is_empty() {
            return Err(MfError::Data("no training ratings".into()));
        }
        for (name, set) in [("training", train.as_ref()), ("test", test.as_ref())] {
            if let Some(r) = set.iter().find(|r| r.user as usize >= users || r.item as usize >= items) {
                return Err(MfError::Data(format!(
                    "a {name} rating of user {} and item {} is outside {users} users x {items} items",
                    r.user, r.item
                )));
            }
            if let Some(r) = set.iter().find(|r| !r.value.is_finite()) {
                return Err(MfError::Data(format!("a {name} rating is not finite: {}", r.value)));
            }
        }
        let totals = RatingTotals::of(train.as_ref(), test.as_ref(), users, items);
        Ok(InMemory { train, test, validation: Vec::new(), totals })
    }

    /// These ratings with validation ratings for early stopping (held out of the training ones, of
    /// the same users and items); refuses one outside them or not finite.
    pub fn with_validation(mut self, validation: Vec<Rating>) -> Result<Self, MfError> {
        let (users, items) = (self.totals.users, self.totals.items);
        if let Some(r) = validation.iter().find(|r| r.user as usize >= users || r.item as usize >= items) {
            return Err(MfError::Data(format!(
                "a validation rating of user {} and item {} is outside {users} users x {items} items",
                r.user, r.item
            )));
        }
        if let Some(r) = validation.iter().find(|r| !r.value.is_finite()) {
            return Err(MfError::Data(format!("a validation rating is not finite: {}", r.value)));
        }
        self.totals.validation_ratings = validation.len();
        self.validation = validation;
        Ok(self)
    }
}

fn triplet(r: &Rating) -> (u32, u32, f64) {
    (r.user, r.item, r.value)
}

impl<R: AsRef<[Rating]> + Sync> RatingSource for InMemory<R> {
    fn totals(&self) -> &RatingTotals {
        &self.totals
    }

    fn by_users(&self, users: Range<usize>) -> Vec<(u32, u32, f64)> {
        self.train.as_ref().iter().filter(|r| users.contains(&(r.user as usize))).map(triplet).collect()
    }

    fn by_items(&self, items: Range<usize>) -> Vec<(u32, u32, f64)> {
        self.train.as_ref().iter().filter(|r| items.contains(&(r.item as usize))).map(triplet).collect()
    }

    fn test_by_users(&self, users: Range<usize>) -> Vec<Rating> {
        self.test.as_ref().iter().filter(|r| users.contains(&(r.user as usize))).copied().collect()
    }

    fn pairs(&self) -> Vec<(u32, u32)> {
        self.train.as_ref().iter().map(|r| (r.user, r.item)).collect()
    }

    fn validation_by_users(&self, users: Range<usize>) -> Vec<Rating> {
        self.validation.iter().filter(|r| users.contains(&(r.user as usize))).copied().collect()
    }
}

/// [`fit_source`] without checkpoints on a launcher whose calling process leads (the embedded
/// runtime): the model itself.
pub fn fit_model<L: Leading>(
    source: &(impl RatingSource + ?Sized),
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
) -> Result<MfFit, MfError> {
    fit_source(source, params, launcher, observer, &mut NoCheckpoints)?
        .ok_or_else(|| MfError::Data("a run on a leading launcher ended without a model".into()))
}

/// [`fit_checkpointed`] on ratings from any [`RatingSource`] (on a cluster, each process's own).
pub fn fit_source<L: Launcher>(
    source: &(impl RatingSource + ?Sized),
    params: &CheckedParams,
    launcher: &L,
    observer: &mut dyn FnMut(&TracePoint),
    checkpoints: &mut dyn Checkpoints,
) -> Result<Option<MfFit>, MfError> {
    let workers = launcher.workers();
    if workers != params.workers {
        return Err(MfError::Params(strads_core::ParamError::new(
            "workers",
            format!("parameters were checked for {} workers, the launcher has {workers}", params.workers),
        )));
    }
    let totals = source.totals();
    if totals.ratings == 0 {
        return Err(MfError::Data("no training ratings".into()));
    }
    let (users, items) = (totals.users, totals.items);
    let train_mean = totals.mean();
    let params = &params.for_data(train_mean, totals.std(), totals.pairs_per_row());
    let mu = if params.bias == Bias::None { 0.0 } else { train_mean };
    let weights = |counts: &[u32]| counts.iter().map(|&n| u64::from(n) + 1).collect::<Vec<u64>>();
    let user_ranges = balanced_ranges(&weights(&totals.user_counts), workers);
    let item_ranges = balanced_ranges(&weights(&totals.item_counts), workers);
    // Implicit feedback is scored by ranking metrics on the gathered model, not by held-out errors.
    let scored = params.implicit.is_none();
    let heldout = |ratings: Vec<Rating>| {
        let kept = if scored { ratings } else { Vec::new() };
        kept.iter().map(|r| (r.user, r.item, r.value, totals.is_cold(r))).collect()
    };
    let has_validation = totals.validation_ratings > 0;
    let outcome = launcher.run_checkpointed::<Mf, _, _, _>(
        RunOptions { pipeline_depth: 0 },
        checkpoints,
        |p| {
            let (us, is) = (user_ranges[p].clone(), item_ranges[p].clone());
            let user_ratings = source.by_users(us.clone());
            if params.implicit.is_some()
                && let Some(&(u, i, value)) = user_ratings.iter().find(|t| t.2 < 0.0)
            {
                return Err(MfError::Data(format!(
                    "implicit feedback needs values >= 0 (counts), user row {u} item row {i} has {value}"
                ))
                .into());
            }
            let data = ShardData {
                user_ratings,
                item_ratings: source.by_items(is.clone()),
                test: heldout(source.test_by_users(us.clone())),
                validation: heldout(source.validation_by_users(us.clone())),
                user_counts: totals.user_counts[us.clone()].to_vec(),
                item_counts: totals.item_counts[is.clone()].to_vec(),
                users: us,
                items: is,
                all_users: users,
                all_items: items,
            };
            Ok(Shard::new(params, data, mu, train_mean))
        },
        || {
            (
                MfScheduler::new(params.clone(), totals.test_ratings > 0 && scored, has_validation && scored, observer),
                MfAggregator::default(),
            )
        },
    )?;
    let Some((scheduler, aggregator)) = outcome else { return Ok(None) };
    let trace = scheduler.trace().to_vec();
    let returned = scheduler.returned().unwrap_or(0);
    let stopped_early = scheduler.stopped_early();
    let converged = scheduler.converged();
    let iterations = scheduler.iterations();
    let seconds = scheduler.training_seconds();
    let factors =
        aggregator.into_factors().ok_or_else(|| MfError::Data("the run ended before the model was gathered".into()))?;
    Ok(Some(MfFit {
        factors,
        rank: params.rank,
        stride: params.stride(),
        mu,
        train_mean,
        user_counts: totals.user_counts.clone(),
        item_counts: totals.item_counts.clone(),
        test_cold_pairs: totals.test_cold_pairs,
        iterations,
        seconds,
        trace,
        returned,
        stopped_early,
        converged,
        lambda: params.lambda(),
        init_scale: params.init_scale(),
        cg_steps: params.cg_steps(),
    }))
}

/// Bytes a training run needs, about: every training rating twice (by user and by item, each with
/// its index, value and residual), the test ratings once, the factors, and on every worker the
/// replicated factor (row-wise CCD and ALS) or two vectors (CCD++); `stride` entries per row.
pub fn memory_estimate(
    ratings: usize,
    test: usize,
    users: usize,
    items: usize,
    stride: usize,
    workers: usize,
    algorithm: Algorithm,
) -> u64 {
    let (r, rows, d, w) = ((ratings + test) as u64, (users + items) as u64, stride as u64, workers.max(1) as u64);
    let replicated = match algorithm {
        Algorithm::Ccdpp => rows.saturating_mul(8),
        Algorithm::Ccd | Algorithm::Als => rows.saturating_mul(d).saturating_mul(8),
    };
    (ratings as u64)
        .saturating_mul(40)
        .saturating_add(r.saturating_mul(24))
        .saturating_add(rows.saturating_mul(d).saturating_mul(16))
        .saturating_add(replicated.saturating_mul(w))
}

impl crate::MfParams {
    /// Checks these settings and factorizes `source` (for example [`InMemory`] ratings) on the
    /// calling thread (one worker), with the trace unobserved. For several workers or progress, use
    /// [`fit_model`].
    pub fn fit(&self, source: &(impl RatingSource + ?Sized)) -> Result<MfFit, MfError> {
        let checked = self.check(1).map_err(MfError::Params)?;
        fit_model(source, &checked, &strads_engine::Inline::new(1)?, &mut |_| {})
    }
}
