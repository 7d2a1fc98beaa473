//! The store grader: a pure function of (expectation, baseline, task, evidence). It fails a policy
//! breach that changed the store (`policy`), checks the end
//! state of every order (unlisted orders must be unchanged), the exact returns, the ticket rule, the
//! answer facts and forbidden phrases, and sets the control flags (unknown verb, under-tool, loop
//! overrun) and the trajectory check against the gold sequence.

use crate::grade::facts::{amounts, contains_phrase, normalize};
use crate::grade::{Findings, arg_text, loop_overrun, trajectory_correct, unknown_verb};
use crate::domain::date::MONTHS;
use crate::domain::{Evidence, Task};
use crate::suites::store::expect::{Baseline, ReturnExpect, StoreExpectation, TicketRule};
use crate::trace::{ControlFlags, FailureMode, Verdict};
use serde_json::Value;

/// The store's tool names (anything else is an unknown verb).
pub const STORE_TOOL_NAMES: [&str; 8] = [
    "find_customer",
    "list_orders",
    "get_order",
    "search_products",
    "cancel_order",
    "update_address",
    "request_return",
    "create_ticket",
];

/// The arguments that identify a store call for the trajectory check.
pub fn key_args(tool: &str) -> &'static [&'static str] {
    match tool {
        "list_orders" | "create_ticket" => &["customer_id"],
        "get_order" | "cancel_order" | "update_address" => &["order_id"],
        "request_return" => &["order_id", "sku"],
        _ => &[],
    }
}

