//! The model ladder: every model compared with the reference model, with break-even ratios.

use super::break_even::{break_even_point, infinite_resamples};
use super::format::{ci_points, model_per_success, opt, points, success_cell, tokens};
use super::order::group_models;
use crate::analysis::{GroupSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, ci_ratio};
use crate::report::table::MarkdownTable;
use std::fmt::Write as _;

/// Every model against the reference model: success gap and break-even, each with its paired
/// bootstrap interval, and whether the model is on the cheapest-per-success frontier.
pub(super) fn model_ladder(out: &mut String, s: &Summary, g: &GroupSummary) {
    let Some(reference) = s.reference_model.as_ref().filter(|_| !g.ladder.is_empty()) else {
        return;
    };
    let costs: Vec<(&str, f64, f64)> = g
        .models
        .iter()
        .filter_map(|(m, x)| Some((m.as_str(), x.success_rate?, x.tokens.blended_per_success?)))
        .collect();
    let front = crate::analysis::figures::cost::frontier(&costs);
    let mark = crate::report::stopping::mark(s);
    let _ = writeln!(
        out,
        "### Model ladder: every model against `{reference}`\n\n\
         Success gap = `{reference}` minus the model, with its 95% interval{mark} from the two rates' \
         intervals and their correlation over the tasks both ran; break-even = the model's tokens \
         per successful task / `{reference}`'s (how many times cheaper per token it must be), with \
         its paired bootstrap 95% interval{mark} over those tasks; resamples in which the model \
         never passed and `{reference}` did give an infinite break-even, kept in the interval and \
         counted (\"∞ resamples\"). Frontier: no other model has at least the same success for \
         fewer tokens per success.\n"
    );
    let mut t = MarkdownTable::new([
        "model".to_string(),
        "success (n)".to_string(),
        format!("success gap [95% CI{mark}]"),
        format!("break-even [95% CI{mark}]"),
        "∞ resamples".to_string(),
        "tokens per success".to_string(),
        "frontier".to_string(),
    ]);
    t.numeric_after_first();
    for (name, m) in group_models(s, g) {
        let on = if front.contains(&name) { "yes" } else { "" };
        let base = [success_cell(m)];
        let pair = g.ladder.get(name).map_or_else(
            || ["(reference)".to_string(), String::new(), String::new()],
            |c| ladder_cells(g, c),
        );
        let mut row = vec![format!("`{name}`")];
        row.extend(base);
        row.extend(pair);
        row.push(model_per_success(m, m.tokens.blended_per_success, tokens));
        row.push(on.to_string());
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
}

/// A model's gap, break-even and infinite resamples against the reference, each with its interval.
fn ladder_cells(g: &GroupSummary, c: &crate::analysis::Comparison) -> [String; 3] {
    [
        format!(
            "{} [{}]",
            opt(c.success_rate_difference, points),
            c.success_rate_difference_ci95
                .as_ref()
                .map_or(NOT_AVAILABLE.into(), ci_points)
        ),
        format!(
            "{} [{}]",
            break_even_point(g, c, c.break_even),
            c.ci95
                .break_even
                .map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high))
        ),
        infinite_resamples(&c.ci95),
    ]
}
