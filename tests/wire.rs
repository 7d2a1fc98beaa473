//! The wire end to end over real loopback HTTP: the client against the stub, every fault and
//! misbehaviour landing in its bucket, retries only where they belong, and the oracle and flawed
//! models played through a small agent loop.

use passk::domain::{NearMiss, Task, Trajectory, TrajectoryCall, TrajectoryTurn};
use passk::seed::CallSeed;
use passk::trace::{CallFormat, FailureMode};
use passk::wire::api::{ChatMessage, ChatOptions, ChatRequest};
use passk::wire::client::{ChatResult, Client, ClientConfig};
use passk::wire::outcome::CallOutcome;
use passk::wire::tool_call::extract;
use passk_stub::{
    Behaviour, FaultKind, FaultRates, Mistake, MistakePlan, ModelSpec, ScriptBook, StubConfig,
    StubHandle, StubServer, TextStyle,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

const TOOLS: [&str; 4] = ["find_customer", "list_orders", "get_order", "cancel_order"];
const ROUTER_PROMPT: &str = "Classify the message. Labels: order_status, cancel_order, other.";
const CALL_CAP: usize = 10;

fn tools() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|name| {
            let arg = match *name {
                "find_customer" => "query",
                "list_orders" => "customer_id",
                _ => "order_id",
            };
            json!({"type": "function", "function": {"name": name, "description": "d",
                "parameters": {"type": "object", "properties": {arg: {"type": "string", "description": "an id"}},
                "required": [arg]}}})
        })
        .collect()
}

fn known() -> Vec<String> {
    TOOLS.map(String::from).to_vec()
}

fn call(tool: &str, args: Value) -> TrajectoryCall {
    TrajectoryCall {
        tool: tool.to_string(),
        args: args.as_object().cloned().unwrap_or_default(),
    }
}

/// A two-turn task: look up an order, then cancel it.
pub(crate) fn task(id: &str) -> Task {
    let gold = Trajectory {
        turns: vec![
            TrajectoryTurn {
                calls: vec![
                    call("find_customer", json!({"query": "ann@example.org"})),
                    call("list_orders", json!({"customer_id": "C1"})),
                ],
                reply: format!("Order A{id} is processing."),
            },
            TrajectoryTurn {
                calls: vec![call("cancel_order", json!({"order_id": format!("A{id}")}))],
                reply: "Cancelled.".into(),
            },
        ],
    };
    let mut wrong = gold.clone();
    wrong.turns[1].calls[0] = call("cancel_order", json!({"order_id": "B9"}));
    Task {
        id: id.to_string(),
        category: "multi-turn".to_string(),
        customer: vec![
            format!("Hi, I am Ann ({id}). Where is my order?"),
            "Please cancel it.".to_string(),
        ],
        gold,
        near_misses: vec![NearMiss {
            name: "cancels the wrong order".into(),
            expect: FailureMode::WrongAction,
            trajectory: wrong,
        }],
        intents: vec!["order_status".to_string(), "cancel_order".to_string()],
        needs_tools: true,
    }
}

pub(crate) fn book(tasks: &[Task]) -> ScriptBook {
    let mut b = ScriptBook::new();
    for t in tasks {
        b.add_conversation(&t.customer[0], &t.gold, &t.customer, &t.intents);
    }
    b.add_router(
        ROUTER_PROMPT,
        &[(
            "Where is my parcel?".to_string(),
            "order_status".to_string(),
        )],
    );
    b
}

pub(crate) async fn stub(config: StubConfig) -> StubHandle {
    StubServer::start(config).await.expect("stub starts")
}

pub(crate) fn client(h: &StubHandle, retries: u32, timeout_ms: u64) -> Client {
    Client::new(ClientConfig {
        base_url: h.base_url(),
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_millis(timeout_ms),
        retries,
        backoff: Duration::from_millis(1),
    })
    .expect("client")
}

pub(crate) fn request(model: &str, messages: Vec<ChatMessage>, seed: i64) -> ChatRequest {
    ChatRequest {
        model: model.to_string(),
        messages,
        tools: Some(tools()),
        stream: false,
        options: ChatOptions {
            temperature: Some(0.0),
            seed: Some(seed),
            num_ctx: Some(16384),
            ..ChatOptions::default()
        },
        keep_alive: Some("15m".to_string()),
        ..ChatRequest::default()
    }
}

fn outcomes(r: &ChatResult) -> Vec<CallOutcome> {
    r.attempts.iter().map(|a| a.outcome).collect()
}

