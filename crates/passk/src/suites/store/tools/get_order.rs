//! `get_order(order_id)`: one order with owner, items, total, status, dates and address.

use super::{Args, ToolResult, ToolSpec, no_order};
use crate::suites::store::state::StoreState;
use serde_json::{Map, Value, json};

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "get_order",
    params: &["order_id"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let id = args.get("order_id");
    let idx = state.order_index(id).ok_or_else(|| no_order(id))?;
    let order = &state.orders[idx];
    let items: Vec<Value> = order
        .items
        .iter()
        .map(|i| {
            let name = state.product(&i.sku).map(|p| p.name.as_str()).unwrap_or("");
            json!({"sku": i.sku, "name": name, "qty": i.qty, "unit_price": i.unit_price.to_string()})
        })
        .collect();
    let mut out = Map::new();
    out.insert("order_id".into(), order.id.clone().into());
    out.insert("customer_id".into(), order.customer_id.clone().into());
    out.insert("status".into(), order.status.as_str().into());
    out.insert("created".into(), order.created.to_string().into());
    if let Some(d) = order.delivered_on {
        out.insert("delivered_on".into(), d.to_string().into());
    }
    if let Some(d) = order.estimated_delivery {
        out.insert("estimated_delivery".into(), d.to_string().into());
    }
    out.insert("items".into(), items.into());
    out.insert("total".into(), order.total().to_string().into());
    out.insert("address".into(), order.address.clone().into());
    Ok(Value::Object(out))
}
