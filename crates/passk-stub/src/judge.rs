//! Judges a `/api/chat` body the way Ollama's decoder and `ChatHandler` do (v0.33, `api/types.go`,
//! `server/routes.go`) before the stub reads it: what Ollama refuses gets its 400 text, what Ollama
//! accepts (`stream: null`, `options: null`, a numeric `keep_alive`, `8192.0` for an integer option,
//! `"User"` for a role) is read the same way.

use passk::wire::api::ChatRequest;
use passk::wire::duration::{KeepAlive, keep_alive};
use serde_json::Value;

/// A request Ollama would accept, with the fields the stub's model reads.
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    /// The request, roles lower-cased.
    pub req: ChatRequest,
    /// `keep_alive`, when sent.
    pub keep_alive: Option<KeepAlive>,
    /// Whether thinking was asked for (`None`: not said; a level string counts as on).
    pub think: Option<bool>,
    /// `shift`: whether the runner may shift its context when the prompt does not fit (`None`:
    /// not said, which is on for the stub's models, as `resolveContextShift` has it).
    pub shift: Option<bool>,
    /// An option of the wrong type: Ollama finds it only once the model was found and can serve
    /// the request (`modelOptions`, in `scheduleRunner`), so it is answered after those checks.
    pub options_refusal: Option<Refusal>,
    /// A message carries images: the model's runner refuses them unless it has vision.
    pub images: bool,
}

/// llama-server's refusal of images for a model without vision, as Ollama passes it on (400).
pub(crate) const NO_MULTIMODAL: &str =
    "Multimodal data provided, but model does not support multimodal requests.";

/// Options Ollama holds as integers; a JSON number with a fraction part is read as its integer.
const INTEGER_OPTIONS: [&str; 11] = [
    "num_ctx",
    "num_predict",
    "seed",
    "top_k",
    "num_batch",
    "num_gpu",
    "num_thread",
    "num_keep",
    "repeat_last_n",
    "draft_num_predict",
    "main_gpu",
];

/// Options Ollama holds as floats.
const FLOAT_OPTIONS: [&str; 7] = [
    "temperature",
    "top_p",
    "min_p",
    "typical_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
];

/// How Ollama refuses a request: its status and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// 400 for what the decoder refuses, 500 for an option of the wrong type (Ollama's
    /// `Options.FromMap` error goes through `handleScheduleError`'s default case).
    pub status: u16,
    /// Ollama's text.
    pub message: String,
}

impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal {
            status: 400,
            message,
        }
    }
}

/// Ollama's answer to an empty body.
const MISSING_BODY: &str = "missing request body";

/// A request body read as gin's `ShouldBindJSON` reads it for Ollama's handlers: an empty body is
/// `missing request body` (they test for `io.EOF`), anything else the decoder's text; both 400.
pub(crate) fn request_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    if body.trim_ascii().is_empty() {
        return Err(MISSING_BODY.to_string().into());
    }
    // Go's decoder words a body cut short as `io.ErrUnexpectedEOF`.
    serde_json::from_slice(body).map_err(|e| {
        Refusal::from(if e.is_eof() {
            "unexpected EOF".to_string()
        } else {
            e.to_string()
        })
    })
}

/// The request, or Ollama's refusal.
pub(crate) fn chat_request(body: &[u8]) -> Result<Judged, Refusal> {
    let value: Value = request_body(body)?;
    let Value::Object(mut obj) = value else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type api.ChatRequest",
            json_kind(&value)
        )
        .into());
    };
    // Go's decoder stops at an `UnmarshalJSON` error (keep_alive's duration, think's value) but
    // only notes a type mismatch (top_logprobs') and goes on, and `ChatHandler` checks the range
    // after decoding: keep_alive and think are judged first.
    let keep_alive = match obj.remove("keep_alive") {
        None | Some(Value::Null) => None,
        Some(v) => Some(keep_alive(&v).map_err(Refusal::from)?),
    };
    let think = match obj.remove("think") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(b),
        Some(Value::String(s)) if ["high", "medium", "low", "max"].contains(&s.as_str()) => {
            Some(true)
        }
        Some(Value::String(s)) => {
            return Err(format!(
                "invalid think value: {s:?} (must be \"high\", \"medium\", \"low\", \"max\", true, or false)"
            )
            .into());
        }
        Some(_) => {
            return Err("think must be a boolean or string (\"high\", \"medium\", \"low\", \"max\", true, or false)".to_string().into());
        }
    };
    top_logprobs(obj.get("top_logprobs"))?;
    // `Shift` and `Truncate` are `*bool`: another type is the decoder's 400. `truncate: false`
    // is read and not modelled (docs/stub.md).
    let shift = optional_bool(obj.remove("shift"), "shift")?;
    optional_bool(obj.remove("truncate"), "truncate")?;
    for key in ["stream", "options", "messages", "tools", "format"] {
        if obj.get(key) == Some(&Value::Null) {
            obj.remove(key);
        }
    }
    let options_refusal = match obj.get_mut("options").map(typed_options) {
        Some(Err(r)) if r.status == 500 => {
            obj.remove("options");
            Some(r)
        }
        Some(Err(decoder)) => return Err(decoder),
        _ => None,
    };
    let images = obj
        .get("messages")
        .and_then(Value::as_array)
        .is_some_and(|ms| {
            ms.iter().any(|m| {
                m.get("images")
                    .and_then(Value::as_array)
                    .is_some_and(|i| i.iter().any(|x| !x.is_null()))
            })
        });
    match obj.get_mut("messages") {
        Some(Value::Array(messages)) => {
            for m in messages.iter_mut() {
                message(m)?;
            }
        }
        Some(other) => {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field ChatRequest.messages of type []api.Message",
                json_kind(other)
            )
            .into());
        }
        None => {}
    }
    let req: ChatRequest = serde_json::from_value(Value::Object(obj)).map_err(|e| e.to_string())?;
    Ok(Judged {
        req,
        keep_alive,
        think,
        shift,
        options_refusal,
        images,
    })
}

