//! Reading every source format: tokens, ids, vocabularies, filters, fixed vocabularies, and line-exact errors.

use std::path::{Path, PathBuf};

use strads_corpus::{Corpus, Source, TokenizerOptions, is_prepared, read, save_prepared};
use strads_data::DataError;
use tempfile::TempDir;

fn write(dir: &TempDir, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// Keeps every word that is not a stop word.
fn all_words() -> TokenizerOptions {
    TokenizerOptions { min_df: 1, ..TokenizerOptions::default() }
}

fn words(corpus: &Corpus) -> Vec<Vec<&str>> {
    (0..corpus.documents())
        .map(|d| corpus.document(d).iter().map(|&id| corpus.vocabulary[id as usize].as_str()).collect())
        .collect()
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The error message, checked to name `path` at `line`.
fn error_at(result: Result<Corpus, DataError>, path: &Path, line: usize) -> String {
    let message = result.unwrap_err().to_string();
    let prefix = format!("{}:{line}: ", path.display());
    assert!(message.starts_with(&prefix), "expected `{prefix}...`, got `{message}`");
    message
}

fn invalid_of(result: Result<Corpus, DataError>, path: &Path) -> String {
    let error = result.unwrap_err();
    assert!(matches!(error, DataError::Invalid { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with(&format!("{}: ", path.display())), "{message}");
    message
}

#[test]
fn lines_build_a_sorted_vocabulary_and_skip_empty_documents() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.txt", "The cat sat, the cat!\n\nDog and CAT\r\nthe a 42\nzebra");
    let corpus = read(&Source::Lines(path), &all_words(), None).unwrap();
    assert_eq!(corpus.vocabulary, ["cat", "dog", "sat", "zebra"]);
    assert_eq!(words(&corpus), [vec!["cat", "sat", "cat"], vec!["dog", "cat"], vec!["zebra"]]);
    assert_eq!(corpus.ids, [0, 2, 4]);
    assert_eq!((corpus.skipped_empty, corpus.dropped_unknown), (2, 0));
    assert_eq!(corpus.token_count(), 6);
}

#[test]
fn document_frequency_filters_drop_rare_and_common_words() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.txt", "apple pear pear\napple plum\napple pear\napple kiwi\n");
    let source = Source::Lines(path);
    let min2 = TokenizerOptions { min_df: 2, ..TokenizerOptions::default() };
    let corpus = read(&source, &min2, None).unwrap();
    assert_eq!(corpus.vocabulary, ["apple", "pear"]);
    assert_eq!(words(&corpus)[0], ["apple", "pear", "pear"]);
    // apple is in 4/4 documents, pear in 2/4: a max_df of 0.5 keeps pear only.
    let max_half = TokenizerOptions { max_df: 0.5, ..min2 };
    let corpus = read(&source, &max_half, None).unwrap();
    assert_eq!(corpus.vocabulary, ["pear"]);
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty), (&[0, 2][..], 2));
    // The default min_df of 5 leaves nothing here.
    let message = invalid_of(read(&source, &TokenizerOptions::default(), None), source.path());
    assert!(message.contains("no document has a token left"), "{message}");
}

#[test]
fn stop_words_come_built_in_and_from_a_file() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.txt", "the river and the boat\n");
    let stop = write(&dir, "stop.txt", "# mine\n\n  Boat \n");
    let source = Source::Lines(path);
    assert_eq!(read(&source, &all_words(), None).unwrap().vocabulary, ["boat", "river"]);
    let none = TokenizerOptions { english_stop_words: false, ..all_words() };
    assert_eq!(read(&source, &none, None).unwrap().vocabulary, ["and", "boat", "river", "the"]);
    let file = TokenizerOptions { stop_words_file: Some(stop.clone()), ..all_words() };
    assert_eq!(read(&source, &file, None).unwrap().vocabulary, ["river"]);
    let both = TokenizerOptions { english_stop_words: false, ..file };
    assert_eq!(read(&source, &both, None).unwrap().vocabulary, ["and", "river", "the"]);
    std::fs::write(&stop, b"ok\n\xff\n").unwrap();
    error_at(read(&source, &both, None), &stop, 2);
}

