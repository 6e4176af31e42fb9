//! Loading a prepared corpus in rank shares, on ranks that are threads of this process, against
//! reading it whole: every rank agrees on the counts, holds exactly its workers' documents as the
//! whole corpus has them, and rank 0 gets every document's input position.

use strads_core::{Collectives, InProcess, balanced_ranges};
use strads_corpus::{Source, TokenizerOptions, load_prepared_share, read, save_prepared};

#[test]
fn rank_shares_hold_their_workers_documents_as_the_whole_corpus_has_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let words = ["red", "fish", "blue", "whale", "sea", "salt", "wind", "sail"];
    let mut text = String::new();
    for d in 0..37 {
        if d % 9 == 4 {
            text.push('\n'); // an empty document, skipped
            continue;
        }
        let line: Vec<&str> = (0..(d * 5) % 13 + 1).map(|k| words[(d * 3 + k * k) % words.len()]).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    let path = dir.path().join("docs.txt");
    std::fs::write(&path, text).unwrap();
    let tokenizer = TokenizerOptions { min_df: 1, english_stop_words: false, ..TokenizerOptions::default() };
    let corpus = read(&Source::Lines(path), &tokenizer, None).unwrap();
    let prepared = dir.path().join("prepared");
    save_prepared(&corpus, &prepared, &[]).unwrap();
    let whole = read(&Source::Prepared(prepared.clone()), &TokenizerOptions::default(), None).unwrap();
    let lengths: Vec<u64> = (0..whole.documents()).map(|d| whole.document(d).len() as u64).collect();
    let mut frequencies = vec![0u64; whole.vocabulary_size()];
    for &w in &whole.tokens {
        frequencies[w as usize] += 1;
    }
    for (ranks, threads) in [(1, 1), (2, 1), (3, 2)] {
        let workers = ranks * threads;
        let shards = balanced_ranges(&lengths, workers);
        let group = InProcess::group(ranks);
        let loaded: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = group
                .iter()
                .map(|c| scope.spawn(|| (c.rank(), load_prepared_share(c, &prepared, workers).unwrap())))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (rank, (mine, meta)) in &loaded {
            let label = format!("{ranks} ranks x {threads}, rank {rank}");
            assert_eq!((mine.documents(), mine.token_count()), (whole.documents(), whole.token_count()), "{label}");
            assert_eq!((mine.lengths(), mine.frequencies()), (&lengths[..], &frequencies[..]), "{label}");
            for shard in &shards[rank * threads..(rank + 1) * threads] {
                for d in shard.clone() {
                    assert_eq!(mine.document(d), whole.document(d), "{label}: document {d}");
                }
            }
            assert_eq!((&meta.vocabulary, &meta.offsets), (&whole.vocabulary, &whole.offsets), "{label}");
            assert_eq!(meta.skipped_empty, whole.skipped_empty, "{label}");
            if *rank == 0 {
                assert_eq!(meta.ids, whole.ids, "{label}");
            }
        }
    }
}
