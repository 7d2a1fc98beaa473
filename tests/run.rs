//! `passk run` end to end: the real binary against the stub over loopback, records parsed back
//! into the record types; refusals before any trace; misbehaving models recorded, not fatal;
//! failed sockets never graded; kills and resumes that lose and duplicate nothing.

use crate::util::{self, Stub, load, output, passk, run_args};
use passk::runner::record::{Outcome, Record, Status, TrialKey};
use passk::trace::{CallFormat, FailureMode};
use passk_stub::{Behaviour, FaultRates, ModelSpec, STUB_VERSION};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Runs `passk run` (see [`run_args`]), asserts it succeeded, and reads the run back.
fn run_ok(stub: &Stub, out: &Path, models: &str, extra: &str) -> passk::analysis::Run {
    let (code, _, stderr) = output(passk().args(run_args(stub, out, models, extra)));
    assert_eq!(code, 0, "{stderr}");
    load(out)
}

#[test]
fn run_writes_records_that_parse_back_and_pass() {
    let stub = Stub::oracles(&["oracle-a", "oracle-b"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a,oracle-b", "--trials 1");
    let (code, stdout, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), out.display().to_string());
    // The per-model summary is left on stderr when the run ends; stdout stays the directory.
    let n = util::store_conversations();
    assert!(
        stderr.contains(&format!("100.0% ({n}/{n})"))
            && stderr.contains("Tasks passing every trial"),
        "{stderr}"
    );
    let run = load(&out);
    assert_eq!(run.conversations.len(), 2 * util::store_conversations());
    assert_eq!(run.router.len(), 2 * util::router_messages());
    assert!(
        run.conversations.iter().all(|c| c.outcome == Outcome::Pass),
        "oracle must pass everything"
    );
    assert!(run.router.iter().all(|r| r.correct));
    assert_eq!(run.manifest.server_version.as_deref(), Some(STUB_VERSION));
    assert!(
        run.manifest
            .models
            .iter()
            .all(|m| m.digest.is_some() && m.warmup.is_some())
    );
    // Each record carries its own suite's grader digest, as the manifest records it.
    let graders = &run.manifest.graders;
    assert_eq!(
        run.manifest.grader_digest,
        passk::grade::freeze::combined_digest(graders)
    );
    assert!(
        run.conversations
            .iter()
            .all(|c| c.grader_digest == graders[&c.suite].digest)
    );
    assert!(
        run.router
            .iter()
            .all(|r| r.grader_digest == graders["router"].digest)
    );
    // Seeds are paired: the same (task, trial, turn, step) gets the same seed for both models.
    let seeds = |m: &str| -> Vec<Option<i64>> {
        let mut v: Vec<_> = run.conversations.iter().filter(|c| c.model == m).collect();
        v.sort_by(|a, b| a.task.cmp(&b.task));
        v.iter()
            .flat_map(|c| c.calls.iter().map(|k| k.seed.get()))
            .collect()
    };
    assert_eq!(seeds("oracle-a"), seeds("oracle-b"));
    // Every call carries Ollama's timing fields as the stub filled them.
    assert!(
        run.conversations
            .iter()
            .flat_map(|c| &c.calls)
            .all(|k| k.timings.total_duration.is_some())
    );
}

#[test]
fn refuses_to_run_when_graders_moved() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    util::copy_data(tmp.path());
    let grader = tmp.path().join("graders/router/labels.json");
    let text = std::fs::read_to_string(&grader).expect("read");
    std::fs::write(&grader, text.replacen("other", "order_status", 1)).expect("write");
    let out = tmp.path().join("run");
    let root = tmp.path().display().to_string();
    let args = run_args(&stub, &out, "oracle", &format!("--root {root}"));
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("labels.json"),
        "names the moved file: {stderr}"
    );
    assert!(
        !out.join("conversations.jsonl").exists(),
        "no trace before the check"
    );
}

#[test]
fn refuses_a_missing_model_before_any_trace() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "nosuch:1b", "")));
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("passk pull nosuch:1b"), "{stderr}");
    assert!(!out.join("conversations.jsonl").exists());
}

#[test]
fn refuses_to_append_when_the_ollama_version_changed() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle", "--trials 1 --suite router");
    assert_eq!(output(passk().args(&args)).0, 0);
    let path = out.join("manifest.json");
    let text = std::fs::read_to_string(&path).expect("manifest");
    std::fs::write(&path, text.replace(STUB_VERSION, "0.1.0")).expect("write");
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("Ollama version"), "{stderr}");
}

