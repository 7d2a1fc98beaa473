//! `find_customer(query)`: an exact email (case-insensitive), or a case-insensitive part of a
//! name; every match is returned, so a shared first name gives several.

use super::{Args, ToolResult, ToolSpec};
use crate::suites::store::state::StoreState;
use serde_json::{Value, json};

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "find_customer",
    params: &["query"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let query = args.get("query");
    let q = query.to_lowercase();
    let matches: Vec<Value> = state
        .customers
        .iter()
        .filter(|c| {
            if q.contains('@') {
                c.email.to_lowercase() == q
            } else {
                c.name.to_lowercase().contains(&q)
            }
        })
        .map(|c| json!({"customer_id": c.id, "name": c.name, "email": c.email}))
        .collect();
    if matches.is_empty() {
        return Err(format!("no customer matches '{query}'"));
    }
    Ok(json!({"matches": matches}))
}
