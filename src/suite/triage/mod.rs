//! The triage suite as data (experiment.md section 8, seed 000): support tickets as JSON, the
//! orders the agent may look up, a closed action set offered as six tools, a policy prompt, and
//! per-ticket expectations under `graders/triage/`. The gold trajectories, categories and
//! near-misses are derived from the gold policy in code ([`policy`]), and the loader refuses
//! expectations that disagree with it. The environment and the grader live in `triage` and
//! `grade::triage`.

pub mod data;
pub mod gold;
pub mod policy;

use crate::suite::load::{FileText, invalid, read_json, read_text, sha256_hex};
use crate::suite::store_data::ToolDocs;
use crate::suite::{SuiteDigests, SuiteError, Task, ToolVariant};
use data::{OrdersFile, Shipment, Ticket, TicketExpect, TrackingStatus, TriageExpectations};
use policy::{Action, Branch, branch, gold_plan, gold_route};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The triage tools and their parameters, as the environment implements them.
pub const TRIAGE_TOOLS: [(&str, &[&str]); 6] = [
    ("route_oncall", &["ticket_id"]),
    ("route_triage", &["ticket_id"]),
    ("route_docs", &["ticket_id"]),
    ("lookup_order", &["order_id"]),
    ("draft_reply", &["ticket_id", "message"]),
    ("halt", &["ticket_id"]),
];

/// The categories of triage tickets: a rule answers the first, the second needs `lookup_order`.
pub const TRIAGE_CATEGORIES: [&str; 2] = ["rule", "lookup"];

/// The priorities a ticket may carry.
pub const PRIORITIES: [&str; 3] = ["low", "med", "high"];

/// Paths of the triage suite's files, relative to the project root.
pub mod paths {
    /// The tickets.
    pub const TICKETS: &str = "tasks/triage/tickets.json";
    /// The orders `lookup_order` knows.
    pub const ORDERS: &str = "tasks/triage/orders.json";
    /// Policy (system prompt).
    pub const POLICY: &str = "tasks/triage/policy.md";
    /// Tool documentation, one file per variant.
    pub const TOOLS_DIR: &str = "tasks/triage/tools";
    /// Expectations per ticket.
    pub const EXPECTATIONS: &str = "graders/triage/expectations.json";
}

/// Everything the triage suite is made of, loaded and checked.
#[derive(Debug, Clone)]
pub struct TriageSuite {
    /// Tickets in file order.
    pub tickets: Vec<Ticket>,
    /// Orders by id.
    pub orders: BTreeMap<String, Shipment>,
    /// The policy prompt.
    pub policy: String,
    /// Tool documentation, bare variant.
    pub docs_bare: ToolDocs,
    /// Tool documentation, documented variant.
    pub docs_documented: ToolDocs,
    /// Ollama tool JSON, bare variant.
    pub tools_bare: Vec<Value>,
    /// Ollama tool JSON, documented variant.
    pub tools_documented: Vec<Value>,
    /// One task per ticket, in file order, with the gold trajectory derived from the policy.
    pub tasks: Vec<Task>,
    /// Expectations by ticket id.
    pub expectations: TriageExpectations,
    /// Digest of the task files (tickets.json + orders.json).
    pub tasks_digest: String,
    /// Digest of policy.md.
    pub policy_digest: String,
    /// Digest of tools/bare.json.
    pub tools_bare_digest: String,
    /// Digest of tools/documented.json.
    pub tools_documented_digest: String,
}

impl TriageSuite {
    /// The ticket of a task.
    pub fn ticket(&self, id: &str) -> Option<&Ticket> {
        self.tickets.iter().find(|t| t.id == id)
    }

    /// The digests of the non-grader parts for a variant.
    pub fn suite_digests(&self, variant: ToolVariant) -> SuiteDigests {
        SuiteDigests {
            tasks: self.tasks_digest.clone(),
            tools: match variant {
                ToolVariant::Bare => self.tools_bare_digest.clone(),
                ToolVariant::Documented => self.tools_documented_digest.clone(),
            },
            policy: self.policy_digest.clone(),
        }
    }

