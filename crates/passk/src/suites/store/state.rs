//! The store's mutable state for one conversation: a copy of the seed data plus the returns and
//! tickets opened so far, and the canonical snapshot the graders see.

use crate::suites::store::data::{Customer, Order, Product, StoreData};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A return opened by `request_return`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnRecord {
    /// Return id ("R-1", ...), in opening order.
    pub id: String,
    /// Order id.
    pub order_id: String,
    /// Product sku.
    pub sku: String,
    /// Reason the customer gave.
    pub reason: String,
}

/// A ticket opened by `create_ticket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    /// Ticket id ("TK-1", ...), in opening order.
    pub id: String,
    /// Customer the ticket is for.
    pub customer_id: String,
    /// Summary for the human agent.
    pub summary: String,
}

/// Everything one conversation can read and change.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreState {
    /// The fixed "today".
    pub today: crate::domain::date::Date,
    /// Return window in days after delivery (inclusive).
    pub return_window_days: u32,
    /// Customers (never changed).
    pub customers: Vec<Customer>,
    /// Products (never changed).
    pub products: Vec<Product>,
    /// Orders (status and address change).
    pub orders: Vec<Order>,
    /// Returns opened, in order.
    pub returns: Vec<ReturnRecord>,
    /// Tickets opened, in order.
    pub tickets: Vec<Ticket>,
}

impl StoreState {
    /// The seed state.
    pub fn new(data: &StoreData) -> StoreState {
        StoreState {
            today: data.today,
            return_window_days: data.return_window_days,
            customers: data.customers.clone(),
            products: data.products.clone(),
            orders: data.orders.clone(),
            returns: Vec::new(),
            tickets: Vec::new(),
        }
    }

    /// The end state as canonical JSON: orders sorted by id, returns and tickets in opening order.
    pub fn snapshot(&self) -> Value {
        let sorted: BTreeMap<&str, &Order> =
            self.orders.iter().map(|o| (o.id.as_str(), o)).collect();
        let mut orders = Map::new();
        for (id, o) in sorted {
            orders.insert(
                id.to_string(),
                json!({"status": o.status.as_str(), "address": o.address}),
            );
        }
        let returns: Vec<Value> = self
            .returns
            .iter()
            .map(|r| json!({"order_id": r.order_id, "sku": r.sku}))
            .collect();
        let tickets: Vec<Value> = self
            .tickets
            .iter()
            .map(|t| json!({"customer_id": t.customer_id, "summary": t.summary}))
            .collect();
        json!({"orders": orders, "returns": returns, "tickets": tickets})
    }

    /// The customer with this id (case-insensitive).
    pub fn customer(&self, id: &str) -> Option<&Customer> {
        self.customers
            .iter()
            .find(|c| c.id.eq_ignore_ascii_case(id))
    }

    /// The product with this sku (case-insensitive).
    pub fn product(&self, sku: &str) -> Option<&Product> {
        self.products
            .iter()
            .find(|p| p.sku.eq_ignore_ascii_case(sku))
    }

    /// Index of the order with this id (a leading `#` is ignored).
    pub fn order_index(&self, id: &str) -> Option<usize> {
        let id = id.trim_start_matches('#');
        self.orders
            .iter()
            .position(|o| o.id.eq_ignore_ascii_case(id))
    }
}