#[test]
fn a_session_that_plays_other_tasks_widens_the_runs_task_filter() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let filter = |run: &passk::analysis::Run| run.manifest.settings["tasks"].clone();
    let first = run_ok(&stub, &out, "oracle", "--suite store --trials 1 --tasks L1");
    assert_eq!(filter(&first), serde_json::json!(["L1"]));
    let both = run_ok(
        &stub,
        &out,
        "oracle",
        "--suite store --trials 1 --tasks L2,L1",
    );
    assert_eq!(
        filter(&both),
        serde_json::json!(["L1", "L2"]),
        "the manifest names every task the records may hold"
    );
    assert_eq!(both.conversations.len(), 2);
    let all = run_ok(&stub, &out, "oracle", "--suite store --trials 1");
    assert_eq!(filter(&all), serde_json::json!([]), "no filter: every task");
}

#[test]
fn a_refusal_says_its_fix_and_prints_no_table_of_the_old_run() {
    let stub = Stub::oracles(&["oracle"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let first = run_args(&stub, &out, "oracle", "--trials 1 --suite store --tasks L1");
    let (code, _, stderr) = output(passk().args(&first));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Success"),
        "a run leaves its table: {stderr}"
    );
    // Another temperature into the same directory would mix setups.
    let second = run_args(
        &stub,
        &out,
        "oracle",
        "--trials 1 --suite store --tasks L2 --temperature 0.2",
    );
    let (code, _, stderr) = output(passk().args(&second));
    assert_eq!(code, 4, "{stderr}");
    let fix: Vec<&str> = stderr.lines().filter(|l| l.starts_with("fix:")).collect();
    assert!(
        fix.len() == 1 && fix[0].contains("--run-id NEW") && fix[0].contains("--out DIR"),
        "{stderr}"
    );
    assert!(!stderr.contains("Success"), "no stale table: {stderr}");
    // A stub that loaded other versions of the suites (exit 7): refused, no stale table either.
    let stale = Stub::start(vec![], |c| {
        c.suites.insert("store".to_string(), "0".repeat(64));
    });
    let (code, _, stderr) = output(passk().args(run_args(
        &stale,
        &out,
        "oracle",
        "--trials 1 --suite store --tasks L1",
    )));
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("restart `passk serve-stub`"), "{stderr}");
    assert!(!stderr.contains("Success"), "no stale table: {stderr}");
}

#[test]
fn misbehaving_models_are_recorded_not_fatal() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(
        &stub,
        &out,
        "text-calls,invented-tool,schema-paste,never-answer",
        "--trials 1 --suite store --tasks L1,M1,W1,T1",
    );
    let played: BTreeSet<&str> = run.conversations.iter().map(|c| c.task.as_str()).collect();
    assert_eq!(
        played,
        BTreeSet::from(["L1", "M1", "W1", "T1"]),
        "exactly the tasks asked for"
    );
    let of = |m: &'static str| run.conversations.iter().filter(move |c| c.model == m);
    let summary = passk::analysis::summarize(
        &run.manifest,
        &run.conversations,
        &run.router,
        &passk::analysis::AnalysisOptions {
            resamples: 0,
            ..Default::default()
        },
    );
    let text = &summary.groups["store"].models["text-calls"];
    assert_eq!(text.pass_hat_k.get(&1), Some(&1.0));
    assert_eq!(
        text.pass_hat_k_native_only.get(&1),
        Some(&0.0),
        "every pass needed text-call recovery"
    );
    assert!(
        of("text-calls").all(|c| c.outcome == Outcome::Pass),
        "text calls are recovered"
    );
    assert!(
        of("text-calls")
            .flat_map(|c| &c.tool_events)
            .all(|e| e.format == Some(CallFormat::Text))
    );
    for c in of("invented-tool") {
        assert_eq!(
            c.outcome,
            Outcome::Pass,
            "{}: {:?}",
            c.task,
            c.verdict.reasons
        );
        assert!(
            c.tool_events.iter().any(|e| !e.ok),
            "the invented tool is rejected"
        );
        assert_eq!(c.verdict.control.unknown_verb, Some(true));
    }
    for c in of("schema-paste") {
        assert_eq!(
            c.outcome,
            Outcome::Pass,
            "{}: {:?}",
            c.task,
            c.verdict.reasons
        );
        assert!(c.tool_events.iter().any(|e| {
            !e.ok
                && e.args
                    .as_object()
                    .is_some_and(|a| a.values().any(|v| v.is_object()))
        }));
    }
    for c in of("never-answer") {
        assert_eq!((c.status, c.outcome), (Status::LoopCap, Outcome::ModelFail));
        assert_eq!(c.verdict.failure_mode, Some(FailureMode::LoopCap));
        assert_eq!(c.calls.len(), 10, "the cap is 10 model calls per turn");
    }
}

