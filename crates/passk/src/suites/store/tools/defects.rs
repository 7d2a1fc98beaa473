//! Tool defect tests (seed 003's "next lesson"): each test breaks one tool on purpose and records
//! which layer notices: the per-tool cases (`cases.rs`), the suite loader (tool documentation
//! checked against the code), the gold replay, the near-miss replay, or nothing. The expected table
//! is the finding; docs/reference/suites.md explains it.

use super::cases::failing_cases;
use super::{Args, TOOLS, ToolResult, ToolSpec};
use crate::domain::check::check_suite;
use crate::domain::presentation::Presentation;
use crate::domain::{Domain, Environment, Evidence, Task};
use crate::suites::store::StoreEnv;
use crate::suites::store::data::OrderStatus;
use crate::suites::store::env::tests_support;
use crate::suites::store::state::{StoreState, Ticket};
use crate::suites::store::{StoreSuite, load_store};
use crate::trace::Verdict;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A layer of testing that may notice a defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    PerTool,
    Loader,
    Gold,
    NearMiss,
}
use Layer::*;

/// The store suite with another dispatch table.
struct WithTable<'a> {
    suite: &'a StoreSuite,
    table: Vec<ToolSpec>,
}

impl Domain for WithTable<'_> {
    fn name(&self) -> &str {
        self.suite.name()
    }
    fn presentation(&self) -> &Presentation {
        self.suite.presentation()
    }
    fn tasks_digest(&self) -> &str {
        self.suite.tasks_digest()
    }
    fn tasks(&self) -> &[Task] {
        self.suite.tasks()
    }
    fn new_environment(&self) -> Box<dyn Environment> {
        Box::new(StoreEnv::with_tools(&self.suite.data, self.table.clone()))
    }
    fn grade(&self, task: &Task, evidence: &Evidence<'_>) -> Verdict {
        self.suite.grade(task, evidence)
    }
}

fn real(name: &str) -> ToolSpec {
    TOOLS
        .iter()
        .copied()
        .find(|t| t.name == name)
        .expect("a store tool")
}

fn replace(spec: ToolSpec) -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|t| if t.name == spec.name { spec } else { *t })
        .collect()
}

/// Layers (other than the loader) that notice a broken table.
fn caught_by_table(suite: &StoreSuite, table: Vec<ToolSpec>) -> BTreeSet<Layer> {
    let mut out = BTreeSet::new();
    if !failing_cases(&table).is_empty() {
        out.insert(PerTool);
    }
    let report = check_suite(&WithTable { suite, table });
    if report.gold_passing() != report.gold.len() {
        out.insert(Gold);
    }
    if report.near_misses_as_expected() != report.near_misses.len() {
        out.insert(NearMiss);
    }
    out
}

// Wrong logic, one per tool.

fn first_match_only(s: &mut StoreState, a: &Args) -> ToolResult {
    let mut v = (real("find_customer").run)(s, a)?;
    if let Some(m) = v["matches"].as_array_mut() {
        m.truncate(1);
    }
    Ok(v)
}

fn oldest_first(s: &mut StoreState, a: &Args) -> ToolResult {
    let mut v = (real("list_orders").run)(s, a)?;
    if let Some(m) = v["orders"].as_array_mut() {
        m.reverse();
    }
    Ok(v)
}

fn total_ignores_quantity(s: &mut StoreState, a: &Args) -> ToolResult {
    let mut v = (real("get_order").run)(s, a)?;
    let cents: u64 = v["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| {
                    i["unit_price"]
                        .as_str()
                        .and_then(crate::domain::money::Money::parse)
                })
                .map(|m| m.0)
                .sum()
        })
        .unwrap_or(0);
    v["total"] = json!(crate::domain::money::Money(cents).to_string());
    Ok(v)
}

fn always_in_stock(s: &mut StoreState, a: &Args) -> ToolResult {
    let mut v = (real("search_products").run)(s, a)?;
    if let Some(ps) = v["products"].as_array_mut() {
        for p in ps {
            p["in_stock"] = json!(true);
        }
    }
    Ok(v)
}

fn cancel_anything_open(s: &mut StoreState, a: &Args) -> ToolResult {
    let idx = s.order_index(a.get("order_id")).ok_or("no order")?;
    if s.orders[idx].status == OrderStatus::Cancelled {
        return Err("already cancelled".into());
    }
    s.orders[idx].status = OrderStatus::Cancelled;
    Ok(json!({"order_id": s.orders[idx].id, "status": "cancelled"}))
}

