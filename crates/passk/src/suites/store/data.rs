//! Typed contents of `tasks/store/store.json`: the store's seed state. Dates and prices
//! deserialize into checked types, so a bad value is reported by serde_json with its line and
//! column. The tool documentation files (`tools/<variant>.json`) are shared
//! [`ToolDocs`](crate::domain::tool_docs::ToolDocs).

use crate::domain::date::Date;
use crate::domain::money::Money;
use serde::{Deserialize, Serialize};

/// Lifecycle of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Paid, not yet handed to the carrier: may be cancelled or re-addressed.
    Processing,
    /// With the carrier.
    Shipped,
    /// Delivered; returns possible within the window.
    Delivered,
    /// Cancelled.
    Cancelled,
}

impl OrderStatus {
    /// The status as written in the data and tool results.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Processing => "processing",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the written form.
    pub fn parse(text: &str) -> Option<OrderStatus> {
        [
            OrderStatus::Processing,
            OrderStatus::Shipped,
            OrderStatus::Delivered,
            OrderStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A customer of the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    /// Customer id.
    pub id: String,
    /// Full name.
    pub name: String,
    /// Email address.
    pub email: String,
}

/// A product of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    /// Stock-keeping unit.
    pub sku: String,
    /// Display name.
    pub name: String,
    /// Unit price.
    pub price: Money,
    /// Units in stock (0: out of stock).
    pub stock: u32,
}

/// One line of an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderItem {
    /// Product sku.
    pub sku: String,
    /// Quantity.
    pub qty: u32,
    /// Price per unit when ordered.
    pub unit_price: Money,
}

/// An order in its seed state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// Order id.
    pub id: String,
    /// Owner.
    pub customer_id: String,
    /// Lines.
    pub items: Vec<OrderItem>,
    /// Status.
    pub status: OrderStatus,
    /// Day the order was placed.
    pub created: Date,
    /// Day it was delivered (delivered orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_on: Option<Date>,
    /// Estimated delivery (processing and shipped orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_delivery: Option<Date>,
    /// Delivery address.
    pub address: String,
}

impl Order {
    /// Sum of qty x unit price over the lines.
    pub fn total(&self) -> Money {
        Money(
            self.items
                .iter()
                .map(|i| u64::from(i.qty).saturating_mul(i.unit_price.0))
                .fold(0u64, u64::saturating_add),
        )
    }
}

/// The whole seed state of the store (`tasks/store/store.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreData {
    /// The fixed "today" every date rule is computed against.
    pub today: Date,
    /// Days after delivery during which a return may be opened (inclusive).
    pub return_window_days: u32,
    /// Customers.
    pub customers: Vec<Customer>,
    /// Products.
    pub products: Vec<Product>,
    /// Orders.
    pub orders: Vec<Order>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_parses_common_forms() {
        assert_eq!(Money::parse("64.00"), Some(Money(6400)));
        assert_eq!(Money::parse("$60.5"), Some(Money(6050)));
        assert_eq!(Money::parse("7"), Some(Money(700)));
        assert_eq!(Money(6050).to_string(), "60.50");
        for bad in ["", "1.234", "abc", "-3", "1.x"] {
            assert_eq!(Money::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn order_total_multiplies_quantities() {
        let o = Order {
            id: "1".into(),
            customer_id: "c".into(),
            items: vec![
                OrderItem {
                    sku: "a".into(),
                    qty: 2,
                    unit_price: Money(1900),
                },
                OrderItem {
                    sku: "b".into(),
                    qty: 1,
                    unit_price: Money(3400),
                },
            ],
            status: OrderStatus::Delivered,
            created: Date {
                year: 2026,
                month: 1,
                day: 1,
            },
            delivered_on: None,
            estimated_delivery: None,
            address: String::new(),
        };
        assert_eq!(o.total(), Money(7200));
    }
}
