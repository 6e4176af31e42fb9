//! Checkpoint files: a run saves snapshots in a folder and continues from one exactly.
//!
//! A checkpoint is one file, [`FILE`] in the folder, replaced atomically (temporary file, fsync,
//! rename), so a crash while writing leaves the previous one intact. It starts with a header: the
//! magic `STRADSCK`, a format version, the CRC-32 and the length of the payload. The payload holds
//! the application, the settings that decide the result (one `key: value` per line, compared on
//! resume, from the serialized parameters: [`fingerprint`]) and the engine's snapshot.
//!
//! [`FileCheckpoints`] is the store and the policy (every N rounds or T seconds), and, when asked
//! to, listens for SIGINT and SIGTERM: the first saves a checkpoint at the next round boundary and
//! stops the run, a second ends the process at once. In an MPI job only the leader saves.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use strads_core::{BoxError, Checkpoints, Due, Position, Snapshot};

/// The checkpoint file in a checkpoint folder.
pub const FILE: &str = "checkpoint.strads";
const MAGIC: &[u8; 8] = b"STRADSCK";
/// Format 2: settings from serialized parameters (format 1 had their `Debug` text).
const VERSION: u32 = 2;
const HEADER: usize = 8 + 4 + 4 + 8;

/// Why checkpoints cannot be read, written or set up.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file or folder that cannot be read or created.
    #[error("{}: cannot {what}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The signal handlers cannot be installed.
    #[error("cannot install the signal handlers: {0}")]
    Signals(std::io::Error),
    /// A file without the checkpoint header.
    #[error("{}: not a strads checkpoint (no STRADSCK header)", path.display())]
    NotACheckpoint {
        /// The file.
        path: PathBuf,
    },
    /// A checkpoint of another format version.
    #[error("{}: checkpoint format {found}, this strads reads format {VERSION}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The version the file has.
        found: u32,
    },
    /// A payload shorter or longer than its header says.
    #[error(
        "{}: truncated or padded: the header announces {announced} bytes of state, the file holds {holds}",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The length in the header.
        announced: u64,
        /// The length of the payload.
        holds: u64,
    },
    /// A payload whose checksum does not match.
    #[error("{}: corrupted: the checksum does not match the contents", path.display())]
    Corrupted {
        /// The file.
        path: PathBuf,
    },
    /// A payload that does not decode despite its checksum.
    #[error("{}: unreadable state ({reason}) despite a valid checksum", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The decoder's message.
        reason: String,
    },
    /// A checkpoint of another application.
    #[error("{}: this checkpoint is of a `strads {saved}` run, not `strads {app}`", path.display())]
    OtherApp {
        /// The file.
        path: PathBuf,
        /// The application that saved it.
        saved: String,
        /// The application of this run.
        app: String,
    },
    /// A run whose result-deciding settings differ from the saved run's.
    #[error("{}: the run would not continue the saved one: {difference}", path.display())]
    Differs {
        /// The file.
        path: PathBuf,
        /// The first setting that differs.
        difference: String,
    },
    /// Parameters that do not serialize to a table of settings.
    #[error("the settings cannot be recorded in a checkpoint: {0}")]
    Settings(String),
}

/// How often checkpoints are due.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Every {
    /// Every N rounds, or whole iterations for programs whose scheduler counts them.
    Count(u64),
    /// Every T seconds.
    Seconds(f64),
}

impl Default for Every {
    /// Every 300 seconds.
    fn default() -> Self {
        Every::Seconds(300.0)
    }
}

/// Where and how often a run saves checkpoints, and where it resumes from.
#[derive(Clone, Debug, Default)]
pub struct CheckpointOptions {
    /// The folder checkpoints are saved in (created if needed); `None` with `resume` saves in the
    /// resume folder, and with neither the run never saves.
    pub dir: Option<PathBuf>,
    /// How often a checkpoint is due.
    pub every: Every,
    /// The folder of the checkpoint to continue from.
    pub resume: Option<PathBuf>,
    /// Whether SIGINT and SIGTERM save a checkpoint and stop the run (for a command-line process).
    pub signals: bool,
}

/// What a checkpoint file holds after its header.
#[derive(Serialize, Deserialize)]
struct Payload<'a> {
    app: Cow<'a, str>,
    settings: Cow<'a, str>,
    snapshot: Cow<'a, Snapshot>,
}

