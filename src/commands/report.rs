//! `passk report` (being assembled).

use crate::cli::ReportArgs;

/// Runs the command; returns the exit code.
pub fn run(_args: &ReportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("not implemented yet")
}

/// Writes the report files into a run directory; returns the report's path.
pub fn write(run_dir: &std::path::Path, _resamples: usize) -> anyhow::Result<std::path::PathBuf> {
    Ok(run_dir.to_path_buf())
}
