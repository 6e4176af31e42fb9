//! NumPy `.npy` files of two-dimensional arrays: written atomically (also from values made as they
//! are written, so a large array is never held whole), and read back with their shape checked.

use std::path::Path;

use npyz::WriterBuilder;

use crate::{DataError, write_atomic};

/// Writes a `rows x cols` array, row after row, as a `.npy` file, atomically.
pub fn write_npy<T: npyz::AutoSerialize + Copy>(
    path: &Path,
    rows: usize,
    cols: usize,
    values: &[T],
) -> Result<(), DataError> {
    write_npy_from(path, rows, cols, values.iter().copied())
}

/// [`write_npy`] of values made as they are written.
pub fn write_npy_from<T: npyz::AutoSerialize>(
    path: &Path,
    rows: usize,
    cols: usize,
    values: impl Iterator<Item = T>,
) -> Result<(), DataError> {
    write_atomic(path, |w| {
        let mut writer =
            npyz::WriteOptions::new().default_dtype().shape(&[rows as u64, cols as u64]).writer(w).begin_nd()?;
        writer.extend(values)?;
        writer.finish()
    })
}

/// Reads a `.npy` file of `T`, refusing any shape but `[rows, cols]` (`expected` says who expects it).
pub fn read_npy<T: npyz::Deserialize>(
    path: &Path,
    rows: usize,
    cols: usize,
    expected: &str,
) -> Result<Vec<T>, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| DataError::invalid(path, e.to_string()))?;
    let shape = npy.shape().to_vec();
    if shape != [rows as u64, cols as u64] {
        return Err(DataError::invalid(path, format!("shape {shape:?}, {expected} says [{rows}, {cols}]")));
    }
    npy.into_vec::<T>().map_err(|e| DataError::invalid(path, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip_and_a_wrong_shape_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let values = [0.5, -1.0, 1e-300, 3.0, f64::MAX, 0.1 + 0.2];
        write_npy(&path, 2, 3, &values).unwrap();
        assert_eq!(read_npy::<f64>(&path, 2, 3, "the test").unwrap(), values);
        let error = read_npy::<f64>(&path, 3, 2, "model.json").unwrap_err().to_string();
        assert!(error.contains("a.npy") && error.contains("shape [2, 3], model.json says [3, 2]"), "{error}");
        write_npy_from(&path, 1, 2, [7u32, 9].into_iter()).unwrap();
        assert_eq!(read_npy::<u32>(&path, 1, 2, "").unwrap(), [7, 9]);
        std::fs::write(&path, b"not npy").unwrap();
        assert!(read_npy::<f64>(&path, 1, 1, "").is_err());
    }
}
