//! Splitting index ranges into contiguous shards, so every engine and transport agrees on who owns what.

use std::ops::Range;

/// The `part`-th of `parts` contiguous, near-equal ranges covering `0..len`.
///
/// The first `len % parts` ranges are one longer than the rest. `parts` must be positive.
pub fn shard_range(len: usize, parts: usize, part: usize) -> Range<usize> {
    assert!(parts > 0 && part < parts, "shard {part} of {parts}");
    let base = len / parts;
    let extra = len % parts;
    let start = part * base + part.min(extra);
    let size = base + usize::from(part < extra);
    start..start + size
}

/// Splits `0..weights.len()` into `parts` contiguous ranges of near-equal total weight.
///
/// Used to balance row shards by their number of nonzeros rather than by their number of rows.
/// Every range is non-empty when `weights.len() >= parts`.
pub fn balanced_ranges(weights: &[u64], parts: usize) -> Vec<Range<usize>> {
    assert!(parts > 0, "at least one part");
    let len = weights.len();
    let total: u64 = weights.iter().sum();
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut acc = 0u64;
    for part in 0..parts {
        if part + 1 == parts {
            ranges.push(start..len);
            break;
        }
        // Leave at least one item for each remaining part when there are enough items.
        let remaining_parts = parts - part - 1;
        let max_end = len.saturating_sub(remaining_parts).max(start);
        let target = total.saturating_mul(part as u64 + 1) / parts as u64;
        let mut end = start;
        while end < max_end && (acc + weights[end] <= target || end == start) {
            acc += weights[end];
            end += 1;
        }
        ranges.push(start..end);
        start = end;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_ranges_cover_without_overlap() {
        for len in 0..20 {
            for parts in 1..6 {
                let mut next = 0;
                for part in 0..parts {
                    let r = shard_range(len, parts, part);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }

    #[test]
    fn balanced_ranges_cover_and_balance() {
        let weights = [10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 10];
        let ranges = balanced_ranges(&weights, 2);
        assert_eq!(ranges.len(), 2);
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges[1].end, weights.len());
        assert_eq!(ranges[0].end, ranges[1].start);
        let sum = |r: &Range<usize>| weights[r.clone()].iter().sum::<u64>();
        assert!(sum(&ranges[0]).abs_diff(sum(&ranges[1])) <= 10);
        for parts in 1..8 {
            let ranges = balanced_ranges(&weights, parts);
            assert!(ranges.iter().all(|r| !r.is_empty()));
            assert_eq!(ranges.last().map(|r| r.end), Some(weights.len()));
        }
    }
}
