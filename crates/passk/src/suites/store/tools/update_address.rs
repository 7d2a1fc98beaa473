//! `update_address(order_id, address)`: replaces the delivery address, only while `processing`.

use super::{Args, ToolResult, ToolSpec, processing_order};
use crate::suites::store::state::StoreState;
use serde_json::json;

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "update_address",
    params: &["order_id", "address"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let order = processing_order(
        state,
        args,
        "the address can only be changed while an order is processing",
    )?;
    order.address = args.get("address").to_string();
    Ok(json!({"order_id": order.id, "status": order.status.as_str(), "address": order.address}))
}
