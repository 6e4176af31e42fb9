//! The collective operations a group of processes (the ranks of a job) loads its data with, so
//! that readers can cut a file into per-rank shares without knowing the transport.
//!
//! [`Collectives`] is what a reader needs: every rank's value on every rank, a personalized
//! exchange, sums and maxima. The MPI runtime implements it over its communicator; [`InProcess`]
//! implements it for ranks that are threads of one process (the caller starts them), so the share
//! loaders are tested in the default build against the whole-file readers.

use std::ops::Range;
use std::sync::{Arc, Barrier, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::EngineError;
use crate::checkpoint::{decode, encode};

/// Collective operations over the ranks of a job; every rank must call each one in the same order.
pub trait Collectives {
    /// This process's rank, `0..ranks()`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn ranks(&self) -> usize;

    /// Every rank's `value`, in rank order, on every rank.
    fn all_gather<T: Serialize + DeserializeOwned>(&self, value: &T) -> Result<Vec<T>, EngineError>;

    /// Sends `outgoing[r]` to rank `r` (every rank at once) and returns what each rank sent here, in rank order.
    fn exchange<T: Serialize + DeserializeOwned>(&self, outgoing: Vec<T>) -> Result<Vec<T>, EngineError>;

    /// The element-wise sum of every rank's `values`, on every rank.
    fn all_sum(&self, values: &mut [u64]) -> Result<(), EngineError> {
        let all = self.all_gather(&values.to_vec())?;
        for (i, v) in values.iter_mut().enumerate() {
            *v = all.iter().map(|part| part[i]).sum();
        }
        Ok(())
    }

    /// The sum of every rank's `value`, on every rank.
    fn all_sum_one(&self, value: u64) -> Result<u64, EngineError> {
        let mut values = [value];
        self.all_sum(&mut values)?;
        Ok(values[0])
    }

    /// The largest of every rank's `value`, on every rank.
    fn all_max(&self, value: u64) -> Result<u64, EngineError> {
        Ok(self.all_gather(&value)?.into_iter().max().unwrap_or(value))
    }

    /// Every rank's `values` one after another, on rank 0; nothing elsewhere.
    fn gather_on_leader<T: Serialize + DeserializeOwned>(&self, values: Vec<T>) -> Result<Vec<T>, EngineError> {
        let mut parts: Vec<Vec<T>> = (0..self.ranks()).map(|_| Vec::new()).collect();
        parts[0] = values;
        Ok(self.exchange(parts)?.into_iter().flatten().collect())
    }

    /// Every rank's `values` one after another, on every rank, and where this rank's start.
    fn concat_all<T: Serialize + DeserializeOwned>(&self, values: &Vec<T>) -> Result<(Vec<T>, usize), EngineError> {
        let all: Vec<Vec<T>> = self.all_gather(values)?;
        let offset = all[..self.rank()].iter().map(Vec::len).sum();
        Ok((all.into_iter().flatten().collect(), offset))
    }
}

/// The rank whose workers own index `x` under `shards` (one range per worker, `threads` per rank).
pub fn owner_of(shards: &[Range<usize>], threads: usize, x: usize) -> usize {
    shards.partition_point(|r| r.end <= x) / threads
}

/// The indices the workers of `rank` own together under `shards` (`threads` workers per rank).
pub fn rank_range(shards: &[Range<usize>], threads: usize, rank: usize) -> Range<usize> {
    shards[rank * threads].start..shards[rank * threads + threads - 1].end
}

/// What the ranks of one [`InProcess`] group share: one mailbox per (sender, receiver).
struct Shared {
    barrier: Barrier,
    mail: Mutex<Vec<Vec<Option<Vec<u8>>>>>,
}

/// One rank of a group of ranks that are threads of this process, for tests of the share
/// loaders: [`InProcess::group`] makes the handles, the caller runs one thread per handle. As
/// under MPI, every rank must reach every collective: a rank that returns early leaves the others
/// waiting.
pub struct InProcess {
    rank: usize,
    ranks: usize,
    shared: Arc<Shared>,
}

impl InProcess {
    /// The handles of `ranks` ranks (at least 1), in rank order.
    pub fn group(ranks: usize) -> Vec<InProcess> {
        let ranks = ranks.max(1);
        let shared =
            Arc::new(Shared { barrier: Barrier::new(ranks), mail: Mutex::new(vec![vec![None; ranks]; ranks]) });
        (0..ranks).map(|rank| InProcess { rank, ranks, shared: Arc::clone(&shared) }).collect()
    }

    /// Posts `parts[r]` for rank `r`, waits for every rank, takes what was posted for this rank.
    fn post_and_collect(&self, parts: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        {
            let mut mail = self.shared.mail.lock().unwrap_or_else(PoisonError::into_inner);
            for (to, bytes) in parts.into_iter().enumerate() {
                mail[self.rank][to] = Some(bytes);
            }
        }
        self.shared.barrier.wait();
        let received = {
            let mut mail = self.shared.mail.lock().unwrap_or_else(PoisonError::into_inner);
            (0..self.ranks).map(|from| mail[from][self.rank].take().unwrap_or_default()).collect()
        };
        // Nobody posts the next operation's mail before every rank has taken this one's.
        self.shared.barrier.wait();
        received
    }
}

fn wire(error: impl std::fmt::Display) -> EngineError {
    EngineError::Transport(format!("message encoding: {error}"))
}

impl Collectives for InProcess {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn all_gather<T: Serialize + DeserializeOwned>(&self, value: &T) -> Result<Vec<T>, EngineError> {
        let bytes = encode(value).map_err(wire)?;
        let received = self.post_and_collect(vec![bytes; self.ranks]);
        received.iter().map(|b| decode(b).map_err(wire)).collect()
    }

    fn exchange<T: Serialize + DeserializeOwned>(&self, outgoing: Vec<T>) -> Result<Vec<T>, EngineError> {
        if outgoing.len() != self.ranks {
            return Err(EngineError::Transport(format!("{} parts for {} ranks", outgoing.len(), self.ranks)));
        }
        let parts = outgoing.iter().map(|part| encode(part).map_err(wire)).collect::<Result<Vec<_>, _>>()?;
        let received = self.post_and_collect(parts);
        received.iter().map(|b| decode(b).map_err(wire)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_process_ranks_gather_exchange_and_sum() {
        let group = InProcess::group(3);
        let results: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = group
                .iter()
                .map(|c| {
                    scope.spawn(move || {
                        let r = c.rank();
                        let gathered = c.all_gather(&(r * 10)).unwrap();
                        let sent: Vec<Vec<usize>> = (0..3).map(|to| vec![r, to]).collect();
                        let received = c.exchange(sent).unwrap();
                        let mut sums = [r as u64, 1];
                        c.all_sum(&mut sums).unwrap();
                        let max = c.all_max(r as u64 * 7).unwrap();
                        let leader = c.gather_on_leader(vec![r; r]).unwrap();
                        let (all, offset) = c.concat_all(&vec![r; r + 1]).unwrap();
                        (gathered, received, sums, max, leader, all, offset)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (r, (gathered, received, sums, max, leader, all, offset)) in results.into_iter().enumerate() {
            assert_eq!(gathered, vec![0, 10, 20]);
            assert_eq!(received, (0..3).map(|from| vec![from, r]).collect::<Vec<_>>());
            assert_eq!(sums, [3, 3]);
            assert_eq!(max, 14);
            assert_eq!(leader, if r == 0 { vec![1, 2, 2] } else { vec![] });
            assert_eq!(all, vec![0, 1, 1, 2, 2, 2]);
            assert_eq!(offset, [0, 1, 3][r]);
        }
        let shards = [0..2, 2..5, 5..6, 6..9];
        assert_eq!((0..9).map(|x| owner_of(&shards, 2, x)).collect::<Vec<_>>(), [0, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(rank_range(&shards, 2, 1), 5..9);
    }
}
