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

    /// With sample weights: the square root of each row's weight, by which every row of this
    /// source's features and labels is already multiplied (see [`WeightedDataset`]).
    fn row_scales(&self) -> Option<&[f64]> {
        None
    }
}

/// A data set whose rows carry weights: the objective's squared error of row `i` counts
/// `weights[i]` times (weights rescaled to sum to the number of rows, as scikit-learn rescales
/// them, so that they change how rows count against each other, not the penalty's weight).
///
/// The rows are stored multiplied by the square roots of their weights (`sqrt(w_i) x_i`,
/// `sqrt(w_i) y_i`): a least-squares problem in those rows is the weighted one, and the
/// intercept's column is `sqrt(w)` instead of ones, which [`RowSource::row_scales`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedDataset {
    data: Dataset,
    scales: Vec<f64>,
}

impl WeightedDataset {
    /// `data` with a weight per row: finite, at least zero, not all zero.
    pub fn new(mut data: Dataset, weights: &[f64]) -> Result<Self, DataError> {
        let invalid = |message: String| DataError::Invalid { path: "<sample weights>".into(), message };
        let rows = data.x.rows();
        if weights.len() != rows {
            return Err(invalid(format!("{} sample weights for {rows} rows", weights.len())));
        }
        if let Some((i, w)) = weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w >= 0.0)) {
            return Err(invalid(format!("the weight of row {i} is {w}; weights must be finite and at least 0")));
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(invalid(format!("the sample weights sum to {total}; at least one must be above 0")));
        }
        let scales: Vec<f64> = weights.iter().map(|w| (w * rows as f64 / total).sqrt()).collect();
        data.x.scale_rows(&scales);
        data.y.iter_mut().zip(&scales).for_each(|(y, s)| *y *= s);
        Ok(WeightedDataset { data, scales })
    }

    /// The rows multiplied by their scales.
    pub fn scaled(&self) -> &Dataset {
        &self.data
    }
}

impl RowSource for WeightedDataset {
    fn rows(&self) -> usize {
        self.data.rows()
    }

    fn features(&self) -> usize {
        self.data.features()
    }

    fn row_weights(&self) -> Vec<u64> {
        self.data.row_weights()
    }

    fn shard(&self, range: Range<usize>) -> Result<(Features, Vec<f64>), DataError> {
        self.data.shard(range)
    }

    fn whole(&self) -> Option<&Dataset> {
        Some(&self.data)
    }

    fn row_scales(&self) -> Option<&[f64]> {
        Some(&self.scales)
    }
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
