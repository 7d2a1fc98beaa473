//! Reading the triage suite's files into a [`TriageSuite`]: tickets, orders, policy prompt and
//! tool docs, and the expectations under `graders/triage/`, cross-checked against the gold policy.

use crate::domain::load::{FileText, invalid, read_json, sha256_hex};
use crate::domain::presentation::{DataValues, DocsRules, Presentation, ToolOrder};
use crate::domain::{SuiteError, Task};
use crate::suites::triage::data::{
    OrdersFile, Shipment, Ticket, TicketExpect, TrackingStatus, TriageExpectations,
};
use crate::suites::triage::policy::{Action, Branch, branch, gold_plan, gold_route};
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
    /// The policy and the tool documentation in both variants.
    pub presentation: Presentation,
    /// One task per ticket, in file order, with the gold trajectory derived from the policy.
    pub tasks: Vec<Task>,
    /// Expectations by ticket id.
    pub expectations: TriageExpectations,
    /// Digest of the task files (tickets.json + orders.json).
    pub tasks_digest: String,
}

impl TriageSuite {
    /// The ticket of a task.
    pub fn ticket(&self, id: &str) -> Option<&Ticket> {
        self.tickets.iter().find(|t| t.id == id)
    }

    /// Total number of tool parameters (7).
    pub fn parameter_count(&self) -> usize {
        TRIAGE_TOOLS.iter().map(|(_, p)| p.len()).sum()
    }
}

/// The category of a ticket, from the policy: `rule` or `lookup`.
pub fn category(ticket: &Ticket) -> &'static str {
    if crate::suites::triage::policy::rule_resolvable(ticket) {
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
    let values = tickets.iter().map(|t| t.id.clone());
    let rules = DocsRules {
        tools: &TRIAGE_TOOLS,
        order: ToolOrder::Table,
        data: DataValues::new("the suite's data", 0, values.chain(orders.keys().cloned())),
    };
    let presentation = Presentation::load(
        &root.join(paths::POLICY),
        &root.join(paths::TOOLS_DIR),
        &rules,
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
            gold: crate::suites::triage::gold::gold_trajectory(t, shipment).map_err(derive)?,
            near_misses: crate::suites::triage::gold::near_misses(t, shipment).map_err(derive)?,
            intents: Vec::new(),
            needs_tools: true,
        });
    }
    let tasks_digest =
        sha256_hex(format!("{}\n{}\n", tickets_text.digest, orders_text.digest).as_bytes());
    Ok(TriageSuite {
        tickets,
        orders,
        presentation,
        tasks,
        expectations,
        tasks_digest,
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
        let show = |q: Option<crate::suites::triage::data::Queue>| {
            q.map_or("no route".to_string(), |q| q.to_string())
        };
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
    use crate::grade::facts::Fact;
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
