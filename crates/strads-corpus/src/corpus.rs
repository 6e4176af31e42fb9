//! The corpus: documents as word-id sequences in compressed rows, with their input positions.

/// Documents as sequences of word ids, the vocabulary, and where each document came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corpus {
    /// Start of each document's tokens in `tokens`: `documents() + 1` entries, the first 0.
    pub offsets: Vec<usize>,
    /// The word id of every token, document after document.
    pub tokens: Vec<u32>,
    /// Word id to word. Every id in `tokens` is below its length.
    pub vocabulary: Vec<String>,
    /// For each kept document, its position among the input's documents (0-based).
    pub ids: Vec<usize>,
    /// Documents of the input left out because they had no token (after tokenizing and filtering).
    pub skipped_empty: usize,
    /// Tokens left out because their word is not in the fixed vocabulary the corpus was read with.
    pub dropped_unknown: usize,
}

impl Corpus {
    /// Number of kept documents.
    pub fn documents(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The word ids of document `d`'s tokens.
    pub fn document(&self, d: usize) -> &[u32] {
        &self.tokens[self.offsets[d]..self.offsets[d + 1]]
    }

    /// Number of tokens.
    pub fn token_count(&self) -> usize {
        self.tokens.len()
    }

    /// Size of the vocabulary.
    pub fn vocabulary_size(&self) -> usize {
        self.vocabulary.len()
    }
}
