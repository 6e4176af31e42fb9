//! Synthetic Lasso problems with a known sparse support and block-correlated features.
//!
//! Features come in blocks; in each row a block is either absent (all zeros) or present, in which
//! case its features share a latent factor: `x_ij = sqrt(c) z_ig + sqrt(1 - c) e_ij`, so two
//! features of one block have correlation `c` and features of different blocks are independent.
//! This is the structure on which Shotgun's parallel updates fight and STRADS' dependency check
//! helps. The labels are `y = X beta* + noise` with `support` nonzero coefficients of magnitude
//! between 1 and 2 and random signs.

use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::index::sample;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;
use sprs::CsMatI;
use strads_data::{Dataset, Features};

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratorSpec {
    /// Samples.
    pub rows: usize,
    /// Features.
    pub features: usize,
    /// Features per correlated block.
    pub block: usize,
    /// Correlation between two features of one block, in `[0, 1)`.
    pub correlation: f64,
    /// Probability that a block is present in a row, in `(0, 1]`.
    pub density: f64,
    /// Nonzero true coefficients.
    pub support: usize,
    /// Standard deviation of the label noise.
    pub noise: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for GeneratorSpec {
    fn default() -> Self {
        GeneratorSpec {
            rows: 1000,
            features: 2000,
            block: 10,
            correlation: 0.8,
            density: 0.1,
            support: 50,
            noise: 0.1,
            seed: 0,
        }
    }
}

impl GeneratorSpec {
    /// Checks the ranges; the message names the setting.
    pub fn check(&self) -> Result<(), String> {
        if self.rows == 0 || self.features == 0 {
            return Err("rows and features must be at least 1".into());
        }
        if self.features > u32::MAX as usize {
            return Err(format!("at most {} features", u32::MAX));
        }
        if self.block == 0 {
            return Err("block must be at least 1".into());
        }
        if !(0.0..1.0).contains(&self.correlation) {
            return Err(format!("correlation must be in [0, 1), got {}", self.correlation));
        }
        if !(self.density > 0.0 && self.density <= 1.0) {
            return Err(format!("density must be in (0, 1], got {}", self.density));
        }
        if self.support > self.features {
            return Err(format!("support ({}) exceeds the features ({})", self.support, self.features));
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(format!("noise must be >= 0, got {}", self.noise));
        }
        Ok(())
    }
}

/// A generated problem and its true coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Features (sparse rows) and labels.
    pub data: Dataset,
    /// The coefficients the labels were made from.
    pub beta: Vec<f64>,
}

/// Draws a problem; the same spec gives the same problem. The spec must pass [`GeneratorSpec::check`].
pub fn generate(spec: &GeneratorSpec) -> Generated {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let mut beta = vec![0.0; spec.features];
    for j in sample(&mut rng, spec.features, spec.support) {
        let magnitude = 1.0 + rng.random::<f64>();
        beta[j] = if rng.random_bool(0.5) { magnitude } else { -magnitude };
    }
    let shared = spec.correlation.sqrt();
    let own = (1.0 - spec.correlation).sqrt();
    let mut indptr = vec![0usize];
    let mut indices: Vec<u32> = Vec::new();
    let mut data = Vec::new();
    let mut y = Vec::with_capacity(spec.rows);
    for _ in 0..spec.rows {
        let mut fitted = 0.0;
        for start in (0..spec.features).step_by(spec.block) {
            if !rng.random_bool(spec.density) {
                continue;
            }
            let z: f64 = rng.sample(StandardNormal);
            let end = (start + spec.block).min(spec.features);
            for (j, coefficient) in beta.iter().enumerate().take(end).skip(start) {
                let e: f64 = rng.sample(StandardNormal);
                let value = shared * z + own * e;
                indices.push(j as u32);
                data.push(value);
                fitted += value * coefficient;
            }
        }
        let noise: f64 = rng.sample(StandardNormal);
        y.push(fitted + spec.noise * noise);
        indptr.push(data.len());
    }
    let x = CsMatI::new((spec.rows, spec.features), indptr, indices, data);
    Generated { data: Dataset { x: Features::Sparse(x), y, feature_names: None }, beta }
}

/// Draws a classification problem: the features of [`generate`], and labels 1 with probability
/// `sigma(x_i . beta)`, -1 otherwise (the noise setting is not used: the logistic model is the noise).
pub fn generate_classes(spec: &GeneratorSpec) -> Generated {
    let mut problem = generate(&GeneratorSpec { noise: 0.0, ..spec.clone() });
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed ^ 0x6c6f_6769_7374_6963);
    for y in &mut problem.data.y {
        let probability = 1.0 / (1.0 + (-*y).exp());
        *y = if rng.random_bool(probability) { 1.0 } else { -1.0 };
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_correlated_as_asked_and_independent_across() {
        let spec =
            GeneratorSpec { rows: 4000, features: 20, block: 10, density: 0.5, support: 5, ..GeneratorSpec::default() };
        spec.check().unwrap();
        let problem = generate(&spec);
        assert_eq!(problem, generate(&spec), "same seed, same problem");
        let x = problem.data.x.to_columns();
        let corr = |a: usize, b: usize| x.dot_columns(a, b) / (x.sq_norm(a) * x.sq_norm(b)).sqrt();
        assert!((corr(0, 1) - 0.8).abs() < 0.05, "within a block: {}", corr(0, 1));
        assert!(corr(0, 15).abs() < 0.05, "across blocks: {}", corr(0, 15));
        assert_eq!(problem.beta.iter().filter(|&&b| b != 0.0).count(), 5);
        let fitted = problem.data.x.mul(&problem.beta);
        let residual: f64 = fitted.iter().zip(&problem.data.y).map(|(f, y)| (f - y).powi(2)).sum::<f64>() / 4000.0;
        assert!((residual.sqrt() - spec.noise).abs() < 0.02, "noise level {}", residual.sqrt());
    }

    #[test]
    fn bad_specs_are_refused() {
        let bad = |f: fn(&mut GeneratorSpec)| {
            let mut spec = GeneratorSpec::default();
            f(&mut spec);
            spec.check().unwrap_err()
        };
        assert!(bad(|s| s.correlation = 1.0).contains("correlation"));
        assert!(bad(|s| s.density = 0.0).contains("density"));
        assert!(bad(|s| s.support = 1_000_000).contains("support"));
        assert!(bad(|s| s.block = 0).contains("block"));
    }
}
