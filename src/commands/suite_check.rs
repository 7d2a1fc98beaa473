//! `passk suite check`: loads every suite, prints its counts, replays every gold trajectory and
//! every near-miss, and exits with SUITE_CHECK_FAILED on any surprise. It prints the counts, each
//! surprise and each task that repeats another; `--verbose` adds a line per near-miss as expected.

use crate::cli::SuiteCheckArgs;
use crate::exit_code;
use anyhow::Context;
use passk::domain::check::{CheckReport, check_suite};
use passk::domain::repeats::repeats;
use std::fmt::Write as _;
use std::io::Write as _;

/// Runs the command; returns the exit code.
pub(super) fn run(args: &SuiteCheckArgs) -> anyhow::Result<u8> {
    super::require_experiment(&args.data.root)?;
    let suites = super::load_all_suites(&args.data.root).context("loading the suites")?;
    let mut out = String::new();
    for line in suites.counts_lines() {
        writeln!(out, "{line}")?;
    }
    for n in &suites.not_suites {
        writeln!(out, "not a suite: {n}")?;
    }
    let mut surprises = false;
    for (i, suite) in suites.domains.iter().enumerate() {
        let report = check_suite(suite.as_ref());
        let prefix = (i > 0).then(|| suite.name());
        write_report(&mut out, prefix, &report, args.verbose)?;
        for r in repeats(suite.tasks()) {
            writeln!(
                out,
                "  WARNING {r} (a task should ask something new; the stub's models cannot tell them apart)"
            )?;
        }
        surprises |= report.has_surprises();
    }
    write_stdout(&out)?;
    if surprises {
        passk::errln!("suite check failed: see the SURPRISE lines above");
        return Ok(exit_code::SUITE_CHECK_FAILED);
    }
    Ok(exit_code::SUCCESS)
}

/// Writes one suite's gold and near-miss replays, the lines prefixed with `prefix` (the suite's
/// name; none for the first registered suite, whose lines keep their historical form).
fn write_report(
    out: &mut String,
    prefix: Option<&str>,
    report: &CheckReport,
    verbose: bool,
) -> anyhow::Result<()> {
    let prefix = prefix.map(|p| format!("{p} ")).unwrap_or_default();
    writeln!(
        out,
        "{prefix}gold: {}/{} passing",
        report.gold_passing(),
        report.gold.len()
    )?;
    for g in report.gold.iter().filter(|g| !g.problems.is_empty()) {
        writeln!(out, "  SURPRISE {} gold: {}", g.task, g.problems.join("; "))?;
    }
    writeln!(
        out,
        "{prefix}near-misses: {}/{} failing as expected",
        report.near_misses_as_expected(),
        report.near_misses.len()
    )?;
    for n in &report.near_misses {
        let got = n
            .verdict
            .failure_mode
            .map(|m| m.record_name().to_string())
            .unwrap_or_else(|| "passed".into());
        let reason = if n.verdict.reasons.is_empty() {
            "no reason".to_string()
        } else {
            n.verdict.reasons.join("; ")
        };
        if n.as_expected() && !verbose {
            continue;
        }
        if n.as_expected() {
            writeln!(
                out,
                "  ok {} \"{}\": {} ({})",
                n.task,
                n.name,
                n.expect.record_name(),
                reason
            )?;
        } else {
            writeln!(
                out,
                "  SURPRISE {} \"{}\": expected {}, got {} ({})",
                n.task,
                n.name,
                n.expect.record_name(),
                got,
                reason
            )?;
        }
    }
    Ok(())
}

/// Writes the report to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
