//! Calibration of the model ladder: a pass of three or more stub models of known sizes (oracles and
//! the flawed model) on a few store tasks. The reference must be the largest model and the ladder
//! must hold every other; each model's success gap against the reference must be what the stub was
//! told (an oracle passes everything, the flawed model what its mistake plan says), an oracle's
//! gap and break-even against an oracle reference exactly 0 and 1, the break-even's interval exactly
//! that point and the gap's the boundary-safe ±(1 − 0.025^(1/T)) over T tasks, each break-even the ratio of tokens per success recomputed from the raw calls, and the
//! frontier the models no other dominates on those recomputed figures.

use crate::analysis::calibration::Check;
use crate::analysis::figures::cost::{blended_calls, frontier};
use crate::analysis::{AnalysisOptions, Comparison, Run, Summary, summarize};
use crate::scripted::ExpectedTrial;
use std::collections::BTreeMap;

/// A model of the ladder pass and what the stub was told to do with it.
pub enum Rung<'a> {
    /// Replays the gold trajectories: passes every trial.
    Oracle,
    /// Follows the mistake plan: these are its trials on the tasks the pass played.
    Flawed(&'a [ExpectedTrial]),
}

impl Rung<'_> {
    /// The success rate the stub's configuration implies.
    fn expected_success(&self) -> Option<f64> {
        match self {
            Rung::Oracle => Some(1.0),
            Rung::Flawed(plan) => (!plan.is_empty())
                .then(|| plan.iter().filter(|e| e.passes).count() as f64 / plan.len() as f64),
        }
    }
}

/// (success rate, blended tokens per success) of one model, from its graded records.
fn recomputed(run: &Run, model: &str, w: f64) -> Option<(f64, f64)> {
    let graded: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.model == model && c.outcome.is_graded())
        .collect();
    let passes = graded.iter().filter(|c| c.verdict.passed).count() as f64;
    let tokens: f64 = graded
        .iter()
        .map(|c| blended_calls(c.orchestrator_calls(), w))
        .sum();
    (passes > 0.0).then(|| (passes / graded.len() as f64, tokens / passes))
}

fn check(name: String, expected: impl ToString, observed: impl ToString) -> Check {
    Check {
        name,
        expected: expected.to_string(),
        observed: observed.to_string(),
    }
}

fn six(x: Option<f64>) -> String {
    x.map_or("none".into(), |x| format!("{x:.6}"))
}

