//! A streamed chat completion read from its server-sent events: content and reasoning
//! concatenated, each tool call assembled from its pieces by index, `usage` and llama.cpp's
//! `timings` from the chunk that carries them. A stream that ends before `[DONE]` (or before both
//! a finish reason and the usage chunk) was cut: transport, as a cut NDJSON stream is for Ollama.

use super::api::{ApiUsage, ChatCompletion, ChatMessage, Choice, LlamaTimings, ToolCall};
use crate::wire::http::snippet;
use crate::wire::outcome::Failure;
use std::time::Instant;

/// The events of one stream so far.
#[derive(Debug, Default)]
pub struct SseAccumulator {
    model: String,
    content: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Option<ApiUsage>,
    timings: Option<LlamaTimings>,
    done: bool,
    /// Seconds from sending to the first event carrying content, reasoning or a tool call.
    pub first_token_s: Option<f64>,
}

impl SseAccumulator {
    /// Reads one line of the stream (`data: {..}`, `data: [DONE]`, a comment, a blank line).
    pub fn line(&mut self, raw: &[u8], t0: Instant) -> Result<(), (Failure, String)> {
        let text = raw.trim_ascii();
        if text.is_empty() || text.starts_with(b":") {
            return Ok(());
        }
        let Some(data) = text
            .strip_prefix(b"data:")
            .or_else(|| text.strip_prefix(b"error:"))
            .map(<[u8]>::trim_ascii)
        else {
            // `event:`, `id:` and `retry:` fields carry nothing passk reads.
            return Ok(());
        };
        if self.done {
            return Err((
                Failure::Malformed,
                format!("event after [DONE]: {}", snippet(text)),
            ));
        }
        if data == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        let value: serde_json::Value = serde_json::from_slice(&crate::wire::depth::bound(data))
            .map_err(|e| {
                (
                    Failure::Malformed,
                    format!("stream event is not JSON: {e}: {}", snippet(data)),
                )
            })?;
        if let Some(err) = value.get("error") {
            let msg = err
                .get("message")
                .and_then(|m| m.as_str())
                .map_or_else(|| err.to_string(), str::to_string);
            return Err((Failure::Transport, format!("error event mid-stream: {msg}")));
        }
        let chunk: ChatCompletion = serde_json::from_value(value).map_err(|e| {
            (
                Failure::Malformed,
                format!("stream event is not a chat chunk: {e}: {}", snippet(data)),
            )
        })?;
        self.chunk(chunk, t0);
        Ok(())
    }

