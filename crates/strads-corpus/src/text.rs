//! Plain-text readers: one document per line, one per file of a folder, or one per row of a TSV column.

use std::path::Path;

use strads_data::DataError;

use crate::build::TextCollector;
use crate::corpus::Corpus;
use crate::lines::{LineReader, utf8};

/// Every line is a document, blank ones included (they are empty, so skipped and counted).
pub(crate) fn read_lines(path: &Path, mut collector: TextCollector) -> Result<Corpus, DataError> {
    let mut lines = LineReader::open(path)?;
    while let Some((_, text)) = lines.next_line()? {
        collector.add(text);
    }
    collector.finish(path)
}

/// Every regular file directly in `dir`, by file name, hidden ones (`.name`) left out.
pub(crate) fn read_folder(dir: &Path, mut collector: TextCollector) -> Result<Corpus, DataError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| DataError::io(dir, e))? {
        let entry = entry.map_err(|e| DataError::io(dir, e))?;
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        // Follows symbolic links: a link to a regular file is a document.
        if std::fs::metadata(&path).map_err(|e| DataError::io(&path, e))?.is_file() {
            files.push((name, path));
        }
    }
    files.sort_unstable();
    for (_, path) in &files {
        let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
        collector.add(utf8(path, &bytes)?);
    }
    collector.finish(dir)
}

/// Column `column` of a tab-separated file with a header line, after `skip` further lines.
pub(crate) fn read_tsv(
    path: &Path,
    column: &str,
    skip: usize,
    mut collector: TextCollector,
) -> Result<Corpus, DataError> {
    let mut lines = LineReader::open(path)?;
    let Some((_, header)) = lines.next_line()? else {
        return Err(DataError::parse(path, 1, "empty file: expected a header line naming the columns"));
    };
    let names: Vec<&str> = header.split('\t').map(str::trim).collect();
    let exact = names.iter().position(|&name| name == column);
    let Some(index) = exact.or_else(|| names.iter().position(|name| name.eq_ignore_ascii_case(column))) else {
        return Err(DataError::parse(
            path,
            1,
            format!("no column named `{column}` in the header (columns: {})", names.join(", ")),
        ));
    };
    for _ in 0..skip {
        if lines.next_line()?.is_none() {
            break;
        }
    }
    while let Some((line, text)) = lines.next_line()? {
        if text.is_empty() {
            collector.add(""); // an empty row: an empty document
            continue;
        }
        let Some(field) = text.split('\t').nth(index) else {
            let fields = text.split('\t').count();
            return Err(DataError::parse(
                path,
                line,
                format!("the row has {fields} fields, but column `{column}` is field {}", index + 1),
            ));
        };
        collector.add(field);
    }
    collector.finish(path)
}
