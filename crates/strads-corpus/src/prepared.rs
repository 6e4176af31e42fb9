//! The prepared form of a corpus: a directory with `corpus.ldac`, `vocab.txt`, `ids.txt` and the
//! `corpus.txt` summary, written last, whose presence marks it complete.

use std::io::Write;
use std::path::Path;

use strads_data::{DataError, write_atomic};

use crate::bow::parse_ldac;
use crate::build::{Builder, Fixed};
use crate::corpus::Corpus;
use crate::lines::{LineReader, read_words};

const SUMMARY: &str = "corpus.txt";
const DOCUMENTS: &str = "corpus.ldac";
const VOCABULARY: &str = "vocab.txt";
const IDS: &str = "ids.txt";

/// Writes `corpus` into `dir` (created if missing) in prepared form, every file atomically:
/// `corpus.ldac` (LDA-C, ids 0-based, each document's `id:count` pairs in order of the word's
/// first appearance in it), `vocab.txt` (one word per line), `ids.txt` (each document's input
/// position, one per line), and last `corpus.txt`: `key=value` lines with `documents`, `tokens`,
/// `vocabulary`, `skipped_empty`, `dropped_unknown`, then `description` in its order (line breaks
/// in it become spaces, `=` in keys `_`). An existing `corpus.txt` is removed first, so a
/// directory whose writing was interrupted is not taken for a complete prepared corpus.
///
/// A word containing a line break cannot be saved (error naming `vocab.txt`).
pub fn save_prepared(corpus: &Corpus, dir: &Path, description: &[(String, String)]) -> Result<(), DataError> {
    std::fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
    let summary = dir.join(SUMMARY);
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(DataError::io(&summary, e)),
        _ => {}
    }
    let vocabulary_path = dir.join(VOCABULARY);
    if let Some(id) = corpus.vocabulary.iter().position(|w| w.contains(['\n', '\r'])) {
        return Err(DataError::invalid(
            &vocabulary_path,
            format!("word {id} contains a line break: {:?}", corpus.vocabulary[id]),
        ));
    }
    let size = corpus.vocabulary.len();
    if let Some(&id) = corpus.tokens.iter().find(|&&id| id as usize >= size) {
        return Err(DataError::invalid(
            dir,
            format!("the corpus has word id {id}, but its vocabulary only {size} words"),
        ));
    }

    write_atomic(&dir.join(DOCUMENTS), |out| {
        // Index of each word in `pairs`, u32::MAX when absent; reset after every document.
        let mut slot = vec![u32::MAX; size];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for d in 0..corpus.documents() {
            for &id in corpus.document(d) {
                let s = &mut slot[id as usize];
                if *s == u32::MAX {
                    *s = pairs.len() as u32;
                    pairs.push((id, 0));
                }
                pairs[*s as usize].1 += 1;
            }
            write!(out, "{}", pairs.len())?;
            for &(id, count) in &pairs {
                write!(out, " {id}:{count}")?;
                slot[id as usize] = u32::MAX;
            }
            writeln!(out)?;
            pairs.clear();
        }
        Ok(())
    })?;
    write_atomic(&vocabulary_path, |out| corpus.vocabulary.iter().try_for_each(|word| writeln!(out, "{word}")))?;
    write_atomic(&dir.join(IDS), |out| corpus.ids.iter().try_for_each(|id| writeln!(out, "{id}")))?;
    write_atomic(&summary, |out| {
        writeln!(out, "documents={}", corpus.documents())?;
        writeln!(out, "tokens={}", corpus.token_count())?;
        writeln!(out, "vocabulary={size}")?;
        writeln!(out, "skipped_empty={}", corpus.skipped_empty)?;
        writeln!(out, "dropped_unknown={}", corpus.dropped_unknown)?;
        for (key, value) in description {
            let key = key.replace(['=', '\n', '\r'], "_");
            writeln!(out, "{key}={}", value.replace(['\n', '\r'], " "))?;
        }
        Ok(())
    })
}

/// Whether `dir` holds a prepared corpus: `corpus.txt`, `corpus.ldac` and `vocab.txt` are files in it.
pub fn is_prepared(dir: &Path) -> bool {
    [SUMMARY, DOCUMENTS, VOCABULARY].iter().all(|name| dir.join(name).is_file())
}

/// Reads a prepared corpus, checking its files against the summary.
/// What a prepared corpus says besides its documents: the vocabulary, each kept document's input
/// position (`ids.txt`) and the counts of `corpus.txt`, checked against each other.
#[derive(Clone, Debug)]
pub struct PreparedIndex {
    /// Word id to word.
    pub vocabulary: Vec<String>,
    /// Input position of each document of `corpus.ldac`.
    pub ids: Vec<usize>,
    /// Documents in `corpus.ldac`.
    pub documents: usize,
    /// Tokens in `corpus.ldac`.
    pub tokens: usize,
    /// Input documents left out by the preparation.
    pub skipped_empty: usize,
    /// Tokens left out by the preparation.
    pub dropped_unknown: usize,
    /// The documents file.
    pub documents_path: std::path::PathBuf,
}