#[test]
fn dead_sockets_are_never_graded() {
    let faulty = ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
        reset: 0.08,
        ..FaultRates::default()
    });
    let stub = Stub::start(vec![("faulty", faulty)], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(
        &stub,
        &out,
        "faulty",
        "--trials 2 --suite store --retries 0",
    );
    let failed: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.outcome == Outcome::TransportFail)
        .collect();
    assert!(
        !failed.is_empty(),
        "an 8% reset rate without retries must end some conversations"
    );
    for c in &failed {
        assert_eq!(c.status, Status::Aborted);
        assert!(
            !c.verdict.passed && c.verdict.failure_mode.is_none(),
            "never graded"
        );
    }
    assert!(
        run.conversations
            .iter()
            .filter(|c| c.outcome.is_graded())
            .all(|c| c.outcome == Outcome::Pass)
    );
    let transport_attempts = run
        .conversations
        .iter()
        .flat_map(|c| &c.calls)
        .chain(run.manifest.models.iter().filter_map(|m| m.warmup.as_ref()))
        .flat_map(|k| &k.attempts)
        .filter(|a| a.outcome == passk::wire::outcome::CallOutcome::Transport)
        .count() as u64;
    let injected = stub.injected().values().sum::<u64>();
    assert_eq!(
        transport_attempts, injected,
        "every injected reset is recorded, none hidden"
    );
}

#[test]
fn the_manifest_marks_a_binary_built_from_a_dirty_tree() {
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(util::root())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if git(&["rev-parse", "HEAD"]).is_none() {
        util::skip("not a git checkout");
        return;
    }
    let stub = Stub::oracles(&["m"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(&stub, &out, "m", "--trials 1 --suite router");
    let mark = run
        .manifest
        .git_commit
        .expect("built from a checkout: the commit is recorded");
    let dirty = mark.strip_suffix("-dirty");
    let commit = dirty.unwrap_or(&mark);
    assert!(
        commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{mark}: a commit, maybe -dirty"
    );
    // The binary was rebuilt for this test after any change to what it is built from, so a change
    // there now means the build saw it.
    let changed = git(&[
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        "src",
        "benches",
        "Cargo.toml",
        "Cargo.lock",
    ])
    .unwrap_or_default();
    if !changed.is_empty() {
        assert!(
            dirty.is_some(),
            "{mark}: the build tree had changes:\n{changed}"
        );
    }
}

#[test]
fn each_retry_is_said_as_it_happens_before_its_trial_ends() {
    let flaky = ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
        http503: 0.2,
        ..FaultRates::default()
    });
    let stub = Stub::start(vec![("flaky", flaky)], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(
        &stub,
        &out,
        "flaky",
        "--trials 2 --suite store --tasks L1,L2,M1 --retries 8",
    );
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    let run = load(&out);
    // Retries of the trials' calls (the warm-up's are its own business, not a trial's).
    let retries: usize = run
        .conversations
        .iter()
        .flat_map(|c| &c.calls)
        .map(|c| c.attempts.len().saturating_sub(1))
        .sum();
    assert!(retries > 0, "a 20% rate of 503s over these calls: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let said: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("flaky on http://") && lines[i].ends_with("; retrying"))
        .collect();
    assert_eq!(said.len(), retries, "one line per retry: {stderr}");
    assert!(
        lines[said[0]].contains("attempt failed (transport: "),
        "{stderr}"
    );
    // The first retry is said before the line of the trial it belongs to.
    let first_retried = lines
        .iter()
        .position(|l| l.contains(" trial ") && l.contains("retr"))
        .expect("a trial line with its retries");
    assert!(said[0] < first_retried, "{stderr}");
}

/// Keys of a run's records; panics on an unparsable line, and on a torn last line when `strict`
/// (right after a kill the last line may legitimately be torn: the next run cuts it off).
fn keys_of(dir: &Path, strict: bool) -> Vec<TrialKey> {
    let mut out = Vec::new();
    for name in ["conversations.jsonl", "router.jsonl"] {
        let mut text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if strict {
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "{name} ends in a whole line"
            );
        } else if let Some(end) = text.rfind('\n') {
            text.truncate(end + 1);
        } else {
            text.clear();
        }
        for line in text.lines() {
            let record: Record = serde_json::from_str(line).expect("every line is a record");
            out.push(match record {
                Record::Conversation(c) => c.key(),
                Record::Router(r) => r.key(),
            });
        }
    }
    out
}

fn keys(dir: &Path) -> Vec<TrialKey> {
    keys_of(dir, true)
}

#[test]
fn kill_at_random_points_and_resume_loses_and_duplicates_nothing() {
    // About 3 ms per call so that a run lasts long enough to be killed in the middle.
    let stub = Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.load = Duration::from_millis(3)
    });
    let tmp = util::tempdir();
    let args = |dir: &Path| run_args(&stub, dir, "oracle-a", "--trials 2");
    let reference = tmp.path().join("uninterrupted");
    assert_eq!(output(passk().args(args(&reference))).0, 0);
    let expected: BTreeSet<TrialKey> = keys(&reference).into_iter().collect();

    let out = tmp.path().join("killed");
    // Each session is killed once it has written a pseudo-random number of new records (1 to 12)
    // and then run a pseudo-random 0 to 19 ms more, so that the kill lands mid-call or mid-write
    // however fast the machine is (a linear congruential generator: the same points every run).
    let mut x: u64 = 0x5eed;
    let mut next = || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    let mut kills = 0;
    for _ in 0..8 {
        let (records, extra_ms) = (1 + next() as usize % 12, next() % 20);
        let before = keys_of(&out, false).len();
        let mut child = util::spawn(&args(&out), Stdio::null(), Stdio::null());
        let started = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none()
            && keys_of(&out, false).len() < before + records
            && started.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(extra_ms));
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        child.wait().expect("reap");
        let seen = keys_of(&out, false);
        let unique: BTreeSet<_> = seen.iter().cloned().collect();
        assert_eq!(seen.len(), unique.len(), "no duplicates after a kill");
    }
    assert!(
        kills >= 3,
        "the test must actually interrupt runs ({kills} kills)"
    );
    let (code, _, stderr) = output(passk().args(args(&out)));
    assert_eq!(code, 0, "{stderr}");
    let got = keys(&out);
    let unique: BTreeSet<TrialKey> = got.iter().cloned().collect();
    assert_eq!(got.len(), unique.len(), "no duplicates");
    assert_eq!(unique, expected, "the same trials as an uninterrupted run");
}

