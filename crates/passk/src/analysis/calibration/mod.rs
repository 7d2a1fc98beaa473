//! Calibration checks: a run against the stub compared with what the stub was told to do.
//!
//! Three kinds of run are checked. The oracle models replay the gold trajectories, so every graded
//! conversation and router call must pass. The flawed model follows a mistake plan, so its verdicts,
//! success rate, pass^k, failure modes and extra rejected calls are known from the plan alone, and
//! the figures computed from the records must equal them. The faulty model gets injected faults, so
//! the attempts the records bucket as transport and protocol must equal what the stub injected, and
//! no conversation ended by a fault may be graded. Each check is a row with an expected and an
//! observed value; calibration passes when every row matches.

pub mod ladder;

use crate::analysis::figures::passk::pass_hat_k;
use crate::analysis::{AnalysisOptions, Run, summarize};
use crate::runner::record::{CallRecord, ConversationRecord, Mode, Outcome};
use crate::scripted::{ExpectedTrial, FaultKind};
use crate::trace::FailureMode;
use crate::wire::outcome::CallOutcome;
use std::collections::BTreeMap;

/// One calibration check.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// Value the stub's configuration implies.
    pub expected: String,
    /// Value computed from the records.
    pub observed: String,
}

impl Check {
    fn new(name: impl Into<String>, expected: impl ToString, observed: impl ToString) -> Check {
        Check {
            name: name.into(),
            expected: expected.to_string(),
            observed: observed.to_string(),
        }
    }

    /// Whether the observed value equals the expected one.
    pub fn passed(&self) -> bool {
        self.expected == self.observed
    }
}

/// A thinking model: every answered call records its reasoning, with a share of `eval_count`
/// above zero and at most the whole (the oracle checks cover what it answers).
pub fn thinking_checks(run: &Run, model: &str) -> Vec<Check> {
    let answered: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.model == model)
        .flat_map(|c| c.calls.iter())
        .filter(|c| c.outcome == crate::wire::outcome::CallOutcome::Ok)
        .collect();
    let with_thinking = answered.iter().filter(|c| c.thinking.is_some()).count();
    let in_range = answered
        .iter()
        .filter(|c| {
            c.thinking_tokens
                .get()
                .is_some_and(|t| t > 0 && c.timings.eval_count.get().is_some_and(|n| t <= n))
        })
        .count();
    vec![
        Check::new(
            format!("{model}: answered calls recording their thinking"),
            answered.len(),
            with_thinking,
        ),
        Check::new(
            format!("{model}: thinking tokens within eval_count"),
            answered.len(),
            in_range,
        ),
    ]
}

/// A model without the `tools` capability: the run is refused before any trace with Ollama's
/// message (`error` is the run's error text, `None` when it ran).
pub fn no_tools_check(model: &str, error: Option<&str>) -> Check {
    let expected = "refused: does not support tools";
    let observed = match error {
        Some(e) if e.contains("does not support tools") => expected.to_string(),
        Some(e) => format!("refused otherwise: {e}"),
        None => "ran".to_string(),
    };
    Check::new(
        format!("{model}: run refused before any trace"),
        expected,
        observed,
    )
}

/// Every record of the run says it went through `api`, and the run has records.
pub fn api_check(run: &Run, api: crate::wire::chat::ApiKind) -> Check {
    let apis = run.conversations.iter().map(|c| c.api);
    let apis: Vec<_> = apis.chain(run.router.iter().map(|r| r.api)).collect();
    let others = apis.iter().filter(|a| **a != api).count();
    Check::new(
        format!("every record went through the {} API", api.as_str()),
        format!("{} of {}", apis.len(), apis.len().max(1)),
        format!("{} of {}", apis.len() - others, apis.len()),
    )
}

/// The oracle models: every graded conversation and router call passes, follows the gold
/// trajectory and raises no control-flow flag.
pub fn oracle_checks(run: &Run) -> Vec<Check> {
    let summary = summarize(&run.manifest, &run.conversations, &run.router, &quick());
    oracle_checks_of(run, &summary, &summary.models)
}