    /// Total number of tool parameters (7).
    pub fn parameter_count(&self) -> usize {
        TRIAGE_TOOLS.iter().map(|(_, p)| p.len()).sum()
    }
}

/// The category of a ticket, from the policy: `rule` or `lookup`.
pub fn category(ticket: &Ticket) -> &'static str {
    if policy::rule_resolvable(ticket) {
        TRIAGE_CATEGORIES[0]
    } else {
        TRIAGE_CATEGORIES[1]
    }
}

/// Loads and cross-checks the triage suite from the project root.
pub fn load_triage(root: &Path) -> Result<TriageSuite, SuiteError> {
    let orders_path = root.join(paths::ORDERS);
    let (orders_file, orders_text): (OrdersFile, FileText) = read_json(&orders_path)?;
    let orders = check_orders(&orders_path, orders_file)?;
    let tickets_path = root.join(paths::TICKETS);
    let (tickets, tickets_text): (Vec<Ticket>, FileText) = read_json(&tickets_path)?;
    check_tickets(&tickets_path, &tickets, &orders)?;
    let policy = read_text(&root.join(paths::POLICY))?;
    let tools_dir = root.join(paths::TOOLS_DIR);
    let forbidden_examples: Vec<String> = tickets
        .iter()
        .map(|t| t.id.to_lowercase())
        .chain(orders.keys().map(|o| o.to_lowercase()))
        .collect();
    let (docs_bare, bare_file) = load_docs(
        &tools_dir.join("bare.json"),
        ToolVariant::Bare,
        &forbidden_examples,
    )?;
    let (docs_documented, doc_file) = load_docs(
        &tools_dir.join("documented.json"),
        ToolVariant::Documented,
        &forbidden_examples,
    )?;
    let exp_path = root.join(paths::EXPECTATIONS);
    let (expectations, _): (TriageExpectations, FileText) = read_json(&exp_path)?;
    check_expectations(&exp_path, &expectations, &tickets)?;
    let mut tasks = Vec::with_capacity(tickets.len());
    for t in &tickets {
        let shipment = t.order_id.as_deref().and_then(|o| find_order(&orders, o));
        let derive = |e: String| invalid(&tickets_path, t.id.clone(), e);
        tasks.push(Task {
            id: t.id.clone(),
            category: category(t).to_string(),
            customer: vec![t.message()],
            gold: gold::gold_trajectory(t, shipment).map_err(derive)?,
            near_misses: gold::near_misses(t, shipment).map_err(derive)?,
            intents: Vec::new(),
            needs_tools: true,
        });
    }
    let tasks_digest =
        sha256_hex(format!("{}\n{}\n", tickets_text.digest, orders_text.digest).as_bytes());
    Ok(TriageSuite {
        tools_bare: docs_bare.to_ollama(),
        tools_documented: docs_documented.to_ollama(),
        tickets,
        orders,
        policy: policy.text,
        docs_bare,
        docs_documented,
        tasks,
        expectations,
        tasks_digest,
        policy_digest: policy.digest,
        tools_bare_digest: bare_file.digest,
        tools_documented_digest: doc_file.digest,
    })
}

/// The order with this id, matched case-insensitively.
pub fn find_order<'a>(orders: &'a BTreeMap<String, Shipment>, id: &str) -> Option<&'a Shipment> {
    let id = id.trim();
    orders
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(id))
        .map(|(_, s)| s)
}