#[test]
fn ctrl_c_finishes_the_trial_in_flight_and_the_same_command_resumes() {
    let stub = Stub::start(vec![("oracle-a", Behaviour::Oracle.into())], |c| {
        c.load = Duration::from_millis(3)
    });
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle-a", "--trials 2");
    let child = util::spawn(&args, Stdio::null(), Stdio::piped());
    // Signal once the run is under way (a few records written), however fast the machine.
    let started = std::time::Instant::now();
    while keys_of(&out, false).len() < 3 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let done = child.wait_with_output().expect("wait");
    assert_eq!(
        done.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let planned = 2 * (util::store_conversations() + util::router_messages());
    let partial = keys(&out).len();
    assert!(partial > 0 && partial < planned);
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(keys(&out).len(), planned);
}

#[test]
fn toolless_baseline_and_budget_sweep_run_beside_the_agent() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(
        &stub,
        &out,
        "oracle-a",
        "--trials 1 --suite store --baseline toolless --call-cap 2,10",
    );
    let agent = |cap: u32| {
        run.conversations
            .iter()
            .filter(move |c| c.mode == passk::runner::record::Mode::Agent && c.call_cap == cap)
    };
    let toolless: Vec<_> = run
        .conversations
        .iter()
        .filter(|c| c.mode == passk::runner::record::Mode::Toolless)
        .collect();
    let n = util::store_conversations();
    assert_eq!(
        (agent(2).count(), agent(10).count(), toolless.len()),
        (n, n, n)
    );
    assert!(agent(10).all(|c| c.outcome == Outcome::Pass));
    // Two model calls per turn cannot finish a turn that needs two tool calls.
    assert!(agent(2).any(
        |c| c.status == Status::LoopCap && c.verdict.failure_mode == Some(FailureMode::LoopCap)
    ));
    for c in &toolless {
        assert!(
            c.tool_events.is_empty() && c.calls.len() == c.replies.len(),
            "one call per turn, no tools"
        );
        assert_ne!(c.verdict.trajectory_correct, Some(true));
    }
    // Without tools nothing changes in the store: a task that needs an action fails as such. The
    // oracle's toolless replies are the gold replies, so they pass every answer check: nothing
    // fails for any other reason, and the lookups pass.
    let action = Some(FailureMode::ActionRequired);
    assert!(
        toolless
            .iter()
            .filter(|c| !c.verdict.passed)
            .all(|c| c.verdict.failure_mode == action)
    );
    assert!(
        toolless
            .iter()
            .any(|c| c.category == "write" && c.verdict.failure_mode == action)
    );
    assert!(
        toolless
            .iter()
            .filter(|c| c.category == "lookup")
            .all(|c| c.outcome == Outcome::Pass)
    );
    let (code, _, stderr) = output(passk().args(["report", &out.display().to_string()]));
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report/summary.json")).expect("summary"),
    )
    .expect("json");
    let groups: Vec<&str> = summary["groups"]
        .as_object()
        .expect("groups")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        groups.len(),
        3,
        "agent at two caps and the baseline: {groups:?}"
    );
    assert!(groups.iter().any(|g| g.contains("toolless")), "{groups:?}");
}

