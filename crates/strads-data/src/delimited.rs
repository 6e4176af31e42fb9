//! Dense delimited text (CSV, TSV): one sample per line, one column of which is the label.
//!
//! The delimiter is the first of comma, tab, semicolon found on the first line (else white space).
//! With [`Header::Auto`], a first line with any field that is not a number is a header. The label
//! column is named or numbered; by default it is a column named `y`, `label`, `target` or `class`
//! when the header has one, else the first column.

use std::path::Path;

use crate::features::DenseRows;
use crate::{DataError, Features};

/// Whether the first line names the columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Header {
    /// A header if any field of the first line is not a number.
    #[default]
    Auto,
    /// The first line is a header.
    Yes,
    /// Every line is data.
    No,
}

/// Which column holds the label.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LabelColumn {
    /// A column named y, label, target or class (any case) when there is a header, else the first.
    #[default]
    Auto,
    /// The column with this 0-based position.
    Index(usize),
    /// The column with this header name.
    Name(String),
}

const LABEL_NAMES: [&str; 4] = ["y", "label", "target", "class"];

/// Reads a dense delimited file into dense rows and labels; also returns the feature names.
pub fn read_csv(
    path: &Path,
    header: Header,
    label: &LabelColumn,
) -> Result<(Features, Vec<f64>, Vec<String>), DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    parse_csv(path, &bytes, header, label)
}

fn detect_delimiter(bytes: &[u8]) -> u8 {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    [b',', b'\t', b';'].into_iter().find(|d| first.contains(d)).unwrap_or(b' ')
}

