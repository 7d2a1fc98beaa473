//! Errors of reading, importing and comparing runs, shared by `analysis` (run directories,
//! compare) and `import` (the reference's JSONL): each names the file (and line) to look at.

use std::path::PathBuf;

/// Why a run could not be read, imported or compared.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    /// A file could not be read.
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
    /// The two runs were graded by different graders and the caller did not allow it.
    #[error(
        "the runs were graded by different graders: {}; pass --allow-different-graders to compare anyway",
        .differences.join("; ")
    )]
    DifferentGraders {
        /// Each difference: a suite both runs played and a file of it that differs (or, for runs
        /// written before per-suite graders, the two digests).
        differences: Vec<String>,
    },
    /// The noise run is not a second run of run A's configuration.
    #[error(
        "the noise run must repeat run A's configuration with another base seed, but it also differs in: {settings}"
    )]
    NoiseRunDiffers {
        /// The settings that differ, comma-separated.
        settings: String,
    },
}
