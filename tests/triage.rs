//! The triage suite: loading and its refusals, the gold and near-miss replays, each of the four
//! control-flow rates of seed 000 firing on a stub behaviour built to trigger it (and staying at
//! zero for the oracle), and `passk run --suite triage` end to end against the stub.

use crate::util::{copy_data, output, passk, root, tempdir};
use passk::analysis::figures::quality::{ControlFlow, control_flow};
use passk::analysis::{Rate, load_run};
use passk::domain::check::check_suite;
use passk::domain::replay::replay;
use passk::domain::{Domain, Task, Trajectory, TrajectoryCall};
use passk::runner::agent_loop::Player;
use passk::runner::record::ConversationRecord;
use passk::runner::settings::{RunSettings, SuiteChoice};
use passk::runner::telemetry::Telemetry;
use passk::suites::triage::policy::{Branch, branch, rule_resolvable};
use passk::suites::triage::{TriageSuite, load_triage};
use passk::trace::{ControlFlags, FailureMode};
use passk::wire::client::{Client, ClientConfig};
use passk_stub::{Behaviour, ScriptBook, StubConfig, StubServer};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A rate's (hits, of): its interval is checked where intervals are.
fn counts(r: Option<Rate>) -> Option<(usize, usize)> {
    r.map(|r| (r.hits, r.of))
}

fn suite() -> TriageSuite {
    load_triage(&root()).expect("the triage suite loads")
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

fn call(tool: &str, args: Value) -> TrajectoryCall {
    TrajectoryCall {
        tool: tool.into(),
        args: args.as_object().cloned().unwrap_or_default(),
    }
}

fn with_calls(task: &Task, calls: Vec<TrajectoryCall>) -> Trajectory {
    let mut t = task.gold.clone();
    t.turns[0].calls = calls;
    t
}

fn task<'a>(s: &'a TriageSuite, id: &str) -> &'a Task {
    s.tasks().iter().find(|t| t.id == id).expect("task")
}

#[test]
fn the_suite_covers_every_branch_with_about_24_tickets() {
    let s = suite();
    assert!((20..=40).contains(&s.tasks().len()), "about 24 tickets");
    let branches: BTreeSet<Branch> = s.tickets.iter().map(branch).collect();
    assert_eq!(branches.len(), Branch::ALL.len());
    let rule = s.tasks().iter().filter(|t| t.category == "rule").count();
    let lookup = s.tasks().iter().filter(|t| t.category == "lookup").count();
    assert!(rule > 0 && lookup > 0 && rule + lookup == s.tasks().len());
    for (t, ticket) in s.tasks().iter().zip(&s.tickets) {
        assert_eq!(t.id, ticket.id);
        assert_eq!(t.customer, vec![ticket.message()]);
        assert_eq!(t.category == "rule", rule_resolvable(ticket));
        assert!(t.near_misses.len() >= 3, "{}", t.id);
    }
}

#[test]
fn gold_passes_clean_and_every_near_miss_fails_as_expected() {
    let s = suite();
    let report = check_suite(&s);
    assert_eq!(report.gold_passing(), s.tasks().len(), "{:?}", report.gold);
    assert_eq!(
        report.near_misses_as_expected(),
        report.near_misses.len(),
        "{:?}",
        report
            .near_misses
            .iter()
            .filter(|n| !n.as_expected())
            .collect::<Vec<_>>()
    );
    // Every gold verdict sets the flags that apply to its category, all false.
    for g in &report.gold {
        let c = &g.verdict.control;
        let rule = task(&s, &g.task).category == "rule";
        assert_eq!(c.unknown_verb, Some(false));
        assert_eq!(c.loop_overrun, Some(false));
        assert_eq!(c.over_model, rule.then_some(false), "{}", g.task);
        assert_eq!(c.under_tool, (!rule).then_some(false), "{}", g.task);
    }
    // A wrong route on an on-call ticket is a missed escalation.
    let nm = report
        .near_misses
        .iter()
        .find(|n| n.task == "TK-105" && n.name.starts_with("routes to triage"))
        .expect("near-miss");
    assert_eq!(nm.verdict.failure_mode, Some(FailureMode::MissedEscalation));
}

#[test]
fn a_lookup_before_routing_a_rule_ticket_passes_but_is_over_model() {
    let s = suite();
    let t = task(&s, "TK-102");
    let eager = with_calls(
        t,
        vec![
            call("lookup_order", json!({"order_id": "A-2207"})),
            call("route_docs", json!({"ticket_id": "TK-102"})),
            call("halt", json!({"ticket_id": "TK-102"})),
        ],
    );
    let (_, v) = replay(&s, t, &eager);
    assert!(v.passed, "{:?}", v.reasons);
    assert_eq!(v.control.over_model, Some(true));
    assert_eq!(v.control.loop_overrun, Some(true));
    assert_eq!(v.control.under_tool, None);
    // Routing and halting in one model call is not over-model.
    let (_, gold) = replay(&s, t, &t.gold);
    assert_eq!(gold.control.over_model, Some(false));
}