/// What a small agent loop saw in one conversation.
#[derive(Debug, Default)]
struct Played {
    accepted: Vec<(String, Value)>,
    rejected: u32,
    formats: Vec<CallFormat>,
    replies: Vec<Option<String>>,
    hit_cap: bool,
}

/// Plays a conversation like the runner does, with a toy environment that rejects unknown tools,
/// non-string arguments and example ids.
async fn play(c: &Client, model: &str, task: &Task, trial: u32, router_notes: bool) -> Played {
    let mut p = Played::default();
    let mut messages = vec![ChatMessage::system("You are a store agent.")];
    for (turn, customer) in task.customer.iter().enumerate() {
        if router_notes {
            messages.push(ChatMessage::system(format!(
                "intent router: {}",
                task.intents[turn]
            )));
        }
        messages.push(ChatMessage::user(customer.clone()));
        let mut reply = None;
        for step in 0..CALL_CAP {
            let seed = CallSeed {
                base: 1,
                trial,
                turn: turn as u32,
                step: step as u32,
            }
            .encode();
            let r = c.chat(&request(model, messages.clone(), seed)).await;
            assert_eq!(r.outcome, CallOutcome::Ok, "{:?}", r.attempts);
            let msg = r.response.and_then(|r| r.message).expect("message");
            let calls = extract(
                &passk::wire::ollama::convert::neutral_message(&msg),
                &known(),
            );
            messages.push(msg.clone());
            if calls.is_empty() {
                reply = Some(msg.content.clone());
                break;
            }
            for call in calls {
                p.formats.push(call.format);
                let args = call.arguments.as_object().cloned().unwrap_or_default();
                let error = if call.format == CallFormat::Malformed {
                    call.error.clone()
                } else if !TOOLS.contains(&call.name.as_str()) {
                    Some(format!("unknown tool {}", call.name))
                } else if args.values().any(|v| !v.is_string()) {
                    Some("argument must be a string".to_string())
                } else if args
                    .values()
                    .any(|v| v.as_str().is_some_and(|s| s.starts_with("EXAMPLE-")))
                {
                    Some("no such record".to_string())
                } else {
                    None
                };
                let content = match &error {
                    Some(e) => {
                        p.rejected += 1;
                        format!("error: {e}")
                    }
                    None => {
                        p.accepted.push((call.name.clone(), call.arguments.clone()));
                        "{\"ok\": true}".to_string()
                    }
                };
                messages.push(ChatMessage::tool(
                    call.name.clone(),
                    call.id.clone(),
                    content,
                ));
            }
        }
        p.replies.push(reply.clone());
        if reply.is_none() {
            p.hit_cap = true;
            break;
        }
    }
    p
}

fn calls_of(t: &Trajectory) -> Vec<(String, Value)> {
    t.turns
        .iter()
        .flat_map(|t| {
            t.calls
                .iter()
                .map(|c| (c.tool.clone(), Value::Object(c.args.clone())))
        })
        .collect()
}

fn replies_of(t: &Trajectory) -> Vec<Option<String>> {
    t.turns.iter().map(|t| Some(t.reply.clone())).collect()
}

#[tokio::test]
async fn oracle_replays_the_gold_trajectory_with_timings() {
    let tasks = [task("1"), task("2")];
    let config = StubConfig::with_script(book(&tasks))
        .model("oracle-model", Behaviour::Oracle)
        .model("m", Behaviour::Oracle);
    let h = stub(config).await;
    let c = client(&h, 0, 5_000);
    for t in &tasks {
        for notes in [false, true] {
            let p = play(&c, "oracle-model", t, 0, notes).await;
            assert_eq!(p.accepted, calls_of(&t.gold));
            assert_eq!(p.replies, replies_of(&t.gold));
            assert_eq!(p.rejected, 0);
            assert!(p.formats.iter().all(|f| *f == CallFormat::Native));
        }
    }
    let r = c
        .chat(&request(
            "m",
            vec![ChatMessage::user(tasks[0].customer[0].clone())],
            0,
        ))
        .await;
    let resp = r.response.expect("response");
    let t = &resp.timings;
    assert_eq!(t.done_reason.as_deref(), Some("stop"));
    let total = t.total_duration.expect("total");
    let parts = t.load_duration.unwrap_or(0)
        + t.prompt_eval_duration.unwrap_or(0)
        + t.eval_duration.unwrap_or(0);
    assert!(total >= parts, "{total} < {parts}");
    assert!(
        t.prompt_eval_count.is_some_and(|n| n > 100),
        "tools are counted in the prompt"
    );
    let tc = &resp.message.expect("message").tool_calls[0];
    assert!(tc.id.as_deref().is_some_and(|id| id.starts_with("call_")));
    assert_eq!(tc.function.index, Some(0));
    assert!(r.ttfb_s.is_some_and(|s| s <= r.wall_s));
}

