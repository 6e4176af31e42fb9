//! The fuzz corpora (fuzz/corpus/TARGET, grown by `fuzz/run.sh`) replayed through the same readers
//! as the fuzz targets: every input ends in a model or a clean error, never a panic.

use std::path::{Path, PathBuf};

use strads_corpus::{Source, TokenizerOptions};
use strads_data::{
    Header, IndexBase, LabelColumn, parse_libsvm, read_coordinates, read_csv, read_matrix_market, read_vector,
};
use strads_mf::ratings::{Duplicates, Ids, RatingsFormat, ReadOptions, read_pairs, read_ratings};

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: an empty corpus", dir.display());
    files
}

/// Runs `exercise` on every input of a target's corpus in a scratch file; names the inputs that panic.
fn replay(target: &str, exercise: impl Fn(&Path, &[u8]) + std::panic::RefUnwindSafe) {
    let scratch = tempfile::tempdir().unwrap();
    let mut panicked = Vec::new();
    for input in corpus(target) {
        let bytes = std::fs::read(&input).unwrap();
        let path = scratch.path().join("input");
        let outcome = std::panic::catch_unwind(|| exercise(&path, &bytes));
        if outcome.is_err() {
            panicked.push(input.display().to_string());
        }
    }
    assert!(panicked.is_empty(), "{target}: these inputs panic: {panicked:?}");
}

#[test]
fn libsvm_inputs() {
    replay("libsvm", |_, bytes| {
        for base in [IndexBase::Auto, IndexBase::Zero, IndexBase::One] {
            let _ = parse_libsvm(Path::new("fuzz.svm"), bytes, base);
        }
    });
}

#[test]
fn matrix_market_inputs() {
    replay("matrix_market", |path, bytes| {
        std::fs::write(path, bytes).unwrap();
        let _ = read_matrix_market(path);
        let _ = read_coordinates(path);
        let _ = read_vector(path);
    });
}

#[test]
fn csv_inputs() {
    replay("csv", |path, bytes| {
        std::fs::write(path, bytes).unwrap();
        for header in [Header::Auto, Header::Yes, Header::No] {
            let _ = read_csv(path, header, &LabelColumn::Auto);
            let _ = read_csv(path, header, &LabelColumn::Index(1));
        }
    });
}

#[test]
fn ratings_inputs() {
    replay("ratings", |path, bytes| {
        std::fs::write(path, bytes).unwrap();
        for format in [RatingsFormat::Auto, RatingsFormat::Delimited, RatingsFormat::MatrixMarket] {
            for duplicates in [Duplicates::Error, Duplicates::Last, Duplicates::Mean] {
                let _ =
                    read_ratings(path, &ReadOptions { format, duplicates, nonnegative: false }, &mut Ids::default());
            }
        }
        let _ = read_pairs(path);
    });
}

#[test]
fn corpus_inputs() {
    replay("corpus", |path, bytes| {
        // As in the fuzz target: the documents, then after a NUL byte the vocabulary.
        let split = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let vocab = path.with_extension("vocab");
        std::fs::write(path, &bytes[..split]).unwrap();
        std::fs::write(&vocab, bytes.get(split + 1..).unwrap_or_default()).unwrap();
        let tokenizer = TokenizerOptions { min_df: 1, ..TokenizerOptions::default() };
        let path = path.to_path_buf();
        for source in [
            Source::Lines(path.clone()),
            Source::Tsv { path: path.clone(), column: "text".into(), skip: 0 },
            Source::Ldac { path: path.clone(), vocab: None },
            Source::Ldac { path: path.clone(), vocab: Some(vocab.clone()) },
            Source::Uci { docword: path.clone(), vocab: vocab.clone() },
        ] {
            let _ = strads_corpus::read(&source, &tokenizer, None);
        }
    });
}