#[test]
fn compare_marks_differences_inside_the_noise_band() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let mut dirs = Vec::new();
    for (name, extra) in [
        ("a", "--base-seed 0"),
        ("a2", "--base-seed 1"),
        ("b", "--tool-docs documented"),
    ] {
        let out = tmp.path().join(name);
        let flags = format!("--trials 1 --suite store --tasks L1,W1 {extra}");
        let args = run_args(&stub, &out, "oracle-a", &flags);
        assert_eq!(output(passk().args(&args)).0, 0);
        dirs.push(out.display().to_string());
    }
    let cmp = tmp.path().join("cmp");
    let (code, _, stderr) = output(passk().args([
        "compare",
        &dirs[0],
        &dirs[2],
        "--noise",
        &dirs[1],
        "--out",
        &cmp.display().to_string(),
        "--resamples",
        "100",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(cmp.join("compare.md")).expect("compare.md");
    assert!(md.contains("Noise band"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cmp.join("compare.json")).expect("json"))
            .expect("parse");
    let metrics = json["groups"]["store"]["oracle-a"]["metrics"]
        .as_array()
        .expect("metrics");
    let rate = metrics
        .iter()
        .find(|m| m["metric"] == "success_rate")
        .expect("success_rate");
    // Two oracle runs differ by nothing, so no difference can be told from noise.
    assert_eq!(
        (rate["noise_band"].as_f64(), rate["measurable"].as_bool()),
        (Some(0.0), Some(false))
    );
}

#[test]
fn cli_doc_lists_every_command_and_exit_code() {
    let doc = std::fs::read_to_string(util::root().join("docs/reference/cli.md"))
        .expect("docs/reference/cli.md");
    let (_, help, _) = output(passk().arg("--help"));
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 12, "{help}");
    for c in commands {
        assert!(
            doc.contains(&format!("`{c}")),
            "docs/reference/cli.md does not describe `passk {c}`"
        );
    }
    let codes =
        std::fs::read_to_string(util::root().join("src/exit_code.rs")).expect("exit_code.rs");
    let names = exit_code_names(&codes);
    // The codes 0 to 9 at least: a change of visibility or layout that hid them would otherwise
    // leave this loop checking nothing.
    assert!(
        names.len() >= 10,
        "read {} exit codes: {names:?}",
        names.len()
    );
    for name in names {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/reference/cli.md does not list exit code {name}"
        );
    }
}

/// The name of every `const NAME: u8` in src/exit_code.rs, whatever its visibility.
fn exit_code_names(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|l| l.trim_start().split_once("const "))
        .filter(|(vis, _)| vis.is_empty() || vis.starts_with("pub"))
        .filter_map(|(_, rest)| rest.split_once(": u8"))
        .map(|(name, _)| name.trim())
        .collect()
}

#[test]
fn exit_code_names_are_read_at_any_visibility() {
    let source =
        "pub const A: u8 = 0;\npub(crate) const B: u8 = 1;\nconst C: u8 = 2;\n// const D: u8\n";
    assert_eq!(exit_code_names(source), ["A", "B", "C"]);
}

#[test]
fn streaming_calls_record_first_byte_and_first_token() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(
        &stub,
        &out,
        "oracle-a",
        "--trials 1 --suite store --tasks M1 --stream",
    );
    assert_eq!(
        run.conversations[0].outcome,
        Outcome::Pass,
        "tool calls arrive in stream chunks too"
    );
    for call in &run.conversations[0].calls {
        let (ttfb, ttft, wall) = (
            call.ttfb_s.get().expect("ttfb"),
            call.ttft_s.get().expect("ttft"),
            call.wall_s.get().expect("wall"),
        );
        assert!(ttfb <= ttft && ttft <= wall, "{ttfb} <= {ttft} <= {wall}");
        assert!(
            call.timings.eval_count.is_some(),
            "metrics come from the final chunk"
        );
    }
}

