//! The `strads` command: parses flags, picks the runtime, runs an application, writes its outputs.
//!
//! This crate holds no algorithm: it parses arguments, talks to the terminal, picks the runtime
//! through `strads_runtime::job` and writes the outputs; the libraries load, fit, score and save,
//! receiving checked settings and a launcher. Exit codes: 0 on success, 1 when a run
//! fails (a worker dies, an output cannot be written), 2 on bad input or options, 3 when SIGINT or
//! SIGTERM stopped a run after it saved a checkpoint.

mod checkpoint;
mod cli;
mod config;
mod demo;
mod failure;
mod gen_cmd;
mod lasso_cmd;
mod lda_cmd;
mod mf_cmd;
mod plot_cmd;
mod progress;
mod runtime;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command, GenCommand, LdaAction, MfAction};

fn main() -> ExitCode {
    let command = config::overriding(Cli::command());
    let args = match config::expand(&command, std::env::args_os().collect()) {
        Ok(args) => args,
        Err(failure) => {
            eprintln!("strads: {}", failure.message());
            return ExitCode::from(failure.code());
        }
    };
    let matches = command.clone().get_matches_from(args);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    progress::set_format(cli.log_format);
    if cli.print_config {
        print!("{}", config::print(&command, &matches));
        return ExitCode::SUCCESS;
    }
    let mut command = cli.command;
    let outcome = runtime::start(cli.threads)
        .map_err(failure::Failure::from)
        .and_then(|()| runtime::resolve(&mut command))
        .and_then(|()| dispatch(command));
    match outcome {
        Ok(()) => {
            runtime::finish();
            ExitCode::SUCCESS
        }
        Err(failure) => {
            match runtime::rank() {
                (_, 1) => eprintln!("strads: {}", failure.message()),
                (rank, _) => eprintln!("strads: rank {rank}: {}", failure.message()),
            }
            // In an MPI job the other ranks may wait on this one: end them all. An interrupted
            // run has already told them to stop.
            if !matches!(failure, failure::Failure::Interrupted(_)) {
                runtime::abort(failure.code());
            }
            runtime::finish();
            ExitCode::from(failure.code())
        }
    }
}

/// Runs one subcommand: what `main` does after parsing, and what `strads demo` calls for each run.
pub(crate) fn dispatch(command: Command) -> Result<(), failure::Failure> {
    match command {
        Command::Lasso(args) => lasso_cmd::run(&args).map(drop),
        Command::Logreg(args) => lasso_cmd::run_logreg(&args).map(drop),
        Command::Predict(args) => lasso_cmd::predict(&args),
        Command::Lda(args) => match (&args.action, &args.corpus, &args.train) {
            (Some(LdaAction::Prepare(prepare)), _, _) => lda_cmd::prepare(prepare),
            (Some(LdaAction::Infer(infer)), _, _) => lda_cmd::infer(infer),
            (None, Some(corpus), Some(train)) => lda_cmd::train(corpus, train, &args.checkpoints),
            _ => Err(failure::Failure::input("strads lda needs --data and --out (see strads lda --help)")),
        },
        Command::Mf(args) => match (&args.action, &args.train) {
            (Some(MfAction::Predict(predict)), _) => mf_cmd::predict(predict),
            (Some(MfAction::Recommend(recommend)), _) => mf_cmd::recommend(recommend),
            (None, Some(train)) => mf_cmd::train(train, &args.checkpoints),
            _ => Err(failure::Failure::input("strads mf needs --data and --out (see strads mf --help)")),
        },
        Command::Gen(GenCommand::Mf(args)) => mf_cmd::generate(&args),
        Command::Gen(GenCommand::Lasso(args)) => gen_cmd::lasso(&args),
        Command::Gen(GenCommand::Lda(args)) => lda_cmd::generate(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Plot(args) => plot_cmd::run(&args),
    }
}
