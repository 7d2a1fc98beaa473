//! `list_orders(customer_id)`: the customer's orders, newest first, with status and total.

use super::{Args, ToolResult, ToolSpec, no_customer};
use crate::suites::store::state::StoreState;
use serde_json::{Value, json};

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "list_orders",
    params: &["customer_id"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let id = args.get("customer_id");
    let customer = state.customer(id).ok_or_else(|| no_customer(id))?;
    let mut orders: Vec<_> = state
        .orders
        .iter()
        .filter(|o| o.customer_id == customer.id)
        .collect();
    orders.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| b.id.cmp(&a.id)));
    let list: Vec<Value> = orders
        .iter()
        .map(|o| {
            json!({
                "order_id": o.id,
                "created": o.created.to_string(),
                "status": o.status.as_str(),
                "total": o.total().to_string(),
            })
        })
        .collect();
    Ok(json!({"customer_id": customer.id, "orders": list}))
}
