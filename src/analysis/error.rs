//! Errors of the analysis stage: reading a run directory, and refusing a comparison.

use std::path::PathBuf;

/// Why a run could not be read or compared.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A file of the run directory could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line (or the manifest) is not a valid record.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (1 for the manifest).
        line: usize,
        /// What serde said.
        message: String,
    },
    /// The two runs were graded by different graders and the caller did not allow it.
    #[error(
        "the runs were graded by different graders ({a} vs {b}); pass --allow-different-graders to compare anyway"
    )]
    DifferentGraders {
        /// Grader digest of the first run.
        a: String,
        /// Grader digest of the second run.
        b: String,
    },
}