#[tokio::test]
async fn router_toolless_and_unknown_conversations() {
    let tasks = [task("1")];
    let h = stub(StubConfig::with_script(book(&tasks)).model("m", Behaviour::Oracle)).await;
    let c = client(&h, 0, 5_000);
    let ask = |msgs: Vec<ChatMessage>, tools: bool| {
        let mut r = request("m", msgs, 0);
        if !tools {
            r.tools = None;
        }
        r
    };
    let content = |r: ChatResult| {
        r.response
            .and_then(|r| r.message)
            .map(|m| m.content)
            .unwrap_or_default()
    };
    let router = ask(
        vec![
            ChatMessage::system(ROUTER_PROMPT),
            ChatMessage::user("Where is my parcel?"),
        ],
        false,
    );
    assert_eq!(content(c.chat(&router).await), "order_status");
    let store_msg = ask(
        vec![
            ChatMessage::system(ROUTER_PROMPT),
            ChatMessage::user("Please cancel it."),
        ],
        false,
    );
    assert_eq!(content(c.chat(&store_msg).await), "cancel_order");
    let toolless = ask(
        vec![
            ChatMessage::user(tasks[0].customer[0].clone()),
            ChatMessage::assistant("x"),
            ChatMessage::user("Please cancel it."),
        ],
        false,
    );
    assert_eq!(content(c.chat(&toolless).await), "Cancelled.");
    // A conversation the stub did not load is refused loudly, never answered plausibly.
    let unknown = c
        .chat(&ask(vec![ChatMessage::user("Sing me a song")], true))
        .await;
    assert_eq!(unknown.outcome, CallOutcome::Protocol);
    assert_eq!(unknown.status(), Some(409));
    assert!(
        unknown
            .error()
            .is_some_and(|e| e.contains("restart `passk serve-stub`")),
        "{:?}",
        unknown.error()
    );
}

#[tokio::test]
async fn recoverable_misbehaviours_still_reach_the_gold_end() {
    let tasks = [task("1")];
    let t = &tasks[0];
    let cases: Vec<(&str, Behaviour, u32, Option<CallFormat>)> = vec![
        (
            "bare",
            Behaviour::TextCalls(TextStyle::Bare),
            0,
            Some(CallFormat::Text),
        ),
        (
            "fenced",
            Behaviour::TextCalls(TextStyle::Fenced),
            0,
            Some(CallFormat::Text),
        ),
        (
            "tagged",
            Behaviour::TextCalls(TextStyle::Tagged),
            0,
            Some(CallFormat::Text),
        ),
        (
            "params",
            Behaviour::TextCalls(TextStyle::Parameters),
            0,
            Some(CallFormat::Text),
        ),
        (
            "string-args",
            Behaviour::TextCalls(TextStyle::StringArguments),
            0,
            Some(CallFormat::Text),
        ),
        (
            "batched",
            Behaviour::TextCalls(TextStyle::Batched),
            0,
            Some(CallFormat::Text),
        ),
        (
            "mixed",
            Behaviour::TextCalls(TextStyle::Mixed),
            0,
            Some(CallFormat::Text),
        ),
        ("schema", Behaviour::SchemaPaste, 1, None),
        ("example", Behaviour::ExampleValue, 1, None),
        ("invented", Behaviour::InventedTool, 1, None),
    ];
    let mut config = StubConfig::with_script(book(&tasks));
    for (name, b, _, _) in &cases {
        config = config.model(name, b.clone());
    }
    let h = stub(config).await;
    let c = client(&h, 0, 5_000);
    for (name, _, rejected, format) in &cases {
        let p = play(&c, name, t, 0, false).await;
        assert_eq!(p.accepted, calls_of(&t.gold), "{name}");
        assert_eq!(p.replies, replies_of(&t.gold), "{name}");
        assert_eq!(p.rejected, *rejected, "{name}");
        if let Some(f) = format {
            assert!(p.formats.iter().all(|x| x == f), "{name}: {:?}", p.formats);
        }
    }
    let batched = play(&c, "batched", t, 0, false).await;
    assert_eq!(batched.formats.len(), 3, "two calls in one reply, then one");
}

