//! The stub serves concurrent requests as Ollama does: `num_parallel` slots per model
//! (`OLLAMA_NUM_PARALLEL`), further requests waiting for a slot (the wait counted in
//! `total_duration`, not `load_duration`), requests for a model not loaded that arrive during a
//! load waiting in a pending queue of `max_queue` (`OLLAMA_MAX_QUEUE`), one more getting Ollama's
//! 503, which the client records as a transport failure and retries, and a loaded model served at
//! once whatever is loading.

use super::wire::{book, client, request, stub, task};
use passk::wire::api::{ChatMessage, ChatRequest, Timings};
use passk::wire::client::{ChatResult, Client, ClientConfig};
use passk::wire::outcome::CallOutcome;
use passk_stub::{Behaviour, MAX_QUEUE_ERROR, StubConfig, StubHandle};
use std::time::Duration;

/// A stub whose model time (prefill and decode, about 0.3 s a call) dominates its overhead.
fn slow(num_parallel: usize, max_queue: usize) -> StubConfig {
    StubConfig {
        num_parallel,
        max_queue,
        prefill_tok_per_s: 2_000.0,
        decode_tok_per_s: 100.0,
        ..StubConfig::with_script(book(&[task("1")]))
    }
    .model("m", Behaviour::Oracle)
    .model("a", Behaviour::Oracle)
    .model("b", Behaviour::Oracle)
}

/// A one-slot stub whose models take `cold` to load, with a pending queue of `max_queue`.
async fn loading_slowly(cold: Duration, max_queue: usize) -> StubHandle {
    stub(StubConfig {
        cold_load: cold,
        ..slow(1, max_queue)
    })
    .await
}

fn first_turn() -> ChatRequest {
    request(
        "m",
        vec![ChatMessage::user(task("1").customer[0].clone())],
        0,
    )
}

fn timings(r: &ChatResult) -> Timings {
    r.response.as_ref().expect("an answer").timings.clone()
}

/// Prefill and decode time the stub reports, nanoseconds.
fn model_ns(t: &Timings) -> u64 {
    t.prompt_eval_duration.unwrap_or(0) + t.eval_duration.unwrap_or(0)
}

/// `n` identical chat calls sent at once; their results and the client span from the first start
/// to the last end, nanoseconds.
async fn at_once(c: &Client, n: usize) -> (Vec<ChatResult>, u64) {
    let req = first_turn();
    let results = futures_util::future::join_all((0..n).map(|_| c.chat(&req))).await;
    let start = results.iter().map(|r| r.started_unix_ms).min().unwrap_or(0);
    let end = results
        .iter()
        .map(|r| r.started_unix_ms as f64 + r.wall_s * 1e3)
        .fold(0.0, f64::max);
    let span_ns = ((end - start as f64).max(0.0) * 1e6) as u64;
    (results, span_ns)
}

/// Warms the model so that no call below waits for a cold load.
async fn warm(c: &Client) {
    assert_eq!(c.chat(&first_turn()).await.outcome, CallOutcome::Ok);
}

#[tokio::test]
async fn one_slot_serves_concurrent_requests_one_after_the_other() {
    let h = stub(slow(1, 512)).await;
    let c = client(&h, 0, 30_000);
    warm(&c).await;
    let (results, span_ns) = at_once(&c, 2).await;
    let ts: Vec<Timings> = results.iter().map(timings).collect();
    let model: u64 = ts.iter().map(model_ns).sum();
    assert!(model > 200_000_000, "model time dominates: {model} ns");
    // Two generations that cannot overlap fit in the span only one after the other (1 ms slack
    // for the client's millisecond start times).
    assert!(
        span_ns + 1_000_000 >= model,
        "span {span_ns} ns < both model times {model} ns"
    );
    assert_eq!(h.peak_slots("m"), 1);
    // The slot wait shows in total_duration, never in load_duration (the model was loaded).
    let warm_load = StubConfig::default().load.as_nanos() as u64;
    assert!(
        ts.iter().all(|t| t.load_duration == Some(warm_load)),
        "{ts:?}"
    );
}

#[tokio::test]
async fn four_slots_serve_four_requests_at_once() {
    // Decoding five times slower than `slow`'s, so that all four requests reach a slot while the
    // others still hold theirs even when a loaded machine sends them slowly.
    let h = stub(StubConfig {
        decode_tok_per_s: 20.0,
        ..slow(4, 512)
    })
    .await;
    let c = client(&h, 0, 30_000);
    warm(&c).await;
    let (results, _) = at_once(&c, 4).await;
    assert!(results.iter().all(|r| r.outcome == CallOutcome::Ok));
    assert_eq!(h.peak_slots("m"), 4, "all four generated at once");
    // Five at once: the fifth waits for a slot, the peak stays at the slot count.
    let (results, _) = at_once(&c, 5).await;
    assert!(results.iter().all(|r| r.outcome == CallOutcome::Ok));
    assert_eq!(h.peak_slots("m"), 4);
}

