//! The runs `scripts/real-play.sh` played with real models over both wires, checked for what must
//! hold for any model, never a success rate: every planned trial recorded once; every call's
//! token counts and durations equal llama-server's own, read from its log; no text of passk's own
//! read as a call; every failed call in a bucket; the reports build and render. Without those runs
//! (no servers started, or the script not run) it prints one SKIPPED line and passes.

use crate::util::{self, load, output, passk};
use passk::runner::record::{CallRecord, Outcome, RecordedJson};
use passk::wire::outcome::CallOutcome;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One run of the plan: `wire model dir store router triage k log`.
struct Scheduled {
    wire: String,
    model: String,
    dir: PathBuf,
    conversations: usize,
    router: usize,
    log: PathBuf,
}

/// `$VAR/file`, else `~/.cache/passk/<dir>/file`, as the scripts place them.
fn cached(var: &str, dir: &str, file: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) => PathBuf::from(p).join(file),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/passk")
            .join(dir)
            .join(file),
    }
}

/// Why there is nothing to check: no servers up, or no runs played since they started.
fn skipped(state: &Path, plan: &Path) -> Option<String> {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    match (modified(state), modified(plan)) {
        (None, _) => Some(format!(
            "no real models started ({} absent)",
            state.display()
        )),
        (_, None) => Some(format!("no real-model runs at {}", plan.display())),
        (Some(s), Some(p)) if p < s => Some(format!(
            "{} is older than the servers of {}",
            plan.display(),
            state.display()
        )),
        _ => None,
    }
}

fn read_plan(path: &Path) -> Vec<Scheduled> {
    let text = std::fs::read_to_string(path).expect("plan.tsv");
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 8, "{}:{}: {line}", path.display(), i + 1);
            let n = |s: &str| s.parse::<usize>().expect("a count");
            let k = n(f[6]);
            Scheduled {
                wire: f[0].into(),
                model: f[1].into(),
                dir: f[2].into(),
                conversations: (n(f[3]) + n(f[5])) * k,
                router: n(f[4]) * k,
                log: f[7].into(),
            }
        })
        .collect()
}

/// llama-server's own figures of each request it finished, from its log's `print_timing` lines:
/// (prompt tokens evaluated, prompt ms, output tokens, decode ms).
fn server_timings(log: &Path) -> Vec<(u64, f64, u64, f64)> {
    let text = std::fs::read_to_string(log).expect("llama-server log");
    let figures = |line: &str| -> Option<(f64, u64)> {
        let rest = line.split(" time =").nth(1)?;
        let (ms, tokens) = rest.split_once(" ms /")?;
        let tokens = tokens.split_whitespace().next()?;
        Some((ms.trim().parse().ok()?, tokens.parse().ok()?))
    };
    let mut out = Vec::new();
    let mut prompt = None;
    for line in text.lines().filter(|l| l.contains("print_timing")) {
        if line.contains("prompt eval time =") {
            prompt = figures(line);
        } else if line.contains("| task")
            && line.contains("  eval time =")
            && let (Some((pms, pn)), Some((ems, en))) = (prompt.take(), figures(line))
        {
            out.push((pn, pms, en, ems));
        }
    }
    out
}

/// Whether llama-server's log has a request with the call's counts and durations (its log
/// writes milliseconds to two decimals).
fn matches_server(call: &CallRecord, server: &[(u64, f64, u64, f64)]) -> bool {
    let t = &call.timings;
    let (Some(prompt), Some(pd), Some(out), Some(ed)) = (
        t.prompt_eval_count.get(),
        t.prompt_eval_duration.get(),
        t.eval_count.get(),
        t.eval_duration.get(),
    ) else {
        return false;
    };
    let evaluated = prompt - t.prompt_eval_cached_count.get().unwrap_or(0);
    let near = |ns: u64, ms: f64| (ns as f64 / 1e6 - ms).abs() <= 0.006;
    server
        .iter()
        .any(|&(pn, pms, en, ems)| pn == evaluated && en == out && near(pd, pms) && near(ed, ems))
}

