//! `passk report` and `passk compare` through the real binary, on small run directories written
//! from records made here with known pass patterns (2 models x 4 tasks x 3 trials).

use crate::util::{output, passk, tempdir};
use passk::analysis::{RunComparison, Summary};
use passk::report::html::REPORT_HTML;
use passk::report::{
    CHARTS_DIR, CONVERSATIONS_CSV, REPORT_DIR, REPORT_MD, SUMMARY_JSON, chart_files,
};
use passk::runner::record::Timings;
use passk::runner::record::{
    CONVERSATIONS_FILE, CallRecord, ConversationRecord, GpuWindow, MANIFEST_FILE, Manifest, Mode,
    ModelInfo, Node, Outcome, Record, Status,
};
use passk::trace::Verdict;
use serde_json::json;
use std::path::Path;

/// `passk compare` refused runs graded by different graders (docs/reference/cli.md).
const DIFFERENT_GRADERS: i32 = 8;

const SMALL: &str = "m:small";
const LARGE: &str = "m:large";
/// A third model, for the ladder: in the manifest of every run, with records only where a test
/// adds them.
const MID: &str = "m:mid";
const TASKS: [&str; 4] = ["T1", "T2", "T3", "T4"];

/// Pass pattern per task (three trials each).
fn pattern(model: &str) -> [[bool; 3]; 4] {
    if model == SMALL {
        [
            [true, true, true],
            [true, false, false],
            [false, false, false],
            [true, true, false],
        ]
    } else {
        [
            [true, true, true],
            [true, true, true],
            [true, false, true],
            [true, true, true],
        ]
    }
}

fn call(i: u64, start_ms: u64) -> CallRecord {
    let mut c = CallRecord::new(Node::Orchestrator, 0, i as u32);
    c.started_unix_ms = Some(start_ms).into();
    c.wall_s = Some(0.5 + 0.1 * i as f64).into();
    c.timings = Timings {
        prompt_eval_count: Some(1000 + 100 * i).into(),
        eval_count: Some(20).into(),
        ..Timings::default()
    };
    c.gpu = Some(Box::new(GpuWindow {
        samples: 2,
        util_mean: Some(60.0 + i as f64),
        util_max: Some(90.0),
        energy_j: Some(10.0),
        ..GpuWindow::default()
    }));
    c
}

fn conversation(
    digest: &str,
    model: &str,
    task: usize,
    trial: u32,
    outcome: Outcome,
) -> ConversationRecord {
    let passed = outcome == Outcome::Pass;
    let start = 1_000_000 + (task as u64 * 10 + u64::from(trial)) * 5_000;
    ConversationRecord {
        schema_version: 1,
        grader_digest: digest.into(),
        suite: "store".into(),
        task: TASKS[task].into(),
        category: if task < 2 { "lookup" } else { "write" }.into(),
        model: model.into(),
        api: passk::wire::chat::ApiKind::Ollama,
        trial,
        call_cap: 10,
        mode: Mode::Agent,
        router_in_front: false,
        tool_docs: None,
        tool_docs_sha256: None,
        prompt: None,
        prompt_sha256: None,
        status: Status::Ok,
        outcome,
        calls: vec![call(0, start), call(1, start + 1_000)],
        tool_events: vec![],
        replies: vec![Some("done".into())],
        transcript: vec![],
        end_state: json!({}).into(),
        verdict: Verdict {
            passed,
            // Known trajectories, so that the four-state chart has something to show.
            trajectory_correct: Some(passed),
            ..Verdict::default()
        },
        wall_s: 1.5,
        imported: false,
        server_unreachable: false,
        host: None,
        parallel: None,
    }
}

/// Every record of a run: the pattern above, plus one transport failure of the small model.
fn records(digest: &str) -> Vec<ConversationRecord> {
    let mut out = Vec::new();
    for model in [SMALL, LARGE] {
        for (task, trials) in pattern(model).iter().enumerate() {
            for (trial, passed) in trials.iter().enumerate() {
                let o = if *passed {
                    Outcome::Pass
                } else {
                    Outcome::ModelFail
                };
                out.push(conversation(digest, model, task, trial as u32, o));
            }
        }
    }
    out.push(conversation(digest, SMALL, 0, 3, Outcome::TransportFail));
    out
}

