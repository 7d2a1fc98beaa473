//! Task types shared by every suite: scripted customer turns, the gold trajectory and the
//! near-miss trajectories each grader must reject.

use crate::trace::FailureMode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One tool call of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryCall {
    /// Tool name.
    pub tool: String,
    /// Arguments object.
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// What a perfect (or a plausibly wrong) agent does in one customer turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryTurn {
    /// Tool calls in order.
    #[serde(default)]
    pub calls: Vec<TrajectoryCall>,
    /// The final reply of the turn.
    pub reply: String,
}

/// A whole-conversation trajectory: one entry per customer turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Trajectory {
    /// Turns in order.
    pub turns: Vec<TrajectoryTurn>,
}

impl Trajectory {
    /// Number of tool calls over all turns.
    pub fn call_count(&self) -> usize {
        self.turns.iter().map(|t| t.calls.len()).sum()
    }

    /// Model calls a perfect agent needs when it makes one tool call per model call.
    pub fn model_calls_needed(&self) -> usize {
        self.turns.iter().map(|t| t.calls.len() + 1).sum()
    }
}

/// A plausible wrong trajectory the task's grader must reject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NearMiss {
    /// Short name of the mistake ("cancels the wrong order").
    pub name: String,
    /// The failure mode the grader must assign to it.
    pub expect: FailureMode,
    /// The trajectory itself.
    pub trajectory: Trajectory,
}

/// One scripted conversation of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Stable task id ("L1", "M3", ...).
    pub id: String,
    /// Category name ("lookup", "multi-hop", "write", "multi-turn", ...).
    pub category: String,
    /// Scripted customer messages; message n+1 is sent after the agent's reply to message n.
    pub customer: Vec<String>,
    /// The gold trajectory, one turn per customer message.
    pub gold: Trajectory,
    /// Wrong trajectories the grader must reject (at least one).
    #[serde(default)]
    pub near_misses: Vec<NearMiss>,
    /// The router's gold label of each customer message (used when the router runs in front).
    #[serde(default)]
    pub intents: Vec<String>,
    /// Whether the task needs tools at all (false: answerable from the prompt alone).
    #[serde(default = "default_true")]
    pub needs_tools: bool,
}

fn default_true() -> bool {
    true
}