    fn chunk(&mut self, chunk: ChatCompletion, t0: Instant) {
        if !chunk.model.is_empty() {
            self.model = chunk.model;
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        if chunk.timings.is_some() {
            self.timings = chunk.timings;
        }
        for choice in chunk.choices {
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
            let Some(d) = choice.delta else { continue };
            let carries = d.content.as_ref().is_some_and(|c| !c.is_empty())
                || d.reasoning_content.as_ref().is_some_and(|c| !c.is_empty())
                || !d.tool_calls.is_empty();
            if carries && self.first_token_s.is_none() {
                self.first_token_s = Some(t0.elapsed().as_secs_f64());
            }
            self.content.push_str(d.content.as_deref().unwrap_or(""));
            self.reasoning
                .push_str(d.reasoning_content.as_deref().unwrap_or(""));
            for piece in d.tool_calls {
                self.tool_piece(piece);
            }
        }
    }

    /// Adds a piece of a tool call: a new index (or the first piece) starts a call; later
    /// pieces of the same index append to its arguments.
    fn tool_piece(&mut self, piece: ToolCall) {
        let index = piece.index.unwrap_or(self.tool_calls.len() as u32);
        let text = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        match self.tool_calls.iter_mut().find(|c| c.index == Some(index)) {
            Some(call) => {
                let mut args = text(&call.function.arguments);
                args.push_str(&text(&piece.function.arguments));
                call.function.arguments = serde_json::Value::String(args);
                if call.id.is_none() {
                    call.id = piece.id;
                }
                if call.function.name.is_none() {
                    call.function.name = piece.function.name;
                }
            }
            None => {
                let arguments = serde_json::Value::String(text(&piece.function.arguments));
                self.tool_calls.push(ToolCall {
                    index: Some(index),
                    function: super::api::FunctionCall {
                        arguments,
                        ..piece.function
                    },
                    ..piece
                });
            }
        }
    }

    /// The whole completion, or why the stream counts as cut.
    pub fn finish(self) -> Result<ChatCompletion, (Failure, String)> {
        let complete = self.done || (self.finish_reason.is_some() && self.usage.is_some());
        if !complete {
            return Err((
                Failure::Transport,
                "the stream ended before [DONE]".to_string(),
            ));
        }
        Ok(ChatCompletion {
            model: self.model,
            choices: vec![Choice {
                message: Some(ChatMessage {
                    role: "assistant".into(),
                    content: Some(self.content),
                    reasoning_content: Some(self.reasoning).filter(|r| !r.is_empty()),
                    tool_calls: self.tool_calls,
                    ..ChatMessage::default()
                }),
                delta: None,
                finish_reason: self.finish_reason,
            }],
            usage: self.usage,
            timings: self.timings,
        })
    }
}

impl crate::wire::http::StreamReader<ChatCompletion> for SseAccumulator {
    fn line(&mut self, raw: &[u8], t0: Instant) -> Result<(), (Failure, String)> {
        SseAccumulator::line(self, raw, t0)
    }

    fn first_token_s(&self) -> Option<f64> {
        self.first_token_s
    }

    fn finish(self) -> Result<ChatCompletion, (Failure, String)> {
        SseAccumulator::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> SseAccumulator {
        let t0 = Instant::now();
        let mut acc = SseAccumulator::default();
        for l in lines {
            assert!(acc.line(l.as_bytes(), t0).is_ok(), "{l}");
        }
        acc
    }

    #[test]
    fn pieces_of_calls_and_usage_in_the_last_chunk_make_one_completion() {
        let acc = feed(&[
            r#"data: {"model":"m","choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
            "",
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_order","arguments":"{\"order"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"_id\":\"A1\"}"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"content":"lo"},"finish_reason":"tool_calls"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9},"timings":{"prompt_n":30,"prompt_ms":12.0,"predicted_n":9,"predicted_ms":40.0,"cache_n":0}}"#,
            "data: [DONE]",
        ]);
        assert!(acc.first_token_s.is_some());
        let c = acc.finish().expect("complete");
        let m = c.choices[0].message.clone().expect("message");
        assert_eq!(m.content.as_deref(), Some("Hello"));
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(
            m.tool_calls[0].function.arguments,
            serde_json::json!(r#"{"order_id":"A1"}"#)
        );
        assert_eq!(m.tool_calls[0].function.name.as_deref(), Some("get_order"));
        assert_eq!(c.usage.and_then(|u| u.completion_tokens), Some(9));
        assert_eq!(c.timings.and_then(|t| t.predicted_ms), Some(40.0));
    }

    #[test]
    fn a_cut_stream_and_an_error_event_are_transport() {
        let cut = feed(&[r#"data: {"choices":[{"delta":{"content":"x"}}]}"#]);
        assert_eq!(cut.finish().err().map(|e| e.0), Some(Failure::Transport));
        let no_usage =
            feed(&[r#"data: {"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#]);
        assert_eq!(
            no_usage.finish().err().map(|e| e.0),
            Some(Failure::Transport)
        );
        let mut acc = SseAccumulator::default();
        let e = acc.line(
            br#"data: {"error":{"message":"slot gone"}}"#,
            Instant::now(),
        );
        assert_eq!(e.err().map(|e| e.0), Some(Failure::Transport));
        let mut acc = SseAccumulator::default();
        let e = acc.line(b"data: {not json", Instant::now());
        assert_eq!(e.err().map(|e| e.0), Some(Failure::Malformed));
    }
}
