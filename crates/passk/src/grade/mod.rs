//! Pure graders: (expectations, end state, replies, tool events) -> [`Verdict`]. This module holds
//! the parts any suite can reuse (the trajectory check against the gold sequence, the unknown-verb
//! and loop-overrun flags, the failure-mode precedence); `facts` matches answer facts, and `freeze`
//! fingerprints the graders and the grading source. Each suite's grader lives in its folder,
//! `src/suites/<suite>/grade.rs`.

pub mod facts;
pub mod freeze;

use crate::domain::{Evidence, Trajectory};
use crate::trace::{FailureMode, ToolEvent, Verdict};
use serde_json::Value;

/// An argument value as comparable text: strings trimmed and lower-cased with a leading `#`
/// dropped, numbers written out; `None` for anything else.
pub fn arg_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().trim_start_matches('#').to_lowercase()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => Some(format!("{}", f as i64)),
            _ => Some(n.to_string()),
        },
        _ => None,
    }
}

/// Whether the gold tool sequence appears, in order, among the accepted tool events (extra calls
/// in between allowed). Tools are compared by name and by the arguments `key_args` names for them.
pub fn trajectory_correct(
    gold: &Trajectory,
    events: &[ToolEvent],
    key_args: &dyn Fn(&str) -> &'static [&'static str],
) -> bool {
    let mut accepted = events.iter().filter(|e| e.ok);
    'gold: for call in gold.turns.iter().flat_map(|t| &t.calls) {
        for e in accepted.by_ref() {
            if e.tool != call.tool {
                continue;
            }
            let same = key_args(&call.tool).iter().all(|k| {
                let want = call.args.get(*k).and_then(arg_text);
                let got = e.args.get(*k).and_then(arg_text);
                want.is_some() && want == got
            });
            if same {
                continue 'gold;
            }
        }
        return false;
    }
    true
}

/// The tool name a call meant: a malformed call's `__malformed__:` prefix removed.
pub fn intended_tool(tool: &str) -> &str {
    tool.strip_prefix("__malformed__:").unwrap_or(tool)
}

/// Whether any call named a tool outside `known` (seed 000's unknown verb). A malformed call of
/// a reply the server cut at the output limit is left out: its name may be cut mid-word
/// (`list_or`), which the taxonomy counts as a truncated reply.
pub fn unknown_verb(ev: &Evidence<'_>, known: &[&str]) -> bool {
    ev.tool_events.iter().any(|e| {
        let cut = e.tool.starts_with("__malformed__:") && ev.cut.contains(&(e.turn, e.step));
        !cut && !known.contains(&intended_tool(&e.tool))
    })
}

/// Whether the conversation used more model calls than the gold trajectory needs, or hit the cap.
pub fn loop_overrun(model_calls: u32, gold: &Trajectory, hit_call_cap: bool) -> bool {
    hit_call_cap || model_calls as usize > gold.model_calls_needed()
}

/// Collects failed expectations and turns them into a verdict with the right failure mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    found: Vec<(FailureMode, String)>,
}

impl Findings {
    /// The findings of how the agent loop ended: `LoopCap` at the call cap and, where the task
    /// `needs_tools`, `NoUsableToolCall` when no call was accepted.
    pub fn of_the_loop(ev: &crate::domain::Evidence<'_>, needs_tools: bool) -> Findings {
        let mut f = Findings::default();
        if ev.hit_call_cap {
            f.fail(
                FailureMode::LoopCap,
                "stopped at the call cap without answering",
            );
        }
        if needs_tools && !ev.tool_events.iter().any(|e| e.ok) {
            f.fail(FailureMode::NoUsableToolCall, "no tool call was accepted");
        }
        f
    }

    /// Records one failed expectation.
    pub fn fail(&mut self, mode: FailureMode, reason: impl Into<String>) {
        self.found.push((mode, reason.into()));
    }

    /// The answer checks over every turn's reply joined: each fact that does not hold and each
    /// forbidden phrase said fails `WrongAnswer`.
    pub fn answer(
        &mut self,
        replies: &[Option<String>],
        wanted: &[facts::Fact],
        forbidden: &[String],
    ) {
        let joined = replies
            .iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        for fact in wanted {
            if !facts::fact_holds(fact, &joined) {
                self.fail(
                    FailureMode::WrongAnswer,
                    format!("replies miss {}", facts::describe(fact)),
                );
            }
        }
        self.forbid(&facts::normalize(&joined), forbidden);
    }

    /// Fails the reply for every forbidden phrase that `normalized` (the replies, normalized by
    /// `facts::normalize`) contains.
    pub fn forbid(&mut self, normalized: &str, phrases: &[String]) {
        for phrase in phrases {
            if facts::contains_phrase(normalized, phrase) {
                self.fail(
                    FailureMode::WrongAnswer,
                    format!("a reply says forbidden '{phrase}'"),
                );
            }
        }
    }

