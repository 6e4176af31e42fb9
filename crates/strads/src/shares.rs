//! Loading a LIBSVM file or a prepared corpus in an MPI job so that no rank holds the whole of it.
//!
//! Every rank reads one byte share of the file (whole lines, [`read_line_share`]) and parses it;
//! the ranks agree on the line numbers (for errors), the index base, the number of features and
//! every row's weight; the rows are then cut into the same balanced worker shards the embedded
//! runtime cuts, and each row is sent to the rank whose workers own it. A rank keeps only its
//! workers' rows. The leader also gathers every row when the dynamic scheduler needs them (it
//! scores correlations between columns), which is the one place the data is whole. A prepared LDA
//! corpus goes the same way, by documents (`corpus.ldac`), the ranks summing the word frequencies;
//! a delimited rating file by lines, rank 0 numbering the ids in file order, duplicates meeting on
//! one rank, then each rating going to its user's and its item's ranks.

use std::ops::Range;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use strads_core::balanced_ranges;
use strads_corpus::{Corpus, parse_ldac_share, read_prepared_index};
use strads_data::{
    DataError, Dataset, Features, IndexBase, LineShare, RawRows, RowSource, SparseRows, read_line_share,
};
use strads_lda::DocumentSource;
use strads_mf::ratings::{
    Ids, Rating, ReadOptions, check_magnitudes, delimited_layout, parse_delimited_share, read_ratings,
    resolve_duplicates,
};
use strads_mf::{RatingSource, RatingTotals};
use strads_runtime::Mpi;

use crate::failure::Failure;

/// The rows this rank's workers own, with what every rank agrees on.
pub struct RankRows {
    rows: usize,
    features: usize,
    weights: Vec<u64>,
    first: usize,
    local: Dataset,
    whole: Option<Dataset>,
    /// Bytes this rank read from the file.
    pub bytes_read: u64,
}

impl RankRows {
    /// The labels of this rank's rows.
    pub fn labels(&self) -> &[f64] {
        &self.local.y
    }

    /// Replaces the labels (of the local rows and, on the leader, of the whole data) by `f` of them.
    pub fn map_labels(&mut self, f: impl Fn(&[f64]) -> Result<Vec<f64>, Failure>) -> Result<(), Failure> {
        self.local.y = f(&self.local.y)?;
        if let Some(whole) = &mut self.whole {
            whole.y = f(&whole.y)?;
        }
        Ok(())
    }
}

/// The distinct values among every rank's `labels` (at most three from each rank, enough to tell
/// two classes from more), sorted.
pub fn distinct_labels(mpi: &Mpi, labels: &[f64]) -> Result<Vec<f64>, Failure> {
    let mut mine: Vec<f64> = Vec::new();
    for &y in labels {
        if mine.len() == 3 {
            break;
        }
        if !mine.contains(&y) {
            mine.push(y);
        }
    }
    let mut all: Vec<f64> = mpi.all_gather(&mine).map_err(transport)?.concat();
    all.sort_by(f64::total_cmp);
    all.dedup();
    Ok(all)
}

impl RowSource for RankRows {
    fn rows(&self) -> usize {
        self.rows
    }

    fn features(&self) -> usize {
        self.features
    }

    fn row_weights(&self) -> Vec<u64> {
        self.weights.clone()
    }

    fn shard(&self, range: Range<usize>) -> Result<(Features, Vec<f64>), DataError> {
        if let Some(whole) = &self.whole {
            return whole.shard(range);
        }
        let end = self.first + self.local.rows();
        if range.start < self.first || range.end > end {
            return Err(DataError::Invalid {
                path: "<shares>".into(),
                message: format!("rows {range:?} are not on this rank, which holds rows {}..{end}", self.first),
            });
        }
        self.local.shard(range.start - self.first..range.end - self.first)
    }

    fn whole(&self) -> Option<&Dataset> {
        self.whole.as_ref()
    }
}

