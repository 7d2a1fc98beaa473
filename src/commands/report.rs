//! `passk report` (not built yet).

use crate::cli::ReportArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &ReportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
