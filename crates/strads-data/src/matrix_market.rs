//! MatrixMarket files: `coordinate` (sparse) and `array` (dense) matrices, and label vectors.
//!
//! The header's sizes are checked against what the file can hold before anything is allocated
//! for them, so a header announcing 10^12 rows is refused instead of exhausting memory. Entries of
//! a coordinate file may come in any order; a repeated entry is an error, as is an entry outside
//! the declared size or a count of entries other than the declared one.

use std::path::Path;

use crate::features::{DenseRows, SparseRows};
use crate::{DataError, Features};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Coordinate,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Real,
    Pattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

struct Header {
    layout: Layout,
    field: Field,
    symmetry: Symmetry,
}

/// The numbered, non-comment lines of a text, after the banner.
struct Lines<'a> {
    path: &'a Path,
    inner: std::iter::Enumerate<std::str::Lines<'a>>,
}

impl<'a> Lines<'a> {
    fn next_content(&mut self) -> Option<(usize, &'a str)> {
        for (index, line) in self.inner.by_ref() {
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('%') {
                return Some((index + 1, line));
            }
        }
        None
    }
}

fn parse_banner(path: &Path, banner: &str) -> Result<Header, DataError> {
    let words: Vec<String> = banner.split_whitespace().map(str::to_ascii_lowercase).collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        return Err(DataError::parse(
            path,
            1,
            "not a MatrixMarket file: the first line must be '%%MatrixMarket matrix <layout> <field> <symmetry>'",
        ));
    }
    let layout = match words[2].as_str() {
        "coordinate" => Layout::Coordinate,
        "array" => Layout::Array,
        other => return Err(DataError::parse(path, 1, format!("unknown layout '{other}' (coordinate or array)"))),
    };
    let field = match words[3].as_str() {
        "real" | "integer" | "double" => Field::Real,
        "pattern" if layout == Layout::Coordinate => Field::Pattern,
        other => {
            return Err(DataError::parse(path, 1, format!("unsupported field '{other}' (real, integer or pattern)")));
        }
    };
    let symmetry = match words[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        other => return Err(DataError::parse(path, 1, format!("unsupported symmetry '{other}'"))),
    };
    Ok(Header { layout, field, symmetry })
}

fn parse_size(path: &Path, line: usize, text: &str, what: &str) -> Result<u64, DataError> {
    text.parse::<u64>().map_err(|_| {
        DataError::parse(path, line, format!("bad {what} '{text}' in the size line: expected an integer >= 0"))
    })
}

fn parse_value(path: &Path, line: usize, text: Option<&str>) -> Result<f64, DataError> {
    let text = text.ok_or_else(|| DataError::parse(path, line, "missing value"))?;
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| DataError::parse(path, line, format!("bad value '{text}': expected a finite number")))
}

/// Reads a MatrixMarket matrix: sparse rows for `coordinate`, dense rows for `array`.
pub fn read_matrix_market(path: &Path) -> Result<Features, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    parse_matrix_market(path, &bytes)
}

fn text_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, DataError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        DataError::parse(path, line, "not valid UTF-8 text")
    })
}

/// What the size line announced, checked against what the file can hold.
enum Parsed {
    Coordinate { rows: usize, cols: usize, entries: usize },
    Array { rows: usize, cols: usize },
}

fn parse_matrix_market(path: &Path, bytes: &[u8]) -> Result<Features, DataError> {
    match parse_header_and_size(path, bytes)? {
        (Parsed::Coordinate { rows, cols, entries }, header, mut lines) => {
            read_coordinate(&mut lines, &header, rows, cols, entries)
        }
        (Parsed::Array { rows, cols }, header, mut lines) => {
            if header.symmetry != Symmetry::General {
                return Err(DataError::parse(path, 1, "only general array matrices are supported"));
            }
            read_array(&mut lines, rows, cols)
        }
    }
}

