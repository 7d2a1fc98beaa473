//! HTTP plumbing every API's client shares: how a client is built (no proxy on loopback,
//! `TCP_NODELAY`, no redirects), how a failed attempt is worded and bucketed, and a JSON `GET`/`POST`
//! with the shared retries that answers a [`WireError`].

use super::config::ClientConfig;
use super::error::WireError;
use super::outcome::{CallOutcome, Failure, classify_status};
use super::retry::{AttemptError, AttemptOk, with_retries};
use serde::de::DeserializeOwned;

/// The base URL of `config` without its trailing slash, and whether it names this machine.
pub fn base_url(config: &ClientConfig) -> Result<(String, bool), WireError> {
    let base = config.base_url.trim_end_matches('/').to_string();
    let url = reqwest::Url::parse(&base).map_err(|e| WireError::Host {
        value: config.base_url.clone(),
        reason: e.to_string(),
    })?;
    let host = url
        .host_str()
        .unwrap_or("")
        .trim_start_matches('[')
        .trim_end_matches(']');
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    Ok((base, loopback))
}

/// The reqwest builder of a client for `config`: connect timeout, `TCP_NODELAY`, no redirects,
/// and no proxy for a `loopback` server.
pub fn builder(config: &ClientConfig, loopback: bool) -> reqwest::ClientBuilder {
    let b = reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none());
    if loopback { b.no_proxy() } else { b }
}

/// A reqwest failure as a transport attempt error; a timeout names the timeouts in force.
pub fn transport(config: &ClientConfig, e: &reqwest::Error, status: Option<u16>) -> AttemptError {
    let message = if e.is_timeout() {
        format!(
            "timed out after {:.3} s, the request timeout in force (connect timeout {:.3} s): {}",
            config.request_timeout.as_secs_f64(),
            config.connect_timeout.as_secs_f64(),
            error_text(e)
        )
    } else {
        error_text(e)
    };
    AttemptError {
        failure: Failure::Transport,
        status,
        message,
    }
}

/// Fails the attempt when the status is not 2xx, keeping the server's error text.
pub fn check_status(status: u16, body: &[u8]) -> Result<(), AttemptError> {
    match classify_status(status) {
        None => Ok(()),
        Some(failure) => Err(AttemptError {
            failure,
            status: Some(status),
            message: error_message(body),
        }),
    }
}

/// The server's error text of an error body: Ollama's `{"error": "..."}`, OpenAI's
/// `{"error": {"message": "..."}}`; else the body itself (shortened).
pub fn error_message(body: &[u8]) -> String {
    let value: Option<serde_json::Value> = serde_json::from_slice(&super::depth::bound(body)).ok();
    match value.as_ref().and_then(|v| v.get("error")) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(e) => e
            .get("message")
            .and_then(|m| m.as_str())
            .map_or_else(|| e.to_string(), str::to_string),
        None => snippet(body),
    }
}

/// The first 200 characters of a body, for error texts.
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// An error with its whole source chain (a reqwest error's `Display` alone hides the cause).
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}

/// `GET url` (or `POST` of `body`) parsed as JSON, with the shared retries: a transport failure
/// after the last retry is [`WireError::Transport`], anything else [`WireError::Protocol`].
pub async fn get_json<T: DeserializeOwned>(
    http: &reqwest::Client,
    config: &ClientConfig,
    url: &str,
    body: Option<&serde_json::Value>,
) -> Result<T, WireError> {
    let r = with_retries(config.policy(), None, |_| {
        json_once::<T>(http, config, url, body)
    })
    .await;
    let last = r.attempts.last();
    let (status, message) = (
        last.and_then(|a| a.status),
        last.and_then(|a| a.error.clone()).unwrap_or_default(),
    );
    let url = url.to_string();
    match (r.body, r.outcome) {
        (Some(v), _) => Ok(v),
        (None, CallOutcome::Transport) => Err(WireError::Transport {
            url,
            status,
            message,
        }),
        (None, _) => Err(WireError::Protocol {
            url,
            status,
            message,
        }),
    }
}

async fn json_once<T: DeserializeOwned>(
    http: &reqwest::Client,
    config: &ClientConfig,
    url: &str,
    body: Option<&serde_json::Value>,
) -> Result<AttemptOk<T>, AttemptError> {
    let rb = match body {
        Some(b) => http.post(url).json(b),
        None => http.get(url),
    };
    let resp = rb.send().await.map_err(|e| transport(config, &e, None))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| transport(config, &e, Some(status)))?;
    check_status(status, &bytes)?;
    let body = serde_json::from_slice(&super::depth::bound(&bytes)).map_err(|e| AttemptError {
        failure: Failure::Malformed,
        status: Some(status),
        message: format!("body is not the expected JSON: {e}: {}", snippet(&bytes)),
    })?;
    Ok(AttemptOk {
        body,
        status,
        ttfb_s: 0.0,
        first_token_s: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_error_bodies_give_the_servers_text() {
        assert_eq!(error_message(br#"{"error":"boom"}"#), "boom");
        assert_eq!(
            error_message(br#"{"error":{"message":"no such model","code":404}}"#),
            "no such model"
        );
        assert_eq!(error_message(b"<html>"), "<html>");
    }
}
