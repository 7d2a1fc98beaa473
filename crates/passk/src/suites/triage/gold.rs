//! Trajectories derived from the gold policy: each ticket's gold trajectory (the policy's actions as
//! tool calls, the drafted reply written from the looked-up order) and its near-misses (the policy
//! with one plausible mistake: a wrong route, a skipped lookup, no halt, a reply nobody asked for, a
//! wrong status). Generated, never stored, so the tasks cannot disagree with the policy.

use crate::domain::{NearMiss, Trajectory, TrajectoryCall, TrajectoryTurn};
use crate::suites::triage::data::{Queue, Shipment, Ticket, TrackingStatus};
use crate::suites::triage::policy::{Action, Branch, branch, gold_plan};
use crate::trace::FailureMode;
use serde_json::{Map, Value};

fn call(tool: &str, args: &[(&str, &str)]) -> TrajectoryCall {
    let mut map = Map::new();
    for (k, v) in args {
        map.insert((*k).to_string(), Value::String((*v).to_string()));
    }
    TrajectoryCall {
        tool: tool.to_string(),
        args: map,
    }
}

fn one_turn(calls: Vec<TrajectoryCall>, reply: String) -> Trajectory {
    Trajectory {
        turns: vec![TrajectoryTurn { calls, reply }],
    }
}

/// The reply a perfect agent drafts from the looked-up shipment: its status in plain words, the
/// date that goes with it, the carrier and the tracking number.
pub fn draft_message(s: &Shipment) -> String {
    let (id, carrier, tracking) = (&s.order_id, &s.carrier, &s.tracking);
    let est = s
        .estimated_delivery
        .map(|d| d.to_string())
        .unwrap_or_else(|| "not known yet".into());
    match s.status {
        TrackingStatus::LabelCreated => format!(
            "Hello, thanks for asking about order {id}. A shipping label has been created, but \
             {carrier} has not picked the parcel up yet; the expected delivery date is {est} \
             (tracking number {tracking})."
        ),
        TrackingStatus::InTransit => format!(
            "Hello, order {id} is in transit with {carrier} (tracking number {tracking}) and is \
             expected to arrive on {est}."
        ),
        TrackingStatus::OutForDelivery => format!(
            "Hello, order {id} is out for delivery with {carrier} today, {est} (tracking number \
             {tracking})."
        ),
        TrackingStatus::Delivered => format!(
            "Hello, {carrier} shows order {id} as delivered on {} (tracking number {tracking}). If \
             it is not at your door, please check with your neighbours; we will open a claim with \
             the carrier if it does not turn up.",
            s.delivered_on
                .map(|d| d.to_string())
                .unwrap_or_else(|| "an unknown date".into())
        ),
        TrackingStatus::Delayed => format!(
            "Hello, order {id} is delayed with {carrier}; the new expected delivery date is {est} \
             (tracking number {tracking}). We are sorry for the wait."
        ),
        TrackingStatus::ReturnedToSender => format!(
            "Hello, order {id} was returned to sender by {carrier} (tracking number {tracking}). \
             Once it is back with us we will send it again or refund you, whichever you prefer."
        ),
    }
}

/// A drafted reply that claims the wrong status (the near-miss that never read the lookup).
fn wrong_status_message(s: &Shipment) -> String {
    match s.status {
        TrackingStatus::Delivered => format!(
            "Hello, order {} is still in transit and should reach you in a few days.",
            s.order_id
        ),
        _ => format!(
            "Good news: order {} has been delivered. Please check your porch.",
            s.order_id
        ),
    }
}

fn action_call(
    a: Action,
    ticket: &Ticket,
    shipment: Option<&Shipment>,
) -> Result<TrajectoryCall, String> {
    let tid = ticket.id.as_str();
    Ok(match a {
        Action::Route(q) => call(q.tool(), &[("ticket_id", tid)]),
        Action::LookupOrder => {
            let order = ticket
                .order_id
                .as_deref()
                .ok_or("a lookup needs the ticket's order id")?;
            call("lookup_order", &[("order_id", order)])
        }
        Action::DraftReply => {
            let s = shipment.ok_or("the drafted reply needs the ticket's order in orders.json")?;
            call(
                "draft_reply",
                &[("ticket_id", tid), ("message", &draft_message(s))],
            )
        }
        Action::Halt => call("halt", &[("ticket_id", tid)]),
    })
}