/// [`oracle_checks`] for some of the run's models only (the others are not oracles).
pub fn oracle_checks_for(run: &Run, models: &[&str]) -> Vec<Check> {
    let summary = summarize(&run.manifest, &run.conversations, &run.router, &quick());
    let models: Vec<String> = models.iter().map(|m| m.to_string()).collect();
    oracle_checks_of(run, &summary, &models)
}

fn oracle_checks_of(
    run: &Run,
    summary: &crate::analysis::Summary,
    models: &[String],
) -> Vec<Check> {
    let mut out = Vec::new();
    for model in models {
        for (group, g) in &summary.groups {
            if g.mode == Mode::Toolless {
                if let Some(m) = g.models.get(model) {
                    out.extend(toolless_checks(run, model, group, g, m));
                }
                continue;
            }
            if let Some(m) = g.models.get(model) {
                let graded = m.outcomes.pass + m.outcomes.model_fail;
                out.push(Check::new(
                    format!("{model} {group}: conversations passing"),
                    format!("{graded}/{graded}"),
                    format!("{}/{graded}", m.passes),
                ));
                // The group's graded conversations of this model (a run may hold several suites).
                let mine: Vec<_> = run
                    .conversations
                    .iter()
                    .filter(|c| &c.model == model && c.outcome.is_graded() && g.holds(c))
                    .collect();
                let traj = mine
                    .iter()
                    .filter(|c| c.verdict.trajectory_correct == Some(true))
                    .count();
                out.push(Check::new(
                    format!("{model} {group}: gold trajectory followed"),
                    graded,
                    traj,
                ));
                let flagged = mine
                    .iter()
                    .filter(|c| raised_flags(&c.verdict.control) > 0)
                    .count();
                out.push(Check::new(
                    format!("{model} {group}: conversations with a control-flow flag"),
                    0,
                    flagged,
                ));
            }
        }
        if let Some(r) = summary.router.get(model) {
            out.push(Check::new(
                format!("{model} router: correct labels"),
                format!("{0}/{0}", r.calls),
                format!("{}/{}", r.correct, r.calls),
            ));
        }
    }
    out
}

/// The oracle's toolless baseline: its replies are the gold replies, so every graded conversation
/// passes the answer checks; one may fail only because its task requires an action
/// (`action_required`), and the failure-mode table must say so.
fn toolless_checks(
    run: &Run,
    model: &str,
    group: &str,
    g: &crate::analysis::GroupSummary,
    m: &crate::analysis::ModelSummary,
) -> Vec<Check> {
    let graded = m.outcomes.graded;
    let action = |c: &crate::runner::record::ConversationRecord| {
        c.verdict.failure_mode == Some(FailureMode::ActionRequired)
    };
    let mine: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.model == model && c.suite == g.suite && c.mode == Mode::Toolless)
        .filter(|c| c.outcome.is_graded())
        .collect();
    let answered = mine
        .iter()
        .filter(|c| c.verdict.passed || action(c))
        .count();
    let needing = mine.iter().filter(|c| action(c)).count();
    let passed = mine.iter().filter(|c| c.verdict.passed).count();
    vec![
        Check::new(
            format!(
                "{model} {group}: toolless replies passing the answer checks \
                 (the report's success, {passed}/{graded}, also fails the tasks needing an action)"
            ),
            format!("{graded}/{graded}"),
            format!("{answered}/{graded}"),
        ),
        Check::new(
            format!("{model} {group}: failures labelled action_required"),
            needing,
            m.failure_modes
                .by_mode
                .get(&FailureMode::ActionRequired)
                .copied()
                .unwrap_or(0),
        ),
    ]
}

