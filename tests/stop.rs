//! `passk run --stop-when-decided` end to end against the stub over loopback: a clear gap stops
//! early as a difference (naming the better model whatever the order of `--models`), identical
//! models stop as equivalent, the k cap ends an undecided run, a round waits for its wire
//! failures to be played again, and a killed run resumed continues the same sequence to the same
//! decision.

use crate::util::{self, Stub, load, output, passk, run_args};
use passk::runner::record::Outcome;
use passk::runner::rounds;
use passk::sequence::{Decision, RoundState};
use passk_stub::{Behaviour, FaultKind, MistakePlan, ModelSpec};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const CAP: u32 = 10;

/// A model that fails about half of its (task, trial) pairs.
fn flawed() -> ModelSpec {
    use passk::domain::Domain as _;
    let store = passk::suites::store::load_store(&util::root()).expect("store suite");
    let plan = MistakePlan::new(store.tasks(), CAP, 5, 0.5);
    Behaviour::Flawed(plan.into()).into()
}

/// A stub with a flawed model and an oracle under these names.
fn flawed_and_oracle_as(flawed_name: &str, oracle: (&str, ModelSpec), load: Duration) -> Stub {
    Stub::start(vec![(flawed_name, flawed()), oracle], |c| c.load = load)
}

/// A stub with `flawed`, a model that fails about half of its (task, trial) pairs, and `oracle`.
fn flawed_and_oracle(load: Duration) -> Stub {
    flawed_and_oracle_as("flawed", ("oracle", Behaviour::Oracle.into()), load)
}

/// The states in `rounds.jsonl`, checked against the states recomputed from the records.
fn recorded_states(dir: &Path) -> Vec<RoundState> {
    let run = load(dir);
    let states = passk::analysis::planning::stopping::of_run(&run.manifest, &run.conversations)
        .expect("rule")
        .rounds;
    assert_eq!(rounds::read(dir).expect("rounds.jsonl"), states);
    states
}

/// `passk report` on `dir`: its `report.md` and `summary.json`, the same whether the records are
/// held or read back a task at a time (`--hold-records-mib 0`).
fn report(dir: &Path) -> (String, serde_json::Value) {
    let read = |name: &str| std::fs::read_to_string(dir.join("report").join(name)).expect(name);
    let mut made = Vec::new();
    for hold in ["64", "0"] {
        let args = [
            "report",
            &dir.display().to_string(),
            "--hold-records-mib",
            hold,
        ];
        let (code, _, stderr) = output(passk().args(args));
        assert_eq!(code, 0, "{stderr}");
        made.push((
            read("report.md"),
            read("summary.json"),
            read("conversations.csv"),
        ));
    }
    assert_eq!(
        made[0], made[1],
        "held or read back cell by cell, the same files"
    );
    let (md, summary, _) = made.swap_remove(0);
    (md, serde_json::from_str(&summary).expect("summary.json"))
}

#[test]
fn a_clear_gap_stops_early_as_a_difference() {
    let stub = flawed_and_oracle(Duration::ZERO);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--suite store --trials {CAP} --stop-when-decided");
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "flawed,oracle", &extra)));
    assert_eq!(code, 0, "{stderr}");
    let states = recorded_states(&out);
    let last = states.last().expect("a round");
    assert_eq!(last.decision, Decision::LargeBetter, "{states:?}");
    assert!(
        states[..states.len() - 1]
            .iter()
            .all(|s| !s.decision.stops())
    );
    assert!(states.len() < CAP as usize, "stopped early: {states:?}");
    assert!(stderr.contains("stopped after round"), "{stderr}");
    let run = load(&out);
    let played = 2 * util::store_conversations() * states.len();
    assert_eq!(
        run.conversations.len(),
        played,
        "whole rounds, then nothing"
    );
    // Scheduled and played are told apart: the plan is a cap, and the end says how much of it ran.
    let planned = 2 * util::store_conversations() * CAP as usize;
    assert!(
        stderr.contains(&format!(
            "up to {planned} trials to run, stopping once decided"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "(played {played} of the {planned} trials planned)"
        )),
        "{stderr}"
    );
    assert!(
        run.conversations
            .iter()
            .all(|c| c.trial < states.len() as u32)
    );
    assert!(
        stderr.contains("oracle succeeds more often than flawed"),
        "{stderr}"
    );
    // The report says the run stopped and why, plots the sequence, and marks every fixed-k
    // bootstrap interval as not valid after optional stopping.
    let (md, summary) = report(&out);
    assert!(md.contains("Stopped early"), "{md}");
    assert!(
        md.contains("oracle succeeds more often than flawed"),
        "{md}"
    );
    assert!(md.contains("not valid after optional stopping"), "{md}");
    let chart = out
        .join("report")
        .join("charts")
        .join("confidence_sequence.svg");
    let svg = std::fs::read_to_string(&chart).expect("confidence_sequence.svg");
    assert!(
        svg.contains("<svg") && svg.contains("sequence low"),
        "{svg}"
    );
    assert!(md.contains("(charts/confidence_sequence.svg)"), "{md}");
    let intervals = md.matches("95% CI").count() + md.matches("95% interval").count();
    let marked = md.matches("95% CI†").count() + md.matches("95% interval†").count();
    assert!(intervals > 0);
    assert_eq!(intervals, marked, "every fixed-k interval is marked: {md}");
    assert!(
        md.contains("valid after optional stopping, 95% CI†"),
        "the gap shows the sequence's interval: {md}"
    );
    // summary.json carries the stopping state.
    let stopping = &summary["stopping"];
    assert_eq!(stopping["standing"], "stopped_early", "{stopping}");
    assert_eq!(stopping["pairing"]["large"], "oracle");
    assert_eq!(
        stopping["rounds"].as_array().map(Vec::len),
        Some(states.len())
    );
    assert_eq!(
        stopping["rounds"][states.len() - 1]["decision"],
        "large_better"
    );
}

