//! Text corpora for topic models: documents as word-id sequences, a vocabulary, and the readers that build them.
//!
//! A [`Corpus`] holds the kept documents in input order, each as the word ids of its tokens, and
//! for every kept document its index in the input, so results map back to the user's documents.
//! [`read`] takes a [`Source`]: UCI bag-of-words (`docword` + `vocab`), LDA-C (+ a vocabulary
//! file), plain text (one document per line, a folder of files, or a column of a TSV file) through
//! the tokenizer that [`TokenizerOptions`] describe, or the prepared form that [`save_prepared`]
//! writes. Every content error names the file and the line.

mod bow;
mod build;
mod corpus;
mod lines;
mod prepared;
mod rank_corpus;
mod stop_words;
mod text;
mod tokenize;

use std::path::PathBuf;

use strads_data::DataError;

pub use bow::parse_ldac_share;
pub use corpus::Corpus;
pub use prepared::{PreparedIndex, is_prepared, read_prepared_index, save_prepared};
pub use rank_corpus::{RankCorpus, load_prepared_share};
pub use stop_words::ENGLISH_STOP_WORDS;
pub use tokenize::TokenizerOptions;

use build::{Fixed, TextCollector};

/// Where a corpus comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// UCI bag-of-words: the `docword` file (three header lines D, W, NNZ, then `docID wordID
    /// count` lines, ids 1-based) and its `vocab` file (one word per line, line i is word id i).
    Uci {
        /// The `docword` file.
        docword: PathBuf,
        /// The `vocab` file; it must have W lines.
        vocab: PathBuf,
    },
    /// LDA-C: one document per line, `N id:count id:count ...` (ids 0-based, N the number of
    /// pairs; a blank line is an empty document), with an optional vocabulary file (one word per
    /// line). Without one, the vocabulary is the ids written as strings, "0" to the largest id.
    Ldac {
        /// The documents.
        path: PathBuf,
        /// The vocabulary file, if any.
        vocab: Option<PathBuf>,
    },
    /// Plain text, one document per line (a blank line is an empty document).
    Lines(PathBuf),
    /// A folder: every regular file directly inside it (sorted by file name; hidden files, whose
    /// name starts with `.`, skipped) is one document.
    Folder(PathBuf),
    /// A tab-separated file whose first line names the columns; the text of each document is in
    /// column `column`; `skip` further lines after the header are not documents (Orange's `.tab`
    /// files have 2: types and flags). Fields are split at every tab, with no quoting; an empty
    /// line is an empty document.
    Tsv {
        /// The file.
        path: PathBuf,
        /// The name of the text column.
        column: String,
        /// Lines after the header that are not documents.
        skip: usize,
    },
    /// A directory written by [`save_prepared`].
    Prepared(PathBuf),
}

impl Source {
    /// The file or directory errors about the whole input name.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Source::Uci { docword: path, .. }
            | Source::Ldac { path, .. }
            | Source::Lines(path)
            | Source::Folder(path)
            | Source::Tsv { path, .. }
            | Source::Prepared(path) => path,
        }
    }
}

/// Reads a corpus.
///
/// Without a fixed `vocabulary`, text sources build the vocabulary: the words that pass the
/// tokenizer's stop-word and document-frequency filters, sorted (by bytes); bag-of-words sources use
/// the file's vocabulary. `tokenizer` applies to text sources only.
///
/// With `vocabulary = Some(v)` (new documents for a trained model): words are mapped to ids of `v`
/// by their string, tokens of words not in `v` are dropped and counted in `dropped_unknown`,
/// `min_df` and `max_df` are not applied, and the corpus's vocabulary is `v`. UCI, LDA-C and
/// prepared ids are mapped to words through the input's own vocabulary file; LDA-C without one
/// takes its ids as ids of `v`, which must then be below `v.len()`.
///
/// Documents with no token left are skipped and counted in `skipped_empty`; `ids` holds the input
/// position of each kept document (0-based, counting skipped ones; for UCI docID i is position
/// i - 1; for TSV the rows after the header and skipped lines). Bag-of-words counts become repeated
/// tokens, in file order. An input where no document is kept is an error.
pub fn read(source: &Source, tokenizer: &TokenizerOptions, vocabulary: Option<&[String]>) -> Result<Corpus, DataError> {
    let fixed = vocabulary.map(Fixed::new);
    let fixed = fixed.as_ref();
    match source {
        Source::Uci { docword, vocab } => bow::read_uci(docword, vocab, fixed),
        Source::Ldac { path, vocab } => bow::read_ldac(path, vocab.as_deref(), fixed),
        Source::Lines(path) => text::read_lines(path, TextCollector::new(tokenizer, fixed, path)?),
        Source::Folder(dir) => text::read_folder(dir, TextCollector::new(tokenizer, fixed, dir)?),
        Source::Tsv { path, column, skip } => {
            text::read_tsv(path, column, *skip, TextCollector::new(tokenizer, fixed, path)?)
        }
        Source::Prepared(dir) => prepared::read_prepared(dir, fixed),
    }
}