/// An address as compared: lower case, commas and full stops dropped, spacing collapsed.
pub fn address_key(a: &str) -> String {
    normalize(&a.replace([',', '.'], " "))
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Grades one store conversation.
pub fn grade(
    exp: &StoreExpectation,
    baseline: &Baseline,
    task: &Task,
    ev: &Evidence<'_>,
) -> Verdict {
    let mut f = Findings::of_the_loop(ev, task.needs_tools);
    for why in super::policy::breaches(&task.gold, baseline, ev.tool_events) {
        f.fail(FailureMode::WrongAction, why);
    }
    check_orders(exp, baseline, ev.end_state, &mut f);
    check_returns(&exp.returns, ev.end_state, &mut f);
    check_tickets(&exp.tickets, ev.end_state, &mut f);
    f.answer(ev.replies, &exp.facts, &exp.forbidden);
    let mut v = f.for_mode(ev.toolless).into_verdict();
    v.trajectory_correct = Some(trajectory_correct(&task.gold, ev.tool_events, &key_args));
    v.control = ControlFlags {
        unknown_verb: Some(unknown_verb(ev, &STORE_TOOL_NAMES)),
        under_tool: Some(under_tool(baseline, ev)),
        loop_overrun: Some(loop_overrun(ev.model_calls, &task.gold, ev.hit_call_cap)),
        over_model: None,
    };
    v
}

fn check_orders(exp: &StoreExpectation, baseline: &Baseline, end: &Value, f: &mut Findings) {
    let orders = end.get("orders");
    for (id, base) in &baseline.orders {
        let want = exp.orders.get(id);
        let want_status = want.and_then(|w| w.status).unwrap_or(base.status).as_str();
        let want_addr = want
            .and_then(|w| w.address.as_deref())
            .unwrap_or(&base.address);
        let Some(got) = orders.and_then(|o| o.get(id)) else {
            f.fail(
                FailureMode::WrongAction,
                format!("order {id} is missing from the end state"),
            );
            continue;
        };
        let status = str_at(got, "status").unwrap_or("(none)");
        if status != want_status {
            f.fail(
                FailureMode::WrongAction,
                format!("order {id} is {status}, expected {want_status}"),
            );
        }
        let addr = str_at(got, "address").unwrap_or("");
        if address_key(addr) != address_key(want_addr) {
            f.fail(
                FailureMode::WrongAction,
                format!("order {id} ships to '{addr}', expected '{want_addr}'"),
            );
        }
    }
}

fn check_returns(want: &[ReturnExpect], end: &Value, f: &mut Findings) {
    let mut got: Vec<ReturnExpect> = end
        .get("returns")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| ReturnExpect {
                    order_id: str_at(r, "order_id").unwrap_or("").to_string(),
                    sku: str_at(r, "sku").unwrap_or("").to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut want = want.to_vec();
    got.sort();
    want.sort();
    if got != want {
        let show = |rs: &[ReturnExpect]| {
            rs.iter()
                .map(|r| format!("{}/{}", r.order_id, r.sku))
                .collect::<Vec<_>>()
                .join(", ")
        };
        f.fail(
            FailureMode::WrongAction,
            format!("returns are [{}], expected [{}]", show(&got), show(&want)),
        );
    }
}

fn check_tickets(rule: &TicketRule, end: &Value, f: &mut Findings) {
    let tickets: Vec<(&str, &str)> = end
        .get("tickets")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    (
                        str_at(t, "customer_id").unwrap_or(""),
                        str_at(t, "summary").unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    match rule {
        TicketRule::Any => {}
        TicketRule::None => {
            if !tickets.is_empty() {
                f.fail(
                    FailureMode::MissedEscalation,
                    format!(
                        "{} ticket(s) opened where none was called for",
                        tickets.len()
                    ),
                );
            }
        }
        TicketRule::Required {
            customers,
            mentions,
        } => {
            for c in customers {
                let mine: Vec<&str> = tickets
                    .iter()
                    .filter(|(id, _)| id.eq_ignore_ascii_case(c))
                    .map(|(_, s)| *s)
                    .collect();
                if mine.is_empty() {
                    f.fail(
                        FailureMode::MissedEscalation,
                        format!("no ticket opened for customer {c}"),
                    );
                } else if !mentions.is_empty()
                    && !mine.iter().any(|s| {
                        let n = normalize(s);
                        mentions.iter().any(|m| contains_phrase(&n, m))
                    })
                {
                    f.fail(
                        FailureMode::MissedEscalation,
                        format!("the ticket for {c} does not mention {mentions:?}"),
                    );
                }
            }
            for (id, _) in &tickets {
                if !customers.iter().any(|c| c.eq_ignore_ascii_case(id)) {
                    f.fail(
                        FailureMode::MissedEscalation,
                        format!(
                            "a ticket was opened for customer '{id}', expected only {customers:?}"
                        ),
                    );
                }
            }
        }
    }
}

/// Whether a reply states a fact about an order the agent never looked up successfully (by that
/// turn): get_order or a write on the order, or list_orders of its owner.
fn under_tool(baseline: &Baseline, ev: &Evidence<'_>) -> bool {
    for (turn, reply) in ev.replies.iter().enumerate() {
        let Some(reply) = reply else { continue };
        if !states_order_fact(reply) {
            continue;
        }
        let norm = normalize(reply);
        for (id, base) in &baseline.orders {
            if !contains_phrase(&norm, id) {
                continue;
            }
            let id_key = id.to_lowercase();
            let owner = base.customer_id.to_lowercase();
            let covered = ev
                .tool_events
                .iter()
                .filter(|e| e.ok && e.turn as usize <= turn)
                .any(|e| {
                    let order = e.args.get("order_id").and_then(arg_text);
                    let customer = e.args.get("customer_id").and_then(arg_text);
                    match e.tool.as_str() {
                        "get_order" | "cancel_order" | "update_address" | "request_return" => {
                            order.as_deref() == Some(&id_key)
                        }
                        "list_orders" => customer.as_deref() == Some(&owner),
                        _ => false,
                    }
                });
            if !covered {
                return true;
            }
        }
    }
    false
}

/// Whether a reply states something about an order: a status, a date or an amount.
fn states_order_fact(text: &str) -> bool {
    let t = normalize(text);
    const WORDS: [&str; 9] = [
        "processing",
        "shipped",
        "delivered",
        "cancelled",
        "canceled",
        "arrive",
        "arriving",
        "on its way",
        "total",
    ];
    WORDS.iter().any(|w| contains_phrase(&t, w))
        || MONTHS.iter().any(|m| contains_phrase(&t, m))
        || t.as_bytes()
            .windows(5)
            .any(|w| w[..4].iter().all(u8::is_ascii_digit) && w[4] == b'-')
        || t.contains('$')
        || amounts(&t).iter().any(|m| m.0 % 100 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_facts() {
        assert!(states_order_fact("Order 5105 has shipped"));
        assert!(states_order_fact("it arrives on October 18"));
        assert!(!states_order_fact("Which order do you mean?"));
    }
}