fn address_not_written(s: &mut StoreState, a: &Args) -> ToolResult {
    let idx = s.order_index(a.get("order_id")).ok_or("no order")?;
    if s.orders[idx].status != OrderStatus::Processing {
        return Err("not processing".into());
    }
    Ok(json!({"order_id": s.orders[idx].id, "status": "processing", "address": a.get("address")}))
}

fn window_off_by_one(s: &mut StoreState, a: &Args) -> ToolResult {
    if let Some(o) = s.order_index(a.get("order_id")).map(|i| &s.orders[i])
        && let Some(d) = o.delivered_on
        && s.today.days_after(d) >= i64::from(s.return_window_days)
    {
        return Err("outside the return window".into());
    }
    (real("request_return").run)(s, a)
}

fn ticket_for_anyone(s: &mut StoreState, a: &Args) -> ToolResult {
    let id = format!("TK-{}", s.tickets.len() + 1);
    s.tickets.push(Ticket {
        id: id.clone(),
        customer_id: a.get("customer_id").into(),
        summary: a.get("summary").into(),
    });
    Ok(json!({"ticket_id": id}))
}

#[test]
fn wrong_logic_in_each_tool() {
    let suite = load_store(&tests_support::root()).expect("suite loads");
    let defects: [(&str, super::ToolFn, &[Layer]); 8] = [
        ("find_customer", first_match_only, &[PerTool]),
        ("list_orders", oldest_first, &[PerTool]),
        ("get_order", total_ignores_quantity, &[PerTool]),
        ("search_products", always_in_stock, &[PerTool]),
        ("cancel_order", cancel_anything_open, &[PerTool, NearMiss]),
        // T6's near-miss re-addresses another customer's order: it fails on the policy breach
        // whether or not the address was written, so only the gold sees this defect there.
        ("update_address", address_not_written, &[PerTool, Gold]),
        ("request_return", window_off_by_one, &[PerTool, Gold]),
        ("create_ticket", ticket_for_anyone, &[PerTool]),
    ];
    for (tool, run, expected) in defects {
        let table = replace(ToolSpec { run, ..real(tool) });
        let got = caught_by_table(&suite, table);
        assert_eq!(got, expected.iter().copied().collect(), "{tool}");
    }
}

#[test]
fn a_swallowed_missing_field_in_each_tool() {
    let suite = load_store(&tests_support::root()).expect("suite loads");
    for spec in TOOLS {
        // The dispatcher stops checking the last parameter; the tool then works with "".
        let n = spec.params.len();
        let table = replace(ToolSpec {
            params: &spec.params[..n - 1],
            ..spec
        });
        assert_eq!(
            caught_by_table(&suite, table),
            BTreeSet::from([PerTool]),
            "{}",
            spec.name
        );
    }
}

/// Loads a copy of the suite whose documented variant was edited by `edit`; the layers that notice.
fn caught_in_docs(edit: impl Fn(&mut Value)) -> BTreeSet<Layer> {
    let dir = tempfile::tempdir().expect("tmp");
    for sub in ["tasks", "graders"] {
        copy_tree(&tests_support::root().join(sub), &dir.path().join(sub));
    }
    let path = dir.path().join("tasks/store/tools/documented.json");
    let mut docs: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    edit(&mut docs);
    std::fs::write(&path, serde_json::to_string_pretty(&docs).expect("json")).expect("write");
    match load_store(dir.path()) {
        Err(_) => BTreeSet::from([Loader]),
        Ok(suite) => caught_by_table(&suite, TOOLS.to_vec()),
    }
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

#[test]
fn a_description_that_does_not_match_the_function() {
    for i in 0..TOOLS.len() {
        // A parameter renamed in the documentation: the loader compares names with the code.
        let renamed = caught_in_docs(|d| d["tools"][i]["parameters"][0]["name"] = json!("id"));
        assert_eq!(renamed, BTreeSet::from([Loader]), "tool {i} renamed");
        // A description swapped with the next tool's: nothing notices, because no test reads meaning.
        let swapped = caught_in_docs(|d| {
            let j = (i + 1) % 8;
            let a = d["tools"][i]["description"].clone();
            d["tools"][i]["description"] = d["tools"][j]["description"].clone();
            d["tools"][j]["description"] = a;
        });
        assert_eq!(swapped, BTreeSet::new(), "tool {i} swapped");
    }
}
