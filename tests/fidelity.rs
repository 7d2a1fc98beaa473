//! The stub judges requests and answers as Ollama v0.33 does (docs/stub.md, "Fidelity"), and passk
//! handles what a real Ollama sends: tagged and namespaced names, refusals, cut connections,
//! thinking models, cold loads and both prompt-count behaviours. Over loopback HTTP only.

use crate::util::{self, Stub, load, output, passk};
use passk::runner::preflight;
use passk::runner::record::{Outcome, RecordedJson};
use passk::runner::settings::RunSettings;
use passk::suite::Domain;
use passk::wire::api::{ChatMessage, ChatOptions, ChatRequest};
use passk::wire::client::{Client, ClientConfig};
use passk::wire::stub::{
    Behaviour, ModelSpec, PromptCount, ScriptBook, StubConfig, StubHandle, StubServer,
};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn store() -> passk::suites::store::StoreSuite {
    passk::suites::store::load_store(&util::root()).expect("store suite")
}

async fn stub(config: StubConfig) -> StubHandle {
    StubServer::start(config).await.expect("stub starts")
}

fn oracle_config() -> StubConfig {
    let s = store();
    StubConfig::with_script(ScriptBook::from_suites(s.tasks(), None))
}

fn client(h: &StubHandle) -> Client {
    Client::new(ClientConfig {
        retries: 0,
        ..ClientConfig::new(h.base_url())
    })
    .expect("client")
}

/// The first request of the store's first conversation.
fn opening(model: &str) -> ChatRequest {
    let s = store();
    let t = &s.tasks()[0];
    ChatRequest {
        model: model.to_string(),
        messages: vec![ChatMessage::user(t.customer[0].clone())],
        tools: Some(s.tools(passk::suite::ToolVariant::BARE).to_vec()),
        stream: false,
        options: ChatOptions {
            num_ctx: Some(16384),
            ..ChatOptions::default()
        },
        ..ChatRequest::default()
    }
}

/// The reply's message of a call that must succeed.
async fn message(c: &Client, req: &ChatRequest) -> ChatMessage {
    c.chat(req)
        .await
        .response
        .and_then(|r| r.message)
        .expect("message")
}

/// A raw POST: status and body as JSON.
async fn post(h: &StubHandle, path: &str, body: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}{path}", h.base_url()))
        .body(body.to_string())
        .send()
        .await
        .expect("answer");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn names_are_matched_as_ollama_matches_them() {
    let mut config = oracle_config()
        .model("llama3.2", Behaviour::Oracle)
        .model("myns/tiny:1b", Behaviour::Oracle);
    // A stub configured to serve any name (a stub file's `serve_unknown = true`).
    config.default = Some(Behaviour::Oracle.into());
    let h = stub(config).await;
    let c = client(&h);
    let tags = c.tags().await.expect("tags");
    let names: Vec<&str> = tags.models.iter().map(|m| m.name.as_str()).collect();
    for listed in [
        "llama3.2:latest",
        "myns/tiny:1b",
        "oracle:latest",
        "thinking:latest",
        "messy-pythonic:latest",
    ] {
        assert!(names.contains(&listed), "{listed} in {names:?}");
    }
    // Each listed with what /api/show says it can do, and its trained context.
    for m in &tags.models {
        let shown = c.show(&m.name).await.expect("show");
        assert_eq!(m.capabilities, shown.capabilities, "{}", m.name);
        assert_eq!(m.details.context_length, Some(32768), "{}", m.name);
    }
    let no_tools = tags.models.iter().find(|m| m.name == "no-tools:latest");
    assert!(no_tools.is_some_and(|m| !m.capabilities.iter().any(|c| c == "tools")));
    assert!(c.show("llama3.2:latest").await.is_ok());
    assert!(c.show("registry.ollama.ai/myns/tiny:1b").await.is_ok());
    // Preflight with the untagged name still finds the digest, size in VRAM and loaded context.
    for name in ["llama3.2", "llama3.2:latest", "myns/tiny:1b"] {
        let mut info = preflight::check_model(&c, &h.base_url(), name, true)
            .await
            .expect("model");
        assert_eq!(info.digest.as_ref().map(String::len), Some(64), "{name}");
        let warnings = preflight::warm_up(&c, &RunSettings::default(), &mut info)
            .await
            .expect("warm-up");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(
            info.size_vram.is_some() && info.loaded_context_length == Some(16384),
            "{name}"
        );
    }
    let ps = c.ps().await.expect("ps");
    let loaded: Vec<&str> = ps.models.iter().map(|m| m.name.as_str()).collect();
    // Longest time left first (`PsHandler`): the model warmed last.
    assert_eq!(loaded, vec!["myns/tiny:1b", "llama3.2:latest"]);
    // A name served by the default has its digest on a fresh stub too.
    let info = preflight::check_model(&c, &h.base_url(), "fresh", true)
        .await
        .expect("model");
    assert!(info.digest.is_some());
}

