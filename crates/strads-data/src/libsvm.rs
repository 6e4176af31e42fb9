//! LIBSVM / svmlight text: `label index:value index:value ... # comment`, one sample per line.
//!
//! Indices are 1-based by the format's convention, but many files are 0-based; with
//! [`IndexBase::Auto`] a file that uses index 0 anywhere is read as 0-based, any other as 1-based.
//! Indices may come in any order within a line; a repeated index is an error, as is any value
//! that is not a finite number. `qid:` tokens are accepted and ignored.

use std::io::Write;
use std::path::Path;

use crate::features::SparseRows;
use crate::{DataError, Features};

/// How feature indices are numbered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexBase {
    /// 0-based if index 0 appears anywhere, else 1-based.
    #[default]
    Auto,
    /// The first feature is index 0.
    Zero,
    /// The first feature is index 1 (the format's convention).
    One,
}

/// Reads a LIBSVM file into sparse rows and labels.
pub fn read_libsvm(path: &Path, base: IndexBase) -> Result<(Features, Vec<f64>), DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    let (rows, labels) = parse_libsvm(path, &bytes, base)?;
    Ok((Features::Sparse(rows), labels))
}

/// Parses LIBSVM text; `path` only names the source in errors.
pub fn parse_libsvm(path: &Path, text: &[u8], base: IndexBase) -> Result<(SparseRows, Vec<f64>), DataError> {
    let raw = RawRows::parse(path, text, 1)?;
    if raw.labels.is_empty() {
        return Err(DataError::invalid(path, "no data rows"));
    }
    let zero_based = raw.zero_based(path, base, raw.first_zero_line.is_some())?;
    raw.finish(path, text, 1, zero_based)
}

/// LIBSVM rows as parsed, before the index base is known (it may depend on other parts of the file).
#[derive(Clone, Debug, Default)]
pub struct RawRows {
    /// One label per row.
    pub labels: Vec<f64>,
    indptr: Vec<usize>,
    raw_indices: Vec<u64>,
    data: Vec<f64>,
    /// The first line (of the whole file) with a feature index 0, if any.
    pub first_zero_line: Option<usize>,
}