/// Rows on their way to another rank.
#[derive(Default, Serialize, Deserialize)]
struct Rows {
    labels: Vec<f64>,
    lengths: Vec<u32>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl Rows {
    fn push(&mut self, matrix: &SparseRows, labels: &[f64], row: usize) {
        let view = matrix.outer_view(row).expect("row in range");
        self.labels.push(labels[row]);
        self.lengths.push(view.nnz() as u32);
        self.indices.extend_from_slice(view.indices());
        self.values.extend_from_slice(view.data());
    }
}

fn gather_rows(parts: Vec<Rows>, features: usize, path: &Path) -> Result<Dataset, Failure> {
    let mut labels = Vec::new();
    let mut indptr = vec![0usize];
    let (mut indices, mut values) = (Vec::new(), Vec::new());
    for part in parts {
        labels.extend(part.labels);
        for length in part.lengths {
            indptr.push(indptr[indptr.len() - 1] + length as usize);
        }
        indices.extend(part.indices);
        values.extend(part.values);
    }
    let x = SparseRows::try_new((labels.len(), features), indptr, indices, values)
        .map_err(|(_, _, _, e)| Failure::input(format!("{}: inconsistent rows between ranks: {e}", path.display())))?;
    Ok(Dataset { x: Features::Sparse(x), y: labels, feature_names: None })
}

fn transport(error: strads_core::EngineError) -> Failure {
    Failure::Run(error.into())
}

/// This rank's share of the file at `path`, and the number of lines before it.
fn read_share(mpi: &Mpi, path: &Path) -> Result<(LineShare, usize), Failure> {
    let share = read_line_share(path, mpi.rank(), mpi.ranks())?;
    let lines: Vec<usize> = mpi.all_gather(&share.lines).map_err(transport)?;
    let before = lines[..mpi.rank()].iter().sum();
    Ok((share, before))
}

/// Every rank's `values` one after another, on every rank, and where this rank's start.
fn concat_all<T: Serialize + DeserializeOwned>(mpi: &Mpi, values: &Vec<T>) -> Result<(Vec<T>, usize), Failure> {
    let all: Vec<Vec<T>> = mpi.all_gather(values).map_err(transport)?;
    let offset = all[..mpi.rank()].iter().map(Vec::len).sum();
    Ok((all.into_iter().flatten().collect(), offset))
}

/// The rank whose workers own index `x` under `shards` (one range per worker, `threads` per rank).
fn owner_of(shards: &[Range<usize>], threads: usize, x: usize) -> usize {
    shards.partition_point(|r| r.end <= x) / threads
}

/// The indices the workers of `rank` own together.
fn rank_range(shards: &[Range<usize>], threads: usize, rank: usize) -> Range<usize> {
    shards[rank * threads].start..shards[rank * threads + threads - 1].end
}

/// Which ranks also gather every row of a LIBSVM file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WholeOn {
    /// None: each rank keeps its workers' rows only.
    Nowhere,
    /// Rank 0 (the dynamic Lasso scheduler scores correlations between columns).
    Leader,
    /// Every rank (the block Lasso scheduler gives every worker every row).
    Everywhere,
}

/// Reads this rank's rows of the LIBSVM file at `path` for a run of `workers` workers spread
/// evenly over the ranks; `whole` says which ranks also gather every row.
pub fn load_libsvm(
    mpi: &Mpi,
    path: &Path,
    base: IndexBase,
    workers: usize,
    whole: WholeOn,
) -> Result<RankRows, Failure> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let (share, before) = read_share(mpi, path)?;
    let first_line = before + 1;
    let raw = RawRows::parse(path, &share.bytes, first_line)?;
    let zero_anywhere = mpi.all_max(u64::from(raw.first_zero_line.is_some())) == 1;
    let zero_based = raw.zero_based(path, base, zero_anywhere)?;
    let local_weights = raw.row_weights();
    let (matrix, labels) = raw.finish(path, &share.bytes, first_line, zero_based)?;
    let bytes_read = share.bytes_read;
    drop(share);
    let features = mpi.all_max(matrix.cols() as u64) as usize;
    let (weights, offset) = concat_all(mpi, &local_weights)?;
    let rows = weights.len();
    if rows == 0 {
        return Err(Failure::input(format!("{}: no data rows", path.display())));
    }
    // The ranks' rows: the union of their workers' balanced shards, as the engine will cut them.
    let threads = workers / ranks;
    let shards = balanced_ranges(&weights, workers);
    let mut outgoing: Vec<Rows> = (0..ranks).map(|_| Rows::default()).collect();
    let mut mine = Rows::default();
    for row in 0..matrix.rows() {
        outgoing[owner_of(&shards, threads, offset + row)].push(&matrix, &labels, row);
        if whole != WholeOn::Nowhere {
            mine.push(&matrix, &labels, row);
        }
    }
    drop(matrix);
    let local = gather_rows(mpi.exchange(outgoing).map_err(transport)?, features, path)?;
    let whole = match whole {
        WholeOn::Nowhere => None,
        WholeOn::Leader => {
            let mut parts: Vec<Rows> = (0..ranks).map(|_| Rows::default()).collect();
            parts[0] = mine;
            let received = mpi.exchange(parts).map_err(transport)?;
            if rank == 0 { Some(gather_rows(received, features, path)?) } else { None }
        }
        WholeOn::Everywhere => {
            let received: Vec<Rows> = mpi.all_gather(&mine).map_err(transport)?;
            Some(gather_rows(received, features, path)?)
        }
    };
    let first = rank_range(&shards, threads, rank).start;
    Ok(RankRows { rows, features, weights, first, local, whole, bytes_read })
}

