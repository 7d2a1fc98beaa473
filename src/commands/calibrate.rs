//! `passk calibrate` (not built yet).

use crate::cli::CalibrateArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &CalibrateArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
