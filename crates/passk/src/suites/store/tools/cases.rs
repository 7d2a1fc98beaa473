//! Per-tool tests as data: each case runs calls on a fresh seed state through a dispatch table and
//! checks the results and the state. The real table must pass every case; the defect tests run the
//! same cases against tables with one tool broken.

use super::{ToolSpec, dispatch};
use crate::domain::ToolOutcome;
use crate::suites::store::data::OrderStatus;
use crate::suites::store::state::StoreState;
use serde_json::{Value, json};

/// One per-tool test.
pub(super) struct Case {
    /// Tool under test.
    pub tool: &'static str,
    /// What it checks.
    pub name: &'static str,
    /// Calls made in order on a fresh state.
    pub calls: Vec<(&'static str, Value)>,
    /// Whether the outcomes and the end state are right.
    pub check: fn(&[ToolOutcome], &StoreState) -> bool,
}

fn ok_json(o: &ToolOutcome) -> Option<Value> {
    match o {
        ToolOutcome::Ok(t) => serde_json::from_str(t).ok(),
        ToolOutcome::Rejected(_) | ToolOutcome::ServerFailed(_) => None,
    }
}

fn rejected_with(o: &ToolOutcome, text: &str) -> bool {
    matches!(o, ToolOutcome::Rejected(e) if e.contains(text))
}

fn status(s: &StoreState, id: &str) -> Option<OrderStatus> {
    s.orders.iter().find(|o| o.id == id).map(|o| o.status)
}

fn address(s: &StoreState, id: &str) -> String {
    s.orders
        .iter()
        .find(|o| o.id == id)
        .map(|o| o.address.clone())
        .unwrap_or_default()
}

/// Every per-tool case, tool by tool.
pub(super) fn cases() -> Vec<Case> {
    [
        find_customer_cases(),
        list_orders_cases(),
        get_order_cases(),
        search_products_cases(),
        cancel_order_cases(),
        update_address_cases(),
        request_return_cases(),
        create_ticket_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The cases of `find_customer`.
fn find_customer_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "find_customer",
            name: "an exact email finds one customer",
            calls: vec![("find_customer", json!({"query": "Maya.Okafor@example.com"}))],
            check: |o, _| {
                ok_json(&o[0]).is_some_and(|v| {
                    v["matches"].as_array().map(Vec::len) == Some(1)
                        && v["matches"][0]["customer_id"] == "C101"
                })
            },
        },
        Case {
            tool: "find_customer",
            name: "a shared first name finds both customers",
            calls: vec![("find_customer", json!({"query": "maya"}))],
            check: |o, _| {
                ok_json(&o[0]).is_some_and(|v| v["matches"].as_array().map(Vec::len) == Some(2))
            },
        },
        Case {
            tool: "find_customer",
            name: "no match is an error; a missing query is named",
            calls: vec![
                ("find_customer", json!({"query": "Nobody"})),
                ("find_customer", json!({})),
            ],
            check: |o, _| {
                rejected_with(&o[0], "no customer matches")
                    && rejected_with(&o[1], "missing required argument 'query'")
            },
        },
    ]
}

/// The cases of `list_orders`.
fn list_orders_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "list_orders",
            name: "orders come newest first with status and total",
            calls: vec![("list_orders", json!({"customer_id": "C101"}))],
            check: |o, _| {
                ok_json(&o[0]).is_some_and(|v| {
                    v["orders"][0]["order_id"] == "5108"
                        && v["orders"][1]["order_id"] == "5101"
                        && v["orders"][0]["total"] == "60.50"
                })
            },
        },
        Case {
            tool: "list_orders",
            name: "an unknown customer is an error; a missing id is named",
            calls: vec![
                ("list_orders", json!({"customer_id": "C999"})),
                ("list_orders", json!({})),
            ],
            check: |o, _| {
                rejected_with(&o[0], "no customer with id")
                    && rejected_with(&o[1], "missing required argument 'customer_id'")
            },
        },
    ]
}