/// Waits (polling, up to 10 s) until `ok` holds of the stub.
async fn until(h: &StubHandle, ok: impl Fn(&StubHandle) -> bool) {
    for _ in 0..1_000 {
        if ok(h) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the stub never reached the expected state");
}

#[tokio::test]
async fn a_full_pending_queue_is_refused_with_ollamas_503_and_retried() {
    let h = loading_slowly(Duration::from_secs(2), 1).await;
    let c = client(&h, 0, 30_000);
    let req = first_turn();
    // The first call loads the model; the second waits in the pending queue, which is then full.
    let loading = tokio::spawn({
        let (c, req) = (c.clone(), req.clone());
        async move { c.chat(&req).await }
    });
    until(&h, |h| h.requests("m") == 1).await;
    let queued = tokio::spawn({
        let (c, req) = (c.clone(), req.clone());
        async move { c.chat(&req).await }
    });
    until(&h, |h| h.pending() == 1).await;

    let refused = c.chat(&req).await;
    assert_eq!(refused.outcome, CallOutcome::Transport);
    assert_eq!(refused.attempts[0].status, Some(503));
    assert_eq!(refused.attempts[0].error.as_deref(), Some(MAX_QUEUE_ERROR));

    // With retries the same call gets through once the load has ended.
    let patient = Client::new(ClientConfig {
        retries: 4,
        backoff: Duration::from_millis(500),
        ..ClientConfig::new(h.base_url())
    })
    .expect("client");
    let retried = patient.chat(&req).await;
    let first = &retried.attempts[0];
    assert_eq!(
        (first.outcome, first.status),
        (CallOutcome::Transport, Some(503))
    );
    assert_eq!(retried.outcome, CallOutcome::Ok, "{:?}", retried.attempts);

    // Time in the pending queue is load time, as Ollama reports it.
    let queued = timings(&queued.await.expect("joined"));
    let load = timings(&loading.await.expect("joined")).load_duration;
    assert_eq!(load, Some(2_000_000_000));
    assert!(queued.load_duration > Some(StubConfig::default().load.as_nanos() as u64));
    assert_eq!(h.pending(), 0);
}

/// The banner `passk serve-stub` prints with these flags and environment (the process is killed).
fn banner(args: &[&str], env: &[(&str, &str)]) -> String {
    use std::io::{BufRead, BufReader};
    let mut cmd = super::util::passk();
    cmd.args(["serve-stub", "--port", "0"]).args(args);
    cmd.env_remove("OLLAMA_NUM_PARALLEL")
        .env_remove("OLLAMA_MAX_QUEUE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn passk");
    let mut text = String::new();
    let stderr = child.stderr.take().expect("stderr");
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("a line");
        text.push_str(&line);
        text.push('\n');
        if line.contains("listening") {
            break;
        }
    }
    child.kill().expect("kill the stub");
    let _ = child.wait();
    text
}

#[test]
fn serve_stub_reads_its_slots_as_ollama_reads_its_environment() {
    let default = banner(&[], &[]);
    assert!(
        default.contains("num_parallel 1, max_queue 512"),
        "{default}"
    );
    let env = [
        ("OLLAMA_NUM_PARALLEL", " \"3\" "),
        ("OLLAMA_MAX_QUEUE", "7"),
    ];
    let from_env = banner(&[], &env);
    assert!(
        from_env.contains("num_parallel 3, max_queue 7"),
        "{from_env}"
    );
    let flags = banner(&["--num-parallel", "4", "--max-queue", "0"], &env);
    assert!(flags.contains("num_parallel 4, max_queue 0"), "{flags}");
    let bad = banner(
        &[],
        &[("OLLAMA_NUM_PARALLEL", "two"), ("OLLAMA_MAX_QUEUE", "0")],
    );
    assert!(
        bad.contains("OLLAMA_NUM_PARALLEL=\"two\" is not a number")
            && bad.contains("num_parallel 1, max_queue 0"),
        "{bad}"
    );
}

