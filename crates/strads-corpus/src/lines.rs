//! Reading text files line by line as UTF-8, and the error constructors every reader shares.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use strads_data::DataError;

/// The lines of a file, without their line breaks (and without a UTF-8 byte-order mark).
pub(crate) struct LineReader {
    reader: BufReader<File>,
    buf: Vec<u8>,
    line: usize,
    path: PathBuf,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> Result<Self, DataError> {
        let file = File::open(path).map_err(|e| DataError::io(path, e))?;
        Ok(LineReader { reader: BufReader::with_capacity(1 << 16, file), buf: Vec::new(), line: 0, path: path.into() })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Number of lines read so far.
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The next line and its number (1-based), or `None` at the end of the file.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &str)>, DataError> {
        self.buf.clear();
        let read = self.reader.read_until(b'\n', &mut self.buf).map_err(|e| DataError::io(&self.path, e))?;
        if read == 0 {
            return Ok(None);
        }
        self.line += 1;
        let mut bytes = self.buf.as_slice();
        bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if self.line == 1 {
            bytes = strip_bom(bytes);
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some((self.line, text))),
            Err(e) => Err(DataError::parse(
                &self.path,
                self.line,
                format!("not valid UTF-8 text (byte {} of the line)", e.valid_up_to() + 1),
            )),
        }
    }
}

/// A whole file's content as UTF-8 text; the error names the line of the first invalid byte.
pub(crate) fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, DataError> {
    let bytes = strip_bom(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let (valid, _) = bytes.split_at(e.valid_up_to());
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        DataError::parse(path, line, format!("not valid UTF-8 text (byte {column} of the line)"))
    })
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Every line of a file, each one word: a vocabulary or a stop-word list.
pub(crate) fn read_words(path: &Path) -> Result<Vec<String>, DataError> {
    let mut lines = LineReader::open(path)?;
    let mut words = Vec::new();
    while let Some((_, text)) = lines.next_line()? {
        words.push(text.to_owned());
    }
    Ok(words)
}

/// A strictly positive count, as in `docID wordID count` or `id:count`.
pub(crate) fn parse_count(path: &Path, line: usize, text: &str) -> Result<u32, DataError> {
    match text.parse::<u32>() {
        Ok(count) if count > 0 => Ok(count),
        _ => Err(DataError::parse(path, line, format!("count `{text}` is not a positive integer"))),
    }
}
