//! The `strads` command: parses flags, picks the runtime, runs an application, writes its outputs.
//!
//! Only this crate parses arguments, talks to the terminal and chooses the runtime; the
//! applications receive checked settings and a launcher. Exit codes: 0 on success, 1 when a run
//! fails (a worker dies, an output cannot be written), 2 on bad input or options.

mod cli;
mod demo;
mod failure;
mod gen_cmd;
mod lasso_cmd;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, GenCommand};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Lasso(args) => lasso_cmd::run(&args).map(|_| ()),
        Command::Gen(GenCommand::Lasso(args)) => gen_cmd::lasso(&args),
        Command::Demo(args) => demo::run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("strads: {}", failure.message());
            ExitCode::from(failure.code())
        }
    }
}
