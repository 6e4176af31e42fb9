//! Atomic output files: written to a temporary file in the same folder, synced, then renamed.
//!
//! A reader therefore sees either the previous file or the complete new one, never a prefix, and
//! a run that fails while writing leaves nothing half written.

use std::io::{BufWriter, Write};
use std::path::Path;

use crate::DataError;

/// Writes a file through `write`, atomically: a temporary sibling, fsync, rename.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<(), DataError> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".strads-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| DataError::io(path, e))?;
    {
        let mut out = BufWriter::new(temp.as_file_mut());
        write(&mut out).map_err(|e| DataError::io(path, e))?;
        out.flush().map_err(|e| DataError::io(path, e))?;
    }
    temp.as_file().sync_all().map_err(|e| DataError::io(path, e))?;
    temp.persist(path).map_err(|e| DataError::io(path, e.error))?;
    Ok(())
}

/// Writes a string to a file atomically.
pub fn write_string_atomic(path: &Path, text: &str) -> Result<(), DataError> {
    write_atomic(path, |out| out.write_all(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_string_atomic(&path, "first").unwrap();
        let failed = write_atomic(&path, |out| {
            out.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(failed.unwrap_err().to_string().contains("disk full"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
        write_string_atomic(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
    }
}
