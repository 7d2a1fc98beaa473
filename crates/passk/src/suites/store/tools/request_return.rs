//! `request_return(order_id, sku, reason)`: opens a return for a delivered order's item, up to
//! the return window (30 days) after delivery, once per item.

use super::{Args, ToolResult, ToolSpec, no_order};
use crate::suites::store::data::OrderStatus;
use crate::suites::store::state::{ReturnRecord, StoreState};
use serde_json::json;

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "request_return",
    params: &["order_id", "sku", "reason"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let id = args.get("order_id");
    let sku = args.get("sku");
    let idx = state.order_index(id).ok_or_else(|| no_order(id))?;
    let order = &state.orders[idx];
    if order.status != OrderStatus::Delivered {
        return Err(format!(
            "order {} is {}; only delivered orders can be returned",
            order.id,
            order.status.as_str()
        ));
    }
    let Some(item) = order.items.iter().find(|i| i.sku.eq_ignore_ascii_case(sku)) else {
        return Err(format!("sku '{sku}' is not in order {}", order.id));
    };
    let Some(delivered) = order.delivered_on else {
        return Err(format!("order {} has no delivery date", order.id));
    };
    let days = state.today.days_after(delivered);
    if days > i64::from(state.return_window_days) {
        return Err(format!(
            "order {} was delivered on {delivered}, {days} days ago; returns are accepted up to {} days after delivery",
            order.id, state.return_window_days
        ));
    }
    if state
        .returns
        .iter()
        .any(|r| r.order_id == order.id && r.sku == item.sku)
    {
        return Err(format!(
            "a return for {} in order {} is already open",
            item.sku, order.id
        ));
    }
    let record = ReturnRecord {
        id: format!("R-{}", state.returns.len() + 1),
        order_id: order.id.clone(),
        sku: item.sku.clone(),
        reason: args.get("reason").to_string(),
    };
    let out = json!({"return_id": record.id, "order_id": record.order_id, "sku": record.sku, "status": "open"});
    state.returns.push(record);
    Ok(out)
}
