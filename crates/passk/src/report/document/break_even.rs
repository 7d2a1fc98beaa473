//! The Break-even section: the price ratio at which the small model costs the same per success as
//! the large one, its interval, and how the bootstrap's resamples split.

use super::format::{NO_CORRECT, ci_points, nothing_graded, opt, points};
use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{GroupSummary, Summary};
use crate::report::number::{
    NOT_AVAILABLE, ci_ratio, counted, denominator, number, percent, ratio,
};
use crate::report::table::MarkdownTable;
use std::fmt::Write as _;

/// The denominators of a small-vs-large figure: `` `a`: n = 118 of 120; 2 transport; `b`: n = 120 ``.
pub(super) fn pair_note(g: &GroupSummary, c: &crate::analysis::Comparison) -> String {
    let note = |m: &str| {
        g.models
            .get(m)
            .map_or(NOT_AVAILABLE.to_string(), |x| denominator(&x.outcomes))
    };
    format!(
        "`{}`: {}; `{}`: {}",
        c.small,
        note(&c.small),
        c.large,
        note(&c.large)
    )
}

/// A break-even point: the ratio; `∞` when the small model never passed and the large one did
/// (no finite ratio, as in the resamples counted infinite); `n/a` naming the model with 0 correct
/// when the large one never passed, or the model with nothing graded (every conversation ended
/// by the wire: no figure of the model's, and no blame). Without a finite point the summary holds
/// no interval.
pub(super) fn break_even_point(
    g: &GroupSummary,
    c: &crate::analysis::Comparison,
    value: Option<f64>,
) -> String {
    let graded = |m: &str| g.models.get(m).map_or(0, |x| x.outcomes.graded);
    if let (None, Some(text)) = (value, nothing_graded([&c.small, &c.large], graded)) {
        return text;
    }
    let passes = |m: &str| g.models.get(m).map_or(0, |x| x.passes);
    match (value, passes(&c.small), passes(&c.large)) {
        (Some(v), _, _) => ratio(v),
        (None, 0, 0) => NO_CORRECT.into(),
        (None, 0, _) => format!("∞ (`{}`: 0 correct)", c.small),
        (None, _, 0) => format!("{NOT_AVAILABLE} (`{}`: 0 correct)", c.large),
        (None, _, _) => NOT_AVAILABLE.into(),
    }
}

/// How a paired bootstrap's resamples split, every one of them accounted for: `both models passed
/// in 9,000; `a` never passed in 700 (an infinite ratio, kept in the interval); ...`.
/// `verbs` says what a success is (both models, one never, neither), e.g. ("passed", "never
/// passed", "passed") or ("were right", "was never right", "was right").
/// Where no interval is shown (`shown` false) the split says nothing of one.
pub fn resample_split(
    (small, large): (&str, &str),
    [defined, infinite, zero, undefined]: [usize; 4],
    (both, never, neither): (&str, &str, &str),
    shown: bool,
) -> String {
    let n = |x: usize| number(x as f64, 0);
    let (kept, left) = if shown {
        (", kept in the interval", ", left out")
    } else {
        ("", "")
    };
    format!(
        "both models {both} in {}; `{small}` {never} in {} (an infinite ratio{kept}); `{large}` \
         {never} in {} (a ratio of 0{kept}); neither {neither} in {} (no ratio{left})",
        n(defined),
        n(infinite),
        n(zero),
        n(undefined)
    )
}