/// The flawed model in one suite: verdicts, success, pass^k, failure modes and extra rejected calls
/// equal what the mistake plan implies. `plan` holds the expected trials of that suite's tasks.
pub fn flawed_checks(run: &Run, model: &str, suite: &str, plan: &[ExpectedTrial]) -> Vec<Check> {
    let records: BTreeMap<(String, u32), &ConversationRecord> = run
        .conversations
        .iter()
        .filter(|c| c.model == model && c.suite == suite)
        .map(|c| ((c.task.clone(), c.trial), c))
        .collect();
    let label = format!("{model} {suite}");
    let mut out = Vec::new();
    let mismatched: Vec<String> = plan
        .iter()
        .filter(|e| {
            records
                .get(&(e.task.clone(), e.trial))
                .is_none_or(|r| r.verdict.passed != e.passes)
        })
        .map(|e| format!("{}#{}", e.task, e.trial))
        .collect();
    out.push(Check::new(
        format!("{label}: trials whose verdict differs from the plan"),
        "none",
        if mismatched.is_empty() {
            "none".to_string()
        } else {
            mismatched.join(" ")
        },
    ));
    let expected_passes = plan.iter().filter(|e| e.passes).count();
    let observed_passes = records
        .values()
        .filter(|r| r.outcome == Outcome::Pass)
        .count();
    out.push(Check::new(
        format!("{label}: success"),
        format!("{expected_passes}/{}", plan.len()),
        format!("{observed_passes}/{}", records.len()),
    ));
    out.push(pass_k_check(run, model, suite, plan));
    out.extend(mode_checks(&records, plan, &label));
    out
}

/// pass^k for k = 1..n as the plan implies it, against the run's summary.
fn pass_k_check(run: &Run, model: &str, suite: &str, plan: &[ExpectedTrial]) -> Check {
    let per_task = |passes: &dyn Fn(&str, u32) -> bool| -> Vec<(usize, usize)> {
        let mut t: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for e in plan {
            let entry = t.entry(e.task.as_str()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(passes(&e.task, e.trial));
        }
        t.into_values().collect()
    };
    let expected_k = pass_hat_k(&per_task(&|task, trial| {
        plan.iter()
            .any(|e| e.task == task && e.trial == trial && e.passes)
    }));
    let summary = summarize(&run.manifest, &run.conversations, &run.router, &quick());
    let observed_k = summary
        .groups
        .get(suite)
        .and_then(|g| g.models.get(model))
        .map(|m| m.pass_hat_k.clone())
        .unwrap_or_default();
    Check::new(
        format!("{model} {suite}: pass^k, k = 1..n"),
        fmt_k(&expected_k),
        fmt_k(&observed_k),
    )
}

/// The failure modes of the planned mistakes, and the rejected calls the plan puts in passing
/// trials, against the records (keyed by task and trial).
fn mode_checks(
    records: &BTreeMap<(String, u32), &ConversationRecord>,
    plan: &[ExpectedTrial],
    label: &str,
) -> [Check; 2] {
    let mut expected_modes: BTreeMap<FailureMode, usize> = BTreeMap::new();
    for mode in plan.iter().filter_map(|e| e.failure_mode) {
        *expected_modes.entry(mode).or_default() += 1;
    }
    let mut observed_modes: BTreeMap<FailureMode, usize> = BTreeMap::new();
    for mode in records.values().filter_map(|r| r.verdict.failure_mode) {
        *observed_modes.entry(mode).or_default() += 1;
    }
    let modes = Check::new(
        format!("{label}: failure modes"),
        fmt_modes(&expected_modes),
        fmt_modes(&observed_modes),
    );
    let clean: Vec<&ExpectedTrial> = plan.iter().filter(|e| e.passes).collect();
    let expected_rejected: u32 = clean.iter().map(|e| e.extra_rejected).sum();
    let observed_rejected: usize = clean
        .iter()
        .filter_map(|e| records.get(&(e.task.clone(), e.trial)))
        .map(|r| r.tool_events.iter().filter(|t| !t.ok).count())
        .sum();
    let rejected = Check::new(
        format!("{label}: rejected calls in passing trials"),
        expected_rejected,
        observed_rejected,
    );
    [modes, rejected]
}

/// The faulty model: what the records bucket equals what the stub injected, and a fault never
/// turns into a model failure.
pub fn fault_checks(run: &Run, model: &str, injected: &BTreeMap<FaultKind, u64>) -> Vec<Check> {
    let count = |kinds: &[FaultKind]| -> u64 {
        kinds
            .iter()
            .map(|k| injected.get(k).copied().unwrap_or(0))
            .sum()
    };
    let calls = model_calls(run, model);
    let attempts = |o: CallOutcome| -> u64 {
        calls
            .iter()
            .flat_map(|c| c.attempts.iter())
            .filter(|a| a.outcome == o)
            .count() as u64
    };
    let transport = [
        FaultKind::Reset,
        FaultKind::Hang,
        FaultKind::Http500,
        FaultKind::Http503,
        FaultKind::StreamError,
        FaultKind::TruncatedBody,
    ];
    let protocol = [
        FaultKind::NotFound,
        FaultKind::NoTools,
        FaultKind::NonJsonBody,
    ];
    let mut out = vec![
        Check::new(
            format!(
                "{model}: transport attempts = injected resets, hangs, 500s, 503s, stream errors, cut connections"
            ),
            count(&transport),
            attempts(CallOutcome::Transport),
        ),
        Check::new(
            format!("{model}: protocol attempts = injected 404s, 400s, non-JSON bodies"),
            count(&protocol),
            attempts(CallOutcome::Protocol),
        ),
        Check::new(
            format!("{model}: calls flagged truncated = injected length stops"),
            count(&[FaultKind::Length]),
            calls.iter().filter(|c| c.truncated).count(),
        ),
    ];
    out.extend(blame_checks(run, model));
    out
}

/// Every call `model` made: conversation and router calls, and its warm-up.
fn model_calls<'r>(run: &'r Run, model: &str) -> Vec<&'r CallRecord> {
    let conversations = run
        .conversations
        .iter()
        .filter(|c| c.model == model)
        .flat_map(|c| c.calls.iter());
    let router = run
        .router
        .iter()
        .filter(|r| r.model == model)
        .map(|r| &r.call);
    let warmup = run
        .manifest
        .models
        .iter()
        .filter(|m| m.name == model)
        .filter_map(|m| m.warmup.as_ref());
    conversations.chain(router).chain(warmup).collect()
}

