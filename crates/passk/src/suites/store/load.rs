//! The store suite as data: `tasks/store/` (seed state, policy, tool documentation variants,
//! conversations) and `graders/store/` (expectations, baseline), read and cross-checked. Every
//! inconsistency is reported with the file and the key at fault. The environment and the grader
//! that give this data behaviour are this folder's `env`, `tools` and `grade`.

use crate::grade::facts::Fact;
use crate::domain::load::{FileText, invalid, read_json};
use crate::domain::presentation::{DataValues, DocsRules, Presentation, ToolOrder};
use crate::domain::{SuiteError, Task, Trajectory};
use crate::suites::store::data::StoreData;
use crate::suites::store::expect::{Baseline, StoreExpectations, TicketRule};
use crate::suites::store::tools::TOOLS;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The store's tools and their parameters, read off the dispatch table the environment runs
/// (`tools::TOOLS`). The loader checks every documentation variant against this list, so a renamed
/// parameter cannot slip through.
pub const STORE_TOOLS: [(&str, &[&str]); TOOLS.len()] = {
    let mut out: [(&str, &[&str]); TOOLS.len()] = [("", &[]); TOOLS.len()];
    let mut i = 0;
    while i < TOOLS.len() {
        out[i] = (TOOLS[i].name, TOOLS[i].params);
        i += 1;
    }
    out
};

/// The categories of store conversations and the id prefix of each.
pub const STORE_CATEGORIES: [(&str, &str); 4] = [
    ("lookup", "L"),
    ("multi-hop", "M"),
    ("write", "W"),
    ("multi-turn", "T"),
];

/// Paths of the store suite's files, relative to the project root.
pub mod paths {
    /// Seed state.
    pub const STORE: &str = "tasks/store/store.json";
    /// Policy (system prompt).
    pub const POLICY: &str = "tasks/store/policy.md";
    /// Conversations with scripted customer messages, gold trajectories and near-misses.
    pub const CONVERSATIONS: &str = "tasks/store/conversations.json";
    /// Tool documentation, one file per variant.
    pub const TOOLS_DIR: &str = "tasks/store/tools";
    /// Expectations per conversation.
    pub const EXPECTATIONS: &str = "graders/store/expectations.json";
    /// Orders' seed state as the graders remember it.
    pub const BASELINE: &str = "graders/store/baseline.json";
}

/// Everything the store suite is made of, loaded and checked.
#[derive(Debug, Clone)]
pub struct StoreSuite {
    /// Seed state.
    pub data: StoreData,
    /// The policy and the tool documentation in both variants.
    pub presentation: Presentation,
    /// Conversations in file order.
    pub tasks: Vec<Task>,
    /// Expectations by task id.
    pub expectations: StoreExpectations,
    /// Orders' seed state for the graders.
    pub baseline: Baseline,
    /// Digest of the task files (store.json + conversations.json).
    pub tasks_digest: String,
}

impl StoreSuite {
    /// Total number of tool parameters (13 for the store).
    pub fn parameter_count(&self) -> usize {
        STORE_TOOLS.iter().map(|(_, p)| p.len()).sum()
    }
}

/// Loads and cross-checks the store suite from the project root.
pub fn load_store(root: &Path) -> Result<StoreSuite, SuiteError> {
    let store_path = root.join(paths::STORE);
    let (data, store_file): (StoreData, FileText) = read_json(&store_path)?;
    check_store(&store_path, &data)?;
    let rules = DocsRules {
        tools: &STORE_TOOLS,
        order: ToolOrder::Any,
        data: DataValues::new("store data", 4, store_strings(&data)),
    };
    let presentation = Presentation::load(
        &root.join(paths::POLICY),
        &root.join(paths::TOOLS_DIR),
        &rules,
    )?;
    let conv_path = root.join(paths::CONVERSATIONS);
    let (tasks, conv_file): (Vec<Task>, FileText) = read_json(&conv_path)?;
    check_tasks(&conv_path, &tasks)?;
    let base_path = root.join(paths::BASELINE);
    let (baseline, _): (Baseline, FileText) = read_json(&base_path)?;
    check_baseline(&base_path, &baseline, &data)?;
    let exp_path = root.join(paths::EXPECTATIONS);
    let (expectations, _): (StoreExpectations, FileText) = read_json(&exp_path)?;
    check_expectations(&exp_path, &expectations, &tasks, &data)?;
    let tasks_digest = crate::domain::load::sha256_hex(
        format!("{}\n{}\n", store_file.digest, conv_file.digest).as_bytes(),
    );
    Ok(StoreSuite {
        data,
        presentation,
        tasks,
        expectations,
        baseline,
        tasks_digest,
    })
}

fn unique<'a>(
    path: &Path,
    key: &str,
    ids: impl Iterator<Item = &'a str>,
) -> Result<BTreeSet<&'a str>, SuiteError> {
    let mut seen = BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(invalid(path, key, format!("duplicate id '{id}'")));
        }
    }
    Ok(seen)
}

