//! Synthetic ratings from a known low-rank model plus Gaussian noise, observed sparsely (test oracles, `strads gen mf`).

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};

use crate::ratings::Rating;

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeneratorSpec {
    /// Users (rows).
    pub users: usize,
    /// Items (columns).
    pub items: usize,
    /// Rank of the true model.
    pub rank: usize,
    /// Probability that a (user, item) pair is observed.
    pub density: f64,
    /// Standard deviation of the noise added to `w_i . h_j`.
    pub noise: f64,
    /// Seed.
    pub seed: u64,
}

/// A generated problem: the true factors and the observed ratings.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// True `W`, `users x rank`.
    pub w: Vec<f64>,
    /// True `H`, `items x rank`.
    pub h: Vec<f64>,
    /// Observed ratings `w_i . h_j + noise`, every user and item at least once.
    pub ratings: Vec<Rating>,
}

/// Draws a problem: factor entries are `N(0, 1/sqrt(rank))`, so `w_i . h_j` has variance 1; every
/// user and every item is observed at least once.
pub fn generate(spec: &GeneratorSpec) -> Generated {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let scale = 1.0 / (spec.rank as f64).sqrt().sqrt();
    let factor = Normal::new(0.0, scale).unwrap_or_else(|_| unreachable!("a positive scale"));
    let noise = Normal::new(0.0, spec.noise.max(0.0)).unwrap_or_else(|_| unreachable!("a non-negative scale"));
    let w: Vec<f64> = (0..spec.users * spec.rank).map(|_| factor.sample(&mut rng)).collect();
    let h: Vec<f64> = (0..spec.items * spec.rank).map(|_| factor.sample(&mut rng)).collect();
    let k = spec.rank;
    let mut item_seen = vec![false; spec.items];
    let mut ratings = Vec::new();
    for u in 0..spec.users {
        let forced = rng.random_range(0..spec.items.max(1));
        for i in 0..spec.items {
            if i == forced || !item_seen[i] && u + 1 == spec.users || rng.random::<f64>() < spec.density {
                item_seen[i] = true;
                let truth: f64 = (0..k).map(|t| w[u * k + t] * h[i * k + t]).sum();
                ratings.push(Rating { user: u as u32, item: i as u32, value: truth + noise.sample(&mut rng) });
            }
        }
    }
    Generated { w, h, ratings }
}

/// Netflix Prize's shape: users, items and ratings of its training set.
pub const NETFLIX: (usize, usize, usize) = (480_189, 17_770, 100_480_507);

/// What to generate for a problem shaped like a real rating set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapedSpec {
    /// Users.
    pub users: usize,
    /// Items.
    pub items: usize,
    /// Ratings, about (each user has at least one, and at most half the items).
    pub ratings: usize,
    /// Rank of the true model.
    pub rank: usize,
    /// Standard deviation of the noise before rounding.
    pub noise: f64,
    /// Seed.
    pub seed: u64,
}

/// Ratings shaped like a real rating set such as Netflix's: user activity log-normal (a few users
/// rate thousands of items, most a few dozen), item popularity log-normal and steeper (a few items
/// take most ratings), each user's items drawn by popularity without repetition; a rating is
/// `3.6 + b_u + c_i + w_u . h_i + noise` rounded to the 1..5 stars, with `b_u ~ N(0, 0.4^2)`,
/// `c_i ~ N(0, 0.5^2)` and `w . h` of variance 0.25. `progress` is called with the users done so far.
/// Ratings come by user, items ascending within a user.
pub fn generate_shaped(spec: &ShapedSpec, progress: &mut dyn FnMut(usize)) -> Vec<Rating> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let (users, items, k) = (spec.users.max(1), spec.items.max(1), spec.rank.max(1));
    let unit = |sd: f64| Normal::new(0.0, sd).unwrap_or_else(|_| unreachable!("a positive scale"));
    let (activity, popularity) = (unit(1.0), unit(1.5));
    let user_weight: Vec<f64> = (0..users).map(|_| activity.sample(&mut rng).exp()).collect();
    let item_weight: Vec<f64> = (0..items).map(|_| popularity.sample(&mut rng).exp()).collect();
    let mut cumulative = Vec::with_capacity(items);
    let mut total = 0.0;
    for &w in &item_weight {
        total += w;
        cumulative.push(total);
    }
    let scale = 0.5 / (k as f64).sqrt().sqrt();
    let factor = unit(scale);
    let w: Vec<f64> = (0..users * k).map(|_| factor.sample(&mut rng)).collect();
    let h: Vec<f64> = (0..items * k).map(|_| factor.sample(&mut rng)).collect();
    let (user_bias, item_bias) = (unit(0.4), unit(0.5));
    let b: Vec<f64> = (0..users).map(|_| user_bias.sample(&mut rng)).collect();
    let c: Vec<f64> = (0..items).map(|_| item_bias.sample(&mut rng)).collect();
    let noise = Normal::new(0.0, spec.noise.max(0.0)).unwrap_or_else(|_| unreachable!("a non-negative scale"));
    let per_weight = spec.ratings as f64 / user_weight.iter().sum::<f64>();
    let cap = (items / 2).max(1);
    let mut taken = vec![u32::MAX; items];
    let mut ratings = Vec::with_capacity(spec.ratings + users);
    let mut chosen = Vec::new();
    for u in 0..users {
        let n = ((user_weight[u] * per_weight).round() as usize).clamp(1, cap);
        chosen.clear();
        while chosen.len() < n {
            let x = rng.random::<f64>() * total;
            let i = cumulative.partition_point(|&s| s <= x).min(items - 1);
            if taken[i] != u as u32 {
                taken[i] = u as u32;
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
        for &i in &chosen {
            let dot: f64 = (0..k).map(|t| w[u * k + t] * h[i * k + t]).sum();
            let value = (3.6 + b[u] + c[i] + dot + noise.sample(&mut rng)).round().clamp(1.0, 5.0);
            ratings.push(Rating { user: u as u32, item: i as u32, value });
        }
        if u % 4096 == 4095 {
            progress(u + 1);
        }
    }
    progress(users);
    ratings
}