#[test]
fn a_custom_pattern_and_case_are_honoured_and_a_bad_pattern_is_named() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.txt", "R2D2 and C3PO\n");
    let source = Source::Lines(path);
    let options = TokenizerOptions { pattern: r"[A-Za-z0-9]+".into(), lowercase: false, ..all_words() };
    assert_eq!(words(&read(&source, &options, None).unwrap()), [["R2D2", "C3PO"]]);
    let bad = TokenizerOptions { pattern: "[a-".into(), ..options };
    let message = invalid_of(read(&source, &bad, None), source.path());
    assert!(message.contains("`[a-`"), "{message}");
}

#[test]
fn text_that_is_not_utf8_is_reported_at_its_line() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.txt", b"fine words\nbad \xc3\x28 byte\n");
    error_at(read(&Source::Lines(path), &all_words(), None), &dir.path().join("docs.txt"), 2);
}

#[test]
fn a_folder_reads_its_regular_files_in_name_order() {
    let dir = TempDir::new().unwrap();
    write(&dir, "b.txt", "second document\nover more lines");
    write(&dir, "a.txt", "first document");
    write(&dir, "c.txt", "the");
    write(&dir, ".hidden", "secret words");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let source = Source::Folder(dir.path().into());
    let corpus = read(&source, &all_words(), None).unwrap();
    assert_eq!(words(&corpus), [vec!["first", "document"], vec!["second", "document", "lines"]]);
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty), (&[0, 1][..], 1));
    let bad = write(&dir, "b.txt", b"line one\nline two\nthree \xff\n");
    error_at(read(&source, &all_words(), None), &bad, 3);
}

#[test]
fn a_tsv_column_is_read_after_the_header_and_skipped_lines() {
    let dir = TempDir::new().unwrap();
    let content = "id\ttext\tlabel\nd\ts\td\n\t\tclass\n1\tgreen apples\tx\n2\tthe\ty\n\n3\tred apples\tz\n";
    let path = write(&dir, "docs.tab", content);
    let source = Source::Tsv { path: path.clone(), column: "text".into(), skip: 2 };
    let corpus = read(&source, &all_words(), None).unwrap();
    assert_eq!(words(&corpus), [["green", "apples"], ["red", "apples"]]);
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty), (&[0, 3][..], 2));

    let missing = Source::Tsv { path: path.clone(), column: "body".into(), skip: 2 };
    let message = error_at(read(&missing, &all_words(), None), &path, 1);
    assert!(message.contains("`body`") && message.contains("id, text, label"), "{message}");
    write(&dir, "docs.tab", "id\ttext\n1\tfine\n2\n");
    let source = Source::Tsv { path: path.clone(), column: "text".into(), skip: 0 };
    error_at(read(&source, &all_words(), None), &path, 3);
}

#[test]
fn uci_counts_become_tokens_in_document_order() {
    let dir = TempDir::new().unwrap();
    let vocab = write(&dir, "vocab.txt", "apple\nbanana\ncherry\n");
    let docword = write(&dir, "docword.txt", "4\n3\n4\n3 1 1\n1 3 2\n\n1 1 1\n3 2 1\n");
    let corpus = read(&Source::Uci { docword, vocab }, &TokenizerOptions::default(), None).unwrap();
    assert_eq!(corpus.vocabulary, ["apple", "banana", "cherry"]);
    assert_eq!(corpus.offsets, [0, 3, 5]);
    assert_eq!(corpus.tokens, [2, 2, 0, 0, 1]);
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty), (&[0, 2][..], 2));
}

