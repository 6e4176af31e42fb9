//! Loading a LIBSVM file or a prepared corpus in an MPI job so that no rank holds the whole of it.
//!
//! Every rank reads one byte share of the file (whole lines, [`read_line_share`]) and parses it;
//! the ranks agree on the line numbers (for errors), the index base, the number of features and
//! every row's weight; the rows are then cut into the same balanced worker shards the embedded
//! runtime cuts, and each row is sent to the rank whose workers own it. A rank keeps only its
//! workers' rows. The leader also gathers every row when the dynamic scheduler needs them (it
//! scores correlations between columns), which is the one place the data is whole. A prepared LDA
//! corpus goes the same way, by documents (`corpus.ldac`), the ranks summing the word frequencies.

use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_core::balanced_ranges;
use strads_corpus::{Corpus, parse_ldac_share, read_prepared_index};
use strads_data::{DataError, Dataset, Features, IndexBase, RawRows, RowSource, SparseRows, read_line_share};
use strads_lda::DocumentSource;
use strads_runtime::Mpi;

use crate::failure::Failure;

/// The rows this rank's workers own, with what every rank agrees on.
pub struct RankRows {
    rows: usize,
    features: usize,
    weights: Vec<u64>,
    first: usize,
    local: Dataset,
    whole: Option<Dataset>,
    /// Bytes this rank read from the file.
    pub bytes_read: u64,
}

impl RankRows {
    /// The labels of this rank's rows.
    pub fn labels(&self) -> &[f64] {
        &self.local.y
    }

    /// Replaces the labels (of the local rows and, on the leader, of the whole data) by `f` of them.
    pub fn map_labels(&mut self, f: impl Fn(&[f64]) -> Result<Vec<f64>, Failure>) -> Result<(), Failure> {
        self.local.y = f(&self.local.y)?;
        if let Some(whole) = &mut self.whole {
            whole.y = f(&whole.y)?;
        }
        Ok(())
    }
}

/// The distinct values among every rank's `labels` (at most three from each rank, enough to tell
/// two classes from more), sorted.
pub fn distinct_labels(mpi: &Mpi, labels: &[f64]) -> Result<Vec<f64>, Failure> {
    let mut mine: Vec<f64> = Vec::new();
    for &y in labels {
        if mine.len() == 3 {
            break;
        }
        if !mine.contains(&y) {
            mine.push(y);
        }
    }
    let mut all: Vec<f64> = mpi.all_gather(&mine).map_err(transport)?.concat();
    all.sort_by(f64::total_cmp);
    all.dedup();
    Ok(all)
}

impl RowSource for RankRows {
    fn rows(&self) -> usize {
        self.rows
    }

    fn features(&self) -> usize {
        self.features
    }

    fn row_weights(&self) -> Vec<u64> {
        self.weights.clone()
    }

    fn shard(&self, range: Range<usize>) -> Result<(Features, Vec<f64>), DataError> {
        if let Some(whole) = &self.whole {
            return whole.shard(range);
        }
        let end = self.first + self.local.rows();
        if range.start < self.first || range.end > end {
            return Err(DataError::Invalid {
                path: "<shares>".into(),
                message: format!("rows {range:?} are not on this rank, which holds rows {}..{end}", self.first),
            });
        }
        self.local.shard(range.start - self.first..range.end - self.first)
    }

    fn whole(&self) -> Option<&Dataset> {
        self.whole.as_ref()
    }
}