fn check_store(path: &Path, d: &StoreData) -> Result<(), SuiteError> {
    use crate::suites::store::data::OrderStatus as S;
    let customers = unique(path, "customers", d.customers.iter().map(|c| c.id.as_str()))?;
    let skus = unique(path, "products", d.products.iter().map(|p| p.sku.as_str()))?;
    unique(path, "orders", d.orders.iter().map(|o| o.id.as_str()))?;
    for (i, c) in d.customers.iter().enumerate() {
        if c.id.trim().is_empty() || c.name.trim().is_empty() || c.email.trim().is_empty() {
            return Err(invalid(
                path,
                format!("customers[{i}]"),
                "id, name and email must not be empty",
            ));
        }
    }
    for (i, o) in d.orders.iter().enumerate() {
        let key = |k: &str| format!("orders[{i}].{k}");
        if !customers.contains(o.customer_id.as_str()) {
            return Err(invalid(
                path,
                key("customer_id"),
                format!("unknown customer '{}'", o.customer_id),
            ));
        }
        if o.items.is_empty() {
            return Err(invalid(
                path,
                key("items"),
                "an order needs at least one item",
            ));
        }
        for (j, it) in o.items.iter().enumerate() {
            if !skus.contains(it.sku.as_str()) {
                return Err(invalid(
                    path,
                    key(&format!("items[{j}].sku")),
                    format!("unknown sku '{}'", it.sku),
                ));
            }
            if it.qty == 0 {
                return Err(invalid(
                    path,
                    key(&format!("items[{j}].qty")),
                    "quantity must be at least 1",
                ));
            }
        }
        if o.address.trim().is_empty() {
            return Err(invalid(path, key("address"), "must not be empty"));
        }
        match o.status {
            S::Delivered if o.delivered_on.is_none() => {
                return Err(invalid(
                    path,
                    key("delivered_on"),
                    "a delivered order needs its delivery date",
                ));
            }
            S::Processing | S::Shipped if o.estimated_delivery.is_none() => {
                return Err(invalid(
                    path,
                    key("estimated_delivery"),
                    "an open order needs an estimated delivery",
                ));
            }
            _ => {}
        }
        if o.created > d.today {
            return Err(invalid(path, key("created"), "created after today"));
        }
    }
    Ok(())
}

/// Every string value of the store data (to keep documented examples out of it).
fn store_strings(d: &StoreData) -> Vec<String> {
    let mut out = Vec::new();
    for c in &d.customers {
        out.extend([c.id.clone(), c.name.clone(), c.email.clone()]);
    }
    for p in &d.products {
        out.extend([p.sku.clone(), p.name.clone()]);
    }
    for o in &d.orders {
        out.extend([o.id.clone(), o.address.clone()]);
    }
    out
}

fn check_trajectory(
    path: &Path,
    key: &str,
    t: &Trajectory,
    turns: usize,
    strict: bool,
) -> Result<(), SuiteError> {
    if t.turns.len() != turns {
        return Err(invalid(
            path,
            format!("{key}.turns"),
            format!("{} turns for {turns} customer messages", t.turns.len()),
        ));
    }
    for (i, turn) in t.turns.iter().enumerate() {
        for (j, call) in turn.calls.iter().enumerate() {
            let ck = format!("{key}.turns[{i}].calls[{j}]");
            let Some((_, params)) = STORE_TOOLS.iter().find(|(n, _)| *n == call.tool) else {
                if strict {
                    return Err(invalid(
                        path,
                        format!("{ck}.tool"),
                        format!("unknown tool '{}'", call.tool),
                    ));
                }
                continue;
            };
            if strict {
                for p in *params {
                    match call.args.get(*p) {
                        Some(Value::String(s)) if !s.trim().is_empty() => {}
                        _ => {
                            return Err(invalid(
                                path,
                                format!("{ck}.args.{p}"),
                                "a gold call needs every argument as a non-empty string",
                            ));
                        }
                    }
                }
            }
        }
        if turn.reply.trim().is_empty() && strict {
            return Err(invalid(
                path,
                format!("{key}.turns[{i}].reply"),
                "the gold reply must not be empty",
            ));
        }
    }
    Ok(())
}