fn check_orders(path: &Path, file: OrdersFile) -> Result<BTreeMap<String, Shipment>, SuiteError> {
    let mut out = BTreeMap::new();
    for (i, s) in file.orders.into_iter().enumerate() {
        let key = |k: &str| format!("orders[{i}].{k}");
        for (k, v) in [
            ("order_id", &s.order_id),
            ("carrier", &s.carrier),
            ("tracking", &s.tracking),
        ] {
            if v.trim().is_empty() {
                return Err(invalid(path, key(k), "must not be empty"));
            }
        }
        match s.status {
            TrackingStatus::Delivered if s.delivered_on.is_none() => {
                return Err(invalid(
                    path,
                    key("delivered_on"),
                    "a delivered order needs its delivery date",
                ));
            }
            TrackingStatus::LabelCreated
            | TrackingStatus::InTransit
            | TrackingStatus::OutForDelivery
            | TrackingStatus::Delayed
                if s.estimated_delivery.is_none() =>
            {
                return Err(invalid(
                    path,
                    key("estimated_delivery"),
                    "an open shipment needs an estimated delivery",
                ));
            }
            _ => {}
        }
        if out
            .keys()
            .any(|k: &String| k.eq_ignore_ascii_case(&s.order_id))
        {
            return Err(invalid(
                path,
                key("order_id"),
                format!("duplicate id '{}'", s.order_id),
            ));
        }
        out.insert(s.order_id.clone(), s);
    }
    Ok(out)
}

fn check_tickets(
    path: &Path,
    tickets: &[Ticket],
    orders: &BTreeMap<String, Shipment>,
) -> Result<(), SuiteError> {
    let mut seen = BTreeSet::new();
    for t in tickets {
        let key = |k: &str| format!("{}.{k}", t.id);
        if t.id.trim().is_empty() {
            return Err(invalid(
                path,
                "(ticket ids)",
                "a ticket id must not be empty",
            ));
        }
        if !seen.insert(t.id.to_lowercase()) {
            return Err(invalid(
                path,
                "(ticket ids)",
                format!("duplicate id '{}'", t.id),
            ));
        }
        if t.product.trim().is_empty() || t.text.trim().is_empty() {
            return Err(invalid(
                path,
                key("product"),
                "product and text must not be empty",
            ));
        }
        if !PRIORITIES.contains(&t.priority.trim().to_lowercase().as_str()) {
            return Err(invalid(
                path,
                key("priority"),
                format!(
                    "expected one of {}, got '{}'",
                    PRIORITIES.join(", "),
                    t.priority
                ),
            ));
        }
        if let Some(o) = &t.order_id
            && find_order(orders, o).is_none()
        {
            return Err(invalid(
                path,
                key("order_id"),
                format!("unknown order '{o}' (not in {})", paths::ORDERS),
            ));
        }
    }
    let branches: BTreeSet<Branch> = tickets.iter().map(branch).collect();
    if let Some(missing) = Branch::ALL.iter().find(|b| !branches.contains(b)) {
        return Err(invalid(
            path,
            "(tickets)",
            format!("no ticket takes the policy's {missing:?} branch"),
        ));
    }
    Ok(())
}

fn load_docs(
    path: &Path,
    variant: ToolVariant,
    data: &[String],
) -> Result<(ToolDocs, FileText), SuiteError> {
    let (docs, file): (ToolDocs, FileText) = read_json(path)?;
    let names: Vec<&str> = docs.tools.iter().map(|t| t.name.as_str()).collect();
    let expected: Vec<&str> = TRIAGE_TOOLS.iter().map(|(n, _)| *n).collect();
    if names != expected {
        return Err(invalid(
            path,
            "tools",
            format!("must document, in order: {}", expected.join(", ")),
        ));
    }
    let mut described = 0;
    for (i, (t, (_, params))) in docs.tools.iter().zip(TRIAGE_TOOLS).enumerate() {
        let got: Vec<&str> = t.parameters.iter().map(|p| p.name.as_str()).collect();
        if got != params {
            return Err(invalid(
                path,
                format!("tools[{i}].parameters"),
                format!(
                    "{} takes ({}), the file documents ({})",
                    t.name,
                    params.join(", "),
                    got.join(", ")
                ),
            ));
        }
        if t.description.trim().is_empty() {
            return Err(invalid(
                path,
                format!("tools[{i}].description"),
                "must not be empty",
            ));
        }
        for (j, p) in t.parameters.iter().enumerate() {
            let key = format!("tools[{i}].parameters[{j}]");
            described += usize::from(p.description.is_some());
            match (variant, &p.description, &p.example) {
                (ToolVariant::Bare, _, Some(_)) => {
                    return Err(invalid(
                        path,
                        format!("{key}.example"),
                        "the bare variant has no examples",
                    ));
                }
                (ToolVariant::Documented, Some(desc), Some(ex)) => {
                    if !desc.contains(ex.as_str()) {
                        return Err(invalid(
                            path,
                            format!("{key}.example"),
                            "the example must be quoted in the description",
                        ));
                    }
                    let lower = ex.to_lowercase();
                    if let Some(hit) = data
                        .iter()
                        .find(|s| s.contains(&lower) || lower.contains(s.as_str()))
                    {
                        return Err(invalid(
                            path,
                            format!("{key}.example"),
                            format!("'{ex}' overlaps the suite's data '{hit}'"),
                        ));
                    }
                }
                (ToolVariant::Documented, _, _) => {
                    return Err(invalid(
                        path,
                        key,
                        "the documented variant needs a description and an example",
                    ));
                }
                (ToolVariant::Bare, _, None) => {}
            }
        }
    }
    if variant == ToolVariant::Bare && described != 1 {
        return Err(invalid(
            path,
            "tools",
            format!("the bare variant describes exactly one parameter, not {described}"),
        ));
    }
    Ok((docs, file))
}