/// Documents on their way to another rank.
#[derive(Default, Serialize, Deserialize)]
struct Documents {
    lengths: Vec<u32>,
    tokens: Vec<u32>,
}

/// The documents this rank's workers own, with the counts every rank agrees on.
pub struct RankCorpus {
    documents: usize,
    vocabulary: usize,
    tokens: usize,
    frequencies: Vec<u64>,
    lengths: Vec<u64>,
    first: usize,
    offsets: Vec<usize>,
    local: Vec<u32>,
    /// Bytes this rank read from the documents file.
    pub bytes_read: u64,
}

impl DocumentSource for RankCorpus {
    fn documents(&self) -> usize {
        self.documents
    }

    fn vocabulary_size(&self) -> usize {
        self.vocabulary
    }

    fn token_count(&self) -> usize {
        self.tokens
    }

    fn frequencies(&self) -> Vec<u64> {
        self.frequencies.clone()
    }

    fn lengths(&self) -> Vec<u64> {
        self.lengths.clone()
    }

    fn document(&self, d: usize) -> &[u32] {
        let local = d - self.first;
        &self.local[self.offsets[local]..self.offsets[local + 1]]
    }

    fn beyond_vocabulary(&self) -> Option<u32> {
        None // every share was parsed against the vocabulary
    }
}

