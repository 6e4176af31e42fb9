//! How the vocabulary is cut into blocks and a worker's tokens are laid out block by block, word by word.
//!
//! The vocabulary is shuffled with the seed and cut into `U` contiguous runs of near-equal token
//! counts, so every sub-round carries about the same work. A worker's tokens are sorted by block,
//! then by word, so a sub-round walks one contiguous range and every word's row of the
//! word-topic table is hot in cache while its tokens are sampled.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;

/// The vocabulary's blocks: which block and which row in it each word has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabularyBlocks {
    /// Block of each word.
    pub block_of: Vec<u32>,
    /// Row of each word inside its block.
    pub slot_of: Vec<u32>,
    /// The words of each block, in row order.
    pub words: Vec<Vec<u32>>,
}

impl VocabularyBlocks {
    /// Shuffles `0..frequencies.len()` with `seed` and cuts it into `blocks` runs of near-equal token counts.
    pub fn new(frequencies: &[u64], blocks: usize, seed: u64) -> Self {
        let mut order: Vec<u32> = (0..frequencies.len() as u32).collect();
        order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed_b10c));
        let weights: Vec<u64> = order.iter().map(|&w| frequencies[w as usize].max(1)).collect();
        let ranges = strads_core::balanced_ranges(&weights, blocks);
        let mut block_of = vec![0; frequencies.len()];
        let mut slot_of = vec![0; frequencies.len()];
        let mut words = Vec::with_capacity(blocks);
        for (b, range) in ranges.into_iter().enumerate() {
            let members: Vec<u32> = order[range].to_vec();
            for (slot, &w) in members.iter().enumerate() {
                block_of[w as usize] = b as u32;
                slot_of[w as usize] = slot as u32;
            }
            words.push(members);
        }
        VocabularyBlocks { block_of, slot_of, words }
    }

    /// Number of blocks `U`.
    pub fn blocks(&self) -> usize {
        self.words.len()
    }
}

/// All tokens of one word in one worker's documents: `start..end` of the token arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The word.
    pub word: u32,
    /// Its row in its block.
    pub slot: u32,
    /// First token.
    pub start: usize,
    /// One past the last token.
    pub end: usize,
}

/// A set of documents' tokens sorted by block and word, with each document's token positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Local document of each token.
    pub doc: Vec<u32>,
    /// Word of each token.
    pub word: Vec<u32>,
    /// Topic of each token.
    pub topic: Vec<u32>,
    /// The words' segments, block after block.
    pub segments: Vec<Segment>,
    /// Segments of block `b`: `segment_start[b]..segment_start[b + 1]`.
    pub segment_start: Vec<usize>,
    /// Positions of document `d`'s tokens: `doc_positions[doc_start[d]..doc_start[d + 1]]`.
    pub doc_positions: Vec<u32>,
    /// Offsets into `doc_positions`; `documents + 1` entries.
    pub doc_start: Vec<usize>,
    /// Where each token sits in document order: token `i` is `doc_positions[doc_slot[i]]`.
    pub doc_slot: Vec<u32>,
    /// The topics again, in document order (`by_doc[doc_slot[i]] == topic[i]`), so a random token
    /// of a document is one memory access away. Kept by the alias sampler; refreshed by [`Tokens::refresh_by_doc`].
    pub by_doc: Vec<u16>,
}

