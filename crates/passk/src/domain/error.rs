//! Errors met while reading suite and grader files; each names the file and, where known, the line.

use std::path::PathBuf;

/// A suite or grader file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The file is not valid for its format.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// File concerned.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file parsed but its content is inconsistent.
    #[error("{path}: {key}: {message}")]
    Invalid {
        /// File concerned.
        path: PathBuf,
        /// The key or item at fault.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The suite needs a program this machine does not have (an MCP suite's server command).
    #[error("{path}: {message}")]
    Unavailable {
        /// The file that names the program.
        path: PathBuf,
        /// What is missing.
        message: String,
    },
}
