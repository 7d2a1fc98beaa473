//! The grader of a suite whose tools are an MCP server: the store's declarative checks over the
//! end state the server reports. A pure function of (expectation, expectations file, tool names,
//! task, evidence): the call cap, no usable tool call, end-state equality with the seed state plus
//! the expected changes, the answer facts and forbidden phrases; and the trajectory check and the
//! unknown-verb and loop-overrun flags.

use crate::domain::{Evidence, Task};
use crate::grade::{Findings, loop_overrun, trajectory_correct, unknown_verb};
use crate::mcp::expect::{McpExpectation, McpExpectations, expected_state};
use crate::trace::{ControlFlags, FailureMode, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;

/// The identifying arguments of each tool, as the trajectory check reads them.
pub type KeyArgs = BTreeMap<String, &'static [&'static str]>;

/// The key arguments of `file`, made `'static` (a suite is loaded once per command).
pub fn key_args(file: &McpExpectations) -> KeyArgs {
    file.key_args
        .iter()
        .map(|(tool, args)| {
            let args: Vec<&'static str> = args
                .iter()
                .map(|a| &*Box::leak(a.clone().into_boxed_str()))
                .collect();
            (tool.clone(), &*Box::leak(args.into_boxed_slice()))
        })
        .collect()
}

/// Grades one conversation.
pub fn grade(
    exp: &McpExpectation,
    file: &McpExpectations,
    key: &KeyArgs,
    tools: &[&str],
    task: &Task,
    ev: &Evidence<'_>,
) -> Verdict {
    let mut f = Findings::of_the_loop(ev, task.needs_tools);
    match expected_state(&file.seed_state, &exp.changes) {
        Ok(want) => {
            for d in differences("", &want, ev.end_state) {
                f.fail(FailureMode::WrongAction, d);
            }
        }
        Err(e) => f.fail(FailureMode::WrongAction, e),
    }
    f.answer(ev.replies, &exp.facts, &exp.forbidden);
    let mut v = f.for_mode(ev.toolless).into_verdict();
    let by_tool = |tool: &str| key.get(tool).copied().unwrap_or(&[]);
    v.trajectory_correct = Some(trajectory_correct(&task.gold, ev.tool_events, &by_tool));
    v.control = ControlFlags {
        unknown_verb: Some(unknown_verb(ev, tools)),
        under_tool: None,
        loop_overrun: Some(loop_overrun(ev.model_calls, &task.gold, ev.hit_call_cap)),
        over_model: None,
    };
    v
}

/// Where `got` differs from `want`, one line per JSON pointer (objects compared key by key,
/// anything else as a whole).
fn differences(at: &str, want: &Value, got: &Value) -> Vec<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let mut keys: Vec<&String> = w.keys().chain(g.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    match (w.get(k), g.get(k)) {
                        (Some(a), Some(b)) => differences(&here, a, b),
                        (Some(a), None) => vec![format!("end state lacks {here} (expected {a})")],
                        (None, Some(b)) => {
                            vec![format!("end state has {here} = {b}, expected none")]
                        }
                        (None, None) => Vec::new(),
                    }
                })
                .collect()
        }
        _ if want == got => Vec::new(),
        _ => {
            let at = if at.is_empty() { "/" } else { at };
            vec![format!("end state {at} is {got}, expected {want}")]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_each_pointer() {
        let want = json!({"loans": {"B1": "M1"}, "holds": {}});
        let got = json!({"loans": {"B1": "M2", "B2": "M1"}, "holds": {}});
        assert_eq!(
            differences("", &want, &got),
            vec![
                "end state /loans/B1 is \"M2\", expected \"M1\"".to_string(),
                "end state has /loans/B2 = \"M1\", expected none".to_string(),
            ]
        );
        assert!(differences("", &want, &want).is_empty());
        assert_eq!(differences("", &json!(1), &Value::Null).len(), 1);
    }

    #[test]
    fn changes_set_and_remove_keys() {
        let seed = json!({"loans": {"B1": "M1"}});
        let mut changes = serde_json::Map::new();
        changes.insert("/loans/B1".into(), Value::Null);
        changes.insert("/loans/B2".into(), json!("M3"));
        assert_eq!(
            expected_state(&seed, &changes).unwrap(),
            json!({"loans": {"B2": "M3"}})
        );
        changes.insert("/nowhere/B9".into(), json!(1));
        assert!(expected_state(&seed, &changes).is_err());
    }
}
