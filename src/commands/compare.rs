//! `passk compare RUN_A RUN_B`: sets two runs side by side. Refuses (exit code
//! `DIFFERENT_GRADERS`) when their grader digests differ, unless `--allow-different-graders`, and
//! then says so at the top of everything it writes. Writes `compare.md`, `compare.json` and
//! `compare.html` (default
//! directory: `RUN_B/compare-<RUN_A name>`), prints the short table on stdout and the path on
//! stderr.

use crate::cli::CompareArgs;
use anyhow::Context;
use passk::analysis::comparisons::compare::compare_with_noise;
use passk::analysis::{RecordsError, load_run};
use passk::report::comparison;
use passk::report::html::COMPARE_HTML;
use passk::report::html::compare::compare_page;
use passk::report::json::JsonExporter;
use passk::report::{COMPARE_JSON, COMPARE_MD, Exporter, write_file};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs the command; returns the exit code.
pub(super) fn run(args: &CompareArgs) -> anyhow::Result<u8> {
    let a = load_run(&args.a).with_context(|| format!("reading run {}", args.a.display()))?;
    let b = load_run(&args.b).with_context(|| format!("reading run {}", args.b.display()))?;
    let noise = match &args.noise {
        Some(dir) => Some(load_run(dir).with_context(|| format!("reading run {}", dir.display()))?),
        None => None,
    };
    let opts = super::report::options(&a.manifest, args.resamples);
    let c = match compare_with_noise(&a, &b, noise.as_ref(), &opts, args.allow_different_graders) {
        Ok(c) => c,
        Err(e @ RecordsError::DifferentGraders { .. }) => {
            return Err(super::Failure::exit(crate::exit_code::DIFFERENT_GRADERS, e));
        }
        Err(e) => return Err(e).context("comparing the runs"),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.a, &args.b));
    let md = comparison::markdown(&c, &shown(&args.a), &shown(&args.b));
    write_file(&out.join(COMPARE_MD), md.as_bytes())?;
    write_file(&out.join(COMPARE_JSON), &JsonExporter.render(&c)?)?;
    let html = compare_page(
        &c,
        &md,
        (&a.dir, &a.conversations),
        (&b.dir, &b.conversations),
    )?;
    write_file(&out.join(COMPARE_HTML), html.as_bytes())?;
    if c.different_graders {
        passk::errln!(
            "warning: the runs were graded by different graders ({} vs {}); compared anyway",
            c.summary_a.grader_digest,
            c.summary_b.grader_digest
        );
    }
    let table = comparison::terminal_table(&c);
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(table.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e).context("writing to standard output");
    }
    passk::errln!("comparison: {}", out.join(COMPARE_MD).display());
    Ok(crate::exit_code::SUCCESS)
}

/// `RUN_B/compare-<name of RUN_A>`.
fn default_out(a: &Path, b: &Path) -> PathBuf {
    let name = a
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "a".into());
    b.join(format!("compare-{name}"))
}

/// A run directory as shown in `compare.md`: its last component (no host paths in the file).
fn shown(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string())
}
