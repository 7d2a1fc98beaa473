//! Errors of the report stage: rendering an export, or writing it to its destination.
//!
//! Every variant names what failed and where, so that `commands/report.rs` can add context and print
//! the chain without guessing.

use std::path::PathBuf;

/// What went wrong while rendering or writing a report file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file (or its directory) could not be written.
    #[error("cannot write {}", path.display())]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Standard output could not be written (a broken pipe included; the caller decides).
    #[error("cannot write to standard output")]
    Stdout(#[source] std::io::Error),
    /// Two exports were sent to standard output (`-`); only one may be.
    #[error("both {first} and {second} were sent to standard output ('-'); only one export may be")]
    StdoutTwice {
        /// The export added first.
        first: String,
        /// The export added second.
        second: String,
    },
    /// A records file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a records file is not a record.
    #[error("{}:{line}: not a record: {message}", path.display())]
    Records {
        /// The records file.
        path: PathBuf,
        /// Line number (1-based).
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// The CSV writer failed.
    #[error("cannot render CSV")]
    Csv(#[from] csv::Error),
    /// The JSON serializer failed.
    #[error("cannot render JSON")]
    Json(#[from] serde_json::Error),
}
