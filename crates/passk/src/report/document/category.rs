//! Success by task category, one column per model.

use super::format::NOTHING_GRADED;
use super::model_table::ModelTable;
use super::pass_k::bracketed_ci;
use crate::analysis::{ModelSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, denominator, percent_with_n};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Success by task category, each rate with its own denominator note when something was excluded.
pub(super) fn by_category(out: &mut String, s: &Summary, models: &[(&str, &ModelSummary)]) {
    let cats: BTreeSet<&String> = models
        .iter()
        .flat_map(|(_, m)| m.by_category.keys())
        .collect();
    if cats.is_empty() {
        return;
    }
    out.push_str("### By category\n\n");
    let _ = writeln!(
        out,
        "Success rate (passes / graded conversations), with its 95% interval{} in brackets: \
         exact over the category's tasks as clusters (metrics.md \"Intervals at the boundary\").\n",
        crate::report::stopping::mark(s)
    );
    let mut t = ModelTable::new(s, "category", models);
    for c in cats {
        t.row(c.clone(), |m| {
            m.by_category.get(c).map_or_else(
                || NOT_AVAILABLE.into(),
                |x| {
                    if x.conversations == 0 {
                        return format!("{NOT_AVAILABLE} ({NOTHING_GRADED})");
                    }
                    let note = if x.outcomes.graded == x.outcomes.total {
                        String::new()
                    } else {
                        format!(" ({})", denominator(&x.outcomes))
                    };
                    let ci = bracketed_ci(x.ci95);
                    let ci = if ci.is_empty() { ci } else { format!(" {ci}") };
                    format!(
                        "{}{ci}{note}",
                        percent_with_n(x.passes as u64, x.conversations as u64),
                    )
                },
            )
        });
    }
    out.push_str(&t.render());
    out.push('\n');
}