#[tokio::test]
async fn never_answering_hits_the_call_cap() {
    let tasks = [task("1")];
    let h = stub(StubConfig::with_script(book(&tasks)).model("loop", Behaviour::NeverAnswer)).await;
    let c = client(&h, 0, 5_000);
    let p = play(&c, "loop", &tasks[0], 0, false).await;
    assert!(p.hit_cap);
    assert_eq!(p.replies, vec![None]);
    assert_eq!(h.requests("loop"), CALL_CAP as u64);
}

#[tokio::test]
async fn the_flawed_model_follows_its_mistake_plan() {
    let tasks: Vec<Task> = (0..8).map(|i| task(&i.to_string())).collect();
    let plan = MistakePlan::new(&tasks, 3, 11, 0.6);
    let mut config = StubConfig::with_script(book(&tasks))
        .model("flawed", Behaviour::Flawed(plan.clone().into()));
    config.script = std::sync::Arc::new(book(&tasks));
    let h = stub(config).await;
    let c = client(&h, 0, 5_000);
    let expected = plan.expected();
    assert_eq!(expected.len(), 24);
    let mut seen = BTreeMap::new();
    for e in &expected {
        let t = tasks.iter().find(|t| t.id == e.task).expect("task");
        let p = play(&c, "flawed", t, e.trial, false).await;
        let m = plan.mistake(&e.task, e.trial);
        *seen
            .entry(m.map_or("none".to_string(), |m| {
                format!("{:?}", std::mem::discriminant(m))
            }))
            .or_insert(0) += 1;
        match m {
            None => assert_eq!(
                (p.accepted.clone(), p.rejected),
                (calls_of(&t.gold), 0),
                "{e:?}"
            ),
            Some(Mistake::NearMiss { index, .. }) => {
                assert_eq!(
                    p.accepted,
                    calls_of(&t.near_misses[*index].trajectory),
                    "{e:?}"
                );
                assert!(!e.passes && e.failure_mode == Some(FailureMode::WrongAction));
            }
            Some(Mistake::LoopCap) => assert!(
                p.hit_cap && e.failure_mode == Some(FailureMode::LoopCap),
                "{e:?}"
            ),
            Some(Mistake::SchemaPaste { .. } | Mistake::ExampleValue { .. }) => {
                assert_eq!(p.accepted, calls_of(&t.gold), "{e:?}");
                assert_eq!(p.rejected, e.extra_rejected, "{e:?}");
                assert!(e.passes);
            }
        }
    }
    assert!(seen.len() >= 3, "several mistake kinds exercised: {seen:?}");
}

/// The request timeout of [`first_request_with`]: what a hung first attempt waits, and what every
/// attempt may take; generous, so that a loaded machine cannot turn the attempt that must
/// succeed into another timeout.
const FIRST_REQUEST_TIMEOUT_MS: u64 = 2_000;

/// One request of `model` against a stub whose first request gets `fault`.
async fn first_request_with(
    fault: FaultKind,
    retries: u32,
    stream: bool,
) -> (ChatResult, StubHandle) {
    let tasks = [task("1")];
    let mut config = StubConfig::with_script(book(&tasks)).model(
        "m",
        ModelSpec::new(Behaviour::Oracle).with_fault_script(vec![fault]),
    );
    config.hang = Duration::from_secs(30);
    let h = stub(config).await;
    let c = client(&h, retries, FIRST_REQUEST_TIMEOUT_MS);
    let mut req = request(
        "m",
        vec![ChatMessage::user(tasks[0].customer[0].clone())],
        0,
    );
    req.stream = stream;
    let r = c.chat(&req).await;
    (r, h)
}

#[tokio::test]
async fn transport_faults_are_retried_and_recorded() {
    for (fault, stream, status) in [
        (FaultKind::Reset, false, None),
        (FaultKind::Hang, false, None),
        (FaultKind::Http500, false, Some(500)),
        (FaultKind::Http503, false, Some(503)),
        (FaultKind::StreamError, true, Some(200)),
        (FaultKind::StreamError, false, Some(500)),
    ] {
        let (r, h) = first_request_with(fault, 2, stream).await;
        assert_eq!(
            outcomes(&r),
            vec![CallOutcome::Transport, CallOutcome::Ok],
            "{fault:?} stream={stream}"
        );
        assert_eq!(r.outcome, CallOutcome::Ok);
        assert_eq!(r.attempts[0].status, status, "{fault:?}");
        assert!(r.attempts[0].error.is_some());
        assert!(r.response.is_some());
        assert_eq!(h.injected().get(&fault), Some(&1));
        assert_eq!(h.requests("m"), 2);
        if fault == FaultKind::Hang {
            assert!(
                r.attempts[0]
                    .error
                    .as_deref()
                    .is_some_and(|e| e.contains(&format!(
                        "timed out after {:.3} s",
                        FIRST_REQUEST_TIMEOUT_MS as f64 / 1000.0
                    )))
            );
        }
    }
}