/// A value `serve-stub` accepted and then panicked on (a worker on every request, or at start)
/// is refused before it listens, naming the flag, the variable or the file and key.
#[test]
fn serve_stub_refuses_settings_it_cannot_represent() {
    let tmp = util::tempdir();
    let file = tmp.path().join("stub.toml");
    // (flags, the file's text, an environment variable, what the refusal says)
    type Case<'a> = (
        &'a [&'a str],
        Option<&'a str>,
        Option<(&'a str, &'a str)>,
        &'a str,
    );
    let cases: [Case; 5] = [
        (&["--speed", "1e-300"], None, None, "--speed must be"),
        (
            &["--num-parallel", "2305843009213693952"],
            None,
            None,
            "--num-parallel must be at most",
        ),
        (
            &[],
            Some("load_ms = 1e300\n"),
            None,
            "stub.toml: stub configuration: load_ms must be",
        ),
        (
            &[],
            Some("decode_tok_per_s = 1e-300\n"),
            None,
            "stub.toml: stub configuration: decode_tok_per_s must be",
        ),
        (
            &[],
            None,
            Some(("OLLAMA_NUM_PARALLEL", "2305843009213693952")),
            "OLLAMA_NUM_PARALLEL must be at most",
        ),
    ];
    for (flags, toml, env, said) in cases {
        let mut cmd = passk();
        cmd.args(["serve-stub", "--port", "0"]).args(flags);
        if let Some(text) = toml {
            std::fs::write(&file, text).expect("write");
            cmd.arg("--config").arg(&file);
        }
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        // A stub that took the value would listen until killed: give it 20 s to refuse.
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().expect("wait").is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let out = child.wait_with_output().expect("output");
        let err = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        assert!(
            code == 1 || code == 2,
            "{flags:?} {toml:?}: exit {code}: {err}"
        );
        assert!(
            err.contains(said) && !err.contains("panicked"),
            "{said}: {err}"
        );
    }
}

/// Over `/v1`, a server that is Ollama (here the stub, which says it is Ollama-like) is told
/// Ollama's fix for a model without tools, not llama-server's.
#[test]
fn doctor_over_v1_gives_the_fix_of_the_server_it_found() {
    let stub = Stub::start(vec![], |_| {});
    let (code, stdout, _) = output(passk().args([
        "doctor",
        "--api",
        "openai",
        "--host",
        &stub.host(),
        "--models",
        "no-tools",
    ]));
    assert_eq!(code, 7, "{stdout}");
    assert!(
        stdout.contains("drops the tools") && stdout.contains("ollama show"),
        "{stdout}"
    );
    assert!(!stdout.contains("llama-server"), "{stdout}");
}

#[test]
fn doctor_names_each_problem_with_a_fix() {
    let stub = Stub::start(vec![], |_| {});
    let (code, stdout, _) = output(passk().args([
        "doctor",
        "--host",
        &stub.host(),
        "--models",
        "oracle,nosuch:1b",
    ]));
    assert_eq!(code, 7, "{stdout}");
    assert!(stdout.contains("[ ok ] Ollama reachable"), "{stdout}");
    assert!(stdout.contains("[ ok ] oracle supports tools"), "{stdout}");
    assert!(
        stdout.contains("[FAIL] nosuch:1b is not available"),
        "{stdout}"
    );
    assert!(stdout.contains("passk pull nosuch:1b`"), "{stdout}");
    let (code, stdout, _) =
        output(passk().args(["doctor", "--host", "127.0.0.1:9", "--models", "oracle"]));
    assert_eq!(code, 7);
    assert!(
        stdout.contains("[FAIL] Ollama not reachable") && stdout.contains("ollama serve"),
        "{stdout}"
    );
}

#[test]
fn unknown_task_ids_are_refused_before_any_trace() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let args = run_args(&stub, &out, "oracle", "--suite store --tasks L1,L99");
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("L99") && !stderr.contains("L1,"),
        "{stderr}"
    );
    assert!(!out.join("conversations.jsonl").exists());
}

