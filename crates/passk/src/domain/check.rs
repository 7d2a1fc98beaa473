//! The suite's self-check: replays every gold trajectory through the real environment and grader
//! (each must pass, with a correct trajectory, every call accepted and no control flag raised) and
//! every near-miss (each must fail with exactly its expected failure mode); and the suite's counts
//! line.

use crate::domain::replay::replay;
use crate::domain::{Domain, NearMiss, Task, ToolVariant};
use crate::trace::{FailureMode, Verdict};

/// A suite's counts, as `suite check` prints them: tools, parameters, tasks and tasks per category
/// and the tool documentation variants
/// (`store: 8 tools, 13 parameters, 24 conversations (lookup 6, ...); tool docs: bare, documented`),
/// then the prompt variants where the suite has more than its policy (`; prompts: policy, strict`).
pub fn counts_line(domain: &dyn Domain) -> String {
    let presentation = domain.presentation();
    let prompts: Vec<&str> = presentation.prompts().iter().map(|p| p.as_str()).collect();
    let prompts = if prompts.len() > 1 {
        format!("; prompts: {}", prompts.join(", "))
    } else {
        String::new()
    };
    let tools = presentation
        .docs(ToolVariant::BARE)
        .map_or(&[][..], |d| &d.tools);
    let parameters: usize = tools.iter().map(|t| t.parameters.len()).sum();
    let tasks = domain.tasks();
    let categories: Vec<String> = domain
        .categories()
        .iter()
        .map(|c| {
            let n = tasks.iter().filter(|t| t.category == *c).count();
            format!("{c} {n}")
        })
        .collect();
    format!(
        "{}: {} tools, {parameters} parameters, {} {} ({}); tool docs: {}{prompts}",
        domain.name(),
        tools.len(),
        tasks.len(),
        domain.task_noun(),
        categories.join(", "),
        presentation
            .variants()
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The gold replay of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldCheck {
    /// Task id.
    pub task: String,
    /// The grader's verdict.
    pub verdict: Verdict,
    /// Problems found (empty: the gold trajectory is sound).
    pub problems: Vec<String>,
}

/// The replay of one near-miss.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMissCheck {
    /// Task id.
    pub task: String,
    /// The near-miss's name.
    pub name: String,
    /// The failure mode it must get.
    pub expect: FailureMode,
    /// The grader's verdict.
    pub verdict: Verdict,
}

impl NearMissCheck {
    /// Whether the grader rejected it with the expected failure mode.
    pub fn as_expected(&self) -> bool {
        !self.verdict.passed && self.verdict.failure_mode == Some(self.expect)
    }
}

/// Every replay of a suite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    /// One per task.
    pub gold: Vec<GoldCheck>,
    /// One per near-miss.
    pub near_misses: Vec<NearMissCheck>,
}

impl CheckReport {
    /// Gold replays without problems.
    pub fn gold_passing(&self) -> usize {
        self.gold.iter().filter(|g| g.problems.is_empty()).count()
    }

    /// Near-misses rejected with their expected mode.
    pub fn near_misses_as_expected(&self) -> usize {
        self.near_misses.iter().filter(|n| n.as_expected()).count()
    }

    /// Whether anything was a surprise.
    pub fn has_surprises(&self) -> bool {
        self.gold_passing() != self.gold.len()
            || self.near_misses_as_expected() != self.near_misses.len()
    }
}

/// Replays one task's gold trajectory.
pub fn check_gold(domain: &dyn Domain, task: &Task) -> GoldCheck {
    let (played, verdict) = replay(domain, task, &task.gold);
    let mut problems = Vec::new();
    for e in played.events.iter().filter(|e| !e.ok) {
        problems.push(format!(
            "turn {} call {} {} was rejected: {}",
            e.turn,
            e.step,
            e.tool,
            e.error.as_deref().unwrap_or("")
        ));
    }
    if !verdict.passed {
        problems.push(format!(
            "the grader fails it: {}",
            verdict.reasons.join("; ")
        ));
    }
    if verdict.trajectory_correct != Some(true) {
        problems.push("its own trajectory is not judged correct".into());
    }
    let c = &verdict.control;
    for (flag, name) in [
        (c.unknown_verb, "unknown_verb"),
        (c.under_tool, "under_tool"),
        (c.loop_overrun, "loop_overrun"),
        (c.over_model, "over_model"),
    ] {
        if flag == Some(true) {
            problems.push(format!("control flag {name} is raised"));
        }
    }
    GoldCheck {
        task: task.id.clone(),
        verdict,
        problems,
    }
}

/// Replays one near-miss.
pub fn check_near_miss(domain: &dyn Domain, task: &Task, nm: &NearMiss) -> NearMissCheck {
    let (_, verdict) = replay(domain, task, &nm.trajectory);
    NearMissCheck {
        task: task.id.clone(),
        name: nm.name.clone(),
        expect: nm.expect,
        verdict,
    }
}

/// Replays every gold trajectory and near-miss of the suite.
pub fn check_suite(domain: &dyn Domain) -> CheckReport {
    let mut report = CheckReport::default();
    for task in domain.tasks() {
        report.gold.push(check_gold(domain, task));
        for nm in &task.near_misses {
            report.near_misses.push(check_near_miss(domain, task, nm));
        }
    }
    report
}
