//! Fuzz target: the LIBSVM parser, with every index base, on any bytes.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use strads_data::{IndexBase, parse_libsvm};

fuzz_target!(|data: &[u8]| {
    for base in [IndexBase::Auto, IndexBase::Zero, IndexBase::One] {
        let _ = parse_libsvm(Path::new("fuzz.svm"), data, base);
    }
});
