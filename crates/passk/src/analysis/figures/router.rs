//! The router (leaf node): standalone accuracy, unparseable replies, tokens and latency per call
//! and per correct call; and the pipeline view of router calls made in front of the agent.

use crate::analysis::figures::cost::blended;
use crate::analysis::figures::latency::{RunningMean, ServerSplit, SplitSums, mean, percentile};
use crate::analysis::figures::taxonomy::OutcomeCounts;
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
    pub accuracy_ci95: Option<crate::analysis::intervals::bootstrap::Interval>,
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
    /// The server's split of the calls' latency (summary.json's key predates other servers).
    #[serde(rename = "ollama_timing")]
    pub server_split: Option<ServerSplit>,
    /// Sampling temperature, when every call recorded the same one.
    pub temperature: Option<f64>,
}

/// One model's standalone router results as running totals over its records.
#[derive(Debug, Default)]
pub struct RouterSums {
    outcomes: OutcomeCounts,
    messages: BTreeSet<u32>,
    correct: usize,
    unparseable: usize,
    inputs: RunningMean,
    outputs: RunningMean,
    tokens: RunningMean,
    /// Latency of each graded call (the p95 reads them all).
    latencies: Vec<f64>,
    fastest: Option<FastestCall>,
    temperatures: BTreeSet<u64>,
    split: SplitSums,
}

impl RouterSums {
    /// Adds one record; `w` is the output weight of blended tokens.
    pub fn add(&mut self, r: &RouterRecord, w: f64) {
        self.outcomes.add(r.outcome);
        if !r.outcome.is_graded() {
            return;
        }
        self.messages.insert(r.index);
        self.correct += usize::from(r.correct);
        self.unparseable += usize::from(r.predicted.is_none());
        let (input, output) = (r.call.input_tokens(), r.call.output_tokens());
        self.inputs.add(input as f64);
        self.outputs.add(output as f64);
        self.tokens.add(blended(input, output, w));
        if let Some(l) = r.call.latency_s() {
            self.latencies.push(l);
            // The first of equally fast calls, in `total_cmp`'s order, as `min_by` chose it.
            if self
                .fastest
                .as_ref()
                .is_none_or(|f| f.latency_s.total_cmp(&l).is_gt())
            {
                self.fastest = Some(FastestCall {
                    latency_s: l,
                    input_tokens: input,
                    output_tokens: output,
                });
            }
        }
        if let Some(t) = r.temperature {
            self.temperatures.insert(t.to_bits());
        }
        self.split.add(&r.call);
    }

    /// The summary (its interval is the caller's: it needs the per-message totals).
    pub fn finish(self) -> RouterSummary {
        let n = self.inputs.count();
        let messages = self.messages.len();
        let share = |k: usize| (n > 0).then(|| k as f64 / n as f64);
        let lat = &self.latencies;
        RouterSummary {
            outcomes: self.outcomes,
            calls: n,
            messages,
            runs_per_message: n / messages.max(1),
            correct: self.correct,
            accuracy: share(self.correct),
            accuracy_ci95: None,
            unparseable: share(self.unparseable),
            input_tokens_per_call: self.inputs.mean(),
            output_tokens_per_call: self.outputs.mean(),
            blended_tokens_per_call: self.tokens.mean(),
            blended_tokens_per_correct: crate::analysis::figures::cost::per_success(
                self.tokens.sum(),
                self.correct,
            ),
            latency_per_call_s: mean(lat),
            latency_p95_s: percentile(lat, 95.0),
            fastest_call: self.fastest,
            server_split: self.split.split(),
            temperature: (self.temperatures.len() == 1)
                .then(|| self.temperatures.first().map(|b| f64::from_bits(*b)))
                .flatten(),
        }
    }
}

/// Standalone router summary of one model's records.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn router_summary(records: &[&RouterRecord], w: f64) -> RouterSummary {
    let mut sums = RouterSums::default();
    records.iter().for_each(|r| sums.add(r, w));
    sums.finish()
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
    /// The server's split of the router calls' latency.
    #[serde(rename = "router_ollama_timing")]
    pub router_server_split: Option<ServerSplit>,
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

/// The router calls in front of the agent as running totals over graded conversations.
#[derive(Debug, Default)]
pub struct PipelineSums {
    conversations: usize,
    calls: usize,
    /// Blended tokens and latency of the router calls, summed as [`router_in_front_totals`].
    tokens: f64,
    latency: f64,
    latencies: RunningMean,
    labels: BTreeMap<String, usize>,
    split: SplitSums,
}

impl PipelineSums {
    /// Adds one graded conversation; `w` is the output weight of blended tokens.
    pub fn add(&mut self, c: &ConversationRecord, w: f64) {
        self.conversations += 1;
        for x in c.router_calls() {
            self.calls += 1;
            self.tokens += blended(x.input_tokens(), x.output_tokens(), w);
            let latency = x.latency_s();
            self.latency += latency.unwrap_or(0.0);
            latency.inspect(|&l| self.latencies.add(l));
            let label = x.predicted.as_deref().unwrap_or(UNPARSEABLE_LABEL);
            *crate::analysis::entry(&mut self.labels, label) += 1;
            self.split.add(x);
        }
    }

    /// The pipeline view; `None` when no router call was made in front of the agent.
    /// `orchestrator_tokens` and `orchestrator_latency_s` are the agent's totals over the same
    /// conversations, which made `passes` passes.
    pub fn finish(
        self,
        orchestrator_tokens: f64,
        orchestrator_latency_s: f64,
        passes: usize,
    ) -> Option<Pipeline> {
        if self.calls == 0 || self.conversations == 0 {
            return None;
        }
        let n = self.conversations as f64;
        let tokens = self.tokens;
        let all = tokens + orchestrator_tokens;
        Some(Pipeline {
            router_calls_per_conversation: self.calls as f64 / n,
            router_blended_tokens_per_conversation: tokens / n,
            router_share_of_tokens: (all > 0.0).then(|| tokens / all),
            router_latency_per_call_s: self.latencies.mean(),
            router_label_counts: self.labels,
            blended_tokens_per_success: crate::analysis::figures::cost::per_success(all, passes),
            time_per_success_s: crate::analysis::figures::cost::per_success(
                self.latency + orchestrator_latency_s,
                passes,
            ),
            router_server_split: self.split.split(),
        })
    }
}

/// The pipeline view; `None` when no router call was made in front of the agent.
/// `orchestrator_tokens` and `orchestrator_latency_s` are the agent's totals over `convs`.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn pipeline(
    convs: &[&ConversationRecord],
    w: f64,
    orchestrator_tokens: f64,
    orchestrator_latency_s: f64,
    passes: usize,
) -> Option<Pipeline> {
    let mut sums = PipelineSums::default();
    convs.iter().for_each(|c| sums.add(c, w));
    sums.finish(orchestrator_tokens, orchestrator_latency_s, passes)
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