/// The cases of `get_order`.
fn get_order_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "get_order",
            name: "the total multiplies quantities",
            calls: vec![
                ("get_order", json!({"order_id": "5102"})),
                ("get_order", json!({"order_id": "5108"})),
            ],
            check: |o, _| {
                ok_json(&o[0]).is_some_and(|v| {
                    v["total"] == "72.00"
                        && v["customer_id"] == "C102"
                        && v["delivered_on"] == "2026-10-03"
                }) && ok_json(&o[1]).is_some_and(|v| {
                    v["total"] == "60.50" && v["estimated_delivery"] == "2026-10-17"
                })
            },
        },
        Case {
            tool: "get_order",
            name: "an unknown order is an error; a missing id is named",
            calls: vec![
                ("get_order", json!({"order_id": "9999"})),
                ("get_order", json!({})),
            ],
            check: |o, _| {
                rejected_with(&o[0], "no order with id")
                    && rejected_with(&o[1], "missing required argument 'order_id'")
            },
        },
    ]
}

/// The cases of `search_products`.
fn search_products_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "search_products",
            name: "stock and price of the matching product",
            calls: vec![
                ("search_products", json!({"query": "wool throw blanket"})),
                ("search_products", json!({"query": "clocks"})),
            ],
            check: |o, _| {
                ok_json(&o[0]).is_some_and(|v| {
                    v["products"][0]["sku"] == "BLK-02"
                        && v["products"][0]["in_stock"] == false
                        && v["products"][0]["stock"] == 0
                }) && ok_json(&o[1]).is_some_and(|v| {
                    v["products"][0]["sku"] == "CLK-07"
                        && v["products"][0]["price"] == "52.00"
                        && v["products"][0]["in_stock"] == true
                })
            },
        },
        Case {
            tool: "search_products",
            name: "no match is an error; a missing query is named",
            calls: vec![
                ("search_products", json!({"query": "zzz"})),
                ("search_products", json!({})),
            ],
            check: |o, _| {
                rejected_with(&o[0], "no product matches")
                    && rejected_with(&o[1], "missing required argument 'query'")
            },
        },
    ]
}

/// The cases of `cancel_order`.
fn cancel_order_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "cancel_order",
            name: "a processing order is cancelled",
            calls: vec![(
                "cancel_order",
                json!({"order_id": "5111", "reason": "mistake"}),
            )],
            check: |o, s| {
                ok_json(&o[0]).is_some() && status(s, "5111") == Some(OrderStatus::Cancelled)
            },
        },
        Case {
            tool: "cancel_order",
            name: "shipped, delivered and cancelled orders stay as they are",
            calls: vec![
                ("cancel_order", json!({"order_id": "5113", "reason": "x"})),
                ("cancel_order", json!({"order_id": "5101", "reason": "x"})),
                ("cancel_order", json!({"order_id": "5103", "reason": "x"})),
            ],
            check: |o, s| {
                o.iter().all(|x| rejected_with(x, "only processing orders"))
                    && status(s, "5113") == Some(OrderStatus::Shipped)
                    && status(s, "5101") == Some(OrderStatus::Delivered)
            },
        },
        Case {
            tool: "cancel_order",
            name: "a missing reason is named and nothing changes",
            calls: vec![("cancel_order", json!({"order_id": "5111"}))],
            check: |o, s| {
                rejected_with(&o[0], "missing required argument 'reason'")
                    && status(s, "5111") == Some(OrderStatus::Processing)
            },
        },
    ]
}

/// The cases of `update_address`.
fn update_address_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "update_address",
            name: "a processing order gets the new address",
            calls: vec![(
                "update_address",
                json!({"order_id": "5106", "address": "1 New Street, Town"}),
            )],
            check: |o, s| ok_json(&o[0]).is_some() && address(s, "5106") == "1 New Street, Town",
        },
        Case {
            tool: "update_address",
            name: "a shipped order keeps its address; a missing address is named",
            calls: vec![
                (
                    "update_address",
                    json!({"order_id": "5105", "address": "1 New Street"}),
                ),
                ("update_address", json!({"order_id": "5106"})),
            ],
            check: |o, s| {
                rejected_with(&o[0], "only be changed while")
                    && rejected_with(&o[1], "missing required argument 'address'")
                    && address(s, "5105") == "41 Bannerghatta Road, Bengaluru 560076"
                    && address(s, "5106") == "2-5-1 Nakameguro, Meguro, Tokyo 153-0061"
            },
        },
    ]
}

