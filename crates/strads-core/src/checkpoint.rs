//! Saving a run at a round boundary and continuing it exactly: the roles' states and the driver's.
//!
//! Every role (scheduler, aggregator, worker) may save its state as bytes and restore it into a
//! freshly built role of the same run. The driver adds its own position (the next round, the rounds
//! in flight with their partials) into a [`Snapshot`], hands it to the run's [`Checkpoints`], and on
//! resume restores every role from one before the first round. Where a snapshot is stored, and when
//! one is due, is the caller's business; this crate only names the pieces and encodes them.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::BoxError;

/// Everything needed to continue a run exactly from a round boundary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The index the next scheduled round will have.
    pub next_round: u64,
    /// Rounds `0..synced` were committed and synced on every worker.
    pub synced: u64,
    /// Rounds pulled so far.
    pub rounds: u64,
    /// Times the scheduler waited so far.
    pub waits: u64,
    /// The scheduler's [`Scheduler::iteration`](crate::Scheduler::iteration), if it counts iterations.
    pub iteration: Option<u64>,
    /// The scheduler's state.
    pub scheduler: Vec<u8>,
    /// The aggregator's state.
    pub aggregator: Vec<u8>,
    /// Every worker's state, in worker order.
    pub workers: Vec<Vec<u8>>,
    /// The rounds pushed but not yet pulled, with their plans and partials (encoded by the driver).
    pub in_flight: Vec<u8>,
}

/// Where a run stands after a pulled round, for deciding whether a checkpoint is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Rounds pulled so far.
    pub rounds: u64,
    /// Whole iterations done, for programs whose scheduler counts them.
    pub iteration: Option<u64>,
}

/// What to do at a round boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Go on.
    No,
    /// Save a snapshot, then go on.
    Save,
    /// Save a snapshot, then stop the run with [`EngineError::Interrupted`](crate::EngineError::Interrupted).
    SaveAndStop,
}

/// A run's checkpoint policy and store.
pub trait Checkpoints {
    /// The snapshot to continue from, if the run resumes; asked once, before the first round.
    fn resume(&mut self) -> Option<Snapshot>;

    /// Asked after every pulled round: whether to save now (and whether to stop after saving).
    fn due(&mut self, position: Position) -> Due;

    /// Stores a snapshot. An error ends the run.
    fn save(&mut self, snapshot: &Snapshot) -> Result<(), BoxError>;
}

/// Never resumes, never saves.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCheckpoints;

impl Checkpoints for NoCheckpoints {
    fn resume(&mut self) -> Option<Snapshot> {
        None
    }

    fn due(&mut self, _position: Position) -> Due {
        Due::No
    }

    fn save(&mut self, _snapshot: &Snapshot) -> Result<(), BoxError> {
        Ok(())
    }
}

/// Keeps the last snapshot in memory: saves every `every` rounds, stops after `stop_after` rounds,
/// resumes from `resume`. Tests use it to stop a run anywhere and continue it.
#[derive(Clone, Debug, Default)]
pub struct InMemory {
    /// The snapshot the next run resumes from.
    pub resume: Option<Snapshot>,
    /// Save after every this many rounds (0: never, except when stopping).
    pub every: u64,
    /// Save and stop after this many rounds.
    pub stop_after: Option<u64>,
    /// The last snapshot saved.
    pub last: Option<Snapshot>,
    /// How many snapshots were saved.
    pub saves: u64,
}

impl InMemory {
    /// A store that stops the run after `rounds` rounds.
    pub fn stopping_after(rounds: u64) -> Self {
        InMemory { stop_after: Some(rounds), ..InMemory::default() }
    }

    /// A store that resumes from `snapshot` and then runs to the end.
    pub fn resuming(snapshot: Snapshot) -> Self {
        InMemory { resume: Some(snapshot), ..InMemory::default() }
    }
}

impl Checkpoints for InMemory {
    fn resume(&mut self) -> Option<Snapshot> {
        self.resume.take()
    }

    fn due(&mut self, position: Position) -> Due {
        if Some(position.rounds) == self.stop_after {
            Due::SaveAndStop
        } else if self.every > 0 && position.rounds.is_multiple_of(self.every) {
            Due::Save
        } else {
            Due::No
        }
    }

    fn save(&mut self, snapshot: &Snapshot) -> Result<(), BoxError> {
        self.last = Some(snapshot.clone());
        self.saves += 1;
        Ok(())
    }
}

/// Encodes a role's state (compact binary, the format every snapshot uses).
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, BoxError> {
    Ok(postcard::to_stdvec(value)?)
}

/// Decodes a role's state written by [`encode`]; trailing bytes are an error.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, BoxError> {
    let (value, rest) = postcard::take_from_bytes(bytes)?;
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the saved state", rest.len()).into());
    }
    Ok(value)
}

/// The error of a role that cannot be checkpointed.
pub fn unsupported(role: &str) -> BoxError {
    format!("this program's {role} cannot save or restore its state (no checkpoints)").into()
}

/// Checks that a restored vector has the length the freshly built role expects.
pub fn expect_len(what: &str, found: usize, expected: usize) -> Result<(), BoxError> {
    if found == expected {
        Ok(())
    } else {
        Err(format!("the checkpoint's {what} has {found} entries but this run has {expected}").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type State = (Vec<f64>, u64, Option<Vec<(u32, f64)>>);

    #[test]
    fn states_round_trip_and_trailing_bytes_are_refused() {
        let state = (vec![1.5f64, -0.0, f64::MIN_POSITIVE], 7u64, Some(vec![(3u32, 2.0f64)]));
        let mut bytes = encode(&state).unwrap();
        let back: State = decode(&bytes).unwrap();
        assert_eq!(
            back.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            state.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!((back.1, back.2), (state.1, state.2));
        bytes.push(0);
        assert!(decode::<State>(&bytes).is_err());
        assert!(decode::<(Vec<f64>, u64)>(&bytes[..3]).is_err());
    }
}