#[tokio::test]
async fn keep_alive_is_judged_as_ollama_judges_it() {
    let h = stub(oracle_config()).await;
    for (ka, text) in [
        ("\"600\"", "time: missing unit in duration \"600\""),
        ("\"-1\"", "time: missing unit in duration \"-1\""),
        ("\"forever\"", "time: invalid duration \"forever\""),
    ] {
        let (status, body) = post(
            &h,
            "/api/chat",
            &format!(r#"{{"model":"oracle","keep_alive":{ka}}}"#),
        )
        .await;
        assert_eq!((status, body["error"].as_str()), (400, Some(text)));
    }
    for ka in ["600", "-1", "\"15m\"", "\"-1m\""] {
        let (status, body) = post(
            &h,
            "/api/chat",
            &format!(r#"{{"model":"oracle","keep_alive":{ka}}}"#),
        )
        .await;
        assert_eq!(
            (status, body["done_reason"].as_str()),
            (200, Some("load")),
            "{ka}"
        );
    }
    // Kept forever by the last ("-1m"), and still after a call that sends no keep_alive
    // (`useLoadedRunner` keeps the runner's): `expires_at` is now + `math.MaxInt64` ns.
    let (status, _) = post(&h, "/api/chat", r#"{"model":"oracle"}"#).await;
    assert_eq!(status, 200);
    let ps = client(&h).ps().await.expect("ps");
    assert_eq!(ps.models.len(), 1);
    let year: i32 = ps.models[0].expires_at.as_deref().expect("expires_at")[..4]
        .parse()
        .expect("year");
    assert!(
        (2310..2330).contains(&year),
        "{:?}",
        ps.models[0].expires_at
    );
    let (status, body) = post(&h, "/api/chat", r#"{"model":"oracle","keep_alive":0}"#).await;
    assert_eq!(
        (status, body["done_reason"].as_str()),
        (200, Some("unload"))
    );
    assert!(client(&h).ps().await.expect("ps").models.is_empty());
}

#[tokio::test]
async fn lenient_fields_are_accepted_and_strict_ones_refused() {
    let h = stub(oracle_config()).await;
    let mut req = serde_json::to_value(opening("oracle")).expect("json");
    req["stream"] = Value::Null;
    req["options"] = json!({"num_ctx": 8192.0, "seed": 3.0, "num_predict": 512.0});
    req["messages"][0]["role"] = json!("USER");
    req["keep_alive"] = json!(300);
    let (status, body) = post(&h, "/api/chat", &req.to_string()).await;
    // stream: null means streamed, as in Ollama: NDJSON lines, the last one done.
    assert_eq!(status, 200);
    let text = body.as_str().expect("ndjson");
    let last: Value = serde_json::from_str(text.lines().last().expect("line")).expect("json");
    assert_eq!(last["done"], json!(true));
    assert!(
        text.contains("tool_calls"),
        "the upper-case role was read: {text}"
    );

    req["stream"] = json!(false);
    req["options"] = Value::Null;
    let (status, _) = post(&h, "/api/chat", &req.to_string()).await;
    assert_eq!(status, 200);

    let mut history = serde_json::to_value(opening("oracle")).expect("json");
    history["messages"] = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_order", "arguments": "{\"order_id\": \"5105\"}"}}]}
    ]);
    let (status, body) = post(&h, "/api/chat", &history.to_string()).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = post(
        &h,
        "/api/chat",
        r#"{"model":"oracle","think":true,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("\"oracle\" does not support thinking"))
    );
    let mut yaml = serde_json::to_value(opening("oracle")).expect("json");
    yaml["format"] = json!("yaml");
    let (status, body) = post(&h, "/api/chat", &yaml.to_string()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            500,
            Some(r#"invalid format: "\"yaml\""; expected "json" or a valid JSON Schema object"#)
        )
    );
    // Streamed, the same 500 as JSON: Ollama finds it before writing any chunk, once the model is
    // loaded.
    unload_all(&h).await;
    yaml["stream"] = json!(true);
    let (status, body) = post(&h, "/api/chat", &yaml.to_string()).await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("invalid format"))
    );
    assert_eq!(client(&h).ps().await.expect("ps").models.len(), 1);
    for path in ["/api/chat", "/api/show", "/api/pull"] {
        let (status, body) = post(&h, path, "").await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("missing request body")),
            "{path}"
        );
    }
}

