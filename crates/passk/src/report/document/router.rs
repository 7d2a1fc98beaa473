//! The Router section: the router's labels against the expected ones, per model, and its
//! break-even.

use super::break_even::resample_split;
use super::format::{
    NO_CORRECT, NOTHING_GRADED, nothing_graded, on_ollama, opt, per_success, tokens,
};
use super::model_table::model_header;
use crate::analysis::Summary;
use crate::analysis::intervals::bootstrap::Interval;
use crate::report::number::{
    NOT_AVAILABLE, ci_percent, ci_ratio, counted, denominator, fixed, number, percent,
    percent_with_n, ratio, seconds,
};
use crate::report::table::MarkdownTable;
use std::fmt::Write as _;

/// How many router calls a model made: `messages x runs = calls` when every message ran equally
/// often (the product is computed, never assumed), else the messages and calls apart.
pub(super) fn router_count_text(
    model: &str,
    r: &crate::analysis::figures::router::RouterSummary,
) -> String {
    let recorded = r.outcomes.total;
    let note = denominator(&r.outcomes);
    if r.messages == 0 {
        return format!("`{model}`: {} ({note})", counted(recorded, "call"));
    }
    if recorded.is_multiple_of(r.messages) {
        let runs = recorded / r.messages;
        format!(
            "`{model}`: {} x {} = {} ({note})",
            counted(r.messages, "message"),
            counted(runs, "run"),
            counted(r.messages * runs, "call")
        )
    } else {
        format!(
            "`{model}`: {} over {} ({note})",
            counted(recorded, "call"),
            counted(r.messages, "message")
        )
    }
}

pub(super) fn router(out: &mut String, s: &Summary) {
    if s.router.is_empty() {
        return;
    }
    out.push_str("## Router (leaf node)\n\n");
    let models: Vec<(&str, &crate::analysis::figures::router::RouterSummary)> = s
        .models
        .iter()
        .filter_map(|m| s.router.get(m).map(|r| (m.as_str(), r)))
        .collect();
    let counts: Vec<String> = models
        .iter()
        .map(|(m, r)| router_count_text(m, r))
        .collect();
    let _ = writeln!(out, "{}.\n", counts.join("; "));
    let ci_of = |model: &str| s.router.get(model).and_then(|r| r.accuracy_ci95);
    let mut header = vec![String::new()];
    header.extend(models.iter().map(|(m, _)| model_header(s, m)));
    let mut t = MarkdownTable::new(header);
    t.numeric_after_first();
    let rows = router_rows(&ci_of, crate::report::stopping::mark(s), on_ollama(s));
    for (label, f) in &rows {
        let mut cells = vec![label.clone()];
        cells.extend(models.iter().map(|(m, r)| f(m, r)));
        t.row(cells);
    }
    out.push_str(&t.render());
    out.push('\n');
    if let Some(c) = s.router_comparison.as_ref() {
        router_break_even(out, s, c, crate::report::stopping::mark(s));
    }
}

/// One row of the router table: its label and how a model's cell is written.
pub(super) type RouterRow<'r> = (
    String,
    Box<dyn Fn(&str, &crate::analysis::figures::router::RouterSummary) -> String + 'r>,
);

/// The router table's rows; `ci_of` gives a model's accuracy interval where one was computed.
pub(super) fn router_rows<'r>(
    ci_of: &'r dyn Fn(&str) -> Option<Interval>,
    mark: &str,
    on_ollama: bool,
) -> Vec<RouterRow<'r>> {
    let mut rows: Vec<RouterRow<'r>> = vec![
        (
            "Accuracy".into(),
            Box::new(|_, r| {
                let ex = if r.outcomes.graded == r.outcomes.total {
                    String::new()
                } else {
                    format!(" ({})", denominator(&r.outcomes))
                };
                format!("{}{ex}", percent_with_n(r.correct as u64, r.calls as u64))
            }),
        ),
        (
            format!("  95% CI{mark}, messages as clusters"),
            Box::new(|m, _| ci_of(m).map_or(NOT_AVAILABLE.into(), |i| ci_percent(i.low, i.high))),
        ),
        (
            "Unparseable replies".into(),
            Box::new(|_, r| opt(r.unparseable, percent)),
        ),
    ];
    rows.extend(token_rows());
    rows.extend(time_rows(on_ollama));
    rows
}

