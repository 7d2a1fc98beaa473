//! The client of an OpenAI-compatible server: `/v1/chat/completions` plain or streamed (SSE), with
//! the retries, buckets and HTTP plumbing every API shares; and the JSON endpoints the preflight
//! reads (`/v1/models`, llama.cpp's `/props`, version probes).

use super::api::{ChatCompletion, ChatRequest};
use super::sse::SseAccumulator;
use crate::wire::config::ClientConfig;
use crate::wire::error::WireError;
use crate::wire::http::{self, error_message, error_text, snippet};
use crate::wire::outcome::Failure;
use crate::wire::retry::{AttemptWatch, Retried, with_retries};
use serde::de::DeserializeOwned;

/// Client of one OpenAI-compatible server.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    config: ClientConfig,
}

impl Client {
    /// Builds the client (no request is made). The base URL is the server's root: `/v1` is added
    /// here, and a base URL that already ends in `/v1` is taken as the root before it.
    pub fn new(config: ClientConfig) -> Result<Client, WireError> {
        let (base, loopback) = http::base_url(&config)?;
        let base = base.strip_suffix("/v1").unwrap_or(&base).to_string();
        let http = http::builder(&config, loopback)
            .timeout(config.request_timeout)
            .build()
            .map_err(|e| WireError::Client(error_text(&e)))?;
        Ok(Client {
            http,
            config: ClientConfig {
                base_url: base,
                ..config
            },
        })
    }

    /// The settings in force.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base_url)
    }

    /// `GET path` as JSON.
    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, WireError> {
        http::get_json(&self.http, &self.config, &self.url(path), None).await
    }

    /// `GET path` as JSON, tried once: for probing what kind of server this is.
    pub async fn probe<T: DeserializeOwned>(&self, path: &str) -> Option<T> {
        self.probe_with(path, None).await
    }

    /// `POST body` to `path`, as JSON, tried once.
    pub async fn probe_post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Option<T> {
        self.probe_with(path, Some(body)).await
    }

    async fn probe_with<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Option<T> {
        let once = ClientConfig {
            retries: 0,
            ..self.config.clone()
        };
        http::get_json(&self.http, &once, &self.url(path), body)
            .await
            .ok()
    }

    /// One chat call, streamed when `req.stream`, with the shared retries.
    pub async fn chat_watched(
        &self,
        req: &ChatRequest,
        watch: Option<AttemptWatch<'_>>,
    ) -> Retried<ChatCompletion> {
        with_retries(self.config.policy(), watch, |t0| async move {
            let url = self.url("/v1/chat/completions");
            let sent = http::post_chat(&self.http, &self.config, &url, req, t0).await?;
            let reader = req.stream.then(SseAccumulator::default);
            http::chat_answer(&self.config, sent, t0, reader, parse_completion).await
        })
        .await
    }
}

/// Parses a non-streamed completion: one choice with a message must be there; an error body is
/// the server's trouble (transport, as Ollama's is).
fn parse_completion(bytes: &[u8]) -> Result<ChatCompletion, (Failure, String)> {
    let value: serde_json::Value = serde_json::from_slice(&crate::wire::depth::bound(bytes))
        .map_err(|e| {
            (
                Failure::Malformed,
                format!("body is not the expected JSON: {e}: {}", snippet(bytes)),
            )
        })?;
    if value.get("error").is_some() {
        return Err((
            Failure::Transport,
            format!("server error: {}", error_message(bytes)),
        ));
    }
    let body: ChatCompletion = serde_json::from_value(value).map_err(|e| {
        (
            Failure::Malformed,
            format!("body is not a chat completion: {e}: {}", snippet(bytes)),
        )
    })?;
    if body
        .choices
        .first()
        .and_then(|c| c.message.as_ref())
        .is_none()
    {
        return Err((
            Failure::Malformed,
            format!("completion without a message: {}", snippet(bytes)),
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_without_a_message_is_malformed_and_an_error_body_is_transport() {
        let kind = |b: &[u8]| parse_completion(b).err().map(|e| e.0);
        assert_eq!(
            kind(br#"{"model":"m","choices":[]}"#),
            Some(Failure::Malformed)
        );
        assert_eq!(kind(b"<html>"), Some(Failure::Malformed));
        assert_eq!(
            kind(br#"{"error":{"message":"boom","code":500}}"#),
            Some(Failure::Transport)
        );
        let ok = parse_completion(
            br#"{"model":"m","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#,
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn a_base_url_ending_in_v1_is_the_root_before_it() {
        let c = Client::new(ClientConfig::new("http://127.0.0.1:9/v1/")).expect("client");
        assert_eq!(c.url("/v1/models"), "http://127.0.0.1:9/v1/models");
    }
}