/// Checkpoints of one run in a folder, with the signals that ask for a last one.
pub struct FileCheckpoints {
    dir: Option<PathBuf>,
    app: String,
    settings: String,
    every: Every,
    last_save: Instant,
    last_count: u64,
    resume: Option<Snapshot>,
    signal: Arc<AtomicUsize>,
}

/// Signal numbers (Linux and the BSDs agree on these).
const SIGINT: usize = 2;
const SIGTERM: usize = 15;

impl FileCheckpoints {
    /// Checkpoints for a run of `app` whose result-deciding settings `settings()` gives (one
    /// `key: value` per line, as [`fingerprint`] makes them; computed only when the run saves or
    /// resumes). With `resume`, reads and checks the saved run first. On a rank other than the
    /// leader of an MPI job, never resumes nor saves (the leader does for every rank) and only
    /// outlives the signals.
    pub fn open(
        options: &CheckpointOptions,
        app: &str,
        settings: impl FnOnce() -> Result<String, CheckpointError>,
    ) -> Result<Self, CheckpointError> {
        if options.dir.is_none() && options.resume.is_none() {
            return Ok(Self::none());
        }
        if !crate::job::is_leader() {
            if options.signals {
                // mpirun forwards a signal to every rank; they wait for the leader to stop them.
                listen(&Arc::new(AtomicUsize::new(0))).map_err(CheckpointError::Signals)?;
            }
            return Ok(Self::none());
        }
        let settings = settings()?;
        let resume = match &options.resume {
            Some(dir) => Some(read(dir, app, &settings)?),
            None => None,
        };
        let dir = options.dir.clone().or_else(|| options.resume.clone());
        let signal = Arc::new(AtomicUsize::new(0));
        if let Some(dir) = &dir {
            if options.signals {
                listen(&signal).map_err(CheckpointError::Signals)?;
            }
            std::fs::create_dir_all(dir).map_err(|source| CheckpointError::Io {
                path: dir.clone(),
                what: "create the checkpoint folder",
                source,
            })?;
            remove_stale_temporaries(dir);
        }
        let last_count = resume.as_ref().map_or(0, |s| s.iteration.unwrap_or(s.rounds));
        Ok(FileCheckpoints {
            dir,
            app: app.to_string(),
            settings,
            every: options.every,
            last_save: Instant::now(),
            last_count,
            resume,
            signal,
        })
    }

