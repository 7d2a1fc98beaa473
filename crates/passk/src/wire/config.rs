//! The settings every API's client is built with: where, how long to wait, how often to retry.

use super::retry::RetryPolicy;
use std::time::Duration;

/// Settings of a client of any API.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// Base URL from [`super::host::parse_host`], e.g. `http://127.0.0.1:11434`.
    pub base_url: String,
    /// Time allowed to open the TCP connection.
    pub connect_timeout: Duration,
    /// Time allowed for one whole attempt (headers and body).
    pub request_timeout: Duration,
    /// Retries after a transport failure or a malformed body (0: one attempt only).
    pub retries: u32,
    /// Wait before the first retry; doubled for each further retry (capped at 64x).
    pub backoff: Duration,
}

impl ClientConfig {
    /// Defaults for `base_url`: 5 s connect, 300 s request, 3 retries from 250 ms.
    pub fn new(base_url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(300),
            retries: 3,
            backoff: Duration::from_millis(250),
        }
    }

    /// The retry policy these settings give.
    pub fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            retries: self.retries,
            backoff: self.backoff,
        }
    }

    /// The wait before retry number `n` (0-based): `backoff * 2^min(n, 6)`.
    pub fn backoff_for(&self, n: u32) -> Duration {
        self.policy().backoff_for(n)
    }
}