/// A streamed reply with text beside its native call sends them in separate chunks, the text
/// first: `ChatHandler`'s tool parser hands back either text or the calls it has read.
#[tokio::test]
async fn a_streamed_chunk_carries_content_or_tool_calls_never_both() {
    let h = stub(oracle_config()).await;
    let mut req = serde_json::to_value(opening("messy-beside-native")).expect("json");
    req["stream"] = json!(true);
    let (status, body) = post(&h, "/api/chat", &req.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let chunks: Vec<Value> = body
        .as_str()
        .expect("ndjson")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let has_text = |c: &Value| {
        c["message"]["content"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    };
    let has_calls = |c: &Value| c["message"].get("tool_calls").is_some();
    assert!(
        chunks.iter().all(|c| !(has_text(c) && has_calls(c))),
        "{chunks:?}"
    );
    let text = chunks.iter().position(has_text).expect("text");
    let calls = chunks.iter().position(has_calls).expect("calls");
    assert!(text < calls, "{chunks:?}");
}

/// Unloads every model the stub has loaded (`keep_alive: 0` without messages).
async fn unload_all(h: &StubHandle) {
    for m in client(h).ps().await.expect("ps").models {
        let body = json!({"model": m.name, "keep_alive": 0}).to_string();
        assert_eq!(post(h, "/api/chat", &body).await.0, 200);
    }
}

#[tokio::test]
async fn refusals_come_in_ollamas_order() {
    // ChatHandler: the decoder, top_logprobs, the 404, the unload, thinking, tools, and only then
    // the option types (modelOptions, in scheduleRunner).
    let h = stub(StubConfig {
        default: None,
        ..oracle_config()
    })
    .await;
    let tools =
        json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    let hi = json!([{"role": "user", "content": "hi"}]);
    let bad = json!({"temperature": "hot"});
    let chat = |model: &str, extra: Value| {
        let mut body = json!({"model": model, "stream": false, "messages": hi, "options": bad});
        body.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        body.to_string()
    };
    for (body, status, text) in [
        (chat("nobody", json!({})), 404, "model 'nobody' not found".to_string()),
        (
            chat("no-tools", json!({"tools": tools})),
            400,
            "registry.ollama.ai/library/no-tools:latest does not support tools".to_string(),
        ),
        (
            chat("oracle", json!({"think": true})),
            400,
            "\"oracle\" does not support thinking".to_string(),
        ),
        (
            chat("oracle", json!({"messages": [], "keep_alive": 0})),
            200,
            String::new(),
        ),
        (
            chat("oracle", json!({})),
            500,
            "option \"temperature\" must be of type float32".to_string(),
        ),
        (
            chat("nobody", json!({"top_logprobs": 5.0})),
            400,
            "json: cannot unmarshal number 5.0 into Go struct field ChatRequest.top_logprobs of type int"
                .to_string(),
        ),
    ] {
        let (got, answer) = post(&h, "/api/chat", &body).await;
        assert_eq!(got, status, "{body}: {answer}");
        if status == 200 {
            assert_eq!(answer["done_reason"], json!("unload"), "{answer}");
        } else {
            assert_eq!(answer["error"].as_str(), Some(text.as_str()), "{body}");
        }
    }
    // The shape that writes its own reasoning is a thinking model, as any model Ollama sends
    // `thinking` for.
    let c = client(&h);
    let show = c.show("messy-think-mention").await.expect("show");
    assert!(show.capabilities.iter().any(|c| c == "thinking"));
    let mut req = opening("messy-think-mention");
    assert!(message(&c, &req).await.thinking.is_some());
    req.think = Some(false);
    assert!(message(&c, &req).await.thinking.is_none(), "think: false");
}

#[tokio::test]
async fn num_predict_cuts_and_format_shapes_the_reply() {
    let h = stub(oracle_config()).await;
    let c = client(&h);
    let mut req = opening("oracle");
    req.options.num_predict = Some(3);
    let r = c.chat(&req).await.response.expect("answer");
    assert_eq!(r.timings.done_reason.as_deref(), Some("length"));
    assert_eq!(r.timings.eval_count, Some(3));
    let m = r.message.expect("message");
    assert!(m.tool_calls.is_empty() && m.content.len() <= 12, "{m:?}");

    let mut toolless = opening("oracle");
    toolless.tools = None;
    toolless.format = Some(json!("json"));
    let m = message(&c, &toolless).await;
    let v: Value = serde_json::from_str(&m.content).expect("json content");
    assert!(v.is_object());
    toolless.format = Some(
        json!({"type": "object", "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}}}),
    );
    let m = message(&c, &toolless).await;
    let v: Value = serde_json::from_str(&m.content).expect("json content");
    assert!(v["answer"].is_string() && v["n"].is_number(), "{v}");
}

#[tokio::test]
async fn a_thinking_model_thinks_unless_told_not_to() {
    let h = stub(oracle_config()).await;
    let c = client(&h);
    for stream in [false, true] {
        let mut req = opening("thinking");
        req.stream = stream;
        let m = message(&c, &req).await;
        assert!(
            m.thinking.as_ref().is_some_and(|t| !t.is_empty()),
            "stream={stream}"
        );
        assert_eq!(m.tool_calls.len(), 1);
        req.think = Some(false);
        let m = message(&c, &req).await;
        assert_eq!(m.thinking, None);
    }
    let r = c.show("thinking").await.expect("show");
    assert!(r.capabilities.iter().any(|c| c == "thinking"));
}

#[tokio::test]
async fn cold_loads_take_the_cold_time_again_after_keep_alive() {
    let mut config = oracle_config();
    config.cold_load = Duration::from_millis(60);
    let h = stub(config).await;
    let c = client(&h);
    let load = |r: &passk::wire::client::ChatResult| {
        r.response
            .as_ref()
            .and_then(|r| r.timings.load_duration)
            .unwrap_or(0)
    };
    // Loaded for minutes first, so that the warm call finds it loaded however slowly this test
    // runs; the warm call then asks for 150 ms, and the model is waited out, not slept past.
    let mut req = opening("oracle");
    req.keep_alive = Some("5m".into());
    let t = Instant::now();
    let first = c.chat(&req).await;
    assert!(load(&first) >= 60_000_000 && t.elapsed() >= Duration::from_millis(60));
    req.keep_alive = Some("150ms".into());
    let warm = c.chat(&req).await;
    assert!(load(&warm) < 60_000_000, "{}", load(&warm));
    let expired = Instant::now() + Duration::from_secs(10);
    while !c.ps().await.expect("ps").models.is_empty() {
        assert!(
            Instant::now() < expired,
            "still loaded 10 s after a 150 ms keep_alive"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cold = c.chat(&req).await;
    assert!(load(&cold) >= 60_000_000);
}

/// Raw HTTP/1.1 on a socket: what the server wrote back before closing or `wait`.
fn raw(addr: std::net::SocketAddr, head: &str, body: Option<&str>) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s.write_all(head.as_bytes()).expect("write");
    let mut buf = vec![0u8; 65536];
    let mut out = String::new();
    if let Some(body) = body {
        let n = s.read(&mut buf).expect("100 Continue");
        out.push_str(&String::from_utf8_lossy(&buf[..n]));
        s.write_all(body.as_bytes()).expect("body");
    }
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    out
}

#[test]
fn head_requests_and_expect_continue_are_answered() {
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let h = rt.block_on(stub(oracle_config()));
    let addr = h.addr();
    let out = rt.block_on(async {
        tokio::task::spawn_blocking(move || {
            // A loopback server refuses a foreign Host (`allowedHostsMiddleware`): say localhost.
            let head = raw(addr, "HEAD / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", None);
            let tags = raw(addr, "HEAD /api/tags HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", None);
            let body = r#"{"model":"oracle"}"#;
            let expect = raw(
                addr,
                &format!("POST /api/show HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", body.len()),
                Some(body),
            );
            // A `%` without two hex digits: Go's server cannot read the target (400, closed).
            let bad = raw(addr, "GET /api/t%zzags HTTP/1.1\r\nHost: localhost\r\n\r\n", None);
            (head, tags, expect, bad)
        })
        .await
        .expect("join")
    });
    for head_only in [&out.0, &out.1] {
        let answered = head_only.starts_with("HTTP/1.1 200") && head_only.ends_with("\r\n\r\n");
        assert!(answered, "a head and no body: {head_only}");
    }
    // The length GET's body would have, as Go's server sets it: "Ollama is running".
    assert!(out.0.contains("Content-Length: 17\r\n"), "{}", out.0);
    let continued = out.2.starts_with("HTTP/1.1 100 Continue\r\n\r\n")
        && out.2.contains("HTTP/1.1 200")
        && out.2.contains("capabilities");
    assert!(continued, "{}", out.2);
    assert!(
        out.3.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{}",
        out.3
    );
}

/// `passk run` on the store's first task against `stub` with extra flags; the run read back.
fn run_first_task(
    stub: &Stub,
    model: &str,
    extra: &str,
) -> (i32, String, Option<passk::analysis::Run>) {
    run_first_task_trials(stub, model, 1, extra)
}

/// The same with `trials` trials of the task.
fn run_first_task_trials(
    stub: &Stub,
    model: &str,
    trials: u32,
    extra: &str,
) -> (i32, String, Option<passk::analysis::Run>) {
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let task = store().tasks()[0].id.clone();
    let mut args: Vec<String> = [
        "run",
        "--no-progress",
        "--host",
        &stub.host(),
        "--models",
        model,
        "--suite",
        "store",
        "--trials",
        &trials.to_string(),
        "--tasks",
        &task,
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(extra.split_whitespace().map(String::from));
    let (code, _, stderr) = output(passk().args(&args));
    let run = (code == 0).then(|| load(&out));
    // With --report: the report's text after stderr, so that a test can read it.
    let report = std::fs::read_to_string(out.join("report/report.md")).unwrap_or_default();
    (code, format!("{stderr}{report}"), run)
}

/// Every conversation call of a run (none when it did not run).
fn calls_of(run: Option<&passk::analysis::Run>) -> Vec<&passk::runner::record::CallRecord> {
    run.iter()
        .flat_map(|r| &r.conversations)
        .flat_map(|c| &c.calls)
        .collect()
}

#[test]
fn passk_refuses_what_ollama_would_refuse_before_any_trace() {
    let stub = Stub::start(
        vec![(
            "no-tools",
            ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion"]),
        )],
        |_| {},
    );
    let (code, stderr, _) = run_first_task(&stub, "no-tools", "");
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stderr.contains("registry.ollama.ai/library/no-tools:latest does not support tools"),
        "{stderr}"
    );
    for bad in ["600", "-1", "forever"] {
        let (code, stderr, _) = run_first_task(&stub, "oracle", &format!("--keep-alive {bad}"));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("Go duration"), "{stderr}");
    }
    let (code, stderr, _) = run_first_task(&stub, "oracle", "--think on");
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stderr.contains("\"oracle\" does not support thinking"),
        "{stderr}"
    );
    let stale = Stub::start(vec![], |c| {
        c.suites.insert("store".to_string(), "0".repeat(64));
    });
    let (code, stderr, _) = run_first_task(&stale, "oracle", "");
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("restart `passk serve-stub`"), "{stderr}");
}

#[test]
fn a_run_against_passks_own_stub_says_so_in_its_report() {
    let all = passk::suites::AllSuites::load(&util::root()).expect("suites");
    let digests = passk::runner::experiment::task_digests(&all.domain_refs(), Some(&all.router));
    let serve_stub = Stub::start(vec![], |c| c.suites = digests.clone());
    let (code, text, run) = run_first_task(&serve_stub, "oracle", "--report");
    assert_eq!(code, 0, "{text}");
    assert_eq!(run.expect("run").manifest.backend, "stub");
    assert!(
        text.contains("Backend: `stub`") && text.contains("**STUB RUN.**"),
        "{text}"
    );
    // A server that does not publish suites is taken for what the command says: Ollama.
    let plain = Stub::start(vec![], |_| {});
    let (code, text, run) = run_first_task(&plain, "oracle", "--report");
    assert_eq!(code, 0, "{text}");
    assert_eq!(run.expect("run").manifest.backend, "ollama");
    assert!(!text.contains("STUB RUN"), "{text}");
}

#[test]
fn truncation_and_thinking_are_recorded_from_real_answers() {
    let stub = Stub::start(vec![], |_| {});
    let (code, stderr, run) = run_first_task(&stub, "oracle", "--num-predict 2");
    assert_eq!(code, 0, "{stderr}");
    let run = run.expect("run");
    let calls = calls_of(Some(&run));
    assert!(
        !calls.is_empty() && calls.iter().all(|c| c.truncated),
        "every reply was cut at 2 tokens"
    );
    for flags in ["--report", "--report --stream"] {
        let (code, stderr, run) = run_first_task(&stub, "thinking", flags);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("Thinking tokens per conversation (counted as output)"),
            "{stderr}"
        );
        let run = run.expect("run");
        assert!(run.conversations.iter().all(|c| c.outcome == Outcome::Pass));
        let calls = calls_of(Some(&run));
        assert!(calls.iter().all(|c| c.thinking.is_some()), "{flags}");
        assert!(calls.iter().all(|c| {
            c.thinking_tokens
                .is_some_and(|t| t > 0 && Some(t) <= c.timings.eval_count)
        }));
    }
    let (code, stderr, run) = run_first_task(&stub, "thinking", "--think off");
    assert_eq!(code, 0, "{stderr}");
    let calls = calls_of(run.as_ref());
    assert!(!calls.is_empty() && calls.iter().all(|c| c.thinking.is_none()));
}

#[test]
fn thinking_goes_back_in_the_history_with_its_message() {
    // Ollama's tool-calling docs send a thinking model's `thinking` back with the assistant message;
    // the transcript is the history each next request carried.
    let stub = Stub::start(vec![], |_| {});
    for flags in ["", "--stream"] {
        let (code, stderr, run) = run_first_task(&stub, "thinking", flags);
        assert_eq!(code, 0, "{stderr}");
        let run = run.expect("run");
        let conversation = &run.conversations[0];
        let sent: Vec<String> = conversation
            .transcript
            .iter()
            .map(RecordedJson::to_value)
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["thinking"].as_str().unwrap_or_default().to_string())
            .collect();
        let thought: Vec<&str> = conversation
            .calls
            .iter()
            .filter_map(|c| c.thinking.as_deref())
            .collect();
        assert!(sent.len() > 1, "{flags}: {sent:?}");
        assert!(sent.iter().all(|t| !t.is_empty()), "{flags}: {sent:?}");
        assert_eq!(sent, thought, "{flags}");
    }
}