/// That no fault was blamed on the model: no model failure without a truncated reply, and no
/// conversation a fault ended carries a verdict.
fn blame_checks(run: &Run, model: &str) -> [Check; 2] {
    let blamed = run
        .conversations
        .iter()
        .filter(|c| c.model == model && c.outcome == Outcome::ModelFail)
        .filter(|c| !c.calls.iter().any(|k| k.truncated))
        .count()
        + run
            .router
            .iter()
            .filter(|r| r.model == model && r.outcome == Outcome::ModelFail && !r.call.truncated)
            .count();
    let graded_fault = run
        .conversations
        .iter()
        .filter(|c| c.model == model && !c.outcome.is_graded() && c.verdict.failure_mode.is_some())
        .count();
    [
        Check::new(
            format!("{model}: model failures without a truncated reply"),
            0,
            blamed,
        ),
        Check::new(
            format!("{model}: conversations ended by a fault yet graded"),
            0,
            graded_fault,
        ),
    ]
}

/// How many of the four control-flow flags (seed 000) are raised.
fn raised_flags(c: &crate::trace::ControlFlags) -> usize {
    [c.unknown_verb, c.under_tool, c.loop_overrun, c.over_model]
        .iter()
        .filter(|f| **f == Some(true))
        .count()
}

/// The factorial pass: every cell played by every model; each model's documentation effect is
/// `docs_effects[model]` exactly (absent: 0, with an interval symmetric about 0, as for an
/// oracle), and its router effect and docs x router interaction the same; between two models, the docs
/// contrast is the difference of their documentation effects and the router contrast 0.
pub fn factorial_checks(run: &Run, docs_effects: &BTreeMap<String, f64>) -> Vec<Check> {
    let opts = AnalysisOptions {
        resamples: 200,
        ..AnalysisOptions::default()
    };
    let summary = summarize(&run.manifest, &run.conversations, &run.router, &opts);
    let mut out = vec![Check::new(
        "factorial: suites with crossed factors",
        1,
        summary.factorial.len(),
    )];
    let effect_of = |model: &str| docs_effects.get(model).copied().unwrap_or(0.0);
    for f in &summary.factorial {
        for (model, m) in &f.models {
            out.push(Check::new(
                format!("factorial {}: {model} cells played", f.suite),
                f.prompt.len() * f.tool_docs.len() * f.router_in_front.len(),
                m.cells.len(),
            ));
            let docs = effect_of(model);
            for (name, e, expected) in [
                ("docs", &m.docs, docs),
                ("router", &m.router, 0.0),
                ("docs x router", &m.docs_x_router, 0.0),
            ] {
                out.push(effect_check(
                    format!("factorial {}: {model} {name} effect", f.suite),
                    expected,
                    e.as_ref(),
                ));
            }
        }
        for p in &f.between_models {
            let docs = effect_of(&p.first) - effect_of(&p.second);
            for (name, e, expected) in [("docs", &p.docs, docs), ("router", &p.router, 0.0)] {
                out.push(effect_check(
                    format!(
                        "factorial {}: {} vs {} model x {name}",
                        f.suite, p.first, p.second
                    ),
                    expected,
                    e.as_ref(),
                ));
            }
        }
    }
    out
}

