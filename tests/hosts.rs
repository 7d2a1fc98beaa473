//! One run over several servers: the plan is played exactly once across them, a resume on other
//! servers adds only what is missing, a server that dies leaves the pool and its trials are
//! played by the others, a run stops (exit 9) only when every server is gone, and a server that
//! serves another build of a model is refused by name.

use crate::util::{self, Stub, output, passk};
use passk::runner::record::{Manifest, Outcome, Record, TrialKey};
use passk_stub::Behaviour;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A stub serving `oracle-a` with `ms` of simulated load per call.
fn stub(ms: u64) -> Stub {
    Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.load = Duration::from_millis(ms)
    })
}

/// `passk run` over `hosts` (one `--host` with commas) into `out`, plain log lines.
fn args(hosts: &[&Stub], out: &Path, extra: &str) -> Vec<String> {
    let urls: Vec<String> = hosts.iter().map(|s| s.host()).collect();
    let mut a: Vec<String> = ["run", "--no-progress", "--models", "oracle-a", "--host"]
        .map(String::from)
        .to_vec();
    a.push(urls.join(","));
    a.extend(["--out".to_string(), out.display().to_string()]);
    a.extend(extra.split_whitespace().map(String::from));
    a
}

/// Every whole record line of a run directory (a torn last line after a kill is left out).
fn records(dir: &Path) -> Vec<Record> {
    let mut out = Vec::new();
    for name in ["conversations.jsonl", "router.jsonl"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
        for line in whole.lines() {
            out.push(serde_json::from_str(line).expect("every line is a record"));
        }
    }
    out
}

fn key(r: &Record) -> TrialKey {
    match r {
        Record::Conversation(c) => c.key(),
        Record::Router(r) => r.key(),
    }
}

fn host_and_parallel(r: &Record) -> (Option<String>, Option<u32>) {
    match r {
        Record::Conversation(c) => (c.host.clone(), c.parallel),
        Record::Router(r) => (r.host.clone(), r.parallel),
    }
}

/// Records per server.
fn per_host(rs: &[Record]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in rs {
        *out.entry(host_and_parallel(r).0.unwrap_or_default())
            .or_default() += 1;
    }
    out
}

/// Asserts each key once, and returns them.
fn unique_keys(rs: &[Record]) -> BTreeSet<TrialKey> {
    let keys: BTreeSet<TrialKey> = rs.iter().map(key).collect();
    assert_eq!(keys.len(), rs.len(), "no trial is written twice");
    keys
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).expect("manifest"))
        .expect("parse manifest")
}

#[test]
fn the_plan_is_played_once_over_three_servers_and_records_say_where_and_how() {
    let stubs = [stub(1), stub(1), stub(1)];
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 2 --suite store,router --parallel 2";
    let (code, _, stderr) = output(passk().args(args(&stubs.each_ref().map(|s| s), &out, flags)));
    assert_eq!(code, 0, "{stderr}");
    let rs = records(&out);
    let keys = unique_keys(&rs);
    let expected = 2 * (util::store_conversations() + util::router_messages());
    assert_eq!(keys.len(), expected, "the whole plan, once");
    let urls: BTreeSet<String> = stubs.iter().map(|s| s.host()).collect();
    for r in &rs {
        let (host, parallel) = host_and_parallel(r);
        assert!(urls.contains(&host.clone().unwrap_or_default()), "{host:?}");
        assert_eq!(parallel, Some(2));
    }
    let used = per_host(&rs);
    assert_eq!(used.len(), 3, "every server played: {used:?}");
    let m = manifest(&out);
    let servers: BTreeSet<String> = m.servers.iter().map(|s| s.url.clone()).collect();
    assert_eq!(servers, urls);
    assert!(
        m.servers
            .iter()
            .all(|s| !s.version.is_empty() && s.models.iter().any(|i| i.warmup.is_some())),
        "each server's version and warm-up: {:?}",
        m.servers
    );
    assert!(
        stderr.contains("2 conversations at a time on each of"),
        "{stderr}"
    );
    let run = util::load(&out);
    assert!(
        run.conversations.iter().all(|c| c.outcome == Outcome::Pass),
        "the oracle passes wherever it is played"
    );
    // The report reads where each trial was played from its record.
    let (code, _, stderr) = output(passk().args(["report", &out.display().to_string()]));
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(out.join("report/report.md")).expect("report");
    let section = md
        .split("## Servers and concurrency")
        .nth(1)
        .expect("a servers section");
    for url in &urls {
        assert!(
            section.contains(url.trim_start_matches("http://")),
            "{url}: {section}"
        );
    }
}