fn closing_reply(ticket: &Ticket) -> String {
    match (branch(ticket), ticket.order_id.as_deref()) {
        (Branch::Lookup, Some(order)) => format!(
            "Looked up order {order}, drafted a reply on {} and closed it.",
            ticket.id
        ),
        _ => match crate::suites::triage::policy::gold_route(ticket) {
            Some(q) => format!("Routed {} to {q} and closed it.", ticket.id),
            None => format!("Closed {}.", ticket.id),
        },
    }
}

/// The gold trajectory: the policy's actions as tool calls, one turn, then a one-line note.
/// `shipment` is the ticket's order (required for a lookup ticket).
pub fn gold_trajectory(ticket: &Ticket, shipment: Option<&Shipment>) -> Result<Trajectory, String> {
    let calls = gold_plan(ticket)
        .into_iter()
        .map(|a| action_call(a, ticket, shipment))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(one_turn(calls, closing_reply(ticket)))
}

/// The near-misses of a ticket, each with the failure mode its grader must give.
pub fn near_misses(ticket: &Ticket, shipment: Option<&Shipment>) -> Result<Vec<NearMiss>, String> {
    let gold = gold_trajectory(ticket, shipment)?;
    let calls = &gold.turns[0].calls;
    let reply = gold.turns[0].reply.clone();
    let tid = ticket.id.as_str();
    let nm =
        |name: String, expect: FailureMode, calls: Vec<TrajectoryCall>, reply: String| NearMiss {
            name,
            expect,
            trajectory: one_turn(calls, reply),
        };
    let without = |tool: &str| -> Vec<TrajectoryCall> {
        calls.iter().filter(|c| c.tool != tool).cloned().collect()
    };
    let mut out = Vec::new();
    match branch(ticket) {
        Branch::Lookup => {
            let (Some(s), Some(order)) = (shipment, ticket.order_id.as_deref()) else {
                return Err("a lookup ticket needs its order in orders.json".into());
            };
            let invented =
                format!("Hello, order {order} has shipped and will arrive in a few days.");
            out.push(nm(
                "skips the lookup and drafts from the ticket alone".into(),
                FailureMode::WrongAction,
                vec![
                    call("draft_reply", &[("ticket_id", tid), ("message", &invented)]),
                    call("halt", &[("ticket_id", tid)]),
                ],
                reply.clone(),
            ));
            out.push(nm(
                "looks the order up and drafts, but never halts".into(),
                FailureMode::WrongAction,
                without("halt"),
                reply.clone(),
            ));
            out.push(nm(
                "looks the order up, then routes to triage instead of replying".into(),
                FailureMode::WrongAction,
                vec![
                    call("lookup_order", &[("order_id", order)]),
                    call("route_triage", &[("ticket_id", tid)]),
                    call("halt", &[("ticket_id", tid)]),
                ],
                format!("Routed {tid} to triage and closed it."),
            ));
            out.push(nm(
                "drafts a status the lookup did not return".into(),
                FailureMode::WrongAnswer,
                vec![
                    call("lookup_order", &[("order_id", order)]),
                    call(
                        "draft_reply",
                        &[("ticket_id", tid), ("message", &wrong_status_message(s))],
                    ),
                    call("halt", &[("ticket_id", tid)]),
                ],
                reply,
            ));
        }
        b => {
            let (right, wrong) = match b {
                Branch::Oncall => (Queue::Oncall, Queue::Triage),
                Branch::Docs => (Queue::Docs, Queue::Triage),
                _ => (Queue::Triage, Queue::Oncall),
            };
            out.push(nm(
                format!("routes to {wrong} instead of {right}"),
                if right == Queue::Oncall {
                    FailureMode::MissedEscalation
                } else {
                    FailureMode::WrongAction
                },
                vec![
                    call(wrong.tool(), &[("ticket_id", tid)]),
                    call("halt", &[("ticket_id", tid)]),
                ],
                format!("Routed {tid} to {wrong} and closed it."),
            ));
            out.push(nm(
                "routes but never halts".into(),
                FailureMode::WrongAction,
                without("halt"),
                reply.clone(),
            ));
            out.push(nm(
                "drafts a reply on a route-only ticket".into(),
                FailureMode::WrongAction,
                vec![
                    call(right.tool(), &[("ticket_id", tid)]),
                    call(
                        "draft_reply",
                        &[
                            ("ticket_id", tid),
                            (
                                "message",
                                "Thanks for your message, we are looking into it.",
                            ),
                        ],
                    ),
                    call("halt", &[("ticket_id", tid)]),
                ],
                reply,
            ));
        }
    }
    Ok(out)
}
