//! Typed contents of `graders/<suite>/expectations.json` for a suite whose tools are an MCP
//! server: the identifying arguments of each tool (for the trajectory check), the end state a fresh
//! server reports (`seed_state`), and per conversation the facts, forbidden phrases and end-state
//! changes it must leave. Frozen by `graders/graders.lock`; part of the grading source.

use crate::grade::facts::Fact;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What one conversation must achieve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpExpectation {
    /// Facts the replies (all turns joined) must carry.
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// Phrases no reply may contain (case-insensitive).
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// The end state's changes from the seed state, by JSON pointer (`/loans/B3`): the value
    /// there, or `null` for a key that must be gone. Everything else must equal the seed state.
    #[serde(default)]
    pub changes: Map<String, Value>,
}

/// `graders/<suite>/expectations.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpExpectations {
    /// The arguments that identify each tool's call in the trajectory check (a tool not listed is
    /// compared by name only).
    #[serde(default)]
    pub key_args: BTreeMap<String, Vec<String>>,
    /// The end state of a fresh server (checked against the server at load).
    pub seed_state: Value,
    /// Expectations by task id.
    pub conversations: BTreeMap<String, McpExpectation>,
}

/// The state `seed` with `changes` applied: each pointer set to its value, or removed where the
/// value is `null`; `Err` names a pointer whose parent is not an object.
pub fn expected_state(seed: &Value, changes: &Map<String, Value>) -> Result<Value, String> {
    let mut state = seed.clone();
    for (pointer, value) in changes {
        let Some((parent, key)) = pointer.rsplit_once('/') else {
            return Err(format!(
                "'{pointer}' is not a JSON pointer (it starts with '/')"
            ));
        };
        let key = key.replace("~1", "/").replace("~0", "~");
        let Some(Value::Object(obj)) = state.pointer_mut(parent) else {
            return Err(format!(
                "'{pointer}': the seed state has no object at '{parent}'"
            ));
        };
        if value.is_null() {
            obj.remove(&key);
        } else {
            obj.insert(key, value.clone());
        }
    }
    Ok(state)
}
