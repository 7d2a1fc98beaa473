//! The router (leaf node): standalone accuracy, unparseable replies, tokens and latency per call
//! and per correct call; and the pipeline view of router calls made in front of the agent.

use super::cost::blended;
use super::latency::{ServerSplit, mean, percentile, server_split};
use super::taxonomy::OutcomeCounts;
use crate::runner::record::{ConversationRecord, RouterRecord};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Label counted for a router call whose reply did not parse.
pub const UNPARSEABLE_LABEL: &str = "(unparseable)";

/// The fastest standalone router call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FastestCall {
    /// Its latency, seconds.
    pub latency_s: f64,
    /// Its input tokens.
    pub input_tokens: u64,
    /// Its output tokens.
    pub output_tokens: u64,
}

/// One model's standalone router results (graded calls only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouterSummary {
    /// How the calls ended (transport/protocol failures excluded below).
    pub outcomes: OutcomeCounts,
    /// Graded calls.
    pub calls: usize,
    /// Distinct messages.
    pub messages: usize,
    /// Graded calls per message (integer division, as the reference).
    pub runs_per_message: usize,
    /// Correct calls.
    pub correct: usize,
    /// correct / calls.
    pub accuracy: Option<f64>,
    /// 95% interval of the accuracy, messages as clusters (metrics.md, "Intervals at the
    /// boundary").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy_ci95: Option<super::bootstrap::Interval>,
    /// Share of calls whose reply did not parse into a label.
    pub unparseable: Option<f64>,
    /// Mean input tokens per call.
    pub input_tokens_per_call: Option<f64>,
    /// Mean output tokens per call.
    pub output_tokens_per_call: Option<f64>,
    /// Mean blended tokens per call.
    pub blended_tokens_per_call: Option<f64>,
    /// All blended tokens / correct calls; `None` without a correct call.
    pub blended_tokens_per_correct: Option<f64>,
    /// Mean latency per call, seconds.
    pub latency_per_call_s: Option<f64>,
    /// p95 latency per call, seconds.
    pub latency_p95_s: Option<f64>,
    /// The fastest call.
    pub fastest_call: Option<FastestCall>,
    /// Ollama's split of the calls' latency.
    pub ollama_timing: Option<ServerSplit>,
    /// Sampling temperature, when every call recorded the same one.
    pub temperature: Option<f64>,
}

/// Standalone router summary of one model's records.
pub fn router_summary(records: &[&RouterRecord], w: f64) -> RouterSummary {
    let outcomes = OutcomeCounts::of(records.iter().map(|r| r.outcome));
    let graded: Vec<&RouterRecord> = records
        .iter()
        .copied()
        .filter(|r| r.outcome.is_graded())
        .collect();
    let n = graded.len();
    let messages = graded
        .iter()
        .map(|r| r.index)
        .collect::<BTreeSet<_>>()
        .len();
    let correct = graded.iter().filter(|r| r.correct).count();
    let share = |k: usize| (n > 0).then(|| k as f64 / n as f64);
    let inputs: Vec<f64> = graded
        .iter()
        .map(|r| r.call.input_tokens() as f64)
        .collect();
    let outputs: Vec<f64> = graded
        .iter()
        .map(|r| r.call.output_tokens() as f64)
        .collect();
    let tokens: Vec<f64> = graded
        .iter()
        .map(|r| blended(r.call.input_tokens(), r.call.output_tokens(), w))
        .collect();
    let lat: Vec<f64> = graded.iter().filter_map(|r| r.call.latency_s()).collect();
    let fastest = graded
        .iter()
        .filter_map(|r| r.call.latency_s().map(|l| (l, r)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(l, r)| FastestCall {
            latency_s: l,
            input_tokens: r.call.input_tokens(),
            output_tokens: r.call.output_tokens(),
        });
    let temps: BTreeSet<u64> = graded
        .iter()
        .filter_map(|r| r.temperature.map(f64::to_bits))
        .collect();
    RouterSummary {
        outcomes,
        calls: n,
        messages,
        runs_per_message: n / messages.max(1),
        correct,
        accuracy: share(correct),
        accuracy_ci95: None,
        unparseable: share(graded.iter().filter(|r| r.predicted.is_none()).count()),
        input_tokens_per_call: mean(&inputs),
        output_tokens_per_call: mean(&outputs),
        blended_tokens_per_call: mean(&tokens),
        blended_tokens_per_correct: super::cost::per_success(tokens.iter().sum(), correct),
        latency_per_call_s: mean(&lat),
        latency_p95_s: percentile(&lat, 95.0),
        fastest_call: fastest,
        ollama_timing: server_split(graded.iter().map(|r| &r.call)),
        temperature: (temps.len() == 1)
            .then(|| temps.iter().next().map(|b| f64::from_bits(*b)))
            .flatten(),
    }
}

/// The router in front of the agent, per model (over graded conversations).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pipeline {
    /// Router calls per conversation.
    pub router_calls_per_conversation: f64,
    /// Router blended tokens per conversation.
    pub router_blended_tokens_per_conversation: f64,
    /// Router share of all pipeline blended tokens.
    pub router_share_of_tokens: Option<f64>,
    /// Mean router latency per call, seconds.
    pub router_latency_per_call_s: Option<f64>,
    /// Router predictions by label ([`UNPARSEABLE_LABEL`] for none).
    pub router_label_counts: BTreeMap<String, usize>,
    /// (router + orchestrator blended tokens) / passes.
    pub blended_tokens_per_success: Option<f64>,
    /// (router + orchestrator latency) / passes, seconds.
    pub time_per_success_s: Option<f64>,
    /// Ollama's split of the router calls' latency.
    pub router_ollama_timing: Option<ServerSplit>,
}