#[test]
fn talking_after_halt_is_an_overrun_not_over_model() {
    let s = suite();
    let t = task(&s, "TK-107");
    let chatty = with_calls(
        t,
        vec![
            call("route_oncall", json!({"ticket_id": "TK-107"})),
            call("halt", json!({"ticket_id": "TK-107"})),
            call(
                "draft_reply",
                json!({"ticket_id": "TK-107", "message": "Paging now."}),
            ),
        ],
    );
    let (played, v) = replay(&s, t, &chatty);
    assert!(!played.events[2].ok, "a halted ticket takes nothing more");
    assert!(v.passed, "{:?}", v.reasons);
    assert_eq!(v.control.over_model, Some(false));
    assert_eq!(v.control.loop_overrun, Some(true));
}

#[test]
fn a_draft_before_the_lookup_is_under_tool() {
    let s = suite();
    let t = task(&s, "TK-115");
    let late = with_calls(
        t,
        vec![
            call(
                "draft_reply",
                json!({"ticket_id": "TK-115", "message": "It is in transit, due 2026-10-17."}),
            ),
            call("lookup_order", json!({"order_id": "A-2201"})),
            call("halt", json!({"ticket_id": "TK-115"})),
        ],
    );
    let (_, v) = replay(&s, t, &late);
    assert!(v.passed, "the facts happen to be right: {:?}", v.reasons);
    assert_eq!(v.control.under_tool, Some(true));
    assert_eq!(v.control.over_model, None);
    let skip = &t.near_misses[0];
    assert!(skip.name.contains("skips the lookup"));
    let (_, v) = replay(&s, t, &skip.trajectory);
    assert_eq!(v.control.under_tool, Some(true));
}

