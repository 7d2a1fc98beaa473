//! `passk freeze` and `passk verify` (not built yet).

use crate::cli::FreezeArgs;

/// Writes the lock; returns the exit code.
pub fn freeze(_args: &FreezeArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}

/// Verifies the lock; returns the exit code.
pub fn verify(_args: &FreezeArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
