//! Fuzz target: the dense CSV/TSV reader, with and without a header, on any file content.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strads_data::{Header, LabelColumn, read_csv};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("strads-fuzz-{}.csv", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        for header in [Header::Auto, Header::Yes, Header::No] {
            let _ = read_csv(&path, header, &LabelColumn::Auto);
            let _ = read_csv(&path, header, &LabelColumn::Index(1));
        }
    }
});
