//! The documented exit codes (docs/reference/cli.md), one constant each.

/// Success.
pub(crate) const SUCCESS: u8 = 0;
/// Unexpected error.
pub(crate) const FAILURE: u8 = 1;
/// Usage error: a flag, an experiment-file key or a value that cannot be used.
pub(crate) const USAGE: u8 = 2;
/// `graders/graders.lock` is missing, malformed or does not match the graders; or `passk freeze`
/// found a grader that does not load.
pub(crate) const GRADER_LOCK_MISMATCH: u8 = 3;
/// A resume would mix Ollama versions, model digests or grader digests.
pub(crate) const MIXED_VERSIONS: u8 = 4;
/// Calibration did not reproduce its expected figures: the harness or graders are broken.
pub(crate) const CALIBRATION_FAILED: u8 = 5;
/// `passk suite check` found a surprise (a gold trajectory failing or a near-miss passing).
pub(crate) const SUITE_CHECK_FAILED: u8 = 6;
/// Preflight refused the run (Ollama unreachable, model missing or without tools).
pub(crate) const PREFLIGHT_FAILED: u8 = 7;
/// `passk compare` refused runs graded by different graders.
pub(crate) const DIFFERENT_GRADERS: u8 = 8;
/// Several trials in a row ended on transport failures: the server went away mid-run. Finished
/// trials are kept, and a rerun plays the failed ones again.
pub(crate) const SERVER_LOST: u8 = 9;
/// Another process is running or resuming the same run directory (its lock file names it).
pub(crate) const RUN_DIR_LOCKED: u8 = 10;
/// The run was stopped by SIGHUP (terminal closed); finished conversations are kept and a rerun
/// resumes.
pub(crate) const HANGUP: u8 = 129;
/// The run was interrupted (Ctrl-C, SIGINT); finished conversations are kept and a rerun resumes.
pub(crate) const INTERRUPTED: u8 = 130;
/// The run was stopped by SIGTERM; finished conversations are kept and a rerun resumes.
pub(crate) const TERMINATED: u8 = 143;
