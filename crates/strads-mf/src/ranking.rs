//! Ranking quality of a factorization on held-out interactions -- precision@k, MAP@k and NDCG@k,
//! defined as the `implicit` library defines them -- and the top-k items of a user.

use serde::Serialize;

/// The `k` items of highest score for one user, best first, ties broken by the lower item row;
/// `excluded[i]` leaves item `i` out (the items the user already has). `score(i)` is the user's score
/// of item `i` over `items` items.
pub fn top_items(items: usize, k: usize, excluded: &[bool], score: impl Fn(usize) -> f64) -> Vec<(usize, f64)> {
    let better = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut scored: Vec<(usize, f64)> =
        (0..items).filter(|&i| !excluded.get(i).copied().unwrap_or(false)).map(|i| (i, score(i))).collect();
    if k == 0 {
        return Vec::new();
    }
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, better);
        scored.truncate(k);
    }
    scored.sort_by(better);
    scored
}

/// Ranking metrics at `k`, averaged over the users with held-out interactions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RankingMetrics {
    /// The cut-off.
    pub k: usize,
    /// Users scored: those with at least one held-out item and at least one training interaction.
    pub users: usize,
    /// Held-out users without a training interaction, left out (their factors are zero).
    pub cold_users: usize,
    /// Hits in every user's top k over the sum of `min(k, held-out items)`.
    pub precision: f64,
    /// The mean over users of `sum over hits at rank n of (hits so far / n)`, over `min(k, held-out items)`.
    pub map: f64,
    /// The mean over users of `DCG@k / IDCG@k` with binary gains and `1 / log2(n + 1)` discounts.
    pub ndcg: f64,
}

/// The metrics of the scores `w_u . h_i` (the first `rank` entries of rows of `stride` entries of
/// `w` and `h`) on the `test` (user, item) pairs, each user's `train` items left out of its ranking,
/// as a recommender serves it. Pairs are by row (the indices of a fit).
pub fn ranking_metrics(
    w: &[f64],
    h: &[f64],
    stride: usize,
    rank: usize,
    train: &[(u32, u32)],
    test: &[(u32, u32)],
    k: usize,
) -> RankingMetrics {
    let (users, items) = (w.len() / stride.max(1), h.len() / stride.max(1));
    let group = |pairs: &[(u32, u32)]| {
        let mut by_user = vec![Vec::new(); users];
        for &(user, item) in pairs {
            if let Some(list) = by_user.get_mut(user as usize) {
                list.push(item as usize);
            }
        }
        by_user
    };
    let (seen, held) = (group(train), group(test));
    let discount: Vec<f64> = (0..k).map(|n| 1.0 / ((n + 2) as f64).log2()).collect();
    let mut excluded = vec![false; items];
    let mut metrics = RankingMetrics { k, users: 0, cold_users: 0, precision: 0.0, map: 0.0, ndcg: 0.0 };
    let (mut hits, mut possible) = (0usize, 0usize);
    for u in 0..users {
        let mut likes: Vec<usize> = held[u].iter().copied().filter(|&i| i < items).collect();
        likes.sort_unstable();
        likes.dedup();
        if likes.is_empty() || k == 0 {
            continue;
        }
        if seen[u].is_empty() {
            metrics.cold_users += 1;
            continue;
        }
        for &i in &seen[u] {
            excluded[i] = true;
        }
        let wu = &w[u * stride..u * stride + rank];
        let top = top_items(items, k, &excluded, |i| dot(wu, &h[i * stride..i * stride + rank]));
        for &i in &seen[u] {
            excluded[i] = false;
        }
        let relevant = k.min(likes.len());
        let ideal: f64 = discount[..relevant].iter().sum();
        let (mut found, mut precision_sum, mut gain) = (0usize, 0.0, 0.0);
        for (n, &(i, _)) in top.iter().enumerate() {
            if likes.binary_search(&i).is_ok() {
                found += 1;
                precision_sum += found as f64 / (n + 1) as f64;
                gain += discount[n];
            }
        }
        hits += found;
        possible += relevant;
        metrics.map += precision_sum / relevant as f64;
        metrics.ndcg += gain / ideal;
        metrics.users += 1;
    }
    if metrics.users > 0 {
        metrics.precision = hits as f64 / possible as f64;
        metrics.map /= metrics.users as f64;
        metrics.ndcg /= metrics.users as f64;
    }
    metrics
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
