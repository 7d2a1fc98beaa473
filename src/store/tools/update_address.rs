//! `update_address(order_id, address)`: replaces the delivery address, only while `processing`.

use super::{Args, ToolResult, ToolSpec, no_order};
use crate::store::state::StoreState;
use crate::suite::store_data::OrderStatus;
use serde_json::json;

/// Table entry.
pub const SPEC: ToolSpec = ToolSpec {
    name: "update_address",
    params: &["order_id", "address"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let id = args.get("order_id");
    let idx = state.order_index(id).ok_or_else(|| no_order(id))?;
    let order = &mut state.orders[idx];
    if order.status != OrderStatus::Processing {
        return Err(format!(
            "order {} is {}; the address can only be changed while an order is processing",
            order.id,
            order.status.as_str()
        ));
    }
    order.address = args.get("address").to_string();
    Ok(json!({"order_id": order.id, "status": order.status.as_str(), "address": order.address}))
}