/// Rows on their way to another rank.
#[derive(Default, Serialize, Deserialize)]
struct Rows {
    labels: Vec<f64>,
    lengths: Vec<u32>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl Rows {
    fn push(&mut self, matrix: &SparseRows, labels: &[f64], row: usize) {
        let view = matrix.outer_view(row).expect("row in range");
        self.labels.push(labels[row]);
        self.lengths.push(view.nnz() as u32);
        self.indices.extend_from_slice(view.indices());
        self.values.extend_from_slice(view.data());
    }
}

fn gather_rows(parts: Vec<Rows>, features: usize, path: &Path) -> Result<Dataset, Failure> {
    let mut labels = Vec::new();
    let mut indptr = vec![0usize];
    let (mut indices, mut values) = (Vec::new(), Vec::new());
    for part in parts {
        labels.extend(part.labels);
        for length in part.lengths {
            indptr.push(indptr[indptr.len() - 1] + length as usize);
        }
        indices.extend(part.indices);
        values.extend(part.values);
    }
    let x = SparseRows::try_new((labels.len(), features), indptr, indices, values)
        .map_err(|(_, _, _, e)| Failure::input(format!("{}: inconsistent rows between ranks: {e}", path.display())))?;
    Ok(Dataset { x: Features::Sparse(x), y: labels, feature_names: None })
}

fn transport(error: strads_core::EngineError) -> Failure {
    Failure::Run(error.into())
}

/// Reads this rank's rows of the LIBSVM file at `path` for a run of `workers` workers spread
/// evenly over the ranks; `whole_on_leader` also gathers every row on rank 0.
pub fn load_libsvm(
    mpi: &Mpi,
    path: &Path,
    base: IndexBase,
    workers: usize,
    whole_on_leader: bool,
) -> Result<RankRows, Failure> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let share = read_line_share(path, rank, ranks)?;
    let lines: Vec<usize> = mpi.all_gather(&share.lines).map_err(transport)?;
    let first_line = 1 + lines[..rank].iter().sum::<usize>();
    let raw = RawRows::parse(path, &share.bytes, first_line)?;
    let zero_anywhere = mpi.all_max(u64::from(raw.first_zero_line.is_some())) == 1;
    let zero_based = raw.zero_based(path, base, zero_anywhere)?;
    let local_weights = raw.row_weights();
    let (matrix, labels) = raw.finish(path, &share.bytes, first_line, zero_based)?;
    let features = mpi.all_max(matrix.cols() as u64) as usize;
    let all_weights: Vec<Vec<u64>> = mpi.all_gather(&local_weights).map_err(transport)?;
    let offset: usize = all_weights[..rank].iter().map(Vec::len).sum();
    let weights: Vec<u64> = all_weights.concat();
    let rows = weights.len();
    if rows == 0 {
        return Err(Failure::input(format!("{}: no data rows", path.display())));
    }
    // The ranks' rows: the union of their workers' balanced shards, as the engine will cut them.
    let threads = workers / ranks;
    let shards = balanced_ranges(&weights, workers);
    let owned: Vec<Range<usize>> =
        (0..ranks).map(|r| shards[r * threads].start..shards[r * threads + threads - 1].end).collect();
    let mut outgoing: Vec<Rows> = (0..ranks).map(|_| Rows::default()).collect();
    let mut to_leader = Rows::default();
    for row in 0..matrix.rows() {
        let global = offset + row;
        let owner = owned.iter().position(|r| r.contains(&global)).unwrap_or(ranks - 1);
        outgoing[owner].push(&matrix, &labels, row);
        if whole_on_leader {
            to_leader.push(&matrix, &labels, row);
        }
    }
    drop(matrix);
    let local = gather_rows(mpi.exchange(&outgoing).map_err(transport)?, features, path)?;
    drop(outgoing);
    let whole = if whole_on_leader {
        let mut parts: Vec<Rows> = (0..ranks).map(|_| Rows::default()).collect();
        parts[0] = to_leader;
        let received = mpi.exchange(&parts).map_err(transport)?;
        if rank == 0 { Some(gather_rows(received, features, path)?) } else { None }
    } else {
        None
    };
    Ok(RankRows { rows, features, weights, first: owned[rank].start, local, whole, bytes_read: share.bytes_read })
}

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

impl DocumentSource for RankCorpus {
    fn documents(&self) -> usize {
        self.documents
    }

    fn vocabulary_size(&self) -> usize {
        self.vocabulary
    }

    fn token_count(&self) -> usize {
        self.tokens
    }

    fn frequencies(&self) -> Vec<u64> {
        self.frequencies.clone()
    }

    fn lengths(&self) -> Vec<u64> {
        self.lengths.clone()
    }