/// Per conversation, in trial order: each call's `prompt_eval_count` and `context_overflow`.
fn counts_and_flags(run: Option<&passk::analysis::Run>) -> Vec<(Vec<u64>, Vec<bool>)> {
    let mut conversations: Vec<_> = run.iter().flat_map(|r| &r.conversations).collect();
    conversations.sort_by_key(|c| c.trial);
    conversations
        .iter()
        .map(|c| {
            let counts = c.calls.iter().filter_map(|k| k.timings.prompt_eval_count);
            let flags = c.calls.iter().map(|k| k.context_overflow);
            (counts.collect(), flags.collect())
        })
        .collect()
}

#[test]
fn context_overflow_is_right_under_both_prompt_counts() {
    for mode in [PromptCount::All, PromptCount::NewOnly] {
        let stub = Stub::start(vec![], |c| c.prompt_count = mode);
        let (code, stderr, run) = run_first_task_trials(&stub, "oracle", 2, "--num-ctx 16384");
        assert_eq!(code, 0, "{stderr}");
        let conversations = counts_and_flags(run.as_ref());
        assert_eq!(conversations.len(), 2, "{mode:?}");
        for (counts, flags) in &conversations {
            assert!(counts.len() > 2, "{mode:?}");
            assert!(
                flags.iter().all(|f| !f),
                "{mode:?}: no overflow with room to spare: {counts:?}"
            );
        }
        if mode == PromptCount::NewOnly {
            let (first, second) = (&conversations[0].0, &conversations[1].0);
            assert!(
                first.windows(2).any(|w| w[1] < w[0]),
                "only new tokens counted: {first:?}"
            );
            assert!(
                second[0] < first[0],
                "the second trial opens on the cached prefix: {second:?} after {first:?}"
            );
        }
        // Too small for the opening itself: Ollama cuts every prompt, which a conversation's first
        // count cannot show; every later call of each conversation overflows.
        let (code, stderr, run) = run_first_task_trials(&stub, "oracle", 2, "--num-ctx 64");
        assert_eq!(code, 0, "{stderr}");
        for (counts, flags) in counts_and_flags(run.as_ref()) {
            assert!(
                counts.iter().all(|&c| c < 64),
                "{mode:?}: fitted: {counts:?}"
            );
            assert!(
                !flags[0] && flags[1..].iter().all(|&f| f),
                "{mode:?}: {flags:?}"
            );
        }
    }
}

