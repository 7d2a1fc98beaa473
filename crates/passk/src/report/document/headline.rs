//! A configuration's headline table: success, pass^k at each model's own k, tasks passing every
//! trial, and tokens and time per successful task.

use super::format::{
    NOTHING_GRADED, ci_amount, excluded, model_per_success, model_rate, model_share, opt, rate,
    success_cell, tokens,
};
use super::model_table::ModelTable;
use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{
    NOT_AVAILABLE, ci_percent, counted, denominator, number, percent, seconds,
};

/// Some model ran its tasks a different number of times: the pooled success rate then weighs
/// tasks by their trials and is no longer pass^1 (the mean over tasks).
pub(super) fn trials_differ(models: &[(&str, &ModelSummary)]) -> bool {
    models
        .iter()
        .any(|(_, m)| m.most_trials_per_task != m.trials_per_task)
}

/// pass^k at the model's own k (its fewest trials of a task): `pass^3: 40.0%`.
pub(super) fn own_pass_hat_k(m: &ModelSummary) -> String {
    if m.outcomes.graded == 0 {
        return format!("pass^k: {NOT_AVAILABLE} ({NOTHING_GRADED})");
    }
    let k = m.trials_per_task;
    format!("pass^{k}: {}", opt(m.pass_hat_k.get(&k).copied(), percent))
}

/// The headline table: success (pooled, and pass^1 where they differ), pass^k at each model's k,
/// tasks passing every trial, tokens and time per successful task.
pub(crate) fn headline(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let differ = trials_differ(models);
    let mut t = ModelTable::new(s, "", models);
    t.row("Conversations graded", |m| denominator(&m.outcomes));
    let success = if differ {
        "Success rate, pooled over conversations"
    } else {
        "Success rate (pass^1)"
    };
    t.row(success, success_cell);
    let mark = crate::report::stopping::mark(s);
    t.row(format!("  95% CI{mark}, tasks as clusters"), |m| {
        m.success_ci95
            .map_or(NOT_AVAILABLE.into(), |i| ci_percent(i.low, i.high))
    });
    if models
        .iter()
        .any(|(_, m)| m.behaviour.call_formats.text_calls > 0)
    {
        t.row(TEXT_CALLS_WITHHELD, |m| {
            m.success_native_only
                .map_or(format!("{NOT_AVAILABLE} (not recorded)"), |r| rate(Some(r)))
        });
    }
    if differ {
        t.row("pass^1, mean over tasks of each task's success", |m| {
            format!(
                "{}{}",
                model_share(m, m.pass_hat_k.get(&1).copied()),
                excluded(m)
            )
        });
    }
    t.row(
        "All k trials of a task succeed (pass^k, k = the model's fewest trials)",
        |m| format!("{}{}", own_pass_hat_k(m), excluded(m)),
    );
    t.row("Tasks passing every trial", |m| {
        if m.tasks == 0 {
            return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
        }
        format!(
            "{} of {}",
            number(m.tasks_passing_every_trial as f64, 0),
            counted(m.tasks, "task")
        )
    });
    headline_costs(&mut t, s, models);
    out.push_str(&t.render());
    out.push('\n');
}

/// The headline's behaviour, token and time rows.
pub(super) fn headline_costs(t: &mut ModelTable, s: &Summary, models: &[(&str, &ModelSummary)]) {
    t.row("Model calls per conversation", |m| {
        opt(m.behaviour.model_calls_per_conversation, |x| number(x, 2))
    });
    t.row("Tool errors (rejected calls) per conversation", |m| {
        opt(m.behaviour.rejected_calls_per_conversation, |x| {
            number(x, 2)
        })
    });
    t.row("Identified customer first", |m| {
        model_rate(m.behaviour.identify_first, m)
    });
    t.row("Tokens per conversation (agent calls; router apart)", |m| {
        opt(m.tokens.blended_per_conversation, tokens)
    });
    if models
        .iter()
        .any(|(_, m)| m.tokens.thinking_per_conversation.is_some())
    {
        t.row(
            "Thinking tokens per conversation (counted as output)",
            |m| opt(m.tokens.thinking_per_conversation, tokens),
        );
    }
    t.row(
        "**Tokens per successful task** (agent calls; router apart)",
        |m| {
            model_per_success(m, m.tokens.blended_per_success, |x| {
                format!("**{}**", tokens(x))
            })
        },
    );
    t.row(per_success_ci_label(s), |m| {
        per_success_ci(m, m.per_success_ci95.tokens.as_ref(), 0, "")
    });
    t.row(
        format!(
            "Tokens per successful task, re-sent prefix at {}",
            percent(s.settings.cache_discount)
        ),
        |m| model_per_success(m, m.tokens.cached_blended_per_success, tokens),
    );
    t.row("Latency per call", |m| {
        opt(m.latency.per_call_mean_s, seconds)
    });
    t.row("Latency per conversation, p50 / p95", |m| {
        match (m.latency.conversation_p50_s, m.latency.conversation_p95_s) {
            (Some(a), Some(b)) => format!("{} / {} s", number(a, 2), number(b, 2)),
            _ => NOT_AVAILABLE.into(),
        }
    });
    t.row(
        "**Time per successful task** (graded conversations, final attempts)",
        |m| {
            model_per_success(m, m.latency.time_per_success_s, |x| {
                format!("**{}**", seconds(x))
            })
        },
    );
    t.row(per_success_ci_label(s), |m| {
        per_success_ci(m, m.per_success_ci95.time_s.as_ref(), 2, " s")
    });
    t.row(
        "Time per successful task, every attempt (retries and fault-ended conversations included)",
        |m| model_per_success(m, m.latency.time_per_success_all_attempts_s, seconds),
    );
}

/// The label of a per-success figure's interval row, marked after optional stopping.
pub(super) fn per_success_ci_label(s: &Summary) -> String {
    format!(
        "  95% CI{}, tasks as clusters (Fieller)",
        crate::report::stopping::mark(s)
    )
}

/// A per-success figure's interval cell: as [`ci_amount`], and `n/a` with why where the model
/// has no pass ([`model_per_success`]).
pub(super) fn per_success_ci(
    m: &ModelSummary,
    i: Option<&Interval>,
    decimals: usize,
    unit: &str,
) -> String {
    model_per_success(m, Some(0.0), |_| ci_amount(i, decimals, unit))
}

/// The sensitivity row under the success rate: success with the calls read from text withheld.
pub(crate) const TEXT_CALLS_WITHHELD: &str =
    "  with calls read from text withheld (native calls only)";
