//! The Ollama client: reqwest 0.12 with the project's own serde types, explicit connect and request
//! timeouts, and bounded exponential-backoff retries.
//!
//! Every chat call lands in one bucket (metrics.md): `ok`, `transport` (retried) or `protocol`
//! (retried only when the body was malformed). A call never returns an `Err`: the runner reads the
//! outcome and every [`Attempt`] from the [`ChatResult`]. The other endpoints return a `WireError`.
//! `pull` goes through ollama-rs (`pull_model_stream`); see docs/decisions.md for why chat does not.

use super::api::{
    ChatMessage, ChatRequest, ChatResponse, ErrorBody, PsResponse, PullProgress, ShowRequest,
    ShowResponse, TagsResponse, VersionResponse,
};
pub use crate::wire::config::ClientConfig;
pub use crate::wire::error::WireError;
use crate::wire::http::{self, error_message, error_text, snippet};
use crate::wire::outcome::{Attempt, CallOutcome, Failure};
pub use crate::wire::retry::AttemptWatch;
use crate::wire::retry::with_retries;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use std::time::Instant;

/// Everything known about one chat call, successful or not.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResult {
    /// The response of the successful attempt.
    pub response: Option<ChatResponse>,
    /// Bucket of the call: the last attempt's.
    pub outcome: CallOutcome,
    /// Every attempt, in order, failed ones included.
    pub attempts: Vec<Attempt>,
    /// Client wall time of the final attempt, seconds.
    pub wall_s: f64,
    /// Time from sending to the response headers of the final attempt, seconds.
    pub ttfb_s: Option<f64>,
    /// Start of the final attempt, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

impl ChatResult {
    /// The last attempt's HTTP status, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        self.attempts.last().and_then(|a| a.status)
    }

    /// The last attempt's error text, when it failed.
    pub fn error(&self) -> Option<&str> {
        self.attempts.last().and_then(|a| a.error.as_deref())
    }
}

/// A streamed chat call: the result plus the time to the first content or tool-call chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedChat {
    /// The call as for a non-streamed one (`ttfb_s` = response headers).
    pub result: ChatResult,
    /// Seconds from sending to the first chunk carrying content, thinking or a tool call.
    pub first_token_s: Option<f64>,
}

/// Client of Ollama's native API (or the stub).
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    pull_http: reqwest::Client,
    config: ClientConfig,
}

