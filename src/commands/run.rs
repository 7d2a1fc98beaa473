//! `passk run` (not built yet).

use crate::cli::RunArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &RunArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
