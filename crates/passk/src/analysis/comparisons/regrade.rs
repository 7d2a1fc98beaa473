//! Re-grading a run's records with the current graders (`passk regrade`): the recorded end state,
//! replies and tool events go through the suite's grader again, and every verdict that moved is
//! listed. The records themselves are never touched. Imported records keep their verdicts (the
//! graders that produced them are not ours), and conversations ended by a transport or protocol
//! failure were never graded, so both are counted and skipped.

use crate::analysis::Run;
use crate::domain::{Domain, Evidence, PromptVariant, ToolVariant};
use crate::runner::record::{ConversationRecord, Mode, Node, RouterRecord, Status};
use crate::suites::router::RouterSuite;
use serde::{Deserialize, Serialize};

/// One verdict that changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MovedVerdict {
    /// Suite (`router` for standalone router calls).
    pub suite: String,
    /// Task id (router: message index).
    pub task: String,
    /// Model tag.
    pub model: String,
    /// Trial index.
    pub trial: u32,
    /// Agent or toolless baseline.
    pub mode: Mode,
    /// Call cap of the trial.
    pub call_cap: u32,
    /// Tool docs variant of a factorial cell (absent: the run's only variant, or a router call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_docs: Option<ToolVariant>,
    /// Router in front of the agent.
    #[serde(default)]
    pub router_in_front: bool,
    /// Prompt variant of a factorial cell (absent: the suite's own policy, or a router call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptVariant>,
    /// Passed before.
    pub was: bool,
    /// Passes now.
    pub now: bool,
    /// The current grader's reasons (empty when it passes now).
    pub reasons: Vec<String>,
    /// The replies, first 160 characters of each.
    pub replies: Vec<String>,
}

/// The outcome of a re-grade.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regrade {
    /// Digest the records were graded with.
    pub recorded_digest: String,
    /// Digest of the current graders.
    pub current_digest: String,
    /// Records graded again.
    pub regraded: usize,
    /// Imported records, kept as recorded.
    pub imported: usize,
    /// Conversations never graded (transport or protocol failures).
    pub not_graded: usize,
    /// Records whose task is no longer in the suite.
    pub unknown_tasks: usize,
    /// Every verdict that moved, in (suite, model, task, trial) order.
    pub moved: Vec<MovedVerdict>,
}

impl Regrade {
    /// Verdicts that went from pass to fail.
    pub fn pass_to_fail(&self) -> usize {
        self.moved.iter().filter(|m| m.was && !m.now).count()
    }

    /// Verdicts that went from fail to pass.
    pub fn fail_to_pass(&self) -> usize {
        self.moved.iter().filter(|m| !m.was && m.now).count()
    }
}

fn clip(s: &str) -> String {
    s.chars().take(160).collect()
}

/// Grades `run` again with `domains` (and the router's current labels).
pub fn regrade(
    run: &Run,
    domains: &[&dyn Domain],
    router: Option<&RouterSuite>,
    current_digest: &str,
) -> Regrade {
    let mut out = Regrade {
        recorded_digest: run.manifest.grader_digest.clone(),
        current_digest: current_digest.to_string(),
        regraded: 0,
        imported: 0,
        not_graded: 0,
        unknown_tasks: 0,
        moved: Vec::new(),
    };
    for c in &run.conversations {
        out.conversation(c, domains);
    }
    for r in &run.router {
        out.router_call(r, router);
    }
    out.moved.sort_by(|a, b| {
        let key = |m: &MovedVerdict| {
            let cell = (m.mode, m.call_cap, m.tool_docs, m.router_in_front, m.prompt);
            (
                m.suite.clone(),
                m.model.clone(),
                m.task.clone(),
                m.trial,
                cell,
            )
        };
        key(a).cmp(&key(b))
    });
    out
}

impl Regrade {
    /// Grades one recorded conversation again and notes it if its verdict moved.
    fn conversation(&mut self, c: &ConversationRecord, domains: &[&dyn Domain]) {
        if c.imported {
            self.imported += 1;
            return;
        }
        if !c.outcome.is_graded() {
            self.not_graded += 1;
            return;
        }
        let task = domains
            .iter()
            .find(|d| d.name() == c.suite)
            .and_then(|d| d.tasks().iter().find(|t| t.id == c.task).map(|t| (d, t)));
        let Some((domain, task)) = task else {
            self.unknown_tasks += 1;
            return;
        };
        let end_state = c.end_state.to_value();
        let cut = crate::runner::record::cut_calls(&c.calls);
        let evidence = Evidence {
            end_state: &end_state,
            replies: &c.replies,
            tool_events: &c.tool_events,
            hit_call_cap: c.status == Status::LoopCap,
            model_calls: c
                .calls
                .iter()
                .filter(|k| k.node == Node::Orchestrator)
                .count() as u32,
            toolless: c.mode == crate::runner::record::Mode::Toolless,
            cut: &cut,
        };
        let verdict = domain.grade(task, &evidence);
        self.regraded += 1;
        if verdict.passed != c.verdict.passed {
            self.moved.push(MovedVerdict {
                suite: c.suite.clone(),
                task: c.task.clone(),
                model: c.model.clone(),
                trial: c.trial,
                mode: c.mode,
                call_cap: c.call_cap,
                tool_docs: c.tool_docs,
                router_in_front: c.router_in_front,
                prompt: c.prompt,
                was: c.verdict.passed,
                now: verdict.passed,
                reasons: verdict.reasons,
                replies: c
                    .replies
                    .iter()
                    .map(|r| clip(r.as_deref().unwrap_or("(no reply: call cap)")))
                    .collect(),
            });
        }
    }

    /// Grades one standalone router call again against the current gold label.
    fn router_call(&mut self, r: &RouterRecord, router: Option<&RouterSuite>) {
        if r.imported {
            self.imported += 1;
            return;
        }
        if !r.outcome.is_graded() {
            self.not_graded += 1;
            return;
        }
        let Some(label) = router
            .and_then(|s| s.messages.iter().find(|m| m.index == r.index))
            .map(|m| &m.label)
        else {
            self.unknown_tasks += 1;
            return;
        };
        let now = r.predicted.as_ref() == Some(label);
        self.regraded += 1;
        if now != r.correct {
            self.moved.push(MovedVerdict {
                suite: "router".into(),
                task: r.index.to_string(),
                model: r.model.clone(),
                trial: r.trial,
                mode: Mode::Agent,
                call_cap: 1,
                tool_docs: None,
                router_in_front: false,
                prompt: None,
                was: r.correct,
                now,
                reasons: if now {
                    vec![]
                } else {
                    vec![format!("gold label is now '{label}'")]
                },
                replies: vec![clip(&r.raw)],
            });
        }
    }
}
