//! Typed contents of `graders/store/`: what each store conversation must leave behind and say
//! (`expectations.json`) and the orders' seed state as the graders remember it (`baseline.json`).
//! These files are frozen by `graders/graders.lock`; this module is part of the grading source.

use crate::grade::facts::Fact;
use crate::suites::store::data::OrderStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The expected end state of one order (absent fields: as in the baseline).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderExpect {
    /// Expected status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<OrderStatus>,
    /// Expected address (compared ignoring case, commas and spacing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// One expected return.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnExpect {
    /// Order id.
    pub order_id: String,
    /// Product sku.
    pub sku: String,
}

/// What the conversation may do about tickets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TicketRule {
    /// No ticket may be opened.
    None,
    /// Tickets are neither required nor forbidden.
    Any,
    /// A ticket for each listed customer, and for no one else.
    Required {
        /// Customers who must get a ticket.
        customers: Vec<String>,
        /// When not empty, each required ticket's summary must contain one of these.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        mentions: Vec<String>,
    },
}

/// Everything the grader checks for one store conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreExpectation {
    /// Facts the replies (all turns joined) must carry.
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// Phrases no reply may contain (case-insensitive).
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// Orders whose end state differs from the baseline; every other order must be unchanged.
    #[serde(default)]
    pub orders: BTreeMap<String, OrderExpect>,
    /// The exact list of returns (order does not matter).
    #[serde(default)]
    pub returns: Vec<ReturnExpect>,
    /// The ticket rule.
    pub tickets: TicketRule,
}

/// One order's seed state as the graders remember it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineOrder {
    /// Owner (for the under-tool flag).
    pub customer_id: String,
    /// Seed status.
    pub status: OrderStatus,
    /// Seed address.
    pub address: String,
}

/// `graders/store/baseline.json`: every order's seed state; must agree with `tasks/store/store.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Orders by id.
    pub orders: BTreeMap<String, BaselineOrder>,
}

/// `graders/store/expectations.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreExpectations {
    /// Expectations by task id.
    pub conversations: BTreeMap<String, StoreExpectation>,
}
