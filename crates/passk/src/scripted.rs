//! What passk and its stub server (the `passk-stub` crate) agree on: the warm-up exchange, the
//! failures the stub can inject and the verdict a scripted trial must get. The stub produces them,
//! the runner and calibration (in `analysis`) check against them; this file sits upstream of every
//! stage, beside `trace.rs` and `seed.rs`.

use crate::trace::FailureMode;

/// The warm-up prompt passk's preflight sends; the stub answers it with [`WARM_UP_REPLY`].
pub const WARM_UP_PROMPT: &str = "Reply with the single word: ready.";

/// The stub's answer to [`WARM_UP_PROMPT`].
pub const WARM_UP_REPLY: &str = "ready.";
use serde::{Deserialize, Serialize};

/// One kind of injected failure (or flagged answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The connection is reset (RST) after the request was read.
    Reset,
    /// No answer until the configured hang time has passed (past the client timeout).
    Hang,
    /// HTTP 500 with an `{"error"}` body.
    Http500,
    /// HTTP 503, Ollama's queue-full answer.
    Http503,
    /// HTTP 404 `model '<name>' not found`.
    NotFound,
    /// HTTP 400 `<name> does not support tools`.
    NoTools,
    /// HTTP 200 whose JSON body is cut in half.
    TruncatedBody,
    /// HTTP 200 whose body is an HTML error page.
    NonJsonBody,
    /// An `{"error"}` line after the stream started (HTTP 500 when not streaming, as Ollama does).
    StreamError,
    /// A well-formed answer cut short: `done_reason: "length"`.
    Length,
}

impl FaultKind {
    /// Every kind, in the order rates are tested.
    pub const ALL: [FaultKind; 10] = [
        FaultKind::Reset,
        FaultKind::Hang,
        FaultKind::Http500,
        FaultKind::Http503,
        FaultKind::NotFound,
        FaultKind::NoTools,
        FaultKind::TruncatedBody,
        FaultKind::NonJsonBody,
        FaultKind::StreamError,
        FaultKind::Length,
    ];
}

/// The verdict one trial must get under the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedTrial {
    /// Task id.
    pub task: String,
    /// Trial index (0-based).
    pub trial: u32,
    /// Whether the grader must pass it.
    pub passes: bool,
    /// The failure mode of a failing trial.
    pub failure_mode: Option<FailureMode>,
    /// Rejected tool calls the mistake adds over the gold trajectory (1 for a schema paste or an
    /// example value; 0 otherwise, where the calls are those of the replayed trajectory).
    pub extra_rejected: u32,
    /// The mistake (`none` for a clean trial).
    pub mistake: String,
}