#[test]
fn bad_uci_input_is_reported_at_its_line() {
    let dir = TempDir::new().unwrap();
    let vocab = write(&dir, "vocab.txt", "apple\nbanana\n");
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "number of documents"),
        ("2\n2\n", 3, "NNZ"),
        ("2\nx\n1\n", 2, "number of words"),
        ("-2\n2\n1\n", 1, "non-negative"),
        ("2\n2\n1\n3 1 1\n", 4, "docID `3`"),
        ("2\n2\n1\n0 1 1\n", 4, "docID `0`"),
        ("2\n2\n1\n1 3 1\n", 4, "wordID `3`"),
        ("2\n2\n2\n1 1 1\n1 2 0\n", 5, "count `0`"),
        ("2\n2\n1\n1 1 -1\n", 4, "count `-1`"),
        ("2\n2\n1\n1 1 1.5\n", 4, "count `1.5`"),
        ("2\n2\n1\n1 1 many\n", 4, "count `many`"),
        ("2\n2\n1\n1 1\n", 4, "2 fields"),
        ("2\n2\n1\n1 1 1 1\n", 4, "4 fields"),
    ];
    for &(content, line, expected) in cases {
        let docword = write(&dir, "docword.txt", content);
        let source = Source::Uci { docword: docword.clone(), vocab: vocab.clone() };
        let message = error_at(read(&source, &all_words(), None), &docword, line);
        assert!(message.contains(expected), "{content:?}: {message}");
    }
    let docword = write(&dir, "docword.txt", "2\n2\n3\n1 1 1\n2 2 1\n");
    let source = Source::Uci { docword: docword.clone(), vocab: vocab.clone() };
    assert!(invalid_of(read(&source, &all_words(), None), &docword).contains("NNZ = 3"));
    let docword = write(&dir, "docword.txt", "2\n3\n1\n1 1 1\n");
    let source = Source::Uci { docword, vocab: vocab.clone() };
    assert!(invalid_of(read(&source, &all_words(), None), &vocab).contains("W = 3"));
    let source = Source::Uci { docword: dir.path().join("missing.txt"), vocab };
    let error = read(&source, &all_words(), None).unwrap_err();
    assert!(matches!(error, DataError::Io { .. }) && error.to_string().contains("missing.txt"), "{error}");
}

#[test]
fn ldac_reads_with_and_without_a_vocabulary() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "docs.ldac", "2 0:2 3:1\n0\n1 1:1\n");
    let corpus = read(&Source::Ldac { path: path.clone(), vocab: None }, &all_words(), None).unwrap();
    assert_eq!(corpus.vocabulary, ["0", "1", "2", "3"]);
    assert_eq!((corpus.offsets.as_slice(), corpus.tokens.as_slice()), (&[0, 3, 4][..], &[0, 0, 3, 1][..]));
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty), (&[0, 2][..], 1));
    let vocab = write(&dir, "vocab.txt", "w0\nw1\nw2\nw3\nw4\n");
    let corpus = read(&Source::Ldac { path, vocab: Some(vocab) }, &all_words(), None).unwrap();
    assert_eq!(corpus.vocabulary.len(), 5);
    assert_eq!(words(&corpus), [vec!["w0", "w0", "w3"], vec!["w1"]]);
}

#[test]
fn bad_ldac_input_is_reported_at_its_line() {
    let dir = TempDir::new().unwrap();
    let vocab = write(&dir, "vocab.txt", "a\nb\nc\n");
    let cases: &[(&str, usize, &str)] = &[
        ("1 0:1\n3 0:1 1:1\n", 2, "N = 3"),
        ("x 0:1\n", 1, "`x`"),
        ("1 0:1\n1 01\n", 2, "`01`"),
        ("1 a:1\n", 1, "`a`"),
        ("1 3:1\n", 1, "word id 3"),
        ("1 1:0\n", 1, "count `0`"),
        ("1 1:-2\n", 1, "count `-2`"),
        ("1 1:2.5\n", 1, "count `2.5`"),
    ];
    for &(content, line, expected) in cases {
        let path = write(&dir, "docs.ldac", content);
        let source = Source::Ldac { path: path.clone(), vocab: Some(vocab.clone()) };
        let message = error_at(read(&source, &all_words(), None), &path, line);
        assert!(message.contains(expected), "{content:?}: {message}");
    }
    // Without a vocabulary file, one huge id is refused instead of making billions of words.
    let path = write(&dir, "huge.ldac", "1 0:1\n1 4294967295:1\n");
    let message = error_at(read(&Source::Ldac { path: path.clone(), vocab: None }, &all_words(), None), &path, 2);
    assert!(message.contains("4294967295"), "{message}");
}