#[test]
fn a_resume_on_other_servers_adds_only_what_is_missing() {
    let (a, b, c) = (stub(0), stub(0), stub(0));
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let first = "--trials 2 --suite store --tasks L1,L2,L3";
    let (code, _, stderr) = output(passk().args(args(&[&a], &out, first)));
    assert_eq!(code, 0, "{stderr}");
    let before = unique_keys(&records(&out));
    assert_eq!(before.len(), 6);
    let (code, _, stderr) = output(passk().args(args(
        &[&b, &c],
        &out,
        "--trials 2 --suite store --parallel 3",
    )));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("6 already on disk"), "{stderr}");
    let rs = records(&out);
    let after = unique_keys(&rs);
    assert_eq!(after.len(), 2 * util::store_conversations());
    assert!(after.is_superset(&before));
    let used = per_host(&rs);
    assert_eq!(used.get(&a.host()), Some(&6), "{used:?}");
    assert_eq!(
        used.get(&b.host()).unwrap_or(&0) + used.get(&c.host()).unwrap_or(&0),
        2 * util::store_conversations() - 6,
        "{used:?}"
    );
    assert_eq!(
        manifest(&out).servers.len(),
        3,
        "every server any session used"
    );
}

/// Starts a run over `stubs` in the background and waits until it has written `n` records.
fn start_and_wait(
    stubs: &[&Stub],
    out: &Path,
    flags: &str,
    ready: impl Fn(&[Record]) -> bool,
) -> std::process::Child {
    let mut child = util::spawn(&args(stubs, out, flags), Stdio::null(), Stdio::piped());
    let started = Instant::now();
    while !ready(&records(out)) {
        // A run that ended before the test could act tests nothing: said, not waited out.
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("the run ended ({status}) before the records the test waits for");
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no records");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn a_server_that_dies_leaves_the_pool_and_the_others_play_its_trials() {
    // Calls of 15 ms: the run outlasts the test's look at its first records on a loaded machine.
    let mut dying = Some(stub(15));
    let lives = stub(15);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 3 --suite store --parallel 2 --retries 0";
    let dead_url = dying.as_ref().map(|s| s.host()).unwrap_or_default();
    // The dying server must have played a trial before it goes, which the last check counts.
    let child = start_and_wait(&[dying.as_ref().expect("up"), &lives], &out, flags, |rs| {
        rs.len() >= 4 && per_host(rs).contains_key(&dead_url)
    });
    dying.take();
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{dead_url} stopped answering and left the pool")),
        "{stderr}"
    );
    let rs = records(&out);
    let keys = unique_keys(&rs);
    assert_eq!(keys.len(), 3 * util::store_conversations(), "nothing lost");
    let run = util::load(&out);
    assert!(
        run.conversations.iter().all(|c| c.outcome == Outcome::Pass),
        "the dead server's trials were played again elsewhere, not recorded as failures"
    );
    let used = per_host(&rs);
    assert!(used.get(&dead_url).is_some_and(|&n| n > 0), "{used:?}");
    assert!(used[&lives.host()] > used[&dead_url], "{used:?}");
}

#[test]
fn the_run_stops_with_exit_9_only_when_every_server_is_gone() {
    let mut stubs = vec![stub(15), stub(15)];
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 3 --suite store --retries 0";
    let child = start_and_wait(&stubs.iter().collect::<Vec<_>>(), &out, flags, |rs| {
        rs.len() >= 2
    });
    stubs.clear();
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(9), "{stderr}");
    assert!(
        stderr.contains("every server (") && stderr.contains("rerun the same command"),
        "{stderr}"
    );
    let keys = unique_keys(&records(&out));
    assert!(keys.len() < 3 * util::store_conversations());
    // Back up (new servers, new ports): the same run finishes with each trial once.
    let again = [stub(0), stub(0)];
    let (code, _, stderr) = output(passk().args(args(&again.each_ref().map(|s| s), &out, flags)));
    assert_eq!(code, 0, "{stderr}");
    let run = util::load(&out);
    let passed: BTreeSet<TrialKey> = run
        .conversations
        .iter()
        .filter(|c| c.outcome == Outcome::Pass)
        .map(|c| c.key())
        .collect();
    assert_eq!(passed.len(), 3 * util::store_conversations());
}

