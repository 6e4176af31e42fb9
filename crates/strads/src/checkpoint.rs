//! Checkpoint files, their policy, `--resume`, and SIGINT/SIGTERM: a run saves snapshots in a
//! folder and continues from one exactly.
//!
//! A checkpoint is one file, `checkpoint.strads`, replaced atomically (temporary file, fsync,
//! rename), so a crash while writing leaves the previous one intact. It starts with a header: the
//! magic `STRADSCK`, a format version, the CRC-32 and the length of the payload. The payload holds
//! the application, the settings that decide the result (one `key: value` per line, compared on
//! resume) and the engine's snapshot.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use clap::Args;
use serde::{Deserialize, Serialize};
use strads_core::{BoxError, Checkpoints, Due, Position, Snapshot};

use crate::failure::Failure;

/// The checkpoint file in a checkpoint folder.
pub const FILE: &str = "checkpoint.strads";
const MAGIC: &[u8; 8] = b"STRADSCK";
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8;
/// Seconds between checkpoints when a folder is given without `--checkpoint-every` or `--checkpoint-seconds`.
const DEFAULT_SECONDS: f64 = 300.0;

/// The checkpoint flags of every training command.
#[derive(Clone, Debug, Default, Args)]
pub struct CheckpointArgs {
    /// Save checkpoints in this folder (created if needed); SIGINT and SIGTERM then save one at the
    /// next round boundary and stop with exit code 3. Without --checkpoint-every or
    /// --checkpoint-seconds, one is saved every 300 seconds.
    #[arg(long, value_name = "DIR", help_heading = "Checkpoints")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Save a checkpoint every N rounds (lasso, logreg) or iterations (lda, mf).
    #[arg(long, value_name = "N", help_heading = "Checkpoints", conflicts_with = "checkpoint_seconds")]
    pub checkpoint_every: Option<u64>,
    /// Save a checkpoint every T seconds.
    #[arg(long, value_name = "T", help_heading = "Checkpoints")]
    pub checkpoint_seconds: Option<f64>,
    /// Continue the run saved in this checkpoint folder; give the same settings and data as the
    /// saved run (a setting that would change the result is refused). Later checkpoints go to
    /// --checkpoint-dir, or to this folder.
    #[arg(long, value_name = "DIR", help_heading = "Checkpoints")]
    pub resume: Option<PathBuf>,
}

impl CheckpointArgs {
    /// Whether any checkpoint flag was given.
    pub fn any(&self) -> bool {
        self.checkpoint_dir.is_some() || self.resume.is_some()
    }
}

/// What a checkpoint file holds after its header.
#[derive(Serialize, Deserialize)]
struct Payload<'a> {
    app: Cow<'a, str>,
    settings: Cow<'a, str>,
    snapshot: Cow<'a, Snapshot>,
}

