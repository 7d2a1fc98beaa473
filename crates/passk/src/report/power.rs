//! `passk plan`'s answer as Markdown: what was asked of which pilot, how it was simulated, one row
//! per design (tasks x k) with its power, its bias-corrected assurance, its false-positive rate
//! and its GPU time, and the cheapest design that reaches the wanted power.

use super::number::percent;
use super::table::MarkdownTable;
use crate::analysis::planning::power::{DesignRow, Plan, Question};
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
         the interval the report takes: {}. Power is the share of experiments that settle the \
         question; \"false positives\" is the share that declare a \
         difference when both models play at the smaller one's rates. Seed {}.\n",
        plan.options.simulations,
        match plan.question {
            Question::Difference { .. } => "the two rates' intervals with their correlation over \
                 the tasks (docs/reference/metrics.md, \"Intervals at the boundary\")"
                .to_string(),
            Question::BreakEvenBelow { .. } => format!(
                "a paired task bootstrap ({} resamples)",
                plan.options.resamples
            ),
        },
        plan.options.seed
    );
    let _ = writeln!(out, "{}\n", assurance_method(plan));
    let mut t = MarkdownTable::new([
        "tasks",
        "k",
        "conversations per model",
        "power",
        "assurance, corrected (interval)",
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
            r.assurance.map_or("n/a".into(), |a| {
                format!(
                    "{} ({}-{})",
                    percent(a.mean),
                    percent(a.low),
                    percent(a.high)
                )
            }),
            r.false_positive.map_or("n/a".into(), percent),
            r.gpu_seconds.map_or("unknown".into(), hours),
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", recommendation(plan));
    if !plan.too_small.is_empty() {
        let _ = writeln!(
            out,
            "\nWarning: the pilot is too small to choose a design: {}. Run a larger pilot \
             (more tasks or trials) before trusting the choice.",
            plan.too_small.join("; ")
        );
    }
    out
}

/// The sentence saying how the assurance was taken, or why there is none.
fn assurance_method(plan: &Plan) -> String {
    match plan.rows.first().and_then(|r| r.assurance) {
        Some(a) => format!(
            "Assurance: the mean power over {} plausible pilots (the pilot's tasks resampled \
             with replacement, each task's rate shrunk toward its model's mean), corrected for \
             its bias: pilots of this size simulated at the shrunk rates give an assurance that \
             misses the power at those rates, and the assurance is moved by that miss, in \
             log-odds. The interval runs from the lower of the 10th percentiles of power over the \
             plausible pilots, before and after the same move, to the higher of the 90th. The \
             power column is not corrected (the pilot's own rates, which a pilot of few trials \
             per task puts low at high power). The recommendation compares the corrected \
             assurance with the wanted power.",
            a.draws
        ),
        None => "Assurance: n/a (stated rates, or --assurance-draws 0, carry no pilot \
                 uncertainty); the recommendation compares point power with the wanted power."
            .into(),
    }
}

/// The line naming the cheapest design that reaches the wanted power, or saying none does.
fn recommendation(plan: &Plan) -> String {
    let wanted = percent(plan.options.power);
    match &plan.recommended {
        Some(r) => format!(
            "Fewest conversations with {} >= {wanted}: {} tasks x k = {} ({} conversations per \
             model{}).",
            plan.recommended_by,
            r.tasks,
            r.k,
            r.tasks * r.k,
            gpu_note(r)
        ),
        None => format!(
            "No design tried reaches {} {wanted}: try more trials (--k) or more tasks (--tasks).",
            plan.recommended_by
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
