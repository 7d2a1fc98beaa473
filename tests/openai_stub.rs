//! The stub's OpenAI-compatible layer (`/v1`, as Ollama's own) and its upstream mode (replies
//! from an OpenAI-compatible server such as llama-server), over real loopback HTTP: shapes,
//! SSE framing, errors and faults of `/v1`; the forwarded request and the server's own counts
//! and durations on the native side, through `passk run` too.

use crate::util::{self, Stub, load, output, passk, run_args};
use passk_stub::{Behaviour, FaultKind, ModelSpec};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// The first customer message of the store's first conversation (the oracle knows it).
fn first_store_message() -> String {
    let text = std::fs::read_to_string(util::root().join("tasks/store/conversations.json"))
        .expect("conversations");
    let v: Value = serde_json::from_str(&text).expect("json");
    v[0]["customer"][0].as_str().expect("a message").to_string()
}

/// A store tool, as an OpenAI `tools` entry.
fn tools() -> Value {
    json!([{ "type": "function", "function": {
        "name": "find_customer", "description": "Find a customer",
        "parameters": { "type": "object", "properties": { "query": { "type": "string" } } } } }])
}

/// What a request got back: status, content type, body (`Err` when the body was cut short).
struct Got {
    status: u16,
    content_type: String,
    body: Result<String, String>,
}

impl Got {
    fn json(&self) -> Value {
        let body = self.body.as_ref().expect("a whole body");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
    }
}

fn request(method: &str, url: &str, body: Option<&Value>) -> Got {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let mut req = client.request(method.parse().expect("method"), url);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.expect("an answer");
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = resp.text().await.map_err(|e| e.to_string());
        Got {
            status,
            content_type,
            body,
        }
    })
}

fn chat(stub: &Stub, body: &Value) -> Got {
    request(
        "POST",
        &format!("{}/v1/chat/completions", stub.host()),
        Some(body),
    )
}

/// The `data:` payloads of an SSE body, checking every event is a `data:` line and a blank line.
fn events(body: &str) -> Vec<String> {
    assert!(body.ends_with("\n\n"), "{body:?}");
    body.trim_end()
        .split("\n\n")
        .map(|e| {
            e.strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data event: {e:?}"))
                .to_string()
        })
        .collect()
}

#[test]
fn models_are_listed_and_shown_as_ollamas_v1_does() {
    let stub = Stub::oracles(&["oracle-a"]);
    let list = request("GET", &format!("{}/v1/models", stub.host()), None).json();
    assert_eq!(list["object"], json!("list"));
    let ids: Vec<&str> = list["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(ids.contains(&"oracle-a:latest"), "{ids:?}");
    let one = request("GET", &format!("{}/v1/models/oracle-a", stub.host()), None).json();
    assert_eq!(
        (&one["id"], &one["object"], &one["owned_by"]),
        (&json!("oracle-a"), &json!("model"), &json!("library"))
    );
    assert!(one["created"].as_i64().is_some_and(|t| t > 0));
    let missing = request("GET", &format!("{}/v1/models/absent", stub.host()), None);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["type"], json!("not_found_error"));
    // gin routes on the decoded path, and `:model` is one segment: an escaped colon names the
    // model, a namespaced name is no route at all (gin's plain 404).
    let escaped = request(
        "GET",
        &format!("{}/v1/models/oracle-a%3Alatest", stub.host()),
        None,
    );
    assert_eq!(escaped.json()["id"], json!("oracle-a:latest"));
    let nested = request(
        "GET",
        &format!("{}/v1/models/library/oracle-a", stub.host()),
        None,
    );
    assert_eq!(
        (nested.status, nested.body.as_deref()),
        (404, Ok("404 page not found"))
    );
}

