//! Loading the ratings of a run: in memory ([`load_ratings`]), or on the ranks of a job so that no
//! rank holds the whole of them ([`load_ratings_share`], delimited files).
//!
//! In memory, ids are numbered in order of first appearance (training file, then test file); the
//! test set is the test file or a seeded fraction of the training ratings, and validation ratings
//! leave training by a hash of the pair. In shares:
//! every rank reads one byte share of the file (whole lines); rank 0 numbers the ids in file order
//! (as one process numbers them), duplicates meet on one rank (by user) and are resolved there,
//! validation ratings leave training by a hash of the pair, and every rating then goes to its
//! user's worker's rank and to its item's. Rank 0 reads the test file and sends each test rating
//! to its user's rank.

use std::ops::Range;
use std::path::Path;

use strads_core::collectives::{owner_of, rank_range};
use strads_core::{Collectives, balanced_ranges};
use strads_data::{DataError, read_rank_share};

use crate::MfError;
use crate::fit::{InMemory, RatingSource, RatingTotals};
use crate::ratings::{
    Ids, Rating, ReadOptions, check_magnitudes, delimited_layout, hold_out, is_held_out, parse_delimited_share,
    read_ratings, resolve_duplicates, split, validation_applies,
};

/// Where a run's test ratings come from.
#[derive(Clone, Debug, PartialEq)]
pub enum TestSet<'a> {
    /// None.
    None,
    /// A file of ratings.
    File(&'a Path),
    /// This fraction of the training ratings, drawn with this seed.
    Fraction(f64, u64),
}

/// Reads the ratings of a run into memory: `train`, the test set, and (with `validation`, a
/// fraction and a seed) the validation ratings held out of training; and their ids.
pub fn load_ratings(
    train: &Path,
    test: TestSet<'_>,
    options: &ReadOptions,
    validation: Option<(f64, u64)>,
) -> Result<(InMemory<Vec<Rating>>, Ids), MfError> {
    let mut ids = Ids::default();
    let read = read_ratings(train, options, &mut ids)?;
    let (train, test) = match test {
        TestSet::File(path) => {
            let test = read_ratings(path, options, &mut ids)?;
            (read, test)
        }
        TestSet::Fraction(fraction, seed) => split(&read, fraction, seed).map_err(MfError::Data)?,
        TestSet::None => (read, Vec::new()),
    };
    let (train, held) = match validation {
        Some((fraction, seed)) if validation_applies(train.len(), fraction) => hold_out(train, fraction, seed),
        _ => (train, Vec::new()),
    };
    let ratings = InMemory::new(train, test, ids.users.len(), ids.items.len())?.with_validation(held)?;
    Ok((ratings, ids))
}

/// The ratings this rank's workers own, with the totals every rank agrees on.
pub struct RankRatings {
    totals: RatingTotals,
    by_user: Vec<(u32, u32, f64)>,
    by_item: Vec<(u32, u32, f64)>,
    test: Vec<Rating>,
    validation: Vec<Rating>,
    /// Bytes this rank read from the training file.
    pub bytes_read: u64,
}

impl RatingSource for RankRatings {
    fn totals(&self) -> &RatingTotals {
        &self.totals
    }

    fn by_users(&self, users: Range<usize>) -> Vec<(u32, u32, f64)> {
        self.by_user.iter().filter(|r| users.contains(&(r.0 as usize))).copied().collect()
    }

    fn by_items(&self, items: Range<usize>) -> Vec<(u32, u32, f64)> {
        self.by_item.iter().filter(|r| items.contains(&(r.1 as usize))).copied().collect()
    }

    fn test_by_users(&self, users: Range<usize>) -> Vec<Rating> {
        self.test.iter().filter(|r| users.contains(&(r.user as usize))).copied().collect()
    }

    fn pairs(&self) -> Vec<(u32, u32)> {
        self.by_user.iter().map(|&(u, i, _)| (u, i)).collect()
    }