fn parse_csv(
    path: &Path,
    bytes: &[u8],
    header: Header,
    label: &LabelColumn,
) -> Result<(Features, Vec<f64>, Vec<String>), DataError> {
    let delimiter = detect_delimiter(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(bytes);
    let mut records = reader.byte_records();
    let mut record = csv::ByteRecord::new();
    let mut next_record = |record: &mut csv::ByteRecord| -> Result<Option<usize>, DataError> {
        loop {
            match records.next() {
                None => return Ok(None),
                Some(Err(e)) => {
                    let line = e.position().map_or(0, |p| p.line() as usize);
                    return Err(DataError::parse(path, line, format!("unreadable line: {e}")));
                }
                Some(Ok(r)) => {
                    // A space-delimited file yields empty fields between repeated spaces: drop them.
                    let fields: Vec<&[u8]> = r.iter().filter(|f| delimiter != b' ' || !f.is_empty()).collect();
                    if fields.is_empty() || fields == [b"".as_slice()] {
                        continue;
                    }
                    *record = csv::ByteRecord::from(fields);
                    return Ok(Some(r.position().map_or(0, |p| p.line() as usize)));
                }
            }
        }
    };

    let Some(first_line) = next_record(&mut record)? else {
        return Err(DataError::invalid(path, "no data rows"));
    };
    let first: Vec<String> = record.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
    let has_header = match header {
        Header::Yes => true,
        Header::No => false,
        Header::Auto => first.iter().any(|f| f.parse::<f64>().is_err()),
    };
    let width = first.len();
    let names: Vec<String> = if has_header { first.clone() } else { (0..width).map(|j| format!("x{j}")).collect() };
    let label_index = match label {
        LabelColumn::Index(j) if *j < width => *j,
        LabelColumn::Index(j) => {
            return Err(DataError::parse(path, first_line, format!("label column {j} is beyond the {width} columns")));
        }
        LabelColumn::Name(name) if has_header => names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| DataError::parse(path, first_line, format!("no column named '{name}' in the header")))?,
        LabelColumn::Name(name) => {
            return Err(DataError::parse(
                path,
                first_line,
                format!("label column '{name}' named but the file has no header"),
            ));
        }
        LabelColumn::Auto => {
            if has_header {
                names.iter().position(|n| LABEL_NAMES.contains(&n.to_ascii_lowercase().as_str())).unwrap_or(0)
            } else {
                0
            }
        }
    };

    let mut labels = Vec::new();
    let mut data = Vec::new();
    let mut parse_row = |line: usize, fields: Vec<&[u8]>| -> Result<(), DataError> {
        if fields.len() != width {
            return Err(DataError::parse(path, line, format!("expected {width} fields, found {}", fields.len())));
        }
        for (j, field) in fields.into_iter().enumerate() {
            let text = std::str::from_utf8(field).map_err(|_| DataError::parse(path, line, "not valid UTF-8 text"))?;
            let value = text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                let what = if text.is_empty() { "missing value".to_string() } else { format!("bad value '{text}'") };
                DataError::parse(path, line, format!("{what} in column '{}': expected a finite number", names[j]))
            })?;
            if j == label_index {
                labels.push(value);
            } else {
                data.push(value);
            }
        }
        Ok(())
    };
    if !has_header {
        parse_row(first_line, record.iter().collect())?;
    }
    while let Some(line) = next_record(&mut record)? {
        parse_row(line, record.iter().collect())?;
    }
    if labels.is_empty() {
        return Err(DataError::invalid(path, "no data rows"));
    }
    let feature_names: Vec<String> =
        names.into_iter().enumerate().filter(|&(j, _)| j != label_index).map(|(_, n)| n).collect();
    let rows = labels.len();
    Ok((Features::Dense(DenseRows { rows, cols: width - 1, data }), labels, feature_names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, header: Header, label: LabelColumn) -> Result<(Features, Vec<f64>, Vec<String>), DataError> {
        parse_csv(Path::new("d.csv"), text.as_bytes(), header, &label)
    }

    #[test]
    fn detects_headers_delimiters_and_label_columns() {
        let (x, y, names) = parse("a,target,b\n1,2,3\n4,5,6\n", Header::Auto, LabelColumn::Auto).unwrap();
        assert_eq!(y, vec![2.0, 5.0]);
        assert_eq!(names, vec!["a", "b"]);
        assert_eq!(x, Features::Dense(DenseRows { rows: 2, cols: 2, data: vec![1.0, 3.0, 4.0, 6.0] }));

        let (x, y, _) = parse("1\t2\t3\n4\t5\t6\n", Header::Auto, LabelColumn::Index(2)).unwrap();
        assert_eq!(y, vec![3.0, 6.0]);
        assert_eq!(x.cols(), 2);

        let (_, y, _) = parse("# comment\n1 2  3\n\n4 5 6\n", Header::No, LabelColumn::Auto).unwrap();
        assert_eq!(y, vec![1.0, 4.0]);

        let (_, y, _) = parse("p;q\n1;2\n", Header::Auto, LabelColumn::Name("q".into())).unwrap();
        assert_eq!(y, vec![2.0]);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            for header in [Header::Auto, Header::Yes, Header::No] {
                let _ = parse_csv(Path::new("fuzz.csv"), &bytes, header, &LabelColumn::Auto);
                let _ = parse_csv(Path::new("fuzz.csv"), &bytes, header, &LabelColumn::Index(3));
            }
        }
    }

    #[test]
    fn bad_rows_name_the_line_and_column() {
        let err = |text: &str, label| parse(text, Header::Auto, label).unwrap_err().to_string();
        assert_eq!(err("a,b\n1,2\n3\n", LabelColumn::Auto), "d.csv:3: expected 2 fields, found 1");
        assert_eq!(
            err("a,b\n1,2\n3,x\n", LabelColumn::Auto),
            "d.csv:3: bad value 'x' in column 'b': expected a finite number"
        );
        assert_eq!(
            err("a,b\n1,2\n3,\n", LabelColumn::Auto),
            "d.csv:3: missing value in column 'b': expected a finite number"
        );
        assert_eq!(
            err("a,b\n1,inf\n", LabelColumn::Auto),
            "d.csv:2: bad value 'inf' in column 'b': expected a finite number"
        );
        assert_eq!(err("a,b\n", LabelColumn::Auto), "d.csv: no data rows");
        assert_eq!(err("", LabelColumn::Auto), "d.csv: no data rows");
        assert_eq!(err("a,b\n1,2\n", LabelColumn::Name("z".into())), "d.csv:1: no column named 'z' in the header");
        assert_eq!(err("1,2\n", LabelColumn::Index(5)), "d.csv:1: label column 5 is beyond the 2 columns");
    }
}
