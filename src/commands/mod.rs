//! One file per subcommand: glue that wires the stages together and owns the terminal.
//! Nothing but `main.rs` reaches in here.

mod calibrate;
mod compare;
mod cost;
mod doctor;
mod doctor_openai;
mod freeze;
mod import;
mod init;
mod plan;
mod pull;
mod regrade;
mod repair;
mod report;
mod run;
mod serve_stub;
mod suite_check;

use crate::cli::{Cli, Command, SuiteCommand};

/// Why a command stopped short, with the documented exit code it maps to. A command returns it
/// (inside `anyhow::Error`) instead of printing; [`finish`] is the one place that prints an error
/// and maps it to its code.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub(crate) struct Failure {
    /// The exit code (`crate::exit_code`).
    code: u8,
    /// What went wrong.
    #[source]
    error: anyhow::Error,
    /// A line printed after the error, saying how to fix it.
    fix: Option<&'static str>,
}

impl Failure {
    /// `error`, exiting with `code`.
    pub(crate) fn exit(code: u8, error: impl Into<anyhow::Error>) -> anyhow::Error {
        Failure {
            code,
            error: error.into(),
            fix: None,
        }
        .into()
    }

    /// `error`, exiting with `code`, and the line that says how to fix it.
    pub(crate) fn exit_with_fix(
        code: u8,
        error: impl Into<anyhow::Error>,
        fix: Option<&'static str>,
    ) -> anyhow::Error {
        Failure {
            code,
            error: error.into(),
            fix,
        }
        .into()
    }
}

/// A usage error (a flag or value that cannot be used): exits with [`crate::exit_code::USAGE`].
pub(crate) fn usage_error(message: &str) -> anyhow::Error {
    Failure::exit(crate::exit_code::USAGE, anyhow::anyhow!("{message}"))
}

/// The exit code of a command's result; an error is printed first, as `error: ` and its chain (and
/// the fix of a [`Failure`] that has one), and exits with the [`Failure`]'s code, else 1.
pub(crate) fn finish(result: anyhow::Result<u8>) -> u8 {
    let err = match result {
        Ok(code) => return code,
        Err(err) => err,
    };
    passk::errln!("error: {}", chain_once(&err));
    match err.downcast_ref::<Failure>() {
        Some(f) => {
            if let Some(fix) = f.fix {
                passk::errln!("{fix}");
            }
            f.code
        }
        None => crate::exit_code::FAILURE,
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text the message before it
/// already says (an I/O error wrapped as "path: error", or a typed source its error's message
/// quotes, would otherwise print twice).
fn chain_once(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Refuses a directory that holds no experiment (no `tasks/` folder), saying how to get one.
fn require_experiment(root: &std::path::Path) -> anyhow::Result<()> {
    if root.join("tasks").is_dir() {
        return Ok(());
    }
    Err(usage_error(&format!(
        "no experiment in {}: it has no tasks/ folder; write one with `passk init {}`, or name \
         yours with --root DIR (or {}=DIR)",
        root.display(),
        root.display(),
        crate::cli::ROOT_ENV
    )))
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
pub(crate) fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    match &cli.command {
        Command::Init(a) => init::run(a),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_chain_says_each_thing_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let err = anyhow::Error::new(passk::runner::lock::LockError::Io {
            path: "x/run.lock".into(),
            source: io,
        })
        .context("reading run x");
        assert_eq!(
            chain_once(&err),
            "reading run x: x/run.lock: No such file or directory"
        );
    }

    #[test]
    fn a_failure_exits_with_its_code_and_any_other_error_with_1() {
        let refused = Failure::exit(crate::exit_code::RUN_DIR_LOCKED, anyhow::anyhow!("held"));
        assert_eq!(finish(Err(refused)), crate::exit_code::RUN_DIR_LOCKED);
        assert_eq!(
            finish(Err(usage_error("--x: bad"))),
            crate::exit_code::USAGE
        );
        let wrapped = usage_error("--x: bad").context("reading flags");
        assert_eq!(finish(Err(wrapped)), crate::exit_code::USAGE);
        assert_eq!(
            finish(Err(anyhow::anyhow!("boom"))),
            crate::exit_code::FAILURE
        );
        assert_eq!(
            finish(Ok(crate::exit_code::SUCCESS)),
            crate::exit_code::SUCCESS
        );
    }
}
