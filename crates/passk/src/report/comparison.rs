//! `compare.md`: two runs side by side (from `analysis::RunComparison`), and the short table
//! `passk compare` prints. For every configuration and model both runs have: the main metrics of A
//! and B, B − A, and the success-rate difference over the shared tasks with its 95% interval.
//! When the runs were graded by different graders, that is said first, loudly.

use super::document::{
    ci_points, group_order, infinite_resamples, opt, points, short_digest, tokens,
};
use super::number::{NOT_AVAILABLE, ci_ratio, number, percent, ratio, seconds};
use super::table::MarkdownTable;
use crate::analysis::comparisons::compare::{MetricPair, ModelComparison};
use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{RunComparison, Summary};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How a metric of [`MetricPair`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Share,
    Seconds,
    Tokens,
    Count,
}

fn kind(metric: &str) -> Kind {
    if metric == "success_rate"
        || metric.starts_with("pass^")
        || metric.ends_with("_rate")
        || metric == "noise_mean"
    {
        Kind::Share
    } else if metric.ends_with("_s") {
        Kind::Seconds
    } else if metric.contains("tokens") {
        Kind::Tokens
    } else {
        Kind::Count
    }
}

fn value(k: Kind, v: Option<f64>) -> String {
    match k {
        Kind::Share => opt(v, percent),
        Kind::Seconds => opt(v, seconds),
        Kind::Tokens => opt(v, tokens),
        Kind::Count => opt(v, |x| number(x, 2)),
    }
}

fn signed(text: String) -> String {
    if text.starts_with('-') || text.chars().all(|c| c == '0' || c == '.' || c == ',') {
        text
    } else {
        format!("+{text}")
    }
}

/// `x` with at least `decimals` decimals, and more (up to 6) when fewer would print a non-zero
/// value as zero.
fn nonzero_number(x: f64, decimals: usize) -> String {
    let mut d = decimals;
    while d < 6 && x != 0.0 && (x * 10f64.powi(d as i32)).round() == 0.0 {
        d += 1;
    }
    number(x, d)
}

/// A difference of metric kind `k`, signed, never a non-zero difference written as zero.
fn signed_amount(k: Kind, d: f64) -> String {
    match k {
        Kind::Share => {
            let p = points(d);
            if d != 0.0 && (p == "0.0 pp" || p == "-0.0 pp") {
                format!("{} pp", signed(nonzero_number(d * 100.0, 1)))
            } else {
                p
            }
        }
        Kind::Seconds => format!("{} s", signed(nonzero_number(d, 2))),
        Kind::Tokens => signed(nonzero_number(d, 0)),
        Kind::Count => signed(nonzero_number(d, 2)),
    }
}

/// A size of metric kind `k` without a sign (a noise band is a distance, not a direction).
fn unsigned_amount(k: Kind, d: f64) -> String {
    let text = signed_amount(k, d.abs());
    text.strip_prefix('+').map_or(text.clone(), str::to_string)
}

fn difference(k: Kind, p: &MetricPair) -> String {
    let (Some(a), Some(b)) = (p.a, p.b) else {
        return NOT_AVAILABLE.into();
    };
    signed_amount(k, b - a)
}

/// The interval of a difference: `-0.12 to +0.40 s`.
fn difference_interval(k: Kind, ci: Option<&Interval>) -> String {
    let Some(i) = ci else {
        return NOT_AVAILABLE.into();
    };
    if k == Kind::Share {
        return ci_points(i);
    }
    let bound = |x: f64| {
        if x.is_infinite() {
            return if x > 0.0 { "+∞" } else { "-∞" }.to_string();
        }
        let t = signed_amount(k, x);
        t.strip_suffix(" s").map_or(t.clone(), str::to_string)
    };
    let unit = if k == Kind::Seconds { " s" } else { "" };
    format!("{} to {}{unit}", bound(i.low), bound(i.high))
}

