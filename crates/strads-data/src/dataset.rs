//! A labelled data set from any supported format, with the format chosen by name or by content.

use std::path::{Path, PathBuf};

use crate::{
    DataError, Features, Header, IndexBase, LabelColumn, read_csv, read_libsvm, read_matrix_market, read_vector,
};

/// A supported input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// LIBSVM / svmlight text.
    Libsvm,
    /// A MatrixMarket matrix for the features, with the labels in a second file.
    MatrixMarket,
    /// Dense delimited text with a label column.
    Csv,
}

impl Format {
    /// The format a file name suggests, if any.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svm" | "libsvm" | "svmlight" => Some(Format::Libsvm),
            "mtx" | "mm" => Some(Format::MatrixMarket),
            "csv" | "tsv" => Some(Format::Csv),
            _ => None,
        }
    }

    /// The format a file's first bytes suggest.
    pub fn sniff(path: &Path) -> Result<Format, DataError> {
        use std::io::Read;
        let mut head = [0u8; 4096];
        let mut file = std::fs::File::open(path).map_err(|e| DataError::io(path, e))?;
        let n = file.read(&mut head).map_err(|e| DataError::io(path, e))?;
        let head = &head[..n];
        if head.starts_with(b"%%MatrixMarket") || head.starts_with(b"%%matrixmarket") {
            return Ok(Format::MatrixMarket);
        }
        let first = head.split(|&b| b == b'\n').find(|l| !l.is_empty() && l[0] != b'#').unwrap_or_default();
        Ok(if first.contains(&b':') { Format::Libsvm } else { Format::Csv })
    }
}

/// How to read a data set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// The format, or `None` to go by the file name, then by the content.
    pub format: Option<Format>,
    /// The labels file that goes with a MatrixMarket feature matrix.
    pub labels: Option<PathBuf>,
    /// How LIBSVM indices are numbered.
    pub index_base: IndexBase,
    /// Whether a CSV file has a header.
    pub header: Header,
    /// Which CSV column is the label.
    pub label_column: LabelColumn,
}

/// Features and labels of one data set.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// One row per sample.
    pub x: Features,
    /// One label per row.
    pub y: Vec<f64>,
    /// Feature names, when the file has them (CSV headers).
    pub feature_names: Option<Vec<String>>,
}

impl Dataset {
    /// The samples at `rows` (in that order), for cross-validation folds.
    pub fn select_rows(&self, rows: &[usize]) -> Dataset {
        Dataset {
            x: self.x.select_rows(rows),
            y: rows.iter().map(|&i| self.y[i]).collect(),
            feature_names: self.feature_names.clone(),
        }
    }
}

/// The format of the file at `path`: `given` if set, else by its name, else by its content.
pub fn detect_format(path: &Path, given: Option<Format>) -> Result<Format, DataError> {
    match given.or_else(|| Format::from_extension(path)) {
        Some(format) => Ok(format),
        None => Format::sniff(path),
    }
}

/// Reads a data set.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Dataset, DataError> {
    match detect_format(path, options.format)? {
        Format::Libsvm => {
            let (x, y) = read_libsvm(path, options.index_base)?;
            Ok(Dataset { x, y, feature_names: None })
        }
        Format::Csv => {
            let (x, y, names) = read_csv(path, options.header, &options.label_column)?;
            Ok(Dataset { x, y, feature_names: Some(names) })
        }
        Format::MatrixMarket => {
            let labels = options.labels.as_deref().ok_or_else(|| {
                DataError::invalid(path, "a MatrixMarket feature matrix needs its labels in a second file (--labels)")
            })?;
            let x = read_matrix_market(path)?;
            let y = read_vector(labels)?;
            if y.len() != x.rows() {
                return Err(DataError::invalid(
                    labels,
                    format!("has {} labels but {} has {} rows", y.len(), path.display(), x.rows()),
                ));
            }
            Ok(Dataset { x, y, feature_names: None })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_found_by_name_or_content() {
        let dir = tempfile::tempdir().unwrap();
        let svm = dir.path().join("data");
        std::fs::write(&svm, "1 1:2\n-1 2:3\n").unwrap();
        let d = load(&svm, &LoadOptions::default()).unwrap();
        assert_eq!((d.x.rows(), d.x.cols(), d.y.clone()), (2, 2, vec![1.0, -1.0]));

        let x = dir.path().join("x.mtx");
        let y = dir.path().join("y.txt");
        std::fs::write(&x, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n").unwrap();
        std::fs::write(&y, "1\n2\n3\n").unwrap();
        let no_labels = load(&x, &LoadOptions::default()).unwrap_err().to_string();
        assert!(no_labels.contains("needs its labels"), "{no_labels}");
        let options = LoadOptions { labels: Some(y.clone()), ..LoadOptions::default() };
        let mismatch = load(&x, &options).unwrap_err().to_string();
        assert_eq!(mismatch, format!("{}: has 3 labels but {} has 2 rows", y.display(), x.display()));
        std::fs::write(&y, "1\n2\n").unwrap();
        assert_eq!(load(&x, &options).unwrap().y, vec![1.0, 2.0]);

        let csv = dir.path().join("d.csv");
        std::fs::write(&csv, "label,a\n1,2\n").unwrap();
        assert_eq!(load(&csv, &LoadOptions::default()).unwrap().feature_names, Some(vec!["a".to_string()]));
    }
}
