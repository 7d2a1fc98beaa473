//! The neutral call to `/v1/chat/completions` and back. Tool-call arguments travel as JSON text;
//! a reply's arguments are kept as the server sent them (a string), so that passk's tool-call
//! reading decodes them as it decodes any string arguments.

use super::api::{
    ApiUsage, ChatCompletion, ChatMessage, ChatRequest, FunctionCall, LlamaTimings, StreamOptions,
    ToolCall,
};
use crate::wire::chat::{CallRequest, Message, NativeCall, Reply, Role, Usage};
use serde_json::{Value, json};

/// The body of a neutral request. `num_ctx` and `keep_alive` are not sent: the server fixed its
/// context and keeps its model loaded; `num_predict` below 0 (unbounded) sends no cap.
pub fn request(req: &CallRequest) -> ChatRequest {
    let o = &req.options;
    ChatRequest {
        model: req.model.clone(),
        messages: req.messages.iter().map(message).collect(),
        tools: req.tools.clone(),
        stream: req.stream,
        stream_options: req.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        temperature: o.temperature,
        seed: o.seed,
        max_tokens: o.max_output_tokens.and_then(|n| u64::try_from(n).ok()),
        top_p: o.top_p,
        top_k: o.top_k,
        chat_template_kwargs: req.think.map(|t| json!({ "enable_thinking": t })),
        response_format: req.format.as_ref().map(|schema| {
            json!({"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}})
        }),
        extra: o.extra.clone(),
    }
}

/// A neutral message in the API's shape.
pub fn message(m: &Message) -> ChatMessage {
    ChatMessage {
        role: m.role.as_str().to_string(),
        content: Some(m.content.clone()),
        reasoning_content: m.thinking.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                index: None,
                id: c.id.clone(),
                kind: Some("function".into()),
                function: FunctionCall {
                    name: Some(c.name.clone()),
                    arguments: Value::String(arguments_text(&c.arguments)),
                },
            })
            .collect(),
        tool_call_id: m.tool_call_id.clone(),
        name: m.tool_name.clone().filter(|_| m.role == Role::Tool),
    }
}

/// The arguments of a call going back into the history, as JSON text of an object. Arguments that
/// are no object (text that is not JSON, a call cut at the output cap, a list) go back as `{}`:
/// servers that render the history parse the text (llama.cpp answers anything else with an
/// error), and the tool result that follows already tells the model what was wrong.
pub fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Object(_) => arguments.to_string(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(_)) => s.clone(),
            _ => "{}".to_string(),
        },
        _ => "{}".to_string(),
    }
}

/// An API message as a neutral one; a call's arguments stay as sent.
pub fn neutral_message(m: &ChatMessage) -> Message {
    Message {
        role: Role::parse(&m.role),
        content: m.content.clone().unwrap_or_default(),
        thinking: m.reasoning_content.clone().filter(|t| !t.is_empty()),
        tool_calls: m
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| NativeCall {
                id: c.id.clone(),
                index: c.index.or(u32::try_from(i).ok()),
                name: c.function.name.clone().unwrap_or_default(),
                arguments: c.function.arguments.clone(),
            })
            .collect(),
        tool_name: m.name.clone(),
        tool_call_id: m.tool_call_id.clone(),
    }
}

/// Token counts and durations from `usage` and, where llama.cpp gives them, its `timings`.
/// Durations come only from `timings`: a server that gives `usage` alone has none (absent,
/// never 0). Prompt tokens include the cached ones, which are also kept apart.
pub fn usage(u: Option<&ApiUsage>, t: Option<&LlamaTimings>) -> Usage {
    let ns = |ms: Option<f64>| {
        ms.filter(|m| m.is_finite() && *m >= 0.0)
            .map(|m| (m * 1e6).round() as u64)
    };
    let from_timings = t.and_then(|t| Some(t.prompt_n? + t.cache_n.unwrap_or(0)));
    Usage {
        prompt_tokens: u.and_then(|u| u.prompt_tokens).or(from_timings),
        cached_prompt_tokens: t.and_then(|t| t.cache_n).or_else(|| {
            u.and_then(|u| u.prompt_tokens_details.as_ref())
                .and_then(|d| d.cached_tokens)
        }),
        output_tokens: u
            .and_then(|u| u.completion_tokens)
            .or_else(|| t.and_then(|t| t.predicted_n)),
        total_ns: None,
        load_ns: None,
        prefill_ns: ns(t.and_then(|t| t.prompt_ms)),
        decode_ns: ns(t.and_then(|t| t.predicted_ms)),
    }
}

