//! Policy breaches that change the store (policy rule 1): a successful write before the customer
//! was identified with a successful `find_customer`, and a successful write on an order that is
//! not the conversation's customer's. A careful human fails either, whatever the end state. Pure
//! functions of the gold trajectory, the baseline and the tool events.

use crate::grade::arg_text;
use crate::domain::Trajectory;
use crate::suites::store::expect::Baseline;
use crate::trace::ToolEvent;
use std::collections::BTreeSet;

/// The tools that change an order or its returns.
pub const ORDER_WRITES: [&str; 3] = ["cancel_order", "update_address", "request_return"];

/// The conversation's customers as the gold trajectory shows them: the owners of the orders it
/// writes and the customer ids it passes (list_orders, create_ticket). Empty for a gold that only
/// reads orders (it may read someone else's to refuse it), where the rule is not applied: a write
/// there changes an order the expectation keeps, and fails on the end state.
fn own_customers(gold: &Trajectory, baseline: &Baseline) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for call in gold.turns.iter().flat_map(|t| &t.calls) {
        if let Some(c) = call.args.get("customer_id").and_then(arg_text) {
            out.insert(c);
        }
        if ORDER_WRITES.contains(&call.tool.as_str())
            && let Some(o) = call.args.get("order_id").and_then(arg_text)
            && let Some(b) = baseline.orders.get(&o)
        {
            out.insert(b.customer_id.to_lowercase());
        }
    }
    out
}

/// Every breach, each as its reason: in event order, a successful order write made before any
/// successful `find_customer`, or on an order whose owner is none of the gold's customers (when
/// the gold shows any).
pub fn breaches(gold: &Trajectory, baseline: &Baseline, events: &[ToolEvent]) -> Vec<String> {
    let own = own_customers(gold, baseline);
    let mut identified = false;
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e.ok) {
        if e.tool == "find_customer" {
            identified = true;
            continue;
        }
        if !ORDER_WRITES.contains(&e.tool.as_str()) {
            continue;
        }
        let order = e.args.get("order_id").and_then(arg_text).unwrap_or_default();
        if !identified {
            out.push(format!(
                "{} on order {order} before the customer was identified with a successful \
                 find_customer (policy rule 1)",
                e.tool
            ));
        }
        if let Some(b) = baseline.orders.get(&order)
            && !own.is_empty()
            && !own.contains(&b.customer_id.to_lowercase())
        {
            out.push(format!(
                "{} on order {order}, which belongs to another customer (policy rule 1)",
                e.tool
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::event;
    use crate::suites::store::expect::BaselineOrder;
    use serde_json::json;

    fn baseline() -> Baseline {
        let order = |c: &str| BaselineOrder {
            customer_id: c.into(),
            status: crate::suites::store::data::OrderStatus::Processing,
            address: "a".into(),
        };
        Baseline {
            orders: [("5111".to_string(), order("C106")), ("5108".to_string(), order("C101"))]
                .into(),
        }
    }

    fn gold() -> Trajectory {
        serde_json::from_value(json!({"turns": [{"calls": [
            {"tool": "find_customer", "args": {"query": "x"}},
            {"tool": "cancel_order", "args": {"order_id": "5111"}}
        ], "reply": "done"}]}))
        .unwrap()
    }

    #[test]
    fn a_write_before_identifying_or_on_another_customers_order_is_a_breach() {
        let cancel = |o: &str| event("cancel_order", json!({"order_id": o}), true);
        let find = event("find_customer", json!({"query": "x"}), true);
        let failed_find = event("find_customer", json!({"query": "x"}), false);
        assert!(breaches(&gold(), &baseline(), &[find.clone(), cancel("5111")]).is_empty());
        let early = breaches(&gold(), &baseline(), &[failed_find, cancel("5111")]);
        assert_eq!(early.len(), 1, "{early:?}");
        assert!(early[0].contains("before the customer was identified"), "{early:?}");
        let other = breaches(&gold(), &baseline(), &[find, cancel("5108")]);
        assert!(other[0].contains("belongs to another customer"), "{other:?}");
        // A rejected write changed nothing.
        let rejected = event("cancel_order", json!({"order_id": "5111"}), false);
        assert!(breaches(&gold(), &baseline(), &[rejected]).is_empty());
    }
}
