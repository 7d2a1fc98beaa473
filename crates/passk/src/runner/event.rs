//! Events the runner emits while it works. The command hands in a sink (progress bars, plain log
//! lines, or a test buffer); the runner knows nothing else about the terminal.

use crate::runner::record::{Outcome, TrialKey};
use crate::wire::outcome::CallOutcome;

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The schedule is known: how many trials run now and how many were already on disk.
    Scheduled {
        /// Trials per model still to run, in run order.
        per_model: Vec<(String, u64)>,
        /// Trials skipped because their records exist (resume).
        already_done: u64,
        /// The run plays in rounds and may stop before the schedule is done (`--stop-when-decided`).
        may_stop_early: bool,
    },
    /// The servers the trials are shared over, and how many each plays at once.
    Servers {
        /// Base URLs, in the order given.
        hosts: Vec<String>,
        /// Conversations per server at once (`--parallel`).
        parallel: u32,
    },
    /// A trial was handed to a server.
    TrialStarted {
        /// The server's base URL.
        host: String,
    },
    /// A trial ended because its server stopped answering and went back to the queue for
    /// another server; nothing was written.
    TrialRequeued {
        /// The server that stopped answering.
        host: String,
    },
    /// A server stopped answering and left the pool; its trials go to the others.
    HostLeft {
        /// Its base URL.
        host: String,
    },
    /// A model's trials begin (after its preflight and warm-up).
    ModelStarted {
        /// Model tag.
        model: String,
    },
    /// An attempt of a model call failed, as it happened (before its trial ends).
    AttemptFailed {
        /// The server's base URL.
        host: String,
        /// Model tag.
        model: String,
        /// How the attempt failed.
        outcome: CallOutcome,
        /// Another attempt follows (a retry); else the call gives up.
        retrying: bool,
        /// The attempt's error text.
        error: String,
    },
    /// One trial was written to the journal.
    TrialFinished {
        /// Which trial.
        key: TrialKey,
        /// How it ended.
        outcome: Outcome,
        /// Model calls it made.
        calls: u32,
        /// Retries its calls needed (attempts beyond the first).
        retries: u32,
        /// It ended on a transport failure while the server did not answer at all.
        server_unreachable: bool,
        /// The server that played it.
        host: String,
    },
    /// A warning the user must see (partial offload, context overflow, torn line dropped...).
    Warning(String),
    /// An informational line.
    Info(String),
    /// This machine has no GPU telemetry, and why. A terminal sink says it once, however many
    /// runs and servers report it (calibrate plays five runs here).
    NoGpuTelemetry(String),
}

/// Receives run events.
pub trait EventSink: Send + Sync {
    /// Handles one event; must not block for long.
    fn emit(&self, event: RunEvent);
}

/// A sink that keeps every event (tests).
#[derive(Debug, Default)]
pub struct Collect(pub std::sync::Mutex<Vec<RunEvent>>);

impl EventSink for Collect {
    fn emit(&self, event: RunEvent) {
        if let Ok(mut v) = self.0.lock() {
            v.push(event);
        }
    }
}