#[test]
fn trials_lost_on_the_wire_run_again_when_the_same_command_is_rerun() {
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let flags = "--trials 1 --suite store --tasks L1,L2,L3,L4,L5,L6,M1,M2 --retries 0";
    {
        // A server that answers /api/version but resets every chat: not gone, so the run goes on
        // and records every trial as a transport failure, with a hint.
        let dead = ModelSpec::new(Behaviour::Oracle).with_faults(FaultRates {
            reset: 1.0,
            ..FaultRates::default()
        });
        let stub = Stub::start(vec![("m", dead)], |_| {});
        let (code, _, stderr) = output(passk().args(run_args(&stub, &out, "m", flags)));
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("but the server answers"), "{stderr}");
    }
    assert_eq!(keys_of(&out, true).len(), 8, "eight failed trials on disk");
    let stub = Stub::start(vec![("m", Behaviour::Oracle.into())], |_| {});
    let run = run_ok(&stub, &out, "m", flags);
    assert_eq!(run.conversations.len(), 8);
    assert!(run.conversations.iter().all(|c| c.outcome == Outcome::Pass));
    assert_eq!(
        run.superseded, 8,
        "the failed records are superseded, not counted"
    );
}

#[test]
fn a_server_that_goes_away_stops_the_run() {
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let stub = Stub::start(vec![("m", Behaviour::Oracle.into())], |c| {
        c.load = Duration::from_millis(3)
    });
    let args = run_args(&stub, &out, "m", "--trials 2 --suite store --retries 0");
    let child = util::spawn(&args, Stdio::null(), Stdio::piped());
    let started = std::time::Instant::now();
    while keys_of(&out, false).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stub);
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(9), "{stderr}");
    assert!(
        stderr.contains("no longer answers") && stderr.contains("rerun the same command"),
        "{stderr}"
    );
    assert!(
        keys_of(&out, true).len() < 2 * util::store_conversations(),
        "stopped before the plan was done"
    );
    // The trials finished before the server left keep their summary on screen, above the error.
    let table = stderr.find("Tasks passing every trial").expect(&stderr);
    let error = stderr.rfind("error: ").expect(&stderr);
    assert!(table < error, "{stderr}");
}

#[test]
fn the_experiment_file_sets_what_flags_leave_unset() {
    let stub = Stub::start(vec![], |_| {});
    let tmp = util::tempdir();
    let file = tmp.path().join("exp.toml");
    std::fs::write(
        &file,
        "trials = 1\nsuite = [\"router\"]\ntimeout = 42.0\nretries = 1\n",
    )
    .expect("write");
    let out = tmp.path().join("run");
    let flags = format!("--config {} --retries 2", file.display());
    let run = run_ok(&stub, &out, "oracle", &flags);
    let settings = &run.manifest.settings;
    assert_eq!(
        (settings["timeout_s"].as_f64(), settings["retries"].as_u64()),
        (Some(42.0), Some(2)),
        "file, then flags"
    );
    assert_eq!(run.router.len(), util::router_messages());
    assert!(
        run.manifest
            .experiment_file
            .as_deref()
            .is_some_and(|t| t.contains("timeout = 42.0"))
    );
}

