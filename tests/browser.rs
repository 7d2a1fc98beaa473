//! `report.html` and `compare.html` in a real browser: headless Chromium loads each page from disk
//! with the `#selftest` hash, the page clicks its first failing cell and writes what it saw into
//! the DOM, and the test reads the dumped DOM. Skipped, with a message, when no Chromium is found.

use crate::util::{self, Stub, load, output, passk};
use passk::report::REPORT_DIR;
use passk::report::html::selftest::{find_chromium, run_selftest};
use passk::report::html::{COMPARE_HTML, REPORT_HTML};
use passk::runner::record::Outcome;
use passk_stub::Behaviour;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// How long one page may take to load and test itself.
const PAGE_TIMEOUT: Duration = Duration::from_secs(90);

/// The page's self-test result (see `passk::report::html::selftest`).
fn selftest(browser: &Path, page: &Path) -> Value {
    let profile = util::tempdir();
    run_selftest(browser, page, profile.path(), PAGE_TIMEOUT).unwrap_or_else(|e| panic!("{e}"))
}

/// `passk run` of `models` on three store tasks, two trials each, into `out`.
fn run(stub: &Stub, out: &Path, models: &str) {
    let (code, _, stderr) = output(passk().args([
        "run",
        "--no-progress",
        "--host",
        &stub.host(),
        "--models",
        models,
        "--suite",
        "store",
        "--tasks",
        "L1,M1,W1",
        "--trials",
        "2",
        "--out",
        &out.display().to_string(),
    ]));
    assert_eq!(code, 0, "{stderr}");
}

/// Above `--inline-transcripts-mib` (here 0: always) the page keeps the grid and the tables and
/// loads each trial's transcript from a script file beside it when the trial is opened, from disk;
/// a later report that fits removes the folder again.
#[test]
fn report_page_loads_transcripts_from_files_beside_it() {
    let Some(browser) = find_chromium() else {
        util::skip("no chromium on PATH (Debian: apt-get install chromium)");
        return;
    };
    let stub = Stub::start(
        vec![
            ("oracle-a", Behaviour::Oracle.into()),
            ("never-answer", Behaviour::NeverAnswer.into()),
        ],
        |_| {},
    );
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    run(&stub, &out, "oracle-a,never-answer");
    let report = |mib: &str| {
        let (code, _, stderr) = output(passk().arg("report").arg(&out).args([
            "--resamples",
            "50",
            "--inline-transcripts-mib",
            mib,
        ]));
        assert_eq!(code, 0, "{stderr}");
    };
    report("0");
    let dir = out.join(REPORT_DIR);
    let files = dir.join(passk::report::html::transcripts::TRANSCRIPTS_DIR);
    let chunk = std::fs::read_to_string(files.join("0000.js")).expect("a transcript file");
    assert!(
        chunk.starts_with("passkTranscripts(0, ["),
        "{}",
        &chunk[..40]
    );
    let details = |page: &str| {
        let after = page.split("id=\"details\">").nth(1).unwrap_or_default();
        after
            .split("</script>")
            .next()
            .unwrap_or_default()
            .trim()
            .len()
    };
    let page = std::fs::read_to_string(dir.join(REPORT_HTML)).expect("page");
    assert_eq!(details(&page), 0, "the page carries no transcript itself");
    let result = selftest(&browser, &dir.join(REPORT_HTML));
    assert_eq!(result["errors"], 0, "console errors: {result}");
    assert_eq!(result["opened_outcome"], "model_fail", "{result}");
    assert!(
        result["transcript_messages"].as_u64() > Some(2),
        "the transcript is loaded and shown: {result}"
    );
    assert_eq!(result["last_trial_matches"], true, "{result}");
    assert!(
        result["failure_mode"]
            .as_str()
            .is_some_and(|m| m.starts_with("failure mode: ")),
        "{result}"
    );
    report("16");
    assert!(
        !files.exists(),
        "a page that carries its lines leaves no stale folder"
    );
    let page = std::fs::read_to_string(dir.join(REPORT_HTML)).expect("page");
    assert!(details(&page) > chunk.len() / 2, "carried inline again");
}