/// A `*bool` field of `api.ChatRequest`: absent or `null` is `None`, another type the decoder's
/// 400.
fn optional_bool(v: Option<Value>, field: &str) -> Result<Option<bool>, Refusal> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field ChatRequest.{field} of type bool",
            json_kind(&other)
        )
        .into()),
    }
}

/// `top_logprobs` is a Go `int`: a number with a fraction or exponent, or another type, is the
/// decoder's 400; then `ChatHandler` holds it between 0 and 20.
fn top_logprobs(v: Option<&Value>) -> Result<(), Refusal> {
    let n = match v {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Number(n)) => n,
        Some(other) => return Err(not_an_int(json_kind(other))),
    };
    let Some(n) = n.as_i64() else {
        return Err(not_an_int(&format!("number {n}")));
    };
    if !(0..=20).contains(&n) {
        return Err("top_logprobs must be between 0 and 20".to_string().into());
    }
    Ok(())
}

/// Go's `UnmarshalTypeError` text for `top_logprobs`.
fn not_an_int(what: &str) -> Refusal {
    format!(
        "json: cannot unmarshal {what} into Go struct field ChatRequest.top_logprobs of type int"
    )
    .into()
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks the known options' types as `Options.FromMap` does (`null` skipped, an integer written
/// as a float truncated) and reads them as Ollama would.
fn typed_options(options: &mut Value) -> Result<(), Refusal> {
    let Value::Object(map) = options else {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field ChatRequest.options of type map[string]interface {{}}",
            json_kind(options)
        )
        .into());
    };
    let wrong = |key: &str, kind: &str| Refusal {
        status: 500,
        message: format!("option {key:?} must be of type {kind}"),
    };
    for (key, v) in map.iter_mut().filter(|(_, v)| !v.is_null()) {
        let key = key.as_str();
        if INTEGER_OPTIONS.contains(&key) {
            let f = v.as_f64().ok_or_else(|| wrong(key, "integer"))?;
            if !v.is_i64() && !v.is_u64() {
                *v = Value::from(f.trunc() as i64);
            }
        } else if FLOAT_OPTIONS.contains(&key) && !v.is_number() {
            return Err(wrong(key, "float32"));
        } else if key == "use_mmap" && !v.is_boolean() {
            return Err(wrong(key, "boolean"));
        } else if key == "stop" {
            let strings = v.as_array().ok_or_else(|| wrong(key, "array"))?;
            if !strings.iter().all(Value::is_string) {
                return Err(Refusal {
                    status: 500,
                    message: format!("option {key:?} must be of an array of strings"),
                });
            }
        }
    }
    Ok(())
}

/// Lower-cases the role (as `Message.UnmarshalJSON` does) and refuses tool-call arguments that are
/// not an object, as Ollama's ordered-map decoder does.
fn message(m: &mut Value) -> Result<(), Refusal> {
    let Value::Object(map) = m else {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field ChatRequest.messages of type api.Message",
            json_kind(m)
        )
        .into());
    };
    if let Some(Value::String(role)) = map.get_mut("role") {
        *role = role.to_lowercase();
    }
    images(map.get("images"))?;
    let calls = map.get("tool_calls").and_then(Value::as_array);
    for call in calls.into_iter().flatten() {
        let args = call.pointer("/function/arguments");
        // `null` leaves the ordered map nil (sent back as `{}`); anything else must be an object.
        if args.is_some_and(|a| !a.is_object() && !a.is_null()) {
            return Err("Value looks like object, but can't find closing '}' symbol"
                .to_string()
                .into());
        }
    }
    Ok(())
}

