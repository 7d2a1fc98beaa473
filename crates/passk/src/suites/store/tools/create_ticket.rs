//! `create_ticket(customer_id, summary)`: opens a ticket for a human agent.

use super::{Args, ToolResult, ToolSpec, no_customer};
use crate::suites::store::state::{StoreState, Ticket};
use serde_json::json;

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "create_ticket",
    params: &["customer_id", "summary"],
    run,
};

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let id = args.get("customer_id");
    let customer = state.customer(id).ok_or_else(|| no_customer(id))?;
    let ticket = Ticket {
        id: format!("TK-{}", state.tickets.len() + 1),
        customer_id: customer.id.clone(),
        summary: args.get("summary").to_string(),
    };
    let out = json!({"ticket_id": ticket.id, "customer_id": ticket.customer_id, "status": "open"});
    state.tickets.push(ticket);
    Ok(out)
}
