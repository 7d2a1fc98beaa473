//! Running totals over one model's graded conversations in one configuration, gathered in one
//! pass: verdicts per task, tokens at every output weight, latencies and context growth. The
//! summary turns them into the model's figures.

use crate::analysis::figures::cost::{
    CACHE_DISCOUNT, OUTPUT_WEIGHTS, blended_calls, cached_calls, per_success,
};
use crate::analysis::figures::latency::{FitPoints, RunningMean, SplitSums, mean, percentile};
use crate::analysis::figures::router::router_in_front_totals;
use crate::analysis::intervals::bootstrap::IdTotals;
use crate::analysis::summary::{ContextPoint, Latency, Tokens};
use crate::runner::record::ConversationRecord;
use std::collections::BTreeMap;

/// Running totals over one model's graded conversations, gathered in one pass.
pub(super) struct Tally {
    /// Per task: (graded trials, passes).
    pub(super) tasks: BTreeMap<String, (usize, usize)>,
    /// Per task: (graded trials, passes whose every tool call was native).
    pub(super) native_only: BTreeMap<String, (usize, usize)>,
    /// Every tool event says how its call was written.
    pub(super) formats_known: bool,
    /// Bootstrap totals per task.
    pub(super) per_task: BTreeMap<String, IdTotals>,
    /// Blended tokens at each output weight of the sensitivity table.
    pub(super) by_weight: BTreeMap<u32, f64>,
    input: f64,
    output: f64,
    /// Estimated thinking tokens (part of `output`), when any call recorded thinking.
    thinking: Option<f64>,
    pub(super) blended: f64,
    cached: f64,
    /// Latency of each conversation that has one (sum of its calls).
    conversation_latency: Vec<f64>,
    /// Latency of the orchestrator calls.
    call_latency: RunningMean,
    /// Input tokens of the j-th orchestrator call, over the conversations that reached it.
    growth: BTreeMap<usize, RunningMean>,
    /// The orchestrator calls the latency fit reads.
    fit: FitPoints,
    /// Ollama's split of the orchestrator calls' latency.
    split: SplitSums,
}

impl Tally {
    pub(super) fn new() -> Self {
        Tally {
            tasks: BTreeMap::new(),
            native_only: BTreeMap::new(),
            formats_known: true,
            per_task: BTreeMap::new(),
            by_weight: OUTPUT_WEIGHTS.iter().map(|&x| (x, 0.0)).collect(),
            input: 0.0,
            output: 0.0,
            thinking: None,
            blended: 0.0,
            cached: 0.0,
            conversation_latency: Vec::new(),
            call_latency: RunningMean::default(),
            growth: BTreeMap::new(),
            fit: FitPoints::default(),
            split: SplitSums::default(),
        }
    }

    /// Adds one graded conversation.
    pub(super) fn add(&mut self, c: &ConversationRecord, w: f64) {
        self.add_verdict(c);
        self.add_tokens(c, w);
        self.add_latency(c);
    }

    fn add_verdict(&mut self, c: &ConversationRecord) {
        let p = usize::from(c.verdict.passed);
        let t = self.tasks.entry(c.task.clone()).or_default();
        t.0 += 1;
        t.1 += p;
        // Native only: every tool call came as Ollama's own tool_calls (a text call, accepted or
        // not, would have ended the turn as a reply in a harness that reads only those).
        let native = c
            .tool_events
            .iter()
            .all(|e| e.format == Some(crate::trace::CallFormat::Native));
        self.formats_known &= c.tool_events.iter().all(|e| e.format.is_some());
        let t = self.native_only.entry(c.task.clone()).or_default();
        t.0 += 1;
        t.1 += usize::from(c.verdict.passed && native);
    }