    /// The findings of a toolless baseline conversation (when `toolless`): it offered no tools,
    /// so "no tool call was accepted" is dropped, and every state or ticket finding (a wrong or
    /// missing action, a missed escalation) becomes `ActionRequired`, an action the task requires
    /// and no reply can take. What remains is the answer checks.
    pub fn for_mode(mut self, toolless: bool) -> Findings {
        if toolless {
            self.found
                .retain(|(m, _)| *m != FailureMode::NoUsableToolCall);
            for (m, _) in &mut self.found {
                if matches!(m, FailureMode::WrongAction | FailureMode::MissedEscalation) {
                    *m = FailureMode::ActionRequired;
                }
            }
        }
        self
    }

    /// Whether nothing failed.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The verdict: passed when nothing failed; otherwise every reason in order, and the failure mode
    /// of highest precedence (call cap, no usable tool call, state, ticket, reply).
    pub fn into_verdict(self) -> Verdict {
        let failure_mode = self.found.iter().map(|(m, _)| *m).min();
        Verdict {
            passed: self.found.is_empty(),
            reasons: self.found.into_iter().map(|(_, r)| r).collect(),
            failure_mode,
            trajectory_correct: None,
            control: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{TrajectoryCall, TrajectoryTurn};
    use serde_json::json;

    fn gold() -> Trajectory {
        let call = |tool: &str, args: Value| TrajectoryCall {
            tool: tool.into(),
            args: args.as_object().cloned().unwrap_or_default(),
        };
        Trajectory {
            turns: vec![TrajectoryTurn {
                calls: vec![
                    call("find_customer", json!({"query": "a"})),
                    call("get_order", json!({"order_id": "5101"})),
                ],
                reply: "r".into(),
            }],
        }
    }

    fn ev(tool: &str, args: Value, ok: bool) -> ToolEvent {
        ToolEvent {
            turn: 0,
            step: 0,
            tool: tool.into(),
            args,
            ok,
            error: None,
            format: None,
        }
    }

    fn keys(tool: &str) -> &'static [&'static str] {
        if tool == "get_order" {
            &["order_id"]
        } else {
            &[]
        }
    }

    #[test]
    fn gold_sequence_in_order_with_extras() {
        let events = vec![
            ev("find_customer", json!({"query": "x"}), true),
            ev("search_products", json!({}), true),
            ev("get_order", json!({"order_id": 5101}), true),
        ];
        assert!(trajectory_correct(&gold(), &events, &keys));
    }

    #[test]
    fn rejected_wrong_or_out_of_order_calls_do_not_count() {
        let rejected = vec![
            ev("find_customer", json!({}), true),
            ev("get_order", json!({"order_id": "5101"}), false),
        ];
        assert!(!trajectory_correct(&gold(), &rejected, &keys));
        let wrong = vec![
            ev("find_customer", json!({}), true),
            ev("get_order", json!({"order_id": "5102"}), true),
        ];
        assert!(!trajectory_correct(&gold(), &wrong, &keys));
        let swapped = vec![
            ev("get_order", json!({"order_id": "5101"}), true),
            ev("find_customer", json!({}), true),
        ];
        assert!(!trajectory_correct(&gold(), &swapped, &keys));
    }

    #[test]
    fn flags() {
        let of = |events: &[ToolEvent], cut: &[(u32, u32)]| {
            let evidence = Evidence {
                end_state: &Value::Null,
                replies: &[],
                tool_events: events,
                hit_call_cap: false,
                model_calls: 1,
                toolless: false,
                cut,
            };
            unknown_verb(&evidence, &["get_order", "list_orders"])
        };
        assert!(!of(
            &[ev("__malformed__:get_order", json!(null), false)],
            &[]
        ));
        assert!(of(&[ev("cancel", json!({}), false)], &[]));
        // A name cut mid-word by the output limit is no made-up name; uncut, it is one.
        let cut_name = [ev("__malformed__:list_or", json!(null), false)];
        assert!(of(&cut_name, &[]));
        assert!(!of(&cut_name, &[(0, 0)]));
        assert!(!loop_overrun(3, &gold(), false));
        assert!(loop_overrun(4, &gold(), false));
        assert!(loop_overrun(1, &gold(), true));
    }

    #[test]
    fn precedence_picks_the_earliest_mode() {
        let mut f = Findings::default();
        f.fail(FailureMode::WrongAnswer, "a");
        f.fail(FailureMode::WrongAction, "b");
        let v = f.into_verdict();
        assert!(!v.passed);
        assert_eq!(v.failure_mode, Some(FailureMode::WrongAction));
        assert_eq!(v.reasons, vec!["a", "b"]);
    }
}
