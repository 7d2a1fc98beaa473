//! The data of `compare.html`: compare.md's metrics, then the tasks whose pass count moved between
//! run A and run B, per configuration and model, each with one trial of A and one of B to read
//! side by side (a passing trial of the run that passed more, a failing one of the other).

use super::detail::{SharedTexts, trial_line};
use super::report::failure_modes;
use super::source::each_conversation;
use super::trials::group_of;
use super::{COMPARE_HTML, page};
use crate::analysis::{RunComparison, Summary};
use crate::report::ReportError;
use crate::runner::record::{CONVERSATIONS_FILE, ConversationRecord, TrialKey};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// (configuration, model, task).
type Cell = (String, String, String);

/// Passes and graded trials of one task for one model, and the trials to show.
#[derive(Debug, Clone, Default, PartialEq)]
struct Tally {
    category: String,
    passes: usize,
    graded: usize,
    first_pass: Option<TrialKey>,
    first_fail: Option<TrialKey>,
}

/// A task whose pass count moved, with the trial of each run to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// Configuration (group key), model and task.
    cell: Cell,
    category: String,
    a: (usize, usize),
    b: (usize, usize),
    trial_a: Option<TrialKey>,
    trial_b: Option<TrialKey>,
}

/// Per cell: passes out of graded trials, from records stripped of text.
fn tallies(summary: &Summary, records: &[ConversationRecord]) -> BTreeMap<Cell, Tally> {
    let mut out: BTreeMap<Cell, Tally> = BTreeMap::new();
    for c in records.iter().filter(|c| c.outcome.is_graded()) {
        let Some(group) = group_of(summary, c) else {
            continue;
        };
        let t = out
            .entry((group.to_string(), c.model.clone(), c.task.clone()))
            .or_default();
        t.category.clone_from(&c.category);
        t.graded += 1;
        let passed = c.verdict.passed;
        t.passes += usize::from(passed);
        let slot = if passed {
            &mut t.first_pass
        } else {
            &mut t.first_fail
        };
        if slot.as_ref().is_none_or(|k| c.trial < k.trial) {
            *slot = Some(c.key());
        }
    }
    out
}

/// The cells both runs have whose pass count differs, in (configuration, model, task) order.
pub fn moved(
    summary_a: &Summary,
    a: &[ConversationRecord],
    summary_b: &Summary,
    b: &[ConversationRecord],
) -> Vec<Moved> {
    let tb = tallies(summary_b, b);
    tallies(summary_a, a)
        .into_iter()
        .filter_map(|(cell, ta)| {
            let tb = tb.get(&cell)?;
            (ta.passes != tb.passes).then(|| {
                let fell = ta.passes > tb.passes;
                Moved {
                    category: ta.category.clone(),
                    a: (ta.passes, ta.graded),
                    b: (tb.passes, tb.graded),
                    trial_a: if fell { ta.first_pass } else { ta.first_fail },
                    trial_b: if fell {
                        tb.first_fail.clone()
                    } else {
                        tb.first_pass.clone()
                    },
                    cell,
                }
            })
        })
        .collect()
}

/// The details lines of the wanted trials of the run in `dir`, by trial key.
fn lines_of(
    dir: &Path,
    wanted: &[&TrialKey],
    texts: &mut SharedTexts,
) -> Result<BTreeMap<TrialKey, String>, ReportError> {
    let mut out = BTreeMap::new();
    each_conversation(&dir.join(CONVERSATIONS_FILE), |c| {
        let key = c.key();
        if c.outcome.is_graded() && wanted.contains(&&key) && !out.contains_key(&key) {
            let line = trial_line(&c, texts);
            out.insert(key, line);
        }
    })?;
    Ok(out)
}

/// `compare.html` of `c`: `markdown` (compare.md, its metrics) first, then the moved tasks, whose
/// shown trials' transcripts are read from the run directories.
pub fn compare_page(
    c: &RunComparison,
    markdown: &str,
    (dir_a, records_a): (&Path, &[ConversationRecord]),
    (dir_b, records_b): (&Path, &[ConversationRecord]),
) -> Result<String, ReportError> {
    let moved = moved(&c.summary_a, records_a, &c.summary_b, records_b);
    let mut texts = SharedTexts::default();
    let want_a: Vec<&TrialKey> = moved.iter().filter_map(|m| m.trial_a.as_ref()).collect();
    let want_b: Vec<&TrialKey> = moved.iter().filter_map(|m| m.trial_b.as_ref()).collect();
    let mut found_a = lines_of(dir_a, &want_a, &mut texts)?;
    let mut found_b = lines_of(dir_b, &want_b, &mut texts)?;
    let mut lines = Vec::new();
    let mut take = |key: &Option<TrialKey>, found: &mut BTreeMap<TrialKey, String>| {
        let key = key.as_ref()?;
        let line = found.get(key)?.clone();
        lines.push(line);
        Some(json!({"trial": key.trial, "line": lines.len() - 1}))
    };
    let pairs: Vec<Value> = moved
        .iter()
        .map(|m| {
            json!({
                "config": m.cell.0, "model": m.cell.1, "task": m.cell.2, "category": m.category,
                "a": [m.a.0, m.a.1], "b": [m.b.0, m.b.1],
                "trial_a": take(&m.trial_a, &mut found_a),
                "trial_b": take(&m.trial_b, &mut found_b),
            })
        })
        .collect();
    let title = format!("passk compare: {} vs {}", c.run_a, c.run_b);
    let data = json!({
        "kind": "compare",
        "title": title,
        "caption": format!(
            "A = {} ({}), B = {} ({}); tasks whose pass count moved: {}{}",
            c.run_a, c.summary_a.backend, c.run_b, c.summary_b.backend, pairs.len(),
            if c.different_graders { " · DIFFERENT GRADERS" } else { "" }
        ),
        "markdown": markdown,
        "pairs": pairs,
        "failure_modes": failure_modes(),
        "texts": texts.table(),
    });
    debug_assert_eq!(COMPARE_HTML, "compare.html");
    Ok(page(&title, &data, &lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::runner::record::Manifest;

    fn run(fails: &[(&str, u32)]) -> Vec<ConversationRecord> {
        let mut out = Vec::new();
        for task in ["L1", "L2", "L3"] {
            for trial in 0..3 {
                let passed = !fails.contains(&(task, trial));
                out.push(conversation("m", task, trial, passed, vec![call(1, 1)]));
            }
        }
        out
    }

    #[test]
    fn only_moved_tasks_with_a_pass_and_a_fail_to_show() {
        let a = run(&[("L1", 2), ("L3", 0)]);
        let b = run(&[("L2", 1), ("L2", 2), ("L3", 1)]);
        let opts = AnalysisOptions::default();
        let sa = summarize(&Manifest::default(), &a, &[], &opts);
        let sb = summarize(&Manifest::default(), &b, &[], &opts);
        let m = moved(&sa, &a, &sb, &b);
        let tasks: Vec<&str> = m.iter().map(|m| m.cell.2.as_str()).collect();
        assert_eq!(tasks, ["L1", "L2"], "L3 fails once in both");
        assert_eq!((m[0].a, m[0].b), ((2, 3), (3, 3)));
        assert_eq!(m[0].trial_a.as_ref().map(|k| k.trial), Some(2), "A's fail");
        assert_eq!(m[0].trial_b.as_ref().map(|k| k.trial), Some(0), "B's pass");
        assert_eq!(m[1].trial_a.as_ref().map(|k| k.trial), Some(0), "A's pass");
        assert_eq!(m[1].trial_b.as_ref().map(|k| k.trial), Some(1), "B's fail");
    }
}
