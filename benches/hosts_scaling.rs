//! Wall time of one run shared over several servers, and of `--parallel` on one server, against
//! the in-process stub over loopback, with the stub slow enough (by default 20 ms a call) that the
//! model's time dominates. Targets: 4 servers finish in at most 0.30x the wall time of one, and
//! `--parallel 4` in at most 0.30x that of `--parallel 1`; harness overhead per call stays under
//! 1 ms p50 in both.
//!
//! The run is calibration-sized: the store conversations and the router messages, k = 5, one
//! oracle model. Harness overhead per call is each conversation's wall time minus the stub's own
//! `total_duration` of its calls, over its calls (client, tools, grading, and under concurrency the
//! wait for the coordinator to poll it).
//!
//! Each stub has the request slots of the Ollama it stands for: one (`OLLAMA_NUM_PARALLEL=1`, the
//! default) for the single-stream runs and the four servers, four for `--parallel 4`, so that a
//! fifth request would wait for a slot as it would on Ollama.
//!
//! Run with `cargo bench --bench hosts_scaling [-- TRIALS [LOAD_MS]]` (default 5 trials, 20 ms).

use passk::analysis::figures::latency::percentile;
use passk::domain::Domain;
use passk::runner::event::Collect;
use passk::runner::experiment::{self, Experiment};
use passk::runner::settings::{RunSettings, SuiteChoice};
use passk_stub::{Behaviour, ScriptBook, StubConfig, StubHandle, StubServer};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

/// What one run measured.
struct Measured {
    wall_s: f64,
    calls: usize,
    overhead_p50_ms: f64,
}

fn main() -> Result<(), Error> {
    let numbers: Vec<u64> = std::env::args().filter_map(|a| a.parse().ok()).collect();
    let trials = numbers.first().copied().unwrap_or(5) as u32;
    let load = Duration::from_millis(numbers.get(1).copied().unwrap_or(20));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rt = tokio::runtime::Runtime::new()?;
    let start = |n: usize, slots: usize| -> Result<Vec<StubHandle>, Error> {
        (0..n)
            .map(|_| {
                let mut config = stub_config(&root, load)?;
                config.num_parallel = slots;
                Ok(rt.block_on(StubServer::start(config))?)
            })
            .collect()
    };
    println!(
        "store + router, k = {trials}, one oracle model, {} ms a call in the stub",
        load.as_millis()
    );
    let mut results = Vec::new();
    for (servers, parallel) in [(1, 1), (4, 1), (1, 4)] {
        let stubs = start(servers, parallel as usize)?;
        let m = run(&rt, &root, &stubs, parallel, trials)?;
        println!(
            "{servers} server(s) of {parallel} slot(s), --parallel {parallel}: {:.2} s wall, {} calls, harness overhead per call p50 {:.3} ms",
            m.wall_s, m.calls, m.overhead_p50_ms
        );
        for s in stubs {
            rt.block_on(s.shutdown());
        }
        results.push(m);
    }
    let one = results[0].wall_s;
    println!(
        "4 servers / 1 server: {:.2}x (target <= 0.30); --parallel 4 / --parallel 1: {:.2}x (target <= 0.30)",
        results[1].wall_s / one,
        results[2].wall_s / one
    );
    Ok(())
}

/// The stub with the project's store and router suites, an oracle, and `load` per call.
fn stub_config(root: &Path, load: Duration) -> Result<StubConfig, Error> {
    let store = passk::suites::store::load_store(root)?;
    let router = passk::suites::router::load_router(root)?;
    let mut book = ScriptBook::from_suites(store.tasks(), Some(&router));
    book.set_example_values(&store.example_values());
    let mut config = StubConfig::with_script(book).model("oracle", Behaviour::Oracle);
    config.load = load;
    Ok(config)
}

/// One run over `stubs`, `parallel` conversations at once on each.
fn run(
    rt: &tokio::runtime::Runtime,
    root: &Path,
    stubs: &[StubHandle],
    parallel: u32,
    trials: u32,
) -> Result<Measured, Error> {
    let dir = std::env::temp_dir().join(format!(
        "passk-hosts-bench-{}-{}-{parallel}",
        std::process::id(),
        stubs.len()
    ));
    let exp = Experiment {
        settings: RunSettings {
            models: vec!["oracle".into()],
            suites: vec![SuiteChoice::Store, SuiteChoice::Router],
            trials,
            parallel,
            ..RunSettings::default()
        },
        root: root.to_path_buf(),
        hosts: stubs.iter().map(|s| s.base_url()).collect(),
        run_dir: dir.clone(),
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
    let wall_s = started.elapsed().as_secs_f64();
    let loaded = passk::analysis::load_run(&dir)?;
    let _ = std::fs::remove_dir_all(&dir);
    let mut per_call: Vec<f64> = loaded
        .conversations
        .iter()
        .map(|c| {
            let inside: f64 = c
                .calls
                .iter()
                .filter_map(|k| k.timings.total_duration.get())
                .map(|ns| ns as f64 / 1e9)
                .sum();
            (c.wall_s - inside) / c.calls.len().max(1) as f64 * 1e3
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    let calls = loaded
        .conversations
        .iter()
        .map(|c| c.calls.len())
        .sum::<usize>()
        + loaded.router.len();
    Ok(Measured {
        wall_s,
        calls,
        overhead_p50_ms: percentile(&per_call, 50.0).unwrap_or(f64::NAN),
    })
}
