//! `passk pull` (not built yet).

use crate::cli::PullArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &PullArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
