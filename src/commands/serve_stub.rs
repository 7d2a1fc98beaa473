//! `passk serve-stub` (not built yet).

use crate::cli::ServeStubArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &ServeStubArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
