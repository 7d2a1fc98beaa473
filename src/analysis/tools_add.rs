//! What tools add (seed 003): the agent set beside the toolless baseline of the same run, model by
//! model, on the tasks both graded. The baseline is graded on what a model without tools can
//! achieve (the answer checks; a task that requires an action fails as `action_required`), so the
//! difference is what doing the work through tools buys over answering from the prompt alone.

use super::bootstrap::{IdTotals, Interval, difference_bootstrap};
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
    /// Paired task bootstrap 95% interval of the difference (the same resample for both sides).
    pub ci95: Option<Interval>,
}

/// The agent against the baseline over the tasks both graded, with the paired bootstrap interval
/// of the difference (`resamples` resamples from `seed`, as every other interval of the report).
pub fn tools_add(
    agent: &BTreeMap<String, IdTotals>,
    toolless: &BTreeMap<String, IdTotals>,
    resamples: usize,
    seed: u64,
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
        ci95: difference_bootstrap(toolless, agent, resamples, seed),
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
        let t = tools_add(&agent, &toolless, 500, 0);
        assert_eq!(t.tasks, 3);
        assert_eq!(t.agent_success, Some(1.0));
        assert!((t.toolless_success.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((t.difference.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let ci = t.ci95.unwrap();
        // Every resample's difference is 0 (no c drawn) up to 1 (only c drawn).
        assert!(ci.low >= 0.0 && ci.high <= 1.0 && ci.low < ci.high);
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
