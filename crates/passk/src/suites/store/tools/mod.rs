//! The dispatch table of the eight store tools: an unknown tool is rejected, and every call goes
//! through the shared argument rules ([`crate::domain::args`]; docs/reference/suites.md, "The argument
//! rules"). Each tool lives in its own file and receives only checked string arguments.

mod cancel_order;
mod create_ticket;
mod find_customer;
mod get_order;
mod list_orders;
mod request_return;
mod search_products;
mod update_address;

#[cfg(test)]
mod cases;
#[cfg(test)]
mod defects;

use crate::domain::ToolOutcome;
use crate::domain::args::{Args, check_args};
use crate::suites::store::state::StoreState;
use serde_json::Value;

/// What a tool body returns: the JSON result, or the error text for the model.
pub type ToolResult = Result<Value, String>;

/// A tool body.
pub type ToolFn = fn(&mut StoreState, &Args) -> ToolResult;

/// One entry of the dispatch table.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// Tool name as offered to the model.
    pub name: &'static str,
    /// Required string parameters, in order.
    pub params: &'static [&'static str],
    /// The body.
    pub run: ToolFn,
}

/// The store's tools, in the order they are offered.
pub const TOOLS: [ToolSpec; 8] = [
    find_customer::SPEC,
    list_orders::SPEC,
    get_order::SPEC,
    search_products::SPEC,
    cancel_order::SPEC,
    update_address::SPEC,
    request_return::SPEC,
    create_ticket::SPEC,
];

/// Names of the store's tools, in order.
pub fn tool_names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// The parameters of a store tool (`None` for an unknown name).
pub fn params_of(tool: &str) -> Option<&'static [&'static str]> {
    TOOLS.iter().find(|t| t.name == tool).map(|t| t.params)
}

/// Runs one call through the argument rules and the tool. Never panics.
pub fn dispatch(
    table: &[ToolSpec],
    state: &mut StoreState,
    tool: &str,
    args: &Value,
) -> ToolOutcome {
    let Some(spec) = table.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = table.iter().map(|t| t.name).collect();
        return ToolOutcome::Rejected(format!(
            "unknown tool '{tool}'; the tools are {}",
            names.join(", ")
        ));
    };
    let checked = match check_args(spec.params, args) {
        Ok(a) => a,
        Err(e) => return ToolOutcome::Rejected(e),
    };
    match (spec.run)(state, &checked) {
        Ok(v) => ToolOutcome::Ok(v.to_string()),
        Err(e) => ToolOutcome::Rejected(e),
    }
}

/// Shared error text for an order id that does not exist.
fn no_order(id: &str) -> String {
    format!("no order with id '{id}'")
}

/// The order named by `order_id`, for a change allowed only while it is `processing`; otherwise the
/// error text: the order's status, then `refusal`.
fn processing_order<'a>(
    state: &'a mut crate::suites::store::state::StoreState,
    args: &Args,
    refusal: &str,
) -> Result<&'a mut crate::suites::store::data::Order, String> {
    let id = args.get("order_id");
    let idx = state.order_index(id).ok_or_else(|| no_order(id))?;
    let order = &mut state.orders[idx];
    if order.status != crate::suites::store::data::OrderStatus::Processing {
        return Err(format!(
            "order {} is {}; {refusal}",
            order.id,
            order.status.as_str()
        ));
    }
    Ok(order)
}

/// Shared error text for a customer id that does not exist.
fn no_customer(id: &str) -> String {
    format!("no customer with id '{id}'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> StoreState {
        StoreState::new(&crate::suites::store::env::tests_support::data())
    }

    fn run(tool: &str, args: Value) -> ToolOutcome {
        dispatch(&TOOLS, &mut state(), tool, &args)
    }

    #[test]
    fn the_table_names_each_tool_and_parameter_once() {
        let mut names = tool_names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        for t in &TOOLS {
            let mut params = t.params.to_vec();
            params.sort_unstable();
            params.dedup();
            assert_eq!(params.len(), t.params.len(), "{}", t.name);
            assert!(t.params.iter().all(|p| !p.is_empty()), "{}", t.name);
        }
    }

    #[test]
    fn unknown_tool_is_rejected() {
        let ToolOutcome::Rejected(e) = run("cancel", json!({})) else {
            panic!("accepted")
        };
        assert!(e.contains("unknown tool 'cancel'"), "{e}");
    }

    #[test]
    fn argument_rules() {
        let rejected = |tool: &str, args: Value| match run(tool, args) {
            ToolOutcome::Rejected(e) => e,
            other => panic!("not rejected: {other:?}"),
        };
        assert!(rejected("get_order", json!(["5101"])).contains("JSON object"));
        assert!(rejected("get_order", json!("5101")).contains("JSON object"));
        assert_eq!(
            rejected("get_order", json!({})),
            "missing required argument 'order_id'"
        );
        assert_eq!(
            rejected("get_order", json!({"order_id": null})),
            "missing required argument 'order_id'"
        );
        assert_eq!(
            rejected("get_order", json!({"order_id": "  "})),
            "argument 'order_id' is empty"
        );
        for bad in [json!({"type": "string"}), json!(["5101"]), json!(true)] {
            assert_eq!(
                rejected("get_order", json!({"order_id": bad})),
                "argument 'order_id' must be a string"
            );
        }
        assert_eq!(
            rejected("cancel_order", json!({"order_id": "5111"})),
            "missing required argument 'reason'"
        );
    }

    #[test]
    fn numbers_become_strings_and_extra_keys_are_ignored() {
        for args in [
            json!({"order_id": 5101}),
            json!({"order_id": 5101.0}),
            json!({"order_id": "5101", "x": [1]}),
        ] {
            assert!(matches!(run("get_order", args), ToolOutcome::Ok(_)));
        }
    }
}
