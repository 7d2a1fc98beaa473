//! Trials planned but not recorded: an interrupted run's figures are over fewer trials than its
//! settings asked for, and every output says so at the top.

use crate::analysis::Summary;
use crate::runner::record::{Manifest, Mode};
use serde::{Deserialize, Serialize};

/// A model of a configuration with fewer trials recorded than planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    /// The configuration's key.
    pub group: String,
    /// The model.
    pub model: String,
    /// Trials recorded (graded or not).
    pub recorded: usize,
    /// Trials planned: the configuration's tasks times k.
    pub planned: usize,
}

/// Each agent configuration's model short of its planned trials: the suite's tasks (after the
/// task filter) times k, for every model the settings name. Nothing where the plan is not known
/// (an imported or older run) or where the run stops early by design (`--stop-when-decided`).
pub fn shortfalls(s: &Summary, manifest: &Manifest) -> Vec<Shortfall> {
    let settings = &manifest.settings;
    let (Some(k), Some(models)) = (settings["trials"].as_u64(), settings["models"].as_array())
    else {
        return Vec::new();
    };
    if s.stopping.is_some() || manifest.suite_tasks.is_empty() {
        return Vec::new();
    }
    let filter: Vec<&str> = settings["tasks"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (key, g) in s.groups.iter().filter(|(_, g)| g.mode == Mode::Agent) {
        let Some(tasks) = manifest.suite_tasks.get(&g.suite) else {
            continue;
        };
        let played = tasks
            .iter()
            .filter(|t| filter.is_empty() || filter.contains(&t.as_str()))
            .count();
        let planned = played * k as usize;
        for model in models.iter().filter_map(|m| m.as_str()) {
            let recorded = g.models.get(model).map_or(0, |m| m.outcomes.total);
            if recorded < planned {
                out.push(Shortfall {
                    group: key.clone(),
                    model: model.to_string(),
                    recorded,
                    planned,
                });
            }
        }
    }
    out
}

/// The banner of an incomplete run, in markdown; `None` when nothing is missing.
pub fn banner(s: &Summary) -> Option<String> {
    if s.incomplete.is_empty() {
        return None;
    }
    let each: Vec<String> = s
        .incomplete
        .iter()
        .map(|f| {
            format!(
                "`{}` `{}` {} of {}",
                f.group, f.model, f.recorded, f.planned
            )
        })
        .collect();
    Some(format!(
        "**INCOMPLETE RUN.** Fewer trials are recorded than the run planned: {}. Each figure is \
         over the trials recorded, and pass^k at each model's fewest trials of a task. The same \
         `passk run` command resumes the run.",
        each.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use crate::analysis::fixtures::{call, conversation};
    use crate::analysis::{AnalysisOptions, summarize};
    use crate::runner::record::Manifest;
    use std::collections::BTreeMap;

    fn manifest(filter: &[&str]) -> Manifest {
        Manifest {
            run_id: "r".into(),
            settings: serde_json::json!({"trials": 2, "models": ["a", "b"], "tasks": filter}),
            suite_tasks: BTreeMap::from([("store".into(), vec!["T0".into(), "T1".into()])]),
            ..Manifest::default()
        }
    }

    #[test]
    fn missing_trials_are_counted_per_model_and_a_whole_run_has_none() {
        let trial = |m: &str, t: &str, i| conversation(m, t, i, true, vec![call(1, 1)]);
        let mut records = vec![trial("a", "T0", 0)];
        let s = summarize(&manifest(&[]), &records, &[], &AnalysisOptions::default());
        let short: Vec<(String, usize, usize)> = s
            .incomplete
            .iter()
            .map(|f| (f.model.clone(), f.recorded, f.planned))
            .collect();
        assert_eq!(short, [("a".into(), 1, 4), ("b".into(), 0, 4)]);
        let banner = super::banner(&s).expect("a banner");
        assert!(
            banner.contains("`store` `a` 1 of 4, `store` `b` 0 of 4"),
            "{banner}"
        );
        for (m, t, i) in [("a", "T0", 1), ("a", "T1", 0), ("a", "T1", 1)] {
            records.push(trial(m, t, i));
        }
        for t in ["T0", "T1"] {
            records.extend([trial("b", t, 0), trial("b", t, 1)]);
        }
        let s = summarize(&manifest(&[]), &records, &[], &AnalysisOptions::default());
        assert!(s.incomplete.is_empty(), "{:?}", s.incomplete);
        assert!(super::banner(&s).is_none());
        // A task filter plans only its tasks.
        let s = summarize(
            &manifest(&["T0"]),
            &records[..2],
            &[],
            &AnalysisOptions::default(),
        );
        assert_eq!(s.incomplete.len(), 1, "only b is short: {:?}", s.incomplete);
    }
}