#[test]
fn real_model_runs_hold_every_invariant() {
    let state = cached("PASSK_REAL_STATE", "state", "servers.tsv");
    let path = cached("PASSK_REAL_PLAY", "play", "plan.tsv");
    if let Some(why) = skipped(&state, &path) {
        crate::util::skip(&format!(
            "{why} (scripts/real-models.sh start, then scripts/real-play.sh --ci)"
        ));
        return;
    }
    let plan = read_plan(&path);
    assert!(!plan.is_empty(), "{}: no runs", path.display());
    for p in &plan {
        let what = format!("{} {} ({})", p.wire, p.model, p.dir.display());
        let run = load(&p.dir);
        every_trial_once(&run, p, &what);
        let server = server_timings(&p.log);
        let calls: Vec<&CallRecord> = run
            .conversations
            .iter()
            .flat_map(|c| &c.calls)
            .chain(run.router.iter().map(|r| &r.call))
            .collect();
        for call in calls.iter().filter(|c| c.outcome == CallOutcome::Ok) {
            assert!(
                matches_server(call, &server),
                "{what}: a call's counts and durations are not llama-server's own: {:?}",
                call.timings
            );
        }
        every_failure_bucketed(&run, &what);
        real_arguments_reach_the_tools(&run, &what);
        no_harness_text_read_as_a_call(&run, &what);
        report_builds_and_renders(&p.dir, &what);
    }
}

fn every_trial_once(run: &passk::analysis::Run, p: &Scheduled, what: &str) {
    let keys: BTreeSet<_> = run
        .conversations
        .iter()
        .map(|c| (c.suite.clone(), c.task.clone(), c.trial, c.mode))
        .collect();
    assert_eq!(
        run.conversations.len(),
        p.conversations,
        "{what}: conversations"
    );
    assert_eq!(
        keys.len(),
        p.conversations,
        "{what}: a trial recorded twice"
    );
    let routed: BTreeSet<_> = run.router.iter().map(|r| (r.index, r.trial)).collect();
    assert_eq!(run.router.len(), p.router, "{what}: router messages");
    assert_eq!(
        routed.len(),
        p.router,
        "{what}: a router trial recorded twice"
    );
    assert_eq!(run.superseded + run.torn_lines, 0, "{what}");
}

fn every_failure_bucketed(run: &passk::analysis::Run, what: &str) {
    for c in &run.conversations {
        let failed = c.calls.iter().any(|k| k.outcome != CallOutcome::Ok);
        let wire = matches!(c.outcome, Outcome::TransportFail | Outcome::ProtocolFail);
        assert_eq!(
            failed, wire,
            "{what}: {} trial {}: {:?}",
            c.task, c.trial, c.outcome
        );
        for k in &c.calls {
            let last = k.attempts.last().map(|a| a.outcome);
            assert_eq!(
                last,
                Some(k.outcome),
                "{what}: a call's bucket is its last attempt's"
            );
        }
    }
}

/// With each turn's first call constrained to a tool call, the models' own arguments, however
/// wild, reach the tools: each run records tool calls (executed, rejected or malformed). Not every
/// conversation needs one: a constrained reply cut at the output cap may be no call at all.
fn real_arguments_reach_the_tools(run: &passk::analysis::Run, what: &str) {
    if run.manifest.settings["force_first_tool_call"] != true {
        return;
    }
    let events: usize = run.conversations.iter().map(|c| c.tool_events.len()).sum();
    assert!(
        events > 0,
        "{what}: constrained first calls made no tool call"
    );
}

/// What passk itself puts in the history (tool results, its hints, system notes) holds no call
/// that passk would read: a model echoing it back is never taken to make a call.
fn no_harness_text_read_as_a_call(run: &passk::analysis::Run, what: &str) {
    let tools: Vec<String> = run
        .conversations
        .iter()
        .flat_map(|c| &c.tool_events)
        .map(|e| e.tool.clone())
        .collect();
    for c in &run.conversations {
        let harness = c
            .transcript
            .iter()
            .map(RecordedJson::to_value)
            .filter(|m| m["role"] == "tool");
        for text in harness.filter_map(|m| m["content"].as_str().map(str::to_string)) {
            let read = passk::wire::tool_call::extract_text(&text, &tools);
            assert!(
                read.is_empty(),
                "{what}: passk's own text read as a call: {text}"
            );
        }
    }
}

fn report_builds_and_renders(dir: &Path, what: &str) {
    let (code, _, stderr) = output(passk().args(["report", &dir.display().to_string()]));
    assert_eq!(code, 0, "{what}: {stderr}");
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("report.md");
    for bad in ["NaN", "inf%", "-0.0%"] {
        assert!(!md.contains(bad), "{what}: report.md shows {bad}");
    }
    let html = dir.join("report/report.html");
    assert!(html.exists(), "{what}: no report.html");
    let Some(browser) = ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok()
    }) else {
        crate::util::skip(&format!("no chromium to render {}", html.display()));
        return;
    };
    let shot = util::tempdir();
    let png = shot.path().join("report.png");
    let done = std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium");
    assert!(
        png.metadata().is_ok_and(|m| m.len() > 10_000),
        "{what}: report.html did not render: {}",
        String::from_utf8_lossy(&done.stderr)
    );
}
