//! The pass^k tables: pass^k for every k up to each model's trials, with confidence intervals.

use super::format::{excluded, model_share, opt};
use super::model_table::ModelTable;
use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{ci_percent, percent};
use std::fmt::Write as _;

/// A share's interval in brackets, `[27%–55%]`; empty when there is none.
pub(super) fn bracketed_ci(ci: Option<Interval>) -> String {
    ci.map_or(String::new(), |i| {
        format!("[{}]", ci_percent(i.low, i.high))
    })
}

/// pass^k for every k, with and without text-call recovery.
pub(super) fn pass_hat_k_tables(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let kmax = models
        .iter()
        .map(|(_, m)| m.trials_per_task)
        .max()
        .unwrap_or(0);
    if kmax == 0 {
        return;
    }
    out.push_str("### pass^k\n\n");
    let _ = writeln!(
        out,
        "Chance that k trials of a task all succeed (unbiased estimator, averaged over tasks), with \
         its 95% interval{} in brackets: exact over the model's tasks (metrics.md \"Intervals at the boundary\").\n",
        crate::report::stopping::mark(s)
    );
    let mut t = ModelTable::new(s, "k", models);
    for k in 1..=kmax {
        t.row(k.to_string(), |m| {
            let ci = bracketed_ci(m.pass_hat_k_ci95.get(&k).copied());
            let value = model_share(m, m.pass_hat_k.get(&k).copied());
            // An n/a row has no interval: no gap where it would stand.
            let value = if ci.is_empty() {
                value
            } else {
                format!("{value} {ci}")
            };
            format!("{value}{}", excluded(m))
        });
    }
    out.push_str(&t.render());
    out.push('\n');
    if models
        .iter()
        .any(|(_, m)| m.pass_hat_k_native_only != m.pass_hat_k)
    {
        out.push_str(
            "Without text-call recovery (a pass counts only if every one of its tool calls, \
             accepted or rejected, came as the server's native tool calls):\n\n",
        );
        let mut t = ModelTable::new(s, "k", models);
        for k in 1..=kmax {
            t.row(k.to_string(), |m| {
                opt(m.pass_hat_k_native_only.get(&k).copied(), percent)
            });
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}