/// A completion with a message as a neutral reply (`None` without one).
pub fn reply(c: &ChatCompletion) -> Option<Reply> {
    let choice = c.choices.first()?;
    Some(Reply {
        model: c.model.clone(),
        message: neutral_message(choice.message.as_ref()?),
        usage: usage(c.usage.as_ref(), c.timings.as_ref()),
        done_reason: choice.finish_reason.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::chat::CallOptions;

    #[test]
    fn a_request_sends_what_the_api_reads() {
        let req = CallRequest {
            model: "m".into(),
            messages: vec![
                Message {
                    tool_calls: vec![NativeCall {
                        id: Some("call_1".into()),
                        index: Some(0),
                        name: "get_order".into(),
                        arguments: json!({"order_id": "A1"}),
                    }],
                    ..Message::assistant("")
                },
                Message::tool("get_order", Some("call_1".into()), "{}"),
            ],
            options: CallOptions {
                context_window: Some(8192),
                max_output_tokens: Some(-1),
                seed: Some(7),
                ..CallOptions::default()
            },
            stream: true,
            keep_loaded_for: Some("15m".into()),
            ..CallRequest::default()
        };
        let body = serde_json::to_value(request(&req)).expect("body");
        assert!(body.get("response_format").is_none());
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["seed"], 7);
        assert!(body.get("max_tokens").is_none() && body.get("num_ctx").is_none());
        assert!(body.get("keep_alive").is_none());
        let call = &body["messages"][0]["tool_calls"][0];
        assert_eq!(call["function"]["arguments"], r#"{"order_id":"A1"}"#);
        assert_eq!(call["type"], "function");
        let result = &body["messages"][1];
        assert_eq!(
            (&result["role"], &result["tool_call_id"]),
            (&json!("tool"), &json!("call_1"))
        );
    }

    #[test]
    fn a_reply_schema_goes_as_a_json_schema_response_format() {
        let schema = json!({"type": "object", "properties": {"name": {"const": "f"}}});
        let req = CallRequest {
            format: Some(schema.clone()),
            ..CallRequest::default()
        };
        let body = serde_json::to_value(request(&req)).expect("body");
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["schema"], schema);
        let native = crate::wire::ollama::convert::request(&req);
        assert_eq!(native.format, Some(schema));
    }

    #[test]
    fn arguments_that_are_no_object_go_back_as_an_empty_object() {
        assert_eq!(arguments_text(&json!(r#"{"a":1}"#)), r#"{"a":1}"#);
        assert_eq!(arguments_text(&json!({"a": 1})), r#"{"a":1}"#);
        for bad in [
            json!(r#"{"a":"#),
            json!("order A1"),
            json!([1]),
            json!(r#"[1]"#),
            json!(3),
        ] {
            assert_eq!(arguments_text(&bad), "{}", "{bad}");
        }
    }

    #[test]
    fn llama_timings_map_onto_usage_and_usage_alone_has_no_durations() {
        let c: ChatCompletion = serde_json::from_value(json!({
            "model": "m",
            "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
                "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": "{\"x\":1}"}}]}}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 12,
                "prompt_tokens_details": {"cached_tokens": 250}},
            "timings": {"cache_n": 250, "prompt_n": 50, "prompt_ms": 480.5,
                "predicted_n": 12, "predicted_ms": 210.0}
        }))
        .expect("completion");
        let r = reply(&c).expect("reply");
        assert_eq!(r.usage.prompt_tokens, Some(300));
        assert_eq!(r.usage.cached_prompt_tokens, Some(250));
        assert_eq!(r.usage.prefill_ns, Some(480_500_000));
        assert_eq!(r.usage.decode_ns, Some(210_000_000));
        assert_eq!(r.message.tool_calls[0].arguments, json!("{\"x\":1}"));
        assert_eq!(r.message.content, "");
        let vllm = usage(
            Some(&ApiUsage {
                prompt_tokens: Some(9),
                completion_tokens: Some(2),
                prompt_tokens_details: None,
            }),
            None,
        );
        assert_eq!((vllm.prompt_tokens, vllm.output_tokens), (Some(9), Some(2)));
        assert_eq!(
            (vllm.prefill_ns, vllm.decode_ns, vllm.total_ns),
            (None, None, None)
        );
        assert_eq!(vllm.cached_prompt_tokens, None);
    }
}