pub(super) fn break_even(
    out: &mut String,
    s: &Summary,
    g: &GroupSummary,
    c: &crate::analysis::Comparison,
) {
    let ci = &c.ci95;
    let notes = pair_note(g, c);
    out.push_str("### Break-even\n\n");
    let bootstrap = if ci.tasks == 0 {
        "No paired bootstrap: no task has graded conversations of both models".to_string()
    } else {
        format!(
            "Paired bootstrap over {}, {} (seed {}): {}",
            counted(ci.tasks, "task"),
            counted(ci.resamples, "resample"),
            ci.seed,
            resample_split(
                (&c.small, &c.large),
                split_counts!(ci),
                ("passed", "never passed", "passed"),
                ci.break_even.is_some()
            )
        )
    };
    let _ = writeln!(
        out,
        "How many times cheaper per token `{}` must be than `{}` to cost the same per successful \
         task (tokens per successful task, small / large; {notes}). {bootstrap}.\n",
        c.small, c.large,
    );
    let mark = crate::report::stopping::mark(s);
    out.push_str(&break_even_table(s, g, c, mark).render());
    out.push('\n');
    let sequence = crate::report::stopping::sequence_for(s, g).map_or(String::new(), |i| {
        format!("; confidence sequence {i}, valid after optional stopping")
    });
    let _ = writeln!(
        out,
        "Success-rate gap (large minus small): {}{sequence}, 95% CI{mark} {} (the two rates' \
         intervals with their correlation over the tasks{}) ({notes}).\n",
        opt(c.success_rate_difference, points),
        c.success_rate_difference_ci95
            .as_ref()
            .map_or(NOT_AVAILABLE.into(), ci_points),
        reference_gap(ci.success_rate_difference.as_ref()),
    );
}

/// The paired bootstrap's interval of the gap, as the reference computes it, for the sentence
/// beside the reported one; nothing where every resample agreed, since a point interval would read
/// as a certainty the tasks do not give.
fn reference_gap(bootstrap: Option<&Interval>) -> String {
    match bootstrap {
        Some(i) if i.low < i.high => {
            format!(
                "; the paired bootstrap, as the reference computes it: {}",
                ci_points(i)
            )
        }
        _ => String::new(),
    }
}

/// How many of a paired bootstrap's resamples gave an infinite break-even: `12 of 10,000`.
pub fn infinite_resamples(ci: &crate::analysis::intervals::bootstrap::TaskBootstrap) -> String {
    format!(
        "{} of {}",
        number(ci.resamples_with_infinite_break_even as f64, 0),
        number(ci.resamples as f64, 0)
    )
}

/// The break-even ratios: plain, with the re-sent prefix discounted, for the pipeline, at each
/// output weight, and for energy, with their intervals where the bootstrap computed one.
fn break_even_table(
    s: &Summary,
    g: &GroupSummary,
    c: &crate::analysis::Comparison,
    mark: &str,
) -> MarkdownTable {
    let ci = &c.ci95;
    let mut t = MarkdownTable::new(["break-even".into(), "ratio".into(), format!("95% CI{mark}")]);
    t.numeric_after_first();
    let ci_text = |i: Option<Interval>| i.map_or(NOT_AVAILABLE.into(), |i| ci_ratio(i.low, i.high));
    t.row([
        "Plain".to_string(),
        break_even_point(g, c, c.break_even),
        ci_text(ci.break_even),
    ]);
    t.row([
        format!("Re-sent prefix at {}", percent(s.settings.cache_discount)),
        break_even_point(g, c, c.break_even_cached),
        ci_text(ci.break_even_cached),
    ]);
    if c.break_even_pipeline.is_some() || ci.break_even_pipeline.is_some() {
        t.row([
            "Pipeline (router + orchestrator)".to_string(),
            break_even_point(g, c, c.break_even_pipeline),
            ci_text(ci.break_even_pipeline),
        ]);
    }
    for (w, v) in &c.break_even_by_output_weight {
        t.row([
            format!("Output tokens weighted {w}x"),
            break_even_point(g, c, *v),
            String::new(),
        ]);
    }
    if let Some(e) = c.break_even_energy {
        t.row([
            "Energy per successful task".to_string(),
            ratio(e),
            String::new(),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_references_gap_is_shown_beside_the_reported_one_only_where_its_resamples_differ() {
        let flat = Interval {
            low: 0.0,
            high: 0.0,
        };
        let wide = Interval {
            low: 0.13,
            high: 0.42,
        };
        assert_eq!(reference_gap(Some(&flat)), "");
        assert_eq!(reference_gap(None), "");
        assert_eq!(
            reference_gap(Some(&wide)),
            format!(
                "; the paired bootstrap, as the reference computes it: {}",
                ci_points(&wide)
            )
        );
    }
}