#[tokio::test]
async fn a_client_that_gives_up_leaves_the_queue() {
    let h = loading_slowly(Duration::from_secs(3), 1).await;
    let req = first_turn();
    let loading = tokio::spawn({
        let (c, req) = (client(&h, 0, 30_000), req.clone());
        async move { c.chat(&req).await }
    });
    until(&h, |h| h.requests("m") == 1).await;
    // This one waits in the pending queue, then its client times out and closes the connection.
    let impatient = client(&h, 0, 300).chat(&req).await;
    assert_eq!(impatient.outcome, CallOutcome::Transport);
    until(&h, |h| h.pending() == 0).await;
    // Its place is free again while the load goes on: the next request queues instead of a 503.
    let next = client(&h, 0, 30_000).chat(&req).await;
    assert_eq!(next.outcome, CallOutcome::Ok, "{:?}", next.attempts);
    let warm_load = StubConfig::default().load.as_nanos() as u64;
    assert!(
        timings(&next).load_duration > Some(warm_load),
        "it waited for the load in progress: {:?}",
        timings(&next)
    );
    assert_eq!(loading.await.expect("joined").outcome, CallOutcome::Ok);
}

/// The first turn's request for model `model`.
fn first_turn_of(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_string(),
        ..first_turn()
    }
}

/// Starts a chat call in the background.
fn spawn_chat(c: &Client, req: ChatRequest) -> tokio::task::JoinHandle<ChatResult> {
    let c = c.clone();
    tokio::spawn(async move { c.chat(&req).await })
}

/// Ollama's scheduler has one pending queue for every model (`server/sched.go`: a single
/// `pendingReqCh` of size `OLLAMA_MAX_QUEUE`, filled by `GetRunner`): with a queue of one, a
/// second request for model a loading waits in it, and a request for another cold model b finds it
/// full and gets the 503.
#[tokio::test]
async fn one_pending_queue_is_shared_by_every_model() {
    let h = loading_slowly(Duration::from_secs(3), 1).await;
    let c = client(&h, 0, 30_000);
    let loading = spawn_chat(&c, first_turn_of("a"));
    until(&h, |h| h.requests("a") == 1).await;
    let queued = spawn_chat(&c, first_turn_of("a"));
    until(&h, |h| h.pending() == 1).await;
    let other = c.chat(&first_turn_of("b")).await;
    assert_eq!(other.attempts[0].status, Some(503), "{:?}", other.attempts);
    assert_eq!(other.attempts[0].error.as_deref(), Some(MAX_QUEUE_ERROR));
    for done in [loading, queued] {
        assert_eq!(done.await.expect("joined").outcome, CallOutcome::Ok);
    }
}

/// `processPending` (`server/sched.go`) schedules one request at a time and waits for a cold
/// model's load before the next: a second cold model loads only after the first, and its
/// `load_duration` includes the wait.
#[tokio::test]
async fn models_load_one_at_a_time() {
    let cold = Duration::from_secs(2);
    let h = loading_slowly(cold, 512).await;
    let c = client(&h, 0, 30_000);
    let started = std::time::Instant::now();
    let first = spawn_chat(&c, first_turn_of("a"));
    until(&h, |h| h.requests("a") == 1).await;
    let second = c.chat(&first_turn_of("b")).await;
    let second_done = started.elapsed();
    let first = first.await.expect("joined");
    assert_eq!(
        (first.outcome, second.outcome),
        (CallOutcome::Ok, CallOutcome::Ok)
    );
    let cold_ns = cold.as_nanos() as u64;
    assert_eq!(timings(&first).load_duration, Some(cold_ns));
    let waited = timings(&second).load_duration.expect("load_duration");
    assert!(
        waited > cold_ns,
        "b's load includes waiting for a's: {waited} ns"
    );
    assert!(
        second_done >= 2 * cold,
        "the two loads followed each other: {second_done:?}"
    );
}

/// `getRunner` (`server/sched.go`) hands a loaded model's runner over at once: a call for it
/// neither waits for another model's load nor needs a place in the pending queue, so with no queue
/// at all it is served while the cold model is refused.
#[tokio::test]
async fn a_loaded_model_is_served_at_once_while_another_loads() {
    let cold = Duration::from_secs(3);
    let h = loading_slowly(cold, 0).await;
    let c = client(&h, 0, 30_000);
    // Model m loads (cold) with the scheduler idle, then a loads for 3 s.
    warm(&c).await;
    let loading = spawn_chat(&c, first_turn_of("a"));
    until(&h, |h| h.requests("a") == 1).await;
    let started = std::time::Instant::now();
    let served = c.chat(&first_turn()).await;
    let took = started.elapsed();
    assert_eq!(served.outcome, CallOutcome::Ok, "{:?}", served.attempts);
    let warm_load = StubConfig::default().load.as_nanos() as u64;
    assert_eq!(timings(&served).load_duration, Some(warm_load));
    assert!(took < cold, "it waited for a's load: {took:?}");
    // Model b is not loaded: it needs the queue, which has no place.
    let refused = c.chat(&first_turn_of("b")).await;
    assert_eq!(
        refused.attempts[0].status,
        Some(503),
        "{:?}",
        refused.attempts
    );
    assert_eq!(loading.await.expect("joined").outcome, CallOutcome::Ok);
}
