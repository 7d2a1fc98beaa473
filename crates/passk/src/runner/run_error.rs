//! Why a run stopped before its schedule was done, and the error text a lost server is reported with.

use crate::runner::journal::JournalError;
use crate::runner::judge::JudgeError;
use crate::runner::preflight::PreflightError;
use crate::runner::record::Record;
use crate::runner::settings::SettingsError;
use std::path::PathBuf;

/// Why an experiment stopped before its schedule was done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The graders lock is missing or does not match.
    #[error("graders are not frozen as locked: {0} (`passk verify` lists every difference)")]
    GraderLock(#[source] crate::grade::freeze::FreezeError),
    /// A suite could not be loaded.
    #[error(transparent)]
    Suite(#[from] crate::domain::SuiteError),
    /// Preflight refused.
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// The run directory refused or failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Several trials in a row ended on transport failures: the server is gone.
    #[error(
        "{trials} trials in a row ended on transport failures ({error}) and {host} no longer answers; is Ollama still running? Finished trials are kept: rerun the same command to resume, and the failed ones run again"
    )]
    ServerLost {
        /// Base URL.
        host: String,
        /// Trials lost in a row.
        trials: usize,
        /// The last attempt's error.
        error: String,
    },
    /// A setting names something that does not exist.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The client could not be built.
    #[error(transparent)]
    Client(#[from] crate::wire::error::WireError),
    /// The records could not be read back to update the confidence sequence, or its states
    /// could not be written.
    #[error(transparent)]
    Sequence(#[from] SequenceError),
}

/// Why the confidence sequence could not be updated after a round.
#[derive(Debug, thiserror::Error)]
pub enum SequenceError {
    /// The round judge could not read the run's records back.
    #[error("cannot update the confidence sequence: {0}")]
    Judge(#[source] JudgeError),
    /// `rounds.jsonl` could not be written.
    #[error("cannot update the confidence sequence: {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Transport-failed trials in a row after which the run stops.
pub const SERVER_LOST_AFTER: usize = 5;

/// The error text of the last failed attempt in a record.
pub(crate) fn last_wire_error(record: &Record) -> String {
    let calls: Vec<&crate::runner::record::CallRecord> = match record {
        Record::Conversation(c) => c.calls.iter().collect(),
        Record::Router(r) => vec![&r.call],
    };
    calls
        .iter()
        .flat_map(|c| c.attempts.iter())
        .filter_map(|a| a.error.clone())
        .next_back()
        .unwrap_or_else(|| "no error text".into())
}