/// The cases of `request_return`.
fn request_return_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "request_return",
            name: "day 30 after delivery is still inside the window, once per item",
            calls: vec![
                (
                    "request_return",
                    json!({"order_id": "5104", "sku": "VAS-03", "reason": "chipped"}),
                ),
                (
                    "request_return",
                    json!({"order_id": "5104", "sku": "VAS-03", "reason": "again"}),
                ),
            ],
            check: |o, s| {
                ok_json(&o[0]).is_some()
                    && rejected_with(&o[1], "already open")
                    && s.returns.len() == 1
            },
        },
        Case {
            tool: "request_return",
            name: "day 31, a foreign sku, an undelivered order and a missing reason are refused",
            calls: vec![
                (
                    "request_return",
                    json!({"order_id": "5115", "sku": "RUG-08", "reason": "x"}),
                ),
                (
                    "request_return",
                    json!({"order_id": "5104", "sku": "LMP-01", "reason": "x"}),
                ),
                (
                    "request_return",
                    json!({"order_id": "5105", "sku": "BLK-02", "reason": "x"}),
                ),
                (
                    "request_return",
                    json!({"order_id": "5104", "sku": "CLK-07"}),
                ),
            ],
            check: |o, s| {
                rejected_with(&o[0], "31 days ago")
                    && rejected_with(&o[1], "is not in order")
                    && rejected_with(&o[2], "only delivered orders")
                    && rejected_with(&o[3], "missing required argument 'reason'")
                    && s.returns.is_empty()
            },
        },
    ]
}

/// The cases of `create_ticket`.
fn create_ticket_cases() -> Vec<Case> {
    vec![
        Case {
            tool: "create_ticket",
            name: "a ticket is stored for the customer with its summary",
            calls: vec![(
                "create_ticket",
                json!({"customer_id": "C107", "summary": "Order 5113 shipped"}),
            )],
            check: |o, s| {
                ok_json(&o[0]).is_some()
                    && s.tickets.len() == 1
                    && s.tickets[0].customer_id == "C107"
                    && s.tickets[0].summary == "Order 5113 shipped"
            },
        },
        Case {
            tool: "create_ticket",
            name: "an unknown customer and a missing summary are refused",
            calls: vec![
                (
                    "create_ticket",
                    json!({"customer_id": "5109", "summary": "x"}),
                ),
                ("create_ticket", json!({"customer_id": "C107"})),
            ],
            check: |o, s| {
                rejected_with(&o[0], "no customer with id")
                    && rejected_with(&o[1], "missing required argument 'summary'")
                    && s.tickets.is_empty()
            },
        },
    ]
}

/// Names of the cases that fail with this table.
pub(super) fn failing_cases(table: &[ToolSpec]) -> Vec<String> {
    let data = crate::suites::store::env::tests_support::data();
    cases()
        .into_iter()
        .filter_map(|c| {
            let mut state = StoreState::new(&data);
            let outcomes: Vec<ToolOutcome> = c
                .calls
                .iter()
                .map(|(t, a)| dispatch(table, &mut state, t, a))
                .collect();
            (!(c.check)(&outcomes, &state)).then(|| format!("{}: {}", c.tool, c.name))
        })
        .collect()
}

#[test]
fn the_real_tools_pass_every_case() {
    assert_eq!(failing_cases(&super::TOOLS), Vec::<String>::new());
}

#[test]
fn every_tool_has_cases() {
    let all = cases();
    for t in super::TOOLS {
        assert!(
            all.iter().filter(|c| c.tool == t.name).count() >= 2,
            "{}",
            t.name
        );
    }
}
