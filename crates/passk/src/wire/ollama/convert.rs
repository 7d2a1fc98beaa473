//! The neutral call to Ollama's `/api/chat` shapes and back: request and reply mapping, kept
//! apart from the HTTP client.

use super::api::{
    ChatMessage, ChatOptions, ChatRequest, ChatResponse, LocalModel, RunningModel, ShowResponse,
    Timings, ToolCall, ToolCallFunction,
};
use crate::wire::chat::{CallOptions, CallRequest, Message, NativeCall, Reply, Role, Usage};
use crate::wire::chat_api::{LoadedModel, ModelEntry, ServedModel};

/// The `/api/chat` body of a neutral request (options always inside `options`).
pub fn request(req: &CallRequest) -> ChatRequest {
    ChatRequest {
        model: req.model.clone(),
        messages: req.messages.iter().map(message).collect(),
        tools: req.tools.clone(),
        stream: req.stream,
        options: options(&req.options),
        keep_alive: req.keep_loaded_for.clone(),
        think: req.think,
        format: req.format.clone(),
    }
}

fn options(o: &CallOptions) -> ChatOptions {
    ChatOptions {
        temperature: o.temperature,
        seed: o.seed,
        num_ctx: o.context_window,
        num_predict: o.max_output_tokens,
        top_k: o.top_k,
        top_p: o.top_p,
        extra: o.extra.clone(),
    }
}

/// A neutral message in Ollama's shape.
pub fn message(m: &Message) -> ChatMessage {
    ChatMessage {
        role: m.role.as_str().to_string(),
        content: m.content.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                function: ToolCallFunction {
                    index: c.index,
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                },
            })
            .collect(),
        tool_name: m.tool_name.clone(),
        tool_call_id: m.tool_call_id.clone(),
        thinking: m.thinking.clone(),
    }
}

/// An Ollama message as a neutral one.
pub fn neutral_message(m: &ChatMessage) -> Message {
    Message {
        role: Role::parse(&m.role),
        content: m.content.clone(),
        thinking: m.thinking.clone(),
        tool_calls: m.tool_calls.iter().map(native_call).collect(),
        tool_name: m.tool_name.clone(),
        tool_call_id: m.tool_call_id.clone(),
    }
}

fn native_call(c: &ToolCall) -> NativeCall {
    NativeCall {
        id: c.id.clone(),
        index: c.function.index,
        name: c.function.name.clone(),
        arguments: c.function.arguments.clone(),
    }
}

/// Ollama's timing fields as neutral usage.
pub fn usage(t: &Timings) -> Usage {
    Usage {
        prompt_tokens: t.prompt_eval_count,
        cached_prompt_tokens: t.prompt_eval_cached_count,
        output_tokens: t.eval_count,
        total_ns: t.total_duration,
        load_ns: t.load_duration,
        prefill_ns: t.prompt_eval_duration,
        decode_ns: t.eval_duration,
    }
}

/// A response with a message as a neutral reply (`None` without one).
pub fn reply(r: &ChatResponse) -> Option<Reply> {
    Some(Reply {
        model: r.model.clone(),
        message: neutral_message(r.message.as_ref()?),
        usage: usage(&r.timings),
        done_reason: r.timings.done_reason.clone(),
    })
}

/// What `/api/show` says, as neutral model info (no digest: `/api/tags` has it). The context
/// length is the first `*.context_length` key of `model_info`.
pub fn model_info(show: &ShowResponse) -> ServedModel {
    let text = |s: &str| Some(s.to_string()).filter(|s| !s.is_empty());
    ServedModel {
        tools: Some(show.supports_tools()),
        capabilities: show.capabilities.clone(),
        context_length: show
            .model_info
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64()),
        digest: None,
        family: text(&show.details.family),
        parameter_size: text(&show.details.parameter_size),
        quantization: text(&show.details.quantization_level),
    }
}

/// One model of `/api/tags`.
pub fn model_entry(m: LocalModel) -> ModelEntry {
    ModelEntry {
        alias: Some(m.model).filter(|a| !a.is_empty() && *a != m.name),
        name: m.name,
        digest: Some(m.digest).filter(|d| !d.is_empty()),
        size: Some(m.size),
    }
}

/// One model of `/api/ps`.
pub fn loaded(m: RunningModel) -> LoadedModel {
    LoadedModel {
        alias: Some(m.model).filter(|a| !a.is_empty() && *a != m.name),
        name: m.name,
        digest: Some(m.digest).filter(|d| !d.is_empty()),
        size: m.size,
        size_vram: m.size_vram,
        context_length: m.context_length,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_survives_the_round_trip() {
        let m = Message {
            tool_calls: vec![NativeCall {
                id: Some("call_1".into()),
                index: Some(0),
                name: "get_order".into(),
                arguments: json!({"order_id": "A1"}),
            }],
            thinking: Some("hm".into()),
            ..Message::assistant("ok")
        };
        assert_eq!(neutral_message(&message(&m)), m);
        let t = Message::tool("get_order", Some("call_1".into()), "{}");
        assert_eq!(neutral_message(&message(&t)), t);
    }

    #[test]
    fn absent_timings_stay_absent() {
        let r: ChatResponse = serde_json::from_value(json!({
            "model": "m", "message": {"role": "assistant", "content": "hi"},
            "done": true, "eval_count": 3, "done_reason": "length"
        }))
        .expect("chunk");
        let reply = reply(&r).expect("reply");
        assert_eq!(reply.usage.output_tokens, Some(3));
        assert_eq!(reply.usage.prompt_tokens, None);
        assert!(reply.truncated());
    }
}
