//! The verdict a report opens on: for the headline configuration's pair, each model's success with
//! its interval, its tokens (and energy, where measured) per successful task with theirs, and the break-even price ratio with its interval,
//! read out as a price condition. Where an interval includes "no difference", the sentence says
//! so. report.md, report.html's first screen and the terminal's last lines all say it.

use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{Comparison, GroupSummary, ModelSummary, Summary};
use crate::report::document::format::{ci_amount, ci_points, points, tokens};
use crate::report::document::primary_group;
use crate::report::number::{NOT_AVAILABLE, ci_percent, ci_ratio, number, percent, ratio};

/// The verdict as markdown sentences (model names in backticks); `None` without a model in the
/// headline configuration.
pub fn verdict(s: &Summary) -> Option<String> {
    let v = unmarked(s)?;
    // After optional stopping a fixed-k interval is marked, as in every table.
    let mark = crate::report::stopping::mark(s);
    if mark.is_empty() {
        return Some(v);
    }
    Some(format!(
        "{} ({mark}: fixed-k intervals, not valid after optional stopping; the stopping rule's \
         sequence is below.)",
        v.replace("95% CI", &format!("95% CI{mark}"))
    ))
}

/// The verdict before any mark of its intervals.
fn unmarked(s: &Summary) -> Option<String> {
    let (key, g) = primary_group(s)?;
    let Some(c) = g.comparison.as_ref() else {
        return alone(key, g);
    };
    let rule = s
        .pairing
        .as_ref()
        .map(|p| format!(" The pair: {}.", p.rule))
        .unwrap_or_default();
    Some(format!(
        "On `{key}`: {}{} {} {}{rule}",
        success(g, c),
        native_only(g, c),
        per_success(g, c),
        break_even(c)
    ))
}

/// Where either model's calls were read from text: each one's success with those calls
/// withheld (native calls only), so a reader sees whether the verdict rests on the reading.
fn native_only(g: &GroupSummary, c: &Comparison) -> String {
    let models = [&c.small, &c.large].map(|m| g.models.get(m.as_str()));
    if !models
        .iter()
        .flatten()
        .any(|m| m.behaviour.call_formats.text_calls > 0)
    {
        return String::new();
    }
    let of = |m: Option<&ModelSummary>| {
        m.and_then(|m| m.success_native_only)
            .map_or(NOT_AVAILABLE.into(), |r| {
                let ci = r
                    .ci95
                    .map(|i| format!(" (95% CI {})", ci_percent(i.low, i.high)))
                    .unwrap_or_default();
                format!("{}{ci}", percent(r.rate))
            })
    };
    format!(
        " With the calls read from text withheld (native calls only), `{}` succeeded in {} and \
         `{}` in {}.",
        c.small,
        of(models[0]),
        c.large,
        of(models[1])
    )
}

/// Without a pair: each model's success and tokens per successful task, and why no break-even.
fn alone(key: &str, g: &GroupSummary) -> Option<String> {
    let each: Vec<String> = g
        .models
        .iter()
        .map(|(name, m)| {
            if m.outcomes.graded == 0 {
                return format!(
                    "`{name}` has no figure: every conversation ended on a failure outside the model"
                );
            }
            let ci = m
                .success_ci95
                .as_ref()
                .map(|i| format!(" (95% CI {})", ci_percent(i.low, i.high)))
                .unwrap_or_default();
            let per = tokens_per_success(Some(m));
            format!(
                "`{name}` succeeded in {}{ci} of its conversations and used {per} per successful task",
                m.success_rate.map_or(NOT_AVAILABLE.into(), percent)
            )
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "On `{key}`: {}. No break-even: it needs two models of one configuration.",
            each.join("; ")
        )
    })
}

/// The verdict for a terminal: the same sentences without markdown.
pub fn verdict_plain(s: &Summary) -> Option<String> {
    verdict(s).map(|v| v.replace('`', ""))
}

