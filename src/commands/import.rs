//! `passk import` (not built yet).

use crate::cli::ImportArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &ImportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