/// One configuration and model: the metrics table, the tasks compared and the success difference.
fn model_section(out: &mut String, c: &RunComparison, key: &str, model: &str, m: &ModelComparison) {
    let _ = writeln!(out, "## `{key}`: `{model}`\n");
    let graded = |note: &str, left_out: usize| {
        if left_out == 0 {
            note.to_string()
        } else {
            format!("{note}; {} left out", number(left_out as f64, 0))
        }
    };
    let with_noise = c.noise_run.is_some();
    let mut header = vec!["metric", "A", "B", "B − A", "95% CI"];
    if with_noise {
        header.push("noise band (|A′ − A|)");
    }
    header.push("measurable?");
    let mut t = MarkdownTable::new(header);
    t.numeric_after_first();
    t.row([
        "conversations on the shared tasks".to_string(),
        graded(&m.conversations_a, m.conversations_left_out_a),
        graded(&m.conversations_b, m.conversations_left_out_b),
        String::new(),
    ]);
    for p in &m.metrics {
        t.row(metric_cells(p, with_noise, c.resamples));
    }
    out.push_str(&t.render());
    out.push('\n');
    let _ = writeln!(
        out,
        "Tasks compared: {} graded by both; left out: {} graded only in A, {} only in B.\n",
        m.shared_tasks, m.tasks_only_in_a, m.tasks_only_in_b
    );
    let _ = writeln!(
        out,
        "Success rate on the {} shared tasks: {}, 95% CI {}.\n",
        m.shared_tasks,
        opt(m.success_rate_difference, points),
        m.success_rate_difference_ci95
            .as_ref()
            .map_or(NOT_AVAILABLE.into(), ci_points)
    );
}

/// What a difference's interval reads where every resample gave 0: the two runs agree task for
/// task, so there is no spread to resample, which `0 to 0` would present as certainty.
pub(crate) const IDENTICAL: &str = "none: the same on every task";

/// Whether the two runs' figure is the same and every resample of its difference is 0.
fn identical(p: &MetricPair) -> bool {
    p.a.is_some()
        && p.a == p.b
        && p.difference_ci95
            .is_some_and(|i| i.low == 0.0 && i.high == 0.0)
}

/// One metric's row: A, B, the difference and its interval (with the count of its infinite
/// resamples out of `resamples`, when any), the noise band, the verdict.
fn metric_cells(p: &MetricPair, with_noise: bool, resamples: usize) -> Vec<String> {
    let k = kind(&p.metric);
    let mut interval = if identical(p) {
        IDENTICAL.to_string()
    } else {
        difference_interval(k, p.difference_ci95.as_ref())
    };
    if p.infinite_resamples > 0 {
        let _ = write!(
            interval,
            " (±∞ in {} of {} resamples)",
            number(p.infinite_resamples as f64, 0),
            number(resamples as f64, 0)
        );
    }
    let mut cells = vec![
        p.metric.clone(),
        value(k, p.a),
        value(k, p.b),
        difference(k, p),
        interval,
    ];
    if with_noise {
        cells.push(
            p.noise_band
                .map_or(NOT_AVAILABLE.into(), |b| unsigned_amount(k, b)),
        );
    }
    cells.push(match (p.measurable, &p.not_comparable) {
        (_, Some(why)) => format!("not comparable: {why}"),
        (Some(true), _) => "yes".into(),
        (Some(false), _) => "not measurable".into(),
        (None, _) => NOT_AVAILABLE.into(),
    });
    cells
}

/// The compared configurations in report order (`cap=4` before `cap=10`).
fn ordered(c: &RunComparison) -> Vec<(&String, &BTreeMap<String, ModelComparison>)> {
    let mut groups: Vec<_> = c.groups.iter().collect();
    groups.sort_by_cached_key(|(k, _)| group_order(k));
    groups
}

/// The settings that differ between the runs, as a list; or a line saying none does.
fn settings_section(out: &mut String, c: &RunComparison) {
    out.push_str("## What differs between A and B\n\n");
    if c.setting_differences.is_empty() {
        out.push_str("No setting in the manifests differs.\n\n");
        return;
    }
    let mut t = MarkdownTable::new(["setting", "A", "B"]);
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    for d in &c.setting_differences {
        t.row([format!("`{}`", d.setting), shown(&d.a), shown(&d.b)]);
    }
    out.push_str(&t.render());
    out.push('\n');
}

