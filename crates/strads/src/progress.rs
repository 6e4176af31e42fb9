//! Progress of long phases: a bar or spinner on a terminal, JSON lines for batch systems, or nothing.
//!
//! `--log-format text` (the default) draws on standard error only when it is a terminal: a bar with
//! the rate and the time left when the number of iterations is known (LDA, MF), a spinner with the
//! rate otherwise (Lasso rounds, loading). `--log-format json` writes one JSON object per line to
//! standard error whatever it is connected to: `{"command", "event": "phase" | "progress" | "done",
//! "elapsed_seconds", ...}` with the phase's numbers. `--quiet` silences both.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value};

use crate::cli::LogFormat;

static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Chooses text or JSON progress for the whole run (once, from the command line).
pub fn set_format(format: LogFormat) {
    let _ = FORMAT.set(format);
}

fn json_logs() -> bool {
    FORMAT.get() == Some(&LogFormat::Json)
}

/// Progress of one phase.
pub struct Progress {
    bar: Option<ProgressBar>,
    json: bool,
    label: String,
    started: Instant,
}

impl Progress {
    fn make(label: &str, quiet: bool, total: Option<u64>) -> Self {
        // In an MPI job only the leader reports.
        let quiet = quiet || !crate::runtime::is_leader();
        let json = !quiet && json_logs();
        let started = Instant::now();
        if quiet || json || !std::io::stderr().is_terminal() {
            return Progress { bar: None, json, label: label.to_string(), started };
        }
        let (bar, template) = match total {
            Some(total) => (
                ProgressBar::new(total),
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} ({per_sec}, {eta} left) {msg}",
            ),
            None => (ProgressBar::new_spinner(), "{spinner} {prefix} [{elapsed_precise}] {msg}"),
        };
        let style = ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Progress { bar: Some(bar), json, label: label.to_string(), started }
    }

    /// Progress of an open-ended phase (rounds until convergence).
    pub fn new(label: &str, quiet: bool) -> Self {
        Self::make(label, quiet, None)
    }

    /// Progress of `total` iterations: a bar with the time left.
    pub fn counted(label: &str, quiet: bool, total: u64) -> Self {
        Self::make(label, quiet, Some(total))
    }

    /// A phase without steps (loading, preparing): a spinner naming it, or a JSON `phase` line.
    pub fn phase(label: &str, quiet: bool, phase: &str) -> Self {
        let progress = Self::make(label, quiet, None);
        progress.message(phase.to_string());
        progress.log("phase", &[("phase", Value::from(phase))]);
        progress
    }

    fn log(&self, event: &str, fields: &[(&str, Value)]) {
        if !self.json {
            return;
        }
        let mut line = Map::new();
        line.insert("command".into(), Value::from(self.label.clone()));
        line.insert("event".into(), Value::from(event));
        line.insert("elapsed_seconds".into(), Value::from(self.started.elapsed().as_secs_f64()));
        for (key, value) in fields {
            line.insert((*key).to_string(), value.clone());
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", Value::Object(line));
    }

    /// Replaces the message.
    pub fn message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Reports step `position` with its numbers: on a terminal, `message` (and the rate of steps per
    /// second for open-ended phases); in JSON, the numbers.
    pub fn update(&self, position: u64, message: String, numbers: &[(&str, f64)]) {
        if let Some(bar) = &self.bar {
            if bar.length().is_some() {
                bar.set_position(position);
                bar.set_message(message);
            } else {
                let seconds = self.started.elapsed().as_secs_f64();
                let rate = if seconds > 0.0 { position as f64 / seconds } else { 0.0 };
                bar.set_message(format!("{message}  ({rate:.0}/s)"));
            }
        }
        if self.json {
            let mut fields: Vec<(&str, Value)> = vec![("position", Value::from(position))];
            fields.extend(numbers.iter().map(|&(k, v)| (k, if v.is_finite() { Value::from(v) } else { Value::Null })));
            self.log("progress", &fields);
        }
    }

    /// Ends the phase: removes the bar, or writes a JSON `done` line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.log("done", &[]);
    }
}
