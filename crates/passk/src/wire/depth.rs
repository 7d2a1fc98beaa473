//! Bounded JSON nesting. serde_json refuses input nested past 128 levels, and a `Value` nested far
//! deeper cannot be dropped or written without exhausting the stack. Before a response body (or a
//! streamed line) is decoded, every value that would open past [`MAX_JSON_DEPTH`] levels is replaced
//! by `{"__too_deep__": "<its raw JSON text>"}`: the response decodes, nothing the model sent is
//! lost, and the call holding such arguments is rejected for them (see `tool_call`). One linear
//! pass; a body within the limit is not copied.

use serde_json::Value;
use std::borrow::Cow;

/// Deepest nesting of objects and arrays a decoded body keeps (the body's own levels included).
pub const MAX_JSON_DEPTH: usize = 64;

/// Key of the object that stands for a value nested too deeply.
pub const TOO_DEEP_KEY: &str = "__too_deep__";

/// The body with every value nested past [`MAX_JSON_DEPTH`] replaced (see the module docs).
pub fn bound(body: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut copied = 0usize;
    let mut k = 0usize;
    while k < body.len() {
        let b = body[k];
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            k += 1;
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' if depth == MAX_JSON_DEPTH => {
                let Some(end) = value_end(body, k) else {
                    // Never closes: the decoder will report the body as cut.
                    break;
                };
                let buf = out.get_or_insert_with(|| Vec::with_capacity(body.len()));
                buf.extend_from_slice(&body[copied..k]);
                let raw = String::from_utf8_lossy(&body[k..end]);
                let marker = serde_json::json!({ TOO_DEEP_KEY: raw });
                buf.extend_from_slice(marker.to_string().as_bytes());
                copied = end;
                k = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        k += 1;
    }
    match out {
        Some(mut buf) => {
            buf.extend_from_slice(&body[copied..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(body),
    }
}

/// End (exclusive) of the object or array opening at `start`, strings respected.
fn value_end(body: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (k, &b) in body.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether a decoded value holds a too-deep marker anywhere.
pub fn holds_too_deep(value: &Value) -> bool {
    match value {
        Value::Object(m) => m.contains_key(TOO_DEEP_KEY) || m.values().any(holds_too_deep),
        Value::Array(a) => a.iter().any(holds_too_deep),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn shallow_bodies_are_left_alone() {
        let body = br#"{"a": [1, {"b": "[[[["}]}"#;
        assert!(matches!(bound(body), Cow::Borrowed(_)));
    }

    #[test]
    fn deep_values_become_markers_holding_their_text() {
        let deep = nested(200);
        let body = format!(r#"{{"args": {deep}, "after": 2}}"#);
        let bounded = bound(body.as_bytes());
        let v: Value = serde_json::from_slice(&bounded).expect("decodes");
        assert_eq!(v["after"], json!(2));
        assert!(holds_too_deep(&v));
        let mut inner = &v["args"];
        let mut levels = 1;
        while let Some(a) = inner.as_array() {
            inner = &a[0];
            levels += 1;
        }
        assert_eq!(levels, MAX_JSON_DEPTH);
        assert_eq!(inner[TOO_DEEP_KEY], json!(nested(200 - MAX_JSON_DEPTH + 1)));
    }

    #[test]
    fn a_megabyte_of_brackets_is_one_marker() {
        let body = nested(1 << 19);
        let bounded = bound(body.as_bytes());
        let v: Value = serde_json::from_slice(&bounded).expect("decodes");
        assert!(holds_too_deep(&v));
        // Cut bodies stay cut.
        assert!(serde_json::from_slice::<Value>(&bound(b"[[[[")).is_err());
    }
}