impl RawRows {
    /// Parses `text`, whose first line is line `first_line` of the file `path`.
    pub fn parse(path: &Path, text: &[u8], first_line: usize) -> Result<RawRows, DataError> {
        let mut labels = Vec::new();
        let mut indptr = vec![0usize];
        let mut raw_indices: Vec<u64> = Vec::new();
        let mut data = Vec::new();
        let mut first_zero_line: Option<usize> = None;
        let mut row: Vec<(u64, f64)> = Vec::new();

        for (line_index, raw_line) in text.split(|&b| b == b'\n').enumerate() {
            let line_no = line_index + first_line;
            let line = raw_line.split(|&b| b == b'#').next().unwrap_or_default();
            let line =
                std::str::from_utf8(line).map_err(|_| DataError::parse(path, line_no, "not valid UTF-8 text"))?;
            let mut tokens = line.split_ascii_whitespace();
            let Some(label_token) = tokens.next() else { continue };
            if label_token.contains(':') {
                return Err(DataError::parse(
                    path,
                    line_no,
                    format!("missing label: the line starts with '{label_token}'"),
                ));
            }
            let label = parse_finite(label_token).ok_or_else(|| {
                DataError::parse(path, line_no, format!("bad label '{label_token}': expected a number"))
            })?;
            row.clear();
            for token in tokens {
                let Some((index, value)) = token.split_once(':') else {
                    return Err(DataError::parse(path, line_no, format!("bad token '{token}': expected index:value")));
                };
                if index == "qid" {
                    continue;
                }
                let index: u64 = index.parse().map_err(|_| {
                    DataError::parse(
                        path,
                        line_no,
                        format!("bad feature index '{index}' in '{token}': expected an integer >= 0"),
                    )
                })?;
                let value = parse_finite(value).ok_or_else(|| {
                    DataError::parse(path, line_no, format!("bad value in '{token}': expected a finite number"))
                })?;
                if index == 0 && first_zero_line.is_none() {
                    first_zero_line = Some(line_no);
                }
                row.push((index, value));
            }
            row.sort_unstable_by_key(|&(index, _)| index);
            if let Some(w) = row.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(DataError::parse(path, line_no, format!("feature index {} appears twice", w[0].0)));
            }
            for &(index, value) in &row {
                if value != 0.0 {
                    raw_indices.push(index);
                    data.push(value);
                }
            }
            labels.push(label);
            indptr.push(data.len());
        }
        Ok(RawRows { labels, indptr, raw_indices, data, first_zero_line })
    }

    /// Whether indices are 0-based under `base`, given whether index 0 appears anywhere in the file.
    pub fn zero_based(&self, path: &Path, base: IndexBase, zero_anywhere: bool) -> Result<bool, DataError> {
        match (base, zero_anywhere) {
            (IndexBase::Zero, _) | (IndexBase::Auto, true) => Ok(true),
            (IndexBase::One, true) => Err(match self.first_zero_line {
                Some(line) => DataError::parse(path, line, "feature index 0 in a file read as 1-based"),
                None => {
                    DataError::invalid(path, "feature index 0 (in another part of the file) in a file read as 1-based")
                }
            }),
            (IndexBase::One | IndexBase::Auto, false) => Ok(false),
        }
    }

    /// Stored values per row (plus one).
    pub fn row_weights(&self) -> Vec<u64> {
        self.indptr.windows(2).map(|w| (w[1] - w[0]) as u64 + 1).collect()
    }

    /// The rows with their indices shifted to 0-based; `text` and `first_line` as given to [`RawRows::parse`].
    pub fn finish(
        self,
        path: &Path,
        text: &[u8],
        first_line: usize,
        zero_based: bool,
    ) -> Result<(SparseRows, Vec<f64>), DataError> {
        let RawRows { labels, indptr, raw_indices, data, .. } = self;
        let shift = u64::from(!zero_based);
        let mut indices = Vec::with_capacity(raw_indices.len());
        let mut cols = 0usize;
        for &index in &raw_indices {
            let index = index - shift;
            let Ok(index) = u32::try_from(index) else {
                let line = line_of(&indptr, indices.len());
                return Err(DataError::parse(
                    path,
                    line_in_text(text, line) + first_line - 1,
                    format!("feature index {} is beyond the largest supported ({})", index + shift, u32::MAX),
                ));
            };
            cols = cols.max(index as usize + 1);
            indices.push(index);
        }
        let rows = labels.len();
        let matrix = SparseRows::try_new((rows, cols), indptr, indices, data)
            .map_err(|(_, _, _, e)| DataError::invalid(path, format!("inconsistent sparse structure: {e}")))?;
        Ok((matrix, labels))
    }
}

/// The data row holding entry `entry`.
fn line_of(indptr: &[usize], entry: usize) -> usize {
    indptr.partition_point(|&start| start <= entry).saturating_sub(1)
}

/// The 1-based text line of the `row`-th data row (blank and comment-only lines are not rows).
fn line_in_text(text: &[u8], row: usize) -> usize {
    let mut seen = 0;
    for (index, line) in text.split(|&b| b == b'\n').enumerate() {
        let content = line.split(|&b| b == b'#').next().unwrap_or_default();
        if content.iter().any(|b| !b.is_ascii_whitespace()) {
            if seen == row {
                return index + 1;
            }
            seen += 1;
        }
    }
    0
}

