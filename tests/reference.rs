//! The reference experiment's own records, imported and analysed, must give its published
//! figures: every value below is read from its `summary.json` and compared at full precision
//! (relative 1e-9: Python's `statistics.mean` rounds exactly, a plain sum may differ in the last
//! bits). Skipped where `../shared/reference` is absent (a user's clone).

use crate::util;
use passk::analysis::{self, AnalysisOptions, ModelSummary, Summary};
use passk::import;
use passk::runner::record::{ConversationRecord, RouterRecord};
use passk::trace::FailureMode;
use serde_json::Value;
use std::path::PathBuf;

const SMALL: &str = "qwen2.5-coder:3b";
const LARGE: &str = "qwen2.5-coder:7b";

fn reference_dir() -> Option<PathBuf> {
    util::shared_reference().or_else(|| {
        std::env::var_os("PASSK_SHARED_REFERENCE")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
    })
}

fn close(what: &str, got: f64, want: &Value) {
    let want = want
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: published value is not a number: {want}"));
    let tol = 1e-9 * want.abs().max(1e-3);
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, published {want}"
    );
}

fn some(what: &str, v: Option<f64>) -> f64 {
    v.unwrap_or_else(|| panic!("{what}: not computed"))
}

fn interval(what: &str, got: Option<analysis::intervals::bootstrap::Interval>, want: &Value) {
    let got = got.unwrap_or_else(|| panic!("{what}: no interval"));
    close(&format!("{what} low"), got.low, &want[0]);
    close(&format!("{what} high"), got.high, &want[1]);
}

type Imported = (
    passk::runner::record::Manifest,
    Vec<ConversationRecord>,
    Vec<RouterRecord>,
);

fn load(dir: &std::path::Path) -> (Imported, Summary, Value) {
    let imported = import::reference(dir).expect("import the reference records");
    let summary = analysis::summarize(
        &imported.0,
        &imported.1,
        &imported.2,
        &AnalysisOptions::default(),
    );
    let published: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json parses");
    (imported, summary, published)
}

fn store(s: &Summary) -> &analysis::GroupSummary {
    s.groups.get("store").expect("the store group")
}

fn model<'a>(s: &'a Summary, m: &str) -> &'a ModelSummary {
    store(s).models.get(m).expect("model summary")
}

fn failure_label(m: FailureMode) -> &'static str {
    match m {
        FailureMode::LoopCap => "looped without answering",
        FailureMode::NoUsableToolCall => "never produced a usable tool call",
        FailureMode::ActionRequired => "needs an action (not in the reference)",
        FailureMode::WrongAction => "wrong or missing action",
        FailureMode::MissedEscalation => "missed escalation",
        FailureMode::WrongAnswer => "wrong or incomplete answer",
    }
}

