//! Plays a scripted trajectory (gold or near-miss) through a real environment and grader, the way
//! a perfect agent making one tool call per model call would: the suite check, the calibration
//! stub's expectations and the tests all use it.

use crate::domain::{Domain, Environment, Evidence, Task, ToolOutcome, Trajectory};
use crate::trace::{ToolEvent, Verdict};
use serde_json::Value;

/// What a played trajectory left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Played {
    /// Every tool call and whether it was accepted.
    pub events: Vec<ToolEvent>,
    /// The reply of each turn.
    pub replies: Vec<Option<String>>,
    /// End state of the environment.
    pub end_state: Value,
    /// Model calls a one-call-per-step agent makes: calls + 1 per turn.
    pub model_calls: u32,
    /// The failure of the tools' server, if it failed (the trajectory is then not graded).
    pub server_failure: Option<String>,
}

impl Played {
    /// The evidence a grader sees (the call cap was not hit).
    pub fn evidence(&self) -> Evidence<'_> {
        Evidence {
            end_state: &self.end_state,
            replies: &self.replies,
            tool_events: &self.events,
            hit_call_cap: false,
            model_calls: self.model_calls,
            toolless: false,
            cut: &[],
        }
    }
}

/// Executes every call of `trajectory` in `env`, turn by turn.
pub fn play(env: &mut dyn Environment, trajectory: &Trajectory) -> Played {
    let mut events = Vec::new();
    let mut replies = Vec::new();
    let mut model_calls = 0u32;
    for (turn, t) in trajectory.turns.iter().enumerate() {
        for (step, call) in t.calls.iter().enumerate() {
            let args = Value::Object(call.args.clone());
            let (ok, error) = match env.execute(&call.tool, &args) {
                ToolOutcome::Ok(_) => (true, None),
                ToolOutcome::Rejected(e) => (false, Some(e)),
                ToolOutcome::ServerFailed(e) => (false, Some(format!("tool server failed: {e}"))),
            };
            events.push(ToolEvent {
                turn: turn as u32,
                step: step as u32,
                tool: call.tool.clone(),
                args,
                ok,
                error,
                format: None,
            });
        }
        model_calls += t.calls.len() as u32 + 1;
        replies.push(Some(t.reply.clone()));
    }
    let end_state = env.snapshot();
    Played {
        events,
        replies,
        end_state,
        model_calls,
        server_failure: env.server_failure(),
    }
}

/// Plays `trajectory` in a fresh environment of `domain` and grades it against `task`.
pub fn replay(domain: &dyn Domain, task: &Task, trajectory: &Trajectory) -> (Played, Verdict) {
    let mut env = domain.new_environment();
    let played = play(env.as_mut(), trajectory);
    let verdict = match &played.server_failure {
        Some(why) => Verdict {
            reasons: vec![format!("not graded: the tool server failed: {why}")],
            ..Verdict::default()
        },
        None => domain.grade(task, &played.evidence()),
    };
    (played, verdict)
}
