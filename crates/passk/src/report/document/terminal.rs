//! The short table `passk report` prints on the terminal.

use super::break_even::break_even_point;
use super::format::{model_per_success, opt, points, success_cell, tokens};
use super::headline::own_pass_hat_k;
use super::model_table::ModelTable;
use super::order::{group_models, ordered_groups};
use crate::analysis::{GroupSummary, ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, ci_ratio, percent, ratio, seconds};
use std::fmt::Write as _;

/// The short table `passk report` prints on stdout: the headline figures of every configuration.
pub fn terminal_table(s: &Summary) -> String {
    let mut out = String::new();
    if s.backend == crate::runner::experiment::STUB_BACKEND {
        out.push_str(
            "STUB RUN: the server was passk's own stub; these figures test the harness, not a \
             model.\n\n",
        );
    }
    if let Some(b) = crate::analysis::figures::shortfall::banner(s) {
        let _ = writeln!(out, "{}\n", b.replace(['`', '*'], ""));
    }
    for (key, g) in ordered_groups(s) {
        let models = group_models(s, g);
        if models.is_empty() {
            continue;
        }
        group_table(&mut out, s, key, g, &models);
        out.push('\n');
    }
    if let Some(c) = &s.router_comparison {
        let acc = |m: &str| opt(s.router.get(m).and_then(|r| r.accuracy), percent);
        let _ = writeln!(
            out,
            "router: accuracy {} {} vs {} {}; break-even {}",
            c.small,
            acc(&c.small),
            c.large,
            acc(&c.large),
            opt(c.break_even, ratio)
        );
    }
    if let Some(p) = s.placement.as_ref().filter(|p| p.max_parallel > 1) {
        let _ = writeln!(
            out,
            "times above are at up to {} conversations at once per server: compare them only with \
             runs at that concurrency (report.md, \"Servers and concurrency\")",
            p.max_parallel
        );
    }
    if let Some(v) = crate::report::verdict::verdict_plain(s) {
        let _ = writeln!(out, "\nVerdict. {v}");
    }
    out
}

/// One configuration's headline rows, and its break-even line when it compares a pair.
fn group_table(
    out: &mut String,
    s: &Summary,
    key: &str,
    g: &GroupSummary,
    models: &[(&str, &ModelSummary)],
) {
    let _ = writeln!(out, "{key}");
    let mut t = ModelTable::new(s, "", models);
    t.row("Success", success_cell);
    t.row("pass^k at the model's k", own_pass_hat_k);
    t.row("Tasks passing every trial", |m| {
        format!("{} of {}", m.tasks_passing_every_trial, m.tasks)
    });
    t.row("Tokens per successful task (agent calls)", |m| {
        model_per_success(m, m.tokens.blended_per_success, tokens)
    });
    t.row("Time per successful task (final attempts)", |m| {
        model_per_success(m, m.latency.time_per_success_s, seconds)
    });
    out.push_str(&t.render());
    if let Some(c) = &g.comparison {
        let _ = writeln!(
            out,
            "Break-even {} (95% CI{} {}); success gap {}",
            break_even_point(g, c, c.break_even),
            crate::report::stopping::mark(s),
            c.ci95
                .break_even
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
            opt(c.success_rate_difference, points)
        );
    }
}