fn check_router(s: &Summary, p: &Value) {
    for m in [SMALL, LARGE] {
        let r = &s.router[m];
        let w = &p["router"][m];
        let ctx = |k: &str| format!("router {m} {k}");
        assert_eq!(r.calls as u64, w["calls"].as_u64().unwrap());
        assert_eq!(r.messages as u64, w["messages"].as_u64().unwrap());
        assert_eq!(
            r.runs_per_message as u64,
            w["runs_per_message"].as_u64().unwrap()
        );
        assert_eq!(r.correct as u64, w["correct"].as_u64().unwrap());
        close(
            &ctx("accuracy"),
            some("accuracy", r.accuracy),
            &w["accuracy"],
        );
        close(
            &ctx("unparseable"),
            some("unparseable", r.unparseable),
            &w["unparseable"],
        );
        close(
            &ctx("input"),
            some("input", r.input_tokens_per_call),
            &w["input_tokens_per_call"],
        );
        close(
            &ctx("output"),
            some("output", r.output_tokens_per_call),
            &w["output_tokens_per_call"],
        );
        close(
            &ctx("blended_tokens_per_success"),
            some("tpc", r.blended_tokens_per_correct),
            &w["blended_tokens_per_success"],
        );
        close(
            &ctx("latency"),
            some("lat", r.latency_per_call_s),
            &w["latency_per_call_s"],
        );
        close(
            &ctx("p95"),
            some("p95", r.latency_p95_s),
            &w["latency_p95_s"],
        );
        let f = r.fastest_call.as_ref().expect("fastest call");
        close(
            &ctx("fastest"),
            f.latency_s,
            &w["fastest_call"]["latency_s"],
        );
        assert_eq!(
            f.output_tokens,
            w["fastest_call"]["output_tokens"].as_u64().unwrap()
        );
        if let Some(t) = w.get("ollama_timing") {
            let o = r.server_split.as_ref().expect("router ollama timing");
            close(&ctx("model_s"), o.model_s_per_call, &t["model_s_per_call"]);
            close(
                &ctx("overhead"),
                o.overhead_s_per_call,
                &t["overhead_s_per_call"],
            );
            close(&ctx("overhead p50"), o.overhead_s_p50, &t["overhead_s_p50"]);
            close(
                &ctx("decode"),
                some("decode", o.decode_tokens_per_s),
                &t["decode_tokens_per_s"],
            );
            close(
                &ctx("prefill"),
                some("prefill", o.prefill_tokens_per_s),
                &t["prefill_tokens_per_s"],
            );
        }
    }
    let rc = s.router_comparison.as_ref().expect("router comparison");
    let router_cmp = p["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["node"] == "router")
        .unwrap();
    close(
        "router break-even",
        some("be", rc.break_even),
        &router_cmp["break_even_price_ratio"],
    );
    let ci = &p["ci95_router"];
    assert_eq!(rc.ci95.resamples as u64, ci["resamples"].as_u64().unwrap());
    interval(
        "router accuracy small",
        rc.ci95.accuracy_small,
        &ci[format!("accuracy:{SMALL}")],
    );
    interval(
        "router accuracy large",
        rc.ci95.accuracy_large,
        &ci[format!("accuracy:{LARGE}")],
    );
    interval(
        "router break-even",
        rc.ci95.break_even,
        &ci["break_even_price_ratio"],
    );
}

/// Figures that do not depend on the verdicts (run 1's published verdicts were re-graded).
fn check_behaviour(s: &Summary, p: &Value) {
    for m in [SMALL, LARGE] {
        let x = model(s, m);
        let w = &p["orchestrator"][m];
        let ctx = |k: &str| format!("{m} {k}");
        assert_eq!(x.outcomes.graded as u64, w["episodes"].as_u64().unwrap());
        assert_eq!(x.tasks as u64, w["tasks"].as_u64().unwrap());
        assert_eq!(
            x.trials_per_task as u64,
            w["trials_per_task"].as_u64().unwrap()
        );
        let b = &x.behaviour;
        close(
            &ctx("calls"),
            some("calls", b.model_calls_per_conversation),
            &w["calls_per_episode"],
        );
        close(
            &ctx("tool calls"),
            some("tc", b.tool_calls_per_conversation),
            &w["tool_calls_per_episode"],
        );
        close(
            &ctx("rejected"),
            some("rej", b.rejected_calls_per_conversation),
            &w["tool_errors_per_episode"],
        );
        assert_eq!(
            b.malformed_calls as u64,
            w["malformed_calls"].as_u64().unwrap()
        );
        assert_eq!(b.loop_caps as u64, w["loop_caps"].as_u64().unwrap());
        close(
            &ctx("identify first"),
            b.identify_first.expect("identify-first").rate,
            &w["identify_first_rate"],
        );
        let t = &x.tokens;
        close(
            &ctx("input"),
            some("in", t.input_per_conversation),
            &w["input_tokens_per_episode"],
        );
        close(
            &ctx("output"),
            some("out", t.output_per_conversation),
            &w["output_tokens_per_episode"],
        );
        close(
            &ctx("blended"),
            some("bl", t.blended_per_conversation),
            &w["blended_tokens_per_episode"],
        );
        let l = &x.latency;
        close(
            &ctx("latency per call"),
            some("lpc", l.per_call_mean_s),
            &w["latency_per_call_s"],
        );
        close(
            &ctx("p50"),
            some("p50", l.conversation_p50_s),
            &w["latency_p50_s"],
        );
        close(
            &ctx("p95"),
            some("p95", l.conversation_p95_s),
            &w["latency_p95_s"],
        );
        close(
            &ctx("mean"),
            some("mean", l.conversation_mean_s),
            &w["latency_mean_s"],
        );
        let fit = l.fit.as_ref().expect("latency fit");
        let wf = &w["latency_fit"];
        assert_eq!(fit.calls as u64, wf["calls"].as_u64().unwrap());
        close(&ctx("fixed"), fit.fixed_s_per_call, &wf["fixed_s_per_call"]);
        close(
            &ctx("decode"),
            fit.decode_tokens_per_s,
            &wf["decode_tokens_per_s"],
        );
        close(
            &ctx("input term"),
            fit.s_per_1k_input_tokens,
            &wf["s_per_1k_input_tokens"],
        );
        let growth = w["input_tokens_by_call"].as_object().unwrap();
        assert_eq!(
            x.context_growth.len(),
            growth.len(),
            "{m} context growth points"
        );
        for (j, v) in growth {
            let point = &x.context_growth[&j.parse::<usize>().unwrap()];
            close(&ctx("growth"), point.mean_input_tokens, v);
            assert_eq!(
                point.conversations as u64,
                w["conversations_reaching_call"][j].as_u64().unwrap()
            );
        }
    }
}

#[test]
fn run2_reproduces_every_published_figure() {
    let Some(root) = reference_dir() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let ((_, convs, _), s, p) = load(&root.join("results-run2"));
    assert_eq!(convs.len(), 240);
    let pairing = s.pairing.as_ref().expect("a model pair");
    assert_eq!(
        (pairing.small.as_str(), pairing.large.as_str()),
        (SMALL, LARGE)
    );
    check_behaviour(&s, &p);
    check_router(&s, &p);

    for m in [SMALL, LARGE] {
        let x = model(&s, m);
        let w = &p["orchestrator"][m];
        let ctx = |k: &str| format!("{m} {k}");
        assert_eq!(x.passes as u64, w["successes"].as_u64().unwrap());
        close(
            &ctx("success"),
            some("sr", x.success_rate),
            &w["success_rate"],
        );
        let pk = w["pass_hat_k"].as_object().unwrap();
        assert_eq!(x.pass_hat_k.len(), pk.len());
        for (k, v) in pk {
            close(
                &ctx(&format!("pass^{k}")),
                x.pass_hat_k[&k.parse::<usize>().unwrap()],
                v,
            );
        }
        assert_eq!(
            x.tasks_passing_every_trial as u64,
            w["tasks_passing_every_run"].as_u64().unwrap()
        );
        for (cat, v) in w["by_category"].as_object().unwrap() {
            close(&ctx(cat), some(cat, x.by_category[cat].success_rate), v);
        }
        close(
            &ctx("tokens per success"),
            some("tps", x.tokens.blended_per_success),
            &w["blended_tokens_per_success"],
        );
        close(
            &ctx("cached tokens per success"),
            some("ctps", x.tokens.cached_blended_per_success),
            &w["cached_blended_tokens_per_success"],
        );
        close(
            &ctx("time per success"),
            some("time", x.latency.time_per_success_s),
            &w["time_per_success_s"],
        );
        let fm = w["failure_modes"].as_object().unwrap();
        assert_eq!(x.failure_modes.unlabelled, 0);
        assert_eq!(x.failure_modes.by_mode.len(), fm.len(), "{m} failure modes");
        for (mode, n) in &x.failure_modes.by_mode {
            assert_eq!(
                Some(*n as u64),
                fm[failure_label(*mode)].as_u64(),
                "{m} {mode:?}"
            );
        }
        let o = x.latency.server_split.as_ref().expect("ollama timing");
        let wo = &w["ollama_timing"];
        close(&ctx("model s"), o.model_s_per_call, &wo["model_s_per_call"]);
        close(
            &ctx("overhead"),
            o.overhead_s_per_call,
            &wo["overhead_s_per_call"],
        );
        close(
            &ctx("overhead p50"),
            o.overhead_s_p50,
            &wo["overhead_s_p50"],
        );
        close(
            &ctx("decode"),
            some("d", o.decode_tokens_per_s),
            &wo["decode_tokens_per_s"],
        );
        close(
            &ctx("prefill"),
            some("p", o.prefill_tokens_per_s),
            &wo["prefill_tokens_per_s"],
        );
        let pipe = x.pipeline.as_ref().expect("pipeline");
        let wp = &w["pipeline"];
        close(
            &ctx("router calls"),
            pipe.router_calls_per_conversation,
            &wp["router_calls_per_episode"],
        );
        close(
            &ctx("router tokens"),
            pipe.router_blended_tokens_per_conversation,
            &wp["router_blended_tokens_per_episode"],
        );
        close(
            &ctx("router share"),
            some("share", pipe.router_share_of_tokens),
            &wp["router_share_of_tokens"],
        );
        close(
            &ctx("router latency"),
            some("rl", pipe.router_latency_per_call_s),
            &wp["router_latency_per_call_s"],
        );
        for (label, n) in wp["router_label_counts"].as_object().unwrap() {
            assert_eq!(
                Some(pipe.router_label_counts[label] as u64),
                n.as_u64(),
                "{m} {label}"
            );
        }
        close(
            &ctx("pipeline tokens"),
            some("pt", pipe.blended_tokens_per_success),
            &wp["blended_tokens_per_success"],
        );
        close(
            &ctx("pipeline time"),
            some("ptime", pipe.time_per_success_s),
            &wp["time_per_success_s"],
        );
        let ro = pipe.router_server_split.as_ref().expect("router timing");
        let wro = &wp["router_ollama_timing"];
        close(
            &ctx("router model s"),
            ro.model_s_per_call,
            &wro["model_s_per_call"],
        );
        close(
            &ctx("router overhead"),
            ro.overhead_s_per_call,
            &wro["overhead_s_per_call"],
        );
        close(
            &ctx("router overhead p50"),
            ro.overhead_s_p50,
            &wro["overhead_s_p50"],
        );
    }

    let c = store(&s).comparison.as_ref().expect("comparison");
    let orch = &p["comparisons"][0];
    assert_eq!(orch["node"], "orchestrator");
    close(
        "break-even",
        some("be", c.break_even),
        &orch["break_even_price_ratio"],
    );
    close(
        "cached",
        some("bc", c.break_even_cached),
        &orch["break_even_price_ratio_cached"],
    );
    close(
        "pipeline",
        some("bp", c.break_even_pipeline),
        &orch["break_even_price_ratio_pipeline"],
    );
    for (w, v) in p["break_even_by_output_weight"].as_object().unwrap() {
        let got = c.break_even_by_output_weight[&w.parse::<u32>().unwrap()];
        close(&format!("break-even at weight {w}"), some("bw", got), v);
    }
    let ci = &p["ci95_orchestrator"];
    assert_eq!(c.ci95.resamples as u64, ci["resamples"].as_u64().unwrap());
    assert_eq!(
        c.ci95.resamples_with_defined_break_even as u64,
        ci["resamples_with_defined_break_even"].as_u64().unwrap()
    );
    // The reference dropped resamples without a finite break-even; passk keeps the infinite
    // ones. The published intervals still hold because run 2 has none.
    assert_eq!(c.ci95.resamples_with_infinite_break_even, 0);
    assert_eq!(c.ci95.resamples_without_break_even, 0);
    interval(
        "success small",
        c.ci95.success_rate_small,
        &ci[format!("success_rate:{SMALL}")],
    );
    interval(
        "success large",
        c.ci95.success_rate_large,
        &ci[format!("success_rate:{LARGE}")],
    );
    interval(
        "difference",
        c.ci95.success_rate_difference,
        &ci["success_rate_difference"],
    );
    interval(
        "break-even",
        c.ci95.break_even,
        &ci["break_even_price_ratio"],
    );
    interval(
        "cached",
        c.ci95.break_even_cached,
        &ci["break_even_price_ratio_cached"],
    );
    interval(
        "pipeline",
        c.ci95.break_even_pipeline,
        &ci["break_even_price_ratio_pipeline"],
    );
}

#[test]
fn run1_records_and_schema_copies() {
    let Some(root) = reference_dir() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let (imported, s, p) = load(&root.join("results"));
    // The published run-1 table was re-graded after the run; the records keep the verdicts given
    // at run time, 26 and 76 passes (regrade.md lists the 9 changes: 6 and 3 for the 3B, 1 and 2
    // for the 7B).
    assert_eq!(model(&s, SMALL).passes, 26);
    assert_eq!(model(&s, LARGE).passes, 76);
    // ... and the report says so.
    let note = imported.0.source_regrade.as_deref().unwrap_or_default();
    assert!(note.contains("9 grades changed"), "{note}");
    let report =
        passk::report::document::Report::new(&imported.0, &s, &imported.1, &imported.2, vec![]);
    let md = passk::report::document::markdown(&report);
    assert!(md.contains("RE-GRADED AT THE SOURCE"), "{md}");
    // Everything that does not depend on a verdict matches the published table.
    check_behaviour(&s, &p);
    check_router(&s, &p);
    // metrics.md: 133 schema-copy calls across all arguments, 117 query, 13 customer_id,
    // 3 order_id, of 377 rejected calls.
    let b = &model(&s, SMALL).behaviour;
    assert_eq!(b.rejected_calls, 377);
    assert_eq!(b.schema_copy.calls, 133);
    assert_eq!(b.schema_copy.by_key["query"], 117);
    assert_eq!(b.schema_copy.by_key["customer_id"], 13);
    assert_eq!(b.schema_copy.by_key["order_id"], 3);
    assert_eq!(b.schema_copy.by_key.len(), 3);
}

#[test]
fn import_command_writes_a_run_that_reads_back_identically() {
    let Some(root) = reference_dir() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let src = root.join("results-run2");
    let tmp = util::tempdir();
    let out = tmp.path().join("imported");
    let (code, stdout, stderr) = util::output(
        util::passk()
            .arg("import")
            .arg("--reference")
            .arg(&src)
            .arg("--out")
            .arg(&out),
    );
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("240"), "stdout: {stdout}");
    let run = analysis::load_run(&out).expect("load the imported run");
    assert_eq!(run.torn_lines, 0);
    assert_eq!(run.conversations.len(), 240);
    assert_eq!(run.router.len(), 288);
    assert_eq!(run.manifest.backend, "imported");
    let opts = AnalysisOptions {
        resamples: 200,
        ..AnalysisOptions::default()
    };
    let (m, c, r) = import::reference(&src).unwrap();
    let direct = analysis::summarize(&m, &c, &r, &opts);
    let mut shuffled = run.conversations.clone();
    shuffled.reverse();
    let back = analysis::summarize(&run.manifest, &shuffled, &run.router, &opts);
    // Same records in any order: the same summary, byte for byte (run id aside).
    let json = |s: &Summary| serde_json::to_string(&s.groups).unwrap();
    assert_eq!(json(&direct), json(&back));
    assert_eq!(
        serde_json::to_string(&direct.router).unwrap(),
        serde_json::to_string(&back.router).unwrap()
    );
    // Importing again into the same directory is refused.
    let (code, _, stderr) = util::output(
        util::passk()
            .arg("import")
            .arg("--reference")
            .arg(&src)
            .arg("--out")
            .arg(&out),
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("already"), "stderr: {stderr}");
}