#[test]
fn models_given_large_first_are_paired_by_size_and_named_in_the_decision() {
    let stub = flawed_and_oracle_as(
        "flawed:3b",
        ("oracle:7b", Behaviour::Oracle.into()),
        Duration::ZERO,
    );
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--suite store --trials {CAP} --stop-when-decided");
    let (code, _, stderr) =
        output(passk().args(run_args(&stub, &out, "oracle:7b,flawed:3b", &extra)));
    assert_eq!(code, 0, "{stderr}");
    let last = *recorded_states(&out).last().expect("a round");
    assert_eq!(last.decision, Decision::LargeBetter, "{last:?}");
    assert!(last.mean > 0.0, "large (7b) minus small (3b): {last:?}");
    let says = "oracle:7b succeeds more often than flawed:3b";
    assert!(stderr.contains(says), "{stderr}");
    let (md, summary) = report(&out);
    assert!(md.contains(says), "{md}");
    assert!(!md.contains("flawed:3b succeeds more often"), "{md}");
    // The rule pairs the models as every break-even of the report does.
    assert_eq!(summary["pairing"]["small"], "flawed:3b");
    assert_eq!(summary["stopping"]["pairing"]["small"], "flawed:3b");
    assert_eq!(summary["stopping"]["pairing"]["large"], "oracle:7b");
}

#[test]
fn the_k_cap_ends_an_undecided_run() {
    let stub = Stub::oracles(&["oracle-a", "oracle-b"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    // Two rounds of equal results are far from settling a 5 pp margin.
    let extra = "--suite store --trials 2 --stop-when-decided";
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "oracle-a,oracle-b", extra)));
    assert_eq!(code, 0, "{stderr}");
    let states = recorded_states(&out);
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(states.iter().all(|s| !s.decision.stops()), "{states:?}");
    assert!(!stderr.contains("stopped after round"), "{stderr}");
    assert_eq!(
        load(&out).conversations.len(),
        2 * 2 * util::store_conversations()
    );
    let (md, summary) = report(&out);
    assert!(
        md.contains("Reached the k cap (2 rounds) undecided."),
        "{md}"
    );
    assert_eq!(summary["stopping"]["standing"], "cap_undecided");
}

#[test]
fn identical_models_stop_as_equivalent() {
    let stub = Stub::oracles(&["oracle-a", "oracle-b"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--suite store --trials {CAP} --stop-when-decided --margin 20");
    let (code, _, stderr) =
        output(passk().args(run_args(&stub, &out, "oracle-a,oracle-b", &extra)));
    assert_eq!(code, 0, "{stderr}");
    let states = recorded_states(&out);
    let last = states.last().expect("a round");
    assert_eq!(last.decision, Decision::Equivalent, "{states:?}");
    assert_eq!(last.mean, 0.0);
    assert!(last.low > -0.2 && last.high < 0.2, "{last:?}");
    assert!(states.len() < CAP as usize, "{states:?}");

    // With the k cap at the round that decided, the run decides at the last round allowed.
    let at_cap = tmp.path().join("at-cap");
    let rounds = states.len();
    let extra = format!("--suite store --trials {rounds} --stop-when-decided --margin 20");
    let (code, _, stderr) =
        output(passk().args(run_args(&stub, &at_cap, "oracle-a,oracle-b", &extra)));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(recorded_states(&at_cap), states);
    let (md, summary) = report(&at_cap);
    let line = format!("Decided at the last round allowed ({rounds} of {rounds})");
    assert!(md.contains(&line), "{md}");
    assert!(!md.contains("Stopped early"), "{md}");
    assert_eq!(summary["stopping"]["standing"], "decided_at_cap");
}

#[test]
fn a_wire_failure_is_played_again_before_its_round_reaches_the_sequence() {
    // The warm-up and the first trial's first call fail once; nothing is retried on the wire.
    let mut oracle: ModelSpec = Behaviour::Oracle.into();
    oracle.fault_script = vec![FaultKind::Http500, FaultKind::Http500];
    let stub = flawed_and_oracle_as("flawed", ("oracle", oracle), Duration::ZERO);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--suite store --trials {CAP} --stop-when-decided --retries 0");
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "flawed,oracle", &extra)));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("playing them again"), "{stderr}");
    // The failed record stays on disk, superseded by the graded one played after it.
    let run = load(&out);
    assert_eq!(run.superseded, 1, "{stderr}");
    assert!(run.conversations.iter().all(|c| c.outcome.is_graded()));
    // Every round the sequence took holds every task, the one that failed included.
    let states = recorded_states(&out);
    assert!(!states.is_empty());
    for s in &states {
        assert_eq!(s.tasks, util::store_conversations(), "{s:?}");
    }
}

