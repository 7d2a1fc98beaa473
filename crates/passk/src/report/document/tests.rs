//! Tests of `report.md` as a whole: reports built from records, read back line by line.

use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::{AnalysisOptions, summarize};
use crate::report::document::format::{ci_points, opt, points, short_digest};
use crate::report::document::order::primary_group;
use crate::report::document::router::router_count_text;
use crate::report::document::setup::settings_rows;
use crate::report::document::terminal::terminal_table;
use crate::report::document::title::regrade_line;
use crate::report::document::{Report, markdown};
use crate::report::number::percent;
use crate::report::table::MarkdownTable;
use crate::runner::record::{CallRecord, Node};
use crate::runner::record::{ConversationRecord, Manifest};
use crate::wire::chat::ApiKind;

fn conv(model: &str, task: &str, cap: u32, passed: bool) -> ConversationRecord {
    let mut call = CallRecord::new(Node::Orchestrator, 0, 0);
    call.wall_s = Some(1.0).into();
    let mut c = crate::analysis::fixtures::conversation(model, task, 0, passed, vec![call]);
    c.call_cap = cap;
    c
}

#[test]
fn settings_say_off_and_on_and_leave_out_empty_lists() {
    let mut t = MarkdownTable::new(["setting", "value"]);
    let st = serde_json::json!({"router_in_front": [false, true], "tasks": [], "stream": false,
        "num_ctx": 8192, "keep_alive": "30m"});
    settings_rows(&mut t, &st, ApiKind::Ollama);
    let md = t.render();
    assert!(md.contains("| router in front | off, on"), "{md}");
    assert!(!md.contains("| tasks"), "{md}");
    assert!(md.contains("| stream"), "{md}");
    assert!(
        md.contains("| num_ctx") && md.contains("| keep alive"),
        "{md}"
    );
    // The OpenAI-compatible wire sends neither: Setup lists only what was sent.
    let mut t = MarkdownTable::new(["setting", "value"]);
    settings_rows(&mut t, &st, ApiKind::OpenAi);
    let md = t.render();
    assert!(
        !md.contains("num_ctx") && !md.contains("keep alive"),
        "{md}"
    );
    assert!(md.contains("| stream"), "{md}");
}

#[test]
fn an_n_a_pass_k_row_has_no_double_space() {
    let manifest = Manifest {
        run_id: "r".into(),
        ..Manifest::default()
    };
    let mut recs = Vec::new();
    for task in ["T1", "T2"] {
        for trial in 0..2 {
            let mut c = conv("a", task, 8, true);
            c.trial = trial;
            recs.push(c);
        }
        recs.push(conv("b", task, 8, true));
    }
    let mut lost = conv("b", "T1", 8, false);
    lost.trial = 1;
    lost.outcome = crate::runner::record::Outcome::TransportFail;
    recs.push(lost);
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    let row = line(&md, "2 ");
    assert!(row.contains("n/a (n = "), "{row}");
    assert!(!row.contains("  ("), "{row}");
}

#[test]
fn number_formats() {
    assert_eq!(points(0.275), "+27.5 pp");
    assert_eq!(points(-0.05), "-5.0 pp");
    assert_eq!(points(0.0), "0.0 pp");
    let i = Interval {
        low: -0.031,
        high: 0.42,
    };
    assert_eq!(ci_points(&i), "-3 to +42 pp");
    // Two models at 100% on thousands of tasks: a narrow interval, never a point at 0.
    let narrow = Interval {
        low: -0.0016,
        high: 0.0016,
    };
    assert_eq!(ci_points(&narrow), "-0.2 to +0.2 pp");
    let none = Interval {
        low: 0.0,
        high: 0.0,
    };
    assert_eq!(ci_points(&none), "0 to 0 pp");
    let top = Interval {
        low: 0.998,
        high: 1.0,
    };
    assert_eq!(ci_points(&top), "+99.8 to +100.0 pp");
    assert_eq!(
        short_digest(&format!("sha256:{}", "a".repeat(64))),
        "a".repeat(12)
    );
    assert_eq!(
        short_digest("imported:0123456789abcdef"),
        "imported:0123456789ab"
    );
    assert_eq!(opt(None, percent), "n/a");
}

/// The line of `md` that starts with `| label`.
fn line<'m>(md: &'m str, label: &str) -> &'m str {
    md.lines()
        .find(|l| l.starts_with(&format!("| {label}")))
        .unwrap_or_else(|| panic!("no row {label}: {md}"))
}

