//! Outcome buckets of one model call (metrics.md, seed 001): every call lands in exactly one.

use serde::{Deserialize, Serialize};

/// The bucket of one call or one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// A well-formed response (what the model did with it is the grader's business).
    Ok,
    /// Connection refused/reset, DNS, timeout, HTTP 5xx/408/429, a mid-stream error line.
    Transport,
    /// The server answered, but not as Ollama answers (4xx, a body that is not the expected JSON).
    Protocol,
}

/// One HTTP attempt of a call; every attempt is kept in the record, never hidden.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Bucket of this attempt.
    pub outcome: CallOutcome,
    /// HTTP status, when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Error text, when the attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the attempt in milliseconds.
    pub elapsed_ms: f64,
}
