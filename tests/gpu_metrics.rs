//! GPU telemetry of a server on another machine, read from its dcgm-exporter (`--gpu-metrics`):
//! each call carries the exporter's readings and its share of the energy counter, energy per
//! success is reported as for a local GPU, a scrape that fails or a counter that resets never
//! yields a wrong energy, and an exporter that cannot be read refuses the run before any trace.

use crate::util::exporter::{Answer, Exporter, RECORDED, RECORDED_ENERGY_MJ, with_energy};
use crate::util::{self, Stub, output, passk};
use passk::runner::record::{Manifest, Record};
use passk_stub::Behaviour;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Energy the scripted exporter's GPU 1 gains per scrape, millijoules.
const STEP_MJ: u64 = 500;

/// A stub serving `oracle-a`, each call taking 40 ms, so that scrapes fall inside calls.
fn slow_stub() -> Stub {
    stub_with_calls_of(Duration::from_millis(40))
}

/// A stub serving `oracle-a`, each call taking `call`.
fn stub_with_calls_of(call: Duration) -> Stub {
    Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.load = call
    })
}

/// `passk run` on `stub`, GPU read from `metrics`, scraped every 50 ms.
fn run(stub: &Stub, out: &Path, metrics: &str, extra: &str) -> (i32, String, String) {
    let flags = format!(
        "--suite store --tasks L1,L2,W1 --trials 2 --scrape-interval 0.05 --gpu-metrics {}={metrics} {extra}",
        stub.host()
    );
    output(passk().args(util::run_args(stub, out, "oracle-a", &flags)))
}

/// Every model call of the run's conversations.
fn calls(dir: &Path) -> Vec<passk::runner::record::CallRecord> {
    let text = std::fs::read_to_string(dir.join("conversations.jsonl")).expect("records");
    text.lines()
        .filter_map(|l| match serde_json::from_str(l).expect("a record") {
            Record::Conversation(c) => Some(c.calls),
            Record::Router(_) => None,
        })
        .flatten()
        .collect()
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).expect("manifest"))
        .expect("parse manifest")
}

/// The exporter's GPU 1 counter at scrape n, with scrape `fail` answering 500.
fn advancing(fail: Option<u64>) -> impl Fn(u64) -> Answer {
    move |n| match fail {
        Some(f) if n == f => Answer::Status(500),
        _ => Answer::Body(with_energy(1, RECORDED_ENERGY_MJ[1] + n * STEP_MJ)),
    }
}

