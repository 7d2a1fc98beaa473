//! The report's section on a run played with `--stop-when-decided`: whether and why it stopped,
//! the confidence sequence round by round (a table and a chart), and the warning that the fixed-k
//! bootstrap intervals elsewhere in the report are not valid after optional stopping.

use crate::analysis::sequence::{Decision, RoundState};
use crate::analysis::stopping::{Pairing, states};
use crate::report::document::Report;
use crate::report::markdown::MarkdownTable;
use crate::report::svg::{Labels, LineChart, Reference, Series};
use crate::runner::settings::RunSettings;
use std::fmt::Write as _;

/// File name of the sequence's chart inside the charts directory.
pub const CHART: &str = "confidence_sequence.svg";

/// The run's stopping rule, pairing and round states; `None` for a run without the rule.
fn stopped_run(r: &Report) -> Option<(RunSettings, Pairing, Vec<RoundState>)> {
    let settings: RunSettings = serde_json::from_value(r.manifest.settings.clone()).ok()?;
    let pairing = Pairing::of(&settings)?;
    let rounds = states(&settings, r.conversations)?;
    Some((settings, pairing, rounds))
}

fn pp(x: f64) -> String {
    format!("{:+.1} pp", 100.0 * x)
}

/// The section in `report.md`; empty for a run without the rule.
pub fn section(r: &Report) -> String {
    let Some((settings, pairing, rounds)) = stopped_run(r) else {
        return String::new();
    };
    let Some(stop) = settings.stop else {
        return String::new();
    };
    let mut out = String::from("## Stopping rule\n\n");
    let last = rounds.last();
    let _ = match last {
        Some(s) if s.decision.stops() && s.round + 1 < settings.trials => writeln!(
            out,
            "**Stopped early** after round {} of {} (k cap): {}.\n",
            s.round + 1,
            settings.trials,
            s.decision.describe()
        ),
        Some(s) if s.decision.stops() => writeln!(
            out,
            "Decided at the last round allowed ({} of {}): {}.\n",
            s.round + 1,
            settings.trials,
            s.decision.describe()
        ),
        Some(s) if s.round + 1 >= settings.trials => writeln!(
            out,
            "Reached the k cap ({} rounds) undecided.\n",
            settings.trials
        ),
        _ => writeln!(
            out,
            "Not decided yet after {} complete round(s) of {} (the run is unfinished).\n",
            rounds.len(),
            settings.trials
        ),
    };
    let _ = writeln!(
        out,
        "Each round plays every task once per model. After each complete round an anytime-valid \
         confidence sequence (betting, alpha = {}) for the task-paired success difference `{}` - \
         `{}` on the `{}` suite's tasks is updated; the run stops when it excludes 0, or lies \
         within ±{} pp (equivalent within the margin), or at the k cap.\n",
        stop.alpha, pairing.large, pairing.small, pairing.suite, stop.margin_pp
    );
    out.push_str(
        "The bootstrap intervals elsewhere in this report assume a fixed number of trials chosen \
         in advance: they are **not valid after optional stopping**. The sequence's interval \
         below is: it covers the true difference at every round with probability at least \
         1 - alpha, whenever the run stopped.\n\n",
    );
    let mut t = MarkdownTable::new(
        ["round", "task pairs", "difference", "sequence", "decision"]
            .map(String::from)
            .to_vec(),
    );
    t.numeric_after_first();
    for s in &rounds {
        t.row(vec![
            (s.round + 1).to_string(),
            s.tasks.to_string(),
            pp(s.mean),
            format!("[{}, {}]", pp(s.low), pp(s.high)),
            match s.decision {
                Decision::Continue => "continue".into(),
                d => d.describe().to_string(),
            },
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "\n![confidence sequence](charts/{CHART})\n\nThe round states are also in `rounds.jsonl`.\n"
    );
    out
}

/// The sequence round by round: its low and high ends and the running mean difference, with 0 and
/// the margin as reference lines.
pub fn chart(r: &Report) -> Option<LineChart> {
    let (settings, pairing, rounds) = stopped_run(r)?;
    let margin = settings.stop?.margin_pp;
    let line = |name: &str, f: fn(&RoundState) -> f64| {
        let pts = rounds
            .iter()
            .map(|s| (f64::from(s.round + 1), 100.0 * f(s)))
            .collect();
        Series::new(name, pts)
    };
    let reference = |value: f64, label: String| Reference { value, label };
    let low = rounds.iter().map(|s| 100.0 * s.low).fold(-margin, f64::min);
    let high = rounds.iter().map(|s| 100.0 * s.high).fold(margin, f64::max);
    Some(LineChart {
        integer_x: true,
        y_range: Some(((low - 5.0).max(-100.0), (high + 5.0).min(100.0))),
        x_range: Some((1.0, f64::from(settings.trials).max(2.0))),
        references: vec![
            reference(0.0, "0".into()),
            reference(margin, format!("margin ±{margin} pp")),
            reference(-margin, String::new()),
        ],
        ..LineChart::new(
            Labels::new(
                format!(
                    "Confidence sequence: {} - {} ({})",
                    pairing.large, pairing.small, pairing.suite
                ),
                "round (trials per task)",
                "success difference, pp",
            ),
            vec![
                line("sequence high", |s| s.high),
                line("mean difference", |s| s.mean),
                line("sequence low", |s| s.low),
            ],
        )
    })
}
