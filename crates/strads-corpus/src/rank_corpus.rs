//! Loading a prepared corpus on the ranks of a job so that no rank holds the whole of it.
//!
//! Every rank reads one byte share of the documents file (`corpus.ldac`, whole lines) and parses
//! it against the vocabulary; the ranks sum the word frequencies, agree on every document's length,
//! cut the documents into the same balanced worker shards one process cuts, and send each document
//! to the rank whose workers own it. Rank 0 also gets every document's input position, for the outputs.

use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_core::collectives::{owner_of, rank_range};
use strads_core::{Collectives, balanced_ranges};
use strads_data::{DataError, read_rank_share};

use crate::{Corpus, parse_ldac_share, read_prepared_index};

/// Documents on their way to another rank.
#[derive(Default, Serialize, Deserialize)]
struct Documents {
    lengths: Vec<u32>,
    tokens: Vec<u32>,
}

/// The documents this rank's workers own, with the counts every rank agrees on.
pub struct RankCorpus {
    documents: usize,
    vocabulary: usize,
    tokens: usize,
    frequencies: Vec<u64>,
    lengths: Vec<u64>,
    first: usize,
    offsets: Vec<usize>,
    local: Vec<u32>,
    /// Bytes this rank read from the documents file.
    pub bytes_read: u64,
}

impl RankCorpus {
    /// Documents of the whole corpus.
    pub fn documents(&self) -> usize {
        self.documents
    }

    /// Words of the vocabulary.
    pub fn vocabulary_size(&self) -> usize {
        self.vocabulary
    }

    /// Tokens of the whole corpus.
    pub fn token_count(&self) -> usize {
        self.tokens
    }

    /// Every word's number of tokens in the whole corpus.
    pub fn frequencies(&self) -> &[u64] {
        &self.frequencies
    }

    /// Every document's number of tokens.
    pub fn lengths(&self) -> &[u64] {
        &self.lengths
    }

    /// The word ids of document `d`, which must be one of this rank's workers'.
    pub fn document(&self, d: usize) -> &[u32] {
        let local = d - self.first;
        &self.local[self.offsets[local]..self.offsets[local + 1]]
    }
}

/// Reads this rank's documents of the prepared corpus in `dir` for a run of `workers` workers
/// spread evenly over the ranks. Returns them, and the corpus without its tokens (vocabulary,
/// document lengths and, on rank 0, each document's input position) for the outputs.
pub fn load_prepared_share(
    ranks: &impl Collectives,
    dir: &Path,
    workers: usize,
) -> Result<(RankCorpus, Corpus), DataError> {
    let collective = DataError::Collective;
    let (rank, count) = (ranks.rank(), ranks.ranks());
    let index = read_prepared_index(dir)?;
    let path = &index.documents_path;
    let vocabulary = index.vocabulary.len();
    let (share, before) = read_rank_share(ranks, path)?;
    let local = parse_ldac_share(path, &share.bytes, before + 1, vocabulary)?;
    let bytes_read = share.bytes_read;
    drop(share);
    let mut frequencies = vec![0u64; vocabulary];
    for &w in &local.tokens {
        frequencies[w as usize] += 1;
    }
    ranks.all_sum(&mut frequencies).map_err(collective)?;
    let local_lengths: Vec<u64> = (0..local.documents()).map(|d| local.document(d).len() as u64).collect();
    // Each kept document's line in the documents file, and how many lines (documents) it has.
    let positions: Vec<usize> = local.ids.iter().map(|&i| before + i).collect();
    let parsed = ranks.all_sum_one((local.documents() + local.skipped_empty) as u64).map_err(collective)? as usize;
    let (lengths, offset) = ranks.concat_all(&local_lengths).map_err(collective)?;
    let tokens = lengths.iter().sum::<u64>() as usize;
    if parsed != index.documents || tokens != index.tokens {
        return Err(DataError::invalid(
            path,
            format!(
                "has {parsed} documents and {tokens} tokens, but corpus.txt says documents={} and tokens={}",
                index.documents, index.tokens
            ),
        ));
    }
    let documents = lengths.len();
    if documents == 0 {
        return Err(DataError::invalid(path, "no document has a token"));
    }
    let threads = workers / count;
    let shards = balanced_ranges(&lengths, workers);
    let mut outgoing: Vec<Documents> = (0..count).map(|_| Documents::default()).collect();
    for d in 0..local.documents() {
        let owner = owner_of(&shards, threads, offset + d);
        let words = local.document(d);
        outgoing[owner].lengths.push(words.len() as u32);
        outgoing[owner].tokens.extend_from_slice(words);
    }
    let skipped_here = local.skipped_empty;
    drop(local);
    let received = ranks.exchange(outgoing).map_err(collective)?;
    let mut offsets = vec![0usize];
    let mut own = Vec::new();
    for part in received {
        for length in part.lengths {
            offsets.push(offsets[offsets.len() - 1] + length as usize);
        }
        own.extend(part.tokens);
    }
    // The input position of every document, for the outputs: gathered on rank 0 only.
    let ids = ranks.gather_on_leader(positions).map_err(collective)?.into_iter().map(|line| index.ids[line]).collect();
    let skipped = ranks.all_sum_one(skipped_here as u64).map_err(collective)? as usize;
    let mut meta_offsets = Vec::with_capacity(documents + 1);
    meta_offsets.push(0);
    for &length in &lengths {
        meta_offsets.push(meta_offsets[meta_offsets.len() - 1] + length as usize);
    }
    let meta = Corpus {
        offsets: meta_offsets,
        tokens: Vec::new(),
        vocabulary: index.vocabulary,
        ids,
        skipped_empty: skipped + index.skipped_empty,
        dropped_unknown: index.dropped_unknown,
    };
    let corpus = RankCorpus {
        documents,
        vocabulary,
        tokens,
        frequencies,
        lengths,
        first: rank_range(&shards, threads, rank).start,
        offsets,
        local: own,
        bytes_read,
    };
    Ok((corpus, meta))
}