/// Finds `key` anywhere in a JSON document.
fn find<'a>(v: &'a serde_json::Value, key: &str) -> Vec<&'a serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| {
                let mut here = if k == key { vec![x] } else { Vec::new() };
                here.extend(find(x, key));
                here
            })
            .collect(),
        serde_json::Value::Array(a) => a.iter().flat_map(|x| find(x, key)).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_remote_gpu_is_read_from_its_exporter_call_by_call_with_energy_per_success() {
    // Calls of 250 ms span about five scrapes each, so a call goes unsampled only when the
    // sampler stalls for longer than that (a loaded machine), and the warm-up call leaves the
    // first scrape time to land before the first trial's call.
    let stub = stub_with_calls_of(Duration::from_millis(250));
    // The fourth scrape fails: the reading before it is fresh enough to stand in.
    let exporter = Exporter::start(advancing(Some(3)));
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let metrics = format!("{}#gpu=1", exporter.url());
    let (code, _, stderr) = run(&stub, &out, &metrics, "--report");
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("no GPU telemetry"), "{stderr}");

    let m = manifest(&out);
    let gpu = &m.servers[0].gpu;
    assert_eq!(gpu.unavailable, None, "{gpu:?}");
    assert_eq!(gpu.name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(gpu.driver.as_deref(), Some("550.54.14"));
    assert_eq!(gpu.memory_mib, Some(24_564));
    let source = gpu.source.as_deref().unwrap_or_default();
    assert!(
        source.contains("dcgm-exporter") && source.contains("gpu 1"),
        "{source}"
    );
    assert_eq!(&m.gpu, gpu, "the run's GPU is the one read");

    let calls = calls(&out);
    assert!(calls.len() >= 6, "{} calls", calls.len());
    let served_j = (exporter.scrapes() * STEP_MJ) as f64 / 1000.0;
    let mut total_j = 0.0;
    let mut sampled = 0;
    for c in &calls {
        let w = c.gpu.as_ref().expect("every call has readings");
        if w.samples > 0 {
            sampled += 1;
            assert_eq!(w.util_mean, Some(87.0), "GPU 1's utilization, not GPU 0's");
            assert_eq!(w.mem_used_mib, Some(6_311.0));
            assert_eq!(w.power_w, Some(301.25));
        }
        assert_eq!(
            w.server_cpu_pct, None,
            "no process of this machine is the remote server"
        );
        let e = w.energy_j.expect("every call has an energy share");
        assert!(e >= 0.0, "{e}");
        total_j += e;
    }
    // Windows are matched call by call: most calls hold samples (a stalled sampler may leave
    // a few without), and every sample read is GPU 1's (above).
    assert!(
        sampled * 2 >= calls.len(),
        "{sampled} of {} calls sampled",
        calls.len()
    );
    assert!(total_j > 0.0, "the counter advanced while calls ran");
    assert!(
        total_j <= served_j + 1e-9,
        "calls never add up to more than the counter gained: {total_j} J of {served_j} J"
    );

    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report/summary.json")).expect("summary"),
    )
    .expect("json");
    let md = std::fs::read_to_string(out.join("report/report.md")).expect("report");
    assert!(
        md.contains(&format!("NVIDIA GeForce RTX 4090, 24,564 MiB, driver 550.54.14; read through dcgm-exporter at {}", exporter.url())),
        "the report says which GPU and where it was read"
    );
    let per_success: Vec<f64> = find(&summary, "energy_per_success_j")
        .into_iter()
        .filter_map(serde_json::Value::as_f64)
        .collect();
    assert!(
        per_success.iter().any(|&e| e > 0.0),
        "energy per success is reported for the remote GPU: {per_success:?}"
    );
}

#[test]
fn a_counter_reset_or_a_dead_exporter_leaves_energy_unknown_never_wrong() {
    // The exporter follows the run, not the clock, so that a loaded machine cannot reorder it: the
    // counter restarts near 0 once the stub has received its second call (the GPU was reset), and
    // from the fourth call on the exporter answers 503 for good. Calls take 250 ms, so the calls
    // after the outage outlast the 2 s a stale reading may stand in for a failed scrape, and the
    // last of them can only be unknown.
    let stub = Arc::new(stub_with_calls_of(Duration::from_millis(250)));
    let served = {
        let stub = Arc::clone(&stub);
        move || stub.requests("oracle-a")
    };
    let exporter = Exporter::start(move |n| match served() {
        0..2 => Answer::Body(with_energy(1, RECORDED_ENERGY_MJ[1] + n * STEP_MJ)),
        2..4 => Answer::Body(with_energy(1, n * STEP_MJ)),
        _ => Answer::Status(503),
    });
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let (code, _, stderr) = run(&stub, &out, &format!("{}#gpu=1", exporter.url()), "");
    assert_eq!(code, 0, "a telemetry outage never stops a run: {stderr}");
    let calls = calls(&out);
    assert!(
        calls.len() >= 4 + 10,
        "{} calls: too few to outlast a stale reading",
        calls.len()
    );
    // The counter gains one step a scrape and a reset only lowers it, so no call, nor all of
    // them together, can measure more than a step for every scrape answered; a reset read as a
    // difference would show as about -98 MJ or as a huge energy.
    let most_j = (exporter.scrapes() * STEP_MJ) as f64 / 1000.0;
    let energy = |c: &passk::runner::record::CallRecord| c.gpu.as_ref().and_then(|g| g.energy_j);
    let energies: Vec<f64> = calls.iter().filter_map(energy).collect();
    assert!(
        energies.iter().all(|&e| (0.0..=most_j).contains(&e)),
        "{energies:?} outside 0..={most_j} J"
    );
    assert!(
        energies.iter().sum::<f64>() <= most_j,
        "{energies:?} add up to more than the counter gained"
    );
    assert!(!energies.is_empty(), "calls before the outage have energy");
    assert_eq!(
        calls.last().map(energy),
        Some(None),
        "the last call, seconds after the exporter went away, has no energy"
    );
}