impl Client {
    /// Builds the client (no request is made).
    pub fn new(config: ClientConfig) -> Result<Client, WireError> {
        let (base, loopback) = http::base_url(&config)?;
        let builder = || http::builder(&config, loopback);
        let http = builder()
            .timeout(config.request_timeout)
            .build()
            .map_err(|e| WireError::Client(error_text(&e)))?;
        // A pull may take hours: bound each read, not the whole transfer.
        let pull_http = builder()
            .read_timeout(config.request_timeout)
            .build()
            .map_err(|e| WireError::Client(error_text(&e)))?;
        Ok(Client {
            http,
            pull_http,
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base_url)
    }

    /// One chat call (`req.stream` picks the streamed path), with retries. Never an `Err`.
    pub async fn chat(&self, req: &ChatRequest) -> ChatResult {
        self.chat_watched(req, None).await.result
    }

    /// One streamed chat call with retries; also reports the time to the first token.
    pub async fn chat_stream(&self, req: &ChatRequest) -> StreamedChat {
        if req.stream {
            self.chat_with(req, true, None).await
        } else {
            let streamed = ChatRequest {
                stream: true,
                ..req.clone()
            };
            self.chat_with(&streamed, true, None).await
        }
    }

    /// One chat call, streamed when `req.stream`, with retries; `watch` hears of each failed
    /// attempt as it fails, with whether another attempt follows.
    pub async fn chat_watched(
        &self,
        req: &ChatRequest,
        watch: Option<AttemptWatch<'_>>,
    ) -> StreamedChat {
        self.chat_with(req, req.stream, watch).await
    }

    async fn chat_with(
        &self,
        req: &ChatRequest,
        stream: bool,
        watch: Option<AttemptWatch<'_>>,
    ) -> StreamedChat {
        let r = with_retries(self.config.policy(), watch, |t0| async move {
            let url = self.url("/api/chat");
            let sent = http::post_chat(&self.http, &self.config, &url, req, t0).await?;
            let reader = stream.then(StreamAccumulator::default);
            http::chat_answer(&self.config, sent, t0, reader, parse_chat).await
        })
        .await;
        StreamedChat {
            result: ChatResult {
                response: r.body,
                outcome: r.outcome,
                attempts: r.attempts,
                wall_s: r.wall_s,
                ttfb_s: r.ttfb_s,
                started_unix_ms: r.started_unix_ms,
            },
            first_token_s: r.first_token_s,
        }
    }

    async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<T, WireError> {
        http::get_json(&self.http, &self.config, &self.url(path), body).await
    }

    /// `GET /api/version`.
    pub async fn version(&self) -> Result<VersionResponse, WireError> {
        self.get_json("/api/version", None).await
    }

    /// The suites passk's stub loaded (`GET /api/passk/suites`, the stub's own route); `None`
    /// from any other server (a real Ollama answers 404).
    pub async fn stub_suites(&self) -> Option<crate::wire::chat_api::StubCatalog> {
        self.get_json("/api/passk/suites", None).await.ok()
    }

    /// `POST /api/show` for one model (404 when the model is not there).
    pub async fn show(&self, model: &str) -> Result<ShowResponse, WireError> {
        let req = ShowRequest {
            model: model.to_string(),
            ..ShowRequest::default()
        };
        let body = serde_json::to_value(&req).map_err(|e| WireError::Client(e.to_string()))?;
        self.get_json("/api/show", Some(&body)).await
    }

    /// `GET /api/ps`: loaded models, with `size_vram` and the effective context length.
    pub async fn ps(&self) -> Result<PsResponse, WireError> {
        self.get_json("/api/ps", None).await
    }

    /// `GET /api/tags`: locally available models.
    pub async fn tags(&self) -> Result<TagsResponse, WireError> {
        self.get_json("/api/tags", None).await
    }

    /// `POST /api/pull`, streamed through ollama-rs; `progress` sees every status line.
    /// Succeeds only when the server reports `success`.
    pub async fn pull(
        &self,
        model: &str,
        mut progress: impl FnMut(&PullProgress),
    ) -> Result<(), WireError> {
        let url_text = self.url("/api/pull");
        let proto = |message: String| WireError::Protocol {
            url: url_text.clone(),
            status: None,
            message,
        };
        let transport = |message: String| WireError::Transport {
            url: url_text.clone(),
            status: None,
            message,
        };
        let base = reqwest::Url::parse(&format!("{}/", self.config.base_url))
            .map_err(|e| proto(e.to_string()))?;
        let ollama = ollama_rs::Ollama::builder()
            .url(base)
            .reqwest_client(self.pull_http.clone())
            .build();
        let mut stream = ollama
            .pull_model_stream(model.to_string(), false)
            .await
            .map_err(|e| match e {
                ollama_rs::error::OllamaError::ReqwestError(e) => transport(error_text(&e)),
                ollama_rs::error::OllamaError::Other(body) => proto(error_message(body.as_bytes())),
                other => proto(other.to_string()),
            })?;
        let mut success = false;
        while let Some(item) = stream.next().await {
            let status = item.map_err(|e| match e {
                ollama_rs::error::OllamaError::InternalError(e) => proto(e.message),
                ollama_rs::error::OllamaError::JsonError(e) => {
                    proto(format!("progress line is not JSON: {e}"))
                }
                other => transport(other.to_string()),
            })?;
            let p = PullProgress {
                status: status.message,
                digest: status.digest,
                total: status.total,
                completed: status.completed,
            };
            success |= p.status == "success";
            progress(&p);
        }
        if success {
            Ok(())
        } else {
            Err(transport("the stream ended before \"success\"".to_string()))
        }
    }
}

/// Parses a non-streamed chat body: a message must be there.
fn parse_chat(bytes: &[u8]) -> Result<ChatResponse, (Failure, String)> {
    let body: ChatResponse =
        serde_json::from_slice(&crate::wire::depth::bound(bytes)).map_err(|e| {
            (
                Failure::Malformed,
                format!("body is not the expected JSON: {e}: {}", snippet(bytes)),
            )
        })?;
    if body.message.is_none() {
        if let Ok(err) = serde_json::from_slice::<ErrorBody>(bytes) {
            return Err((Failure::Transport, format!("server error: {}", err.error)));
        }
        return Err((
            Failure::Malformed,
            format!("response without a message: {}", snippet(bytes)),
        ));
    }
    Ok(body)
}

/// Builds one response out of NDJSON chunks: content and thinking concatenated, tool calls from
/// every chunk, timings from the final one.
#[derive(Default)]
struct StreamAccumulator {
    content: String,
    thinking: String,
    role: String,
    tool_calls: Vec<super::api::ToolCall>,
    last: Option<ChatResponse>,
    first_token_s: Option<f64>,
}

impl StreamAccumulator {
    fn line(&mut self, raw: &[u8], t0: Instant) -> Result<(), (Failure, String)> {
        let text = raw.trim_ascii();
        if text.is_empty() {
            return Ok(());
        }
        if self.last.as_ref().is_some_and(|l| l.done) {
            return Err((
                Failure::Malformed,
                format!("line after the final chunk: {}", snippet(text)),
            ));
        }
        let value: serde_json::Value = serde_json::from_slice(&crate::wire::depth::bound(text))
            .map_err(|e| {
                (
                    Failure::Malformed,
                    format!("stream line is not JSON: {e}: {}", snippet(text)),
                )
            })?;
        if let Some(err) = value.get("error") {
            let msg = err
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err((Failure::Transport, format!("error line mid-stream: {msg}")));
        }
        let chunk: ChatResponse = serde_json::from_value(value).map_err(|e| {
            (
                Failure::Malformed,
                format!("stream line is not a chat chunk: {e}: {}", snippet(text)),
            )
        })?;
        if let Some(m) = &chunk.message {
            let carries = !m.content.is_empty()
                || !m.tool_calls.is_empty()
                || m.thinking.as_ref().is_some_and(|t| !t.is_empty());
            if carries && self.first_token_s.is_none() {
                self.first_token_s = Some(t0.elapsed().as_secs_f64());
            }
            self.content.push_str(&m.content);
            if let Some(t) = &m.thinking {
                self.thinking.push_str(t);
            }
            if !m.role.is_empty() {
                self.role.clone_from(&m.role);
            }
            self.tool_calls.extend(m.tool_calls.iter().cloned());
        }
        self.last = Some(chunk);
        Ok(())
    }