/// Reads this rank's documents of the prepared corpus in `dir` for a run of `workers` workers spread
/// evenly over the ranks. Returns them, and the corpus without its tokens (vocabulary, document
/// counts and, on rank 0, each document's input position) for the outputs.
pub fn load_prepared(mpi: &Mpi, dir: &Path, workers: usize) -> Result<(RankCorpus, Corpus), Failure> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let index = read_prepared_index(dir)?;
    let path = &index.documents_path;
    let vocabulary = index.vocabulary.len();
    let (share, before) = read_share(mpi, path)?;
    let local = parse_ldac_share(path, &share.bytes, before + 1, vocabulary)?;
    let bytes_read = share.bytes_read;
    drop(share);
    let mut frequencies = vec![0u64; vocabulary];
    for &w in &local.tokens {
        frequencies[w as usize] += 1;
    }
    mpi.all_sum(&mut frequencies);
    let local_lengths: Vec<u64> = (0..local.documents()).map(|d| local.document(d).len() as u64).collect();
    // Each kept document's line in the documents file, and how many lines (documents) it has.
    let positions: Vec<usize> = local.ids.iter().map(|&i| before + i).collect();
    let parsed = mpi.all_sum_one((local.documents() + local.skipped_empty) as u64) as usize;
    let (lengths, offset) = concat_all(mpi, &local_lengths)?;
    let tokens = lengths.iter().sum::<u64>() as usize;
    if parsed != index.documents || tokens != index.tokens {
        return Err(Failure::input(format!(
            "{}: has {parsed} documents and {tokens} tokens, but corpus.txt says documents={} and tokens={}",
            path.display(),
            index.documents,
            index.tokens
        )));
    }
    let documents = lengths.len();
    if documents == 0 {
        return Err(Failure::input(format!("{}: no document has a token", path.display())));
    }
    let threads = workers / ranks;
    let shards = balanced_ranges(&lengths, workers);
    let mut outgoing: Vec<Documents> = (0..ranks).map(|_| Documents::default()).collect();
    for d in 0..local.documents() {
        let owner = owner_of(&shards, threads, offset + d);
        let words = local.document(d);
        outgoing[owner].lengths.push(words.len() as u32);
        outgoing[owner].tokens.extend_from_slice(words);
    }
    let skipped_here = local.skipped_empty;
    drop(local);
    let received = mpi.exchange(outgoing).map_err(transport)?;
    let mut offsets = vec![0usize];
    let mut own = Vec::new();
    for part in received {
        for length in part.lengths {
            offsets.push(offsets[offsets.len() - 1] + length as usize);
        }
        own.extend(part.tokens);
    }
    // The input position of every document, for the outputs: gathered on rank 0 only.
    let ids = mpi.gather_on_leader(positions).map_err(transport)?.into_iter().map(|line| index.ids[line]).collect();
    let skipped = mpi.all_sum_one(skipped_here as u64) as usize;
    let mut meta_offsets = Vec::with_capacity(documents + 1);
    meta_offsets.push(0);
    for &length in &lengths {
        meta_offsets.push(meta_offsets[meta_offsets.len() - 1] + length as usize);
    }
    let meta = Corpus {
        offsets: meta_offsets,
        tokens: Vec::new(),
        vocabulary: index.vocabulary,
        ids,
        skipped_empty: skipped + index.skipped_empty,
        dropped_unknown: index.dropped_unknown,
    };
    let corpus = RankCorpus {
        documents,
        vocabulary,
        tokens,
        frequencies,
        lengths,
        first: rank_range(&shards, threads, rank).start,
        offsets,
        local: own,
        bytes_read,
    };
    Ok((corpus, meta))
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
fn route(mpi: &Mpi, ratings: &[(Rating, usize)], owner: impl Fn(&Rating) -> usize) -> Result<Vec<Lined>, Failure> {
    let mut parts: Vec<Vec<Lined>> = vec![Vec::new(); mpi.ranks()];
    for r in ratings {
        parts[owner(&r.0)].push(lined(r));
    }
    let mut received: Vec<Lined> = mpi.exchange(parts).map_err(transport)?.concat();
    received.sort_by_key(|r| r.3);
    Ok(received)
}

