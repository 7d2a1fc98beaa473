//! `passk repair`: drops the duplicate records two writers left in a run directory and says what
//! it dropped ([`passk::runner::repair`]).

use crate::cli::RepairArgs;
use crate::exit_code;
use passk::runner::journal::JournalError;
use passk::runner::lock::LockError;

/// Runs the command; returns the exit code.
pub(super) fn run(args: &RepairArgs) -> anyhow::Result<u8> {
    let repair = match passk::runner::repair::repair(&args.run) {
        Ok(r) => r,
        Err(e @ JournalError::Locked(LockError::Held { .. })) => {
            return Err(super::Failure::exit(exit_code::RUN_DIR_LOCKED, e));
        }
        Err(e) => return Err(e.into()),
    };
    for d in &repair.dropped {
        passk::outln!(
            "{}:{}: dropped {} (a duplicate of line {}, kept)",
            d.file,
            d.line,
            d.trial,
            d.kept_line
        );
    }
    if repair.torn > 0 {
        passk::outln!("cut {} torn last line(s)", repair.torn);
    }
    if repair.dropped.is_empty() {
        passk::outln!(
            "{}: nothing to repair ({} records, no duplicates)",
            args.run.display(),
            repair.kept
        );
    } else {
        passk::outln!(
            "{}: kept {} records, dropped {} duplicate(s); the dropped lines are in <file>.dropped beside each file",
            args.run.display(),
            repair.kept,
            repair.dropped.len()
        );
    }
    Ok(exit_code::SUCCESS)
}
