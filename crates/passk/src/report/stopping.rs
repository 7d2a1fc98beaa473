//! The report's section on a run played with `--stop-when-decided`: whether and why it stopped,
//! the confidence sequence round by round (a table and a chart), and the warning that the fixed-k
//! bootstrap intervals elsewhere in the report are not valid after optional stopping.

use crate::analysis::planning::stopping::{Standing, Stopping};
use crate::analysis::{GroupSummary, Summary};
use crate::report::document::Report;
use crate::report::svg::{Labels, LineChart, Reference, Series};
use crate::report::table::MarkdownTable;
use crate::runner::record::Mode;
use crate::sequence::{Decision, RoundState};
use std::fmt::Write as _;

/// File name of the sequence's chart inside the charts directory.
pub const CHART: &str = "confidence_sequence.svg";

/// The mark after every fixed-k interval of a run played with `--stop-when-decided`.
pub const MARK: &str = "†";

/// What [`MARK`] means, said once per section that shows such intervals.
pub const MARK_NOTE: &str = "† Fixed-k interval: **not valid after optional stopping** \
    (this run stopped on its confidence sequence; the sequence's interval, in \"Stopping rule\", is \
    valid).";

/// The mark for a fixed-k interval in this summary's report: [`MARK`] for a run played
/// with `--stop-when-decided`, else nothing.
pub fn mark(s: &Summary) -> &'static str {
    if s.stopping.is_some() { MARK } else { "" }
}

/// The subtitle of a chart with fixed-k error bars, for a run played with
/// `--stop-when-decided`.
pub fn chart_note(s: &Summary) -> Option<&'static str> {
    s.stopping
        .as_ref()
        .map(|_| "error bars: fixed-k 95% intervals, not valid after optional stopping")
}

/// The note that explains [`mark`], as a paragraph; empty for a run without the rule.
pub fn mark_note(s: &Summary) -> String {
    if s.stopping.is_some() {
        format!("{MARK_NOTE}\n\n")
    } else {
        String::new()
    }
}

fn pp(x: f64) -> String {
    format!("{:+.1} pp", 100.0 * x)
}

/// The sequence's interval at the last round, `-3.0 pp to +42.0 pp`, when a round was played.
pub fn sequence_interval(st: &Stopping) -> Option<String> {
    st.last()
        .map(|s| format!("{} to {}", pp(s.low), pp(s.high)))
}

/// The sequence's interval at the last round, when `g` is the configuration the rule compares
/// and its break-even pairs the rule's models.
pub fn sequence_for(s: &Summary, g: &GroupSummary) -> Option<String> {
    let st = s.stopping.as_ref()?;
    let p = &st.pairing;
    let c = g.comparison.as_ref()?;
    let same = c.small == p.small
        && c.large == p.large
        && g.suite == p.suite
        && g.mode == Mode::Agent
        && g.call_cap.is_none_or(|n| n == p.call_cap)
        && g.tool_docs.is_none_or(|v| v == p.tool_docs)
        && g.router_in_front.is_none_or(|r| r == p.router_in_front)
        && g.prompt.is_none_or(|v| v == p.prompt);
    same.then(|| sequence_interval(st))?
}

/// The first line of the section: whether the run stopped, and why.
fn standing(st: &Stopping) -> String {
    let rounds = st.rounds.len();
    match st.standing {
        Standing::StoppedEarly => format!(
            "**Stopped early** after round {rounds} of {} (k cap): {}.",
            st.k_cap, st.says
        ),
        Standing::DecidedAtCap => format!(
            "Decided at the last round allowed ({rounds} of {}): {}.",
            st.k_cap, st.says
        ),
        Standing::CapUndecided => {
            format!("Reached the k cap ({} rounds) undecided.", st.k_cap)
        }
        Standing::Waiting => format!(
            "Not decided after {rounds} complete round(s) of {}: round {} waits on {} trial(s) \
             that ended on a wire failure, which the sequence needs graded (resume the run, with \
             `--retry-failed` once they are out of wire tries).",
            st.k_cap,
            st.waiting.as_ref().map_or(0, |w| w.round + 1),
            st.waiting.as_ref().map_or(0, |w| w.ungraded.len()),
        ),
        Standing::Unfinished => format!(
            "Not decided yet after {rounds} complete round(s) of {} (the run is unfinished).",
            st.k_cap
        ),
    }
}

/// The section in `report.md`; empty for a run without the rule.
pub fn section(r: &Report) -> String {
    let Some(st) = &r.summary.stopping else {
        return String::new();
    };
    let p = &st.pairing;
    let mut out = String::from("## Stopping rule\n\n");
    let _ = writeln!(out, "{}\n", standing(st));
    let _ = writeln!(
        out,
        "Each round plays every task once per model. After each complete round an anytime-valid \
         confidence sequence (betting, alpha = {}) for the task-paired success difference `{}` - \
         `{}` ({}) on the `{}` suite's tasks is updated; the run stops when it excludes 0, or lies \
         within ±{} pp (equivalent within the margin), or at the k cap.\n",
        st.alpha, p.large, p.small, p.rule, p.suite, st.margin_pp
    );
    out.push_str(
        "The intervals elsewhere in this report assume a fixed number of trials chosen \
         in advance: they are **not valid after optional stopping**, and each is marked †. The \
         sequence's interval below is: it covers the true difference at every round with \
         probability at least 1 - alpha, whenever the run stopped.\n\n",
    );
    let mut t = MarkdownTable::new(
        ["round", "task pairs", "difference", "sequence", "decision"]
            .map(String::from)
            .to_vec(),
    );
    t.numeric_after_first();
    for s in &st.rounds {
        t.row(vec![
            (s.round + 1).to_string(),
            s.tasks.to_string(),
            pp(s.mean),
            format!("[{}, {}]", pp(s.low), pp(s.high)),
            match s.decision {
                Decision::Continue => "continue".into(),
                d => p.says(d),
            },
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "\n![confidence sequence](charts/{CHART})\n\nThe round states are also in `rounds.jsonl` \
         and, with the pair and where the run stands, under `stopping` in `summary.json`.\n"
    );
    out
}

/// The sequence round by round: its low and high ends and the running mean difference, with 0 and
/// the margin as reference lines.
pub fn chart(r: &Report) -> Option<LineChart> {
    let st = r.summary.stopping.as_ref()?;
    let (pairing, rounds, margin) = (&st.pairing, &st.rounds, st.margin_pp);
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
        x_range: Some((1.0, f64::from(st.k_cap).max(2.0))),
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