#[test]
fn context_overflow_flags_the_same_calls_under_both_prompt_counts() {
    // The conversation's full prompt counts with room to spare, then a num_ctx between two of them:
    // Ollama drops the oldest messages from then on, and both trials of either count must show it.
    let all = Stub::start(vec![], |c| c.prompt_count = PromptCount::All);
    let (code, stderr, run) = run_first_task(&all, "oracle", "--num-ctx 16384");
    assert_eq!(code, 0, "{stderr}");
    let full = counts_and_flags(run.as_ref()).remove(0).0;
    let k = (0..full.len() - 1)
        .max_by_key(|&i| full[i + 1].saturating_sub(full[i]))
        .expect("two calls");
    assert!(full[k + 1] > full[k] + 8, "{full:?}");
    let num_ctx = (full[k] + full[k + 1]) / 2;
    let expected: Vec<bool> = full.iter().map(|&p| p >= num_ctx).collect();
    for mode in [PromptCount::All, PromptCount::NewOnly] {
        let stub = Stub::start(vec![], |c| c.prompt_count = mode);
        let extra = format!("--num-ctx {num_ctx}");
        let (code, stderr, run) = run_first_task_trials(&stub, "oracle", 2, &extra);
        assert_eq!(code, 0, "{stderr}");
        let conversations = counts_and_flags(run.as_ref());
        assert_eq!(conversations.len(), 2);
        for (trial, (counts, flags)) in conversations.iter().enumerate() {
            assert_eq!(
                flags, &expected,
                "{mode:?}, trial {trial}, num_ctx {num_ctx}: counts {counts:?}, full {full:?}"
            );
            assert!(counts.iter().all(|&c| c < num_ctx), "fitted: {counts:?}");
        }
    }
}

