//! Typed contents of `graders/`: what each store conversation must leave behind and say
//! (`graders/store/expectations.json`), the orders' seed state as the graders remember it
//! (`graders/store/baseline.json`), and the router's gold labels (`graders/router/labels.json`).
//! These files are frozen by `graders/graders.lock`; this module is part of the grading source.

use crate::suite::date::Date;
use crate::suite::store_data::{Money, OrderStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which way a stock claim must go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StockClaim {
    /// The reply must say the product is in stock, and never that it is not.
    In,
    /// The reply must say the product is out of stock, and never that it is in stock.
    Out,
}

/// One required answer fact: a group of acceptable alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Fact {
    /// Any of these phrases, case-insensitive, not glued to other letters or digits.
    Any(Vec<String>),
    /// The date in any common written form ("2026-10-18", "October 18", "18 Oct", "18/10/2026").
    Date(Date),
    /// The amount as a number in the text ("$60.50", "60.5", "60.50 dollars").
    Money(Money),
    /// A negation-aware stock claim.
    Stock(StockClaim),
}

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

/// `graders/router/labels.json`: the closed label set and each message's gold label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterLabels {
    /// The closed label set, in report order.
    pub labels: Vec<String>,
    /// Gold label of each message, by the message's id in `tasks/router/messages.json`.
    pub gold: BTreeMap<String, String>,
}