#[test]
fn report_page_shows_a_failing_trial_in_a_real_browser() {
    let Some(browser) = find_chromium() else {
        util::skip("no chromium on PATH (Debian: apt-get install chromium)");
        return;
    };
    // The stub publishes the suites it loaded, as `passk serve-stub` does: the report is a stub
    // run's, and must say so on its first screen.
    let all = passk::suites::AllSuites::load(&util::root()).expect("suites");
    let digests = passk::runner::experiment::task_digests(&all.domain_refs(), Some(&all.router));
    let stub = Stub::start(
        vec![
            ("oracle-a", Behaviour::Oracle.into()),
            ("never-answer", Behaviour::NeverAnswer.into()),
        ],
        |c| c.suites = digests,
    );
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    run(&stub, &out, "oracle-a,never-answer");
    let (code, _, stderr) = output(passk().arg("report").arg(&out).args(["--resamples", "50"]));
    assert_eq!(code, 0, "{stderr}");
    let records = load(&out);
    let tasks: BTreeSet<&str> = records
        .conversations
        .iter()
        .map(|c| c.task.as_str())
        .collect();
    let models: BTreeSet<&str> = records
        .conversations
        .iter()
        .map(|c| c.model.as_str())
        .collect();
    let reasons: BTreeSet<&str> = records
        .conversations
        .iter()
        .filter(|c| c.outcome == Outcome::ModelFail)
        .flat_map(|c| c.verdict.reasons.iter().map(String::as_str))
        .collect();
    assert!(!reasons.is_empty(), "the fixture must have failures");

    let result = selftest(&browser, &out.join(REPORT_DIR).join(REPORT_HTML));
    assert_eq!(result["errors"], 0, "console errors: {result}");
    assert_eq!(
        result["duplicate_ids"],
        serde_json::json!([]),
        "every id in the drawn page is unique: {result}"
    );
    assert_eq!(
        result["cells"].as_u64(),
        Some((tasks.len() * models.len()) as u64),
        "one cell per task and model: {result}"
    );
    assert_eq!(result["opened_outcome"], "model_fail", "{result}");
    assert!(
        result["transcript_messages"].as_u64() > Some(2),
        "the transcript is shown: {result}"
    );
    let shown = result["reasons"].as_array().expect("reasons");
    assert!(
        !shown.is_empty()
            && shown
                .iter()
                .all(|r| r.as_str().is_some_and(|r| reasons.contains(r))),
        "the failure reasons of a failing trial are shown: {result}"
    );
    assert!(
        result["failure_mode"]
            .as_str()
            .is_some_and(|m| m.starts_with("failure mode: ")),
        "{result}"
    );
    // The page opens on its summary: the stub warning, the headline with its interval, the
    // provenance; the grid one click away.
    assert_eq!(result["first_tab"], "summary", "{result}");
    let summary = result["summary_text"].as_str().unwrap_or_default();
    for shown in [
        "STUB RUN",
        "Success rate",
        "95% CI",
        "Provenance",
        "passk",
        "graders",
    ] {
        assert!(
            summary.contains(shown),
            "{shown:?} not in the summary: {summary}"
        );
    }
    assert!(
        !summary.contains("Failure taxonomy"),
        "the summary is not every table: {summary}"
    );
    assert!(result["summary_tables"].as_u64() >= Some(2), "{result}");
    assert_eq!(
        result["goto"],
        serde_json::json!(["grid", "charts", "tables"]),
        "{result}"
    );
}

#[test]
fn compare_page_sets_the_moved_tasks_side_by_side_in_a_real_browser() {
    let Some(browser) = find_chromium() else {
        util::skip("no chromium on PATH (Debian: apt-get install chromium)");
        return;
    };
    let tmp = util::tempdir();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for (dir, behaviour) in [(&a, Behaviour::Oracle), (&b, Behaviour::NeverAnswer)] {
        let stub = Stub::start(vec![("m", behaviour.into())], |_| {});
        run(&stub, dir, "m");
    }
    let cmp = tmp.path().join("cmp");
    let (code, _, stderr) = output(passk().arg("compare").arg(&a).arg(&b).args([
        "--resamples",
        "50",
        "--out",
        &cmp.display().to_string(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let result = selftest(&browser, &cmp.join(COMPARE_HTML));
    assert_eq!(result["errors"], 0, "console errors: {result}");
    assert_eq!(
        result["pairs"], 3,
        "every task fell from 2/2 to 0/2: {result}"
    );
    assert_eq!(
        result["trials_open"], 6,
        "a trial of A and one of B each: {result}"
    );
    assert!(
        result["metrics_tables"].as_u64() >= Some(1),
        "compare.md's metrics come first: {result}"
    );

    // A comparison where no task moved still shows the metrics, never a blank page.
    let same = tmp.path().join("same");
    let (code, _, stderr) = output(passk().arg("compare").arg(&a).arg(&a).args([
        "--resamples",
        "50",
        "--out",
        &same.display().to_string(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let result = selftest(&browser, &same.join(COMPARE_HTML));
    assert_eq!(result["errors"], 0, "console errors: {result}");
    assert_eq!(result["pairs"], 0, "{result}");
    assert!(result["metrics_tables"].as_u64() >= Some(1), "{result}");
    let text = result["page_text"].as_str().unwrap_or_default();
    assert!(text.contains("No task's pass count moved"), "{text}");
}