fn parse_finite(token: &str) -> Option<f64> {
    token.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Writes rows and labels as 1-based LIBSVM text.
pub fn write_libsvm(out: &mut impl Write, rows: &SparseRows, labels: &[f64]) -> std::io::Result<()> {
    for (row, label) in rows.outer_iterator().zip(labels) {
        write!(out, "{label}")?;
        for (j, value) in row.iter() {
            write!(out, " {}:{value}", j + 1)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, base: IndexBase) -> Result<(SparseRows, Vec<f64>), DataError> {
        parse_libsvm(Path::new("in.svm"), text.as_bytes(), base)
    }

    fn err(text: &str) -> String {
        parse(text, IndexBase::Auto).unwrap_err().to_string()
    }

    #[test]
    fn reads_one_based_files_with_comments_and_qid() {
        let (m, y) = parse("# header\n+1 qid:3 1:0.5 3:2 # tail\n\n-1 2:1e-3\n", IndexBase::Auto).unwrap();
        assert_eq!(y, vec![1.0, -1.0]);
        assert_eq!(m.shape(), (2, 3));
        assert_eq!(m.get(0, 0), Some(&0.5));
        assert_eq!(m.get(0, 2), Some(&2.0));
        assert_eq!(m.get(1, 1), Some(&1e-3));
    }

    #[test]
    fn detects_zero_based_files_and_sorts_indices() {
        let (m, _) = parse("1 3:1 0:2\n", IndexBase::Auto).unwrap();
        assert_eq!(m.shape(), (1, 4));
        assert_eq!(m.get(0, 0), Some(&2.0));
        assert_eq!(m.get(0, 3), Some(&1.0));
        let (m, _) = parse("1 3:1 1:2\n", IndexBase::Zero).unwrap();
        assert_eq!(m.get(0, 1), Some(&2.0));
    }

    #[test]
    fn round_trips_through_the_writer() {
        let (m, y) = parse("2.5 1:1 4:-3.25\n0 2:7\n", IndexBase::Auto).unwrap();
        let mut out = Vec::new();
        write_libsvm(&mut out, &m, &y).unwrap();
        let (again, y2) = parse(std::str::from_utf8(&out).unwrap(), IndexBase::One).unwrap();
        assert_eq!(again, m);
        assert_eq!(y2, y);
    }

    #[test]
    fn bad_inputs_name_the_line_and_the_problem() {
        assert_eq!(err("1 1:1\n1 2:abc\n"), "in.svm:2: bad value in '2:abc': expected a finite number");
        assert_eq!(err("1 1:1\n3:1 4:2\n"), "in.svm:2: missing label: the line starts with '3:1'");
        assert_eq!(err("x 1:1\n"), "in.svm:1: bad label 'x': expected a number");
        assert_eq!(err("1 1:nan\n"), "in.svm:1: bad value in '1:nan': expected a finite number");
        assert_eq!(err("1 1:inf\n"), "in.svm:1: bad value in '1:inf': expected a finite number");
        assert_eq!(err("nan 1:1\n"), "in.svm:1: bad label 'nan': expected a number");
        assert_eq!(err("1 1:1 1:2\n"), "in.svm:1: feature index 1 appears twice");
        assert_eq!(err("1 -1:2\n"), "in.svm:1: bad feature index '-1' in '-1:2': expected an integer >= 0");
        assert_eq!(err("1 12\n"), "in.svm:1: bad token '12': expected index:value");
        assert_eq!(err(""), "in.svm: no data rows");
        assert_eq!(err("# only a comment\n\n"), "in.svm: no data rows");
        assert_eq!(
            err("1 1:1\n\n1 99999999999:1\n"),
            "in.svm:3: feature index 99999999999 is beyond the largest supported (4294967295)"
        );
        assert!(err("1 1:\u{0}\u{ff}\n").starts_with("in.svm:1:"));
        let bad = parse_libsvm(Path::new("in.svm"), b"1 1:1\n1 2:\xff\n", IndexBase::Auto).unwrap_err();
        assert_eq!(bad.to_string(), "in.svm:2: not valid UTF-8 text");
        let zero = parse("1 1:1\n1 0:1\n", IndexBase::One).unwrap_err();
        assert_eq!(zero.to_string(), "in.svm:2: feature index 0 in a file read as 1-based");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse_libsvm(Path::new("fuzz.svm"), &bytes, IndexBase::Auto);
        }

        #[test]
        fn arbitrary_token_soup_never_panics(text in "[0-9:.+eE\\- \\n#qidnaf]{0,300}") {
            let _ = parse_libsvm(Path::new("fuzz.svm"), text.as_bytes(), IndexBase::Auto);
        }
    }
}