#[test]
fn the_loader_refuses_expectations_that_disagree_with_the_policy() {
    let dir = tempdir();
    copy_data(dir.path());
    let exp = dir.path().join("graders/triage/expectations.json");
    edit(
        &exp,
        r#""TK-101": {"route": "docs""#,
        r#""TK-101": {"route": "triage""#,
    );
    let err = load_triage(dir.path())
        .expect_err("route disagrees")
        .to_string();
    assert!(err.contains("tickets.TK-101.route"), "{err}");
    assert!(err.contains("the gold policy gives docs"), "{err}");

    let dir = tempdir();
    copy_data(dir.path());
    let tickets = dir.path().join("tasks/triage/tickets.json");
    edit(
        &tickets,
        r#""order_id": "A-2201""#,
        r#""order_id": "A-9999""#,
    );
    let err = load_triage(dir.path())
        .expect_err("unknown order")
        .to_string();
    assert!(
        err.contains("TK-115.order_id: unknown order 'A-9999'"),
        "{err}"
    );

    // Dropping the order id turns a lookup ticket into a rule ticket: the graders must follow.
    let dir = tempdir();
    copy_data(dir.path());
    let tickets = dir.path().join("tasks/triage/tickets.json");
    edit(&tickets, r#""order_id": "A-2201""#, r#""order_id": null"#);
    let err = load_triage(dir.path())
        .expect_err("branch moved")
        .to_string();
    assert!(err.contains("tickets.TK-115.route"), "{err}");
}

/// Plays every triage task once with `model` against a stub holding `book`.
async fn play_all(book: ScriptBook, model: &str, behaviour: Behaviour) -> Vec<ConversationRecord> {
    let s = suite();
    let handle = StubServer::start(StubConfig::with_script(book).model(model, behaviour))
        .await
        .expect("stub starts");
    let client = Client::new(ClientConfig {
        base_url: handle.base_url(),
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(10),
        retries: 0,
        backoff: Duration::from_millis(1),
    })
    .expect("client");
    let settings = RunSettings {
        models: vec![model.to_string()],
        suites: vec![SuiteChoice::Triage],
        trials: 1,
        call_caps: vec![6],
        ..RunSettings::default()
    };
    let telemetry = Telemetry::disabled("test");
    let player = Player {
        client: &client,
        model,
        settings: &settings,
        telemetry: &telemetry,
        grader_digest: "test",
        router_in_front: None,
        prompt_counts: &passk::runner::context::PromptCounts::default(),
        watch: None,
    };
    let mut out = Vec::new();
    for t in s.tasks() {
        out.push(
            player
                .play(
                    &s,
                    t,
                    0,
                    6,
                    passk::runner::record::Mode::Agent,
                    passk::domain::Shown::docs(passk::domain::ToolVariant::BARE),
                )
                .await,
        );
    }
    handle.shutdown().await;
    out
}

fn rates(records: &[ConversationRecord]) -> ControlFlow {
    assert!(
        records.iter().all(|r| r.outcome.is_graded()),
        "a wire failure"
    );
    control_flow(&records.iter().collect::<Vec<_>>())
}

fn gold_book() -> ScriptBook {
    ScriptBook::from_suites(suite().tasks(), None)
}

/// A book whose trajectories are the named near-miss where a task has one, else the gold.
fn near_miss_book(name_starts: &str) -> ScriptBook {
    let mut book = ScriptBook::new();
    for t in suite().tasks() {
        let traj = t
            .near_misses
            .iter()
            .find(|n| n.name.starts_with(name_starts))
            .map_or(&t.gold, |n| &n.trajectory);
        book.add_conversation(&t.customer[0], traj, &t.customer, &[]);
    }
    book
}

/// Tickets of the suite: (rule-resolvable, needing a lookup, all), counted from its data so that
/// adding a ticket keeps these tests green.
struct Sizes {
    rule: usize,
    lookup: usize,
    all: usize,
}

fn sizes() -> Sizes {
    let s = suite();
    let count = |category: &str| s.tasks().iter().filter(|t| t.category == category).count();
    Sizes {
        rule: count("rule"),
        lookup: count("lookup"),
        all: s.tasks().len(),
    }
}

#[tokio::test]
async fn the_oracle_raises_no_control_flag() {
    let n = sizes();
    let recs = play_all(gold_book(), "oracle", Behaviour::Oracle).await;
    assert!(recs.iter().all(|r| r.verdict.passed));
    let f = rates(&recs);
    assert_eq!(counts(f.unknown_verb), Some((0, n.all)));
    assert_eq!(counts(f.loop_overrun), Some((0, n.all)));
    assert_eq!(counts(f.over_model), Some((0, n.rule)));
    assert_eq!(counts(f.under_tool), Some((0, n.lookup)));
}

#[tokio::test]
async fn never_answering_is_a_loop_overrun_everywhere() {
    let n = sizes();
    let recs = play_all(gold_book(), "never", Behaviour::NeverAnswer).await;
    let f = rates(&recs);
    assert_eq!(counts(f.loop_overrun), Some((n.all, n.all)));
    assert!(
        recs.iter()
            .all(|r| r.verdict.failure_mode == Some(FailureMode::LoopCap))
    );
    assert_eq!(counts(f.unknown_verb), Some((0, n.all)));
}

#[tokio::test]
async fn an_invented_tool_is_an_unknown_verb_everywhere() {
    let n = sizes();
    let recs = play_all(gold_book(), "inventor", Behaviour::InventedTool).await;
    let f = rates(&recs);
    assert_eq!(counts(f.unknown_verb), Some((n.all, n.all)));
    // It recovers and finishes the gold plan, one model call late.
    assert!(recs.iter().all(|r| r.verdict.passed));
    assert_eq!(counts(f.over_model), Some((n.rule, n.rule)));
    assert_eq!(counts(f.under_tool), Some((0, n.lookup)));
}

#[tokio::test]
async fn skipping_the_lookup_is_under_tool_on_every_lookup_ticket() {
    let n = sizes();
    let recs = play_all(
        near_miss_book("skips the lookup"),
        "skipper",
        Behaviour::Oracle,
    )
    .await;
    let f = rates(&recs);
    assert_eq!(counts(f.under_tool), Some((n.lookup, n.lookup)));
    assert_eq!(counts(f.over_model), Some((0, n.rule)));
    let lookups = recs.iter().filter(|r| r.category == "lookup");
    assert!(
        lookups
            .into_iter()
            .all(|r| r.verdict.failure_mode == Some(FailureMode::WrongAction))
    );
}

#[tokio::test]
async fn drafting_on_a_rule_ticket_is_over_model_on_every_rule_ticket() {
    let n = sizes();
    let recs = play_all(
        near_miss_book("drafts a reply on a route-only"),
        "drafter",
        Behaviour::Oracle,
    )
    .await;
    let f = rates(&recs);
    assert_eq!(counts(f.over_model), Some((n.rule, n.rule)));
    assert_eq!(counts(f.under_tool), Some((0, n.lookup)));
    assert_eq!(counts(f.loop_overrun), Some((n.rule, n.all)));
}

#[test]
fn unit_flags_are_none_where_the_category_does_not_apply() {
    let s = suite();
    let flags = |id: &str| -> ControlFlags {
        let t = task(&s, id);
        replay(&s, t, &t.gold).1.control
    };
    assert_eq!(flags("TK-101").under_tool, None);
    assert_eq!(flags("TK-115").over_model, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passk_run_suite_triage_end_to_end() {
    let handle = StubServer::start(StubConfig::with_script(gold_book()))
        .await
        .expect("stub starts");
    let url = handle.base_url();
    let dir = tempdir();
    let out = dir.path().join("run");
    let out2 = out.clone();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        output(
            passk()
                .args([
                    "run",
                    "--suite",
                    "triage",
                    "--models",
                    "oracle",
                    "--trials",
                    "2",
                    "--no-progress",
                    "--host",
                ])
                .arg(&url)
                .arg("--out")
                .arg(&out2),
        )
    })
    .await
    .expect("join");
    handle.shutdown().await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let run = load_run(&out).expect("records");
    assert_eq!(run.conversations.len(), 2 * crate::util::triage_tickets());
    assert!(
        run.conversations
            .iter()
            .all(|c| c.suite == "triage" && c.verdict.passed)
    );
    assert!(run.manifest.suite_digests.contains_key("triage"));
}
