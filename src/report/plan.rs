//! `passk plan`'s answer as Markdown: what was asked of which pilot, how it was simulated, one row
//! per design (tasks x k) with its power, its false-positive rate and its GPU time, and the
//! cheapest design that reaches the wanted power.

use super::markdown::{MarkdownTable, percent};
use crate::analysis::plan::{DesignRow, Plan, Question};
use std::fmt::Write as _;

/// The plan as a Markdown document.
pub fn markdown(plan: &Plan) -> String {
    let mut out = String::new();
    let (small, large) = plan.pilot_rates;
    let _ = writeln!(out, "# Plan\n");
    let _ = writeln!(
        out,
        "Pilot: {} ({} tasks; `{}` {:.1}%, `{}` {:.1}%, mean over tasks; difference {:+.1} pp).\n",
        plan.source,
        plan.pilot_tasks,
        plan.small,
        100.0 * small,
        plan.large,
        100.0 * large,
        100.0 * (large - small)
    );
    let level = 100.0 * (1.0 - plan.options.alpha);
    let asked = match plan.question {
        Question::Difference { stated: None } => format!(
            "the paired {level:.0}% interval of the success difference excludes 0, at the pilot's \
             own per-task rates"
        ),
        Question::Difference { stated: Some(d) } => format!(
            "the paired {level:.0}% interval of the success difference excludes 0, when the larger \
             model is {:+.1} pp better (its per-task rates: the smaller model's, moved on the logit scale)",
            100.0 * d
        ),
        Question::BreakEvenBelow { ratio } => format!(
            "the {level:.0}% interval of the break-even price ratio lies wholly below {ratio}x \
             (resamples where the smaller model never passes count as infinite)"
        ),
    };
    let _ = writeln!(out, "Question: {asked}.\n");
    let _ = writeln!(
        out,
        "Method: {} simulated experiments per design; each draws its tasks with replacement from \
         the pilot's, plays k trials per task and model at that task's pilot pass rate, and takes \
         a paired task bootstrap ({} resamples) as the report does. Power is the share of \
         experiments that settle the question; \"false positives\" is the share that declare a \
         difference when both models play at the smaller one's rates. Seed {}.\n",
        plan.options.simulations, plan.options.resamples, plan.options.seed
    );
    let mut t = MarkdownTable::new([
        "tasks",
        "k",
        "conversations per model",
        "power",
        "false positives",
        "GPU time",
    ]);
    t.numeric_after_first();
    for r in &plan.rows {
        t.row([
            r.tasks.to_string(),
            r.k.to_string(),
            (r.tasks * r.k).to_string(),
            percent(r.power),
            r.false_positive.map_or("n/a".into(), percent),
            r.gpu_seconds.map_or("unknown".into(), hours),
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", recommendation(plan));
    out
}

/// The line naming the cheapest design that reaches the wanted power, or saying none does.
fn recommendation(plan: &Plan) -> String {
    let wanted = percent(plan.options.power);
    match &plan.recommended {
        Some(r) => format!(
            "Fewest conversations with power >= {wanted}: {} tasks x k = {} ({} conversations per \
             model{}).",
            r.tasks,
            r.k,
            r.tasks * r.k,
            gpu_note(r)
        ),
        None => format!(
            "No design tried reaches power {wanted}: try more trials (--k) or more tasks (--tasks)."
        ),
    }
}

fn gpu_note(r: &DesignRow) -> String {
    r.gpu_seconds.map_or(String::new(), |s| {
        format!(", about {} of GPU time", hours(s))
    })
}

fn hours(seconds: f64) -> String {
    if seconds < 3600.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}