    /// Checkpoints that never resume nor save.
    pub fn none() -> Self {
        FileCheckpoints {
            dir: None,
            app: String::new(),
            settings: String::new(),
            every: Every::default(),
            last_save: Instant::now(),
            last_count: 0,
            resume: None,
            signal: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// Removes the temporary files (`.strads-*.tmp`) a run killed while saving left in `dir`: the
/// checkpoint beside them is the last one written whole.
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".strads-") && name.ends_with(".tmp") && entry.path().is_file() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Sets `signal` to the number of the first SIGINT or SIGTERM; a second one ends the process at once.
fn listen(signal: &Arc<AtomicUsize>) -> std::io::Result<()> {
    let twice = Arc::new(AtomicBool::new(false));
    for number in [SIGINT, SIGTERM] {
        let code = 128 + number as i32;
        signal_hook::flag::register_conditional_shutdown(number as i32, code, Arc::clone(&twice))?;
        signal_hook::flag::register(number as i32, Arc::clone(&twice))?;
        signal_hook::flag::register_usize(number as i32, Arc::clone(signal), number)?;
    }
    Ok(())
}

impl Checkpoints for FileCheckpoints {
    fn resume(&mut self) -> Option<Snapshot> {
        self.resume.take()
    }

    fn due(&mut self, position: Position) -> Due {
        if self.dir.is_none() {
            return Due::No;
        }
        let signal = self.signal.load(Ordering::Relaxed);
        if signal != 0 {
            let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
            let dir = self.dir.as_deref().map(Path::display).map(|d| d.to_string()).unwrap_or_default();
            eprintln!(
                "strads: {name}: saving a checkpoint after round {} in {dir}; continue with the same command and --resume {dir}",
                position.rounds
            );
            return Due::SaveAndStop;
        }
        match self.every {
            Every::Count(n) => {
                let count = position.iteration.unwrap_or(position.rounds);
                if count != self.last_count && count.is_multiple_of(n) {
                    self.last_count = count;
                    Due::Save
                } else {
                    Due::No
                }
            }
            Every::Seconds(t) if self.last_save.elapsed().as_secs_f64() >= t => Due::Save,
            Every::Seconds(_) => Due::No,
        }
    }

    fn save(&mut self, snapshot: &Snapshot) -> Result<(), BoxError> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let payload = Payload {
            app: Cow::Borrowed(&self.app),
            settings: Cow::Borrowed(&self.settings),
            snapshot: Cow::Borrowed(snapshot),
        };
        let payload = postcard::to_stdvec(&payload)?;
        let checksum = crc32fast::hash(&payload);
        strads_data::write_atomic(&dir.join(FILE), |out| {
            out.write_all(MAGIC)?;
            out.write_all(&VERSION.to_le_bytes())?;
            out.write_all(&checksum.to_le_bytes())?;
            out.write_all(&(payload.len() as u64).to_le_bytes())?;
            out.write_all(&payload)
        })?;
        self.last_save = Instant::now();
        Ok(())
    }
}

/// Reads the checkpoint in `dir`, checking its header, checksum, application and settings.
fn read(dir: &Path, app: &str, settings: &str) -> Result<Snapshot, CheckpointError> {
    let path = dir.join(FILE);
    let bytes = std::fs::read(&path).map_err(|source| CheckpointError::Io {
        path: path.clone(),
        what: "read the checkpoint",
        source,
    })?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(CheckpointError::NotACheckpoint { path });
    }
    let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != VERSION {
        return Err(CheckpointError::Version { path, found: version });
    }
    let checksum = word(12);
    let mut length = [0u8; 8];
    length.copy_from_slice(&bytes[16..24]);
    let length = u64::from_le_bytes(length);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != length {
        return Err(CheckpointError::Truncated { path, announced: length, holds: payload.len() as u64 });
    }
    if crc32fast::hash(payload) != checksum {
        return Err(CheckpointError::Corrupted { path });
    }
    let payload: Payload<'static> = postcard::from_bytes(payload)
        .map_err(|e| CheckpointError::Unreadable { path: path.clone(), reason: e.to_string() })?;
    if payload.app != app {
        return Err(CheckpointError::OtherApp { path, saved: payload.app.into_owned(), app: app.into() });
    }
    if let Some(difference) = difference(&payload.settings, settings) {
        return Err(CheckpointError::Differs { path, difference });
    }
    Ok(payload.snapshot.into_owned())
}

/// The first setting that differs between the saved run and this one.
fn difference(saved: &str, now: &str) -> Option<String> {
    let (saved, now): (Vec<&str>, Vec<&str>) = (saved.lines().collect(), now.lines().collect());
    for i in 0..saved.len().max(now.len()) {
        match (saved.get(i), now.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => return Some(format!("it was saved with `{a}`, this run has `{b}`")),
            (Some(a), None) => return Some(format!("it was saved with `{a}`, this run has no such setting")),
            (None, Some(b)) => return Some(format!("this run has `{b}`, the saved one had no such setting")),
            (None, None) => {}
        }
    }
    None
}

/// A short identity of an input file's contents (CRC-32 and length), so a resume on changed data is refused.
pub fn file_identity(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => format!("{} bytes, crc32 {:08x}", bytes.len(), crc32fast::hash(&bytes)),
        Err(_) => "not a single file".into(),
    }
}

