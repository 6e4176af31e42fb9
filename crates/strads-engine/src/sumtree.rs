//! A binary sum tree over non-negative weights: O(log n) updates and proportional sampling.
//!
//! Internal nodes are recomputed from their children on every update rather than adjusted by
//! differences, so rounding errors never accumulate over millions of updates.

/// Non-negative weights with their running sums, for sampling an index with probability
/// proportional to its weight.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SumTree {
    len: usize,
    leaves: usize,
    nodes: Vec<f64>,
}

impl SumTree {
    /// A tree of `len` zero weights.
    pub fn new(len: usize) -> Self {
        let leaves = len.next_power_of_two().max(1);
        SumTree { len, leaves, nodes: vec![0.0; 2 * leaves] }
    }

    /// Number of weights.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tree holds no weights.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The weight at `index`.
    pub fn get(&self, index: usize) -> f64 {
        self.nodes[self.leaves + index]
    }

    /// The sum of all weights.
    pub fn total(&self) -> f64 {
        self.nodes[1]
    }

    /// Sets the weight at `index`; negative or non-finite weights count as zero.
    pub fn set(&mut self, index: usize, weight: f64) {
        assert!(index < self.len, "index {index} out of {}", self.len);
        let weight = if weight.is_finite() && weight > 0.0 { weight } else { 0.0 };
        let mut node = self.leaves + index;
        self.nodes[node] = weight;
        while node > 1 {
            node /= 2;
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1];
        }
    }

    /// Sets many weights at once: the leaves one by one, then every internal node in one pass
    /// (cheaper than [`SumTree::set`] per weight when more than a few percent of them change).
    pub fn set_many(&mut self, weights: impl IntoIterator<Item = (usize, f64)>) {
        for (index, weight) in weights {
            assert!(index < self.len, "index {index} out of {}", self.len);
            self.nodes[self.leaves + index] = if weight.is_finite() && weight > 0.0 { weight } else { 0.0 };
        }
        for node in (1..self.leaves).rev() {
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1];
        }
    }

    /// The index whose cumulative weight interval contains `u`, for `0 <= u < total()`.
    ///
    /// Returns `None` when every weight is zero. Values of `u` at or past the total (rounding)
    /// land on the last positive weight.
    pub fn find(&self, mut u: f64) -> Option<usize> {
        if self.total() <= 0.0 {
            return None;
        }
        let mut node = 1;
        while node < self.leaves {
            let left = self.nodes[2 * node];
            if u < left || self.nodes[2 * node + 1] <= 0.0 {
                node *= 2;
            } else {
                u -= left;
                node = 2 * node + 1;
            }
        }
        Some(node - self.leaves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_finds_by_cumulative_weight() {
        let mut tree = SumTree::new(5);
        for (i, w) in [1.0, 0.0, 2.0, 0.0, 3.0].into_iter().enumerate() {
            tree.set(i, w);
        }
        assert_eq!(tree.total(), 6.0);
        assert_eq!(tree.find(0.5), Some(0));
        assert_eq!(tree.find(1.0), Some(2));
        assert_eq!(tree.find(2.99), Some(2));
        assert_eq!(tree.find(3.0), Some(4));
        assert_eq!(tree.find(6.0), Some(4));
        assert_eq!(tree.find(100.0), Some(4));
        tree.set(4, -1.0);
        assert_eq!(tree.total(), 3.0);
        assert_eq!(tree.find(5.0), Some(2));
    }

    #[test]
    fn setting_many_weights_at_once_matches_setting_them_one_by_one() {
        let mut one = SumTree::new(37);
        let mut many = SumTree::new(37);
        let weights: Vec<(usize, f64)> = (0..37).map(|i| (i, ((i * 7919) % 13) as f64 * 0.25)).collect();
        for &(i, w) in &weights {
            one.set(i, w);
        }
        many.set_many(weights.iter().copied());
        assert_eq!(one.nodes, many.nodes);
        one.set(5, 2.5);
        many.set_many([(5, 2.5)]);
        assert_eq!(one.nodes, many.nodes);
    }

    #[test]
    fn empty_weights_find_nothing() {
        let tree = SumTree::new(3);
        assert_eq!(tree.find(0.0), None);
        assert!(SumTree::new(0).is_empty());
    }
}