#[test]
fn what_tools_add_sets_the_agent_beside_its_toolless_baseline() {
    let stub = Stub::oracles(&["oracle-a"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let run = run_ok(
        &stub,
        &out,
        "oracle-a",
        "--trials 1 --suite store --baseline toolless --report",
    );
    let summary = passk::analysis::summarize(
        &run.manifest,
        &run.conversations,
        &run.router,
        &passk::analysis::AnalysisOptions::for_manifest(&run.manifest),
    );
    let added = &summary.tools_add["store"]["oracle-a"];
    let n = util::store_conversations();
    assert_eq!(added.tasks, n);
    assert_eq!(added.agent_success, Some(1.0));
    // The oracle's toolless replies pass the answer checks, but no reply can act: every task that
    // requires an action fails without tools, so tools add exactly the share of such tasks.
    let toolless_passes = run
        .conversations
        .iter()
        .filter(|c| c.mode == passk::runner::record::Mode::Toolless && c.verdict.passed)
        .count();
    let expected = 1.0 - toolless_passes as f64 / n as f64;
    assert!(expected > 0.0 && (added.difference.unwrap() - expected).abs() < 1e-12);
    let ci = added.ci95.expect("interval");
    assert!(ci.low <= expected && expected <= ci.high);
    let md = std::fs::read_to_string(out.join("report/report.md")).expect("report.md");
    assert!(md.contains("## What tools add"), "{md}");
}

#[test]
fn a_factorial_run_plays_every_cell_once_and_resumes_without_duplicates() {
    let stub = Stub::oracles(&["oracle-a", "oracle-b"]);
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let design = "--trials 2 --suite store --tool-docs bare,documented --router-in-front off,on";
    // First a part of the tasks, then all of them: the same command resumes, playing only the
    // trials not on disk.
    run_ok(
        &stub,
        &out,
        "oracle-a,oracle-b",
        &format!("{design} --tasks L1"),
    );
    let first = keys(&out).len();
    let run = run_ok(
        &stub,
        &out,
        "oracle-a,oracle-b",
        &format!("{design} --tasks L1,L2"),
    );
    let all = keys(&out);
    let unique: BTreeSet<&TrialKey> = all.iter().collect();
    // 2 models x 2 tool docs x 2 router levels x 2 trials x the tasks.
    assert_eq!((first, all.len(), unique.len()), (16, 32, 32));
    let cells: BTreeSet<(Option<passk::domain::ToolVariant>, bool)> = all
        .iter()
        .map(|k| (k.tool_docs, k.router_in_front))
        .collect();
    assert_eq!(cells.len(), 4);
    for c in &run.conversations {
        let routed = c
            .calls
            .iter()
            .any(|call| call.node == passk::runner::record::Node::Router);
        assert_eq!(routed, c.router_in_front, "{} {:?}", c.task, c.tool_docs);
        assert_eq!(c.outcome, Outcome::Pass);
    }
    let again = run_ok(
        &stub,
        &out,
        "oracle-a,oracle-b",
        &format!("{design} --tasks L1,L2"),
    );
    assert_eq!(again.conversations.len(), 32);
    let (code, _, stderr) = output(passk().args(["report", &out.display().to_string()]));
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report/summary.json")).expect("summary"),
    )
    .expect("json");
    // The oracle passes every cell: every effect and every interaction is exactly 0.
    let f = &summary["factorial"][0];
    for m in ["oracle-a", "oracle-b"] {
        for e in ["docs", "router", "docs_x_router"] {
            assert_eq!(f["models"][m][e]["estimate"], 0.0, "{m} {e}");
        }
    }
    assert_eq!(f["between_models"][0]["docs"]["estimate"], 0.0);
    assert_eq!(summary["groups"].as_object().map(|g| g.len()), Some(4));
    let md = std::fs::read_to_string(out.join("report/report.md")).expect("report");
    assert!(md.contains("## Factorial effects: `store`"), "{md}");
}

/// `--force-first-tool-call` sends the tools' call schema as structured output with each customer
/// turn's first call, over both wires (Ollama's `format`, the OpenAI-compatible
/// `response_format`). The stub's text-calls model writes its calls as prose, which a schema
/// constrains (`format` shapes a reply without native calls): its first call of every turn comes
/// back in the schema's shape, is read as one call and executed, with other arguments than the
/// same trial's unconstrained call; the manifest says so.
#[test]
fn forcing_the_first_tool_call_constrains_each_turns_first_call_over_both_wires() {
    let stub = Stub::start(vec![], |_| {});
    let first_events = |run: &passk::analysis::Run| -> Vec<(String, String)> {
        let mut convs: Vec<_> = run.conversations.iter().collect();
        convs.sort_by(|a, b| a.task.cmp(&b.task));
        convs
            .iter()
            .map(|c| {
                let e = c.tool_events.first().expect("a tool call");
                (e.tool.clone(), e.args.to_string())
            })
            .collect()
    };
    for api in ["", "--api openai"] {
        let tmp = util::tempdir();
        let flags = format!("--trials 1 --suite store --tasks L1,M1 {api}");
        let free = run_ok(&stub, &tmp.path().join("free"), "text-calls", &flags);
        let forced = run_ok(
            &stub,
            &tmp.path().join("forced"),
            "text-calls",
            &format!("{flags} --force-first-tool-call"),
        );
        assert_eq!(forced.manifest.settings["force_first_tool_call"], true);
        assert!(
            free.manifest
                .settings
                .get("force_first_tool_call")
                .is_none()
        );
        for c in &forced.conversations {
            for call in c.orchestrator_calls().filter(|k| k.step == 0) {
                assert_eq!(
                    (call.tool_calls, call.call_format),
                    (1, Some(CallFormat::Text)),
                    "{api} {}: turn {}",
                    c.task,
                    call.turn
                );
            }
        }
        let (free, forced) = (first_events(&free), first_events(&forced));
        assert_eq!(free.len(), 2);
        for (f, x) in free.iter().zip(&forced) {
            assert_ne!(
                f, x,
                "{api}: the constrained call is the schema's, not the model's own"
            );
        }
    }
}
