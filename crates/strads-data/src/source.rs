//! Where a run's rows come from: everything in memory, or read by each process for its own workers.
//!
//! An application asks a [`RowSource`] for the rows of each worker it builds, so the same
//! application code serves a data set loaded once in memory and, on a cluster, a file that each
//! process reads only its share of. The scheduler of some applications also needs every row
//! (to score dependencies between columns): [`RowSource::whole`] offers it where it is at hand.

use std::ops::Range;

use crate::{DataError, Dataset, Features};

/// The rows of a labelled data set, by ranges.
pub trait RowSource: Sync {
    /// Number of rows.
    fn rows(&self) -> usize;

    /// Number of features (columns).
    fn features(&self) -> usize;

    /// Stored values per row (plus one), to cut shards of balanced work.
    fn row_weights(&self) -> Vec<u64>;

    /// The features and labels of the rows in `range`.
    fn shard(&self, range: Range<usize>) -> Result<(Features, Vec<f64>), DataError>;

    /// The whole data set, when this process holds it.
    fn whole(&self) -> Option<&Dataset>;
}

impl RowSource for Dataset {
    fn rows(&self) -> usize {
        self.x.rows()
    }

    fn features(&self) -> usize {
        self.x.cols()
    }

    fn row_weights(&self) -> Vec<u64> {
        self.x.row_weights()
    }

    fn shard(&self, range: Range<usize>) -> Result<(Features, Vec<f64>), DataError> {
        let labels = self.y.get(range.clone()).map(<[f64]>::to_vec).ok_or_else(|| DataError::Invalid {
            path: "<memory>".into(),
            message: format!("rows {range:?} are beyond the {} labels", self.y.len()),
        })?;
        Ok((self.x.slice_rows(range), labels))
    }

    fn whole(&self) -> Option<&Dataset> {
        Some(self)
    }
}
