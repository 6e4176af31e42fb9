//! A trained model by original ids: predictions (with the defined fallback for unknown users and
//! items), top-N recommendations, and its folder (factors as `.npy` and CSV, ids, the items each
//! user rated), written atomically file by file and checked when read.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use strads_data::{DataError, read_npy, write_atomic, write_npy, write_string_atomic};

use crate::MfError;
use crate::fit::MfFit;
use crate::params::{Algorithm, Bias};
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

/// How a saved model was trained, recorded in its `model.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trained {
    /// The update rule.
    pub algorithm: Algorithm,
    /// The L2 weight.
    pub lambda: f64,
    /// Whether `lambda` was frequency-weighted.
    pub weighted_lambda: bool,
    /// The power of a row's number of ratings in its weight (1 in models saved before it was kept).
    #[serde(default = "one")]
    pub lambda_exponent: f64,
}

fn one() -> f64 {
    1.0
}

/// What `model.json` holds: enough to predict without the training data.
#[derive(Debug, Serialize, Deserialize)]
struct ModelFile {
    rank: usize,
    bias: Bias,
    mu: f64,
    train_mean: f64,
    users: usize,
    items: usize,
    #[serde(flatten)]
    trained: Trained,
}

impl Model {
    /// Writes the model folder `dir` (created if needed): `model.json`, `users.txt`, `items.txt`,
    /// `user_factors.npy`, `item_factors.npy` (with offsets also `user_bias.npy`, `item_bias.npy`),
    /// the same factors as CSV by id, and `rated.txt`, the item rows each user rated (`rated`, by
    /// user row; see [`rated_rows`]).
    pub fn save(&self, dir: &Path, trained: Trained, rated: &[Vec<u32>]) -> Result<(), MfError> {
        std::fs::create_dir_all(dir).map_err(|e| MfError::File(DataError::io(dir, e)))?;
        let (k, users, items) = (self.rank, self.ids.users.len(), self.ids.items.len());
        write_npy(&dir.join("user_factors.npy"), users, k, &self.w)?;
        write_npy(&dir.join("item_factors.npy"), items, k, &self.h)?;
        let biases = self.bias == Bias::Full;
        if biases {
            write_npy(&dir.join("user_bias.npy"), users, 1, &self.user_bias)?;
            write_npy(&dir.join("item_bias.npy"), items, 1, &self.item_bias)?;
        }
        let user_bias = biases.then_some(&self.user_bias[..]);
        write_factor_csv(&dir.join("user_factors.csv"), "user", &self.ids.users, &self.w, user_bias, k)?;
        let item_bias = biases.then_some(&self.item_bias[..]);
        write_factor_csv(&dir.join("item_factors.csv"), "item", &self.ids.items, &self.h, item_bias, k)?;
        write_string_atomic(&dir.join("users.txt"), &(self.ids.users.join("\n") + "\n"))?;
        write_string_atomic(&dir.join("items.txt"), &(self.ids.items.join("\n") + "\n"))?;
        write_atomic(&dir.join("rated.txt"), |w| {
            for row in rated {
                let line: Vec<String> = row.iter().map(u32::to_string).collect();
                writeln!(w, "{}", line.join(" "))?;
            }
            Ok(())
        })?;
        let file =
            ModelFile { rank: k, bias: self.bias, mu: self.mu, train_mean: self.train_mean, users, items, trained };
        let path = dir.join("model.json");
        let json = serde_json::to_string_pretty(&file)
            .map_err(|e| MfError::File(DataError::invalid(&path, format!("cannot encode: {e}"))))?;
        write_string_atomic(&path, &(json + "\n"))?;
        Ok(())
    }

