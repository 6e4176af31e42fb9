//! Fuzz target: the rating readers (delimited and MatrixMarket, every duplicate policy) and the
//! prediction pairs reader, on any file content.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strads_mf::ratings::{Duplicates, Ids, RatingsFormat, ReadOptions, read_pairs, read_ratings};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("strads-fuzz-{}.ratings", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        for format in [RatingsFormat::Auto, RatingsFormat::Delimited, RatingsFormat::MatrixMarket] {
            for duplicates in [Duplicates::Error, Duplicates::Last, Duplicates::Mean] {
                let _ = read_ratings(&path, &ReadOptions { format, duplicates, nonnegative: false }, &mut Ids::default());
            }
        }
        let _ = read_pairs(&path);
    }
});
