//! Shared vocabulary of one conversation trial: the tool events the agent loop produces, the
//! verdict a grader returns, and the labels both use. It sits upstream of the grader and the runner
//! so that both can speak about the same things without depending on each other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a tool call reached the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum CallFormat {
    /// Ollama's own `message.tool_calls`.
    Native,
    /// JSON written into the reply text and recovered by passk.
    Text,
    /// Text with the shape of a call that did not parse.
    Malformed,
}

/// One tool call the model made and what the environment answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolEvent {
    /// Customer turn (0-based) the call belongs to.
    pub turn: u32,
    /// Model call within the turn (0-based) that produced it.
    pub step: u32,
    /// Tool name as the model wrote it (a malformed call is `__malformed__:<name>`).
    pub tool: String,
    /// Arguments as the model wrote them (any JSON value).
    #[serde(default)]
    pub args: Value,
    /// Whether the tool accepted the call.
    pub ok: bool,
    /// The error text sent back to the model when `ok` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How the call was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<CallFormat>,
}

/// The single label given to a failed conversation (metrics.md "failure mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureMode {
    /// Hit the call cap without answering.
    LoopCap,
    /// Never made a usable (accepted) tool call where one was needed.
    NoUsableToolCall,
    /// Wrong or missing action: the end state of orders or returns is wrong.
    WrongAction,
    /// A required ticket was not opened (or a forbidden one was).
    MissedEscalation,
    /// The state is right but a reply is wrong or incomplete.
    WrongAnswer,
    /// Toolless baseline: the replies pass the answer checks, but the task requires an action (a
    /// state change, a ticket, a route) that a reply without tools cannot take. Ranked last, so a
    /// toolless reply that is also wrong is labelled `WrongAnswer`.
    ActionRequired,
}

impl FailureMode {
    /// Every mode, in report order.
    pub const ALL: [FailureMode; 6] = [
        FailureMode::LoopCap,
        FailureMode::NoUsableToolCall,
        FailureMode::WrongAction,
        FailureMode::MissedEscalation,
        FailureMode::WrongAnswer,
        FailureMode::ActionRequired,
    ];

    /// The name records and reports write (`loop_cap`).
    pub fn record_name(self) -> &'static str {
        match self {
            FailureMode::LoopCap => "loop_cap",
            FailureMode::NoUsableToolCall => "no_usable_tool_call",
            FailureMode::WrongAction => "wrong_action",
            FailureMode::MissedEscalation => "missed_escalation",
            FailureMode::WrongAnswer => "wrong_answer",
            FailureMode::ActionRequired => "action_required",
        }
    }

    /// Human wording used in reports.
    pub fn describe(self) -> &'static str {
        match self {
            FailureMode::LoopCap => "looped without answering (call cap)",
            FailureMode::NoUsableToolCall => "never made a usable tool call",
            FailureMode::ActionRequired => "needs an action (toolless baseline)",
            FailureMode::WrongAction => "wrong or missing action (state)",
            FailureMode::MissedEscalation => "missed escalation (ticket)",
            FailureMode::WrongAnswer => "wrong or incomplete answer (reply)",
        }
    }
}

/// Control-flow flags of one conversation (seed 000); `None` where the suite cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlFlags {
    /// A tool name outside the offered set was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_verb: Option<bool>,
    /// A reply stated a fact that needed a lookup the agent never made successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_tool: Option<bool>,
    /// More model calls than the gold trajectory needs, or the call cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_overrun: Option<bool>,
    /// Model turns spent on a task a rule resolves (triage suite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_model: Option<bool>,
}

/// What a grader says about one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether every expectation held.
    pub passed: bool,
    /// One line per failed expectation (empty when passed).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The failure mode of a failed conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_mode: Option<FailureMode>,
    /// Whether the gold tool sequence appears, in order and without errors, among the accepted calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_correct: Option<bool>,
    /// Control-flow flags (seed 000).
    #[serde(default)]
    pub control: ControlFlags,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_names_are_the_serialized_names() {
        for mode in FailureMode::ALL {
            assert_eq!(
                serde_json::to_value(mode).expect("serializes"),
                serde_json::json!(mode.record_name())
            );
        }
    }
}
