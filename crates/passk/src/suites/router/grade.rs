//! The router grader: the gold labels frozen under `graders/router/labels.json`, and the rule that
//! turns a reply into a prediction (the reply is a label, or it is unparseable). Part of the grading
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
    /// The prediction in a reply: the label the reply is, or `None` when it is no label (an
    /// unparseable reply counts as wrong). The reply is a label when its first non-empty line
    /// (after any `<think>` block) is exactly one label, ignoring case, surrounding spaces,
    /// quotes, backticks, `*` emphasis, a trailing `.` and a leading `label:`. A sentence that
    /// merely contains a label word is no label.
    pub fn parse_label(&self, reply: &str) -> Option<String> {
        let answer = reply.rsplit_once("</think>").map_or(reply, |(_, a)| a);
        let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
        let word = bare(line);
        let word = strip_prefix_ignore_case(word, "label:").map_or(word, bare);
        self.labels
            .iter()
            .find(|l| l.eq_ignore_ascii_case(word))
            .cloned()
    }
}

/// The line without surrounding spaces, quotes, backticks, `*` and a trailing `.`.
fn bare(line: &str) -> &str {
    let marks: &[char] = &[' ', '\t', '"', '\'', '`', '*'];
    let line = line.trim_matches(marks);
    line.strip_suffix('.').unwrap_or(line).trim_matches(marks)
}

/// `s` without `prefix`, compared ignoring ASCII case.
fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
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
    fn a_reply_that_is_a_label_is_a_prediction() {
        for reply in [
            "cancel_order",
            "Label: cancel_order",
            "  **Cancel_Order**.\n",
            "`cancel_order`",
            "<think>It is about cancelling, not other.</think>\ncancel_order",
            "\"cancel_order\"\nThe customer wants the order stopped.",
        ] {
            assert_eq!(
                router().parse_label(reply).as_deref(),
                Some("cancel_order"),
                "{reply}"
            );
        }
    }

    #[test]
    fn a_sentence_containing_a_label_word_is_no_label() {
        // Shaped on the router reply passk issue 21 quotes from a real model: a sentence that
        // contains "any other business".
        let prose = "This message does not fit order status, cancellation, address changes, \
                     returns or product questions, so it belongs to any other business.";
        assert_eq!(router().parse_label(prose), None);
        assert_eq!(
            router().parse_label("The label is cancel_order because they want it stopped."),
            None
        );
        assert_eq!(router().parse_label("order_status or cancel_order"), None);
        assert_eq!(router().parse_label("no idea"), None);
        assert_eq!(router().parse_label("other_stuff"), None);
        assert_eq!(router().parse_label(""), None);
    }
}