/// The levels the measurable verdicts were judged at: `99.62% for 13 metrics`, each once.
fn verdict_levels(c: &RunComparison) -> String {
    let mut seen: Vec<(usize, f64)> = Vec::new();
    for m in c.groups.values().flat_map(BTreeMap::values) {
        if let Some(level) = m.metrics.first().and_then(|p| p.verdict_level)
            && !seen.iter().any(|(n, _)| *n == m.metrics.len())
        {
            seen.push((m.metrics.len(), level));
        }
    }
    if seen.is_empty() {
        return "1 − 0.05 / metrics".into();
    }
    seen.iter()
        .map(|(n, l)| format!("{}% for {n} metrics", number(l * 100.0, 2)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn run_line(label: &str, dir: &str, s: &Summary) -> String {
    let mut line = format!(
        "- **{label}**: `{}` (`{dir}`), backend `{}`, graders `{}`",
        s.run_id,
        if s.backend.is_empty() {
            "unknown"
        } else {
            &s.backend
        },
        short_digest(&s.grader_digest)
    );
    if s.backend == "imported" || s.imported_from.is_some() {
        line.push_str(", **imported**");
    }
    line
}

/// The whole `compare.md`; `dir_a` and `dir_b` name the run directories as given.
pub fn markdown(c: &RunComparison, dir_a: &str, dir_b: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# passk compare: {} vs {}\n", c.run_a, c.run_b);
    if c.different_graders {
        let _ = writeln!(
            out,
            "> **DIFFERENT GRADERS.** Run A was graded by `{}` and run B by `{}`; the comparison was \
             allowed with `--allow-different-graders`. A difference below may come from the graders, \
             not the models.\n",
            c.summary_a.grader_digest, c.summary_b.grader_digest
        );
    }
    out.push_str(&run_line("A (baseline)", dir_a, &c.summary_a));
    out.push('\n');
    out.push_str(&run_line("B", dir_b, &c.summary_b));
    out.push_str("\n\n");
    settings_section(&mut out, c);
    let _ = writeln!(
        out,
        "Differences are B − A, over the tasks both runs graded (tasks only one run graded are left \
         out, and counted), each with a paired bootstrap 95% interval ({} resamples, the same task \
         resample applied to both runs; a resample in which one run never passed gives a \
         per-success difference of ±∞, kept in the interval and counted), except the success \
         rate's: the two runs' rate intervals combined with their correlation over the tasks, \
         which keeps its coverage at 0% and 100% and on few tasks (metrics.md \"Intervals at the \
         boundary\"). Token figures are the \
         agent's calls, router apart; time per success is over final attempts. A difference is \
         measurable when its paired interval at the Bonferroni level over the metrics of its \
         section ({}) excludes 0. Timing metrics (latency per call, p50, p95, time per success) are \
         never measurable between two runs: they were played at different times, and a machine's \
         speed as a whole drifts between runs, which the task bootstrap cannot see (\"not \
         comparable: played at different times\"); compare timing within one run whose arms were \
         interleaved (a factorial run, the model ladder).\n",
        number(c.resamples as f64, 0),
        verdict_levels(c)
    );
    if let Some(noise) = &c.noise_run {
        let _ = writeln!(
            out,
            "Noise band: `{noise}`, a second run of A's configuration with another base seed. A \
             difference B − A no larger than the run-to-run difference |A′ − A| of the same metric \
             is \"not measurable\" whatever its interval.\n"
        );
    }
    if c.groups.values().all(|m| m.is_empty()) {
        out.push_str("The runs share no configuration and model.\n");
        return out;
    }
    for (key, models) in ordered(c) {
        for (model, m) in models {
            model_section(&mut out, c, key, model, m);
        }
        break_evens(&mut out, key, c);
    }
    router_break_even(&mut out, c);
    out
}

/// A break-even with its 95% interval: `1.47x (1.01x–2.16x)`.
fn with_ci(value: Option<f64>, ci: Option<&Interval>) -> String {
    match (value, ci) {
        (Some(v), Some(i)) => format!("{} ({})", ratio(v), ci_ratio(i.low, i.high)),
        (Some(v), None) => ratio(v),
        _ => NOT_AVAILABLE.into(),
    }
}

/// Each run's small-vs-large break-even in a configuration, with each run's own bootstrap interval.
fn break_evens(out: &mut String, key: &str, c: &RunComparison) {
    let pair = |s: &Summary| s.groups.get(key).and_then(|g| g.comparison.clone());
    let (Some(a), Some(b)) = (pair(&c.summary_a), pair(&c.summary_b)) else {
        return;
    };
    let _ = writeln!(
        out,
        "### `{key}`: break-even price ratio, {} vs {}\n\nHow many times cheaper per token the small \
         model must be to cost the same per successful task, in each run (95% CI of each run's paired \
         task bootstrap).\n",
        a.small, a.large
    );
    let mut t = MarkdownTable::new(["break-even", "A", "B"]);
    t.numeric_after_first();
    t.row([
        "plain".to_string(),
        with_ci(a.break_even, a.ci95.break_even.as_ref()),
        with_ci(b.break_even, b.ci95.break_even.as_ref()),
    ]);
    t.row([
        "re-sent prefix at the cache discount".to_string(),
        with_ci(a.break_even_cached, a.ci95.break_even_cached.as_ref()),
        with_ci(b.break_even_cached, b.ci95.break_even_cached.as_ref()),
    ]);
    if a.break_even_pipeline.is_some() || b.break_even_pipeline.is_some() {
        t.row([
            "pipeline (router + orchestrator)".to_string(),
            with_ci(a.break_even_pipeline, a.ci95.break_even_pipeline.as_ref()),
            with_ci(b.break_even_pipeline, b.ci95.break_even_pipeline.as_ref()),
        ]);
    }
    t.row([
        "resamples with an infinite break-even (kept in the interval)".to_string(),
        infinite_resamples(&a.ci95),
        infinite_resamples(&b.ci95),
    ]);
    out.push_str(&t.render());
    out.push('\n');
}

/// The router's break-even in each run, when both ran the standalone router.
fn router_break_even(out: &mut String, c: &RunComparison) {
    let (Some(a), Some(b)) = (
        &c.summary_a.router_comparison,
        &c.summary_b.router_comparison,
    ) else {
        return;
    };
    let _ = writeln!(
        out,
        "## Router: break-even price ratio, {} vs {}\n\n- A: {}\n- B: {}\n",
        a.small,
        a.large,
        with_ci(a.break_even, a.ci95.break_even.as_ref()),
        with_ci(b.break_even, b.ci95.break_even.as_ref())
    );
}

/// The short table `passk compare` prints: success of A and B and the difference with its CI.
pub fn terminal_table(c: &RunComparison) -> String {
    let mut out = String::new();
    if c.different_graders {
        let _ = writeln!(
            out,
            "DIFFERENT GRADERS: A {} vs B {} (allowed)",
            short_digest(&c.summary_a.grader_digest),
            short_digest(&c.summary_b.grader_digest)
        );
    }
    let mut t = MarkdownTable::new([
        "configuration",
        "model",
        "success A",
        "success B",
        "B − A (shared tasks)",
        "95% CI",
    ]);
    t.numeric_after_first();
    t.align(1, super::table::Align::Left);
    for (key, models) in ordered(c) {
        for (model, m) in models {
            let get = |name: &str, which: fn(&MetricPair) -> Option<f64>| {
                m.metrics.iter().find(|p| p.metric == name).and_then(which)
            };
            t.row([
                key.clone(),
                model.clone(),
                opt(get("success_rate", |p| p.a), percent),
                opt(get("success_rate", |p| p.b), percent),
                opt(m.success_rate_difference, points),
                m.success_rate_difference_ci95
                    .as_ref()
                    .map_or(NOT_AVAILABLE.into(), ci_points),
            ]);
        }
    }
    out.push_str(&t.render());
    for (key, _) in ordered(c) {
        let pair = |s: &Summary| s.groups.get(key).and_then(|g| g.comparison.clone());
        if let (Some(a), Some(b)) = (pair(&c.summary_a), pair(&c.summary_b)) {
            let _ = writeln!(
                out,
                "{key}: break-even A {} (infinite in {}) -> B {} (infinite in {})",
                with_ci(a.break_even, a.ci95.break_even.as_ref()),
                infinite_resamples(&a.ci95),
                with_ci(b.break_even, b.ci95.break_even.as_ref()),
                infinite_resamples(&b.ci95)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_nonzero_difference_prints_as_zero_and_bands_carry_no_sign() {
        assert_eq!(signed_amount(Kind::Seconds, 0.001), "+0.001 s");
        assert_eq!(signed_amount(Kind::Seconds, -0.0004), "-0.0004 s");
        assert_eq!(signed_amount(Kind::Seconds, 0.0), "0.00 s");
        assert_eq!(signed_amount(Kind::Seconds, 1.5), "+1.50 s");
        assert_eq!(signed_amount(Kind::Tokens, 0.4), "+0.4");
        assert_eq!(signed_amount(Kind::Share, 0.0002), "+0.02 pp");
        assert_eq!(unsigned_amount(Kind::Seconds, 0.25), "0.25 s");
        assert_eq!(unsigned_amount(Kind::Share, -0.07), "7.0 pp");
        assert_eq!(unsigned_amount(Kind::Tokens, 12.0), "12");
    }

    #[test]
    fn a_difference_zero_in_every_resample_reads_as_the_same_on_every_task() {
        let mut p: MetricPair = serde_json::from_value(serde_json::json!({
            "metric": "pass_hat_k", "a": 0.5, "b": 0.5,
            "difference_ci95": {"low": 0.0, "high": 0.0}
        }))
        .expect("a metric pair");
        assert_eq!(metric_cells(&p, false, 100)[4], IDENTICAL);
        // A zero-width interval away from 0, or different values, is printed as it is.
        p.b = Some(0.6);
        assert_ne!(metric_cells(&p, false, 100)[4], IDENTICAL);
    }
}
