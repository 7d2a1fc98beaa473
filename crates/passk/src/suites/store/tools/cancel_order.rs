//! `cancel_order(order_id, reason)`: status becomes `cancelled`, only while `processing`.
//! Ownership is not checked here: acting only on the customer's own orders is policy.

use super::{Args, ToolResult, ToolSpec, processing_order};
use crate::suites::store::data::OrderStatus;
use crate::suites::store::state::StoreState;
use serde_json::json;

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "cancel_order",
    params: &["order_id", "reason"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let order = processing_order(state, args, "only processing orders can be cancelled")?;
    order.status = OrderStatus::Cancelled;
    Ok(json!({"order_id": order.id, "status": order.status.as_str()}))
}