    fn validation_by_users(&self, users: Range<usize>) -> Vec<Rating> {
        self.validation.iter().filter(|r| users.contains(&(r.user as usize))).copied().collect()
    }
}

/// A rating with its line, on its way to another rank.
type Lined = (u32, u32, f64, usize);

fn lined(r: &(Rating, usize)) -> Lined {
    (r.0.user, r.0.item, r.0.value, r.1)
}

fn unlined(r: &Lined) -> (Rating, usize) {
    (Rating { user: r.0, item: r.1, value: r.2 }, r.3)
}

/// Sends each rating to the rank `owner` names; what arrives is sorted back into file order.
fn route(
    ranks: &impl Collectives,
    ratings: &[(Rating, usize)],
    owner: impl Fn(&Rating) -> usize,
) -> Result<Vec<Lined>, DataError> {
    let mut parts: Vec<Vec<Lined>> = vec![Vec::new(); ranks.ranks()];
    for r in ratings {
        parts[owner(&r.0)].push(lined(r));
    }
    let mut received: Vec<Lined> = ranks.exchange(parts).map_err(DataError::Collective)?.concat();
    received.sort_by_key(|r| r.3);
    Ok(received)
}

/// Reads this rank's ratings of the delimited file `train` (and, on rank 0, the whole `test` file,
/// whose ratings then go to their users' ranks) for a run of `workers` workers spread evenly over
/// the ranks. Ids are numbered as one process numbers them (in order of first appearance, the
/// training file first); rank 0 gets them all, for the outputs, the others none.
pub fn load_ratings_share(
    ranks: &impl Collectives,
    train: &Path,
    test: Option<&Path>,
    options: &ReadOptions,
    workers: usize,
    validation: Option<(f64, u64)>,
) -> Result<(RankRatings, Ids), DataError> {
    let collective = DataError::Collective;
    let (rank, count) = (ranks.rank(), ranks.ranks());
    let layout = delimited_layout(train)?;
    let (share, before) = read_rank_share(ranks, train)?;
    let first_line = before + 1;
    let mut local_ids = Ids::default();
    let mut read = match &layout {
        Some(layout) => parse_delimited_share(train, &share.bytes, first_line, layout, &mut local_ids)?,
        None => Vec::new(),
    };
    drop(share.bytes);
    let parsed = ranks.all_sum_one(read.len() as u64).map_err(collective)? as usize;
    if parsed == 0 {
        return Err(DataError::invalid(train, "no ratings in this file"));
    }
    check_magnitudes(train, &read, parsed)?;

    // Rank 0 numbers every id in file order (each rank's ids in its order of first appearance,
    // rank after rank), reads the test file with them, and tells each rank its numbers.
    let mut lists: Vec<(Vec<String>, Vec<String>)> = vec![(Vec::new(), Vec::new()); count];
    lists[0] = (std::mem::take(&mut local_ids.users), std::mem::take(&mut local_ids.items));
    let lists = ranks.exchange(lists).map_err(collective)?;
    let mut ids = Ids::default();
    let mut test_ratings = Vec::new();
    let mut numbers: Vec<(Vec<u32>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); count];
    if rank == 0 {
        for (r, (users, items)) in lists.into_iter().enumerate() {
            numbers[r] = (users.iter().map(|u| ids.user(u)).collect(), items.iter().map(|i| ids.item(i)).collect());
        }
        if let Some(test) = test {
            test_ratings = read_ratings(test, options, &mut ids)?;
        }
    }
    let (user_number, item_number) = ranks.exchange(numbers).map_err(collective)?.swap_remove(0);
    let users = ranks.all_max(ids.users.len() as u64).map_err(collective)? as usize;
    let items = ranks.all_max(ids.items.len() as u64).map_err(collective)? as usize;
    for (r, _) in &mut read {
        r.user = user_number[r.user as usize];
        r.item = item_number[r.item as usize];
    }

    // Duplicates meet on one rank (by user), are resolved there, and the counts follow.
    let mut survivors: Vec<(Rating, usize)> =
        route(ranks, &read, |r| r.user as usize % count)?.iter().map(unlined).collect();
    drop(read);
    resolve_duplicates(train, &mut survivors, options.duplicates, |u, i| {
        (format!("number {u}"), format!("number {i}"))
    })?;
    // Validation ratings leave training by a hash of the pair, as in memory.
    let resolved = ranks.all_sum_one(survivors.len() as u64).map_err(collective)? as usize;
    let held: Vec<(Rating, usize)> = match validation {
        Some((fraction, seed)) if validation_applies(resolved, fraction) => {
            let (kept, held) = survivors.into_iter().partition(|(r, _)| !is_held_out(r.user, r.item, seed, fraction));
            survivors = kept;
            held
        }
        _ => Vec::new(),
    };
    let mut counts = vec![0u64; users + items];
    for (r, _) in &survivors {
        counts[r.user as usize] += 1;
        counts[users + r.item as usize] += 1;
    }
    ranks.all_sum(&mut counts).map_err(collective)?;
    let user_counts: Vec<u32> = counts[..users].iter().map(|&n| n as u32).collect();
    let item_counts: Vec<u32> = counts[users..].iter().map(|&n| n as u32).collect();
    drop(counts);
    let ratings = ranks.all_sum_one(survivors.len() as u64).map_err(collective)? as usize;

    // Then every rating goes to the rank of its user's worker and to that of its item's.
    let threads = workers / count;
    let weights = |counts: &[u32]| counts.iter().map(|&n| u64::from(n) + 1).collect::<Vec<u64>>();
    let user_ranges = balanced_ranges(&weights(&user_counts), workers);
    let item_ranges = balanced_ranges(&weights(&item_counts), workers);
    let by_user: Vec<(u32, u32, f64)> = route(ranks, &survivors, |r| owner_of(&user_ranges, threads, r.user as usize))?
        .iter()
        .map(|r| (r.0, r.1, r.2))
        .collect();
    let by_item: Vec<(u32, u32, f64)> = route(ranks, &survivors, |r| owner_of(&item_ranges, threads, r.item as usize))?
        .iter()
        .map(|r| (r.0, r.1, r.2))
        .collect();
    drop(survivors);
    let owned = rank_range(&user_ranges, threads, rank);
    let mut sums = vec![0.0; owned.len()];
    let mut squares = vec![0.0; owned.len()];
    for &(u, _, v) in &by_user {
        sums[u as usize - owned.start] += v;
        squares[u as usize - owned.start] += v * v;
    }
    let (user_sums, _) = ranks.concat_all(&sums).map_err(collective)?;
    let (user_square_sums, _) = ranks.concat_all(&squares).map_err(collective)?;
    let validation_ratings = ranks.all_sum_one(held.len() as u64).map_err(collective)? as usize;
    let validation: Vec<Rating> = route(ranks, &held, |r| owner_of(&user_ranges, threads, r.user as usize))?
        .iter()
        .map(|r| unlined(r).0)
        .collect();

    let mut totals = RatingTotals {
        users,
        items,
        ratings,
        test_ratings: ranks.all_max(test_ratings.len() as u64).map_err(collective)? as usize,
        test_cold_pairs: 0,
        user_counts,
        item_counts,
        user_sums,
        user_square_sums,
        validation_ratings,
    };
    let cold = test_ratings.iter().filter(|r| totals.is_cold(r)).count();
    totals.test_cold_pairs = ranks.all_max(cold as u64).map_err(collective)? as usize;
    let mut parts: Vec<Vec<Lined>> = vec![Vec::new(); count];
    for (line, r) in test_ratings.iter().enumerate() {
        parts[owner_of(&user_ranges, threads, r.user as usize)].push((r.user, r.item, r.value, line));
    }
    let test: Vec<Rating> =
        ranks.exchange(parts).map_err(DataError::Collective)?.concat().iter().map(|r| unlined(r).0).collect();
    Ok((RankRatings { totals, by_user, by_item, test, validation, bytes_read: share.bytes_read }, ids))
}
