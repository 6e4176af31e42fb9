//! One process's share of a line-oriented file: a byte range cut at line starts, read alone.
//!
//! Share `r` of `n` starts at the first line that begins at or after byte `size * r / n` and ends
//! where share `r + 1` starts, so the shares cover every line exactly once and each process reads
//! only about `1/n` of the file (plus the end of one line to find its start).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::DataError;
use strads_core::Collectives;

/// The lines of one share of a file.
#[derive(Clone, Debug)]
pub struct LineShare {
    /// The share's bytes: whole lines.
    pub bytes: Vec<u8>,
    /// Where they start in the file.
    pub start: u64,
    /// Line breaks in `bytes` (the next share's first line is `lines` further on).
    pub lines: usize,
    /// Bytes read from the file, the search for the line starts included.
    pub bytes_read: u64,
}

/// The first line start at or after `at`: `at` itself when it follows a line break, else the byte
/// after the next one (or the end of the file).
fn line_start(file: &mut File, at: u64, size: u64, read: &mut u64) -> Result<u64, std::io::Error> {
    if at == 0 || at >= size {
        return Ok(at.min(size));
    }
    file.seek(SeekFrom::Start(at - 1))?;
    let mut position = at - 1;
    let mut buffer = [0u8; 4096];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            return Ok(size);
        }
        *read += n as u64;
        if let Some(i) = buffer[..n].iter().position(|&b| b == b'\n') {
            return Ok(position + i as u64 + 1);
        }
        position += n as u64;
    }
}

/// Reads share `rank` of `ranks` of the file at `path`.
pub fn read_line_share(path: &Path, rank: usize, ranks: usize) -> Result<LineShare, DataError> {
    let io = |e| DataError::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let cut = |r: usize| (u128::from(size) * r as u128 / ranks.max(1) as u128) as u64;
    let mut read = 0u64;
    let start = line_start(&mut file, cut(rank), size, &mut read).map_err(io)?;
    let end = line_start(&mut file, cut(rank + 1), size, &mut read).map_err(io)?.max(start);
    let mut bytes = vec![0u8; (end - start) as usize];
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    file.read_exact(&mut bytes).map_err(io)?;
    read += bytes.len() as u64;
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    Ok(LineShare { bytes, start, lines, bytes_read: read })
}

/// This rank's share of the file at `path` (see [`read_line_share`]), and the number of lines before it.
pub fn read_rank_share(ranks: &impl Collectives, path: &Path) -> Result<(LineShare, usize), DataError> {
    let share = read_line_share(path, ranks.rank(), ranks.ranks())?;
    let lines: Vec<usize> = ranks.all_gather(&share.lines).map_err(DataError::Collective)?;
    let before = lines[..ranks.rank()].iter().sum();
    Ok((share, before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_line_once() {
        let dir = tempfile::tempdir().unwrap();
        for (case, text) in ["", "a\n", "a\nbb\nccc\n", "one line without end", "x\n\n\ny\nzz\n", "long line here\nb"]
            .iter()
            .enumerate()
        {
            let path = dir.path().join(format!("{case}.txt"));
            std::fs::write(&path, text).unwrap();
            for ranks in 1..=7 {
                let mut joined = Vec::new();
                let mut lines = 0;
                for rank in 0..ranks {
                    let share = read_line_share(&path, rank, ranks).unwrap();
                    assert_eq!(share.start as usize, joined.len(), "{text:?} {rank}/{ranks}");
                    assert!(
                        share.bytes.is_empty()
                            || share.start == 0
                            || text.as_bytes()[share.start as usize - 1] == b'\n'
                    );
                    lines += share.lines;
                    joined.extend(share.bytes);
                }
                assert_eq!(joined, text.as_bytes(), "{ranks} shares of {text:?}");
                assert_eq!(lines, text.matches('\n').count());
            }
        }
    }
}