/// The banner and the size line, and the lines after them.
fn parse_header_and_size<'a>(path: &'a Path, bytes: &'a [u8]) -> Result<(Parsed, Header, Lines<'a>), DataError> {
    let text = text_of(path, bytes)?;
    let banner = text.lines().next().ok_or_else(|| DataError::invalid(path, "empty file"))?;
    let header = parse_banner(path, banner)?;
    let mut lines = Lines { path, inner: text.lines().enumerate() };
    lines.inner.next();
    let (size_line, size) = lines.next_content().ok_or_else(|| DataError::invalid(path, "the size line is missing"))?;
    let parts: Vec<&str> = size.split_whitespace().collect();
    // Every value needs at least two bytes ("0\n"); a header claiming more cannot be honest.
    let capacity = bytes.len() as u64 / 2 + 1;
    let parsed = match header.layout {
        Layout::Coordinate => {
            if parts.len() != 3 {
                return Err(DataError::parse(path, size_line, "the size line must be 'rows cols entries'"));
            }
            let rows = parse_size(path, size_line, parts[0], "row count")?;
            let cols = parse_size(path, size_line, parts[1], "column count")?;
            let entries = parse_size(path, size_line, parts[2], "entry count")?;
            for (count, what) in [(rows, "rows"), (cols, "columns")] {
                if count > u64::from(u32::MAX) {
                    return Err(DataError::parse(
                        path,
                        size_line,
                        format!("the header claims {count} {what}; at most {} are supported", u32::MAX),
                    ));
                }
                // Rows are allocated before the entries are read (and columns right after): a
                // header may not claim more of them than the file could plausibly describe.
                let plausible = 8 * bytes.len() as u64 + 1024;
                if count > plausible {
                    return Err(DataError::parse(
                        path,
                        size_line,
                        format!(
                            "the header claims {count} {what}, more than a file of {} bytes can describe (at most {plausible})",
                            bytes.len()
                        ),
                    ));
                }
            }
            if entries > capacity || entries > rows.saturating_mul(cols) {
                return Err(DataError::parse(
                    path,
                    size_line,
                    format!(
                        "the header claims {entries} entries, more than a {rows} x {cols} matrix in this file can hold"
                    ),
                ));
            }
            Parsed::Coordinate { rows: rows as usize, cols: cols as usize, entries: entries as usize }
        }
        Layout::Array => {
            if parts.len() != 2 {
                return Err(DataError::parse(path, size_line, "the size line must be 'rows cols'"));
            }
            let rows = parse_size(path, size_line, parts[0], "row count")?;
            let cols = parse_size(path, size_line, parts[1], "column count")?;
            let values = rows.saturating_mul(cols);
            if values > capacity {
                return Err(DataError::parse(
                    path,
                    size_line,
                    format!("the header claims {rows} x {cols} = {values} values, more than this file can hold"),
                ));
            }
            Parsed::Array { rows: rows as usize, cols: cols as usize }
        }
    };
    Ok((parsed, header, lines))
}

/// One entry of a coordinate file: 0-based row and column, value, and the line it was read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triplet {
    /// Row, from 0.
    pub row: u32,
    /// Column, from 0.
    pub col: u32,
    /// The value (1 for a `pattern` file).
    pub value: f64,
    /// The line of the file, from 1.
    pub line: usize,
}

/// The entries of a MatrixMarket `coordinate` file, in file order, as the header declared them.
#[derive(Clone, Debug, PartialEq)]
pub struct Coordinates {
    /// Rows the header declares.
    pub rows: usize,
    /// Columns the header declares.
    pub cols: usize,
    /// Whether the file is `pattern` (no values).
    pub pattern: bool,
    /// The entries (a symmetric file's mirrored entries included), not checked for repeats.
    pub triplets: Vec<Triplet>,
}

/// Reads the entries of a MatrixMarket `coordinate` file without assembling a matrix, so the caller
/// decides what a repeated entry means. Sizes, indices, values and the entry count are checked.
pub fn read_coordinates(path: &Path) -> Result<Coordinates, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    match parse_header_and_size(path, &bytes)? {
        (Parsed::Coordinate { rows, cols, entries }, header, mut lines) => {
            let triplets = read_triplets(&mut lines, &header, rows, cols, entries)?;
            Ok(Coordinates { rows, cols, pattern: header.field == Field::Pattern, triplets })
        }
        (Parsed::Array { .. }, _, _) => {
            Err(DataError::parse(path, 1, "an array (dense) file: a coordinate file is needed here"))
        }
    }
}