#[test]
fn doctor_and_pull_match_untagged_and_namespaced_names() {
    let stub = Stub::start(
        vec![
            ("llama3.2", Behaviour::Oracle.into()),
            ("myns/tiny:1b", Behaviour::Oracle.into()),
        ],
        |_| {},
    );
    let (code, stdout, stderr) = output(passk().args([
        "doctor",
        "--host",
        &stub.host(),
        "--models",
        "llama3.2,library/llama3.2:latest,myns/tiny:1b",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("digest unknown"), "{stdout}");
    assert_eq!(stdout.matches("is pulled (").count(), 3, "{stdout}");
    let (code, stdout, stderr) =
        output(passk().args(["pull", "--host", &stub.host(), "llama3.2", "myns/tiny:1b"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("llama3.2: pulled, listed as llama3.2:latest (")
            && stdout.contains("myns/tiny:1b: pulled, listed as myns/tiny:1b ("),
        "{stdout}"
    );
}

#[test]
fn doctor_on_a_fresh_stub_sees_the_digest_of_every_model_it_serves() {
    // A messy shape is served by convention, `qwen2.5-coder:3b` by the default: neither was listed
    // by name, shown or pulled before doctor asks.
    let stub = Stub::start(vec![], |c| c.default = Some(Behaviour::Oracle.into()));
    let (code, stdout, stderr) = output(passk().args([
        "doctor",
        "--host",
        &stub.host(),
        "--models",
        "messy-pythonic,qwen2.5-coder:3b,oracle",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("digest unknown"), "{stdout}");
    assert_eq!(stdout.matches("is pulled (").count(), 3, "{stdout}");
}

#[test]
fn an_experiment_file_keep_alive_ollama_refuses_is_a_usage_error() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let file = tmp.path().join("exp.toml");
    std::fs::write(&file, "keep-alive = \"forever\"\n").expect("write");
    let (code, stderr, _) =
        run_first_task(&stub, "oracle", &format!("--config {}", file.display()));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("time: invalid duration \"forever\""),
        "{stderr}"
    );
}

/// gpt-oss speaks harmony, whose analysis channel Ollama always reads (`harmony/harmonyparser.go`;
/// Ollama's thinking docs: gpt-oss ignores `think: false`), so it thinks although told not to.
#[tokio::test]
async fn gpt_oss_thinks_although_told_not_to() {
    let thinking =
        ModelSpec::new(Behaviour::Oracle).with_capabilities(&["completion", "tools", "thinking"]);
    let h = stub(oracle_config().model("gpt-oss:20b", thinking)).await;
    let mut req = opening("gpt-oss:20b");
    req.think = Some(false);
    let m = message(&client(&h), &req).await;
    assert!(m.thinking.is_some_and(|t| !t.is_empty()));
}

/// Requests Ollama's decoder and `ChatHandler` judge otherwise than the stub did.
#[tokio::test]
async fn images_blank_models_and_negative_top_k_are_judged_as_ollama_judges_them() {
    let h = stub(oracle_config()).await;
    // `api.Message.Images` is `[]ImageData` (`api/types.go`): a string is the decoder's 400.
    let images = r#"{"model":"oracle","stream":false,"messages":[{"role":"user","content":"hi","images":"abc"}]}"#;
    let (status, body) = post(&h, "/api/chat", images).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("images")),
        "{body}"
    );
    // `parseAndValidateModelRef` (`server/model_resolver.go`): a blank name is `model is
    // required`, one `ParseName` cannot read `invalid model name`, before any lookup, where the
    // stub's default would have served it; `/api/pull` says the second for both.
    for (path, model, text) in [
        ("/api/chat", "   ", "model is required"),
        ("/api/chat", "bad name!", "invalid model name"),
        ("/api/chat", "ns/", "invalid model name"),
        ("/api/show", "   ", "model is required"),
        ("/api/show", "-m", "invalid model name"),
        ("/api/pull", "", "invalid model name"),
        ("/api/pull", "m:", "invalid model name"),
    ] {
        let body = json!({"model": model, "messages": []}).to_string();
        let (status, body) = post(&h, path, &body).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some(text)),
            "{path} {model:?}"
        );
    }
    // `api.Options.TopK` is an `int` (`api/types.go`): -1 is accepted.
    let top_k = r#"{"model":"oracle","stream":false,"messages":[],"options":{"top_k":-1}}"#;
    let (status, body) = post(&h, "/api/chat", top_k).await;
    assert_eq!(status, 200, "{body}");
}

