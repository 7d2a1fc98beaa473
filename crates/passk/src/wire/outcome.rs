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

/// Why an attempt failed, as the retry loop sees it (metrics.md, "Outcomes of one model call").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// Connection refused/reset, timeout, HTTP 5xx/408/429, a stream cut or an error line: retried.
    Transport,
    /// A body that is not the expected JSON or carries no message: protocol, but retried like transport.
    Malformed,
    /// Any other 4xx (404 model not found, 400 does not support tools): protocol, never retried.
    Protocol,
}

impl Failure {
    /// The bucket an attempt that failed this way lands in.
    pub fn outcome(self) -> CallOutcome {
        match self {
            Failure::Transport => CallOutcome::Transport,
            Failure::Malformed | Failure::Protocol => CallOutcome::Protocol,
        }
    }

    /// Whether the call is tried again (bounded by the configured retry count).
    pub fn retryable(self) -> bool {
        !matches!(self, Failure::Protocol)
    }
}

/// The failure an HTTP status stands for; `None` for 2xx. A 503 is Ollama's queue-full answer
/// (`server busy, please try again.  maximum pending requests exceeded`): transport, so retried.
pub fn classify_status(status: u16) -> Option<Failure> {
    match status {
        200..=299 => None,
        408 | 429 | 500..=599 => Some(Failure::Transport),
        _ => Some(Failure::Protocol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_land_in_the_documented_buckets() {
        assert_eq!(classify_status(200), None);
        for s in [408, 429, 500, 502, 503] {
            assert_eq!(classify_status(s), Some(Failure::Transport), "{s}");
        }
        for s in [400, 401, 404, 413, 301] {
            assert_eq!(classify_status(s), Some(Failure::Protocol), "{s}");
        }
    }

    #[test]
    fn only_protocol_errors_are_final() {
        assert!(Failure::Transport.retryable());
        assert!(Failure::Malformed.retryable());
        assert!(!Failure::Protocol.retryable());
        assert_eq!(Failure::Malformed.outcome(), CallOutcome::Protocol);
        assert_eq!(Failure::Transport.outcome(), CallOutcome::Transport);
    }
}
