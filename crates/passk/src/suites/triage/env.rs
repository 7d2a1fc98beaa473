//! The triage environment the agent acts on, and the [`Domain`] implementation that ties the
//! triage suite's data ([`TriageSuite`]) to it and to the triage grader.
//!
//! The environment knows every ticket and order and records the actions taken, in order: routes
//! chosen, orders looked up, replies drafted, tickets halted. Calls go through the shared argument
//! rules ([`check_args`]). A halted ticket takes no further action.
//! Deterministic: the same calls in the same order give the same results and the same end state.

use crate::domain::args::{Args, check_args};
use crate::domain::presentation::Presentation;
use crate::domain::{Domain, Environment, Evidence, Task, ToolOutcome};
use crate::suites::triage::data::{Queue, Shipment};
use crate::suites::triage::{TRIAGE_CATEGORIES, TRIAGE_TOOLS, TriageSuite, find_order};
use crate::trace::{FailureMode, Verdict};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One conversation's triage desk: the tickets and orders, and the actions taken so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriageEnv {
    tickets: Vec<String>,
    orders: BTreeMap<String, Shipment>,
    routes: Vec<(String, Queue)>,
    lookups: Vec<String>,
    drafts: Vec<(String, String)>,
    halted: Vec<String>,
}

impl TriageEnv {
    /// A desk with these tickets (ids) and orders, and nothing done yet.
    pub fn new(tickets: Vec<String>, orders: BTreeMap<String, Shipment>) -> TriageEnv {
        TriageEnv {
            tickets,
            orders,
            ..TriageEnv::default()
        }
    }

    /// The ticket id as the data spells it, or the error for the model.
    fn open_ticket(&self, id: &str) -> Result<String, String> {
        let id = self
            .tickets
            .iter()
            .find(|t| t.eq_ignore_ascii_case(id))
            .cloned()
            .ok_or_else(|| format!("no ticket with id '{id}'"))?;
        if self.halted.contains(&id) {
            return Err(format!(
                "ticket {id} is already closed (halted); no further action is possible"
            ));
        }
        Ok(id)
    }

    fn run(&mut self, tool: &str, a: &Args) -> Result<Value, String> {
        if let Some(q) = Queue::of_tool(tool) {
            let id = self.open_ticket(a.get("ticket_id"))?;
            self.routes.push((id.clone(), q));
            return Ok(json!({"ticket_id": id, "queue": q.as_str(), "status": "routed"}));
        }
        match tool {
            "lookup_order" => {
                let want = a.get("order_id").trim_start_matches('#');
                let s = find_order(&self.orders, want)
                    .ok_or_else(|| format!("no order with id '{want}'"))?;
                self.lookups.push(s.order_id.clone());
                Ok(serde_json::to_value(s).unwrap_or(Value::Null))
            }
            "draft_reply" => {
                let id = self.open_ticket(a.get("ticket_id"))?;
                self.drafts.push((id.clone(), a.get("message").to_string()));
                Ok(json!({"ticket_id": id, "draft": "saved"}))
            }
            "halt" => {
                let id = self.open_ticket(a.get("ticket_id"))?;
                self.halted.push(id.clone());
                Ok(json!({"ticket_id": id, "status": "closed"}))
            }
            _ => Err(format!(
                "unknown tool '{tool}'; the tools are {}",
                TRIAGE_TOOLS.map(|(n, _)| n).join(", ")
            )),
        }
    }
}

impl Environment for TriageEnv {
    fn execute(&mut self, tool: &str, args: &Value) -> ToolOutcome {
        let Some((_, params)) = TRIAGE_TOOLS.iter().find(|(n, _)| *n == tool) else {
            return ToolOutcome::Rejected(format!(
                "unknown tool '{tool}'; the tools are {}",
                TRIAGE_TOOLS.map(|(n, _)| n).join(", ")
            ));
        };
        let checked = match check_args(params, args) {
            Ok(a) => a,
            Err(e) => return ToolOutcome::Rejected(e),
        };
        match self.run(tool, &checked) {
            Ok(v) => ToolOutcome::Ok(v.to_string()),
            Err(e) => ToolOutcome::Rejected(e),
        }
    }

    /// `{"routes": [{ticket_id, queue}], "lookups": [order ids], "drafts": [{ticket_id, message}],
    /// "halted": [ticket ids]}`, each in the order the actions were taken.
    fn snapshot(&self) -> Value {
        json!({
            "routes": self.routes.iter().map(|(t, q)| json!({"ticket_id": t, "queue": q.as_str()})).collect::<Vec<_>>(),
            "lookups": self.lookups,
            "drafts": self.drafts.iter().map(|(t, m)| json!({"ticket_id": t, "message": m})).collect::<Vec<_>>(),
            "halted": self.halted,
        })
    }
}