/// Totals of the router calls in front of the agent: (blended tokens, latency seconds).
pub fn router_in_front_totals(convs: &[&ConversationRecord], w: f64) -> (f64, f64) {
    let calls = convs.iter().flat_map(|c| c.router_calls());
    calls.fold((0.0, 0.0), |(t, l), c| {
        (
            t + blended(c.input_tokens(), c.output_tokens(), w),
            l + c.latency_s().unwrap_or(0.0),
        )
    })
}

/// The pipeline view; `None` when no router call was made in front of the agent.
/// `orchestrator_tokens` and `orchestrator_latency_s` are the agent's totals over `convs`.
pub fn pipeline(
    convs: &[&ConversationRecord],
    w: f64,
    orchestrator_tokens: f64,
    orchestrator_latency_s: f64,
    passes: usize,
) -> Option<Pipeline> {
    let calls: Vec<_> = convs.iter().flat_map(|c| c.router_calls()).collect();
    if calls.is_empty() || convs.is_empty() {
        return None;
    }
    let n = convs.len() as f64;
    let (tokens, latency) = router_in_front_totals(convs, w);
    let lat: Vec<f64> = calls.iter().filter_map(|c| c.latency_s()).collect();
    let mut labels = BTreeMap::new();
    for c in &calls {
        let key = c
            .predicted
            .as_deref()
            .unwrap_or(UNPARSEABLE_LABEL)
            .to_string();
        *labels.entry(key).or_default() += 1;
    }
    let all = tokens + orchestrator_tokens;
    Some(Pipeline {
        router_calls_per_conversation: calls.len() as f64 / n,
        router_blended_tokens_per_conversation: tokens / n,
        router_share_of_tokens: (all > 0.0).then(|| tokens / all),
        router_latency_per_call_s: mean(&lat),
        router_label_counts: labels,
        blended_tokens_per_success: super::cost::per_success(all, passes),
        time_per_success_s: super::cost::per_success(latency + orchestrator_latency_s, passes),
        router_ollama_timing: server_split(calls.iter().copied()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{conversation, router_record, timed_call};
    use crate::runner::record::{Node, Outcome};

    fn record(index: u32, correct: bool, predicted: Option<&str>, wall: f64) -> RouterRecord {
        let mut r = router_record("m", index, correct, predicted);
        r.call = timed_call(100, 2, wall);
        r
    }

    #[test]
    fn no_correct_call_leaves_tokens_per_correct_call_undefined() {
        let a = record(0, false, None, 0.2);
        let s = router_summary(&[&a], 4.0);
        assert_eq!((s.calls, s.correct), (1, 0));
        assert_eq!(s.blended_tokens_per_correct, None);
    }

    #[test]
    fn accuracy_tokens_and_exclusions() {
        let a = record(0, true, Some("a"), 0.2);
        let b = record(1, false, None, 0.1);
        let c = record(1, true, Some("a"), 0.3);
        let mut d = record(2, false, None, 9.0);
        d.outcome = Outcome::TransportFail;
        let s = router_summary(&[&a, &b, &c, &d], 4.0);
        assert_eq!(s.outcomes.transport_fail, 1);
        assert_eq!(
            (s.calls, s.messages, s.runs_per_message, s.correct),
            (3, 2, 1, 2)
        );
        assert!((s.accuracy.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.unparseable.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        // 3 calls x 108 blended tokens / 2 correct
        assert_eq!(s.blended_tokens_per_correct, Some(162.0));
        assert_eq!(s.fastest_call.unwrap().latency_s, 0.1);
        assert_eq!(s.temperature, Some(0.0));
    }

    #[test]
    fn pipeline_adds_router_calls() {
        let mut r = timed_call(100, 3, 0.1);
        r.node = Node::Router;
        r.predicted = Some("order_status".into());
        let conv = conversation("m", "L1", 0, true, vec![r, timed_call(1000, 10, 0.5)]);
        let p = pipeline(&[&conv], 4.0, 1040.0, 0.5, 1).unwrap();
        assert_eq!(p.router_calls_per_conversation, 1.0);
        assert_eq!(p.router_blended_tokens_per_conversation, 112.0);
        assert_eq!(p.blended_tokens_per_success, Some(1152.0));
        assert!((p.time_per_success_s.unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(p.router_label_counts["order_status"], 1);
    }
}
