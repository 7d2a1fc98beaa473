//! Errors of the wire stage: a bad `OLLAMA_HOST`, a dead socket, or a server that does not answer
//! as Ollama does. A model misbehaving is never one of these (it is a recorded outcome).

use thiserror::Error;

/// What went wrong talking to Ollama (or the stub).
#[derive(Debug, Error)]
pub enum WireError {
    /// The host value cannot be turned into a base URL.
    #[error("invalid OLLAMA_HOST value {value:?}: {reason}")]
    Host {
        /// The value as given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// Connection refused/reset, timeout, HTTP 5xx/408/429, a stream cut or an error line mid-stream.
    #[error("transport error on {url}{}: {message}", status_suffix(*.status))]
    Transport {
        /// URL requested.
        url: String,
        /// HTTP status, when one arrived.
        status: Option<u16>,
        /// What happened.
        message: String,
    },
    /// The server answered, but not as Ollama answers (4xx, a body that is not the expected JSON).
    #[error("protocol error on {url}{}: {message}", status_suffix(*.status))]
    Protocol {
        /// URL requested.
        url: String,
        /// HTTP status, when one arrived.
        status: Option<u16>,
        /// The server's error text, or what did not parse.
        message: String,
    },
}

fn status_suffix(status: Option<u16>) -> String {
    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
}

impl WireError {
    /// The HTTP status carried by the error, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        match self {
            WireError::Transport { status, .. } | WireError::Protocol { status, .. } => *status,
            _ => None,
        }
    }
}
