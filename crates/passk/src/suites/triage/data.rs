//! Typed contents of the triage suite's files: the tickets (`tasks/triage/tickets.json`), the
//! orders the agent may look up (`tasks/triage/orders.json`) and what each ticket must end with
//! (`graders/triage/expectations.json`). This module is part of the grading source: the grader and
//! the gold policy read these types.

use crate::grade::facts::Fact;
use crate::domain::date::Date;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One support ticket, exactly as the agent is shown it (as JSON, in one user message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    /// Ticket id ("TK-101"); also the task id.
    pub id: String,
    /// Product area ("billing", "payments", "shop", ...).
    pub product: String,
    /// Priority: "low", "med" or "high".
    pub priority: String,
    /// The order the ticket is about, when the customer gave one.
    pub order_id: Option<String>,
    /// The customer's words.
    pub text: String,
}

impl Ticket {
    /// The user message the agent receives: the ticket as compact JSON (`order_id` null when absent).
    pub fn message(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Where a shipment stands, as `lookup_order` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackingStatus {
    /// A label exists; the carrier has not picked the parcel up.
    LabelCreated,
    /// On its way.
    InTransit,
    /// With the courier today.
    OutForDelivery,
    /// Handed over.
    Delivered,
    /// Late against the first estimate.
    Delayed,
    /// Coming back to the shop.
    ReturnedToSender,
}

impl TrackingStatus {
    /// The status as written in files and tool results.
    pub fn as_str(self) -> &'static str {
        match self {
            TrackingStatus::LabelCreated => "label_created",
            TrackingStatus::InTransit => "in_transit",
            TrackingStatus::OutForDelivery => "out_for_delivery",
            TrackingStatus::Delivered => "delivered",
            TrackingStatus::Delayed => "delayed",
            TrackingStatus::ReturnedToSender => "returned_to_sender",
        }
    }

    /// The status in plain words ("in transit").
    pub fn words(self) -> String {
        self.as_str().replace('_', " ")
    }
}

/// One order's shipment, as the agent can look it up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shipment {
    /// Order id ("A-2201").
    pub order_id: String,
    /// Tracking status.
    pub status: TrackingStatus,
    /// Carrier name.
    pub carrier: String,
    /// Carrier's tracking number.
    pub tracking: String,
    /// Expected delivery date (open shipments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_delivery: Option<Date>,
    /// Delivery date (delivered shipments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_on: Option<Date>,
}

/// `tasks/triage/orders.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrdersFile {
    /// Every order the agent may look up.
    pub orders: Vec<Shipment>,
}

/// The three queues a ticket can be routed to; `route_<queue>` is the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Queue {
    /// The on-call engineer (urgent payment problems).
    Oncall,
    /// The human triage queue (everything the rules do not send elsewhere).
    Triage,
    /// The self-service documentation answer (routine billing questions).
    Docs,
}

impl Queue {
    /// Every queue.
    pub const ALL: [Queue; 3] = [Queue::Oncall, Queue::Triage, Queue::Docs];

    /// The queue's name ("oncall").
    pub fn as_str(self) -> &'static str {
        match self {
            Queue::Oncall => "oncall",
            Queue::Triage => "triage",
            Queue::Docs => "docs",
        }
    }

    /// The tool that routes to this queue ("route_oncall").
    pub fn tool(self) -> &'static str {
        match self {
            Queue::Oncall => "route_oncall",
            Queue::Triage => "route_triage",
            Queue::Docs => "route_docs",
        }
    }

    /// The queue a routing tool sends to (`None` for any other name).
    pub fn of_tool(tool: &str) -> Option<Queue> {
        Queue::ALL.into_iter().find(|q| q.tool() == tool)
    }
}

impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one ticket's conversation must leave behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicketExpect {
    /// The one queue the ticket must be routed to; `null`: it must not be routed at all.
    pub route: Option<Queue>,
    /// The order that must be looked up before the reply is drafted; `null`: no lookup required.
    #[serde(default)]
    pub lookup: Option<String>,
    /// The facts a drafted reply must state; `null`: no reply may be drafted.
    #[serde(default)]
    pub draft: Option<Vec<Fact>>,
    /// Whether the ticket must be halted (closed).
    pub halt: bool,
    /// Phrases no drafted reply and no final reply may contain (false claims).
    #[serde(default)]
    pub forbidden: Vec<String>,
}

/// `graders/triage/expectations.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriageExpectations {
    /// Expectations by ticket id.
    pub tickets: BTreeMap<String, TicketExpect>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_message_is_its_json_with_a_null_order() {
        let t = Ticket {
            id: "TK-1".into(),
            product: "billing".into(),
            priority: "low".into(),
            order_id: None,
            text: "invoice looks high".into(),
        };
        assert_eq!(
            t.message(),
            r#"{"id":"TK-1","product":"billing","priority":"low","order_id":null,"text":"invoice looks high"}"#
        );
    }

    #[test]
    fn queues_and_their_tools() {
        for q in Queue::ALL {
            assert_eq!(Queue::of_tool(q.tool()), Some(q));
        }
        assert_eq!(Queue::of_tool("halt"), None);
        assert_eq!(TrackingStatus::OutForDelivery.words(), "out for delivery");
    }
}
