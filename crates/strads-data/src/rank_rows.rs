//! Loading a LIBSVM file on the ranks of a job so that no rank holds the whole of it.
//!
//! Every rank reads one byte share of the file (whole lines, [`read_rank_share`]) and parses it;
//! the ranks agree on the line numbers (for errors), the index base, the number of features and
//! every row's weight; the rows are then cut into the same balanced worker shards one process
//! cuts, and each row is sent to the rank whose workers own it. A rank keeps only its workers'
//! rows, unless the caller asks for every row on the leader or on every rank ([`WholeOn`]).

use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_core::Collectives;
use strads_core::balanced_ranges;
use strads_core::collectives::{owner_of, rank_range};

use crate::share::read_rank_share;
use crate::{DataError, Dataset, Features, IndexBase, RawRows, RowSource, SparseRows};

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

    /// Replaces the labels (of the local rows and, where held, of the whole data) by `f` of them.
    pub fn map_labels<E>(&mut self, f: impl Fn(&[f64]) -> Result<Vec<f64>, E>) -> Result<(), E> {
        self.local.y = f(&self.local.y)?;
        if let Some(whole) = &mut self.whole {
            whole.y = f(&whole.y)?;
        }
        Ok(())
    }
}

/// The distinct values among every rank's `labels` (at most three from each rank, enough to tell
/// two classes from more), sorted.
pub fn distinct_labels(ranks: &impl Collectives, labels: &[f64]) -> Result<Vec<f64>, DataError> {
    let mut mine: Vec<f64> = Vec::new();
    for &y in labels {
        if mine.len() == 3 {
            break;
        }
        if !mine.contains(&y) {
            mine.push(y);
        }
    }
    let mut all: Vec<f64> = ranks.all_gather(&mine).map_err(DataError::Collective)?.concat();
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
        if let Some(view) = matrix.outer_view(row) {
            self.labels.push(labels[row]);
            self.lengths.push(view.nnz() as u32);
            self.indices.extend_from_slice(view.indices());
            self.values.extend_from_slice(view.data());
        }
    }
}

fn gather_rows(parts: Vec<Rows>, features: usize, path: &Path) -> Result<Dataset, DataError> {
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
        .map_err(|(_, _, _, e)| DataError::invalid(path, format!("inconsistent rows between ranks: {e}")))?;
    Ok(Dataset { x: Features::Sparse(x), y: labels, feature_names: None })
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
pub fn load_libsvm_share(
    ranks: &impl Collectives,
    path: &Path,
    base: IndexBase,
    workers: usize,
    whole: WholeOn,
) -> Result<RankRows, DataError> {
    let collective = DataError::Collective;
    let (rank, count) = (ranks.rank(), ranks.ranks());
    let (share, before) = read_rank_share(ranks, path)?;
    let first_line = before + 1;
    let raw = RawRows::parse(path, &share.bytes, first_line)?;
    let zero_anywhere = ranks.all_max(u64::from(raw.first_zero_line.is_some())).map_err(collective)? == 1;
    let zero_based = raw.zero_based(path, base, zero_anywhere)?;
    let local_weights = raw.row_weights();
    let (matrix, labels) = raw.finish(path, &share.bytes, first_line, zero_based)?;
    let bytes_read = share.bytes_read;
    drop(share);
    let features = ranks.all_max(matrix.cols() as u64).map_err(collective)? as usize;
    let (weights, offset) = ranks.concat_all(&local_weights).map_err(collective)?;
    let rows = weights.len();
    if rows == 0 {
        return Err(DataError::invalid(path, "no data rows"));
    }
    // The ranks' rows: the union of their workers' balanced shards, as the engine will cut them.
    let threads = workers / count;
    let shards = balanced_ranges(&weights, workers);
    let mut outgoing: Vec<Rows> = (0..count).map(|_| Rows::default()).collect();
    let mut mine = Rows::default();
    for row in 0..matrix.rows() {
        outgoing[owner_of(&shards, threads, offset + row)].push(&matrix, &labels, row);
        if whole != WholeOn::Nowhere {
            mine.push(&matrix, &labels, row);
        }
    }
    drop(matrix);
    let local = gather_rows(ranks.exchange(outgoing).map_err(collective)?, features, path)?;
    let whole = match whole {
        WholeOn::Nowhere => None,
        WholeOn::Leader => {
            let mut parts: Vec<Rows> = (0..count).map(|_| Rows::default()).collect();
            parts[0] = mine;
            let received = ranks.exchange(parts).map_err(collective)?;
            if rank == 0 { Some(gather_rows(received, features, path)?) } else { None }
        }
        WholeOn::Everywhere => {
            let received: Vec<Rows> = ranks.all_gather(&mine).map_err(collective)?;
            Some(gather_rows(received, features, path)?)
        }
    };
    let first = rank_range(&shards, threads, rank).start;
    Ok(RankRows { rows, features, weights, first, local, whole, bytes_read })
}