/// Reads the index of the prepared corpus in `dir` (everything but the documents).
pub fn read_prepared_index(dir: &Path) -> Result<PreparedIndex, DataError> {
    let summary_path = dir.join(SUMMARY);
    if !summary_path.is_file() {
        return Err(DataError::invalid(dir, format!("not a complete prepared corpus: {SUMMARY} is missing")));
    }
    let summary = Summary::read(&summary_path)?;
    let vocabulary_path = dir.join(VOCABULARY);
    let words = read_words(&vocabulary_path)?;
    let ids_path = dir.join(IDS);
    let mut ids = Vec::new();
    let mut lines = LineReader::open(&ids_path)?;
    while let Some((line, text)) = lines.next_line()? {
        let id = text.trim().parse::<usize>().map_err(|_| {
            DataError::parse(
                &ids_path,
                line,
                format!("expected a document position (a non-negative integer), found `{text}`"),
            )
        })?;
        ids.push(id);
    }
    if words.len() != summary.vocabulary {
        return Err(DataError::invalid(
            &vocabulary_path,
            format!("has {} words, but {SUMMARY} says vocabulary={}", words.len(), summary.vocabulary),
        ));
    }
    if ids.len() != summary.documents {
        return Err(DataError::invalid(
            &ids_path,
            format!("has {} lines, but {SUMMARY} says documents={}", ids.len(), summary.documents),
        ));
    }
    Ok(PreparedIndex {
        vocabulary: words,
        ids,
        documents: summary.documents,
        tokens: summary.tokens,
        skipped_empty: summary.skipped_empty,
        dropped_unknown: summary.dropped_unknown,
        documents_path: dir.join(DOCUMENTS),
    })
}

pub(crate) fn read_prepared(dir: &Path, fixed: Option<&Fixed>) -> Result<Corpus, DataError> {
    let index = read_prepared_index(dir)?;
    let vocabulary_path = dir.join(VOCABULARY);
    let documents_path = &index.documents_path;
    let mut builder = Builder::new();
    parse_ldac(documents_path, Some((&index.vocabulary, &vocabulary_path)), fixed, &mut builder)?;
    let mismatch = |what: &str, found: usize, key: &str, expected: usize| {
        DataError::invalid(documents_path, format!("has {found} {what}, but {SUMMARY} says {key}={expected}"))
    };
    if builder.position() != index.documents {
        return Err(mismatch("documents", builder.position(), "documents", index.documents));
    }
    if builder.tokens_read() != index.tokens {
        return Err(mismatch("tokens", builder.tokens_read(), "tokens", index.tokens));
    }
    let vocabulary = match fixed {
        Some(fixed) => fixed.words.to_vec(),
        None => index.vocabulary,
    };
    let mut corpus = builder.finish(vocabulary, dir)?;
    for position in &mut corpus.ids {
        *position = index.ids[*position];
    }
    corpus.skipped_empty += index.skipped_empty;
    corpus.dropped_unknown += index.dropped_unknown;
    Ok(corpus)
}

/// The counts of `corpus.txt`.
struct Summary {
    documents: usize,
    tokens: usize,
    vocabulary: usize,
    skipped_empty: usize,
    dropped_unknown: usize,
}

impl Summary {
    fn read(path: &Path) -> Result<Self, DataError> {
        let mut values: [Option<usize>; 5] = [None; 5];
        const KEYS: [&str; 5] = ["documents", "tokens", "vocabulary", "skipped_empty", "dropped_unknown"];
        let mut lines = LineReader::open(path)?;
        while let Some((line, text)) = lines.next_line()? {
            if text.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = text.split_once('=') else {
                return Err(DataError::parse(path, line, format!("expected `key=value`, found `{text}`")));
            };
            // The first occurrence counts: a caller's description comes after the counts.
            if let Some(k) = KEYS.iter().position(|&k| k == key.trim())
                && values[k].is_none()
            {
                let parsed = value.trim().parse().map_err(|_| {
                    DataError::parse(path, line, format!("`{}` is not a non-negative integer", value.trim()))
                })?;
                values[k] = Some(parsed);
            }
        }
        let [documents, tokens, vocabulary, skipped_empty, dropped_unknown] = values;
        let require = |value: Option<usize>, key: &str| {
            value.ok_or_else(|| DataError::invalid(path, format!("no `{key}=` line")))
        };
        Ok(Summary {
            documents: require(documents, "documents")?,
            tokens: require(tokens, "tokens")?,
            vocabulary: require(vocabulary, "vocabulary")?,
            skipped_empty: require(skipped_empty, "skipped_empty")?,
            dropped_unknown: dropped_unknown.unwrap_or(0),
        })
    }
}
