//! The `passk` binary: parse flags, dispatch, exit with the code `commands::finish` maps the
//! result to.

mod cli;
mod commands;
mod exit_code;
mod signals;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    signals::install();
    // `--suite` and `--help` list the MCP suites of the experiment directory, so it is looked
    // through before the flags are parsed.
    passk::suites::discover(&cli::root_before_parsing(std::env::args_os()));
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
    ExitCode::from(commands::finish(commands::dispatch(cli)))
}