/// How often checkpoints are due.
#[derive(Clone, Copy, Debug)]
enum Every {
    Count(u64),
    Seconds(f64),
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
    /// `key: value` per line, computed only when a checkpoint flag is given). With `--resume`, reads
    /// and checks the saved run first. Without a checkpoint flag, never resumes nor saves.
    pub fn open(args: &CheckpointArgs, app: &str, settings: impl FnOnce() -> String) -> Result<Self, Failure> {
        let every = match (args.checkpoint_every, args.checkpoint_seconds) {
            (Some(0), _) => return Err(Failure::input("--checkpoint-every must be at least 1")),
            (Some(n), _) => Every::Count(n),
            (None, Some(t)) if !(t.is_finite() && t > 0.0) => {
                return Err(Failure::input(format!(
                    "--checkpoint-seconds must be a positive number of seconds, not {t}"
                )));
            }
            (None, Some(t)) => Every::Seconds(t),
            (None, None) => Every::Seconds(DEFAULT_SECONDS),
        };
        if !args.any() && (args.checkpoint_every.is_some() || args.checkpoint_seconds.is_some()) {
            return Err(Failure::input(
                "--checkpoint-every and --checkpoint-seconds need --checkpoint-dir (or --resume)",
            ));
        }
        if !args.any() {
            return Ok(Self::none());
        }
        if !crate::runtime::is_leader() {
            // The leader saves for every rank; the others only have to outlive the signal that
            // mpirun forwards to every rank, until the leader tells them to stop.
            listen(&Arc::new(AtomicUsize::new(0)))
                .map_err(|e| Failure::Run(anyhow::anyhow!("cannot install the signal handlers: {e}")))?;
            return Ok(Self::none());
        }
        let settings = settings();
        let resume = match &args.resume {
            Some(dir) => Some(read(dir, app, &settings)?),
            None => None,
        };
        let dir = args.checkpoint_dir.clone().or_else(|| args.resume.clone());
        let signal = Arc::new(AtomicUsize::new(0));
        if let Some(dir) = &dir {
            listen(&signal).map_err(|e| Failure::Run(anyhow::anyhow!("cannot install the signal handlers: {e}")))?;
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::input(format!("{}: cannot create the checkpoint folder: {e}", dir.display())))?;
        }
        let last_count = resume.as_ref().map_or(0, |s| s.iteration.unwrap_or(s.rounds));
        Ok(FileCheckpoints {
            dir,
            app: app.to_string(),
            settings,
            every,
            last_save: Instant::now(),
            last_count,
            resume,
            signal,
        })
    }

    /// Checkpoints that never resume nor save (for runs without checkpoint flags).
    fn none() -> Self {
        FileCheckpoints {
            dir: None,
            app: String::new(),
            settings: String::new(),
            every: Every::Seconds(DEFAULT_SECONDS),
            last_save: Instant::now(),
            last_count: 0,
            resume: None,
            signal: Arc::new(AtomicUsize::new(0)),
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
fn read(dir: &Path, app: &str, settings: &str) -> Result<Snapshot, Failure> {
    let path = dir.join(FILE);
    let bad = |problem: String| Failure::input(format!("{}: {problem}", path.display()));
    let bytes = std::fs::read(&path).map_err(|e| bad(format!("cannot read the checkpoint: {e}")))?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(bad("not a strads checkpoint (no STRADSCK header)".into()));
    }
    let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != VERSION {
        return Err(bad(format!("checkpoint format {version}, this strads reads format {VERSION}")));
    }
    let checksum = word(12);
    let mut length = [0u8; 8];
    length.copy_from_slice(&bytes[16..24]);
    let length = u64::from_le_bytes(length);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != length {
        return Err(bad(format!(
            "truncated or padded: the header announces {length} bytes of state, the file holds {}",
            payload.len()
        )));
    }
    if crc32fast::hash(payload) != checksum {
        return Err(bad("corrupted: the checksum does not match the contents".into()));
    }
    let payload: Payload<'static> =
        postcard::from_bytes(payload).map_err(|e| bad(format!("unreadable state ({e}) despite a valid checksum")))?;
    if payload.app != app {
        return Err(bad(format!("this checkpoint is of a `strads {}` run, not `strads {app}`", payload.app)));
    }
    if let Some(difference) = difference(&payload.settings, settings) {
        return Err(bad(format!("the run would not continue the saved one: {difference}")));
    }
    Ok(payload.snapshot.into_owned())
}

/// The first setting that differs between the saved run and this one.
fn difference(saved: &str, now: &str) -> Option<String> {
    let (saved, now): (Vec<&str>, Vec<&str>) = (saved.lines().collect(), now.lines().collect());
    for i in 0..saved.len().max(now.len()) {
        match (saved.get(i), now.get(i)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => {
                return Some(format!("it was saved with `{}`, this run has `{}`", a.trim(), b.trim()));
            }
            (Some(a), None) => return Some(format!("it was saved with `{}`, this run has no such setting", a.trim())),
            (None, Some(b)) => return Some(format!("this run has `{}`, the saved one had no such setting", b.trim())),
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

/// Result-deciding settings as `key: value` lines: each field of the `{:#?}` form of checked
/// parameters on one line (without the given keys: limits that only decide when a run gives up),
/// then `extra` lines.
pub fn settings(params: &impl std::fmt::Debug, skip: &[&str], extra: &[(&str, String)]) -> String {
    let mut entries: Vec<String> = Vec::new();
    for line in format!("{params:#?}").lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        let key = text.split(':').next().unwrap_or_default();
        let is_field = indent == 4 && text.contains(':') && key.chars().all(|c| c.is_alphanumeric() || c == '_');
        match entries.last_mut() {
            Some(last) if !is_field && indent > 0 => {
                last.push(' ');
                last.push_str(text);
            }
            _ => entries.push(text.to_string()),
        }
    }
    let mut out = String::new();
    for entry in entries {
        let key = entry.split(':').next().unwrap_or_default();
        if !skip.contains(&key) {
            out.push_str(&entry);
            out.push('\n');
        }
    }
    for (key, value) in extra {
        out.push_str(&format!("{key}: {value}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_setting_is_named() {
        assert_eq!(difference("a: 1\nb: 2\n", "a: 1\nb: 2\n"), None);
        let d = difference("a: 1\n    b: 2\n", "a: 1\n    b: 3\n").unwrap();
        assert!(d.contains("`b: 2`") && d.contains("`b: 3`"), "{d}");
        assert!(difference("a: 1\n", "a: 1\nc: 0\n").unwrap().contains("`c: 0`"));
    }

    #[test]
    fn settings_skip_the_given_keys() {
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Lambda {
            Ratio(f64),
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        struct P {
            lambda: Lambda,
            max_seconds: Option<f64>,
        }
        let p = P { lambda: Lambda::Ratio(0.5), max_seconds: Some(3.0) };
        let s = settings(&p, &["max_seconds"], &[("workers", "2".into())]);
        assert!(s.contains("lambda: Ratio( 0.5, ),\n"), "{s}");
        assert!(!s.contains("max_seconds") && s.ends_with("}\nworkers: 2\n"), "{s}");
    }
}
