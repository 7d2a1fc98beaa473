//! The triage grader: a pure function of (expectation, ticket, task, evidence). It checks the route
//! (exactly the expected queue, or none), the required lookup, the drafted reply (present exactly
//! when expected, stating its facts), the halt, actions on other tickets and forbidden phrases, and
//! sets the four control flags of seed 000 and the trajectory check against the gold sequence.
//!
//! Control flags, per conversation:
//! - `unknown_verb`: a tool name outside the closed set.
//! - `under_tool` (lookup tickets only; `None` on rule tickets): no successful `lookup_order` of the
//!   ticket's order before the first drafted reply (or at all).
//! - `over_model` (rule-resolvable tickets only; `None` on lookup tickets): the model calls made up
//!   to and including the one that halted the ticket (all of them when it never halted) exceed the
//!   gold plan's tool calls; that is, a model call went to something the rule did not need before
//!   the ticket was closed (a lookup, a draft, a repeated or rejected call).
//! - `loop_overrun`: more model calls than the gold needs, the call cap, or the ticket never halted.

use crate::grade::facts::{describe, fact_holds, normalize};
use crate::grade::{Findings, arg_text, loop_overrun, trajectory_correct, unknown_verb};
use crate::domain::{Evidence, Task};
use crate::suites::triage::data::{Queue, Ticket, TicketExpect};
use crate::suites::triage::policy::{CLOSED, rule_resolvable};
use crate::trace::{ControlFlags, FailureMode, ToolEvent, Verdict};
use serde_json::Value;

/// The arguments that identify a triage call for the trajectory check.
pub fn key_args(tool: &str) -> &'static [&'static str] {
    match tool {
        "lookup_order" => &["order_id"],
        "route_oncall" | "route_triage" | "route_docs" | "draft_reply" | "halt" => &["ticket_id"],
        _ => &[],
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(end: &'a Value, key: &str) -> &'a [Value] {
    end.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Grades one triage conversation.
pub fn grade(exp: &TicketExpect, ticket: &Ticket, task: &Task, ev: &Evidence<'_>) -> Verdict {
    let mut f = Findings::of_the_loop(ev, true);
    let id = ticket.id.as_str();
    let mine = |t: &str| t.eq_ignore_ascii_case(id);
    let end = ev.end_state;
    let routes = list(end, "routes");
    let drafts = list(end, "drafts");
    let halted = list(end, "halted");
    let others: Vec<&str> = routes
        .iter()
        .chain(drafts)
        .map(|r| str_at(r, "ticket_id"))
        .chain(halted.iter().filter_map(Value::as_str))
        .filter(|t| !mine(t))
        .collect();
    if let Some(other) = others.first() {
        f.fail(
            FailureMode::WrongAction,
            format!("acted on ticket {other}, not on this conversation's {id}"),
        );
    }
    let my_routes: Vec<&str> = routes
        .iter()
        .filter(|r| mine(str_at(r, "ticket_id")))
        .map(|r| str_at(r, "queue"))
        .collect();
    match exp.route {
        Some(q) if my_routes != [q.as_str()] => {
            let mode = if q == Queue::Oncall && !my_routes.contains(&q.as_str()) {
                FailureMode::MissedEscalation
            } else {
                FailureMode::WrongAction
            };
            f.fail(
                mode,
                format!("routed to {my_routes:?}, expected exactly [\"{q}\"]"),
            );
        }
        None if !my_routes.is_empty() => f.fail(
            FailureMode::WrongAction,
            format!("routed to {my_routes:?}; this ticket needs a looked-up reply, not a route"),
        ),
        _ => {}
    }
    if let Some(order) = &exp.lookup
        && !list(end, "lookups")
            .iter()
            .filter_map(Value::as_str)
            .any(|o| o.eq_ignore_ascii_case(order))
    {
        f.fail(
            FailureMode::WrongAction,
            format!("order {order} was never looked up"),
        );
    }
    let my_drafts: Vec<&str> = drafts
        .iter()
        .filter(|d| mine(str_at(d, "ticket_id")))
        .map(|d| str_at(d, "message"))
        .collect();
    match &exp.draft {
        Some(_) if my_drafts.is_empty() => f.fail(FailureMode::WrongAction, "no reply was drafted"),
        Some(facts) => {
            let joined = my_drafts.join("\n");
            for fact in facts {
                if !fact_holds(fact, &joined) {
                    f.fail(
                        FailureMode::WrongAnswer,
                        format!("the drafted reply misses {}", describe(fact)),
                    );
                }
            }
        }
        None if !my_drafts.is_empty() => f.fail(
            FailureMode::WrongAction,
            "drafted a reply on a ticket the policy only routes",
        ),
        None => {}
    }
    if exp.halt && !halted.iter().filter_map(Value::as_str).any(mine) {
        f.fail(
            FailureMode::WrongAction,
            format!("ticket {id} was never halted"),
        );
    }
    let said = my_drafts
        .iter()
        .copied()
        .chain(ev.replies.iter().flatten().map(String::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    f.forbid(&normalize(&said), &exp.forbidden);
    let mut v = f.for_mode(ev.toolless).into_verdict();
    v.trajectory_correct = Some(trajectory_correct(&task.gold, ev.tool_events, &key_args));
    v.control = control_flags(ticket, task, ev);
    v
}

/// Whether an event names this ticket in its `ticket_id` argument.
fn on_ticket(e: &ToolEvent, id: &str) -> bool {
    e.args.get("ticket_id").and_then(arg_text) == Some(id.to_lowercase())
}

/// The four control-flow flags of one triage conversation (see the module documentation).
pub fn control_flags(ticket: &Ticket, task: &Task, ev: &Evidence<'_>) -> ControlFlags {
    let events = ev.tool_events;
    let halt = events
        .iter()
        .find(|e| e.ok && e.tool == "halt" && on_ticket(e, &ticket.id));
    let resolvable = rule_resolvable(ticket);
    let calls_until_halt = match halt {
        Some(e) if e.turn == 0 => e.step + 1,
        _ => ev.model_calls,
    };
    let order = ticket.order_id.as_deref().map(|o| o.trim().to_lowercase());
    let lookup = events.iter().position(|e| {
        e.ok && e.tool == "lookup_order" && e.args.get("order_id").and_then(arg_text) == order
    });
    let draft = events
        .iter()
        .position(|e| e.ok && e.tool == "draft_reply" && on_ticket(e, &ticket.id));
    let under_tool = match (lookup, draft) {
        (None, _) => true,
        (Some(l), Some(d)) => l > d,
        (Some(_), None) => false,
    };
    ControlFlags {
        unknown_verb: Some(unknown_verb(ev, &CLOSED)),
        under_tool: (!resolvable).then_some(under_tool),
        loop_overrun: Some(
            loop_overrun(ev.model_calls, &task.gold, ev.hit_call_cap) || halt.is_none(),
        ),
        over_model: resolvable.then(|| calls_until_halt as usize > task.gold.call_count()),
    }
}
