//! Helpers shared by the command-line tests: run the `strads` binary and read what it printed.
#![allow(dead_code)] // each test file uses some of them

use std::process::{Command, Output};

/// Runs `strads` with these arguments.
pub fn strads(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strads")).args(args).output().expect("the strads binary runs")
}

/// What a run wrote to standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