#[test]
fn server_process_samples_without_nvml_are_never_called_gpu() {
    let manifest = Manifest {
        run_id: "r".into(),
        ..Manifest::default()
    };
    let mut recs = vec![conv("a", "T1", 8, true), conv("a", "T2", 8, true)];
    recs[0].calls[0].gpu = Some(Box::new(crate::runner::record::GpuWindow {
        samples: 3,
        server_cpu_pct: Some(140.0),
        server_rss_mib: Some(812.0),
        ..Default::default()
    }));
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    assert!(md.contains("No GPU telemetry recorded."), "{md}");
    assert!(!md.contains("Calls with GPU samples"), "{md}");
    assert!(line(&md, "Calls with server-process samples").contains("1 of "));
    assert!(line(&md, "Server CPU, mean").contains("140%"), "{md}");
    assert!(line(&md, "Server resident memory").contains("812 MiB"));
}

#[test]
fn headline_gives_each_model_its_own_k_and_every_rate_its_denominator() {
    let manifest = Manifest {
        run_id: "r".into(),
        ..Manifest::default()
    };
    let mut recs = Vec::new();
    // a: T1 three trials (2 pass), T2 one trial: k = 1 for a alone.
    for passed in [true, true, false] {
        recs.push(conv("a", "T1", 8, passed));
    }
    recs.push(conv("a", "T2", 8, true));
    recs[0].calls[0].gpu = Some(Box::new(crate::runner::record::GpuWindow {
        samples: 2,
        util_mean: Some(50.0),
        ..Default::default()
    }));
    // b: three trials of each, one ended by the transport.
    for task in ["T1", "T2"] {
        for _ in 0..3 {
            recs.push(conv("b", task, 8, true));
        }
    }
    recs.last_mut().unwrap().outcome = crate::runner::record::Outcome::TransportFail;
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let r = Report::new(&manifest, &s, &recs, &[], vec![]);
    let md = markdown(&r);
    let all_k = line(&md, "All k trials");
    assert!(
        all_k.contains("pass^1: 83.3%") && all_k.contains("pass^2: 100.0%"),
        "{all_k}"
    );
    let every = line(&md, "Tasks passing every trial");
    assert!(every.contains("1 of 2 tasks") && every.contains("2 of 2 tasks"));
    // Pooled success (3/4) and pass^1 (mean of 2/3 and 1) differ for a: labelled apart.
    assert!(line(&md, "Success rate, pooled").contains("75.0% (3/4)"));
    assert!(line(&md, "pass^1, mean over tasks").contains("83.3%"));
    let note = "n = 5 of 6; 1 transport";
    assert!(line(&md, "lookup").contains(note), "{md}");
    let gap = md
        .lines()
        .find(|l| l.starts_with("Success-rate gap"))
        .unwrap();
    assert!(gap.contains(&format!("`b`: {note}")), "{gap}");
    let be = md
        .lines()
        .find(|l| l.starts_with("How many times"))
        .unwrap();
    assert!(be.contains(&format!("`b`: {note}")), "{be}");
    assert!(line(&md, "Calls with GPU samples").contains("1 of 4 calls"));
    // pass^k and category rates carry their bootstrap intervals.
    assert!(line(&md, "lookup").contains("75.0% (3/4) ["), "{md}");
    assert!(line(&md, "1 ").contains("83.3% ["), "{md}");
    let chart = crate::report::svg::line_chart(&crate::report::charts::pass_k(&r));
    assert!(
        chart.matches("opacity=\"0.8\"").count() >= 2,
        "error bars: {chart}"
    );
}

#[test]
fn the_ladder_and_the_frontier_are_reported() {
    let (manifest, recs) = crate::analysis::fixtures::ladder_run();
    let opts = AnalysisOptions {
        resamples: 50,
        ..AnalysisOptions::default()
    };
    let s = summarize(&manifest, &recs, &[], &opts);
    let r = Report::new(&manifest, &s, &recs, &[], vec![]);
    let md = markdown(&r);
    assert!(
        md.contains("### Model ladder: every model against `m:14b`"),
        "{md}"
    );
    assert!(line(&md, "`m:1b`").contains("+33.3 pp ["), "{md}");
    assert!(line(&md, "`m:14b`").contains("(reference)"), "{md}");
    let chart =
        crate::report::svg::line_chart(&crate::report::charts::frontier_chart(&r, "t", "y", |m| {
            m.tokens.blended_per_success
        }));
    assert!(
        chart.contains("cheapest-per-success frontier: m:3b"),
        "{chart}"
    );
}