/// Result-deciding settings as `key: value` lines: each field of the serialized `params` (in the
/// order of their names, the value as compact JSON, which keeps every float exactly), without the
/// given keys (limits that only decide when a run gives up), then `extra` lines.
pub fn fingerprint(
    params: &impl Serialize,
    skip: &[&str],
    extra: &[(&str, String)],
) -> Result<String, CheckpointError> {
    let value = serde_json::to_value(params).map_err(|e| CheckpointError::Settings(e.to_string()))?;
    let serde_json::Value::Object(fields) = value else {
        return Err(CheckpointError::Settings(format!("the parameters are not a table of settings but `{value}`")));
    };
    let mut out = String::new();
    for (key, value) in &fields {
        if !skip.contains(&key.as_str()) {
            out.push_str(&format!("{key}: {value}\n"));
        }
    }
    for (key, value) in extra {
        out.push_str(&format!("{key}: {value}\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_setting_is_named() {
        assert_eq!(difference("a: 1\nb: 2\n", "a: 1\nb: 2\n"), None);
        let d = difference("a: 1\nb: 2\n", "a: 1\nb: 3\n").unwrap();
        assert!(d.contains("`b: 2`") && d.contains("`b: 3`"), "{d}");
        assert!(difference("a: 1\n", "a: 1\nc: 0\n").unwrap().contains("`c: 0`"));
    }

    #[test]
    fn fingerprints_hold_every_field_exactly_but_the_skipped_ones() {
        #[derive(Serialize)]
        enum Lambda {
            Ratio(f64),
        }
        #[derive(Serialize)]
        struct P {
            lambda: Lambda,
            max_seconds: Option<f64>,
            seed: u64,
        }
        let p = P { lambda: Lambda::Ratio(0.1 + 0.2), max_seconds: Some(3.0), seed: 7 };
        let s = fingerprint(&p, &["max_seconds"], &[("workers", "2".into())]).unwrap();
        assert_eq!(s, "lambda: {\"Ratio\":0.30000000000000004}\nseed: 7\nworkers: 2\n");
        assert!(matches!(fingerprint(&3, &[], &[]), Err(CheckpointError::Settings(_))));
    }

    #[test]
    fn a_saved_run_resumes_and_a_changed_or_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let options =
            CheckpointOptions { dir: Some(dir.path().to_path_buf()), every: Every::Count(2), ..Default::default() };
        // What a run killed while saving leaves: removed at the next start; other files stay.
        std::fs::write(dir.path().join(".strads-Xy12.tmp"), b"half").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
        let mut store = FileCheckpoints::open(&options, "lasso", || Ok("seed: 1\n".into())).unwrap();
        assert!(!dir.path().join(".strads-Xy12.tmp").exists() && dir.path().join("notes.txt").exists());
        assert_eq!(store.resume(), None);
        assert_eq!(store.due(Position { rounds: 1, iteration: None }), Due::No);
        assert_eq!(store.due(Position { rounds: 2, iteration: None }), Due::Save);
        let snapshot = Snapshot {
            next_round: 2,
            synced: 2,
            rounds: 2,
            waits: 0,
            iteration: None,
            scheduler: vec![1, 2],
            aggregator: vec![3],
            workers: vec![vec![4], vec![5, 6]],
            in_flight: vec![],
        };
        store.save(&snapshot).unwrap();

        let resume = CheckpointOptions { resume: Some(dir.path().to_path_buf()), ..Default::default() };
        let mut again = FileCheckpoints::open(&resume, "lasso", || Ok("seed: 1\n".into())).unwrap();
        assert_eq!(again.resume(), Some(snapshot));
        let refused = |app: &str, settings: &str| {
            let settings = settings.to_string();
            FileCheckpoints::open(&resume, app, move || Ok(settings)).err().unwrap()
        };
        assert!(matches!(refused("lda", "seed: 1\n"), CheckpointError::OtherApp { .. }));
        let differs = refused("lasso", "seed: 2\n");
        assert!(differs.to_string().contains("`seed: 1`, this run has `seed: 2`"), "{differs}");

        let file = dir.path().join(FILE);
        let good = std::fs::read(&file).unwrap();
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&file, &flipped).unwrap();
        assert!(matches!(refused("lasso", "seed: 1\n"), CheckpointError::Corrupted { .. }));
        std::fs::write(&file, &good[..good.len() - 1]).unwrap();
        assert!(matches!(refused("lasso", "seed: 1\n"), CheckpointError::Truncated { .. }));
        std::fs::write(&file, &good[..10]).unwrap();
        assert!(matches!(refused("lasso", "seed: 1\n"), CheckpointError::NotACheckpoint { .. }));
        let mut old = good.clone();
        old[8] = 1;
        std::fs::write(&file, &old).unwrap();
        assert!(matches!(refused("lasso", "seed: 1\n"), CheckpointError::Version { found: 1, .. }));
    }
}