/// Every check of the ladder pass; `rungs` names each model of the run (the largest, `largest`,
/// must be an oracle for the interval checks to apply).
pub fn ladder_checks(run: &Run, largest: &str, rungs: &[(&str, Rung<'_>)]) -> Vec<Check> {
    let opts = AnalysisOptions {
        resamples: 200,
        ..AnalysisOptions::default()
    };
    let summary = summarize(&run.manifest, &run.conversations, &run.router, &opts);
    let mut out = vec![check(
        "ladder: reference model (the largest)".into(),
        largest,
        summary.reference_model.as_deref().unwrap_or("none"),
    )];
    let Some(g) = summary.groups.get("store") else {
        out.push(check("ladder: store results".into(), "present", "absent"));
        return out;
    };
    let mut others: Vec<&str> = rungs
        .iter()
        .map(|r| r.0)
        .filter(|m| *m != largest)
        .collect();
    others.sort_unstable();
    out.push(check(
        "ladder: models against the reference".into(),
        others.join(", "),
        g.ladder.keys().cloned().collect::<Vec<_>>().join(", "),
    ));
    let w = opts.output_weight;
    let reference = recomputed(run, largest, w);
    for (model, rung) in rungs.iter().filter(|r| r.0 != largest) {
        let c = g.ladder.get(*model);
        out.extend(rung_checks(run, model, rung, c, reference, w));
    }
    out.push(frontier_check(run, &summary, rungs, w));
    out
}

/// One model against the reference: its gap as configured, its break-even as recomputed, and for
/// an oracle the point intervals.
fn rung_checks(
    run: &Run,
    model: &str,
    rung: &Rung<'_>,
    c: Option<&Comparison>,
    reference: Option<(f64, f64)>,
    w: f64,
) -> Vec<Check> {
    let mine = recomputed(run, model, w);
    let expected_gap = rung.expected_success().map(|s| 1.0 - s);
    let expected_break_even = mine.zip(reference).map(|((_, a), (_, b))| a / b);
    let mut out = vec![
        check(
            format!("ladder {model}: success gap to the reference"),
            six(expected_gap),
            six(c.and_then(|c| c.success_rate_difference)),
        ),
        check(
            format!("ladder {model}: break-even (tokens per success / the reference's)"),
            six(expected_break_even),
            six(c.and_then(|c| c.break_even)),
        ),
    ];
    if matches!(rung, Rung::Oracle) {
        let point = |i: Option<crate::analysis::intervals::bootstrap::Interval>| {
            i.map_or("none".into(), |i| format!("[{:.6}, {:.6}]", i.low, i.high))
        };
        // Both at 100% over T tasks: each rate's interval reaches down to 0.025^(1/T), so the gap's
        // (Newcombe's, at the boundary) is ±(1 − 0.025^(1/T)), never the point [0, 0].
        let tasks = c.map_or(0, |c| c.ci95.tasks) as f64;
        let half = 1.0 - 0.025f64.powf(1.0 / tasks);
        out.push(check(
            format!("ladder {model}: gap and break-even intervals (an oracle's)"),
            format!("[{:.6}, {half:.6}] [{:.6}, {:.6}]", -half, 1.0, 1.0),
            c.map_or("none".into(), |c| {
                format!(
                    "{} {}",
                    point(c.success_rate_difference_ci95),
                    point(c.ci95.break_even)
                )
            }),
        ));
    }
    out
}

/// The frontier the report marks against the models no other dominates on the recomputed success
/// and tokens per success.
fn frontier_check(run: &Run, summary: &Summary, rungs: &[(&str, Rung<'_>)], w: f64) -> Check {
    let points: Vec<(&str, f64, f64)> = rungs
        .iter()
        .filter_map(|(m, _)| recomputed(run, m, w).map(|(s, t)| (*m, s, t)))
        .collect();
    let marked: BTreeMap<&str, (f64, f64)> = summary
        .groups
        .get("store")
        .map(|g| {
            g.models
                .iter()
                .filter_map(|(m, x)| {
                    Some((m.as_str(), (x.success_rate?, x.tokens.blended_per_success?)))
                })
                .collect()
        })
        .unwrap_or_default();
    let marked: Vec<(&str, f64, f64)> = marked.iter().map(|(m, (s, t))| (*m, *s, *t)).collect();
    let names = |p: &[(&str, f64, f64)]| {
        let mut on = frontier(p);
        on.sort_unstable();
        on.join(", ")
    };
    check(
        "ladder: cheapest-per-success frontier".into(),
        names(&points),
        names(&marked),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladder_unlike_what_the_stub_was_told_fails_its_checks() {
        // m:1b passes 1 of 3 tasks, m:14b 2, m:3b 3: told they are all oracles, the gaps and the
        // oracle intervals must fail while the reference, the model list and the recomputed
        // break-evens and frontier hold.
        let (manifest, conversations) = crate::analysis::fixtures::ladder_run();
        let run = Run::of_records("r".into(), manifest, conversations, vec![]);
        let rungs = [
            ("m:1b", Rung::Oracle),
            ("m:3b", Rung::Oracle),
            ("m:14b", Rung::Oracle),
        ];
        let checks = ladder_checks(&run, "m:14b", &rungs);
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.passed())
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "ladder m:1b: success gap to the reference",
                "ladder m:1b: gap and break-even intervals (an oracle's)",
                "ladder m:3b: success gap to the reference",
                "ladder m:3b: gap and break-even intervals (an oracle's)",
            ]
        );
        let frontier = checks.last().expect("frontier check");
        assert_eq!(frontier.observed, "m:3b");
    }
}
