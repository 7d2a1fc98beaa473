//! Where conversations and calls ended (metrics.md, seed 001): outcome counts with the exclusions
//! every quality rate carries, call buckets (ok / transport / protocol) with retries and the two
//! flags on ok calls, and the failure mode of each failed conversation.

use crate::runner::record::{CallRecord, ConversationRecord, Outcome};
use crate::trace::FailureMode;
use crate::wire::outcome::CallOutcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a set of conversations (or router calls) ended; transport and protocol failures are
/// excluded from quality denominators and counted here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    /// Everything recorded.
    pub total: usize,
    /// Graded (pass + model_fail): the quality denominator.
    pub graded: usize,
    /// Graded and passed.
    pub pass: usize,
    /// Graded and failed (call cap included).
    pub model_fail: usize,
    /// Ended by transport failures (excluded).
    pub transport_fail: usize,
    /// Ended by a protocol failure (excluded).
    pub protocol_fail: usize,
    /// Ended by a failure of the tools' server, an MCP suite's (excluded).
    #[serde(default)]
    pub tool_server_fail: usize,
}

impl OutcomeCounts {
    /// Adds one outcome.
    pub fn add(&mut self, o: Outcome) {
        self.total += 1;
        match o {
            Outcome::Pass => self.pass += 1,
            Outcome::ModelFail => self.model_fail += 1,
            Outcome::TransportFail => self.transport_fail += 1,
            Outcome::ProtocolFail => self.protocol_fail += 1,
            Outcome::ToolServerFail => self.tool_server_fail += 1,
        }
        if o.is_graded() {
            self.graded += 1;
        }
    }

    /// Counts of these outcomes.
    /// For the tests: the running totals fed these records.
    #[cfg(test)]
    pub fn of(outcomes: impl IntoIterator<Item = Outcome>) -> Self {
        let mut c = OutcomeCounts::default();
        for o in outcomes {
            c.add(o);
        }
        c
    }

    /// The denominator note printed beside every rate, counts thousands-separated as the report
    /// prints them: `n = 11,800 of 12,000; 200 transport` (just `n = 120` when nothing was
    /// excluded). summary.json and report.md carry the same text.
    pub fn denominator_note(&self) -> String {
        let count = |n: usize| {
            let digits = n.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        let mut s = if self.graded == self.total {
            format!("n = {}", count(self.graded))
        } else {
            format!("n = {} of {}", count(self.graded), count(self.total))
        };
        for (n, what) in [
            (self.transport_fail, "transport"),
            (self.protocol_fail, "protocol"),
            (self.tool_server_fail, "tool server"),
        ] {
            if n > 0 {
                s.push_str(&format!("; {} {what}", count(n)));
            }
        }
        s
    }
}

/// Buckets of model calls, with retries and the flags of ok calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallBuckets {
    /// Calls recorded.
    pub calls: usize,
    /// Well-formed responses.
    pub ok: usize,
    /// Calls whose last attempt was a transport failure.
    pub transport: usize,
    /// Calls whose last attempt was a protocol failure.
    pub protocol: usize,
    /// Attempts beyond the first, over all calls.
    pub retries: usize,
    /// Ok calls whose reply hit num_predict (`done_reason: length`).
    pub truncated: usize,
    /// Ok calls where Ollama dropped context (prompt at num_ctx, or shrinking).
    pub context_overflow: usize,
}

impl CallBuckets {
    /// Counts one call.
    pub fn add(&mut self, c: &CallRecord) {
        self.calls += 1;
        self.retries += c.retries() as usize;
        match c.outcome {
            CallOutcome::Ok => {
                self.ok += 1;
                self.truncated += usize::from(c.truncated);
                self.context_overflow += usize::from(c.context_overflow);
            }
            CallOutcome::Transport => self.transport += 1,
            CallOutcome::Protocol => self.protocol += 1,
        }
    }
}

/// Buckets of these calls.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn call_buckets<'a>(calls: impl IntoIterator<Item = &'a CallRecord>) -> CallBuckets {
    let mut b = CallBuckets::default();
    calls.into_iter().for_each(|c| b.add(c));
    b
}

/// Failure modes of the failed graded conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureModes {
    /// Failed conversations by their verdict's failure mode.
    pub by_mode: BTreeMap<FailureMode, usize>,
    /// Failed conversations whose verdict carries no failure mode.
    pub unlabelled: usize,
}

impl FailureModes {
    /// Counts one graded conversation (a pass, or a failure outside the model, is skipped).
    pub fn add(&mut self, c: &ConversationRecord) {
        if c.outcome != Outcome::ModelFail {
            return;
        }
        match c.verdict.failure_mode {
            Some(m) => *self.by_mode.entry(m).or_default() += 1,
            None => self.unlabelled += 1,
        }
    }
}

/// Failure modes over graded conversations (passes are skipped).
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn failure_modes(convs: &[&ConversationRecord]) -> FailureModes {
    let mut f = FailureModes::default();
    convs.iter().for_each(|c| f.add(c));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::wire::outcome::Attempt;

    #[test]
    fn outcome_counts_and_note() {
        let c = OutcomeCounts::of([
            Outcome::Pass,
            Outcome::ModelFail,
            Outcome::TransportFail,
            Outcome::TransportFail,
            Outcome::Pass,
        ]);
        assert_eq!((c.total, c.graded, c.pass, c.model_fail), (5, 3, 2, 1));
        assert_eq!(c.denominator_note(), "n = 3 of 5; 2 transport");
        // summary.json's note reads as report.md's: thousands separated.
        let many = OutcomeCounts::of((0..1_234_567).map(|_| Outcome::Pass));
        assert_eq!(many.denominator_note(), "n = 1,234,567");
        assert_eq!(
            OutcomeCounts::of([Outcome::Pass]).denominator_note(),
            "n = 1"
        );
    }

    #[test]
    fn call_buckets_count_retries_and_flags() {
        let attempt = |outcome| Attempt {
            outcome,
            status: None,
            error: None,
            elapsed_ms: 1.0,
        };
        let mut a = call(10, 1);
        a.truncated = true;
        a.attempts = Box::new([attempt(CallOutcome::Transport), attempt(CallOutcome::Ok)]);
        let mut b = call(10, 1);
        b.outcome = CallOutcome::Protocol;
        b.truncated = true; // not counted: the flag rides on ok calls only
        let mut c = call(5, 1);
        c.context_overflow = true;
        let got = call_buckets([&a, &b, &c]);
        assert_eq!(
            got,
            CallBuckets {
                calls: 3,
                ok: 2,
                transport: 0,
                protocol: 1,
                retries: 1,
                truncated: 1,
                context_overflow: 1
            }
        );
    }

    #[test]
    fn failure_modes_skip_passes() {
        let mut a = conversation("m", "L1", 0, false, vec![]);
        a.verdict.failure_mode = Some(FailureMode::WrongAnswer);
        let b = conversation("m", "L1", 1, false, vec![]);
        let c = conversation("m", "L1", 2, true, vec![]);
        let f = failure_modes(&[&a, &b, &c]);
        assert_eq!(f.by_mode[&FailureMode::WrongAnswer], 1);
        assert_eq!(f.unlabelled, 1);
    }
}
