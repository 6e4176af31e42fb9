//! Assembling a corpus document by document: kept and skipped documents, a fixed vocabulary, and
//! the vocabulary built from text with its document-frequency filters.

use std::path::Path;

use rustc_hash::FxHashMap;
use strads_data::DataError;

use crate::corpus::Corpus;
use crate::tokenize::{Tokenizer, TokenizerOptions};

/// The documents read so far, in input order; empty ones are counted, not kept.
#[derive(Debug)]
pub(crate) struct Builder {
    offsets: Vec<usize>,
    tokens: Vec<u32>,
    ids: Vec<usize>,
    /// Input position of the next document.
    position: usize,
    skipped_empty: usize,
    dropped_unknown: usize,
}

impl Builder {
    pub(crate) fn new() -> Self {
        Builder {
            offsets: vec![0],
            tokens: Vec::new(),
            ids: Vec::new(),
            position: 0,
            skipped_empty: 0,
            dropped_unknown: 0,
        }
    }

    /// Number of input documents so far, kept or not.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// Adds `count` tokens of word `id` to the current document.
    pub(crate) fn push(&mut self, id: u32, count: u32) {
        self.tokens.extend(std::iter::repeat_n(id, count as usize));
    }

    /// Counts `count` tokens dropped because their word is not in the vocabulary.
    pub(crate) fn drop_unknown(&mut self, count: u32) {
        self.dropped_unknown += count as usize;
    }

    /// Ends the current document: kept if it has a token, else counted as skipped.
    pub(crate) fn end_document(&mut self) {
        if self.tokens.len() > self.offsets.last().copied().unwrap_or(0) {
            self.offsets.push(self.tokens.len());
            self.ids.push(self.position);
        } else {
            self.skipped_empty += 1;
        }
        self.position += 1;
    }

    /// Counts `count` input documents without a token.
    pub(crate) fn skip_documents(&mut self, count: usize) {
        self.skipped_empty += count;
        self.position += count;
    }

    /// Tokens kept plus tokens dropped as unknown.
    pub(crate) fn tokens_read(&self) -> usize {
        self.tokens.len() + self.dropped_unknown
    }

    /// The corpus as built, even without a kept document.
    pub(crate) fn into_corpus(self, vocabulary: Vec<String>) -> Corpus {
        Corpus {
            offsets: self.offsets,
            tokens: self.tokens,
            vocabulary,
            ids: self.ids,
            skipped_empty: self.skipped_empty,
            dropped_unknown: self.dropped_unknown,
        }
    }

    /// The corpus; an error naming `path` if no document was kept.
    pub(crate) fn finish(self, vocabulary: Vec<String>, path: &Path) -> Result<Corpus, DataError> {
        if self.ids.is_empty() {
            return Err(DataError::invalid(
                path,
                format!(
                    "no document has a token left after tokenizing and filtering ({} documents read)",
                    self.position
                ),
            ));
        }
        Ok(self.into_corpus(vocabulary))
    }
}

/// A fixed vocabulary (a trained model's), looked up by word.
pub(crate) struct Fixed<'v> {
    pub(crate) words: &'v [String],
    index: FxHashMap<&'v str, u32>,
}

impl<'v> Fixed<'v> {
    pub(crate) fn new(words: &'v [String]) -> Self {
        let mut index = FxHashMap::default();
        for (id, word) in words.iter().enumerate() {
            index.entry(word.as_str()).or_insert(id as u32);
        }
        Fixed { words, index }
    }

    pub(crate) fn get(&self, word: &str) -> Option<u32> {
        self.index.get(word).copied()
    }

    /// For each word of another vocabulary, its id here.
    pub(crate) fn translate(&self, words: &[String]) -> Vec<Option<u32>> {
        words.iter().map(|w| self.get(w)).collect()
    }
}

/// Codes in [`TextCollector::codes`] for tokens that are not words of the corpus.
const STOP_WORD: u32 = u32::MAX;
const UNKNOWN: u32 = u32::MAX - 1;

