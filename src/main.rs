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
            passk::errln!("error: {}", chain_once(&err));
            ExitCode::from(exit_code::FAILURE)
        }
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text the message before it
/// already ends with (an I/O error wrapped as "path: error" would otherwise print twice).
fn chain_once(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
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
}