    fn add_tokens(&mut self, c: &ConversationRecord, w: f64) {
        let b = blended_calls(c.orchestrator_calls(), w);
        let cached = cached_calls(c.orchestrator_calls(), w, CACHE_DISCOUNT);
        let (router_tokens, _) = router_in_front_totals(&[c], w);
        let e = self.per_task.entry(c.task.clone()).or_default();
        e.trials += 1.0;
        e.passes += f64::from(u8::from(c.verdict.passed));
        e.tokens += b;
        e.cached += cached;
        e.pipeline += b + router_tokens;
        for (weight, total) in self.by_weight.iter_mut() {
            *total += blended_calls(c.orchestrator_calls(), f64::from(*weight));
        }
        self.blended += b;
        self.cached += cached;
        for x in c.orchestrator_calls() {
            self.input += x.input_tokens() as f64;
            self.output += x.output_tokens() as f64;
            if let Some(t) = x.thinking_tokens.get() {
                *self.thinking.get_or_insert(0.0) += t as f64;
            }
        }
        for (j, x) in c.orchestrator_calls().enumerate() {
            self.growth
                .entry(j)
                .or_default()
                .add(x.input_tokens() as f64);
        }
    }

    fn add_latency(&mut self, c: &ConversationRecord) {
        let lats: Vec<f64> = c
            .orchestrator_calls()
            .filter_map(|x| x.latency_s())
            .collect();
        if !lats.is_empty() {
            self.conversation_latency.push(lats.iter().sum::<f64>());
        }
        let e = self.per_task.entry(c.task.clone()).or_default();
        e.seconds += lats.iter().sum::<f64>();
        e.joules += c
            .orchestrator_calls()
            .filter_map(|x| x.gpu.as_deref()?.energy_j)
            .sum::<f64>();
        lats.into_iter().for_each(|l| self.call_latency.add(l));
        for x in c.orchestrator_calls() {
            self.fit.add(x);
            self.split.add(x);
        }
    }

    pub(super) fn total_latency(&self) -> f64 {
        self.conversation_latency.iter().sum()
    }

    pub(super) fn task_counts(&self) -> Vec<(usize, usize)> {
        self.tasks.values().copied().collect()
    }

    /// Token figures over `n` graded conversations with `passes` passes.
    pub(super) fn tokens(&self, n: usize, passes: usize) -> Tokens {
        let per_conv = |total: f64| (n > 0).then(|| total / n as f64);
        Tokens {
            input_per_conversation: per_conv(self.input),
            output_per_conversation: per_conv(self.output),
            thinking_per_conversation: self.thinking.and_then(per_conv),
            blended_per_conversation: per_conv(self.blended),
            blended_total: self.blended,
            cached_total: self.cached,
            blended_per_success: per_success(self.blended, passes),
            cached_blended_per_success: per_success(self.cached, passes),
        }
    }

    /// Latency figures; `every_attempt_s` is the agent's time over every conversation (graded
    /// or not) counting every attempt ([`every_attempt_s`]).
    pub(super) fn latency(&self, every_attempt_s: f64, passes: usize) -> Latency {
        let lat = &self.conversation_latency;
        Latency {
            calls: self.call_latency.count(),
            per_call_mean_s: self.call_latency.mean(),
            conversation_mean_s: mean(lat),
            conversation_p50_s: percentile(lat, 50.0),
            conversation_p95_s: percentile(lat, 95.0),
            time_per_success_s: if lat.is_empty() {
                None
            } else {
                per_success(self.total_latency(), passes)
            },
            time_per_success_all_attempts_s: per_success(every_attempt_s, passes),
            fit: self.fit.fit(),
            server_split: self.split.split(),
        }
    }

    /// Mean input tokens per call position, where at least 5 conversations reached it.
    pub(super) fn context_growth(&self) -> BTreeMap<usize, ContextPoint> {
        self.growth
            .iter()
            .filter(|(_, v)| v.count() >= 5)
            .filter_map(|(j, v)| {
                let point = ContextPoint {
                    mean_input_tokens: v.mean()?,
                    conversations: v.count(),
                };
                Some((*j, point))
            })
            .collect()
    }
}

/// Agent time of one conversation counting every attempt, a value per orchestrator call: its
/// latency (final attempt) plus the wall time of the attempts before it.
pub(super) fn every_attempt_s(c: &ConversationRecord) -> impl Iterator<Item = f64> + '_ {
    c.orchestrator_calls().map(|x| {
        let earlier: f64 = x
            .attempts
            .iter()
            .rev()
            .skip(1)
            .map(|a| a.elapsed_ms / 1000.0)
            .sum();
        x.latency_s().unwrap_or(0.0) + earlier
    })
}
