//! The triage suite's gold policy, in code rather than in a prompt (seed 000): a closed action set
//! and a function from a ticket to the actions a perfect agent takes. The loader derives every
//! ticket's gold trajectory and category from it and refuses expectations that disagree with it;
//! the grader uses it to tell rule-resolvable tickets from lookup tickets. Part of the grading
//! source.

use crate::suites::triage::data::{Queue, Ticket};

/// One action of the closed set; each is a tool of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Route to a queue (`route_oncall`, `route_triage`, `route_docs`).
    Route(Queue),
    /// Look the ticket's order up (`lookup_order`).
    LookupOrder,
    /// Draft a reply to the customer (`draft_reply`).
    DraftReply,
    /// Close the ticket; nothing may follow (`halt`).
    Halt,
}

impl Action {
    /// The tool that performs the action.
    pub fn tool(self) -> &'static str {
        match self {
            Action::Route(q) => q.tool(),
            Action::LookupOrder => "lookup_order",
            Action::DraftReply => "draft_reply",
            Action::Halt => "halt",
        }
    }
}

/// The closed action set: the only tool names a triage agent may call.
pub const CLOSED: [&str; 6] = [
    "route_oncall",
    "route_triage",
    "route_docs",
    "lookup_order",
    "draft_reply",
    "halt",
];

/// Words whose presence (as the start of a word of the text) makes a ticket with an order id a
/// lookup: "shipping", "tracking", "delivery", "packages" all count; "membership" does not.
pub const LOOKUP_WORDS: [&str; 4] = ["ship", "track", "delivery", "package"];

/// Which branch of the policy a ticket takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Branch {
    /// An order id and a shipping word: look it up, draft a reply, halt.
    Lookup,
    /// Payments at high priority: page on-call, halt.
    Oncall,
    /// Billing at low priority: the docs answer, halt.
    Docs,
    /// Anything else: the triage queue, halt.
    Triage,
}

impl Branch {
    /// Every branch, in policy order.
    pub const ALL: [Branch; 4] = [Branch::Lookup, Branch::Oncall, Branch::Docs, Branch::Triage];
}

fn is(field: &str, value: &str) -> bool {
    field.trim().eq_ignore_ascii_case(value)
}

/// Whether the ticket carries an order id and a word of its text starts with a [`LOOKUP_WORDS`]
/// entry (case-insensitive).
pub fn needs_lookup(ticket: &Ticket) -> bool {
    let has_order = ticket
        .order_id
        .as_deref()
        .is_some_and(|o| !o.trim().is_empty());
    let text = ticket.text.to_lowercase();
    has_order
        && text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| LOOKUP_WORDS.iter().any(|k| w.starts_with(k)))
}

/// The branch the policy takes for a ticket; the first rule that applies wins.
pub fn branch(ticket: &Ticket) -> Branch {
    if needs_lookup(ticket) {
        Branch::Lookup
    } else if is(&ticket.priority, "high") && is(&ticket.product, "payments") {
        Branch::Oncall
    } else if is(&ticket.product, "billing") && is(&ticket.priority, "low") {
        Branch::Docs
    } else {
        Branch::Triage
    }
}

/// The gold plan: the actions a perfect agent takes on the ticket, in order.
pub fn gold_plan(ticket: &Ticket) -> Vec<Action> {
    match branch(ticket) {
        Branch::Lookup => vec![Action::LookupOrder, Action::DraftReply, Action::Halt],
        Branch::Oncall => vec![Action::Route(Queue::Oncall), Action::Halt],
        Branch::Docs => vec![Action::Route(Queue::Docs), Action::Halt],
        Branch::Triage => vec![Action::Route(Queue::Triage), Action::Halt],
    }
}

/// Whether the route follows from the ticket's fields alone (no lookup, no drafted reply): a rule
/// answers it with no model at all.
pub fn rule_resolvable(ticket: &Ticket) -> bool {
    let plan = gold_plan(ticket);
    plan.first() != Some(&Action::LookupOrder) && !plan.contains(&Action::DraftReply)
}