/// `` `a` solved 70.0% of its conversations (95% CI 61%–78%) and `b` 90.0% (83%–95%); `b`
/// succeeds +20.0 pp more often (95% CI +8 to +31 pp).``
fn success(g: &GroupSummary, c: &Comparison) -> String {
    let of = |m: &str, ci: Option<&crate::analysis::intervals::bootstrap::Interval>| {
        let Some(model) = g.models.get(m) else {
            return NOT_AVAILABLE.to_string();
        };
        if model.outcomes.graded == 0 {
            return "no figure (every conversation ended on a failure outside the model)"
                .to_string();
        }
        // The headline table's interval (tasks as clusters), so that one rate has one interval.
        let interval = model
            .success_ci95
            .as_ref()
            .or(ci)
            .map(|i| format!(" (95% CI {})", ci_percent(i.low, i.high)))
            .unwrap_or_default();
        format!(
            "{}{interval}",
            model.success_rate.map_or(NOT_AVAILABLE.into(), percent)
        )
    };
    let gap = match (c.success_rate_difference, &c.success_rate_difference_ci95) {
        (Some(d), Some(i)) if i.low <= 0.0 && i.high >= 0.0 => format!(
            "; the data cannot tell their success apart (gap {}, 95% CI {})",
            points(d),
            ci_points(i)
        ),
        (Some(d), Some(i)) => format!(
            "; `{}` succeeds {} {} often (95% CI {})",
            c.large,
            points(d.abs()).trim_start_matches('+'),
            if d > 0.0 { "more" } else { "less" },
            ci_points(i)
        ),
        _ => String::new(),
    };
    format!(
        "`{}` succeeded in {} of its conversations and `{}` in {}{gap}.",
        c.small,
        of(&c.small, c.ci95.success_rate_small.as_ref()),
        c.large,
        of(&c.large, c.ci95.success_rate_large.as_ref()),
    )
}

/// `Per successful task, `a` used 1,234 tokens (95% CI 1,100–1,400) and `b` 2,345 tokens (95%
/// CI 2,000–2,800).`, and the energy the same way where both have it.
fn per_success(g: &GroupSummary, c: &Comparison) -> String {
    let (small, large) = (g.models.get(&c.small), g.models.get(&c.large));
    let tokens_of = |m: Option<&ModelSummary>| tokens_per_success(m);
    let mut out = format!(
        "Per successful task, `{}` used {} and `{}` {}.",
        c.small,
        tokens_of(small),
        c.large,
        tokens_of(large)
    );
    if let (Some(a), Some(b)) = (small.and_then(energy), large.and_then(energy)) {
        out.push_str(&format!(
            " Energy per successful task: `{}` {a}, `{}` {b}.",
            c.small, c.large
        ));
    }
    out
}

/// A model's tokens per successful task with its interval: `1,234 tokens (95% CI 1,100–1,400)`.
fn tokens_per_success(m: Option<&ModelSummary>) -> String {
    let Some(m) = m else {
        return NOT_AVAILABLE.into();
    };
    let Some(x) = m.tokens.blended_per_success else {
        return format!("{NOT_AVAILABLE} (no success)");
    };
    with_ci(
        format!("{} tokens", tokens(x)),
        m.per_success_ci95.tokens.as_ref(),
        0,
        "",
    )
}

/// A model's energy per successful task with its interval, where it has one.
fn energy(m: &ModelSummary) -> Option<String> {
    let x = m.gpu.as_ref()?.energy_per_success_j?;
    Some(with_ci(
        format!("{} J", number(x, 1)),
        m.per_success_ci95.energy_j.as_ref(),
        1,
        " J",
    ))
}

/// `value (95% CI low–high)`, the value alone without an interval.
fn with_ci(value: String, i: Option<&Interval>, decimals: usize, unit: &str) -> String {
    match i {
        Some(_) => format!("{value} (95% CI {})", ci_amount(i, decimals, unit)),
        None => value,
    }
}

