//! `passk suite check`: loads every suite, prints its counts, replays every gold trajectory and
//! every near-miss, and exits with SUITE_CHECK_FAILED on any surprise.

use crate::cli::SuiteCheckArgs;
use crate::exit_code;
use anyhow::Context;
use passk::suite::check::CheckReport;
use passk::suite::check::check_suite;
use passk::suite::{Domain, ToolVariant};
use passk::suites::router::load::ROUTER_LABELS;
use passk::suites::store::load::{STORE_CATEGORIES, counts_by_category};
use passk::suites::triage::TRIAGE_CATEGORIES;
use passk::suites::{AllSuites, router::load_router, store::load_store, triage::load_triage};
use std::fmt::Write as _;
use std::io::Write as _;

/// Runs the command; returns the exit code.
pub fn run(args: &SuiteCheckArgs) -> anyhow::Result<u8> {
    let root = &args.data.root;
    let store = load_store(root).context("loading the store suite")?;
    let router = load_router(root).context("loading the router suite")?;
    let triage = load_triage(root).context("loading the triage suite")?;

    let mut out = String::new();
    let by_cat = counts_by_category(store.tasks());
    let cats: Vec<String> = STORE_CATEGORIES
        .iter()
        .map(|(c, _)| format!("{c} {}", by_cat.get(*c).copied().unwrap_or(0)))
        .collect();
    writeln!(
        out,
        "store: {} tools, {} parameters, {} conversations ({})",
        store.tools(ToolVariant::Bare).len(),
        store.parameter_count(),
        store.tasks().len(),
        cats.join(", ")
    )?;
    let labels: Vec<String> = ROUTER_LABELS
        .iter()
        .map(|l| {
            format!(
                "{l} {}",
                router.messages.iter().filter(|m| m.label == *l).count()
            )
        })
        .collect();
    writeln!(
        out,
        "router: {} messages ({})",
        router.messages.len(),
        labels.join(", ")
    )?;

    let by_cat = counts_by_category(triage.tasks());
    let cats: Vec<String> = TRIAGE_CATEGORIES
        .iter()
        .map(|c| format!("{c} {}", by_cat.get(*c).copied().unwrap_or(0)))
        .collect();
    writeln!(
        out,
        "triage: {} tools, {} parameters, {} tickets ({})",
        triage.tools(ToolVariant::Bare).len(),
        triage.parameter_count(),
        triage.tasks().len(),
        cats.join(", ")
    )?;

    let mut surprises = false;
    for suite in &AllSuites::load(root)?.domains {
        let report = check_suite(suite.as_ref());
        write_report(&mut out, suite.name(), &report)?;
        surprises |= report.has_surprises();
    }
    write_stdout(&out)?;
    if surprises {
        passk::errln!("suite check failed: see the SURPRISE lines above");
        return Ok(exit_code::SUITE_CHECK_FAILED);
    }
    Ok(exit_code::SUCCESS)
}

/// Writes one suite's gold and near-miss replays; the store's lines keep their historical form,
/// other suites' lines are prefixed with the suite's name.
fn write_report(out: &mut String, suite: &str, report: &CheckReport) -> anyhow::Result<()> {
    let prefix = if suite == "store" {
        String::new()
    } else {
        format!("{suite} ")
    };
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
            .map(|m| format!("{m:?}"))
            .unwrap_or_else(|| "passed".into());
        let reason = if n.verdict.reasons.is_empty() {
            "no reason".to_string()
        } else {
            n.verdict.reasons.join("; ")
        };
        if n.as_expected() {
            writeln!(
                out,
                "  ok {} \"{}\": {} ({})",
                n.task,
                n.name,
                snake(n.expect),
                reason
            )?;
        } else {
            writeln!(
                out,
                "  SURPRISE {} \"{}\": expected {}, got {} ({})",
                n.task,
                n.name,
                snake(n.expect),
                got,
                reason
            )?;
        }
    }
    Ok(())
}

/// The failure mode as records write it.
fn snake(m: passk::trace::FailureMode) -> String {
    serde_json::to_value(m)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
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
