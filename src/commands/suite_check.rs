//! `passk suite-check` (not built yet).

use crate::cli::SuiteCheckArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &SuiteCheckArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
