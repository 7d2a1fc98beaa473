//! HTTP plumbing every API's client shares: how a client is built (no proxy on loopback,
//! `TCP_NODELAY`, no redirects), how a failed attempt is worded and bucketed, and a JSON `GET`/`POST`
//! with the shared retries that answers a [`WireError`].

use super::config::ClientConfig;
use super::error::WireError;
use super::outcome::{CallOutcome, Failure, classify_status};
use super::retry::{AttemptError, AttemptOk, with_retries};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use std::time::Instant;

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

/// Turns a reader's `(failure, message)` into the failure of an attempt answered with `status`.
pub fn failed(status: u16) -> impl Fn((Failure, String)) -> AttemptError {
    move |(failure, message)| AttemptError {
        failure,
        status: Some(status),
        message,
    }
}

/// Reads a whole response answered with `status` and parses it: a non-2xx status fails with the
/// server's text, a cut body is transport.
pub async fn read_body<T>(
    config: &ClientConfig,
    resp: reqwest::Response,
    status: u16,
    parse: impl FnOnce(&[u8]) -> Result<T, (Failure, String)>,
) -> Result<T, AttemptError> {
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| transport(config, &e, Some(status)))?;
    check_status(status, &bytes)?;
    parse(&bytes).map_err(failed(status))
}

/// Feeds each line of a streamed response answered with `status` to `line`, the last one also
/// without its newline: a non-2xx status fails with the server's text, a cut connection is
/// transport.
pub async fn read_lines(
    config: &ClientConfig,
    resp: reqwest::Response,
    status: u16,
    mut line: impl FnMut(&[u8]) -> Result<(), (Failure, String)>,
) -> Result<(), AttemptError> {
    if classify_status(status).is_some() {
        return read_body(config, resp, status, |_| Ok(())).await;
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| transport(config, &e, Some(status)))?;
        buf.extend_from_slice(&chunk);
        while let Some(i) = buf.iter().position(|&b| b == b'\n') {
            let one: Vec<u8> = buf.drain(..=i).collect();
            line(&one).map_err(failed(status))?;
        }
    }
    if !buf.is_empty() {
        line(&buf).map_err(failed(status))?;
    }
    Ok(())
}

/// Sends one chat request `body` to `url`; returns the response, the seconds from `t0` to its
/// headers, and its status.
pub async fn post_chat(
    http: &reqwest::Client,
    config: &ClientConfig,
    url: &str,
    body: &impl serde::Serialize,
    t0: Instant,
) -> Result<(reqwest::Response, f64, u16), AttemptError> {
    let resp = http
        .post(url)
        .json(body)
        .send()
        .await
        .map_err(|e| transport(config, &e, None))?;
    let status = resp.status().as_u16();
    Ok((resp, t0.elapsed().as_secs_f64(), status))
}

/// A streamed body read line by line into one answer.
pub trait StreamReader<T> {
    /// Reads one line; `t0` is when the attempt was sent.
    fn line(&mut self, raw: &[u8], t0: Instant) -> Result<(), (Failure, String)>;
    /// Seconds from sending to the first line carrying content, reasoning or a tool call.
    fn first_token_s(&self) -> Option<f64>;
    /// The whole answer, or why the stream counts as cut or malformed.
    fn finish(self) -> Result<T, (Failure, String)>;
}

/// The answer of one attempt of a chat call whose response arrived after `ttfb_s` with
/// `status`: streamed into `reader` when given, else the whole body parsed by `parse`.
pub async fn chat_answer<T>(
    config: &ClientConfig,
    (resp, ttfb_s, status): (reqwest::Response, f64, u16),
    t0: Instant,
    reader: Option<impl StreamReader<T>>,
    parse: impl FnOnce(&[u8]) -> Result<T, (Failure, String)>,
) -> Result<AttemptOk<T>, AttemptError> {
    let (body, first_token_s) = match reader {
        Some(mut reader) => {
            read_lines(config, resp, status, |line| reader.line(line, t0)).await?;
            let first = reader.first_token_s();
            (reader.finish().map_err(failed(status))?, first)
        }
        None => (read_body(config, resp, status, parse).await?, None),
    };
    Ok(AttemptOk {
        body,
        status,
        ttfb_s,
        first_token_s,
    })
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
    let body = read_body(config, resp, status, |bytes| {
        serde_json::from_slice(&super::depth::bound(bytes)).map_err(|e| {
            (
                Failure::Malformed,
                format!("body is not the expected JSON: {e}: {}", snippet(bytes)),
            )
        })
    })
    .await?;
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