#[test]
fn a_tool_call_comes_back_as_a_json_string_and_its_result_goes_in_as_role_tool() {
    let stub = Stub::oracles(&["oracle-a"]);
    let user = json!({ "role": "user", "content": first_store_message() });
    let got = chat(
        &stub,
        &json!({ "model": "oracle-a", "messages": [user], "tools": tools() }),
    );
    assert_eq!(got.status, 200, "{:?}", got.body);
    assert!(got.content_type.starts_with("application/json"));
    let c = got.json();
    assert_eq!(c["object"], json!("chat.completion"));
    assert!(c["id"].as_str().is_some_and(|i| i.starts_with("chatcmpl-")));
    let choice = &c["choices"][0];
    assert_eq!(choice["finish_reason"], json!("tool_calls"));
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], json!("function"));
    assert!(call["id"].as_str().is_some_and(|i| i.starts_with("call_")));
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().expect("a string"))
            .expect("JSON text");
    assert!(args.is_object(), "{args}");
    // Ollama's /v1 gives token counts only, no durations.
    let usage = c["usage"].as_object().expect("usage");
    let keys: Vec<&str> = usage.keys().map(String::as_str).collect();
    assert_eq!(keys, ["prompt_tokens", "completion_tokens", "total_tokens"]);
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
        )
    );
    // The result goes back keyed by the call's id; the oracle carries on (another call or its reply).
    let assistant = json!({ "role": "assistant", "content": null, "tool_calls": [call] });
    let result = json!({ "role": "tool", "tool_call_id": call["id"], "content": "{\"customer_id\":\"C1\"}" });
    let next = chat(
        &stub,
        &json!({ "model": "oracle-a", "messages": [user, assistant, result], "tools": tools() }),
    );
    assert_eq!(next.status, 200, "{:?}", next.body);
    assert_eq!(
        next.json()["choices"][0]["message"]["role"],
        json!("assistant")
    );
}

#[test]
fn a_stream_is_server_sent_events_ending_in_finish_usage_and_done() {
    let stub = Stub::oracles(&["oracle-a"]);
    let user = json!({ "role": "user", "content": first_store_message() });
    let body = |usage: bool| {
        json!({ "model": "oracle-a", "stream": true, "messages": [user],
                "tools": tools(), "stream_options": { "include_usage": usage } })
    };
    let got = chat(&stub, &body(true));
    assert_eq!(got.status, 200);
    assert!(
        got.content_type.starts_with("text/event-stream"),
        "{}",
        got.content_type
    );
    let ev = events(got.body.as_ref().expect("whole"));
    assert_eq!(ev.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = ev[..ev.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).expect("a JSON chunk"))
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == json!("chat.completion.chunk"))
    );
    assert!(
        chunks
            .iter()
            .all(|c| c["id"] == chunks[0]["id"] && c["created"] == chunks[0]["created"])
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], json!("assistant"));
    assert!(
        chunks[1..]
            .iter()
            .all(|c| c["choices"][0]["delta"].get("role").is_none())
    );
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(
        usage["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    assert_eq!(finish["choices"][0]["finish_reason"], json!("tool_calls"));
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array())
        .flatten()
        .collect();
    assert!(!calls.is_empty() && calls.iter().all(|c| c["function"]["arguments"].is_string()));
    // Without include_usage: the finish chunk, then [DONE].
    let plain = events(chat(&stub, &body(false)).body.as_ref().expect("whole"));
    assert!(plain.iter().all(|e| !e.contains("\"usage\"")));
    let finish: Value = serde_json::from_str(&plain[plain.len() - 2]).expect("json");
    assert_eq!(finish["choices"][0]["finish_reason"], json!("tool_calls"));
    // A message of no parts adds none (`FromChatRequest`), so `ChatHandler` preloads and answers
    // `done_reason: "load"` in one piece; `ChatWriter` still writes it as events when streaming.
    let preload = json!({ "model": "oracle-a", "stream": true,
                          "messages": [{ "role": "user", "content": [] }] });
    let got = chat(&stub, &preload);
    assert!(
        got.content_type.starts_with("text/event-stream"),
        "{}",
        got.content_type
    );
    let ev = events(got.body.as_ref().expect("whole"));
    assert_eq!(ev.len(), 3, "{ev:?}");
    let opening: Value = serde_json::from_str(&ev[0]).expect("json");
    assert_eq!(opening["choices"][0]["delta"]["role"], json!("assistant"));
    let finish: Value = serde_json::from_str(&ev[1]).expect("json");
    assert_eq!(finish["choices"][0]["finish_reason"], json!("load"));
    assert_eq!(ev[2], "[DONE]");
}