fn check_tasks(path: &Path, tasks: &[Task]) -> Result<(), SuiteError> {
    unique(path, "(task ids)", tasks.iter().map(|t| t.id.as_str()))?;
    let labels = crate::suites::router::load::ROUTER_LABELS;
    for t in tasks {
        let id = &t.id;
        let Some((_, prefix)) = STORE_CATEGORIES.iter().find(|(c, _)| *c == t.category) else {
            return Err(invalid(
                path,
                format!("{id}.category"),
                format!("unknown category '{}'", t.category),
            ));
        };
        if !id.starts_with(prefix) {
            return Err(invalid(
                path,
                format!("{id}.id"),
                format!("a {} task id starts with '{prefix}'", t.category),
            ));
        }
        if t.customer.is_empty() || t.customer.iter().any(|m| m.trim().is_empty()) {
            return Err(invalid(
                path,
                format!("{id}.customer"),
                "needs at least one non-empty message",
            ));
        }
        if t.intents.len() != t.customer.len() {
            return Err(invalid(
                path,
                format!("{id}.intents"),
                "one router label per customer message",
            ));
        }
        for (i, l) in t.intents.iter().enumerate() {
            if !labels.contains(&l.as_str()) {
                return Err(invalid(
                    path,
                    format!("{id}.intents[{i}]"),
                    format!("unknown label '{l}'"),
                ));
            }
        }
        check_trajectory(path, &format!("{id}.gold"), &t.gold, t.customer.len(), true)?;
        if t.near_misses.is_empty() {
            return Err(invalid(
                path,
                format!("{id}.near_misses"),
                "needs at least one near-miss",
            ));
        }
        for (i, nm) in t.near_misses.iter().enumerate() {
            check_trajectory(
                path,
                &format!("{id}.near_misses[{i}].trajectory"),
                &nm.trajectory,
                t.customer.len(),
                false,
            )?;
        }
    }
    Ok(())
}

fn check_baseline(path: &Path, b: &Baseline, d: &StoreData) -> Result<(), SuiteError> {
    for o in &d.orders {
        let Some(got) = b.orders.get(&o.id) else {
            return Err(invalid(
                path,
                format!("orders.{}", o.id),
                "missing (the order is in tasks/store/store.json)",
            ));
        };
        if got.customer_id != o.customer_id || got.status != o.status || got.address != o.address {
            return Err(invalid(
                path,
                format!("orders.{}", o.id),
                "differs from tasks/store/store.json",
            ));
        }
    }
    if let Some(extra) = b
        .orders
        .keys()
        .find(|id| !d.orders.iter().any(|o| &o.id == *id))
    {
        return Err(invalid(
            path,
            format!("orders.{extra}"),
            "no such order in tasks/store/store.json",
        ));
    }
    Ok(())
}

fn check_expectations(
    path: &Path,
    e: &StoreExpectations,
    tasks: &[Task],
    d: &StoreData,
) -> Result<(), SuiteError> {
    let customers: BTreeSet<&str> = d.customers.iter().map(|c| c.id.as_str()).collect();
    for t in tasks {
        if !e.conversations.contains_key(&t.id) {
            return Err(invalid(
                path,
                format!("conversations.{}", t.id),
                "missing (the task is in conversations.json)",
            ));
        }
    }
    for (id, x) in &e.conversations {
        let key = |k: &str| format!("conversations.{id}.{k}");
        if !tasks.iter().any(|t| &t.id == id) {
            return Err(invalid(
                path,
                format!("conversations.{id}"),
                "no such task in conversations.json",
            ));
        }
        for oid in x.orders.keys() {
            if !d.orders.iter().any(|o| &o.id == oid) {
                return Err(invalid(
                    path,
                    key(&format!("orders.{oid}")),
                    "unknown order",
                ));
            }
        }
        for (i, r) in x.returns.iter().enumerate() {
            let Some(o) = d.orders.iter().find(|o| o.id == r.order_id) else {
                return Err(invalid(
                    path,
                    key(&format!("returns[{i}].order_id")),
                    format!("unknown order '{}'", r.order_id),
                ));
            };
            if !o.items.iter().any(|it| it.sku == r.sku) {
                return Err(invalid(
                    path,
                    key(&format!("returns[{i}].sku")),
                    format!("'{}' is not in order {}", r.sku, o.id),
                ));
            }
        }
        if let TicketRule::Required { customers: req, .. } = &x.tickets {
            if req.is_empty() {
                return Err(invalid(
                    path,
                    key("tickets.required.customers"),
                    "list at least one customer",
                ));
            }
            for c in req {
                if !customers.contains(c.as_str()) {
                    return Err(invalid(
                        path,
                        key("tickets.required.customers"),
                        format!("unknown customer '{c}'"),
                    ));
                }
            }
        }
        for (i, f) in x.facts.iter().enumerate() {
            if let Fact::Any(alts) = f
                && (alts.is_empty() || alts.iter().any(|a| a.trim().is_empty()))
            {
                return Err(invalid(
                    path,
                    key(&format!("facts[{i}].any")),
                    "needs non-empty alternatives",
                ));
            }
        }
        if x.forbidden.iter().any(|f| f.trim().is_empty()) {
            return Err(invalid(path, key("forbidden"), "empty phrase"));
        }
    }
    Ok(())
}

/// Counts of a suite's tasks by category, in [`STORE_CATEGORIES`] order.
pub fn counts_by_category(tasks: &[Task]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for t in tasks {
        *out.entry(t.category.clone()).or_insert(0) += 1;
    }
    out
}
