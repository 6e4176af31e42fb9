//! Bag-of-words readers: UCI (`docword` + `vocab`) and LDA-C (+ an optional vocabulary file).

use std::path::Path;

use strads_data::DataError;

use crate::build::{Builder, Fixed};
use crate::corpus::Corpus;
use crate::lines::{LineReader, parse_count, read_words};

/// Reads a UCI bag-of-words corpus; documents are ordered by docID, whatever the file's order.
pub(crate) fn read_uci(docword: &Path, vocab: &Path, fixed: Option<&Fixed>) -> Result<Corpus, DataError> {
    let words = read_words(vocab)?;
    let mut lines = LineReader::open(docword)?;
    let documents = header(&mut lines, "number of documents D")?;
    let vocabulary = header(&mut lines, "number of words W")?;
    let entries_expected = header(&mut lines, "number of entries NNZ")?;
    if vocabulary != words.len() {
        return Err(DataError::invalid(
            vocab,
            format!("has {} words, but {} says W = {vocabulary}", words.len(), docword.display()),
        ));
    }
    let translate = fixed.map(|f| f.translate(&words));
    let mut builder = Builder::new();
    // (document index, word id, count) of the entries whose word is kept, in file order.
    let mut entries: Vec<(usize, u32, u32)> = Vec::with_capacity(entries_expected.min(1 << 20));
    let mut entries_read = 0usize;
    while let Some((line, text)) = lines.next_line()? {
        let mut fields = text.split_ascii_whitespace();
        let (doc, word, count) = match (fields.next(), fields.next(), fields.next(), fields.next()) {
            (None, ..) => continue,
            (Some(doc), Some(word), Some(count), None) => (doc, word, count),
            _ => {
                let found = text.split_ascii_whitespace().count();
                return Err(DataError::parse(
                    docword,
                    line,
                    format!("expected `docID wordID count`, found {found} fields"),
                ));
            }
        };
        let doc = match doc.parse::<usize>() {
            Ok(d) if (1..=documents).contains(&d) => d - 1,
            _ => return Err(DataError::parse(docword, line, format!("docID `{doc}` is not in 1..={documents} (D)"))),
        };
        let word = match word.parse::<usize>() {
            Ok(w) if (1..=vocabulary).contains(&w) => w - 1,
            _ => {
                return Err(DataError::parse(docword, line, format!("wordID `{word}` is not in 1..={vocabulary} (W)")));
            }
        };
        let count = parse_count(docword, line, count)?;
        entries_read += 1;
        match &translate {
            Some(translate) => match translate[word] {
                Some(id) => entries.push((doc, id, count)),
                None => builder.drop_unknown(count),
            },
            None => entries.push((doc, word as u32, count)),
        }
    }
    if entries_read != entries_expected {
        return Err(DataError::invalid(
            docword,
            format!("the header says NNZ = {entries_expected}, but the file has {entries_read} entries"),
        ));
    }
    if !entries.is_sorted_by_key(|e| e.0) {
        entries.sort_by_key(|e| e.0); // stable: a document's entries stay in file order
    }
    let mut current = None;
    for (doc, id, count) in entries {
        if current != Some(doc) {
            if current.is_some() {
                builder.end_document();
            }
            builder.skip_documents(doc - builder.position());
            current = Some(doc);
        }
        builder.push(id, count);
    }
    if current.is_some() {
        builder.end_document();
    }
    builder.skip_documents(documents - builder.position());
    let vocabulary = match fixed {
        Some(fixed) => fixed.words.to_vec(),
        None => words,
    };
    builder.finish(vocabulary, docword)
}

/// One of the three header lines of a UCI `docword` file.
fn header(lines: &mut LineReader, what: &str) -> Result<usize, DataError> {
    let missing = lines.line() + 1;
    let path = lines.path().to_path_buf();
    match lines.next_line()? {
        None => Err(DataError::parse(&path, missing, format!("missing header line: expected the {what}"))),
        Some((line, text)) => text.trim().parse().map_err(|_| {
            DataError::parse(&path, line, format!("expected the {what} as a non-negative integer, found `{text}`"))
        }),
    }
}

/// The most distinct word ids an LDA-C file may use without a vocabulary file (2^24).
const MAX_IDS_WITHOUT_VOCABULARY: usize = 1 << 24;

/// Reads an LDA-C corpus; see [`Source::Ldac`](crate::Source::Ldac).
pub(crate) fn read_ldac(path: &Path, vocab: Option<&Path>, fixed: Option<&Fixed>) -> Result<Corpus, DataError> {
    let words = vocab.map(read_words).transpose()?;
    let mut builder = Builder::new();
    let max_id = parse_ldac(path, words.as_deref().zip(vocab), fixed, &mut builder)?;
    let vocabulary = match (fixed, words) {
        (Some(fixed), _) => fixed.words.to_vec(),
        (None, Some(words)) => words,
        (None, None) => (0..max_id.map_or(0, |m| m as usize + 1)).map(|id| id.to_string()).collect(),
    };
    builder.finish(vocabulary, path)
}

