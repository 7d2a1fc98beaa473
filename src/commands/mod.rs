//! One file per subcommand: glue that wires the stages together and owns the terminal.
//! Nothing but `main.rs` reaches in here.

mod calibrate;
mod compare;
mod cost;
mod doctor;
mod doctor_openai;
mod freeze;
mod import;
mod plan;
mod pull;
mod regrade;
mod repair;
mod report;
mod run;
mod serve_stub;
mod suite_check;

use crate::cli::{Cli, Command, SuiteCommand};

/// Prints a usage error (a flag or value that cannot be used) and returns its exit code.
pub fn usage_error(message: &str) -> u8 {
    passk::errln!("error: {message}");
    crate::exit_code::USAGE
}

/// Loads every registered suite under `root`, saying loudly, one line each, which suites this
/// machine cannot play (their server command is missing) and were left out.
fn load_all_suites(root: &std::path::Path) -> anyhow::Result<passk::suites::AllSuites> {
    let suites = passk::suites::AllSuites::load(root)?;
    for why in &suites.skipped {
        passk::errln!("SKIPPED: {why}; the other suites go on without it");
    }
    Ok(suites)
}

/// Runs the parsed command; returns the exit code.
pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match &cli.command {
        Command::Calibrate(a) => calibrate::run(a),
        Command::Run(a) => run::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Pull(a) => pull::run(a),
        Command::Suite(s) => match &s.command {
            SuiteCommand::Check(a) => suite_check::run(a),
        },
        Command::Freeze(a) => freeze::freeze(a),
        Command::Verify(a) => freeze::verify(a),
        Command::Plan(a) => plan::run(a),
        Command::ServeStub(a) => serve_stub::run(a),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Regrade(a) => regrade::run(a),
        Command::Import(a) => import::run(a),
        Command::Repair(a) => repair::run(a),
        Command::Cost(a) => cost::run(a),
    }
}