/// An effect against its expected value: 0 must come with an interval of width symmetric about it
/// (to 12 decimals: every resample is 0, so the interval is the one built from the cells' own,
/// which a balanced design makes symmetric; never a certain [0, 0]); any other value is compared
/// to six decimals (its interval depends on the resamples).
fn effect_check(
    name: String,
    expected: f64,
    e: Option<&crate::analysis::figures::factorial::Effect>,
) -> Check {
    let zero = expected == 0.0;
    // Sums of rates that cancel may leave a rounding residue (1e-17) in a bootstrap bound.
    let tidy = |x: f64| if x.abs() < 1e-12 { 0.0 } else { x };
    let observed = match e {
        Some(e) if zero => match e.ci95 {
            Some(ci)
                if tidy(e.estimate) == 0.0 && tidy(ci.low + ci.high) == 0.0 && ci.high > 0.0 =>
            {
                ZERO_EFFECT.to_string()
            }
            Some(ci) => format!("{} [{}, {}]", tidy(e.estimate), tidy(ci.low), tidy(ci.high)),
            None => format!("{} [no interval]", e.estimate),
        },
        Some(e) => format!("{:+.6}", e.estimate),
        None => "not computed".to_string(),
    };
    let expected = if zero {
        ZERO_EFFECT.to_string()
    } else {
        format!("{expected:+.6}")
    };
    Check::new(name, expected, observed)
}

/// How a calibration check writes an effect of 0 with an interval of width symmetric about it.
pub const ZERO_EFFECT: &str = "0 [-h, +h], h > 0";

/// Bootstrap-free options: calibration compares point figures only.
fn quick() -> AnalysisOptions {
    AnalysisOptions {
        resamples: 0,
        ..AnalysisOptions::default()
    }
}

fn fmt_k(k: &BTreeMap<usize, f64>) -> String {
    k.iter()
        .map(|(k, v)| format!("{k}:{v:.6}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fmt_modes(m: &BTreeMap<FailureMode, usize>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{}={v}", k.record_name()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_modes_are_written_by_their_record_names() {
        let modes = BTreeMap::from([(FailureMode::LoopCap, 7), (FailureMode::WrongAnswer, 5)]);
        assert_eq!(fmt_modes(&modes), "loop_cap=7 wrong_answer=5");
        assert_eq!(fmt_modes(&BTreeMap::new()), "none");
    }
}
