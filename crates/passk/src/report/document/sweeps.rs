//! The run-wide sweep sections: success as tools are added, and across the call budgets.

use super::format::{NOTHING_GRADED, ci_points, excluded, opt, per_success, points};
use super::model_table::model_header;
use super::order::group_order;
use crate::analysis::{GroupSummary, Summary};
use crate::report::number::{NOT_AVAILABLE, number, percent_with_n};
use crate::report::table::MarkdownTable;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The configurations of each budget sweep, keyed by what they share: everything in the group
/// key but the cap (`store`, `store/toolless`, `store/docs=bare/router=on`).
pub(super) fn sweeps(s: &Summary) -> BTreeMap<String, Vec<(u32, &GroupSummary)>> {
    let mut out: BTreeMap<String, Vec<(u32, &GroupSummary)>> = BTreeMap::new();
    for (key, g) in &s.groups {
        if let Some(cap) = g.call_cap {
            let shared = key.strip_suffix(&format!("/cap={cap}")).unwrap_or(key);
            out.entry(shared.to_string()).or_default().push((cap, g));
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|(cap, _)| *cap);
    }
    out.retain(|_, v| v.len() > 1);
    out
}

/// What tools add: the agent beside its toolless baseline, per model, paired on shared tasks.
pub(super) fn tools_add(out: &mut String, s: &Summary) {
    if s.tools_add.is_empty() {
        return;
    }
    out.push_str("## What tools add\n\n");
    out.push_str(
        "The agent beside the toolless baseline of the same run (one call per customer message, no \
         tools), over the tasks both graded. The baseline is graded on what a model without tools can \
         achieve: the answer checks; a task that requires an action fails as `action_required`. The \
         interval combines the two rates' intervals with their correlation over the tasks \
         (metrics.md \"Intervals at the boundary\").\n\n",
    );
    let mut keys: Vec<&String> = s.tools_add.keys().collect();
    keys.sort_by_cached_key(|k| group_order(k));
    for key in keys {
        let models = &s.tools_add[key];
        let _ = writeln!(out, "`{key}`\n");
        let mut t = MarkdownTable::new([
            "model".to_string(),
            "tasks".to_string(),
            "agent success (passes/graded)".to_string(),
            "toolless success (passes/graded)".to_string(),
            "tools add".to_string(),
            format!("95% CI{}", crate::report::stopping::mark(s)),
        ]);
        t.numeric_after_first();
        let note = |group: &str, model: &str| {
            s.groups
                .get(group)
                .and_then(|g| g.models.get(model))
                .map_or_else(String::new, excluded)
        };
        let toolless_group = crate::analysis::figures::tools_add::toolless_key(key);
        for model in s.models.iter().filter(|m| models.contains_key(*m)) {
            let a = &models[model];
            t.row([
                model.clone(),
                a.tasks.to_string(),
                percent_with_n(a.agent_passes as u64, a.agent_graded as u64) + &note(key, model),
                percent_with_n(a.toolless_passes as u64, a.toolless_graded as u64)
                    + &note(&toolless_group, model),
                opt(a.difference, points),
                a.ci95.as_ref().map_or(NOT_AVAILABLE.into(), ci_points),
            ]);
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}

pub(super) fn budget_sweep(out: &mut String, s: &Summary) {
    for (shared, caps) in sweeps(s) {
        let _ = writeln!(out, "## Budget sweep: `{shared}`\n");
        out.push_str(
            "Success rate and steps per correct answer by call cap (model calls per turn).\n\n",
        );
        let models: Vec<&String> = s
            .models
            .iter()
            .filter(|m| caps.iter().any(|(_, g)| g.models.contains_key(*m)))
            .collect();
        let mut header = vec!["call cap".to_string()];
        for m in &models {
            let h = model_header(s, m);
            header.push(format!("{h}: success"));
            header.push(format!("{h}: steps per correct answer"));
        }
        let mut t = MarkdownTable::new(header);
        t.numeric_after_first();
        for (cap, g) in &caps {
            let mut row = vec![cap.to_string()];
            for m in &models {
                match g.models.get(*m) {
                    Some(ms) => {
                        row.push(format!(
                            "{}{}",
                            percent_with_n(ms.passes as u64, ms.outcomes.graded as u64),
                            excluded(ms)
                        ));
                        row.push(if ms.outcomes.graded == 0 {
                            format!("{NOT_AVAILABLE} ({NOTHING_GRADED})")
                        } else {
                            per_success(
                                ms.four_state.steps_per_correct_answer,
                                ms.four_state.tool_task_passes,
                                |x| number(x, 2),
                            )
                        });
                    }
                    None => {
                        row.push(NOT_AVAILABLE.into());
                        row.push(NOT_AVAILABLE.into());
                    }
                }
            }
            t.row(row);
        }
        out.push_str(&t.render());
        out.push('\n');
    }
}