/// Parses one line of an LDA-C file (one document) into `builder`; `bound` limits the word ids.
fn ldac_line(
    path: &Path,
    line: usize,
    text: &str,
    bound: Option<&(usize, String)>,
    translate: Option<&[Option<u32>]>,
    builder: &mut Builder,
    max_id: &mut Option<u32>,
) -> Result<(), DataError> {
    let mut fields = text.split_ascii_whitespace();
    let Some(first) = fields.next() else {
        builder.end_document(); // a blank line: an empty document
        return Ok(());
    };
    let Ok(declared) = first.parse::<usize>() else {
        return Err(DataError::parse(path, line, format!("expected the number of pairs N, found `{first}`")));
    };
    let mut pairs = 0;
    for pair in fields {
        pairs += 1;
        let Some((id, count)) = pair.split_once(':') else {
            return Err(DataError::parse(path, line, format!("`{pair}` is not `id:count`")));
        };
        let Ok(id) = id.parse::<u32>() else {
            return Err(DataError::parse(path, line, format!("word id `{id}` is not a non-negative integer")));
        };
        if let Some((size, what)) = bound
            && id as usize >= *size
        {
            return Err(DataError::parse(path, line, format!("word id {id} is beyond the vocabulary ({what})")));
        }
        let count = parse_count(path, line, count)?;
        *max_id = (*max_id).max(Some(id));
        match translate {
            Some(translate) => match translate[id as usize] {
                Some(id) => builder.push(id, count),
                None => builder.drop_unknown(count),
            },
            None => builder.push(id, count),
        }
    }
    if pairs != declared {
        return Err(DataError::parse(path, line, format!("N = {declared}, but the line has {pairs} id:count pairs")));
    }
    builder.end_document();
    Ok(())
}

/// Parses LDA-C text that starts at line `first_line` of the file `path` (whole lines, as one
/// process's share of the file), with word ids below `vocabulary`. Documents are numbered from 0
/// within the text (`ids`); empty documents are counted in `skipped_empty`. Unlike a whole file, a
/// share may hold no kept document.
pub fn parse_ldac_share(path: &Path, text: &[u8], first_line: usize, vocabulary: usize) -> Result<Corpus, DataError> {
    let bound = (vocabulary, format!("{vocabulary} words in the vocabulary"));
    let mut builder = Builder::new();
    let mut max_id = None;
    let mut pieces: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if text.ends_with(b"\n") || text.is_empty() {
        pieces.pop(); // the empty piece after the last line break is no line
    }
    for (index, piece) in pieces.into_iter().enumerate() {
        let line = first_line + index;
        let piece = piece.strip_suffix(b"\r").unwrap_or(piece);
        let piece = std::str::from_utf8(piece).map_err(|_| DataError::parse(path, line, "not valid UTF-8 text"))?;
        ldac_line(path, line, piece, Some(&bound), None, &mut builder, &mut max_id)?;
    }
    Ok(builder.into_corpus(Vec::new()))
}

/// Parses the documents of an LDA-C file into `builder`. Ids are words of `words` (read from the
/// file it names) if given, else ids of `fixed` if given, else unbounded. Returns the largest id.
pub(crate) fn parse_ldac(
    path: &Path,
    words: Option<(&[String], &Path)>,
    fixed: Option<&Fixed>,
    builder: &mut Builder,
) -> Result<Option<u32>, DataError> {
    let translate = fixed.zip(words).map(|(fixed, (words, _))| fixed.translate(words));
    let bound = match (words, fixed) {
        (Some((words, vocab)), _) => Some((words.len(), format!("{} words in {}", words.len(), vocab.display()))),
        (None, Some(fixed)) => {
            Some((fixed.words.len(), format!("{} words in the given vocabulary", fixed.words.len())))
        }
        // Without a vocabulary every id up to the largest becomes a word: bound it, so one stray
        // huge id cannot ask for billions of words.
        (None, None) => Some((MAX_IDS_WITHOUT_VOCABULARY, "ids allowed without a vocabulary file".to_string())),
    };
    let mut max_id = None;
    let mut lines = LineReader::open(path)?;
    while let Some((line, text)) = lines.next_line()? {
        ldac_line(path, line, text, bound.as_ref(), translate.as_deref(), builder, &mut max_id)?;
    }
    Ok(max_id)
}
