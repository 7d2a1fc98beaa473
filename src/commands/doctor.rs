//! `passk doctor` (not built yet).

use crate::cli::DoctorArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &DoctorArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}