    fn finish(self) -> Result<ChatResponse, (Failure, String)> {
        match self.last {
            Some(last) if last.done => Ok(ChatResponse {
                message: Some(ChatMessage {
                    role: if self.role.is_empty() {
                        "assistant".to_string()
                    } else {
                        self.role
                    },
                    content: self.content,
                    tool_calls: self.tool_calls,
                    thinking: (!self.thinking.is_empty()).then_some(self.thinking),
                    ..ChatMessage::default()
                }),
                ..last
            }),
            _ => Err((
                Failure::Transport,
                "the stream ended before the final chunk".to_string(),
            )),
        }
    }
}

impl crate::wire::http::StreamReader<ChatResponse> for StreamAccumulator {
    fn line(&mut self, raw: &[u8], t0: Instant) -> Result<(), (Failure, String)> {
        StreamAccumulator::line(self, raw, t0)
    }

    fn first_token_s(&self) -> Option<f64> {
        self.first_token_s
    }

    fn finish(self) -> Result<ChatResponse, (Failure, String)> {
        StreamAccumulator::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_without_message_is_malformed_and_an_error_body_is_transport() {
        assert_eq!(
            parse_chat(br#"{"model":"m","done":true}"#)
                .map_err(|e| e.0)
                .err(),
            Some(Failure::Malformed)
        );
        assert_eq!(
            parse_chat(br#"{"error":"boom"}"#).map_err(|e| e.0).err(),
            Some(Failure::Transport)
        );
        assert_eq!(
            parse_chat(b"<html>").map_err(|e| e.0).err(),
            Some(Failure::Malformed)
        );
        let ok = parse_chat(br#"{"model":"m","message":{"role":"assistant","content":"hi"},"done":true,"eval_count":3}"#);
        assert_eq!(ok.ok().and_then(|r| r.timings.eval_count), Some(3));
    }

    #[test]
    fn stream_chunks_accumulate() {
        let t0 = Instant::now();
        let mut acc = StreamAccumulator::default();
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"f","arguments":{}}}]},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"lo"},"done":true,"done_reason":"stop","eval_count":2}"#,
        ];
        for l in lines {
            assert!(acc.line(l.as_bytes(), t0).is_ok());
        }
        assert!(acc.first_token_s.is_some());
        let r = acc
            .finish()
            .ok()
            .and_then(|r| r.message.map(|m| (m.content, m.tool_calls.len())));
        assert_eq!(r, Some(("Hello".to_string(), 1)));
    }

    #[test]
    fn a_cut_stream_is_transport() {
        let mut acc = StreamAccumulator::default();
        assert!(
            acc.line(
                br#"{"message":{"role":"assistant","content":"x"},"done":false}"#,
                Instant::now()
            )
            .is_ok()
        );
        assert_eq!(acc.finish().err().map(|e| e.0), Some(Failure::Transport));
    }
}