fn write_run(dir: &Path, digest: &str, records: &[ConversationRecord]) {
    write_run_with(dir, digest, records, &|_| {});
}

/// [`write_run`] with the manifest changed by `tweak` first.
fn write_run_with(
    dir: &Path,
    digest: &str,
    records: &[ConversationRecord],
    tweak: &dyn Fn(&mut Manifest),
) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let info = |name: &str, size: &str| ModelInfo {
        name: name.into(),
        parameter_size: Some(size.into()),
        quantization: Some("Q4_K_M".into()),
        digest: Some(format!("sha256:{}", "ab".repeat(32))),
        ..ModelInfo::default()
    };
    let manifest = Manifest {
        schema_version: 1,
        run_id: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        passk_version: "test".into(),
        grader_digest: digest.into(),
        // k = 4: the small model's trial 3 of T1 ended on the wire, the others were not played.
        settings: json!({"trials": 4, "tool_docs": "bare", "temperature": 0.7, "num_ctx": 16384,
            "num_predict": 1024, "call_caps": [10], "router_in_front": false, "toolless": false}),
        server_version: Some("0.0.0".into()),
        backend: "stub".into(),
        // Listed large first: the report orders them by parameter size.
        models: vec![info(LARGE, "7B"), info(MID, "3B"), info(SMALL, "1.5B")],
        ..Manifest::default()
    };
    let mut manifest = manifest;
    tweak(&mut manifest);
    std::fs::write(
        dir.join(MANIFEST_FILE),
        serde_json::to_string_pretty(&manifest).expect("manifest json"),
    )
    .expect("write manifest");
    let mut lines = String::new();
    for r in records {
        lines += &serde_json::to_string(&Record::Conversation(Box::new(r.clone()))).expect("json");
        lines.push('\n');
    }
    std::fs::write(dir.join(CONVERSATIONS_FILE), lines).expect("write records");
}

fn report(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    output(
        passk()
            .arg("report")
            .arg(dir)
            .args(["--resamples", "200"])
            .args(extra),
    )
}

fn chart_names() -> [&'static str; 10] {
    [
        chart_files::PASS_K,
        chart_files::SUCCESS_BY_CATEGORY,
        chart_files::TOKENS_PER_SUCCESS,
        chart_files::LATENCY,
        chart_files::CONTEXT_GROWTH,
        chart_files::FOUR_STATE,
        chart_files::FAILURE_BUCKETS,
        chart_files::GPU_UTILIZATION,
        chart_files::FRONTIER_TOKENS,
        chart_files::FRONTIER_TIME,
    ]
}

