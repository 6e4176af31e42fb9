//! A trained topic model's folder: the word-topic counts (`word_topic.npy`, and as CSV), the
//! vocabulary, the priors and the tokenizer settings (`model.json`) that inference needs, the
//! training documents' topic counts, and the top words of each topic; written atomically file by
//! file and checked when read.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_corpus::{Corpus, TokenizerOptions};
use strads_data::{DataError, read_npy, write_atomic, write_npy, write_npy_from, write_string_atomic};

use crate::{LdaError, LdaFit, TopicModel};

/// What `model.json` holds: what inference needs besides the counts and the vocabulary.
#[derive(Debug, Serialize, Deserialize)]
struct ModelFile {
    topics: usize,
    vocabulary: usize,
    alpha: f64,
    beta: f64,
    lowercase: bool,
    token_pattern: String,
    english_stop_words: bool,
}

/// A model read back from its folder.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedModel {
    /// The counts and priors.
    pub model: TopicModel,
    /// The words, by word id.
    pub vocabulary: Vec<String>,
    /// Whether the training text was lowercased.
    pub lowercase: bool,
    /// The token pattern of the training text.
    pub token_pattern: String,
    /// Whether English stop words were dropped.
    pub english_stop_words: bool,
}

/// What a model folder holds besides what inference needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaveOptions {
    /// Words listed per topic in `topics.txt`.
    pub top_words: usize,
    /// Also write every training document's topic mix as a dense `doc_topic.npy` (documents x K).
    pub dense_doc_topic: bool,
}

/// Writes the model folder `dir` (created if needed) of `fit`, trained on `corpus` read through
/// `tokenizer`: `model.json`, `vocab.txt`, `word_topic.npy` (V x K counts, u32) and
/// `word_topic.csv`, `doc_topic.csv` (the nonzero document-topic counts by input document),
/// `topics.txt` (topics by size, with their top words) and, when asked, `doc_topic.npy`.
pub fn save(
    dir: &Path,
    fit: &LdaFit,
    corpus: &Corpus,
    tokenizer: &TokenizerOptions,
    options: SaveOptions,
) -> Result<(), LdaError> {
    std::fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
    let k = fit.topics;
    let v = corpus.vocabulary_size();
    write_npy(&dir.join("word_topic.npy"), v, k, &fit.counts.word_topic)?;
    if options.dense_doc_topic {
        // The dense array is never held whole: its rows are made as they are written.
        let inputs = corpus.documents() + corpus.skipped_empty;
        write_npy_from(&dir.join("doc_topic.npy"), inputs, k, rows_by_input(corpus, k, |d| fit.document_topics(d)))?;
    }
    write_atomic(&dir.join("word_topic.csv"), |w| {
        writeln!(w, "word,topic,count")?;
        for (word, row) in corpus.vocabulary.iter().zip(fit.counts.word_topic.chunks(k)) {
            for (t, &c) in row.iter().enumerate().filter(|(_, c)| **c > 0) {
                writeln!(w, "{word},{t},{c}")?;
            }
        }
        Ok(())
    })?;
    write_atomic(&dir.join("doc_topic.csv"), |w| {
        writeln!(w, "document,topic,count")?;
        for d in 0..corpus.documents() {
            for &(t, c) in fit.counts.doc_topic.row(d) {
                writeln!(w, "{},{t},{c}", corpus.ids[d])?;
            }
        }
        Ok(())
    })?;
    write_atomic(&dir.join("topics.txt"), |w| {
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by_key(|&t| std::cmp::Reverse(fit.counts.totals[t]));
        for t in order {
            let phi = fit.topic_words(t);
            // The top words only: a full sort of V words for each of K topics cost more than the
            // rest of the output at K = 1000.
            let heavier = |a: &usize, b: &usize| phi[*b].total_cmp(&phi[*a]).then(a.cmp(b));
            let mut words: Vec<usize> = (0..v).collect();
            let top = options.top_words.min(v);
            if top > 0 && top < v {
                words.select_nth_unstable_by(top - 1, heavier);
            }
            words[..top].sort_unstable_by(heavier);
            let share = fit.counts.totals[t] as f64 / fit.tokens.max(1) as f64;
            write!(w, "topic {t} ({:.1}% of tokens):", 100.0 * share)?;
            for &word in &words[..top] {
                write!(w, " {} ({:.4})", corpus.vocabulary[word], phi[word])?;
            }
            writeln!(w)?;
        }
        Ok(())
    })?;
    write_string_atomic(&dir.join("vocab.txt"), &(corpus.vocabulary.join("\n") + "\n"))?;
    let file = ModelFile {
        topics: k,
        vocabulary: v,
        alpha: fit.alpha,
        beta: fit.beta,
        lowercase: tokenizer.lowercase,
        token_pattern: tokenizer.pattern.clone(),
        english_stop_words: tokenizer.english_stop_words,
    };
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| LdaError::File(DataError::invalid(&dir.join("model.json"), format!("cannot encode: {e}"))))?;
    write_string_atomic(&dir.join("model.json"), &(json + "\n"))?;
    Ok(())
}

/// Reads the model folder `dir` written by [`save`], checking the counts against `model.json` and
/// the vocabulary.
pub fn load(dir: &Path) -> Result<SavedModel, LdaError> {
    let path = dir.join("model.json");
    let bad = |path: &Path, problem: String| LdaError::File(DataError::invalid(path, problem));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| bad(&path, format!("{e} (is it the folder written by `strads lda`?)")))?;
    let info: ModelFile = serde_json::from_str(&text).map_err(|e| bad(&path, e.to_string()))?;
    let vocabulary = read_vocabulary(&dir.join("vocab.txt"))?;
    if vocabulary.len() != info.vocabulary {
        let problem = format!("{} words, model.json says {}", vocabulary.len(), info.vocabulary);
        return Err(bad(&dir.join("vocab.txt"), problem));
    }
    let word_topic = read_npy::<u32>(&dir.join("word_topic.npy"), info.vocabulary, info.topics, "model.json")?;
    Ok(SavedModel {
        model: TopicModel { topics: info.topics, alpha: info.alpha, beta: info.beta, word_topic },
        vocabulary,
        lowercase: info.lowercase,
        token_pattern: info.token_pattern,
        english_stop_words: info.english_stop_words,
    })
}

/// Reads a vocabulary file: one word per line.
pub fn read_vocabulary(path: &Path) -> Result<Vec<String>, LdaError> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    Ok(text.lines().map(str::to_string).collect())
}

/// Topic mixes `mix(d)` of a corpus's documents as rows of `K`, one row per *input* document in
/// input order (documents skipped as empty get the uniform mix), made one at a time as they are read.
pub fn rows_by_input<'a>(
    corpus: &Corpus,
    k: usize,
    mix: impl Fn(usize) -> Vec<f64> + 'a,
) -> impl Iterator<Item = f32> + 'a {
    let mut document_at = vec![None; corpus.documents() + corpus.skipped_empty];
    for d in 0..corpus.documents() {
        document_at[corpus.ids[d]] = Some(d);
    }
    document_at.into_iter().flat_map(move |d| match d {
        Some(d) => mix(d).into_iter().map(|p| p as f32).collect(),
        None => vec![1.0 / k as f32; k],
    })
}