/// Collects tokenized documents, into a fixed vocabulary or into one built from the text.
pub(crate) struct TextCollector<'a> {
    tokenizer: Tokenizer,
    fixed: Option<&'a Fixed<'a>>,
    min_df: usize,
    max_df: f64,
    /// With a fixed vocabulary the final documents, else the documents with provisional word ids.
    builder: Builder,
    /// Every distinct token seen: its word id (provisional without a fixed vocabulary: in order of
    /// first appearance), [`STOP_WORD`] or [`UNKNOWN`]. One lookup per token.
    codes: FxHashMap<String, u32>,
    /// Per provisional id: number of documents it occurs in, and 1 + the last such document.
    df: Vec<usize>,
    last: Vec<usize>,
}

impl<'a> TextCollector<'a> {
    pub(crate) fn new(
        options: &TokenizerOptions,
        fixed: Option<&'a Fixed<'a>>,
        input: &Path,
    ) -> Result<Self, DataError> {
        Ok(TextCollector {
            tokenizer: Tokenizer::new(options, input)?,
            fixed,
            min_df: options.min_df,
            max_df: options.max_df,
            builder: Builder::new(),
            codes: FxHashMap::default(),
            df: Vec::new(),
            last: Vec::new(),
        })
    }

    /// Adds the next input document.
    pub(crate) fn add(&mut self, text: &str) {
        let TextCollector { tokenizer, fixed, builder, codes, df, last, .. } = self;
        let marker = builder.position + 1;
        tokenizer.tokens(text, |token| {
            let code = match codes.get(token) {
                Some(&code) => code,
                None => {
                    let code = if tokenizer.is_stop_word(token) {
                        STOP_WORD
                    } else if let Some(fixed) = fixed {
                        fixed.get(token).unwrap_or(UNKNOWN)
                    } else {
                        df.push(0);
                        last.push(0);
                        (df.len() - 1) as u32
                    };
                    codes.insert(token.to_owned(), code);
                    code
                }
            };
            match code {
                STOP_WORD => {}
                UNKNOWN => builder.drop_unknown(1),
                id => {
                    if fixed.is_none() {
                        let i = id as usize;
                        if last[i] != marker {
                            last[i] = marker;
                            df[i] += 1;
                        }
                    }
                    builder.push(id, 1);
                }
            }
        });
        builder.end_document();
    }

    /// The corpus: with a fixed vocabulary as collected, else with the words that pass the
    /// document-frequency filters, sorted, and the documents left empty by them skipped.
    pub(crate) fn finish(self, path: &Path) -> Result<Corpus, DataError> {
        if let Some(fixed) = self.fixed {
            return self.builder.finish(fixed.words.to_vec(), path);
        }
        let documents = self.builder.position as f64;
        let mut kept: Vec<(String, u32)> = self
            .codes
            .into_iter()
            .filter(|&(_, id)| {
                self.df.get(id as usize).is_some_and(|&df| df >= self.min_df && df as f64 <= self.max_df * documents)
            })
            .collect();
        kept.sort_unstable();
        let mut remap = vec![u32::MAX; self.df.len()];
        for (new, (_, old)) in kept.iter().enumerate() {
            remap[*old as usize] = new as u32;
        }
        let raw = self.builder;
        let mut builder = Builder::new();
        let mut next = 0;
        for (d, &position) in raw.ids.iter().enumerate() {
            builder.skip_documents(position - next);
            for &old in &raw.tokens[raw.offsets[d]..raw.offsets[d + 1]] {
                let new = remap[old as usize];
                if new != u32::MAX {
                    builder.push(new, 1);
                }
            }
            builder.end_document();
            next = position + 1;
        }
        builder.skip_documents(raw.position - next);
        builder.finish(kept.into_iter().map(|(word, _)| word).collect(), path)
    }
}