fn read_triplets(
    lines: &mut Lines<'_>,
    header: &Header,
    rows: usize,
    cols: usize,
    entries: usize,
) -> Result<Vec<Triplet>, DataError> {
    let path = lines.path;
    let mut triplets: Vec<Triplet> = Vec::with_capacity(entries);
    let mut seen = 0usize;
    while let Some((line, text)) = lines.next_content() {
        seen += 1;
        if seen > entries {
            return Err(DataError::parse(path, line, format!("more entries than the {entries} the header declares")));
        }
        let mut parts = text.split_whitespace();
        let mut index = |what: &str, limit: usize| -> Result<u32, DataError> {
            let token = parts.next().ok_or_else(|| DataError::parse(path, line, format!("missing {what} index")))?;
            let value: u64 = token.parse().map_err(|_| {
                DataError::parse(path, line, format!("bad {what} index '{token}': expected an integer"))
            })?;
            if value == 0 || value > limit as u64 {
                return Err(DataError::parse(path, line, format!("{what} index {value} is outside 1..={limit}")));
            }
            Ok((value - 1) as u32)
        };
        let row = index("row", rows)?;
        let col = index("column", cols)?;
        let value = match header.field {
            Field::Pattern => 1.0,
            Field::Real => parse_value(path, line, parts.next())?,
        };
        if parts.next().is_some() {
            return Err(DataError::parse(path, line, "extra tokens after the entry"));
        }
        triplets.push(Triplet { row, col, value, line });
        match header.symmetry {
            Symmetry::General => {}
            Symmetry::Symmetric if row != col => triplets.push(Triplet { row: col, col: row, value, line }),
            Symmetry::SkewSymmetric if row != col => {
                triplets.push(Triplet { row: col, col: row, value: -value, line });
            }
            _ => {}
        }
    }
    if seen < entries {
        return Err(DataError::invalid(path, format!("the header declares {entries} entries but the file has {seen}")));
    }
    Ok(triplets)
}

fn read_coordinate(
    lines: &mut Lines<'_>,
    header: &Header,
    rows: usize,
    cols: usize,
    entries: usize,
) -> Result<Features, DataError> {
    let path = lines.path;
    let mut triplets = read_triplets(lines, header, rows, cols, entries)?;
    triplets.sort_unstable_by_key(|t| (t.row, t.col));
    if let Some(w) = triplets.windows(2).find(|w| (w[0].row, w[0].col) == (w[1].row, w[1].col)) {
        return Err(DataError::parse(
            path,
            w[1].line,
            format!("entry ({}, {}) appears twice", w[1].row + 1, w[1].col + 1),
        ));
    }
    let mut indptr = vec![0usize; rows + 1];
    let mut indices = Vec::with_capacity(triplets.len());
    let mut data = Vec::with_capacity(triplets.len());
    for t in &triplets {
        indptr[t.row as usize + 1] += 1;
        indices.push(t.col);
        data.push(t.value);
    }
    for r in 0..rows {
        indptr[r + 1] += indptr[r];
    }
    let matrix = SparseRows::try_new((rows, cols), indptr, indices, data)
        .map_err(|(_, _, _, e)| DataError::invalid(path, format!("inconsistent sparse structure: {e}")))?;
    Ok(Features::Sparse(matrix))
}

fn read_array(lines: &mut Lines<'_>, rows: usize, cols: usize) -> Result<Features, DataError> {
    let path = lines.path;
    let total = rows * cols;
    let mut column_major = Vec::with_capacity(total);
    while let Some((line, text)) = lines.next_content() {
        for token in text.split_whitespace() {
            if column_major.len() == total {
                return Err(DataError::parse(path, line, format!("more values than the {rows} x {cols} declared")));
            }
            column_major.push(parse_value(path, line, Some(token))?);
        }
    }
    if column_major.len() < total {
        return Err(DataError::invalid(
            path,
            format!("the header declares {rows} x {cols} = {total} values but the file has {}", column_major.len()),
        ));
    }
    let mut data = vec![0.0; total];
    for j in 0..cols {
        for i in 0..rows {
            data[i * cols + j] = column_major[j * rows + i];
        }
    }
    Ok(Features::Dense(DenseRows { rows, cols, data }))
}