/// The ladder run's `m:1b` (passing T0 of T0..T2) and `m:14b`, which passes every task or none.
fn pair_run(large_passes: bool) -> (Manifest, Vec<ConversationRecord>) {
    let (mut manifest, mut recs) = crate::analysis::fixtures::ladder_run();
    manifest.models.retain(|m| m.name != "m:3b");
    recs.retain(|c| c.model != "m:3b");
    for c in recs.iter_mut().filter(|c| c.model == "m:14b") {
        c.verdict.passed = large_passes;
        c.outcome = if large_passes {
            crate::runner::record::Outcome::Pass
        } else {
            crate::runner::record::Outcome::ModelFail
        };
    }
    (manifest, recs)
}

#[test]
fn nothing_is_divided_by_an_empty_count() {
    // `m:1b` passes T0 only; `m:14b` never passes. On the router `m:1b` is never right.
    let (manifest, recs) = pair_run(false);
    let router: Vec<_> = (0..4)
        .flat_map(|i| {
            [
                crate::analysis::fixtures::router_record("m:1b", i, false, None),
                crate::analysis::fixtures::router_record("m:14b", i, i < 3, Some("a")),
            ]
        })
        .collect();
    let opts = AnalysisOptions {
        resamples: 200,
        ..AnalysisOptions::default()
    };
    let s = summarize(&manifest, &recs, &router, &opts);
    let c = s.groups["store"].comparison.as_ref().unwrap();
    // Point n/a: no interval, not `0.00x–0.00x`; every resample accounted for.
    assert_eq!((c.break_even, c.ci95.break_even), (None, None));
    let ci = &c.ci95;
    assert!(ci.resamples_with_zero_break_even > 0);
    assert_eq!(
        ci.resamples_with_zero_break_even + ci.resamples_without_break_even,
        200
    );
    assert_eq!(s.router["m:1b"].blended_tokens_per_correct, None);
    let rc = s.router_comparison.as_ref().unwrap();
    assert_eq!((rc.break_even, rc.ci95.break_even), (None, None));
    let md = markdown(&Report::new(&manifest, &s, &recs, &router, vec![]));
    assert!(
        line(&md, "**Tokens per successful task**").contains("n/a (0 correct)"),
        "{md}"
    );
    let plain: Vec<&str> = line(&md, "Plain").split('|').map(str::trim).collect();
    assert_eq!(plain[2..4], ["n/a (`m:14b`: 0 correct)", "n/a"], "{md}");
    assert!(
        md.contains(&format!(
            "`m:14b` never passed in {} (a ratio of 0); neither passed in {} (no ratio)",
            ci.resamples_with_zero_break_even, ci.resamples_without_break_even
        )),
        "{md}"
    );
    assert!(
        line(&md, "**Tokens per correct call**").contains("n/a (0 correct)"),
        "{md}"
    );
    assert!(
        md.contains("per correct call: ∞ (`m:1b`: 0 correct) (95% CI n/a"),
        "{md}"
    );
}

