//! The static engine's plans: schedules known before the run starts.
//!
//! [`RoundRobin`] cycles through fixed blocks of parameters (cyclic coordinate descent).
//! [`Rotation`] moves `U` model blocks around a ring of `P` workers so that in every sub-round each
//! worker holds a different block and after `U` sub-rounds every worker has held every block once
//! (LDA's vocabulary rotation). Each worker keeps a contiguous "hand" of about `U / P` blocks and
//! works on the first; after a sub-round every block moves one place down the ring, so a worker
//! passes exactly one block to its left neighbour and receives one from its right neighbour.

use std::ops::Range;

use strads_core::shard_range;

/// Parameters `0..params` in consecutive blocks of `block` (the last may be shorter), visited in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundRobin {
    params: usize,
    block: usize,
}

impl RoundRobin {
    /// A cycle over `params` parameters in blocks of `block` (at least 1).
    pub fn new(params: usize, block: usize) -> Self {
        RoundRobin { params, block: block.max(1) }
    }

    /// Number of blocks in one cycle.
    pub fn blocks(&self) -> usize {
        self.params.div_ceil(self.block)
    }

    /// The parameters of round `round`.
    pub fn block_of(&self, round: u64) -> Range<usize> {
        let blocks = self.blocks().max(1) as u64;
        let b = (round % blocks) as usize;
        let start = (b * self.block).min(self.params);
        start..(start + self.block).min(self.params)
    }
}

/// `U` blocks rotating over `P` workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rotation {
    blocks: usize,
    workers: usize,
}

impl Rotation {
    /// A rotation of `blocks` blocks over `workers` workers; needs `blocks >= workers >= 1`.
    pub fn new(blocks: usize, workers: usize) -> Option<Self> {
        (workers >= 1 && blocks >= workers).then_some(Rotation { blocks, workers })
    }

    /// Number of blocks `U`.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Number of workers `P`.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The blocks worker `worker` holds before the first sub-round, front (active) first.
    pub fn initial_hand(&self, worker: usize) -> Range<usize> {
        shard_range(self.blocks, self.workers, worker)
    }

    /// The block worker `worker` works on in sub-round `subround` (counting from 0 over the whole run).
    pub fn active_block(&self, worker: usize, subround: u64) -> usize {
        let start = self.initial_hand(worker).start as u64;
        ((start + subround) % self.blocks as u64) as usize
    }

    /// Sub-rounds in one full pass (every worker has held every block once).
    pub fn subrounds_per_pass(&self) -> u64 {
        self.blocks as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn round_robin_visits_every_parameter_once_per_cycle() {
        let plan = RoundRobin::new(10, 3);
        assert_eq!(plan.blocks(), 4);
        let mut seen = [0; 10];
        for round in 0..4 {
            for j in plan.block_of(round) {
                seen[j] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(plan.block_of(4), 0..3);
        assert_eq!(RoundRobin::new(0, 3).block_of(5), 0..0);
    }

    /// Simulates the hands moving on the ring and checks what the plan promises.
    #[test]
    fn rotation_gives_each_worker_each_block_once_and_never_shares_one() {
        for workers in 1..5 {
            for blocks in workers..9 {
                let rotation = Rotation::new(blocks, workers).unwrap();
                let mut hands: Vec<VecDeque<usize>> =
                    (0..workers).map(|p| rotation.initial_hand(p).collect()).collect();
                let mut visits = vec![vec![0; blocks]; workers];
                for t in 0..rotation.subrounds_per_pass() * 2 {
                    let mut active = Vec::new();
                    for (p, hand) in hands.iter().enumerate() {
                        let front = *hand.front().unwrap();
                        assert_eq!(front, rotation.active_block(p, t));
                        active.push(front);
                        visits[p][front] += 1;
                    }
                    let mut sorted = active.clone();
                    sorted.dedup();
                    assert_eq!(sorted.len(), workers, "two workers share a block");
                    // Every worker passes its front block to the left and receives from the right.
                    let passed: Vec<usize> = hands.iter_mut().map(|h| h.pop_front().unwrap()).collect();
                    for p in 0..workers {
                        hands[p].push_back(passed[(p + 1) % workers]);
                    }
                }
                assert!(visits.iter().flatten().all(|&v| v == 2), "{workers} workers, {blocks} blocks");
            }
        }
        assert!(Rotation::new(1, 2).is_none());
    }
}
