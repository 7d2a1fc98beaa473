//! The router suite as data: `tasks/router/prompt.md` and `tasks/router/messages.json` (what the
//! model sees) and `graders/router/labels.json` (the closed label set and each message's gold
//! label, frozen with the other graders).

use crate::domain::SuiteError;
use crate::domain::load::{invalid, read_json, read_text, sha256_hex};
use crate::suites::router::grade::RouterLabels;
use crate::suites::router::{RouterMessage, RouterSuite};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The six router labels, in report order.
pub const ROUTER_LABELS: [&str; 6] = [
    "order_status",
    "cancel_order",
    "change_address",
    "return_item",
    "product_info",
    "other",
];

/// Paths of the router suite's files, relative to the project root.
pub mod paths {
    /// The router's system prompt.
    pub const PROMPT: &str = "tasks/router/prompt.md";
    /// The messages, each with a stable id.
    pub const MESSAGES: &str = "tasks/router/messages.json";
    /// Gold labels by message id.
    pub const LABELS: &str = "graders/router/labels.json";
}

/// One entry of `tasks/router/messages.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageEntry {
    /// Stable id, the key of its gold label.
    pub id: String,
    /// The customer's message.
    pub text: String,
}

/// Loads the router suite from the project root.
pub fn load_router(root: &Path) -> Result<RouterSuite, SuiteError> {
    let prompt = read_text(&root.join(paths::PROMPT))?;
    let msg_path = root.join(paths::MESSAGES);
    let (entries, msg_file): (Vec<MessageEntry>, _) = read_json(&msg_path)?;
    let label_path = root.join(paths::LABELS);
    let (labels, _): (RouterLabels, _) = read_json(&label_path)?;
    if labels.labels != ROUTER_LABELS {
        return Err(invalid(
            &label_path,
            "labels",
            format!("must be exactly: {}", ROUTER_LABELS.join(", ")),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut messages = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        if !seen.insert(e.id.as_str()) {
            return Err(invalid(
                &msg_path,
                format!("[{i}].id"),
                format!("duplicate id '{}'", e.id),
            ));
        }
        if e.text.trim().is_empty() {
            return Err(invalid(
                &msg_path,
                format!("[{i}].text"),
                "must not be empty",
            ));
        }
        let Some(label) = labels.gold.get(&e.id) else {
            return Err(invalid(
                &label_path,
                format!("gold.{}", e.id),
                "missing (the message is in tasks/router/messages.json)",
            ));
        };
        if !ROUTER_LABELS.contains(&label.as_str()) {
            return Err(invalid(
                &label_path,
                format!("gold.{}", e.id),
                format!("unknown label '{label}'"),
            ));
        }
        messages.push(RouterMessage {
            index: i as u32,
            text: e.text.clone(),
            label: label.clone(),
        });
    }
    if let Some(extra) = labels.gold.keys().find(|k| !seen.contains(k.as_str())) {
        return Err(invalid(
            &label_path,
            format!("gold.{extra}"),
            "no such message in tasks/router/messages.json",
        ));
    }
    let digest = sha256_hex(format!("{}\n{}\n", prompt.digest, msg_file.digest).as_bytes());
    Ok(RouterSuite {
        prompt: prompt.text,
        labels: ROUTER_LABELS.iter().map(|s| s.to_string()).collect(),
        messages,
        digest,
    })
}
