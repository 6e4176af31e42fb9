//! Progress on a terminal: a spinner with the latest objective, or nothing at all.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner shown only when standard error is a terminal and the user did not ask for quiet.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A spinner with a leading label, or a silent stand-in.
    pub fn new(label: &str, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner();
        let style = ProgressStyle::with_template("{spinner} {prefix} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    /// Replaces the message.
    pub fn message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
