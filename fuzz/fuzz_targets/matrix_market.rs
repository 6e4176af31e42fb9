//! Fuzz target: the MatrixMarket readers (matrix, coordinates, vector) on any file content.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strads_data::{read_coordinates, read_matrix_market, read_vector};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("strads-fuzz-{}.mtx", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        let _ = read_matrix_market(&path);
        let _ = read_coordinates(&path);
        let _ = read_vector(&path);
    }
});