#[test]
fn a_fixed_vocabulary_maps_words_and_drops_unknown_ones() {
    let dir = TempDir::new().unwrap();
    let fixed = strings(&["river", "boat", "fish"]);
    let options = TokenizerOptions::default(); // min_df 5 does not apply
    let lines = Source::Lines(write(&dir, "docs.txt", "the boat on the river\nswans only\nfish fish swim\n"));
    let corpus = read(&lines, &options, Some(&fixed)).unwrap();
    assert_eq!(corpus.vocabulary, fixed);
    assert_eq!(corpus.tokens, [1, 0, 2, 2]);
    assert_eq!((corpus.ids.as_slice(), corpus.skipped_empty, corpus.dropped_unknown), (&[0, 2][..], 1, 2));

    let vocab = write(&dir, "vocab.txt", "fish\nswan\nboat\n");
    let docword = write(&dir, "docword.txt", "2\n3\n3\n1 2 4\n2 1 2\n2 3 1\n");
    let corpus = read(&Source::Uci { docword, vocab: vocab.clone() }, &options, Some(&fixed)).unwrap();
    assert_eq!((corpus.tokens.as_slice(), corpus.ids.as_slice()), (&[2, 2, 1][..], &[1][..]));
    assert_eq!((corpus.skipped_empty, corpus.dropped_unknown), (1, 4));

    let path = write(&dir, "docs.ldac", "2 0:1 1:3\n1 2:1\n");
    let corpus = read(&Source::Ldac { path: path.clone(), vocab: Some(vocab) }, &options, Some(&fixed)).unwrap();
    assert_eq!((corpus.tokens.as_slice(), corpus.dropped_unknown), (&[2, 1][..], 3));
    // Without its own vocabulary, LDA-C ids are ids of the fixed one.
    let corpus = read(&Source::Ldac { path: path.clone(), vocab: None }, &options, Some(&fixed)).unwrap();
    assert_eq!(corpus.tokens, [0, 1, 1, 1, 2]);
    write(&dir, "docs.ldac", "1 0:1\n1 3:1\n");
    let message =
        error_at(read(&Source::Ldac { path, vocab: None }, &options, Some(&fixed)), &dir.path().join("docs.ldac"), 2);
    assert!(message.contains("given vocabulary"), "{message}");

    let none_known = Source::Lines(write(&dir, "other.txt", "swans\n"));
    invalid_of(read(&none_known, &options, Some(&fixed)), none_known.path());
}

fn sorted_documents(corpus: &Corpus) -> Vec<Vec<u32>> {
    (0..corpus.documents())
        .map(|d| {
            let mut doc = corpus.document(d).to_vec();
            doc.sort_unstable();
            doc
        })
        .collect()
}

