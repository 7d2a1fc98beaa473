//! What tools add (seed 003): the agent set beside the toolless baseline of the same run, model by
//! model, on the tasks both graded. The baseline is graded on what a model without tools can
//! achieve (the answer checks; a task that requires an action fails as `action_required`), so the
//! difference is what doing the work through tools buys over answering from the prompt alone.

use crate::analysis::intervals::bootstrap::{IdTotals, Interval};
use crate::analysis::intervals::interval;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One model's agent and toolless results in one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolsAdd {
    /// Tasks both the agent and the baseline graded (the differences are over these).
    pub tasks: usize,
    /// Agent success rate over those tasks' graded trials.
    pub agent_success: Option<f64>,
    /// The agent's passes and graded trials on those tasks (the rate's numerator and denominator).
    #[serde(default)]
    pub agent_passes: usize,
    /// The agent's graded trials on those tasks.
    #[serde(default)]
    pub agent_graded: usize,
    /// Toolless success rate over the same tasks' graded trials.
    pub toolless_success: Option<f64>,
    /// The baseline's passes on those tasks.
    #[serde(default)]
    pub toolless_passes: usize,
    /// The baseline's graded trials on those tasks.
    #[serde(default)]
    pub toolless_graded: usize,
    /// Agent minus toolless success rate.
    pub difference: Option<f64>,
    /// 95% interval of the difference: the two rates' intervals combined with their correlation
    /// over the shared tasks (`interval::paired_gap`; metrics.md, "Intervals at the boundary").
    pub ci95: Option<Interval>,
}

/// The agent against the baseline over the tasks both graded, with the interval of the
/// difference (`interval::paired_gap`).
pub fn tools_add(
    agent: &BTreeMap<String, IdTotals>,
    toolless: &BTreeMap<String, IdTotals>,
) -> ToolsAdd {
    let shared = |side: &BTreeMap<String, IdTotals>, other: &BTreeMap<String, IdTotals>| {
        let (mut passes, mut trials) = (0.0, 0.0);
        for (_, t) in side.iter().filter(|(k, _)| other.contains_key(*k)) {
            passes += t.passes;
            trials += t.trials;
        }
        (passes as usize, trials as usize)
    };
    let rate =
        |(passes, trials): (usize, usize)| (trials > 0).then(|| passes as f64 / trials as f64);
    let (a, t) = (shared(agent, toolless), shared(toolless, agent));
    let (agent_success, toolless_success) = (rate(a), rate(t));
    ToolsAdd {
        tasks: agent.keys().filter(|k| toolless.contains_key(*k)).count(),
        agent_success,
        agent_passes: a.0,
        agent_graded: a.1,
        toolless_success,
        toolless_passes: t.0,
        toolless_graded: t.1,
        difference: agent_success.zip(toolless_success).map(|(a, t)| a - t),
        ci95: interval::paired_gap(toolless, agent),
    }
}

/// The configuration key of the toolless baseline beside an agent configuration
/// (`store` -> `store/toolless`, `store/cap=4` -> `store/toolless/cap=4`). The baseline plays one
/// cell of a factorial design, so the agent's tool docs and router levels are dropped:
/// `store/docs=bare/router=on/cap=4` -> `store/toolless/cap=4`.
pub fn toolless_key(agent_key: &str) -> String {
    let mut parts = agent_key.split('/');
    let suite = parts.next().unwrap_or_default();
    let mut key = format!("{suite}/toolless");
    let factor = |p: &&str| {
        ["docs=", "router=", "prompt="]
            .iter()
            .any(|f| p.starts_with(f))
    };
    for part in parts.filter(|p| !factor(p)) {
        key.push('/');
        key.push_str(part);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(pairs: &[(&str, f64, f64)]) -> BTreeMap<String, IdTotals> {
        pairs
            .iter()
            .map(|(t, trials, passes)| {
                (
                    t.to_string(),
                    IdTotals {
                        trials: *trials,
                        passes: *passes,
                        ..IdTotals::default()
                    },
                )
            })
            .collect()
    }

    #[test]
    fn the_difference_is_over_shared_tasks_and_paired() {
        // The agent passes everything; the baseline answers the lookups (a, b) and cannot do the
        // write (c). A task only the agent ran (d) is left out of both rates.
        let agent = totals(&[
            ("a", 5.0, 5.0),
            ("b", 5.0, 5.0),
            ("c", 5.0, 5.0),
            ("d", 5.0, 0.0),
        ]);
        let toolless = totals(&[("a", 5.0, 5.0), ("b", 5.0, 5.0), ("c", 5.0, 0.0)]);
        let t = tools_add(&agent, &toolless);
        assert_eq!(t.tasks, 3);
        assert_eq!(t.agent_success, Some(1.0));
        assert!((t.toolless_success.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((t.difference.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        // The agent is at 100% over three tasks: the interval comes from the rates' own, and
        // holds the point with room on both sides.
        let ci = t.ci95.unwrap();
        assert!(
            ci.low < 0.0 && 1.0 / 3.0 < ci.high && ci.high <= 1.0,
            "{ci:?}"
        );
    }

    #[test]
    fn a_difference_at_the_boundary_keeps_an_interval_of_width() {
        // Both sides pass 30 of 30: every resample's difference is 0, and the bootstrap reads
        // [0-0]. Agent 30 of 30 against a baseline of 0 of 30: every resample reads +100 pp.
        let ids = ["a", "b", "c", "d", "e", "f"];
        let make = |c: f64| totals(&ids.map(|id| (id, 5.0, c)));
        let (all, none) = (make(5.0), make(0.0));
        let same = tools_add(&all, &all).ci95.unwrap();
        assert!(same.low < -0.3 && same.high > 0.3, "{same:?}");
        let gap = tools_add(&all, &none);
        let ci = gap.ci95.unwrap();
        assert_eq!(gap.difference, Some(1.0));
        assert!(ci.high == 1.0 && ci.low < 0.8 && ci.low > 0.3, "{ci:?}");
    }

    #[test]
    fn the_baseline_key_sits_beside_the_agents() {
        assert_eq!(toolless_key("store"), "store/toolless");
        assert_eq!(toolless_key("store/cap=4"), "store/toolless/cap=4");
        assert_eq!(
            toolless_key("store/docs=bare/router=on/cap=4"),
            "store/toolless/cap=4"
        );
    }
}
