//! A trained model by original ids: predictions (with the defined fallback for unknown users and
//! items) and top-N recommendations.

use crate::fit::MfFit;
use crate::params::Bias;
use crate::ratings::Ids;

/// Factors and biases of the users and items that had training ratings, by original id.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// `K`.
    pub rank: usize,
    /// Offsets of the prediction.
    pub bias: Bias,
    /// `mu` (0 without offsets).
    pub mu: f64,
    /// The mean training rating: the prediction for an unknown user or item without offsets.
    pub train_mean: f64,
    /// User and item ids, in row order.
    pub ids: Ids,
    /// `W`, `users x K`.
    pub w: Vec<f64>,
    /// `H`, `items x K`.
    pub h: Vec<f64>,
    /// User biases (zeros without `Bias::Full`).
    pub user_bias: Vec<f64>,
    /// Item biases.
    pub item_bias: Vec<f64>,
}

/// A prediction and whether it fell back because the user or the item is unknown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// The predicted rating.
    pub value: f64,
    /// The user or the item had no training rating.
    pub cold: bool,
}

impl Model {
    /// The model of a fit, keeping the users and items with at least one training rating.
    pub fn from_fit(fit: &MfFit, ids: &Ids, bias: Bias) -> Model {
        let k = fit.rank;
        let mut users = Vec::new();
        let mut items = Vec::new();
        let (mut w, mut h, mut user_bias, mut item_bias) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (u, &n) in fit.user_counts.iter().enumerate() {
            if n > 0 {
                users.push(ids.users[u].clone());
                w.extend_from_slice(fit.user_factors(u));
                user_bias.push(fit.user_bias(u));
            }
        }
        for (i, &n) in fit.item_counts.iter().enumerate() {
            if n > 0 {
                items.push(ids.items[i].clone());
                h.extend_from_slice(fit.item_factors(i));
                item_bias.push(fit.item_bias(i));
            }
        }
        let ids = Ids::from_lists(users, items).unwrap_or_else(|_| unreachable!("ids of a fit are distinct"));
        Model { rank: k, bias, mu: fit.mu, train_mean: fit.train_mean, ids, w, h, user_bias, item_bias }
    }

    /// The predicted rating of `item` by `user` (original ids).
    ///
    /// Both known: `mu + b_u + c_i + w_u . h_i`. Otherwise the bias model of what is known
    /// (`mu` plus the known bias) when the model has offsets, else the mean training rating.
    pub fn predict(&self, user: &str, item: &str) -> Prediction {
        let (u, i) = (self.ids.find_user(user), self.ids.find_item(item));
        match (u, i) {
            (Some(u), Some(i)) => Prediction { value: self.score(u as usize, i as usize), cold: false },
            _ if self.bias == Bias::None => Prediction { value: self.train_mean, cold: true },
            _ => {
                let bu = u.map_or(0.0, |u| self.user_bias[u as usize]);
                let bi = i.map_or(0.0, |i| self.item_bias[i as usize]);
                Prediction { value: self.mu + bu + bi, cold: true }
            }
        }
    }

    fn score(&self, u: usize, i: usize) -> f64 {
        let k = self.rank;
        let dot: f64 = self.w[u * k..(u + 1) * k].iter().zip(&self.h[i * k..(i + 1) * k]).map(|(a, b)| a * b).sum();
        self.mu + self.user_bias[u] + self.item_bias[i] + dot
    }

    /// The `top` items of highest predicted rating for `user`, best first (ties by item order),
    /// leaving out the item rows in `exclude`; `None` for a user the model does not know.
    pub fn recommend(&self, user: &str, top: usize, exclude: &[u32]) -> Option<Vec<(usize, f64)>> {
        let u = self.ids.find_user(user)? as usize;
        let items = self.ids.items.len();
        let mut excluded = vec![false; items];
        for &i in exclude {
            if let Some(x) = excluded.get_mut(i as usize) {
                *x = true;
            }
        }
        let scored = crate::ranking::top_items(items, top, &excluded, |i| self.score(u, i));
        Some(scored)
    }
}