/// `Message.Images` is `[]ImageData` (`api/types.go`), each base64 text: anything else is the
/// decoder's 400, as `encoding/json` words it. `ImageData` is a `[]byte`, which `encoding/json`
/// reads from a string with `base64.StdEncoding` (padded, line breaks skipped): text that does
/// not decode is refused with the decoder's own error.
fn images(v: Option<&Value>) -> Result<(), Refusal> {
    let kind = match v {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::Null => {}
                    Value::String(text) => {
                        if let Some(at) = super::go_base64::error_at(text.as_bytes()) {
                            // `Message` decodes through an alias type, which names the field.
                            return Err(format!(
                                "json: cannot unmarshal string into Alias.images.{i} of type \
                                 api.ImageData: illegal base64 data at input byte {at}"
                            )
                            .into());
                        }
                    }
                    other => return Err(format!(
                        "json: cannot unmarshal {} into Go struct field Message.messages.images of type api.ImageData",
                        json_kind(other)
                    )
                    .into()),
                }
            }
            return Ok(());
        }
        Some(other) => json_kind(other),
    };
    Err(format!(
        "json: cannot unmarshal {kind} into Go struct field Message.messages.images of type []api.ImageData"
    )
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(body: &str) -> Result<Judged, String> {
        chat_request(body.as_bytes()).map_err(|r| r.message)
    }

    #[test]
    fn what_ollama_refuses_is_refused_with_its_text() {
        for (ka, text) in [
            ("\"600\"", "time: missing unit in duration \"600\""),
            ("\"-1\"", "time: missing unit in duration \"-1\""),
            ("\"forever\"", "time: invalid duration \"forever\""),
        ] {
            let body = format!(r#"{{"model":"m","keep_alive":{ka}}}"#);
            assert_eq!(judge(&body).err().as_deref(), Some(text));
        }
        assert_eq!(judge("").err().as_deref(), Some(MISSING_BODY));
        assert!(judge(r#"{"model":"m","think":"very"}"#).is_err());
        let string_args = r#"{"model":"m","messages":[{"role":"assistant","content":"",
            "tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]}"#;
        assert!(judge(string_args).is_err());
        let null_args = r#"{"model":"m","messages":[{"role":"assistant","content":"",
            "tool_calls":[{"function":{"name":"f","arguments":null}}]}]}"#;
        assert!(judge(null_args).is_ok());
        let typed = chat_request(br#"{"model":"m","options":{"temperature":"hot"}}"#);
        assert_eq!(
            typed.ok().and_then(|j| j.options_refusal),
            Some(Refusal {
                status: 500,
                message: "option \"temperature\" must be of type float32".to_string()
            })
        );
        let stop = chat_request(br#"{"model":"m","options":{"stop":["a",1]}}"#);
        assert!(stop.is_ok_and(|j| j.options_refusal.is_some()));
        assert!(judge(r#"{"model":"m","options":[1]}"#).is_err());
        assert_eq!(
            judge(r#"{"model":"m","top_logprobs":21}"#).err().as_deref(),
            Some("top_logprobs must be between 0 and 20")
        );
        assert!(judge(r#"{"model":"m","options":{"num_ctx":null,"stop":["a"]}}"#).is_ok());
        assert_eq!(
            judge(r#"{"model":"m","top_logprobs":5.0}"#)
                .err()
                .as_deref(),
            Some(
                "json: cannot unmarshal number 5.0 into Go struct field ChatRequest.top_logprobs of type int"
            )
        );
        assert!(judge(r#"{"model":"m","top_logprobs":"5"}"#).is_err());
        assert!(judge(r#"{"model":"m","top_logprobs":5}"#).is_ok());
    }

    #[test]
    fn what_ollama_accepts_is_read_as_it_reads_it() {
        let j = judge(
            r#"{"model":"m","stream":null,"options":{"num_ctx":8192.0,"seed":7.0},
                "keep_alive":600,"think":"low","messages":[{"role":"User","content":"hi"}]}"#,
        );
        let j = match j {
            Ok(j) => j,
            Err(e) => panic!("{e}"),
        };
        assert!(j.req.stream);
        assert_eq!(j.req.options.num_ctx, Some(8192));
        assert_eq!(j.req.options.seed, Some(7));
        assert_eq!(j.req.messages[0].role, "user");
        assert_eq!(
            j.keep_alive,
            Some(KeepAlive::For(std::time::Duration::from_secs(600)))
        );
        assert_eq!(j.think, Some(true));
        assert!(judge(r#"{"model":"m","options":null}"#).is_ok());
    }
}
