//! Errors of the import stage; each names the file (and line) to look at.

use std::path::PathBuf;

/// Why the reference's records could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line is not the JSON object the reference wrote.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What serde said.
        message: String,
    },
    /// A line lacks a field passk cannot do without.
    #[error("{path}:{line}: missing field `{field}`")]
    Missing {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The field.
        field: &'static str,
    },
}
