//! `passk compare` (not built yet).

use crate::cli::CompareArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &CompareArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
