//! The router suite (docs/reference/suites.md, "Router"): the intent-router leaf node. A prompt, a closed
//! label set and labelled customer messages; one call per message, no tools. `load` reads its files,
//! `grade` turns a reply into a prediction against the frozen gold labels.

pub mod grade;
pub mod load;

pub use load::load_router;

use serde::{Deserialize, Serialize};

/// One labelled router message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterMessage {
    /// Index in the suite (0-based), stable across runs.
    pub index: u32,
    /// The customer's message.
    pub text: String,
    /// Gold label.
    pub label: String,
}

/// The intent-router leaf node: a prompt, a closed label set and labelled messages.
#[derive(Debug, Clone)]
pub struct RouterSuite {
    /// System prompt of the router.
    pub prompt: String,
    /// The closed label set, in suite order.
    pub labels: Vec<String>,
    /// The labelled messages.
    pub messages: Vec<RouterMessage>,
    /// SHA-256 of the router's task files.
    pub digest: String,
}

impl RouterSuite {
    /// `suite check`'s counts line: messages, and messages per label in report order
    /// (`router: 48 messages (order_status 8, ...)`).
    pub fn counts_line(&self) -> String {
        let labels: Vec<String> = load::ROUTER_LABELS
            .iter()
            .map(|l| {
                let n = self.messages.iter().filter(|m| m.label == *l).count();
                format!("{l} {n}")
            })
            .collect();
        format!(
            "router: {} messages ({})",
            self.messages.len(),
            labels.join(", ")
        )
    }
}