#[tokio::test]
async fn malformed_bodies_are_protocol_and_cut_connections_transport_both_retried() {
    for (fault, stream, bucket) in [
        (FaultKind::TruncatedBody, false, CallOutcome::Transport),
        (FaultKind::NonJsonBody, false, CallOutcome::Protocol),
        (FaultKind::TruncatedBody, true, CallOutcome::Transport),
        (FaultKind::NonJsonBody, true, CallOutcome::Protocol),
    ] {
        let (r, h) = first_request_with(fault, 1, stream).await;
        assert_eq!(
            outcomes(&r),
            vec![bucket, CallOutcome::Ok],
            "{fault:?} stream={stream}: {:?}",
            r.attempts
        );
        assert_eq!(h.requests("m"), 2);
    }
}

#[tokio::test]
async fn model_not_found_and_no_tools_are_final_protocol_errors() {
    for (fault, status, text) in [
        (FaultKind::NotFound, 404, "not found"),
        (FaultKind::NoTools, 400, "does not support tools"),
    ] {
        let (r, h) = first_request_with(fault, 3, false).await;
        assert_eq!(outcomes(&r), vec![CallOutcome::Protocol], "{fault:?}");
        assert_eq!(r.outcome, CallOutcome::Protocol);
        assert_eq!(r.status(), Some(status));
        assert!(
            r.error().is_some_and(|e| e.contains(text)),
            "{:?}",
            r.error()
        );
        assert!(r.response.is_none());
        assert_eq!(h.requests("m"), 1, "never retried");
    }
    // A model the stub does not serve at all.
    let h = stub(StubConfig {
        default: None,
        ..StubConfig::default()
    })
    .await;
    let r = client(&h, 3, 1_000)
        .chat(&request("qwen9:1b", vec![ChatMessage::user("hi")], 0))
        .await;
    assert_eq!(
        (outcomes(&r), r.status()),
        (vec![CallOutcome::Protocol], Some(404))
    );
}

#[tokio::test]
async fn length_is_an_ok_call_with_its_done_reason() {
    let (r, _h) = first_request_with(FaultKind::Length, 0, false).await;
    assert_eq!(outcomes(&r), vec![CallOutcome::Ok]);
    let resp = r.response.expect("response");
    assert_eq!(resp.timings.done_reason.as_deref(), Some("length"));
    // The oracle's first reply is a call: cut short after its `<tool_call>` tag, Ollama's
    // parser drops it, and nothing of it reaches the client.
    let message = resp.message.expect("message");
    assert!(message.tool_calls.is_empty(), "a cut call is no call");
    assert!(
        !message.content.contains("<tool_call>"),
        "{}",
        message.content
    );
}

#[tokio::test]
async fn retries_are_bounded_and_faults_deterministic() {
    let h = stub(StubConfig::default().model(
        "m",
        ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
            http500: 1.0,
            ..FaultRates::default()
        }),
    ))
    .await;
    let r = client(&h, 2, 1_000)
        .chat(&request("m", vec![ChatMessage::user("hi")], 0))
        .await;
    assert_eq!(outcomes(&r), vec![CallOutcome::Transport; 3]);
    assert_eq!(r.outcome, CallOutcome::Transport);
    assert!(r.response.is_none());
    assert_eq!(h.injected().get(&FaultKind::Http500), Some(&3));

    let mut runs = Vec::new();
    for _ in 0..2 {
        let rates = FaultRates {
            http500: 0.2,
            http503: 0.2,
            bad_body: 0.2,
            ..FaultRates::default()
        };
        let h = stub(
            StubConfig {
                seed: 5,
                ..StubConfig::default()
            }
            .model("m", Behaviour::Faulty(rates)),
        )
        .await;
        let c = client(&h, 0, 1_000);
        let mut seq = Vec::new();
        for _ in 0..30 {
            seq.push(
                c.chat(&request("m", vec![ChatMessage::user("hi")], 0))
                    .await
                    .attempts[0]
                    .status,
            );
        }
        runs.push((seq, h.injected()));
    }
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0].1.values().sum::<u64>() > 5, "{:?}", runs[0].1);
}

