//! The MF aggregator: assembles each half-step's rows into the vector or factor every worker
//! receives, and the final factors.

use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{Aggregator, Assignment, BoxError, Pulled, Round};

use crate::program::{Commit, Evaluation, Mf, Partial, Task};

/// The gathered model: `W` (`users x D`) and `H` (`items x D`), row-major.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Factors {
    /// User rows.
    pub w: Vec<f64>,
    /// Item rows.
    pub h: Vec<f64>,
}

/// The aggregator: concatenates the workers' rows (they own contiguous ranges, in worker order).
#[derive(Default)]
pub struct MfAggregator {
    gathered: Option<Factors>,
}

impl MfAggregator {
    /// The model gathered at the end of the run.
    pub fn into_factors(self) -> Option<Factors> {
        self.gathered
    }
}

fn concat(partials: Vec<Partial>) -> Vec<f64> {
    let mut out = Vec::new();
    for partial in partials {
        if let Partial::Values(values) = partial {
            out.extend(values);
        }
    }
    out
}

impl Aggregator<Mf> for MfAggregator {
    fn pull(
        &mut self,
        _round: Round,
        tasks: &Assignment<Task>,
        partials: Vec<Partial>,
    ) -> Pulled<Commit, Option<Evaluation>> {
        let Some(&task) = tasks.for_worker(0) else { return Pulled { commit: None, feedback: None } };
        let commit = match task {
            Task::Rows(side) => Some(Commit::Factor(side, concat(partials))),
            Task::Solve { side, finish, .. } => Some(Commit::Vector { side, values: concat(partials), finish }),
            Task::Begin(t) => {
                let (mut u, mut v) = (Vec::new(), Vec::new());
                for partial in partials {
                    if let Partial::Pair(a, b) = partial {
                        u.extend(a);
                        v.extend(b);
                    }
                }
                Some(Commit::Begin { t, u, v })
            }
            Task::Evaluate => {
                let mut total = Evaluation::default();
                for partial in partials {
                    if let Partial::Evaluation(e) = partial {
                        total.loss += e.loss;
                        total.squared_error += e.squared_error;
                        total.regularization += e.regularization;
                        total.ratings += e.ratings;
                        total.test_squared_error += e.test_squared_error;
                        total.test_ratings += e.test_ratings;
                        total.validation_squared_error += e.validation_squared_error;
                        total.validation_ratings += e.validation_ratings;
                    }
                }
                return Pulled { commit: None, feedback: Some(total) };
            }
            Task::Keep => None,
            Task::Gather => {
                let mut factors = Factors::default();
                for partial in partials {
                    if let Partial::Rows(w, h) = partial {
                        factors.w.extend(w);
                        factors.h.extend(h);
                    }
                }
                self.gathered = Some(factors);
                None
            }
        };
        Pulled { commit: commit.map(Assignment::All), feedback: None }
    }

    fn save(&self) -> Result<Vec<u8>, BoxError> {
        encode(&self.gathered)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
        self.gathered = decode(state)?;
        Ok(())
    }
}