/// With a JSON-schema `format`, Ollama constrains the output to the schema (`server/routes.go`
/// passes it to the runner as a grammar): enums, required keys and nesting hold.
#[tokio::test]
async fn a_schema_format_reply_honours_enum_required_and_nesting() {
    let h = stub(oracle_config()).await;
    let mut req = opening("oracle");
    req.tools = None;
    req.format = Some(json!({
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": ["refund", "order_status"]},
            "detail": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id", "why"]}
        },
        "required": ["intent", "detail"]
    }));
    let m = message(&client(&h), &req).await;
    let v: Value = serde_json::from_str(&m.content).expect("json reply");
    assert_eq!(v["intent"], "refund");
    assert!(
        v["detail"]["id"].is_string() && v["detail"]["why"].is_string(),
        "{v}"
    );
}

/// The smaller differences, each as Ollama's `server/routes.go` answers it.
#[tokio::test]
async fn version_root_cors_hosts_ps_and_show_answer_as_ollama_does() {
    let mut config = oracle_config();
    config.suites = [("store".to_string(), "abc".to_string())].into();
    let h = stub(config).await;
    let http = reqwest::Client::new();
    let url = |p: &str| format!("{}{p}", h.base_url());
    // `VersionHandler`: `{"version": ...}` and nothing else.
    let v: Value = http
        .get(url("/api/version"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["version"]);
    // The suites a stub loaded are on its own route, for passk's stale-stub check.
    let suites = client(&h).stub_suites().await.expect("the stub's suites");
    assert_eq!(suites.get("store").map(String::as_str), Some("abc"));
    // `r.HandleMethodNotAllowed`: `/` serves GET and HEAD only.
    assert_eq!(http.post(url("/")).send().await.unwrap().status(), 405);
    // gin-contrib/cors as `GenerateRoutes` configures it: an allowed origin's preflight is 204.
    let preflight = http
        .request(reqwest::Method::OPTIONS, url("/api/chat"))
        .header("Origin", "http://localhost:3000")
        .header("Access-Control-Request-Method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    let allow = |name: &str| {
        preflight
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        allow("access-control-allow-origin"),
        "http://localhost:3000"
    );
    assert!(allow("access-control-allow-methods").contains("POST"));
    assert!(allow("access-control-allow-headers").contains("Content-Type"));
    let foreign = http
        .get(url("/api/tags"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    // `allowedHostsMiddleware`: bound to loopback, a foreign Host is refused (DNS rebinding).
    let rebound = http
        .get(url("/api/tags"))
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let local = http
        .get(url("/api/tags"))
        .header("Host", "ollama.local:11434")
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
    // `PsHandler`: longest time left first.
    let c = client(&h);
    for (model, keep) in [("oracle", "1m"), ("thinking", "10m"), ("text-calls", "5m")] {
        let mut req = opening(model);
        req.messages.clear();
        req.keep_alive = Some(keep.into());
        assert!(c.chat(&req).await.response.is_some(), "{model}");
    }
    let ps = c.ps().await.expect("ps");
    let names: Vec<&str> = ps.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["thinking:latest", "text-calls:latest", "oracle:latest"]
    );
    // `ShowHandler` names a missing model as `DisplayShortest` reads it.
    let (status, body) = post(&h, "/api/show", r#"{"model":"qwen9"}"#).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("model 'qwen9:latest' not found"))
    );
}

/// The default stub serves only what it is told to (Ollama's 404 for any other name), and doctor
/// names the pulled model nearest to a typo.
#[test]
fn an_unknown_name_is_ollamas_404_and_doctor_suggests_the_nearest_pulled_one() {
    let stub = Stub::start(vec![("qwen2.5-coder:3b", Behaviour::Oracle.into())], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = util::run_args(
        &stub,
        &out,
        "qwen2.5-coder:3bb",
        "--trials 1 --suite router",
    );
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stderr.contains("model 'qwen2.5-coder:3bb' not found"),
        "{stderr}"
    );
    let (code, stdout, _) = output(passk().args([
        "doctor",
        "--host",
        &stub.host(),
        "--models",
        "qwen2.5-coder:3bb",
    ]));
    assert_ne!(code, 0);
    assert!(
        stdout.contains("did you mean qwen2.5-coder:3b?"),
        "{stdout}"
    );
    let default = passk::wire::stub::StubConfig::default();
    assert!(default.spec_for("qwen2.5-coder:3bb").is_none());
}

/// `passk run --think off` sends `think: false` on its warm-up too, as on every trial: a thinking
/// model that thought there would spend the warm-up's 8 tokens on reasoning (`done_reason: length`).
#[tokio::test]
async fn the_warm_up_sends_the_runs_think() {
    let h = stub(oracle_config()).await;
    let c = client(&h);
    let mut reasons = Vec::new();
    for think in [None, Some(false)] {
        let settings = RunSettings {
            think,
            ..RunSettings::default()
        };
        let mut info = preflight::check_model(&c, &h.base_url(), "thinking", true)
            .await
            .expect("model");
        preflight::warm_up(&c, &settings, &mut info)
            .await
            .expect("warm-up");
        let call = info.warmup.expect("warm-up call");
        reasons.push(call.timings.done_reason);
    }
    assert_eq!(
        reasons,
        [Some("length".to_string()), Some("stop".to_string())],
        "thinks by default, not with think off"
    );
}