#[test]
fn a_server_unlike_the_first_is_refused_by_name_before_any_trace() {
    let first = stub(0);
    let rebuilt = Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.build = "pushed-again".into()
    });
    let older = Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.prompt_count = passk_stub::PromptCount::NewOnly
    });
    let tmp = util::tempdir();
    for (other, what) in [
        (&rebuilt, "digest of model oracle-a"),
        (&older, "Ollama version"),
    ] {
        let out = tmp.path().join("run");
        let (code, _, stderr) =
            output(passk().args(args(&[&first, other], &out, "--trials 1 --suite router")));
        assert_eq!(code, 7, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{} differs from {}: {what}",
                other.host(),
                first.host()
            )),
            "{stderr}"
        );
        assert!(records(&out).is_empty(), "nothing played");
    }
}

#[test]
fn ctrl_c_with_several_conversations_in_flight_writes_them_and_resumes() {
    let stubs = [stub(15), stub(15)];
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 2 --suite store --parallel 3";
    let child = start_and_wait(&stubs.each_ref().map(|s| s), &out, flags, |rs| {
        rs.len() >= 3
    });
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{stderr}");
    let text = std::fs::read_to_string(out.join("conversations.jsonl")).expect("records");
    assert!(
        text.ends_with('\n'),
        "every trial in flight was written whole"
    );
    let (code, _, stderr) = output(passk().args(args(&stubs.each_ref().map(|s| s), &out, flags)));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        unique_keys(&records(&out)).len(),
        2 * util::store_conversations()
    );
}

/// Stops the stub in `slot` and starts a new one on the same address, as a server restarted.
fn restart(slot: &mut Option<Stub>, ms: u64) {
    let addr: std::net::SocketAddr = slot
        .as_ref()
        .map(|s| s.host())
        .unwrap_or_default()
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    slot.take();
    *slot = Some(Stub::start(
        vec![("oracle-a", Behaviour::Oracle.into())],
        |c| {
            c.load = Duration::from_millis(ms);
            c.addr = addr;
        },
    ));
}

#[test]
fn servers_restarted_and_passk_killed_at_random_leave_every_trial_once() {
    let mut stubs: Vec<Option<Stub>> = (0..3).map(|_| Some(stub(4))).collect();
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 3 --suite store --parallel 2";
    let run_args = |stubs: &[Option<Stub>]| {
        let up: Vec<&Stub> = stubs.iter().flatten().collect();
        args(&up, &out, flags)
    };
    // A fixed sequence of pseudo-random delays and choices (a linear congruential generator).
    let mut seed: u64 = 14;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    let (mut kills, mut restarts) = (0, 0);
    for _ in 0..12 {
        let mut child = util::spawn(&run_args(&stubs), Stdio::null(), Stdio::null());
        std::thread::sleep(Duration::from_millis(20 + next(120)));
        restart(&mut stubs[next(3) as usize], 4);
        restarts += 1;
        std::thread::sleep(Duration::from_millis(next(80)));
        if child.try_wait().expect("poll").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        child.wait().expect("reap");
        unique_keys(&records(&out).into_iter().filter(graded).collect::<Vec<_>>());
    }
    assert!(kills >= 3, "the test must interrupt runs ({kills} kills)");
    let (code, _, stderr) = output(passk().args(run_args(&stubs)));
    assert_eq!(code, 0, "{stderr}");
    let rs: Vec<Record> = records(&out).into_iter().filter(graded).collect();
    let keys = unique_keys(&rs);
    assert_eq!(
        keys.len(),
        3 * util::store_conversations(),
        "every planned trial graded exactly once after {kills} kills and {restarts} restarts"
    );
    let run = util::load(&out);
    assert!(run.conversations.iter().all(|c| c.outcome == Outcome::Pass));
}

fn graded(r: &Record) -> bool {
    match r {
        Record::Conversation(c) => c.outcome.is_graded(),
        Record::Router(r) => r.outcome.is_graded(),
    }
}