    /// Reads a model folder written by [`Model::save`], checking every file against `model.json`.
    pub fn load(dir: &Path) -> Result<Model, MfError> {
        let path = dir.join("model.json");
        let bad = |path: &Path, problem: String| MfError::File(DataError::invalid(path, problem));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| bad(&path, format!("{e} (is it a folder written by strads mf?)")))?;
        let info: ModelFile = serde_json::from_str(&text).map_err(|e| bad(&path, e.to_string()))?;
        let users = read_lines(&dir.join("users.txt"), info.users)?;
        let items = read_lines(&dir.join("items.txt"), info.items)?;
        let ids = Ids::from_lists(users, items).map_err(|e| bad(dir, e))?;
        let npy = |name: &str, rows: usize, cols: usize| read_npy::<f64>(&dir.join(name), rows, cols, "model.json");
        let w = npy("user_factors.npy", info.users, info.rank)?;
        let h = npy("item_factors.npy", info.items, info.rank)?;
        let (user_bias, item_bias) = if info.bias == Bias::Full {
            (npy("user_bias.npy", info.users, 1)?, npy("item_bias.npy", info.items, 1)?)
        } else {
            (vec![0.0; info.users], vec![0.0; info.items])
        };
        Ok(Model {
            rank: info.rank,
            bias: info.bias,
            mu: info.mu,
            train_mean: info.train_mean,
            ids,
            w,
            h,
            user_bias,
            item_bias,
        })
    }

    /// The item rows user row `row` rated in training, from the folder's `rated.txt`.
    pub fn load_rated(dir: &Path, row: u32, user: &str) -> Result<Vec<u32>, MfError> {
        let path = dir.join("rated.txt");
        let bad = |problem: String| MfError::File(DataError::invalid(&path, problem));
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let line =
            text.lines().nth(row as usize).ok_or_else(|| bad(format!("no line {} for user '{user}'", row + 1)))?;
        line.split_whitespace()
            .map(|t| t.parse::<u32>().map_err(|_| bad(format!("line {}: bad item row '{t}'", row + 1))))
            .collect()
    }
}

/// The item rows each user rated in training, by user row, sorted (for `rated.txt`): `pairs` are
/// the training ratings' (user, item) indices of the fit, whose users and items without a training
/// rating have no row.
pub fn rated_rows(fit: &MfFit, pairs: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let rows = |counts: &[u32]| {
        let mut next = 0;
        counts
            .iter()
            .map(|&n| {
                let row = next;
                next += u32::from(n > 0);
                row
            })
            .collect::<Vec<u32>>()
    };
    let (user_row, item_row) = (rows(&fit.user_counts), rows(&fit.item_counts));
    let users = fit.user_counts.iter().filter(|&&n| n > 0).count();
    let mut rated = vec![Vec::new(); users];
    for &(user, item) in pairs {
        rated[user_row[user as usize] as usize].push(item_row[item as usize]);
    }
    for row in &mut rated {
        row.sort_unstable();
    }
    rated
}

/// A factor matrix as CSV: `id,f0,...,f{K-1}[,bias]`.
pub fn write_factor_csv(
    path: &Path,
    head: &str,
    ids: &[String],
    rows: &[f64],
    bias: Option<&[f64]>,
    k: usize,
) -> Result<(), DataError> {
    write_atomic(path, |w| {
        let mut out = csv::Writer::from_writer(w);
        let mut header = vec![head.to_string()];
        header.extend((0..k).map(|t| format!("f{t}")));
        if bias.is_some() {
            header.push("bias".into());
        }
        out.write_record(&header).map_err(std::io::Error::other)?;
        for (r, id) in ids.iter().enumerate() {
            let mut record = vec![id.clone()];
            record.extend(rows[r * k..(r + 1) * k].iter().map(|x| x.to_string()));
            if let Some(b) = bias {
                record.push(b[r].to_string());
            }
            out.write_record(&record).map_err(std::io::Error::other)?;
        }
        out.flush()
    })
}

/// The lines of `path`, which must be `expected` of them.
fn read_lines(path: &Path, expected: usize) -> Result<Vec<String>, MfError> {
    let text = std::fs::read_to_string(path).map_err(|e| MfError::File(DataError::io(path, e)))?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.len() != expected {
        let problem = format!("{} lines, model.json says {expected}", lines.len());
        return Err(MfError::File(DataError::invalid(path, problem)));
    }
    Ok(lines)
}
