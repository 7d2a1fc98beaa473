//! `passk run --stop-when-decided` end to end against the stub over loopback: a clear gap stops
//! early as a difference, identical models stop as equivalent, and a killed run resumed continues
//! the same sequence to the same decision.

use crate::util::{self, Stub, load, output, passk, run_args};
use passk::analysis::sequence::{Decision, RoundState};
use passk::runner::rounds;
use passk::wire::stub::{Behaviour, MistakePlan, ModelSpec};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const CAP: u32 = 10;

/// A stub with a model that fails about half of its (task, trial) pairs, and an oracle.
fn flawed_and_oracle(load: Duration) -> Stub {
    use passk::suite::Domain as _;
    let store = passk::suites::store::load_store(&util::root()).expect("store suite");
    let plan = MistakePlan::new(store.tasks(), CAP, 5, 0.5);
    let flawed: ModelSpec = Behaviour::Flawed(plan.into()).into();
    Stub::start(
        vec![("flawed", flawed), ("oracle", Behaviour::Oracle.into())],
        |c| c.load = load,
    )
}

/// The states in `rounds.jsonl`, checked against the states recomputed from the records.
fn recorded_states(dir: &Path) -> Vec<RoundState> {
    let run = load(dir);
    let settings: passk::runner::settings::RunSettings =
        serde_json::from_value(run.manifest.settings.clone()).expect("settings");
    let states = passk::analysis::stopping::states(&settings, &run.conversations).expect("rule");
    assert_eq!(rounds::read(dir).expect("rounds.jsonl"), states);
    states
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
    assert!(
        run.conversations
            .iter()
            .all(|c| c.trial < states.len() as u32)
    );
    // The report says the run stopped, and shows the sequence instead of fixed-k intervals.
    let (code, _, stderr) = output(passk().args(["report", &out.display().to_string()]));
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(out.join("report").join("report.md")).expect("report.md");
    assert!(md.contains("Stopped early"), "{md}");
    assert!(md.contains("not valid after optional stopping"), "{md}");
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
    for delay_ms in [400, 900] {
        let mut child = util::spawn(&args(&out), Stdio::null(), Stdio::null());
        std::thread::sleep(Duration::from_millis(delay_ms));
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
