//! Client-side overhead per call against the stub over loopback: client wall time minus the
//! stub's reported `total_duration` (request serialisation, HTTP both ways, response parsing).
//! Target: p50 under 1 ms. Run with `cargo bench --bench wire_overhead [-- CALLS]`.

use passk::domain::{Trajectory, TrajectoryCall, TrajectoryTurn};
use passk::wire::api::{ChatMessage, ChatOptions, ChatRequest};
use passk::wire::client::{Client, ClientConfig};
use passk::wire::outcome::CallOutcome;
use passk_stub::{ScriptBook, StubConfig, StubServer};
use serde_json::{Value, json};
use std::time::Duration;

fn tools() -> Vec<Value> {
    ["find_customer", "list_orders", "get_order", "search_products", "cancel_order", "update_address", "request_return", "create_ticket"]
        .iter()
        .map(|name| {
            json!({"type": "function", "function": {"name": name,
                "description": "Looks things up in the store and returns them as JSON; see the policy for when to use it.",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string",
                "description": "The order number as printed on the receipt, for example ORD-EXAMPLE-1."}},
                "required": ["order_id"]}}})
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = (sorted.len() - 1) as f64 * p / 100.0;
    let (lo, hi) = (idx.floor() as usize, idx.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo as f64)
}

fn main() {
    let calls: usize = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(3000);
    let opening = "Hello, I ordered a lamp last week and I would like to know where it is. My email is ann@example.org.";
    let gold = Trajectory {
        turns: vec![TrajectoryTurn {
            calls: vec![TrajectoryCall {
                tool: "find_customer".to_string(),
                args: json!({"query": "ann@example.org"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            }],
            reply: "Your order ORD-1042 shipped on 2026-05-02 and should arrive on 2026-05-06."
                .to_string(),
        }],
    };
    let mut book = ScriptBook::new();
    book.add_conversation(opening, &gold, &[opening.to_string()], &[]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    runtime.block_on(async move {
        let stub = StubServer::start(StubConfig::with_script(book)).await.expect("stub");
        let client = Client::new(ClientConfig {
            base_url: stub.base_url(),
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(10),
            retries: 0,
            backoff: Duration::from_millis(1),
        })
        .expect("client");
        let req = ChatRequest {
            model: "oracle".to_string(),
            messages: vec![ChatMessage::system("You are the store's support agent. ".repeat(60)), ChatMessage::user(opening)],
            tools: Some(tools()),
            stream: false,
            options: ChatOptions { temperature: Some(0.7), seed: Some(1), num_ctx: Some(16384), num_predict: Some(1024), ..ChatOptions::default() },
            keep_alive: Some("15m".to_string()),
            ..ChatRequest::default()
        };
        for _ in 0..50 {
            let _ = client.chat(&req).await;
        }
        let mut overhead_ms = Vec::with_capacity(calls);
        let mut wall_ms = Vec::with_capacity(calls);
        let started = std::time::Instant::now();
        for _ in 0..calls {
            let r = client.chat(&req).await;
            assert_eq!(r.outcome, CallOutcome::Ok, "{:?}", r.attempts);
            let total_ns = r.response.and_then(|r| r.timings.total_duration).expect("total_duration");
            overhead_ms.push(r.wall_s * 1000.0 - total_ns as f64 / 1e6);
            wall_ms.push(r.wall_s * 1000.0);
        }
        let elapsed = started.elapsed().as_secs_f64();
        overhead_ms.sort_by(f64::total_cmp);
        wall_ms.sort_by(f64::total_cmp);
        let mean = overhead_ms.iter().sum::<f64>() / overhead_ms.len() as f64;
        println!("wire_overhead: {calls} sequential chat calls against the stub on loopback ({elapsed:.2} s)");
        println!(
            "  client overhead (wall - total_duration), ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  mean {mean:.3}",
            percentile(&overhead_ms, 50.0),
            percentile(&overhead_ms, 90.0),
            percentile(&overhead_ms, 99.0)
        );
        println!(
            "  client wall time per call, ms:             p50 {:.3}  p90 {:.3}  p99 {:.3}",
            percentile(&wall_ms, 50.0),
            percentile(&wall_ms, 90.0),
            percentile(&wall_ms, 99.0)
        );
        let p50 = percentile(&overhead_ms, 50.0);
        println!("  target p50 < 1 ms: {}", if p50 < 1.0 { "met" } else { "MISSED" });
        stub.shutdown().await;
    });
}