#[test]
fn a_model_with_nothing_graded_is_never_blamed_and_every_ending_is_counted() {
    // Every conversation of `m:1b` ended on the wire; one of `m:14b`'s in its tools' server.
    let (manifest, mut recs) = pair_run(true);
    for c in recs.iter_mut().filter(|c| c.model == "m:1b") {
        c.outcome = crate::runner::record::Outcome::TransportFail;
    }
    let lost = recs.iter_mut().find(|c| c.model == "m:14b").unwrap();
    lost.outcome = crate::runner::record::Outcome::ToolServerFail;
    let router: Vec<_> = (0..4)
        .flat_map(|i| {
            let mut dead = crate::analysis::fixtures::router_record("m:1b", i, false, None);
            dead.outcome = crate::runner::record::Outcome::TransportFail;
            [
                dead,
                crate::analysis::fixtures::router_record("m:14b", i, true, Some("a")),
            ]
        })
        .collect();
    let opts = AnalysisOptions {
        resamples: 200,
        ..AnalysisOptions::default()
    };
    let s = summarize(&manifest, &recs, &router, &opts);
    let md = markdown(&Report::new(&manifest, &s, &recs, &router, vec![]));
    let plain: Vec<&str> = line(&md, "Plain").split('|').map(str::trim).collect();
    assert_eq!(plain[2], "n/a (`m:1b`: nothing graded)", "{md}");
    assert!(
        md.contains("No paired bootstrap: no task has graded conversations of both models."),
        "{md}"
    );
    assert!(!md.contains("∞"), "{md}");
    assert!(
        line(&md, "All k trials").contains("n/a (nothing graded)"),
        "{md}"
    );
    assert!(
        line(&md, "Tasks passing every trial").contains("n/a (nothing graded)"),
        "{md}"
    );
    // `m:1b`'s per-success cells say the wire left it nothing, never `0 correct`; no n/a rate
    // carries a denominator note, and no cell has a double space.
    for label in [
        "**Tokens per successful task**",
        "**Time per successful task**",
        "**Tokens per correct call**",
    ] {
        let cells: Vec<&str> = line(&md, label).split('|').map(str::trim).collect();
        assert!(cells[2].contains("nothing graded"), "{label}: {cells:?}");
    }
    assert!(
        !md.contains("n/a (0 correct)") && !md.contains("n/a (n = ") && !md.contains("  ("),
        "{md}"
    );
    assert!(
        md.contains(
            "per correct call: n/a (`m:1b`: nothing graded) (no paired bootstrap: no message has \
             graded calls of both models)"
        ),
        "{md}"
    );
    // The taxonomy's rows add up to the conversations.
    // The row whose first cell is `label`, cell by cell.
    let row = |label: &str| -> Vec<String> {
        md.lines()
            .map(|l| {
                l.split('|')
                    .map(|x| x.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .find(|cells| cells.get(1).is_some_and(|c| c == label))
            .unwrap_or_else(|| panic!("no row {label}: {md}"))
    };
    assert_eq!(row("Tool-server failure (excluded)")[3], "1", "{md}");
    assert!(
        md.contains("(transport, protocol and tool-server failures are excluded from every rate)"),
        "{md}"
    );
    // No example values recorded (as in an import): no count to read as "none copied".
    let copies = row("Example-copy calls (documented example value), by value");
    assert!(copies[3].starts_with("n/a ("), "{md}");
    let large = |label: &str| row(label)[3].parse::<usize>().unwrap();
    assert_eq!(
        large("Passed")
            + large("Failed (model)")
            + large("Transport failure (excluded)")
            + large("Protocol failure (excluded)")
            + large("Tool-server failure (excluded)"),
        large("Conversations"),
        "{md}"
    );
}

#[test]
fn intervals_leave_0_and_100_percent() {
    // `m:14b` passes all three tasks, every resample 100%; `m:1b` passes one.
    let (manifest, recs) = pair_run(true);
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    let ci = line(&md, "  95% CI, tasks as clusters");
    assert!(!ci.contains("100%–100%"), "{ci}");
    assert!(ci.contains("29%–100%"), "{ci}");
    let all = &s.groups["store"].models["m:14b"];
    assert!(all.pass_hat_k_ci95[&1].low < 1.0);
    assert!(all.by_category.values().all(|c| c.ci95.unwrap().low < 1.0));
}

#[test]
fn a_model_with_nothing_in_vram_reads_on_cpu_and_each_warning_once() {
    let (mut manifest, recs) = crate::analysis::fixtures::ladder_run();
    let gib = 1_073_741_824;
    let w = crate::runner::preflight::placement_warning("m:1b", 2 * gib, 0).unwrap();
    for m in manifest.models.iter_mut().filter(|m| m.name == "m:1b") {
        (m.size, m.size_vram, m.partly_on_cpu) = (Some(2 * gib), Some(0), Some(true));
    }
    // A resumed run of old code stored the warm-up's warnings again.
    manifest.warnings = vec![
        w.clone(),
        w,
        "context shrank".into(),
        "context shrank".into(),
    ];
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    assert_eq!(s.on_cpu, ["m:1b"]);
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    assert!(md.contains("On CPU (no VRAM)"), "{md}");
    assert!(md.contains("`m:1b` ran on the CPU (no VRAM"), "{md}");
    assert!(!md.contains("partly on"), "{md}");
    assert!(!md.contains("Free VRAM"), "{md}");
    assert_eq!(md.matches("context shrank").count(), 1, "{md}");
}

#[test]
fn a_regrade_note_reads_as_a_sentence_and_is_headed_by_what_it_says() {
    assert_eq!(
        regrade_line("the source folder's regrade.md records 9 grades changed: 6 pass"),
        "> **RE-GRADED AT THE SOURCE.** The source folder's regrade.md records 9 grades \
         changed: 6 pass.\n\n"
    );
    assert!(
        regrade_line("the source folder's regrade.md records 0 grades changed: the published")
            .starts_with("> **REGRADE NOTE AT THE SOURCE.** The source folder's")
    );
}

#[test]
fn router_counts_multiply_out() {
    let mut r = crate::analysis::figures::router::RouterSummary {
        messages: 100,
        ..Default::default()
    };
    r.outcomes.total = 300;
    r.outcomes.graded = 298;
    r.outcomes.transport_fail = 2;
    let text = router_count_text("m", &r);
    assert!(text.contains("100 messages x 3 runs = 300 calls"), "{text}");
    r.outcomes.total = 299;
    assert!(router_count_text("m", &r).contains("299 calls over 100 messages"));
    // One of each is said in the singular.
    r.messages = 1;
    r.outcomes.total = 1;
    let one = router_count_text("m", &r);
    assert!(one.contains("1 message x 1 run = 1 call ("), "{one}");
    r.messages = 2;
    let one = router_count_text("m", &r);
    assert!(one.contains("1 call over 2 messages"), "{one}");
}

#[test]
fn budget_sweep_and_primary_group() {
    let manifest = Manifest {
        run_id: "r".into(),
        grader_digest: "g".into(),
        ..Manifest::default()
    };
    let recs = vec![
        conv("a", "T1", 4, false),
        conv("a", "T1", 10, true),
        conv("a", "T2", 4, true),
        conv("a", "T2", 10, true),
    ];
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    assert_eq!(
        primary_group(&s).map(|(k, _)| k.as_str()),
        Some("store/cap=10")
    );
    let r = Report::new(&manifest, &s, &recs, &[], vec!["a note".into()]);
    assert_eq!(
        r.observations.conversation_latency["store/cap=4"]["a"],
        [1.0, 1.0]
    );
    let md = markdown(&r);
    assert!(md.contains("## `store/cap=10`"), "{md}");
    assert!(md.contains("## `store/cap=4`"), "{md}");
    assert!(
        md.find("## `store/cap=4`") < md.find("## `store/cap=10`"),
        "groups in numeric order"
    );
    let table = terminal_table(&s);
    assert!(
        table.find("store/cap=4") < table.find("store/cap=10"),
        "{table}"
    );
    assert!(md.contains("## Budget sweep: `store`"), "{md}");
    let sweep = &md[md.find("## Budget sweep").expect("sweep")..];
    assert!(
        sweep.find("| 4 ") < sweep.find("| 10 "),
        "caps in numeric order: {sweep}"
    );
    assert!(
        sweep.contains("50.0% (1/2)") && sweep.contains("100.0% (2/2)"),
        "{sweep}"
    );
    assert!(md.contains("No GPU telemetry recorded."), "{md}");
    assert!(md.contains("- a note"), "{md}");
    assert_eq!(md, markdown(&r), "deterministic");
    let table = terminal_table(&s);
    assert!(
        table.contains("store/cap=4") && table.contains("100.0% (2/2)"),
        "{table}"
    );
}

#[test]
fn a_run_with_its_first_tool_calls_forced_says_so_above_its_figures() {
    let recs = vec![conv("a", "T1", 8, true)];
    let mut manifest = Manifest {
        run_id: "r".into(),
        ..Manifest::default()
    };
    let banner = "**FIRST TOOL CALL FORCED.**";
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    assert!(!md.contains(banner), "{md}");
    manifest.settings = serde_json::json!({"force_first_tool_call": true});
    let r = Report::new(&manifest, &s, &recs, &[], vec![]);
    let md = markdown(&r);
    let at = md.find(banner).expect("the banner");
    assert!(at < md.find("## Setup").expect("setup"), "{md}");
    assert!(crate::report::overview::overview(&r).contains(banner));
}

#[test]
fn a_stub_in_front_of_a_real_engine_is_no_stub_run_and_says_what_is_real() {
    let recs = vec![conv("a", "T1", 8, true)];
    let mut manifest = Manifest {
        run_id: "r".into(),
        backend: "ollama".into(),
        servers: vec![crate::runner::record::ServerInfo {
            kind: Some("passk-stub".into()),
            ..Default::default()
        }],
        ..Manifest::default()
    };
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    assert!(md.contains("**STUB IN FRONT OF A REAL MODEL.**"), "{md}");
    // The details /api/show gave are the stub's, not the engine model's.
    assert!(
        md.contains("parameters, quantization and placement under Setup (the stub's stand-ins"),
        "{md}"
    );
    assert!(!md.contains("**STUB RUN.**"), "{md}");
    manifest.backend = "stub".into();
    let s = summarize(&manifest, &recs, &[], &AnalysisOptions::default());
    let md = markdown(&Report::new(&manifest, &s, &recs, &[], vec![]));
    assert!(!md.contains("REAL MODEL"), "{md}");
    assert!(md.contains("**STUB RUN.**"), "{md}");
}