/// Every file of the report, as (name, bytes), in a fixed order.
fn report_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let out = dir.join(REPORT_DIR);
    let mut names: Vec<String> = [REPORT_MD, SUMMARY_JSON, CONVERSATIONS_CSV]
        .iter()
        .map(|s| s.to_string())
        .collect();
    names.extend(chart_names().iter().map(|c| format!("{CHARTS_DIR}/{c}")));
    names.push(REPORT_HTML.to_string());
    names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(out.join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, bytes)
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn report_writes_every_file_with_the_hand_computed_figures() {
    let tmp = tempdir();
    let dir = tmp.path().join("run-a");
    write_run(&dir, "g1", &records("g1"));
    let (code, stdout, stderr) = report(&dir, &[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let files = report_files(&dir);
    for (name, bytes) in &files {
        assert!(!bytes.is_empty(), "{name} is empty");
    }
    let text = std::fs::read_to_string(dir.join(REPORT_DIR).join(SUMMARY_JSON)).expect("read");
    let s: Summary = serde_json::from_str(&text).expect("summary.json parses back");
    assert_eq!(s.models, [SMALL, LARGE], "ordered by parameter size");
    let g = &s.groups["store"];
    let small = &g.models[SMALL];
    let large = &g.models[LARGE];
    assert_eq!((small.passes, small.outcomes.graded), (6, 12));
    assert_eq!(small.success_rate, Some(0.5));
    assert_eq!(small.outcomes.transport_fail, 1);
    assert_eq!(small.denominator_note, "n = 12 of 13; 1 transport");
    // pass^k = mean over tasks of C(c, k) / C(3, k): small c = 3, 1, 0, 2; large c = 3, 3, 2, 3.
    assert!(close(small.pass_hat_k[&1], 0.5));
    assert!(close(
        small.pass_hat_k[&2],
        (1.0 + 0.0 + 0.0 + 1.0 / 3.0) / 4.0
    ));
    assert!(close(small.pass_hat_k[&3], 0.25));
    assert_eq!(small.tasks_passing_every_trial, 1);
    assert_eq!((large.passes, large.outcomes.graded), (11, 12));
    assert!(close(large.pass_hat_k[&2], (3.0 + 1.0 / 3.0) / 4.0));
    assert!(close(large.pass_hat_k[&3], 0.75));
    assert_eq!(large.tasks_passing_every_trial, 3);
    let gap = g.comparison.as_ref().expect("pair").success_rate_difference;
    assert!(close(gap.expect("gap"), 11.0 / 12.0 - 0.5));

    let md = String::from_utf8(files[0].1.clone()).expect("utf-8");
    assert!(md.starts_with("# passk report: run-a\n"), "{md}");
    assert!(
        md.contains("50.0% (6/12) (n = 12 of 13; 1 transport)"),
        "{md}"
    );
    assert!(md.contains("91.7% (11/12)"), "{md}");
    assert!(md.contains("pass^3: 25.0%"), "{md}");
    assert!(md.contains("1 of 4 tasks"), "{md}");
    assert!(md.contains("### Break-even"), "{md}");
    assert!(!md.contains("No GPU telemetry recorded"), "{md}");
    assert!(!md.contains("IMPORTED"), "{md}");
    for c in chart_names() {
        assert!(
            md.contains(&format!("({CHARTS_DIR}/{c})")),
            "{c} not linked"
        );
    }
    let csv = String::from_utf8(files[2].1.clone()).expect("utf-8");
    assert_eq!(
        csv.lines().count(),
        1 + 25,
        "header and one row per conversation"
    );
    assert!(stdout.contains("50.0% (6/12)"), "{stdout}");
    assert!(stdout.contains("pass^3"), "{stdout}");
    // The path printed is the page a person opens.
    assert!(
        stderr.contains(&format!("{REPORT_DIR}/{REPORT_HTML}")),
        "{stderr}"
    );
}

#[test]
fn a_run_without_gpu_telemetry_gets_no_gpu_chart_and_loses_a_stale_one() {
    let tmp = tempdir();
    let dir = tmp.path().join("run");
    let mut recs = records("g1");
    for c in &mut recs {
        for call in &mut c.calls {
            call.gpu = None;
        }
    }
    write_run(&dir, "g1", &recs);
    // A chart an earlier report wrote, which this one has nothing for.
    let charts = dir.join(REPORT_DIR).join(CHARTS_DIR);
    std::fs::create_dir_all(&charts).expect("mkdir");
    let stale = charts.join(chart_files::GPU_UTILIZATION);
    std::fs::write(&stale, "<svg/>").expect("write");
    let (code, _, stderr) = report(&dir, &[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(!stale.exists(), "the stale GPU chart is removed");
    let md = std::fs::read_to_string(dir.join(REPORT_DIR).join(REPORT_MD)).expect("md");
    let html = std::fs::read_to_string(dir.join(REPORT_DIR).join(REPORT_HTML)).expect("html");
    assert!(!md.contains(chart_files::GPU_UTILIZATION), "{md}");
    assert!(
        !html.contains(chart_files::GPU_UTILIZATION),
        "not on the charts tab"
    );
    for c in chart_names() {
        let linked = md.contains(&format!("({CHARTS_DIR}/{c})"));
        assert_eq!(
            linked,
            charts.join(c).exists(),
            "{c}: linked exactly when written"
        );
        assert_eq!(linked, c != chart_files::GPU_UTILIZATION, "{c}");
    }
}

/// The values of every `id="…"` in `markup`.
fn ids(markup: &str) -> Vec<&str> {
    markup
        .split(" id=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

/// The text between `<script … id="{id}">` and its `</script>`.
fn script<'h>(html: &'h str, id: &str) -> &'h str {
    let open = format!(r#"id="{id}">"#);
    let start = html.find(&open).unwrap_or_else(|| panic!("no #{id}")) + open.len();
    let len = html[start..].find("</script>").expect("closed");
    &html[start..start + len]
}

#[test]
fn every_id_in_report_html_is_unique_and_each_chart_clips_to_its_own_plot() {
    let tmp = tempdir();
    let dir = tmp.path().join("run");
    write_run(&dir, "g1", &records("g1"));
    let (code, _, stderr) = report(&dir, &[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let html = std::fs::read_to_string(dir.join(REPORT_DIR).join(REPORT_HTML)).expect("html");
    let data: serde_json::Value = serde_json::from_str(script(&html, "data")).expect("data");
    let charts = data["charts"].as_array().expect("charts");
    assert!(charts.len() > 2, "several clipped charts inlined");
    let mut all: Vec<String> = ids(&html.replace(script(&html, "data"), ""))
        .into_iter()
        .map(String::from)
        .collect();
    let mut clipped = 0;
    for chart in charts {
        let svg = chart[1].as_str().expect("svg");
        let own = ids(svg);
        for reference in svg.split("url(#").skip(1) {
            let target = reference.split(')').next().expect("closed");
            assert!(
                own.contains(&target),
                "{}: url(#{target}) is not its own",
                chart[0]
            );
            clipped += 1;
        }
        all.extend(own.into_iter().map(String::from));
    }
    assert!(clipped > 2, "the fixture has clipped charts");
    let mut seen = std::collections::BTreeSet::new();
    let repeated: Vec<&String> = all.iter().filter(|id| !seen.insert(*id)).collect();
    assert!(
        repeated.is_empty(),
        "ids repeated in report.html: {repeated:?}"
    );
}

#[test]
fn same_records_give_byte_identical_files_in_any_order() {
    let tmp = tempdir();
    let dir = tmp.path().join("run");
    let mut recs = records("g1");
    write_run(&dir, "g1", &recs);
    assert_eq!(report(&dir, &[]).0, 0);
    let first = report_files(&dir);
    assert_eq!(report(&dir, &[]).0, 0);
    assert_eq!(first, report_files(&dir), "same records, same bytes");
    recs.reverse();
    write_run(&dir, "g1", &recs);
    assert_eq!(report(&dir, &[]).0, 0);
    assert_eq!(first, report_files(&dir), "append order does not matter");
}

#[test]
fn a_run_read_back_one_cell_at_a_time_gives_byte_identical_files() {
    let tmp = tempdir();
    let dir = tmp.path().join("run");
    let mut recs = records("g1");
    // A trial that ended on the wire and was played again: the first record is superseded.
    let mut failed = recs[3].clone();
    failed.outcome = Outcome::TransportFail;
    recs.insert(0, failed);
    write_run(&dir, "g1", &recs);
    assert_eq!(report(&dir, &[]).0, 0);
    let held = report_files(&dir);
    let (code, _, stderr) = report(&dir, &["--hold-records-mib", "0"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(
        held,
        report_files(&dir),
        "held or read back, the same bytes"
    );
    let md = String::from_utf8(held[0].1.clone()).expect("utf-8");
    assert!(md.contains("1 record(s) superseded"), "{md}");
    let (code, csv, _) = report(&dir, &["--hold-records-mib", "0", "--export-csv", "-"]);
    assert_eq!(code, 0);
    assert_eq!(
        csv.as_bytes(),
        held[2].1,
        "the CSV written cell by cell goes to stdout too"
    );
    let left: Vec<String> = std::fs::read_dir(dir.join(REPORT_DIR))
        .expect("report dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "no temporary file is left: {left:?}");
}

#[test]
fn export_to_stdout_replaces_the_table() {
    let tmp = tempdir();
    let dir = tmp.path().join("run");
    write_run(&dir, "g1", &records("g1"));
    let copy = tmp.path().join("elsewhere/report.md");
    let (code, stdout, stderr) = report(
        &dir,
        &[
            "--export-json",
            "-",
            "--export-markdown",
            copy.to_str().expect("utf-8 path"),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let s: Summary = serde_json::from_str(&stdout).expect("stdout is the summary JSON");
    assert_eq!(s.run_id, "run");
    assert_eq!(
        std::fs::read(&copy).expect("copy"),
        std::fs::read(dir.join(REPORT_DIR).join(REPORT_MD)).expect("report")
    );
    let (code, _, stderr) = report(&dir, &["--export-json", "-", "--export-csv", "-"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("standard output"), "{stderr}");
}

#[test]
fn compare_refuses_different_graders_unless_allowed() {
    let tmp = tempdir();
    let (a, b) = (tmp.path().join("run-a"), tmp.path().join("run-b"));
    write_run(&a, "digest-one", &records("digest-one"));
    write_run(&b, "digest-two", &records("digest-two"));
    let (code, stdout, stderr) = output(passk().arg("compare").arg(&a).arg(&b));
    assert_eq!(code, DIFFERENT_GRADERS, "{stderr}");
    assert!(
        stderr.contains("digest-one") && stderr.contains("digest-two"),
        "{stderr}"
    );
    assert!(stdout.is_empty());
    assert!(!b.join("compare-run-a").exists());

    let (code, stdout, stderr) = output(passk().arg("compare").arg(&a).arg(&b).args([
        "--allow-different-graders",
        "--resamples",
        "200",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("DIFFERENT GRADERS"), "{stdout}");
    let out = b.join("compare-run-a");
    let md = std::fs::read_to_string(out.join("compare.md")).expect("compare.md");
    let top: String = md.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(top.contains("DIFFERENT GRADERS"), "{md}");
    assert!(
        md.contains("digest-one") && md.contains("digest-two"),
        "{md}"
    );
    let c: RunComparison =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).expect("json"))
            .expect("compare.json parses back");
    assert!(c.different_graders);
    let m = &c.groups["store"][SMALL];
    assert_eq!(m.shared_tasks, 4);
    assert_eq!(m.success_rate_difference, Some(0.0));
}

#[test]
fn compare_shows_the_difference_over_shared_tasks() {
    let tmp = tempdir();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_run(&a, "g", &records("g"));
    // B: the small model now passes every trial of T3.
    let better: Vec<ConversationRecord> = records("g")
        .into_iter()
        .map(|mut c| {
            if c.model == SMALL && c.task == "T3" {
                c.outcome = Outcome::Pass;
                c.verdict.passed = true;
            }
            c
        })
        .collect();
    write_run(&b, "g", &better);
    let out = tmp.path().join("cmp");
    let (code, stdout, stderr) = compare_into(&a, &b, &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("DIFFERENT GRADERS"));
    assert!(stdout.contains("+25.0 pp"), "{stdout}");
    let md = std::fs::read_to_string(out.join("compare.md")).expect("compare.md");
    assert!(!md.contains("DIFFERENT GRADERS"), "{md}");
    assert!(md.contains("## `store`: `m:small`"), "{md}");
    assert!(md.contains("| success_rate"), "{md}");
    // `compare --help` names every file compare writes into --out.
    let (_, help, _) = output(passk().args(["compare", "--help"]));
    let out_line = help
        .lines()
        .find(|l| l.contains("--out <DIR>"))
        .expect("--out's help");
    for f in std::fs::read_dir(&out).expect("cmp") {
        let name = f.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(out_line.contains(&name), "{name} not in: {out_line}");
    }
}

/// The records of [`records`] plus `MID`, which never passes: a break-even against it is infinite
/// in every resample.
fn ladder_records() -> Vec<ConversationRecord> {
    let mut out = records("g");
    for task in 0..TASKS.len() {
        for trial in 0..3 {
            out.push(conversation("g", MID, task, trial, Outcome::ModelFail));
        }
    }
    out
}

fn summary_of(dir: &Path) -> Summary {
    let text = std::fs::read_to_string(dir.join(REPORT_DIR).join(SUMMARY_JSON)).expect("read");
    serde_json::from_str(&text).expect("summary.json parses back")
}

#[test]
fn the_ladder_compares_every_model_with_the_reference_and_refuses_an_unknown_one() {
    let tmp = tempdir();
    let dir = tmp.path().join("ladder");
    write_run(&dir, "g", &ladder_records());
    let (code, _, stderr) = report(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let s = summary_of(&dir);
    assert_eq!(s.models, [SMALL, MID, LARGE], "ordered by parameter size");
    assert_eq!(s.reference_model.as_deref(), Some(LARGE), "the largest");
    let g = &s.groups["store"];
    assert_eq!(g.ladder.keys().collect::<Vec<_>>(), [MID, SMALL]);
    let mid = &g.ladder[MID].ci95;
    assert_eq!(
        (mid.resamples_with_infinite_break_even, mid.resamples),
        (200, 200),
        "`m:mid` never passes"
    );
    let md = std::fs::read_to_string(dir.join(REPORT_DIR).join(REPORT_MD)).expect("md");
    assert!(
        md.contains("### Model ladder: every model against `m:large`"),
        "{md}"
    );
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| `{name}`")))
            .unwrap_or_else(|| panic!("no ladder row for {name}: {md}"))
            .to_string()
    };
    assert!(row(LARGE).contains("(reference)"), "{}", row(LARGE));
    assert!(
        row(MID).contains("∞ (`m:mid`: 0 correct) [n/a]"),
        "one story, never `∞–∞`: {}",
        row(MID)
    );
    assert!(row(MID).contains("200 of 200"), "{}", row(MID));
    assert!(row(SMALL).contains("0 of 200"), "{}", row(SMALL));

    let (code, _, stderr) = report(&dir, &["--reference-model", MID]);
    assert_eq!(code, 0, "{stderr}");
    let s = summary_of(&dir);
    assert_eq!(s.reference_model.as_deref(), Some(MID));
    let keys: Vec<&String> = s.groups["store"].ladder.keys().collect();
    assert_eq!(keys, [LARGE, SMALL]);

    let (code, stdout, stderr) = report(&dir, &["--reference-model", "m:nosuch"]);
    assert_eq!(code, 2, "a usage error: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("m:nosuch"), "{stderr}");
    assert!(
        stderr.contains("m:small, m:mid, m:large"),
        "names the models: {stderr}"
    );
    assert_eq!(
        summary_of(&dir).reference_model.as_deref(),
        Some(MID),
        "the refused report wrote nothing"
    );
}

#[test]
fn compare_says_what_differs_and_counts_the_conversations_it_compares() {
    let tmp = tempdir();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_run(&a, "g", &records("g"));
    // B: documented tool docs, and the small model never ran T4.
    let subset: Vec<ConversationRecord> = records("g")
        .into_iter()
        .filter(|c| !(c.model == SMALL && c.task == "T4"))
        .collect();
    write_run_with(&b, "g", &subset, &|m| {
        m.settings["tool_docs"] = json!("documented");
    });
    let out = tmp.path().join("cmp");
    let (code, _, stderr) = compare_into(&a, &b, &out);
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(out.join("compare.md")).expect("compare.md");
    let flat = md.split_whitespace().collect::<Vec<_>>().join(" ");
    let differs = md
        .split("## What differs between A and B")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("no What differs section: {md}"));
    let differs = differs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        differs.contains(r#"| `settings.tool_docs` | "bare" | "documented" |"#),
        "{differs}"
    );
    assert!(!differs.contains("settings.trials"), "unchanged: {differs}");
    let c: RunComparison =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).expect("json"))
            .expect("compare.json parses back");
    let names: Vec<&str> = c
        .setting_differences
        .iter()
        .map(|d| d.setting.as_str())
        .collect();
    assert_eq!(names, ["settings.tool_docs"]);
    // T1 (4 records, one transport), T2, T3 are shared: 10 conversations of A, 3 of A's left out.
    let m = &c.groups["store"][SMALL];
    assert_eq!((m.shared_tasks, m.tasks_only_in_a), (3, 1));
    assert_eq!(m.conversations_a, "n = 9 of 10; 1 transport");
    assert_eq!(
        (m.conversations_left_out_a, m.conversations_left_out_b),
        (3, 0)
    );
    assert!(
        flat.contains(
            "| conversations on the shared tasks | n = 9 of 10; 1 transport; 3 left out | n = 9 of 10; 1 transport |"
        ),
        "{md}"
    );
    let large = &c.groups["store"][LARGE];
    assert_eq!(large.conversations_a, "n = 12");
    assert_eq!(large.conversations_left_out_a, 0);
}

/// `passk compare A B --out OUT` with a quick bootstrap: (exit code, stdout, stderr).
fn compare_into(a: &Path, b: &Path, out: &Path) -> (i32, String, String) {
    output(
        passk()
            .arg("compare")
            .arg(a)
            .arg(b)
            .arg("--out")
            .arg(out)
            .args(["--resamples", "200"]),
    )
}

/// `git` in `dir`, with an identity of its own; false when git is absent or fails.
fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_run_read_from_uncommitted_suite_files_is_flagged_dirty_on_every_report() {
    let tmp = tempdir();
    let data = tmp.path().join("data");
    crate::util::copy_data(&data);
    if !git(&data, &["init", "-q"]) {
        crate::util::skip("no git");
        return;
    }
    assert!(
        git(&data, &["add", "tasks", "graders"]) && git(&data, &["commit", "-q", "-m", "suites"])
    );
    // An uncommitted edit of the task file (still the same tasks).
    let tasks = data.join("tasks/store/conversations.json");
    let mut text = std::fs::read_to_string(&tasks).expect("tasks");
    text.push('\n');
    std::fs::write(&tasks, text).expect("write");
    let stub = crate::util::Stub::oracles(&["oracle"]);
    let out = tmp.path().join("run");
    let mut args = crate::util::run_args(
        &stub,
        &out,
        "oracle",
        "--suite store --tasks L1 --trials 1 --report",
    );
    args.extend(["--root".to_string(), data.display().to_string()]);
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    let report = out.join(REPORT_DIR);
    let summary: Summary =
        serde_json::from_slice(&std::fs::read(report.join(SUMMARY_JSON)).expect("summary"))
            .expect("summary.json");
    let p = &summary.provenance;
    assert_eq!(p.dirty, Some(true), "{p:?}");
    assert_eq!(p.uncommitted, ["tasks/store/conversations.json"], "{p:?}");
    assert!(
        p.model_digests.contains_key("oracle") && p.server_version.is_some(),
        "{p:?}"
    );
    let digests = &p.suites["store"];
    assert!(!digests.tasks.is_empty() && !digests.tools.is_empty() && !digests.policy.is_empty());
    assert_eq!(p.tool_docs, ["bare"]);
    let md = std::fs::read_to_string(report.join(REPORT_MD)).expect("report.md");
    let html = std::fs::read_to_string(report.join(REPORT_HTML)).expect("report.html");
    for page in [&md, &html] {
        assert!(page.contains("## Provenance"), "{page}");
        assert!(
            page.contains("**uncommitted changes**: `tasks/store/conversations.json`"),
            "the run is not stamped as clean: {md}"
        );
    }
    // Committed, the same run's next report says clean (when passk itself was built clean).
    assert!(git(&data, &["commit", "-qam", "the edit"]));
    let again = tmp.path().join("again");
    let mut args = crate::util::run_args(
        &stub,
        &again,
        "oracle",
        "--suite store --tasks L1 --trials 1",
    );
    args.extend(["--root".to_string(), data.display().to_string()]);
    assert_eq!(output(passk().args(&args)).0, 0);
    let (code, _, stderr) = self::report(&again, &[]);
    assert_eq!(code, 0, "{stderr}");
    let summary = summary_of(&again);
    assert!(
        summary.provenance.uncommitted.is_empty(),
        "{:?}",
        summary.provenance
    );
}

/// What `passk report` keeps of the records for the statistics (no texts, no per-record grader
/// digest, of a tool call's arguments only those the behaviour counts read) gives the summary the
/// whole records give, on a run whose models paste schemas and copy documented example values.
#[test]
fn the_records_as_read_for_the_statistics_give_the_summary_of_the_whole_records() {
    let stub = crate::util::Stub::start(Vec::new(), |_| {});
    let tmp = tempdir();
    let out = tmp.path().join("run");
    let (code, _, stderr) = output(passk().args([
        "run",
        "--no-progress",
        "--suite",
        "store",
        "--trials",
        "1",
        "--models",
        "example-value,schema-paste,oracle",
        // Example values are shown, and their copies counted, only with documented tools.
        "--tool-docs",
        "bare,documented",
        "--host",
        &stub.host(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let whole = crate::util::load(&out);
    let read = passk::analysis::load_run(&out).expect("read for the statistics");
    let opts = passk::analysis::AnalysisOptions::for_manifest(&whole.manifest);
    let summary = |r: &passk::analysis::Run| {
        passk::analysis::summarize(&r.manifest, &r.conversations, &r.router, &opts)
    };
    let (a, b) = (summary(&whole), summary(&read));
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let count = |model: &str, of: fn(&passk::analysis::figures::behaviour::Behaviour) -> usize| {
        let groups = b.groups.values().filter_map(|g| g.models.get(model));
        groups.map(|s| of(&s.behaviour)).sum::<usize>()
    };
    assert!(count("example-value", |b| b.example_copy.calls) > 0);
    assert!(count("schema-paste", |b| b.schema_copy.calls) > 0);
    let declared: std::collections::BTreeSet<String> = whole
        .manifest
        .graders
        .values()
        .map(|p| p.digest.clone())
        .collect();
    assert_eq!(read.grader_digests, declared);
    assert!(
        read.conversations
            .iter()
            .all(|c| c.grader_digest.is_empty())
    );
}

/// Every file under `dir` (relative path, bytes), sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)
            .expect("ls")
            .map(|e| e.expect("entry"))
        {
            if e.path().is_dir() {
                todo.push(e.path());
            } else {
                let rel = e
                    .path()
                    .strip_prefix(dir)
                    .expect("under")
                    .display()
                    .to_string();
                out.push((rel, std::fs::read(e.path()).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_report_killed_at_any_moment_leaves_a_whole_report_or_none_and_no_leftovers() {
    let tmp = tempdir();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    let golden = crate::util::root().join("tests/golden/flawed/run");
    for f in [MANIFEST_FILE, CONVERSATIONS_FILE, "router.jsonl"] {
        std::fs::copy(golden.join(f), run.join(f)).expect("copy record");
    }
    let before: Vec<String> = tree(&run).into_iter().map(|(n, _)| n).collect();
    // Two reports that differ (other resamples), so that a mix of the two would show.
    let report = |resamples: &str| {
        let mut c = passk();
        c.args(["report", "--resamples", resamples]).arg(&run);
        c
    };
    let mut whole = Vec::new();
    let mut took = std::time::Duration::ZERO;
    for resamples in ["200", "300"] {
        let start = std::time::Instant::now();
        let (code, _, err) = output(&mut report(resamples));
        took = took.max(start.elapsed());
        assert_eq!(code, 0, "{err}");
        whole.push(tree(&run.join(REPORT_DIR)));
    }
    assert_ne!(whole[0], whole[1], "the two reports differ");
    let kills = 24;
    for i in 0..kills {
        let mut child = report(["200", "300"][i % 2])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(took.mul_f64(1.2 * i as f64 / kills as f64));
        let _ = child.kill();
        child.wait().expect("reaped");
        let dir = run.join(REPORT_DIR);
        if dir.exists() {
            let now = tree(&dir);
            assert!(
                whole.contains(&now),
                "kill {i}: report/ is neither report whole: {:?}",
                now.iter().map(|(n, _)| n).collect::<Vec<_>>()
            );
        }
    }
    let (code, _, err) = output(&mut report("200"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(tree(&run.join(REPORT_DIR)), whole[0]);
    let mut after: Vec<String> = tree(&run)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !n.starts_with(&format!("{REPORT_DIR}/")))
        .collect();
    after.sort();
    let mut before = before;
    before.sort();
    assert_eq!(
        after, before,
        "a later report removes what killed ones left"
    );
}