#[test]
fn refusals_are_openai_error_objects_with_ollamas_texts() {
    let stub = Stub::start(
        vec![
            ("oracle-a", Behaviour::Oracle.into()),
            (
                "plain",
                ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion"]),
            ),
        ],
        |_| {},
    );
    let hi = json!([{ "role": "user", "content": first_store_message() }]);
    let cases = [
        (
            json!({ "model": "oracle-a", "messages": [] }),
            400,
            "invalid_request_error",
            "[] is too short - 'messages'".to_string(),
        ),
        (
            json!({ "model": "absent", "messages": hi }),
            404,
            "not_found_error",
            "model 'absent' not found".to_string(),
        ),
        (
            json!({ "model": "oracle-a", "messages": [{ "role": "assistant", "content": "",
                "tool_calls": [{ "id": "c", "type": "function", "function": { "name": "f", "arguments": "{\"a\":" } }] }] }),
            400,
            "invalid_request_error",
            "invalid tool call arguments".to_string(),
        ),
        (
            json!({ "model": "plain", "messages": hi, "tools": tools() }),
            400,
            "invalid_request_error",
            "registry.ollama.ai/library/plain:latest does not support tools".to_string(),
        ),
    ];
    for (body, status, kind, message) in cases {
        let got = chat(&stub, &body);
        assert_eq!(got.status, status, "{body}: {:?}", got.body);
        let e = got.json();
        assert_eq!(
            e,
            json!({ "error": { "message": message, "type": kind, "param": null, "code": null } })
        );
    }
}

#[test]
fn injected_faults_reach_the_v1_client_as_they_reach_the_native_one() {
    let faulty = ModelSpec::new(Behaviour::Oracle).with_fault_script(vec![
        FaultKind::Http503,
        FaultKind::TruncatedBody,
        FaultKind::StreamError,
    ]);
    let stub = Stub::start(vec![("faulty", faulty)], |_| {});
    let user = json!({ "role": "user", "content": first_store_message() });
    let body = json!({ "model": "faulty", "messages": [user], "tools": tools() });
    let busy = chat(&stub, &body);
    assert_eq!(busy.status, 503);
    assert_eq!(busy.json()["error"]["type"], json!("api_error"));
    let cut = chat(&stub, &body);
    assert_eq!(cut.status, 200);
    assert!(
        cut.body.is_err(),
        "a body shorter than its Content-Length: {:?}",
        cut.body
    );
    // An error line mid-stream reads, as in Ollama, as an empty chunk and the stream ends
    // without its finish chunk or [DONE].
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let got = chat(&stub, &streamed);
    let ev = events(got.body.as_ref().expect("whole"));
    assert!(
        ev.iter()
            .all(|e| e != "[DONE]" && !e.contains("finish_reason\":\"")),
        "{ev:?}"
    );
    assert_eq!(stub.injected().values().sum::<u64>(), 3);
}

/// A loopback stand-in for llama-server's `/v1/chat/completions`: answers every request with
/// `answer` and keeps the request bodies.
struct FakeUpstream {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl FakeUpstream {
    fn start(answer: Value) -> FakeUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut length = 0usize;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    continue;
                }
                kept.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or_default());
                let text = answer.to_string();
                let mut s = reader.into_inner();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        FakeUpstream { url, bodies }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// What llama-server answers: a call to `find_customer`, and its `timings`.
fn llama_answer(arguments: &str) -> Value {
    json!({
        "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "",
            "tool_calls": [{ "id": "abc", "type": "function",
                "function": { "name": "find_customer", "arguments": arguments } }] } }],
        "usage": { "prompt_tokens": 301, "completion_tokens": 17, "total_tokens": 318 },
        "timings": { "cache_n": 280, "prompt_n": 21, "prompt_ms": 101.25,
                     "predicted_n": 17, "predicted_ms": 333.5 }
    })
}