/// Checks every ticket has an expectation that agrees with the gold policy, and no other exists.
fn check_expectations(
    path: &Path,
    e: &TriageExpectations,
    tickets: &[Ticket],
) -> Result<(), SuiteError> {
    if let Some(extra) = e
        .tickets
        .keys()
        .find(|id| !tickets.iter().any(|t| &t.id == *id))
    {
        return Err(invalid(
            path,
            format!("tickets.{extra}"),
            format!("no such ticket in {}", paths::TICKETS),
        ));
    }
    for t in tickets {
        let key = |k: &str| format!("tickets.{}.{k}", t.id);
        let Some(x) = e.tickets.get(&t.id) else {
            return Err(invalid(
                path,
                format!("tickets.{}", t.id),
                format!("missing (the ticket is in {})", paths::TICKETS),
            ));
        };
        let plan = gold_plan(t);
        let show = |q: Option<data::Queue>| q.map_or("no route".to_string(), |q| q.to_string());
        if x.route != gold_route(t) {
            return Err(invalid(
                path,
                key("route"),
                format!(
                    "the gold policy gives {}, the expectation {}",
                    show(gold_route(t)),
                    show(x.route)
                ),
            ));
        }
        let want_lookup = plan
            .contains(&Action::LookupOrder)
            .then(|| t.order_id.clone())
            .flatten();
        if x.lookup.as_deref().map(str::to_lowercase)
            != want_lookup.as_deref().map(str::to_lowercase)
        {
            return Err(invalid(
                path,
                key("lookup"),
                format!(
                    "the gold policy looks up {want_lookup:?}, the expectation {:?}",
                    x.lookup
                ),
            ));
        }
        if x.draft.is_some() != plan.contains(&Action::DraftReply) {
            return Err(invalid(
                path,
                key("draft"),
                "a drafted reply is expected exactly when the gold policy drafts one",
            ));
        }
        if x.halt != plan.contains(&Action::Halt) {
            return Err(invalid(path, key("halt"), "the gold policy always halts"));
        }
        check_draft_facts(path, &key("draft"), x)?;
    }
    Ok(())
}

fn check_draft_facts(path: &Path, key: &str, x: &TicketExpect) -> Result<(), SuiteError> {
    use crate::suite::expect::Fact;
    if let Some(facts) = &x.draft {
        if facts.is_empty() {
            return Err(invalid(
                path,
                key,
                "list at least one fact the reply must state",
            ));
        }
        for (i, f) in facts.iter().enumerate() {
            if let Fact::Any(alts) = f
                && (alts.is_empty() || alts.iter().any(|a| a.trim().is_empty()))
            {
                return Err(invalid(
                    path,
                    format!("{key}[{i}].any"),
                    "needs non-empty alternatives",
                ));
            }
        }
    }
    if x.forbidden.iter().any(|f| f.trim().is_empty()) {
        return Err(invalid(
            path,
            key.replace(".draft", ".forbidden"),
            "empty phrase",
        ));
    }
    Ok(())
}
