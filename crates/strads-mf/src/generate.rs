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
