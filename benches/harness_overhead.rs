//! Harness overhead per model call: everything passk does around a call that is not the server's
//! own time, measured against the in-process stub over loopback. Target: p50 under 1 ms.
//!
//! For each conversation: (its wall time - the stub's `total_duration` of its calls) / its calls
//! gives the in-loop overhead per call (client, tool execution, grading). Record writing (one
//! fsynced line per conversation) happens after a conversation's clock stops, so it is measured as
//! the run's wall time minus the conversations' wall times, spread over all calls. Also prints the
//! share of the run's wall time spent inside the stub.
//!
//! Run with `cargo bench --bench harness_overhead [-- TRIALS]` (default 5 trials).

use passk::analysis::figures::latency::percentile;
use passk::domain::Domain;
use passk::runner::event::Collect;
use passk::runner::experiment::{self, Experiment};
use passk::runner::settings::{RunSettings, SuiteChoice};
use passk_stub::{Behaviour, ScriptBook, StubConfig, StubServer};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trials: u32 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let store = passk::suites::store::load_store(&root)?;
    let router = passk::suites::router::load_router(&root)?;
    let mut book = ScriptBook::from_suites(store.tasks(), Some(&router));
    book.set_example_values(&store.example_values());
    let rt = tokio::runtime::Runtime::new()?;
    let stub = rt.block_on(StubServer::start(
        StubConfig::with_script(book).model("oracle", Behaviour::Oracle),
    ))?;
    let tmp = std::env::temp_dir().join(format!("passk-bench-{}", std::process::id()));
    let exp = Experiment {
        settings: RunSettings {
            models: vec!["oracle".into()],
            suites: vec![SuiteChoice::Store],
            trials,
            ..RunSettings::default()
        },
        root,
        hosts: vec![stub.base_url()],
        run_dir: tmp.clone(),
        backend: passk::runner::experiment::Backend::Stub,
        experiment_file: None,
        telemetry: true,
        resume: Default::default(),
    };
    let started = Instant::now();
    rt.block_on(experiment::run(
        &exp,
        &Collect::default(),
        &passk::analysis::planning::stopping::SequenceJudge,
        &AtomicBool::new(false),
    ))?;
    let wall = started.elapsed().as_secs_f64();
    let run = passk::analysis::load_run(&tmp)?;
    let _ = std::fs::remove_dir_all(&tmp);

    let mut per_call = Vec::new();
    let (mut calls, mut conv_wall, mut stub_time) = (0usize, 0.0, 0.0);
    for c in &run.conversations {
        let total: f64 = c
            .calls
            .iter()
            .filter_map(|k| k.timings.total_duration.get())
            .map(|ns| ns as f64 / 1e9)
            .sum();
        let n = c.calls.len().max(1);
        per_call.push((c.wall_s - total) / n as f64 * 1e3);
        calls += c.calls.len();
        conv_wall += c.wall_s;
        stub_time += total;
    }
    let writing_per_call = (wall - conv_wall) / calls.max(1) as f64 * 1e3;
    per_call.iter_mut().for_each(|v| *v += writing_per_call);
    per_call.sort_by(f64::total_cmp);
    println!(
        "conversations: {}, model calls: {calls}, run wall time: {wall:.2} s",
        run.conversations.len()
    );
    println!(
        "harness overhead per call (ms): p50 {:.3}, p95 {:.3}, max {:.3} (of which record writing and preflight {:.3} on average)",
        percentile(&per_call, 50.0).unwrap_or(f64::NAN),
        percentile(&per_call, 95.0).unwrap_or(f64::NAN),
        per_call.last().copied().unwrap_or(f64::NAN),
        writing_per_call
    );
    println!(
        "time inside the stub: {stub_time:.2} s of {wall:.2} s ({:.1}%); outside: {:.1}%",
        100.0 * stub_time / wall,
        100.0 * (1.0 - stub_time / wall)
    );
    rt.block_on(stub.shutdown());
    Ok(())
}