#[test]
fn an_exporter_that_cannot_be_read_refuses_the_run_before_any_trace() {
    let stub = slow_stub();
    let tmp = util::tempdir();

    // Nothing listens there.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/metrics", dead.local_addr().expect("addr"));
    drop(dead);
    let out = tmp.path().join("dead");
    let (code, _, stderr) = run(&stub, &out, &url, "");
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stderr.contains(&format!("--gpu-metrics for {}", stub.host())),
        "{stderr}"
    );
    assert!(!out.join("conversations.jsonl").exists(), "no trace");

    // Two GPUs listed and none picked: the message lists them and says how to pick.
    let two = Exporter::start(|_| Answer::Body(RECORDED.to_string()));
    let out = tmp.path().join("ambiguous");
    let (code, _, stderr) = run(&stub, &out, &two.url(), "");
    assert_eq!(code, 7, "{stderr}");
    assert!(
        stderr.contains("lists 2 GPUs") && stderr.contains("#gpu=N"),
        "{stderr}"
    );

    // An exporter for a server the run does not use is a usage error.
    let out = tmp.path().join("stranger");
    let flags = "--suite store --tasks L1 --trials 1 --gpu-metrics 127.0.0.1:9=http://127.0.0.1:9400/metrics";
    let (code, _, stderr) = output(passk().args(util::run_args(&stub, &out, "oracle-a", flags)));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is not one of the run's servers"),
        "{stderr}"
    );
}

/// Starts `passk serve-stub --port 0` and returns it with the port it printed.
fn serve_stub() -> (std::process::Child, u16) {
    use std::io::{BufRead, BufReader};
    let mut child = passk()
        .args(["serve-stub", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn passk serve-stub");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the stub's address");
    let port = line
        .trim()
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (child, port)
}

#[test]
fn server_process_samples_come_from_the_process_listening_on_the_port_only() {
    use passk::runner::telemetry::server_process::{ServerProcesses, listening_pid};
    // Two servers with the same process name: only the one passk talks to is read.
    let (mut talked_to, port) = serve_stub();
    let (mut other, other_port) = serve_stub();
    assert_eq!(listening_pid(port), Some(talked_to.id()));
    assert_eq!(listening_pid(other_port), Some(other.id()));
    let mut sampler = ServerProcesses::new(&[port]).expect("a sampler");
    let (cpu, rss) = sampler.read();
    assert!(
        cpu.is_some() && rss.is_some_and(|r| r > 0.0),
        "{cpu:?} {rss:?}"
    );
    let pids = sampler.pids();
    assert!(pids.contains(&talked_to.id()), "{pids:?}");
    assert!(
        !pids.contains(&other.id()),
        "another process of the same name is not summed: {pids:?}"
    );
    assert!(!pids.contains(&std::process::id()), "{pids:?}");
    for child in [&mut talked_to, &mut other] {
        child.kill().expect("kill the stub");
        let _ = child.wait();
    }
    // A port nobody listens on (any more): no samples, never a zero.
    assert_eq!(
        ServerProcesses::new(&[port]).expect("a sampler").read(),
        (None, None)
    );
    assert!(
        ServerProcesses::new(&[]).is_none(),
        "no server here: no sampler"
    );
}
