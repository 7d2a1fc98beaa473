//! `passk cost` (not built yet).

use crate::cli::CostArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &CostArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