    fn document(&self, d: usize) -> &[u32] {
        let local = d - self.first;
        &self.local[self.offsets[local]..self.offsets[local + 1]]
    }

    fn beyond_vocabulary(&self) -> Option<u32> {
        None // every share was parsed against the vocabulary
    }
}

/// Reads this rank's documents of the prepared corpus in `dir` for a run of `workers` workers spread
/// evenly over the ranks. Returns them, and the corpus without its tokens (vocabulary, document
/// counts and, on rank 0, each document's input position) for the outputs.
pub fn load_prepared(mpi: &Mpi, dir: &Path, workers: usize) -> Result<(RankCorpus, Corpus), Failure> {
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let index = read_prepared_index(dir)?;
    let path = &index.documents_path;
    let vocabulary = index.vocabulary.len();
    let share = read_line_share(path, rank, ranks)?;
    let lines: Vec<usize> = mpi.all_gather(&share.lines).map_err(transport)?;
    let before: usize = lines[..rank].iter().sum();
    let local = parse_ldac_share(path, &share.bytes, before + 1, vocabulary)?;
    let mut frequencies = vec![0u64; vocabulary];
    for &w in &local.tokens {
        frequencies[w as usize] += 1;
    }
    mpi.all_sum(&mut frequencies);
    let local_lengths: Vec<u64> = (0..local.documents()).map(|d| local.document(d).len() as u64).collect();
    // Each kept document's line in the documents file, and how many lines (documents) it has.
    let positions: Vec<usize> = local.ids.iter().map(|&i| before + i).collect();
    let parsed = mpi.all_sum_one((local.documents() + local.skipped_empty) as u64) as usize;
    let all_lengths: Vec<Vec<u64>> = mpi.all_gather(&local_lengths).map_err(transport)?;
    let offset: usize = all_lengths[..rank].iter().map(Vec::len).sum();
    let lengths: Vec<u64> = all_lengths.concat();
    let tokens = lengths.iter().sum::<u64>() as usize;
    if parsed != index.documents || tokens != index.tokens {
        return Err(Failure::input(format!(
            "{}: has {parsed} documents and {tokens} tokens, but corpus.txt says documents={} and tokens={}",
            path.display(),
            index.documents,
            index.tokens
        )));
    }
    let documents = lengths.len();
    if documents == 0 {
        return Err(Failure::input(format!("{}: no document has a token", path.display())));
    }
    let threads = workers / ranks;
    let shards = balanced_ranges(&lengths, workers);
    let owned: Vec<Range<usize>> =
        (0..ranks).map(|r| shards[r * threads].start..shards[r * threads + threads - 1].end).collect();
    let mut outgoing: Vec<Documents> = (0..ranks).map(|_| Documents::default()).collect();
    for d in 0..local.documents() {
        let owner = owned.iter().position(|r| r.contains(&(offset + d))).unwrap_or(ranks - 1);
        let words = local.document(d);
        outgoing[owner].lengths.push(words.len() as u32);
        outgoing[owner].tokens.extend_from_slice(words);
    }
    let skipped_here = local.skipped_empty;
    drop(local);
    let received = mpi.exchange(&outgoing).map_err(transport)?;
    drop(outgoing);
    let mut offsets = vec![0usize];
    let mut own = Vec::new();
    for part in received {
        for length in part.lengths {
            offsets.push(offsets[offsets.len() - 1] + length as usize);
        }
        own.extend(part.tokens);
    }
    // The input position of every document, for the outputs: gathered on rank 0 only.
    let mut to_leader: Vec<Vec<usize>> = vec![Vec::new(); ranks];
    to_leader[0] = positions;
    let gathered: Vec<Vec<usize>> = mpi.exchange(&to_leader).map_err(transport)?;
    let ids = if rank == 0 { gathered.concat().into_iter().map(|line| index.ids[line]).collect() } else { Vec::new() };
    let skipped = mpi.all_sum_one(skipped_here as u64) as usize;
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
        first: owned[rank].start,
        offsets,
        local: own,
        bytes_read: share.bytes_read,
    };
    Ok((corpus, meta))
}