#[test]
fn a_round_whose_failures_stay_ungraded_stops_the_run_waiting() {
    let mut down: ModelSpec = Behaviour::Oracle.into();
    down.faults.http500 = 1.0;
    let stub = flawed_and_oracle_as("flawed", ("oracle", down), Duration::ZERO);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let extra = format!("--suite store --trials {CAP} --stop-when-decided --retries 0");
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "flawed,oracle", &extra)));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("run: stopped: round 1 waits"), "{stderr}");
    assert!(recorded_states(&out).is_empty());
    let run = load(&out);
    assert!(
        run.conversations.iter().all(|c| c.trial == 0),
        "no round after the one that waits"
    );
    let failed = run
        .conversations
        .iter()
        .filter(|c| c.outcome == Outcome::TransportFail)
        .count();
    assert_eq!(
        failed,
        util::store_conversations(),
        "each trial's latest record"
    );
    let (md, summary) = report(&out);
    assert!(md.contains("round 1 waits on"), "{md}");
    assert_eq!(summary["stopping"]["standing"], "waiting");
}

#[test]
fn bad_stopping_flags_are_refused_naming_the_flag() {
    let stub = Stub::start(vec![("oracle", Behaviour::Oracle.into())], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    for (extra, flag) in [
        ("--stop-when-decided --margin 0", "--margin"),
        ("--stop-when-decided --alpha 1.5", "--alpha"),
        ("--margin 5", "--stop-when-decided"),
    ] {
        let args = run_args(&stub, &out, "oracle,oracle-b", extra);
        let (code, _, stderr) = output(passk().args(args));
        assert_eq!(code, 2, "{extra}: {stderr}");
        assert!(stderr.contains(flag), "{extra}: {stderr}");
    }
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_killed_run_resumed_continues_the_sequence_to_the_same_decision() {
    // A few milliseconds per call, so that a run is surely still under way when it is killed.
    let stub = flawed_and_oracle(Duration::from_millis(2));
    let tmp = util::tempdir();
    let extra = format!("--suite store --trials {CAP} --stop-when-decided");
    let args = |dir: &Path| run_args(&stub, dir, "flawed,oracle", &extra);
    let reference = tmp.path().join("uninterrupted");
    let (code, _, stderr) = output(passk().args(args(&reference)));
    assert_eq!(code, 0, "{stderr}");
    let expected = recorded_states(&reference);

    let out = tmp.path().join("killed");
    let mut kills = 0;
    let lines = || {
        std::fs::read_to_string(out.join("conversations.jsonl"))
            .map_or(0, |t| t.matches('\n').count())
    };
    for _ in 0..2 {
        // Killed once it has written a few more records, whatever the machine's speed: mid-run
        // rather than at start-up or after the end.
        let before = lines();
        let mut child = util::spawn(&args(&out), Stdio::null(), Stdio::null());
        let started = std::time::Instant::now();
        while lines() < before + 3
            && child.try_wait().expect("wait").is_none()
            && started.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        child.wait().expect("reap");
    }
    assert!(kills >= 1, "the test must interrupt a run");
    let (code, _, stderr) = output(passk().args(args(&out)));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(recorded_states(&out), expected);
    assert_eq!(
        load(&out).conversations.len(),
        load(&reference).conversations.len()
    );
}

#[test]
fn several_servers_at_once_decide_on_the_same_complete_rounds() {
    let (a, b) = (
        flawed_and_oracle(Duration::ZERO),
        flawed_and_oracle(Duration::ZERO),
    );
    let tmp = util::tempdir();
    let extra = format!("--suite store --trials {CAP} --stop-when-decided");
    let one = tmp.path().join("one");
    let (code, _, stderr) = output(passk().args(run_args(&a, &one, "flawed,oracle", &extra)));
    assert_eq!(code, 0, "{stderr}");
    let many = tmp.path().join("many");
    let spread = format!("{extra} --host {} --parallel 3", b.host());
    let (code, _, stderr) = output(passk().args(run_args(&a, &many, "flawed,oracle", &spread)));
    assert_eq!(code, 0, "{stderr}");
    let states = recorded_states(&many);
    assert_eq!(
        states,
        recorded_states(&one),
        "the same rounds, the same decision"
    );
    assert_eq!(
        load(&many).conversations.len(),
        2 * util::store_conversations() * states.len(),
        "whole rounds, then nothing"
    );
}
