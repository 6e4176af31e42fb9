//! Data in and out of strads: readers for the formats users bring, feature matrices, atomic files.
//!
//! Every reader reports a bad input as a [`DataError`] naming the file, the line and the problem,
//! and never panics on what it reads; sizes a header claims are checked against what the file can
//! hold before anything is allocated for them. Every writer goes through a temporary file and a
//! rename, so an output is either whole or absent.

#![warn(clippy::unwrap_used)]

mod dataset;
mod delimited;
mod error;
mod features;
mod libsvm;
mod matrix_market;
mod npy;
mod output;
mod rank_rows;
mod share;
mod source;

pub use dataset::{Dataset, Format, LoadOptions, detect_format, load};
pub use delimited::{Header, LabelColumn, read_csv};
pub use error::DataError;
pub use features::{Columns, DenseColumns, DenseRows, Features, SparseColumns, SparseRows, written_zeros};
pub use libsvm::{IndexBase, RawRows, parse_libsvm, read_libsvm, write_libsvm};
pub use matrix_market::{Coordinates, Triplet, read_coordinates, read_matrix_market, read_vector};
pub use npy::{read_npy, write_npy, write_npy_from};
pub use output::{write_atomic, write_string_atomic};
pub use rank_rows::{RankRows, WholeOn, distinct_labels, load_libsvm_share};
pub use share::{LineShare, read_line_share, read_rank_share};
pub use source::{RowSource, WeightedDataset};