/// The router table's token rows: per call, blended, and per correct call.
fn token_rows<'r>() -> Vec<RouterRow<'r>> {
    vec![
        (
            "Tokens per call (input / output)".into(),
            Box::new(
                |_, r| match (r.input_tokens_per_call, r.output_tokens_per_call) {
                    (Some(a), Some(b)) => format!("{} / {}", tokens(a), number(b, 1)),
                    _ => NOT_AVAILABLE.into(),
                },
            ),
        ),
        (
            "Blended tokens per call".into(),
            Box::new(|_, r| opt(r.blended_tokens_per_call, tokens)),
        ),
        (
            "**Tokens per correct call**".into(),
            Box::new(|_, r| {
                if r.outcomes.graded == 0 {
                    return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
                }
                per_success(r.blended_tokens_per_correct, r.correct, |v| {
                    format!("**{}**", tokens(v))
                })
            }),
        ),
    ]
}

/// The router table's time rows: latency, the fastest call, the server's split, and temperature.
fn time_rows<'r>(on_ollama: bool) -> Vec<RouterRow<'r>> {
    vec![
        (
            "Latency per call, mean / p95".into(),
            Box::new(|_, r| match (r.latency_per_call_s, r.latency_p95_s) {
                (Some(a), Some(b)) => format!("{} / {} s", number(a, 2), number(b, 2)),
                _ => NOT_AVAILABLE.into(),
            }),
        ),
        (
            "Fastest call".into(),
            Box::new(|_, r| {
                r.fastest_call.as_ref().map_or(NOT_AVAILABLE.into(), |f| {
                    format!(
                        "{} for {} output tokens",
                        seconds(f.latency_s),
                        f.output_tokens
                    )
                })
            }),
        ),
        (
            if on_ollama {
                "Model time (Ollama)".to_string()
            } else {
                "Model time (server's durations)".to_string()
            },
            Box::new(|_, r| {
                opt(r.server_split.as_ref().map(|x| x.model_s_per_call), |v| {
                    format!("{} s", fixed(v, 3))
                })
            }),
        ),
        (
            "Request overhead, mean / p50".into(),
            Box::new(|_, r| {
                r.server_split.as_ref().map_or(NOT_AVAILABLE.into(), |x| {
                    format!(
                        "{} / {} s",
                        fixed(x.overhead_s_per_call, 3),
                        fixed(x.overhead_s_p50, 3)
                    )
                })
            }),
        ),
        (
            "Temperature".into(),
            Box::new(|_, r| opt(r.temperature, |v| fixed(v, 2))),
        ),
    ]
}

/// The sentence under the router table: the break-even price ratio of the pair and its interval,
/// `n/a` naming the model never right when one was not (the agent's rule).
pub(super) fn router_break_even(
    out: &mut String,
    s: &Summary,
    c: &crate::analysis::RouterComparison,
    mark: &str,
) {
    let correct = |m: &str| s.router.get(m).map_or(0, |r| r.correct);
    let graded = |m: &str| s.router.get(m).map_or(0, |r| r.outcomes.graded);
    let ungraded = nothing_graded([&c.small, &c.large], graded);
    let point = match (c.break_even, correct(&c.small), correct(&c.large)) {
        (Some(v), _, _) => format!("**{}**", ratio(v)),
        (None, _, _) if let Some(text) = ungraded => text,
        (None, 0, 0) => NO_CORRECT.into(),
        (None, 0, _) => format!("∞ (`{}`: 0 correct)", c.small),
        (None, _, 0) => format!("{NOT_AVAILABLE} (`{}`: 0 correct)", c.large),
        (None, _, _) => NOT_AVAILABLE.into(),
    };
    let ci = &c.ci95;
    let bootstrap = if ci.messages == 0 {
        "no paired bootstrap: no message has graded calls of both models".to_string()
    } else {
        format!(
            "95% CI{mark} {}, paired bootstrap over {}, {}: {}",
            ci.break_even
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high)),
            counted(ci.messages, "message"),
            counted(ci.resamples, "resample"),
            resample_split(
                (&c.small, &c.large),
                split_counts!(ci),
                ("were right", "was never right", "was right"),
                ci.break_even.is_some()
            )
        )
    };
    let _ = writeln!(
        out,
        "Router break-even: how many times cheaper per token `{}` must be than `{}` to cost the \
         same per correct call: {point} ({bootstrap}).\n",
        c.small, c.large,
    );
}