/// The break-even read out as the price at which the small model stops being cheaper.
fn break_even(c: &Comparison) -> String {
    let Some(r) = c.break_even.filter(|r| r.is_finite() && *r > 0.0) else {
        return format!(
            "Break-even {NOT_AVAILABLE}: one of the two has no successful task to price."
        );
    };
    let ci = c.ci95.break_even.as_ref();
    let interval = ci.map_or(String::new(), |i| {
        format!(" (95% CI {})", ci_ratio(i.low, i.high))
    });
    let reading = if r >= 1.0 {
        format!(
            "`{}` is cheaper per solved task only if its price per token is below 1/{} of `{}`'s",
            c.small,
            ratio(r).trim_end_matches('x'),
            c.large
        )
    } else {
        format!(
            "`{}` is cheaper per solved task unless its price per token is above {} `{}`'s",
            c.small,
            ratio(1.0 / r),
            c.large
        )
    };
    let undecided = ci.is_some_and(|i| i.low <= 1.0 && i.high >= 1.0);
    let caveat = if undecided {
        "; the interval includes 1x, so at equal prices per token the data cannot tell which is \
         cheaper"
    } else {
        ""
    };
    format!("Break-even {}{interval}: {reading}{caveat}.", ratio(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::runner::record::{ConversationRecord, Manifest};

    /// `model`'s trial 0 of tasks T0..T9, passing the first `passes`, each call of `tokens`.
    fn played(model: &str, passes: usize, tokens: u64) -> Vec<ConversationRecord> {
        (0..10)
            .map(|i| {
                conversation(
                    model,
                    &format!("T{i}"),
                    0,
                    i < passes,
                    vec![call(tokens, 0)],
                )
            })
            .collect()
    }

    fn verdict_of(records: &[ConversationRecord]) -> String {
        let manifest = Manifest {
            run_id: "r".into(),
            settings: serde_json::json!({"suites": ["store"]}),
            ..Manifest::default()
        };
        let s = summarize(&manifest, records, &[], &AnalysisOptions::default());
        verdict(&s).expect("a verdict")
    }

    #[test]
    fn the_verdict_reads_the_break_even_out_as_a_price_and_says_when_it_cannot_tell() {
        let mut records = played("alpha", 5, 300);
        records.extend(played("beta", 10, 100));
        let v = verdict_of(&records);
        assert!(
            v.starts_with("On `store`: `alpha` succeeded in 50.0% (95% CI"),
            "{v}"
        );
        assert!(v.contains("`beta` succeeds 50.0 pp more often"), "{v}");
        // Each per-success figure carries its interval.
        assert!(
            v.contains("`alpha` used 600 tokens (95% CI ")
                && v.contains("`beta` 100 tokens (95% CI "),
            "{v}"
        );
        assert!(
            v.contains("Break-even 6.00x (95% CI")
                && v.contains("`alpha` is cheaper per solved task only if its price per token is below 1/6.00 of `beta`'s."),
            "{v}"
        );
        let mut same = played("alpha", 10, 100);
        same.extend(played("beta", 10, 100));
        let v = verdict_of(&same);
        assert!(
            v.contains("the data cannot tell their success apart"),
            "{v}"
        );
        assert!(
            v.contains(
                "the interval includes 1x, so at equal prices per token the data cannot tell"
            ),
            "{v}"
        );
    }

    #[test]
    fn one_model_gets_its_figures_and_why_there_is_no_break_even() {
        let v = verdict_of(&played("alpha", 5, 300));
        assert!(v.contains("`alpha` succeeded in 50.0%"), "{v}");
        assert!(
            v.contains("used 600 tokens (95% CI ") && v.contains(") per successful task"),
            "{v}"
        );
        assert!(v.contains("No break-even: it needs two models"), "{v}");
    }
}