/// The queue the gold plan routes to (`None` for a lookup ticket).
pub fn gold_route(ticket: &Ticket) -> Option<Queue> {
    gold_plan(ticket).into_iter().find_map(|a| match a {
        Action::Route(q) => Some(q),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(product: &str, priority: &str, order: Option<&str>, text: &str) -> Ticket {
        Ticket {
            id: "TK-1".into(),
            product: product.into(),
            priority: priority.into(),
            order_id: order.map(String::from),
            text: text.into(),
        }
    }

    #[test]
    fn an_order_id_with_a_shipping_word_is_a_lookup() {
        for text in [
            "where is my package",
            "Tracking says nothing",
            "was it shipped?",
            "DELIVERY window passed",
            "two packages, one missing",
        ] {
            let t = ticket("shop", "med", Some("A-1"), text);
            assert_eq!(branch(&t), Branch::Lookup, "{text}");
            assert_eq!(
                gold_plan(&t),
                vec![Action::LookupOrder, Action::DraftReply, Action::Halt]
            );
            assert!(!rule_resolvable(&t));
            assert_eq!(gold_route(&t), None);
        }
    }

    #[test]
    fn the_lookup_wins_over_every_routing_rule() {
        let t = ticket(
            "payments",
            "high",
            Some("A-1"),
            "express shipping paid, not here",
        );
        assert_eq!(branch(&t), Branch::Lookup);
        let t = ticket("billing", "low", Some("A-1"), "has it shipped?");
        assert_eq!(branch(&t), Branch::Lookup);
    }

    #[test]
    fn without_an_order_id_or_a_shipping_word_there_is_no_lookup() {
        // Shipping words but no order id; an order id but no shipping word; a word that merely
        // contains "ship".
        for (order, text) in [
            (None, "where is my package"),
            (Some(""), "where is my package"),
            (Some("A-1"), "receipt for this order please"),
            (Some("A-1"), "membership discount missing"),
        ] {
            let t = ticket("shop", "med", order, text);
            assert_eq!(branch(&t), Branch::Triage, "{order:?} {text}");
            assert!(rule_resolvable(&t));
        }
    }

    #[test]
    fn payments_at_high_priority_go_to_oncall() {
        let t = ticket("payments", "high", None, "card charged twice");
        assert_eq!(
            gold_plan(&t),
            vec![Action::Route(Queue::Oncall), Action::Halt]
        );
        assert_eq!(gold_route(&t), Some(Queue::Oncall));
        assert!(rule_resolvable(&t));
        let t = ticket(" Payments ", "HIGH", Some("A-1"), "checkout error");
        assert_eq!(branch(&t), Branch::Oncall);
    }

    #[test]
    fn billing_at_low_priority_goes_to_docs() {
        let t = ticket("billing", "low", None, "invoice looks high");
        assert_eq!(
            gold_plan(&t),
            vec![Action::Route(Queue::Docs), Action::Halt]
        );
        assert!(rule_resolvable(&t));
        assert_eq!(
            branch(&ticket("Billing", "Low", Some("A-1"), "receipt")),
            Branch::Docs
        );
    }

    #[test]
    fn everything_else_goes_to_triage() {
        for (product, priority) in [
            ("billing", "high"),
            ("billing", "med"),
            ("payments", "low"),
            ("payments", "med"),
            ("shop", "high"),
            ("app", "low"),
        ] {
            let t = ticket(product, priority, None, "something is wrong");
            assert_eq!(
                gold_plan(&t),
                vec![Action::Route(Queue::Triage), Action::Halt]
            );
            assert!(rule_resolvable(&t));
        }
    }

    #[test]
    fn every_plan_is_closed_and_ends_with_halt() {
        for b in Branch::ALL {
            let t = match b {
                Branch::Lookup => ticket("shop", "med", Some("A-1"), "track it"),
                Branch::Oncall => ticket("payments", "high", None, "x"),
                Branch::Docs => ticket("billing", "low", None, "x"),
                Branch::Triage => ticket("shop", "med", None, "x"),
            };
            assert_eq!(branch(&t), b);
            let plan = gold_plan(&t);
            assert_eq!(plan.last(), Some(&Action::Halt));
            assert!(plan.iter().all(|a| CLOSED.contains(&a.tool())));
        }
    }
}
