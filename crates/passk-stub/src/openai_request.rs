//! A `/v1/chat/completions` body read as Ollama's OpenAI layer reads it (`openai/openai.go`
//! `FromChatRequest`, `middleware/openai.go` `ChatMiddleware`): the native `/api/chat` body it
//! stands for, or the 400 text Ollama answers. The native body then goes through the stub's own
//! judge, scheduler, model and faults, as Ollama hands it to `ChatHandler`.

use super::go_base64;
use serde_json::{Map, Value, json};

/// What the OpenAI layer keeps for the answer besides the native body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Translated {
    /// The `/api/chat` body.
    pub native: Value,
    /// Whether the answer is a server-sent event stream.
    pub stream: bool,
    /// `stream_options.include_usage`: a last chunk with `usage` and no choices.
    pub include_usage: bool,
}

/// Fields `ChatCompletionRequest` types, and the Go type their value must decode into.
const TYPED: [(&str, &str); 10] = [
    ("model", "string"),
    ("stream", "bool"),
    ("max_tokens", "int"),
    ("seed", "int"),
    ("temperature", "float64"),
    ("frequency_penalty", "float64"),
    ("presence_penalty", "float64"),
    ("top_p", "float64"),
    ("logprobs", "bool"),
    ("top_logprobs", "int"),
];

/// The native body for an OpenAI chat request, or Ollama's 400 text.
pub(crate) fn from_chat_request(body: &[u8]) -> Result<Translated, String> {
    if body.trim_ascii().is_empty() {
        return Err("EOF".to_string());
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let Value::Object(req) = value else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type openai.ChatCompletionRequest",
            go_kind(&value)
        ));
    };
    for (key, kind) in TYPED {
        if let Some(v) = req.get(key).filter(|v| !v.is_null() && !fits(v, kind)) {
            return Err(unmarshal_error(v, key, kind));
        }
    }
    let messages = match req.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() => m,
        None | Some(Value::Null) | Some(Value::Array(_)) => {
            return Err("[] is too short - 'messages'".to_string());
        }
        Some(other) => return Err(unmarshal_error(other, "messages", "[]openai.Message")),
    };
    let mut native = Map::new();
    native.insert(
        "model".into(),
        req.get("model").cloned().unwrap_or(json!("")),
    );
    native.insert("messages".into(), Value::Array(messages_of(messages)?));
    native.insert("options".into(), Value::Object(options(&req)));
    let stream = req.get("stream").and_then(Value::as_bool).unwrap_or(false);
    native.insert("stream".into(), json!(stream));
    if let Some(tools) = req.get("tools").filter(|t| !t.is_null()) {
        native.insert("tools".into(), tools.clone());
    }
    if let Some(format) = response_format(req.get("response_format")) {
        native.insert("format".into(), format);
    }
    if let Some(think) = think(&req)? {
        native.insert("think".into(), think);
    }
    if req.get("logprobs").and_then(Value::as_bool) == Some(true) {
        native.insert("logprobs".into(), json!(true));
    }
    if let Some(n) = req.get("top_logprobs").filter(|n| !n.is_null()) {
        native.insert("top_logprobs".into(), n.clone());
    }
    let include_usage = req
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Translated {
        native: Value::Object(native),
        stream,
        include_usage,
    })
}

/// Whether `v` decodes into Go type `kind`.
fn fits(v: &Value, kind: &str) -> bool {
    match kind {
        "string" => v.is_string(),
        "bool" => v.is_boolean(),
        "int" => v.is_i64() || v.is_u64(),
        _ => v.is_number(),
    }
}

