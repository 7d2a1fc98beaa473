//! The router grader: the gold labels frozen under `graders/router/labels.json`, and the rule that
//! turns a reply into a prediction (exactly one label named, or unparseable). Part of the grading
//! source.

use crate::suites::router::RouterSuite;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `graders/router/labels.json`: the closed label set and each message's gold label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterLabels {
    /// The closed label set, in report order.
    pub labels: Vec<String>,
    /// Gold label of each message, by the message's id in `tasks/router/messages.json`.
    pub gold: BTreeMap<String, String>,
}

impl RouterSuite {
    /// The prediction in a reply: the one label that appears in it, or `None` when zero or several
    /// labels appear (an unparseable reply counts as wrong).
    pub fn parse_label(&self, reply: &str) -> Option<String> {
        let lower = reply.to_lowercase();
        let found: Vec<&String> = self
            .labels
            .iter()
            .filter(|l| contains_word(&lower, &l.to_lowercase()))
            .collect();
        match found.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    }
}

/// True when `needle` occurs in `hay` not glued to other word characters.
fn contains_word(hay: &str, needle: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> RouterSuite {
        RouterSuite {
            prompt: String::new(),
            labels: ["order_status", "cancel_order", "other"]
                .map(String::from)
                .to_vec(),
            messages: vec![],
            digest: String::new(),
        }
    }

    #[test]
    fn one_label_is_a_prediction() {
        assert_eq!(
            router().parse_label("Label: cancel_order").as_deref(),
            Some("cancel_order")
        );
    }

    #[test]
    fn two_labels_or_none_are_unparseable() {
        assert_eq!(router().parse_label("order_status or cancel_order"), None);
        assert_eq!(router().parse_label("no idea"), None);
        assert_eq!(router().parse_label("other_stuff"), None);
    }
}