#[tokio::test]
async fn a_refused_connection_is_transport() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let c = Client::new(ClientConfig {
        base_url: format!("http://127.0.0.1:{port}"),
        connect_timeout: Duration::from_millis(500),
        request_timeout: Duration::from_millis(500),
        retries: 1,
        backoff: Duration::from_millis(1),
    })
    .expect("client");
    let r = c
        .chat(&request("m", vec![ChatMessage::user("hi")], 0))
        .await;
    assert_eq!(outcomes(&r), vec![CallOutcome::Transport; 2]);
    assert!(c.version().await.is_err());
}

#[tokio::test]
async fn streaming_gives_the_same_answer_and_first_token_time() {
    let tasks = [task("1")];
    let h = stub(StubConfig::with_script(book(&tasks)).model("m", Behaviour::Oracle)).await;
    let c = client(&h, 0, 5_000);
    let mut req = request(
        "m",
        vec![ChatMessage::user(tasks[0].customer[0].clone())],
        0,
    );
    let plain = c.chat(&req).await.response.expect("plain");
    req.stream = true;
    let s = c.chat_stream(&req).await;
    let streamed = s.result.response.expect("streamed");
    assert_eq!(
        streamed.message.as_ref().map(|m| &m.tool_calls[0].function),
        plain.message.as_ref().map(|m| &m.tool_calls[0].function)
    );
    assert!(streamed.timings.total_duration.is_some() && streamed.done);
    let ft = s.first_token_s.expect("first token");
    assert!(s.result.ttfb_s.is_some_and(|t| t <= ft) && ft <= s.result.wall_s);
}

#[tokio::test]
async fn info_endpoints_answer_like_ollama() {
    let h = stub(StubConfig::default().model("qwen2.5-coder:7b", Behaviour::Oracle)).await;
    let c = client(&h, 0, 5_000);
    assert_eq!(
        c.version().await.expect("version").version,
        "0.33.0-passk-stub"
    );
    let show = c.show("qwen2.5-coder:7b").await.expect("show");
    assert!(show.supports_tools());
    assert_eq!(show.context_length(), Some(32768));
    assert_eq!(
        (
            show.details.family.as_str(),
            show.details.parameter_size.as_str()
        ),
        ("stub", "7B")
    );
    assert_eq!(show.details.quantization_level, "F16");
    let tags = c.tags().await.expect("tags");
    let m = tags
        .models
        .iter()
        .find(|m| m.name == "qwen2.5-coder:7b")
        .expect("listed");
    assert_eq!(m.digest.len(), 64);
    assert!(c.ps().await.expect("ps").models.is_empty());
    let _ = c
        .chat(&request(
            "qwen2.5-coder:7b",
            vec![ChatMessage::user("hi")],
            0,
        ))
        .await;
    let ps = c.ps().await.expect("ps");
    assert_eq!(ps.models.len(), 1);
    assert_eq!(ps.models[0].size, ps.models[0].size_vram);
    assert_eq!(ps.models[0].context_length, Some(16384));

    let closed = stub(StubConfig {
        default: None,
        ..StubConfig::default()
    })
    .await;
    let err = client(&closed, 0, 5_000)
        .show("nope:1b")
        .await
        .expect_err("404");
    assert_eq!(err.status(), Some(404));
}

#[tokio::test]
async fn pull_streams_progress_through_ollama_rs() {
    let h = stub(StubConfig::default().model("qwen2.5-coder:3b", Behaviour::Oracle)).await;
    let c = client(&h, 0, 5_000);
    let mut lines = Vec::new();
    c.pull("qwen2.5-coder:3b", |p| lines.push(p.clone()))
        .await
        .expect("pull");
    assert_eq!(
        lines.first().map(|p| p.status.as_str()),
        Some("pulling manifest")
    );
    assert_eq!(lines.last().map(|p| p.status.as_str()), Some("success"));
    assert!(
        lines
            .iter()
            .any(|p| p.completed.is_some() && p.total.is_some())
    );
    assert!(
        c.tags()
            .await
            .expect("tags")
            .models
            .iter()
            .any(|m| m.name == "qwen2.5-coder:3b")
    );

    let closed = stub(StubConfig {
        default: None,
        ..StubConfig::default()
    })
    .await;
    let err = client(&closed, 0, 5_000)
        .pull("nope:1b", |_| {})
        .await
        .expect_err("no such model");
    assert!(err.to_string().contains("file does not exist"), "{err}");
}