#[test]
fn an_upstream_model_answers_the_native_endpoint_with_the_servers_own_counts() {
    let up = FakeUpstream::start(llama_answer("{\"query\":\"rahul.mehta@example.com\"}"));
    let stub = Stub::start(
        vec![
            ("real", ModelSpec::upstream(&up.url)),
            ("scripted", ModelSpec::new(Behaviour::Oracle)),
        ],
        |c| c.suites = [("store".to_string(), "d".to_string())].into(),
    );
    // The stub says which of its models a real engine answers: a run of those is no stub run.
    let catalog = request("GET", &format!("{}/api/passk/suites", stub.host()), None).json();
    assert_eq!(catalog["passk_upstream"], json!(["real"]), "{catalog}");
    let history = json!([
        { "role": "user", "content": "any text: the upstream model is no script" },
        { "role": "assistant", "content": "", "tool_calls": [
            { "function": { "name": "find_customer", "arguments": { "query": "x" } } }] },
        { "role": "tool", "tool_name": "find_customer", "content": "{\"id\":\"C1\"}" }
    ]);
    let native = json!({ "model": "real", "stream": false, "messages": history,
        "tools": tools(), "options": { "num_predict": 96, "temperature": 0 } });
    let got = request("POST", &format!("{}/api/chat", stub.host()), Some(&native)).json();
    let sent = &up.bodies()[0];
    assert_eq!(sent["max_tokens"], json!(96));
    assert_eq!(sent["tools"], tools());
    assert_eq!(
        sent["messages"][1]["tool_calls"][0]["function"]["arguments"],
        json!("{\"query\":\"x\"}")
    );
    assert_eq!(
        sent["messages"][2]["tool_call_id"],
        sent["messages"][1]["tool_calls"][0]["id"]
    );
    let call = &got["message"]["tool_calls"][0];
    assert_eq!(
        call["function"]["arguments"],
        json!({ "query": "rahul.mehta@example.com" })
    );
    assert!(call["id"].as_str().is_some_and(|i| i.starts_with("call_")));
    // Every prompt token counted as Ollama counts them, the cached ones also kept apart, and the
    // server's own durations to the nanosecond.
    assert_eq!(
        (
            &got["prompt_eval_count"],
            &got["prompt_eval_cached_count"],
            &got["eval_count"]
        ),
        (&json!(301), &json!(280), &json!(17))
    );
    assert_eq!(
        (&got["prompt_eval_duration"], &got["eval_duration"]),
        (&json!(101_250_000), &json!(333_500_000))
    );
    assert_eq!(got["done_reason"], json!("stop"));
    assert!(got["total_duration"].as_u64().is_some_and(|t| t > 0));
    // The same model over /v1: usage from those counts.
    let v1 = chat(&stub, &json!({ "model": "real", "messages": [history[0]] })).json();
    assert_eq!(v1["usage"]["prompt_tokens"], json!(301));
}

#[test]
fn a_call_cut_mid_arguments_stays_text_and_passk_run_records_the_servers_counts() {
    let up = FakeUpstream::start(llama_answer("{\"query\": \"rah"));
    let stub = Stub::start(vec![("real", ModelSpec::upstream(&up.url))], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(
        &stub,
        &out,
        "real",
        "--suite store --tasks L1 --trials 1 --call-cap 2",
    );
    let (code, _, stderr) = output(passk().args(args));
    assert_eq!(code, 0, "{stderr}");
    let run = load(&out);
    assert_eq!(run.conversations.len(), 1);
    let calls = &run.conversations[0].calls;
    assert!(!calls.is_empty());
    for c in calls {
        assert_eq!(c.timings.prompt_eval_count, Some(301).into());
        assert_eq!(c.timings.eval_count, Some(17).into());
        assert_eq!(c.timings.prompt_eval_duration, Some(101_250_000).into());
        assert_eq!(c.timings.eval_duration, Some(333_500_000).into());
    }
    // No native call was made of the cut text: what reached the server back holds no tool call.
    let bodies = up.bodies();
    assert!(bodies.len() >= 2, "warm-up and at least one trial call");
    assert!(
        bodies
            .iter()
            .all(|b| !b.to_string().contains("\"tool_calls\""))
    );
}