#[test]
fn a_prepared_corpus_reads_back_the_same() {
    let dir = TempDir::new().unwrap();
    let text = "red fish blue fish red\n\nthe\nblue whale\nred whale whale\n";
    let corpus = read(&Source::Lines(write(&dir, "docs.txt", text)), &all_words(), None).unwrap();
    let prepared = dir.path().join("prepared");
    assert!(!is_prepared(&prepared));
    let description = [("source".to_owned(), "docs.txt".to_owned()), ("note".to_owned(), "two\nlines".to_owned())];
    save_prepared(&corpus, &prepared, &description).unwrap();
    assert!(is_prepared(&prepared));
    let ldac = std::fs::read_to_string(prepared.join("corpus.ldac")).unwrap();
    assert_eq!(ldac.lines().next(), Some("3 2:2 1:2 0:1")); // red, fish, blue: first appearance order
    let summary = std::fs::read_to_string(prepared.join("corpus.txt")).unwrap();
    assert!(summary.contains("documents=3\ntokens=10\nvocabulary=4\nskipped_empty=2\n"), "{summary}");
    assert!(summary.ends_with("source=docs.txt\nnote=two lines\n"), "{summary}");

    let source = Source::Prepared(prepared.clone());
    let back = read(&source, &TokenizerOptions::default(), None).unwrap();
    assert_eq!(sorted_documents(&back), sorted_documents(&corpus));
    assert_eq!(back.offsets, corpus.offsets);
    assert_eq!((&back.vocabulary, &back.ids, back.skipped_empty), (&corpus.vocabulary, &corpus.ids, 2));

    // A fixed vocabulary applies to a prepared corpus too, and keeps its input positions.
    let fixed = strings(&["whale"]);
    let inferred = read(&source, &TokenizerOptions::default(), Some(&fixed)).unwrap();
    assert_eq!((inferred.ids.as_slice(), inferred.tokens.as_slice()), (&[3, 4][..], &[0, 0, 0][..]));
    assert_eq!((inferred.skipped_empty, inferred.dropped_unknown), (3, 7));
}

#[test]
fn an_incomplete_or_inconsistent_prepared_corpus_is_refused() {
    let dir = TempDir::new().unwrap();
    let corpus = read(&Source::Lines(write(&dir, "docs.txt", "one fish\ntwo fish\n")), &all_words(), None).unwrap();
    let prepared = dir.path().join("prepared");
    save_prepared(&corpus, &prepared, &[]).unwrap();
    let source = Source::Prepared(prepared.clone());
    let ldac = prepared.join("corpus.ldac");
    std::fs::write(&ldac, "1 0:1\n").unwrap();
    assert!(invalid_of(read(&source, &all_words(), None), &ldac).contains("documents=2"));
    std::fs::write(&ldac, "1 0:1\n1 9:1\n").unwrap();
    error_at(read(&source, &all_words(), None), &ldac, 2);
    std::fs::remove_file(prepared.join("corpus.txt")).unwrap();
    assert!(!is_prepared(&prepared));
    invalid_of(read(&source, &all_words(), None), &prepared);
}

/// Shares of an LDA-C file, parsed apart, hold the documents of the whole file; errors name the
/// line of the whole file.
#[test]
fn ldac_shares_parse_like_the_whole_file() {
    use std::path::Path;
    let text = b"2 0:1 3:2\n1 1:4\n\n3 0:1 1:1 2:1\r\n1 2:2";
    let path = Path::new("c.ldac");
    let whole = strads_corpus::parse_ldac_share(path, text, 1, 4).unwrap();
    assert_eq!(whole.documents(), 4);
    assert_eq!(whole.skipped_empty, 1);
    for cut in [0, 10, 16, 17, 32, text.len()] {
        let (a, b) = text.split_at(cut);
        let first = strads_corpus::parse_ldac_share(path, a, 1, 4).unwrap();
        let lines = a.iter().filter(|&&c| c == b'\n').count();
        let second = strads_corpus::parse_ldac_share(path, b, 1 + lines, 4).unwrap();
        let mut tokens = first.tokens.clone();
        tokens.extend(&second.tokens);
        assert_eq!(tokens, whole.tokens, "cut at {cut}");
        assert_eq!(first.documents() + second.documents(), 4);
        assert_eq!(first.skipped_empty + second.skipped_empty, 1);
    }
    let error = strads_corpus::parse_ldac_share(path, b"1 2:2\n", 7, 2).unwrap_err().to_string();
    assert!(error.contains(":7:") && error.contains("beyond the vocabulary"), "{error}");
}
