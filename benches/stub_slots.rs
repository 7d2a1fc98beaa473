//! The stub's slots have the effect Ollama's `OLLAMA_NUM_PARALLEL` has: 4 clients each making
//! sequential router calls against a model whose time dominates, once with 1 slot and once with 4.
//! With 4 slots the same calls take about a quarter of the wall time (target: at most 0.30x).
//! Run with `cargo bench --bench stub_slots [-- CALLS_PER_CLIENT]`.

use passk::wire::api::{ChatMessage, ChatRequest};
use passk::wire::client::{Client, ClientConfig};
use passk::wire::outcome::CallOutcome;
use passk_stub::{Behaviour, ScriptBook, StubConfig, StubServer};
use std::time::Instant;

const CLIENTS: usize = 4;
const PROMPT: &str = "Label the customer's message: order_status, cancel_order or other.";
const MESSAGE: &str = "Hello, where is the parcel I ordered on Monday? It has not arrived yet.";

/// Wall time of `CLIENTS` clients making `calls` calls each at once, and the mean model time
/// (prefill + decode) the stub reported per call, both in seconds.
async fn measure(num_parallel: usize, calls: usize) -> (f64, f64) {
    let mut book = ScriptBook::new();
    book.add_router(PROMPT, &[(MESSAGE.to_string(), "order_status".to_string())]);
    let config = StubConfig {
        num_parallel,
        prefill_tok_per_s: 500.0,
        decode_tok_per_s: 50.0,
        ..StubConfig::with_script(book)
    }
    .model("router", Behaviour::Oracle);
    let stub = StubServer::start(config).await.expect("stub");
    let client = Client::new(ClientConfig {
        retries: 0,
        ..ClientConfig::new(stub.base_url())
    })
    .expect("client");
    let req = ChatRequest {
        model: "router".to_string(),
        messages: vec![ChatMessage::system(PROMPT), ChatMessage::user(MESSAGE)],
        stream: false,
        ..ChatRequest::default()
    };
    let _ = client.chat(&req).await;
    let started = Instant::now();
    let tasks = (0..CLIENTS).map(|_| {
        let (client, req) = (client.clone(), req.clone());
        tokio::spawn(async move {
            let mut model_ns = 0u64;
            for _ in 0..calls {
                let r = client.chat(&req).await;
                assert_eq!(r.outcome, CallOutcome::Ok, "{:?}", r.attempts);
                let t = r.response.expect("answer").timings;
                model_ns += t.prompt_eval_duration.unwrap_or(0) + t.eval_duration.unwrap_or(0);
            }
            model_ns
        })
    });
    let mut model_ns = 0u64;
    for t in tasks.collect::<Vec<_>>() {
        model_ns += t.await.expect("client task");
    }
    let wall = started.elapsed().as_secs_f64();
    stub.shutdown().await;
    (wall, model_ns as f64 / 1e9 / (CLIENTS * calls) as f64)
}

fn main() {
    let calls: usize = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let (one, model) = runtime.block_on(measure(1, calls));
    let (four, _) = runtime.block_on(measure(4, calls));
    let ratio = four / one;
    println!(
        "stub_slots: {CLIENTS} clients x {calls} calls, model time {:.1} ms a call",
        model * 1e3
    );
    println!("  1 slot:  {one:.2} s");
    println!("  4 slots: {four:.2} s  ({ratio:.3}x; ideal 0.25x)");
    println!(
        "  target <= 0.30x: {}",
        if ratio <= 0.30 { "met" } else { "MISSED" }
    );
}
