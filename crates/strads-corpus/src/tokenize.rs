//! Turning plain text into tokens: lowercasing, a regular expression, stop words; and the options that say how.

use std::path::{Path, PathBuf};

use regex::Regex;
use rustc_hash::FxHashSet;
use strads_data::DataError;

use crate::lines::LineReader;
use crate::stop_words::ENGLISH_STOP_WORDS;

/// How plain text becomes tokens, and which words are kept.
///
/// These options apply to the text sources (`Lines`, `Folder`, `Tsv`) only: bag-of-words input
/// (UCI, LDA-C, prepared) is used as it is. `min_df` and `max_df` apply only when the vocabulary
/// is built from the text, not when a fixed vocabulary is given to [`read`](crate::read).
#[derive(Clone, Debug, PartialEq)]
pub struct TokenizerOptions {
    /// Lowercase the text before matching `pattern`. Default true.
    pub lowercase: bool,
    /// A regular expression (`regex` crate syntax); every non-empty match is a token. Default
    /// `\p{L}{2,}`: runs of two or more letters.
    pub pattern: String,
    /// Remove the built-in English stop words ([`ENGLISH_STOP_WORDS`]). Default true.
    pub english_stop_words: bool,
    /// Further stop words, one per line; blank lines and lines starting with `#` are ignored.
    pub stop_words_file: Option<PathBuf>,
    /// Keep only words that occur in at least this many documents. Default 5.
    pub min_df: usize,
    /// Drop words that occur in more than this fraction of the documents, in (0, 1]. Default 1.0.
    pub max_df: f64,
}

impl Default for TokenizerOptions {
    fn default() -> Self {
        TokenizerOptions {
            lowercase: true,
            pattern: r"\p{L}{2,}".to_owned(),
            english_stop_words: true,
            stop_words_file: None,
            min_df: 5,
            max_df: 1.0,
        }
    }
}

impl TokenizerOptions {
    /// Checks what can be checked without reading a file: `pattern` is a valid regular expression
    /// and `max_df` is in (0, 1]. The message says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        self.compile().map(|_| ())
    }

    fn compile(&self) -> Result<Regex, String> {
        if !(self.max_df > 0.0 && self.max_df <= 1.0) {
            return Err(format!("max_df must be in (0, 1], got {}", self.max_df));
        }
        Regex::new(&self.pattern)
            .map_err(|e| format!("the tokenizer pattern `{}` is not a valid regular expression: {e}", self.pattern))
    }
}

/// Compiled [`TokenizerOptions`].
pub(crate) struct Tokenizer {
    lowercase: bool,
    pattern: Regex,
    stop_words: FxHashSet<String>,
}

impl Tokenizer {
    /// Compiles the options; errors name `input`, the file being tokenized, or the stop-word file.
    pub(crate) fn new(options: &TokenizerOptions, input: &Path) -> Result<Self, DataError> {
        let pattern = options.compile().map_err(|message| DataError::invalid(input, message))?;
        let mut stop_words = FxHashSet::default();
        if options.english_stop_words {
            stop_words.extend(ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_owned()));
        }
        if let Some(path) = &options.stop_words_file {
            let mut lines = LineReader::open(path)?;
            while let Some((_, text)) = lines.next_line()? {
                let word = text.trim();
                if !word.is_empty() && !word.starts_with('#') {
                    stop_words.insert(word.to_lowercase());
                }
            }
        }
        Ok(Tokenizer { lowercase: options.lowercase, pattern, stop_words })
    }

    /// Calls `emit` with every token of `text`, in order, stop words included.
    pub(crate) fn tokens(&self, text: &str, mut emit: impl FnMut(&str)) {
        let lowered;
        let text = if self.lowercase {
            lowered = text.to_lowercase();
            &lowered
        } else {
            text
        };
        for found in self.pattern.find_iter(text) {
            if !found.is_empty() {
                emit(found.as_str());
            }
        }
    }

    /// Whether a token is a stop word, regardless of case.
    pub(crate) fn is_stop_word(&self, token: &str) -> bool {
        !self.stop_words.is_empty()
            && (self.stop_words.contains(token)
                || (!self.lowercase
                    && token.chars().any(char::is_uppercase)
                    && self.stop_words.contains(&token.to_lowercase())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(options: &TokenizerOptions, text: &str) -> Vec<String> {
        let tokenizer = Tokenizer::new(options, Path::new("in.txt")).unwrap();
        let mut out = Vec::new();
        tokenizer.tokens(text, |t| {
            if !tokenizer.is_stop_word(t) {
                out.push(t.to_owned())
            }
        });
        out
    }

    #[test]
    fn default_keeps_lowercased_letter_runs_without_stop_words() {
        let options = TokenizerOptions::default();
        assert_eq!(tokens(&options, "The Ölfeld isn't 42 a x-ray!"), ["ölfeld", "ray"]);
    }

    #[test]
    fn stop_words_match_any_case_without_lowercasing() {
        let options = TokenizerOptions { lowercase: false, ..TokenizerOptions::default() };
        assert_eq!(tokens(&options, "The Cat and THE Dog"), ["Cat", "Dog"]);
        let options = TokenizerOptions { english_stop_words: false, pattern: r"\w+".into(), ..options };
        assert_eq!(tokens(&options, "The 2 cats"), ["The", "2", "cats"]);
    }

    #[test]
    fn bad_options_are_named() {
        let options = TokenizerOptions { pattern: "(ab".into(), ..TokenizerOptions::default() };
        let message = options.check().unwrap_err();
        assert!(message.contains("`(ab`"), "{message}");
        let error = Tokenizer::new(&options, Path::new("in.txt")).err().unwrap().to_string();
        assert!(error.starts_with("in.txt: ") && error.contains("(ab"), "{error}");
        for max_df in [0.0, 1.5, f64::NAN] {
            assert!(TokenizerOptions { max_df, ..TokenizerOptions::default() }.check().is_err());
        }
    }
}
