//! Fuzz target: the corpus readers (lines, TSV, LDA-C, UCI bag-of-words) on any file content; the
//! input is both the documents and, for UCI, the vocabulary.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strads_corpus::{Source, TokenizerOptions, read};

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir();
    let path = dir.join(format!("strads-fuzz-{}.corpus", std::process::id()));
    let vocab = dir.join(format!("strads-fuzz-{}.vocab", std::process::id()));
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (documents, words) = (&data[..split], data.get(split + 1..).unwrap_or_default());
    if std::fs::write(&path, documents).is_err() || std::fs::write(&vocab, words).is_err() {
        return;
    }
    let tokenizer = TokenizerOptions { min_df: 1, ..TokenizerOptions::default() };
    let sources = [
        Source::Lines(path.clone()),
        Source::Tsv { path: path.clone(), column: "text".into(), skip: 0 },
        Source::Ldac { path: path.clone(), vocab: None },
        Source::Ldac { path: path.clone(), vocab: Some(vocab.clone()) },
        Source::Uci { docword: path.clone(), vocab: vocab.clone() },
    ];
    for source in &sources {
        let _ = read(source, &tokenizer, None);
    }
});