impl Domain for TriageSuite {
    fn name(&self) -> &str {
        "triage"
    }

    fn presentation(&self) -> &Presentation {
        &self.presentation
    }

    fn tasks_digest(&self) -> &str {
        &self.tasks_digest
    }

    fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    fn categories(&self) -> Vec<String> {
        TRIAGE_CATEGORIES.iter().map(|c| c.to_string()).collect()
    }

    fn task_noun(&self) -> &str {
        "tickets"
    }

    fn new_environment(&self) -> Box<dyn Environment> {
        Box::new(TriageEnv::new(
            self.tickets.iter().map(|t| t.id.clone()).collect(),
            self.orders.clone(),
        ))
    }

    fn grade(&self, task: &Task, evidence: &Evidence<'_>) -> Verdict {
        match (
            self.expectations.tickets.get(&task.id),
            self.ticket(&task.id),
        ) {
            (Some(exp), Some(ticket)) => {
                crate::suites::triage::grade::grade(exp, ticket, task, evidence)
            }
            _ => Verdict {
                passed: false,
                reasons: vec![format!("no grader for ticket '{}'", task.id)],
                failure_mode: Some(FailureMode::WrongAnswer),
                ..Verdict::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::triage::data::TrackingStatus;

    fn env() -> TriageEnv {
        let s = Shipment {
            order_id: "A-1".into(),
            status: TrackingStatus::InTransit,
            carrier: "Parcelway".into(),
            tracking: "PW1".into(),
            estimated_delivery: None,
            delivered_on: None,
        };
        TriageEnv::new(
            vec!["TK-1".into(), "TK-2".into()],
            [("A-1".to_string(), s)].into(),
        )
    }

    fn ok(e: &mut TriageEnv, tool: &str, args: Value) -> Value {
        match e.execute(tool, &args) {
            ToolOutcome::Ok(t) => serde_json::from_str(&t).expect("json"),
            other => panic!("{tool} not accepted: {other:?}"),
        }
    }

    fn rejected(e: &mut TriageEnv, tool: &str, args: Value) -> String {
        match e.execute(tool, &args) {
            ToolOutcome::Rejected(r) => r,
            other => panic!("{tool} not rejected: {other:?}"),
        }
    }

    #[test]
    fn actions_are_recorded_in_order_with_canonical_ids() {
        let mut e = env();
        ok(&mut e, "route_docs", json!({"ticket_id": "tk-1"}));
        let found = ok(&mut e, "lookup_order", json!({"order_id": "#a-1"}));
        assert_eq!(found["status"], "in_transit");
        assert_eq!(found["carrier"], "Parcelway");
        ok(
            &mut e,
            "draft_reply",
            json!({"ticket_id": "TK-2", "message": "hi"}),
        );
        ok(&mut e, "halt", json!({"ticket_id": "TK-1"}));
        assert_eq!(
            e.snapshot(),
            json!({"routes": [{"ticket_id": "TK-1", "queue": "docs"}], "lookups": ["A-1"],
                   "drafts": [{"ticket_id": "TK-2", "message": "hi"}], "halted": ["TK-1"]})
        );
    }

    #[test]
    fn unknown_tools_ids_bad_arguments_and_closed_tickets_are_rejected() {
        let mut e = env();
        assert!(rejected(&mut e, "escalate_via_slack", json!({})).contains("unknown tool"));
        assert_eq!(
            rejected(&mut e, "halt", json!({})),
            "missing required argument 'ticket_id'"
        );
        assert_eq!(
            rejected(&mut e, "draft_reply", json!({"ticket_id": "TK-1"})),
            "missing required argument 'message'"
        );
        assert!(
            rejected(&mut e, "route_oncall", json!({"ticket_id": "TK-9"})).contains("no ticket")
        );
        assert!(rejected(&mut e, "lookup_order", json!({"order_id": "A-9"})).contains("no order"));
        ok(&mut e, "halt", json!({"ticket_id": "TK-1"}));
        for tool in ["halt", "route_triage"] {
            assert!(
                rejected(&mut e, tool, json!({"ticket_id": "TK-1"})).contains("already closed")
            );
        }
        assert_eq!(e.snapshot()["halted"], json!(["TK-1"]));
        assert_eq!(e.snapshot()["routes"], json!([]));
    }

    #[test]
    fn the_tool_table_matches_the_closed_set() {
        assert_eq!(
            TRIAGE_TOOLS.map(|(n, _)| n),
            crate::suites::triage::policy::CLOSED
        );
    }
}