/// Reads this rank's ratings of the delimited file `train` (and, on rank 0, the whole `test` file,
/// whose ratings then go to their users' ranks) for a run of `workers` workers spread evenly over
/// the ranks. Ids are numbered as one process numbers them (in order of first appearance, the
/// training file first); rank 0 gets them all, for the outputs, the others none.
pub fn load_ratings(
    mpi: &Mpi,
    train: &Path,
    test: Option<&Path>,
    options: &ReadOptions,
    workers: usize,
    validation: Option<(f64, u64)>,
) -> Result<(RankRatings, Ids), Failure> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let layout = delimited_layout(train)?;
    let (share, before) = read_share(mpi, train)?;
    let first_line = before + 1;
    let mut local_ids = Ids::default();
    let mut read = match &layout {
        Some(layout) => parse_delimited_share(train, &share.bytes, first_line, layout, &mut local_ids)?,
        None => Vec::new(),
    };
    drop(share.bytes);
    let parsed = mpi.all_sum_one(read.len() as u64) as usize;
    if parsed == 0 {
        return Err(Failure::input(format!("{}: no ratings in this file", train.display())));
    }
    check_magnitudes(train, &read, parsed)?;

    // Rank 0 numbers every id in file order (each rank's ids in its order of first appearance,
    // rank after rank), reads the test file with them, and tells each rank its numbers.
    let mut lists: Vec<(Vec<String>, Vec<String>)> = vec![(Vec::new(), Vec::new()); ranks];
    lists[0] = (std::mem::take(&mut local_ids.users), std::mem::take(&mut local_ids.items));
    let lists = mpi.exchange(lists).map_err(transport)?;
    let mut ids = Ids::default();
    let mut test_ratings = Vec::new();
    let mut numbers: Vec<(Vec<u32>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); ranks];
    if rank == 0 {
        for (r, (users, items)) in lists.into_iter().enumerate() {
            numbers[r] = (users.iter().map(|u| ids.user(u)).collect(), items.iter().map(|i| ids.item(i)).collect());
        }
        if let Some(test) = test {
            test_ratings = read_ratings(test, options, &mut ids)?;
        }
    }
    let (user_number, item_number) = mpi.exchange(numbers).map_err(transport)?.swap_remove(0);
    let users = mpi.all_max(ids.users.len() as u64) as usize;
    let items = mpi.all_max(ids.items.len() as u64) as usize;
    for (r, _) in &mut read {
        r.user = user_number[r.user as usize];
        r.item = item_number[r.item as usize];
    }

    // Duplicates meet on one rank (by user), are resolved there, and the counts follow.
    let mut survivors: Vec<(Rating, usize)> =
        route(mpi, &read, |r| r.user as usize % ranks)?.iter().map(unlined).collect();
    drop(read);
    resolve_duplicates(train, &mut survivors, options.duplicates, |u, i| {
        (format!("number {u}"), format!("number {i}"))
    })?;
    // Validation ratings leave training by a hash of the pair, as in memory.
    let resolved = mpi.all_sum_one(survivors.len() as u64) as usize;
    let held: Vec<(Rating, usize)> = match validation {
        Some((fraction, seed)) if strads_mf::ratings::validation_applies(resolved, fraction) => {
            let (kept, held) = survivors
                .into_iter()
                .partition(|(r, _)| !strads_mf::ratings::is_held_out(r.user, r.item, seed, fraction));
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
    mpi.all_sum(&mut counts);
    let user_counts: Vec<u32> = counts[..users].iter().map(|&n| n as u32).collect();
    let item_counts: Vec<u32> = counts[users..].iter().map(|&n| n as u32).collect();
    drop(counts);
    let ratings = mpi.all_sum_one(survivors.len() as u64) as usize;

    // Then every rating goes to the rank of its user's worker and to that of its item's.
    let threads = workers / ranks;
    let weights = |counts: &[u32]| counts.iter().map(|&n| u64::from(n) + 1).collect::<Vec<u64>>();
    let user_ranges = balanced_ranges(&weights(&user_counts), workers);
    let item_ranges = balanced_ranges(&weights(&item_counts), workers);
    let by_user: Vec<(u32, u32, f64)> = route(mpi, &survivors, |r| owner_of(&user_ranges, threads, r.user as usize))?
        .iter()
        .map(|r| (r.0, r.1, r.2))
        .collect();
    let by_item: Vec<(u32, u32, f64)> = route(mpi, &survivors, |r| owner_of(&item_ranges, threads, r.item as usize))?
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
    let (user_sums, _) = concat_all(mpi, &sums)?;
    let (user_square_sums, _) = concat_all(mpi, &squares)?;
    let validation_ratings = mpi.all_sum_one(held.len() as u64) as usize;
    let validation: Vec<Rating> =
        route(mpi, &held, |r| owner_of(&user_ranges, threads, r.user as usize))?.iter().map(|r| unlined(r).0).collect();

    let mut totals = RatingTotals {
        users,
        items,
        ratings,
        test_ratings: mpi.all_max(test_ratings.len() as u64) as usize,
        test_cold_pairs: 0,
        user_counts,
        item_counts,
        user_sums,
        user_square_sums,
        validation_ratings,
    };
    let cold = test_ratings.iter().filter(|r| totals.is_cold(r)).count();
    totals.test_cold_pairs = mpi.all_max(cold as u64) as usize;
    let mut parts: Vec<Vec<Lined>> = vec![Vec::new(); ranks];
    for (line, r) in test_ratings.iter().enumerate() {
        parts[owner_of(&user_ranges, threads, r.user as usize)].push((r.user, r.item, r.value, line));
    }
    let test: Vec<Rating> = mpi.exchange(parts).map_err(transport)?.concat().iter().map(|r| unlined(r).0).collect();
    Ok((RankRatings { totals, by_user, by_item, test, validation, bytes_read: share.bytes_read }, ids))
}