/// Reads a vector (labels): a MatrixMarket matrix with one row or one column, or plain numbers
/// separated by white space, one or more per line.
pub fn read_vector(path: &Path) -> Result<Vec<f64>, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    let text = text_of(path, &bytes)?;
    if text.starts_with("%%") {
        return match parse_matrix_market(path, &bytes)? {
            Features::Dense(d) if d.cols == 1 || d.rows == 1 => Ok(d.data),
            Features::Sparse(m) if m.cols() == 1 || m.rows() == 1 => {
                let dense = m.to_dense();
                Ok(dense.iter().copied().collect())
            }
            other => Err(DataError::invalid(
                path,
                format!("expected a vector, found a {} x {} matrix", other.rows(), other.cols()),
            )),
        };
    }
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let content = line.split(['#', '%']).next().unwrap_or_default();
        for token in content.split_whitespace() {
            values.push(parse_value(path, index + 1, Some(token))?);
        }
    }
    if values.is_empty() {
        return Err(DataError::invalid(path, "no values"));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Features, DataError> {
        parse_matrix_market(Path::new("x.mtx"), text.as_bytes())
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_coordinate_and_array_layouts_alike() {
        let sparse =
            parse("%%MatrixMarket matrix coordinate real general\n% note\n2 3 3\n2 1 4.5\n1 3 -1\n1 1 2\n").unwrap();
        let dense = parse("%%MatrixMarket matrix array real general\n2 3\n2\n4.5\n0\n0\n-1\n0\n").unwrap();
        let v = [1.0, 2.0];
        assert_eq!(sparse.to_columns().transpose_mul(&v), dense.to_columns().transpose_mul(&v));
        assert_eq!(sparse.to_columns().transpose_mul(&v), vec![11.0, 0.0, -1.0]);
    }

    #[test]
    fn expands_symmetric_and_pattern_matrices() {
        let m = parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n").unwrap();
        assert_eq!(m.nnz(), 3);
        assert_eq!(m.to_columns().transpose_mul(&[1.0, 1.0, 1.0]), vec![1.0, 1.0, 1.0]);
    }

    #[test]
    fn bad_headers_and_entries_are_refused_with_their_line() {
        assert_eq!(err(""), "x.mtx: empty file");
        assert!(err("hello\n1 1 1\n").starts_with("x.mtx:1: not a MatrixMarket file"));
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n1000000000000 5 1\n1 1 1\n"),
            "x.mtx:2: the header claims 1000000000000 rows; at most 4294967295 are supported"
        );
        assert!(
            err("%%MatrixMarket matrix coordinate real general\n1000 1000 9000000000\n1 1 1\n")
                .starts_with("x.mtx:2: the header claims 9000000000 entries")
        );
        assert!(
            err("%%MatrixMarket matrix coordinate real general\n4000000000 3 1\n1 1 1\n")
                .starts_with("x.mtx:2: the header claims 4000000000 rows, more than a file of")
        );
        assert!(
            err("%%MatrixMarket matrix array real general\n4000000000 4000000000\n1\n")
                .starts_with("x.mtx:2: the header claims 4000000000 x 4000000000")
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n"),
            "x.mtx: the header declares 2 entries but the file has 1"
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n"),
            "x.mtx:4: more entries than the 1 the header declares"
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 2\n"),
            "x.mtx:4: row index 3 is outside 1..=2"
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n"),
            "x.mtx:4: entry (1, 1) appears twice"
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 NaN\n"),
            "x.mtx:3: bad value 'NaN': expected a finite number"
        );
        assert_eq!(
            err("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n"),
            "x.mtx:1: unsupported field 'complex' (real, integer or pattern)"
        );
        assert_eq!(
            err("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"),
            "x.mtx: the header declares 2 x 2 = 4 values but the file has 3"
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let mut text = b"%%MatrixMarket matrix coordinate real general\n".to_vec();
            text.extend_from_slice(&bytes);
            let _ = parse_matrix_market(Path::new("fuzz.mtx"), &text);
            let _ = parse_matrix_market(Path::new("fuzz.mtx"), &bytes);
        }

        #[test]
        fn arbitrary_entry_soup_never_panics(body in "[0-9 .eE+\\-\n%]{0,300}") {
            for layout in ["coordinate", "array"] {
                let text = format!("%%MatrixMarket matrix {layout} real general\n{body}");
                let _ = parse_matrix_market(Path::new("fuzz.mtx"), text.as_bytes());
            }
        }
    }

    #[test]
    fn vectors_come_as_matrix_market_or_plain_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("y.txt");
        std::fs::write(&plain, "1\n-2.5 3\n# done\n").unwrap();
        assert_eq!(read_vector(&plain).unwrap(), vec![1.0, -2.5, 3.0]);
        let mm = dir.path().join("y.mtx");
        std::fs::write(&mm, "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n").unwrap();
        assert_eq!(read_vector(&mm).unwrap(), vec![1.0, 2.0, 3.0]);
        let sparse = dir.path().join("ys.mtx");
        std::fs::write(&sparse, "%%MatrixMarket matrix coordinate real general\n3 1 1\n2 1 5\n").unwrap();
        assert_eq!(read_vector(&sparse).unwrap(), vec![0.0, 5.0, 0.0]);
        std::fs::write(&plain, "1\nx\n").unwrap();
        assert_eq!(
            read_vector(&plain).unwrap_err().to_string(),
            format!("{}:2: bad value 'x': expected a finite number", plain.display())
        );
    }
}
