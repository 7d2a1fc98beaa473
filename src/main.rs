//! The `passk` binary: parse flags, dispatch, print the error chain, exit with a named code.

mod cli;
mod commands;
mod exit_code;
mod signals;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    signals::install();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            });
        }
    };
    match commands::dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            passk::errln!("error: {err:#}");
            ExitCode::from(exit_code::FAILURE)
        }
    }
}