/// Go's `UnmarshalTypeError` text for a field of `ChatCompletionRequest`.
fn unmarshal_error(v: &Value, field: &str, kind: &str) -> String {
    let what = match v {
        Value::Number(n) => format!("number {n}"),
        other => go_kind(other).to_string(),
    };
    format!(
        "json: cannot unmarshal {what} into Go struct field ChatCompletionRequest.{field} of type {kind}"
    )
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%T` of a decoded `any`.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The native messages: a string content gives one message, an array of parts one message per
/// part (tool calls on the last), no content is allowed only beside tool calls.
fn messages_of(messages: &[Value]) -> Result<Vec<Value>, String> {
    let mut out: Vec<Value> = Vec::new();
    for msg in messages {
        let role = msg.get("role").and_then(Value::as_str).unwrap_or("");
        let calls = msg.get("tool_calls").filter(|c| !c.is_null());
        let mut base = Map::new();
        base.insert("role".into(), json!(role));
        if let Some(r) = msg.get("reasoning").and_then(Value::as_str) {
            base.insert("thinking".into(), json!(r));
        }
        if let Some(calls) = calls {
            base.insert("tool_calls".into(), Value::Array(native_calls(calls)?));
        }
        if role.eq_ignore_ascii_case("tool")
            && let Some(name) = tool_name(msg, messages)
        {
            base.insert("tool_name".into(), json!(name));
        }
        if let Some(id) = msg.get("tool_call_id").and_then(Value::as_str) {
            base.insert("tool_call_id".into(), json!(id));
        }
        match msg.get("content").unwrap_or(&Value::Null) {
            Value::String(text) => {
                base.insert("content".into(), json!(text));
                out.push(Value::Object(base));
            }
            Value::Array(parts) => {
                let first = out.len();
                for part in parts {
                    out.push(content_part(role, part)?);
                }
                let added = out.len() > first;
                if let (Some(last), true) = (out.last_mut(), added && calls.is_some()) {
                    for (k, v) in base.into_iter().filter(|(k, _)| k != "role") {
                        last[k] = v;
                    }
                }
            }
            Value::Null if calls.is_some() => out.push(Value::Object(base)),
            other => {
                return Err(format!("invalid message content type: {}", go_type(other)));
            }
        }
    }
    Ok(out)
}

/// A tool message's tool: its `name`, else the name of the call its `tool_call_id` answers (the
/// last such call wins).
fn tool_name(msg: &Value, messages: &[Value]) -> Option<String> {
    if let Some(name) = msg
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Some(name.to_string());
    }
    let id = msg.get("tool_call_id").and_then(Value::as_str)?;
    messages.iter().rev().find_map(|m| {
        let calls = m.get("tool_calls")?.as_array()?;
        calls
            .iter()
            .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
            .and_then(|c| c.pointer("/function/name")?.as_str().map(String::from))
    })
}

/// Calls whose `arguments` are a JSON text, decoded (`FromCompletionToolCall`).
fn native_calls(calls: &Value) -> Result<Vec<Value>, String> {
    let Value::Array(calls) = calls else {
        return Err(unmarshal_error(
            calls,
            "messages.tool_calls",
            "[]openai.ToolCall",
        ));
    };
    calls
        .iter()
        .map(|c| {
            let text = match c.pointer("/function/arguments") {
                Some(Value::String(s)) => s.as_str(),
                None | Some(Value::Null) => "",
                Some(other) => {
                    return Err(unmarshal_error(
                        other,
                        "messages.tool_calls.function.arguments",
                        "string",
                    ));
                }
            };
            let arguments: Value = serde_json::from_str(text)
                .map_err(|_| "invalid tool call arguments".to_string())?;
            if !(arguments.is_object() || arguments.is_null()) {
                return Err("invalid tool call arguments".to_string());
            }
            let name = c.pointer("/function/name").cloned().unwrap_or(json!(""));
            let mut call = json!({ "function": { "name": name, "arguments": arguments } });
            if let Some(id) = c
                .get("id")
                .and_then(Value::as_str)
                .filter(|i| !i.is_empty())
            {
                call["id"] = json!(id);
            }
            Ok(call)
        })
        .collect()
}

/// One part of an array content: a text, an image as a base64 data URL, or audio as base64 data
/// (which Ollama hands the model as an image).
fn content_part(role: &str, part: &Value) -> Result<Value, String> {
    let invalid = || "invalid message format".to_string();
    match part.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = part
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(invalid)?;
            Ok(json!({ "role": role, "content": text }))
        }
        Some("image_url") => {
            let url = part
                .pointer("/image_url/url")
                .or_else(|| part.get("image_url"))
                .and_then(Value::as_str)
                .ok_or_else(invalid)?;
            Ok(json!({ "role": role, "content": "", "images": [image_data(url)?] }))
        }
        Some("input_audio") => {
            let audio = part
                .get("input_audio")
                .filter(|a| a.is_object())
                .ok_or("invalid input_audio format")?;
            let data = audio
                .get("data")
                .and_then(Value::as_str)
                .ok_or("invalid input_audio format: missing data")?;
            if let Some(at) = go_base64::error_at(data.as_bytes()) {
                return Err(format!(
                    "invalid input_audio base64 data: illegal base64 data at input byte {at}"
                ));
            }
            Ok(json!({ "role": role, "content": "", "images": [data] }))
        }
        _ => Err(invalid()),
    }
}

/// The base64 data of an image data URL (`decodeImageURL`).
fn image_data(url: &str) -> Result<String, String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        return Err(
            "image URLs are not currently supported, please use base64 encoded data instead"
                .to_string(),
        );
    }
    let data = ["jpeg", "jpg", "png", "webp"]
        .iter()
        .find_map(|t| url.strip_prefix(&format!("data:image/{t};base64,")))
        .or_else(|| url.strip_prefix("data:;base64,"));
    match data {
        Some(d) if go_base64::error_at(d.as_bytes()).is_none() => Ok(d.to_string()),
        _ => Err("invalid image input".to_string()),
    }
}

/// The native options: `stop`, `max_tokens` as `num_predict`, the sampling settings, and
/// temperature and top_p at 1.0 when not given (OpenAI's defaults, not the model's).
fn options(req: &Map<String, Value>) -> Map<String, Value> {
    let mut o = Map::new();
    match req.get("stop") {
        Some(Value::String(s)) => {
            o.insert("stop".into(), json!([s]));
        }
        Some(Value::Array(a)) => {
            let stops: Vec<&Value> = a.iter().filter(|s| s.is_string()).collect();
            o.insert("stop".into(), json!(stops));
        }
        _ => {}
    }
    let given = |k: &str| req.get(k).filter(|v| !v.is_null()).cloned();
    if let Some(n) = given("max_tokens") {
        o.insert("num_predict".into(), n);
    }
    o.insert(
        "temperature".into(),
        given("temperature").unwrap_or(json!(1.0)),
    );
    for key in ["seed", "frequency_penalty", "presence_penalty"] {
        if let Some(v) = given(key) {
            o.insert(key.into(), v);
        }
    }
    o.insert("top_p".into(), given("top_p").unwrap_or(json!(1.0)));
    o
}

/// `response_format`: `json_object` is `"json"`, `json_schema` its schema.
fn response_format(v: Option<&Value>) -> Option<Value> {
    let kind = v?.get("type")?.as_str()?.trim().to_ascii_lowercase();
    match kind.as_str() {
        "json_object" => Some(json!("json")),
        "json_schema" => v?.pointer("/json_schema/schema").cloned(),
        _ => None,
    }
}

/// `reasoning.effort` (else `reasoning_effort`) as the native `think` (`thinkFromReasoningEffort`).
fn think(req: &Map<String, Value>) -> Result<Option<Value>, String> {
    let effort = match req.get("reasoning").filter(|r| !r.is_null()) {
        Some(r) => r.get("effort").and_then(Value::as_str).unwrap_or(""),
        None => req
            .get("reasoning_effort")
            .and_then(Value::as_str)
            .unwrap_or(""),
    };
    Ok(Some(match effort {
        "" => return Ok(None),
        "none" => json!(false),
        "minimal" => json!("low"),
        "low" | "medium" | "high" | "max" => json!(effort),
        "xhigh" | "ultra" => json!("max"),
        other => {
            return Err(format!(
                "invalid reasoning value: {other:?} (must be \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\", \"ultra\", \"max\", or \"none\")"
            ));
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(body: Value) -> Result<Value, String> {
        from_chat_request(body.to_string().as_bytes()).map(|t| t.native)
    }

    #[test]
    fn a_tool_round_trip_maps_onto_the_native_history() {
        let t = from_chat_request(
            json!({
                "model": "m", "stream": true, "stream_options": {"include_usage": true},
                "max_tokens": 64, "stop": "END",
                "messages": [
                    {"role": "user", "content": "where is order 7?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "order_status", "arguments": "{\"id\":7}"}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "shipped"}
                ]
            })
            .to_string()
            .as_bytes(),
        )
        .expect("accepted");
        assert!(t.stream && t.include_usage);
        let m = &t.native["messages"];
        assert_eq!(
            m[1]["tool_calls"][0]["function"]["arguments"],
            json!({"id": 7})
        );
        assert_eq!(m[1]["tool_calls"][0]["id"], json!("call_1"));
        assert_eq!(m[2]["tool_name"], json!("order_status"));
        assert_eq!(m[2]["tool_call_id"], json!("call_1"));
        let o = &t.native["options"];
        assert_eq!(
            (o["num_predict"].clone(), o["stop"].clone()),
            (json!(64), json!(["END"]))
        );
        assert_eq!(
            (o["temperature"].clone(), o["top_p"].clone()),
            (json!(1.0), json!(1.0))
        );
    }

    #[test]
    fn what_ollamas_openai_layer_refuses_is_refused_with_its_text() {
        let msgs = |m: Value| json!({"model": "m", "messages": m});
        assert_eq!(
            native(msgs(json!([]))).err().as_deref(),
            Some("[] is too short - 'messages'")
        );
        let string_args = json!([{"role": "assistant", "tool_calls": [
            {"id": "c", "function": {"name": "f", "arguments": "not json"}}]}]);
        assert_eq!(
            native(msgs(string_args)).err().as_deref(),
            Some("invalid tool call arguments")
        );
        assert_eq!(
            native(msgs(json!([{"role": "user"}]))).err().as_deref(),
            Some("invalid message content type: <nil>")
        );
        let hot = json!({"model": "m", "temperature": "hot", "messages": [{"role": "user", "content": "x"}]});
        assert!(native(hot).is_err_and(|e| e.contains("ChatCompletionRequest.temperature")));
        let effort = json!({"model": "m", "reasoning_effort": "xhigh", "messages": [{"role": "user", "content": "x"}]});
        assert_eq!(native(effort).expect("ok")["think"], json!("max"));
    }

    #[test]
    fn audio_and_images_are_base64_as_go_decodes_it() {
        let part = |p: Value| {
            native(json!({"model": "m", "messages": [{"role": "user", "content": [p]}]}))
        };
        let audio = |a: Value| part(json!({"type": "input_audio", "input_audio": a}));
        let heard = audio(json!({"data": "UklGRg==", "format": "wav"})).expect("accepted");
        assert_eq!(heard["messages"][0]["images"], json!(["UklGRg=="]));
        assert_eq!(
            audio(json!("UklGRg==")).err().as_deref(),
            Some("invalid input_audio format")
        );
        assert_eq!(
            audio(json!({"format": "wav"})).err().as_deref(),
            Some("invalid input_audio format: missing data")
        );
        assert_eq!(
            audio(json!({"data": "UklGR"})).err().as_deref(),
            Some("invalid input_audio base64 data: illegal base64 data at input byte 4")
        );
        let image = |url: &str| part(json!({"type": "image_url", "image_url": {"url": url}}));
        assert!(
            image("data:image/png;base64,").is_ok(),
            "Go decodes no data"
        );
        assert!(image("data:image/png;base64,iVBO\r\nRw==").is_ok());
        assert_eq!(
            image("data:image/png;base64,iVB").err().as_deref(),
            Some("invalid image input")
        );
    }
}