impl Tokens {
    /// Lays out documents given as word-id slices, `doc_tokens(d)` for `d in 0..documents`.
    pub fn new<'a>(documents: usize, doc_tokens: impl Fn(usize) -> &'a [u32], blocks: &VocabularyBlocks) -> Self {
        let u = blocks.blocks();
        // Global rank of each word: by block, then by slot.
        let mut block_base = vec![0usize; u + 1];
        for b in 0..u {
            block_base[b + 1] = block_base[b] + blocks.words[b].len();
        }
        let vocabulary = blocks.block_of.len();
        let rank = |w: u32| block_base[blocks.block_of[w as usize] as usize] + blocks.slot_of[w as usize] as usize;
        let mut count = vec![0usize; vocabulary + 1];
        let mut doc_start = Vec::with_capacity(documents + 1);
        doc_start.push(0);
        for d in 0..documents {
            let tokens = doc_tokens(d);
            for &w in tokens {
                count[rank(w) + 1] += 1;
            }
            doc_start.push(doc_start[d] + tokens.len());
        }
        for r in 0..vocabulary {
            count[r + 1] += count[r];
        }
        let total = count[vocabulary];
        let mut next = count.clone();
        let mut doc = vec![0u32; total];
        let mut word = vec![0u32; total];
        let mut doc_positions = vec![0u32; total];
        for d in 0..documents {
            for (i, &w) in doc_tokens(d).iter().enumerate() {
                let r = rank(w);
                let at = next[r];
                next[r] += 1;
                doc[at] = d as u32;
                word[at] = w;
                doc_positions[doc_start[d] + i] = at as u32;
            }
        }
        let mut doc_slot = vec![0u32; total];
        for (slot, &at) in doc_positions.iter().enumerate() {
            doc_slot[at as usize] = slot as u32;
        }
        let mut segments = Vec::new();
        let mut segment_start = Vec::with_capacity(u + 1);
        for (b, words) in blocks.words.iter().enumerate() {
            segment_start.push(segments.len());
            for (slot, &w) in words.iter().enumerate() {
                let r = block_base[b] + slot;
                if count[r + 1] > count[r] {
                    segments.push(Segment { word: w, slot: slot as u32, start: count[r], end: count[r + 1] });
                }
            }
        }
        segment_start.push(segments.len());
        Tokens {
            doc,
            word,
            topic: vec![0; total],
            segments,
            segment_start,
            doc_positions,
            doc_start,
            doc_slot,
            by_doc: vec![0; total],
        }
    }

    /// The segments of block `b`.
    pub fn block(&self, b: usize) -> &[Segment] {
        &self.segments[self.segment_start[b]..self.segment_start[b + 1]]
    }

    /// Copies the topics into document order.
    pub fn refresh_by_doc(&mut self) {
        for (i, &slot) in self.doc_slot.iter().enumerate() {
            self.by_doc[slot as usize] = self.topic[i] as u16;
        }
    }

    /// Positions of document `d`'s tokens.
    pub fn positions(&self, d: usize) -> &[u32] {
        &self.doc_positions[self.doc_start[d]..self.doc_start[d + 1]]
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.doc.len()
    }

    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.doc.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_vocabulary_once() {
        let freq = [5, 1, 1, 9, 2, 2, 0, 7];
        let blocks = VocabularyBlocks::new(&freq, 3, 1);
        let mut seen = vec![0; freq.len()];
        for (b, words) in blocks.words.iter().enumerate() {
            for (slot, &w) in words.iter().enumerate() {
                seen[w as usize] += 1;
                assert_eq!(blocks.block_of[w as usize] as usize, b);
                assert_eq!(blocks.slot_of[w as usize] as usize, slot);
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        // More blocks than words: some are empty, none is lost.
        let many = VocabularyBlocks::new(&freq[..2], 4, 1);
        assert_eq!(many.blocks(), 4);
        assert_eq!(many.words.iter().map(Vec::len).sum::<usize>(), 2);
    }

    #[test]
    fn tokens_are_grouped_by_block_and_word_and_docs_find_theirs() {
        let docs: Vec<Vec<u32>> = vec![vec![0, 1, 2, 1], vec![2, 2, 3], vec![3, 0]];
        let blocks = VocabularyBlocks::new(&[2, 2, 3, 2], 2, 7);
        let tokens = Tokens::new(docs.len(), |d| &docs[d], &blocks);
        assert_eq!(tokens.len(), 9);
        for b in 0..2 {
            for s in tokens.block(b) {
                assert_eq!(blocks.block_of[s.word as usize] as usize, b);
                assert!((s.start..s.end).all(|i| tokens.word[i] == s.word));
            }
        }
        for (d, doc) in docs.iter().enumerate() {
            let mut words: Vec<u32> = tokens.positions(d).iter().map(|&p| tokens.word[p as usize]).collect();
            let mut expected = doc.clone();
            words.sort();
            expected.sort();
            assert_eq!(words, expected);
            assert!(tokens.positions(d).iter().all(|&p| tokens.doc[p as usize] as usize == d));
        }
    }
}
