//! `passk regrade` (not built yet).

use crate::cli::RegradeArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &RegradeArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