#[test]
fn report_html_builds_from_an_imported_run_without_transcripts() {
    let Some(root) = reference_dir() else {
        util::skip(util::NO_REFERENCE);
        return;
    };
    let tmp = util::tempdir();
    let out = tmp.path().join("imported");
    let import = util::passk()
        .arg("import")
        .arg("--reference")
        .arg(root.join("results-run2"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("import");
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    let run = analysis::load_run(&out).expect("load the imported run");
    assert!(
        run.conversations.iter().all(|c| c.transcript.is_empty()),
        "no transcripts"
    );
    let (code, _, stderr) = util::output(
        util::passk()
            .arg("report")
            .arg(&out)
            .args(["--resamples", "50"]),
    );
    assert_eq!(code, 0, "{stderr}");
    let page = out
        .join(passk::report::REPORT_DIR)
        .join(passk::report::html::REPORT_HTML);
    let html = std::fs::read_to_string(&page).expect("report.html");
    // One detail line per trial; a conversation's falls back to its tool events and replies.
    let details = html
        .split(r#"id="details">"#)
        .nth(1)
        .and_then(|d| d.split("</script>").next())
        .expect("details");
    let lines: Vec<serde_json::Value> = details
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), run.conversations.len() + run.router.len());
    let conversations: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("router").is_none()).collect();
    assert_eq!(conversations.len(), run.conversations.len());
    assert!(
        conversations
            .iter()
            .all(|l| l["imported"] == true && l["replies"].is_array())
    );
    assert!(
        conversations
            .iter()
            .any(|l| l["events"].as_array().is_some_and(|e| !e.is_empty()))
    );
    let caption = html.contains("tool docs not recorded");
    assert!(caption, "an imported run says what it does not have");
    if let Some(browser) = passk::report::html::selftest::find_chromium() {
        let profile = util::tempdir();
        let result = passk::report::html::selftest::run_selftest(
            &browser,
            &page,
            profile.path(),
            std::time::Duration::from_secs(90),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(result["errors"], 0, "{result}");
        assert_eq!(result["opened_outcome"], "model_fail", "{result}");
        assert!(result["transcript_messages"].as_u64() > Some(0), "{result}");
    }
}

#[test]
fn cost_command_prints_seed_004_worked_example() {
    // Seed 004's published figures: $0.0300 vs $0.0231 (-23%) per attempt, $0.0333 vs $0.0385
    // (+16%) per success, 4.62x; with caching at 10%: $0.0157 vs $0.0115 (-27%), 2.92x; leaf -75%.
    let (code, stdout, stderr) = util::output(util::passk().args([
        "cost",
        "--cache-discount",
        "0.1",
        "--leaf",
        "0.98",
        "0.97",
    ]));
    assert_eq!(code, 0, "stderr: {stderr}");
    for want in [
        "| Cost per attempt | $0.0300 | $0.0231 | -23% |",
        "| Cost per successful task | $0.0333 | $0.0385 | +16% |",
        "break-even 4.62x",
        "| Cost per successful task | $0.0157 | $0.0115 | -27% |",
        "break-even 2.92x",
        "| Cost per successful task | $0.0086 | $0.0022 | -75% |",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
    let (code, _, stderr) = util::output(util::passk().args(["cost", "--cheaper-success", "0"]));
    assert_ne!(code, 0);
    assert!(stderr.contains("--cheaper-success"), "stderr: {stderr}");
}
