//! The suites through the real binary (`passk suite check`, `freeze`, `verify`) and through the
//! library (loading, error messages, the store environment under arbitrary arguments, grading).

use crate::util::layout::{LAYOUTS, redump_tree};
use crate::util::{copy_data, output, passk, root, tempdir};
use passk::domain::replay::{play, replay};
use passk::domain::{Domain, Evidence, ToolOutcome, ToolVariant};
use passk::grade::freeze::{current, read_lock};
use passk::suites::router::load_router;
use passk::suites::store::data::StoreData;
use passk::suites::store::load_store;
use passk::trace::FailureMode;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::Path;

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

#[test]
fn suite_check_reports_counts_and_replays() {
    let (code, out, err) = output(passk().args(["suite", "check"]));
    assert_eq!(code, 0, "{out}{err}");
    let suite = load_store(&root()).expect("store");
    let per_category = |c: &str| suite.tasks().iter().filter(|t| t.category == c).count();
    let table = &passk::suites::store::tools::TOOLS;
    let store_line = format!(
        "store: {} tools, {} parameters, {} conversations (lookup {}, multi-hop {}, write {}, multi-turn {})",
        table.len(),
        table.iter().map(|t| t.params.len()).sum::<usize>(),
        suite.tasks().len(),
        per_category("lookup"),
        per_category("multi-hop"),
        per_category("write"),
        per_category("multi-turn")
    );
    assert!(out.contains(&store_line), "{store_line}\n{out}");
    let router = load_router(&root()).expect("router");
    assert!(
        out.contains(&format!("router: {} messages (", router.messages.len())),
        "{out}"
    );
    let g = suite.tasks().len();
    assert!(out.contains(&format!("gold: {g}/{g} passing")), "{out}");
    let n: usize = suite.tasks().iter().map(|t| t.near_misses.len()).sum();
    assert!(
        out.contains(&format!("near-misses: {n}/{n} failing as expected")),
        "{out}"
    );
    assert!(!out.contains("SURPRISE"), "{out}");
    // Counts and failures only; --verbose adds a line per near-miss as expected.
    assert!(!out.contains("  ok "), "{out}");
    let (code, verbose, err) = output(passk().args(["suite", "check", "--verbose"]));
    assert_eq!(code, 0, "{verbose}{err}");
    let all = passk::suites::AllSuites::load(&root()).expect("suites");
    let every: usize = all
        .domains
        .iter()
        .flat_map(|d| d.tasks())
        .map(|t| t.near_misses.len())
        .sum();
    assert!(every >= n && n > 0);
    assert_eq!(verbose.matches("  ok ").count(), every, "{verbose}");
}

#[test]
fn suite_check_warns_about_a_task_that_repeats_another() {
    let dir = tempdir();
    copy_data(dir.path());
    // The first conversation again, under another id.
    let (first, _) = add_conversation(dir.path(), "L98", |_| {});
    let out = refreeze_and_check(dir.path());
    assert!(
        out.contains(&format!(
            "WARNING L98 repeats {first}: the same customer messages"
        )),
        "{out}"
    );
    let original = output(passk().args(["suite", "check"])).1;
    assert!(!original.contains("WARNING"), "{original}");
}

#[test]
fn suite_check_fails_on_a_surprise() {
    let dir = tempdir();
    copy_data(dir.path());
    // A near-miss whose expected mode is wrong, and a gold reply that loses its fact.
    edit(
        &dir.path().join("tasks/store/conversations.json"),
        "\"expect\": \"missed_escalation\"",
        "\"expect\": \"wrong_answer\"",
    );
    edit(
        &dir.path().join("tasks/store/conversations.json"),
        "arrive on 18 October 2026.",
        "arrive soon.",
    );
    let (code, out, _) = output(passk().args(["suite", "check", "--root"]).arg(dir.path()));
    assert_eq!(code, 6, "{out}");
    let g = crate::util::store_conversations();
    assert!(
        out.contains(&format!("gold: {}/{g} passing", g - 1)),
        "{out}"
    );
    assert!(out.contains("SURPRISE L1 gold"), "{out}");
    assert!(
        out.contains("expected wrong_answer, got missed_escalation"),
        "{out}"
    );
}

/// docs/reference/suites.md, "Adding a conversation", followed in a copy of the data: a new conversation
/// with its expectations, a re-freeze, and the suite checks pass with it counted.
#[test]
fn adding_a_conversation_as_the_docs_say_keeps_every_check_green() {
    let dir = tempdir();
    copy_data(dir.path());
    // A second lookup of order 5105, asked another way (the first message must be unique).
    let (_, before) = add_conversation(dir.path(), "L99", |added| {
        added["customer"] = json!([
            "Rahul Mehta here, rahul.mehta@example.com. Any news on when order 5105 gets to me?"
        ]);
    });

    let out = refreeze_and_check(dir.path());
    let n = before + 1;
    assert!(out.contains(&format!("{n} conversations (lookup")), "{out}");
    assert!(out.contains(&format!("gold: {n}/{n} passing")), "{out}");
}

#[test]
fn adding_a_ticket_as_the_docs_say_keeps_every_check_green() {
    let dir = tempdir();
    copy_data(dir.path());
    let tickets_path = dir.path().join("tasks/triage/tickets.json");
    let exp_path = dir.path().join("graders/triage/expectations.json");
    let read = |p: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
    };
    let (mut tickets, mut expectations) = (read(&tickets_path), read(&exp_path));
    let list = tickets.as_array_mut().expect("a list of tickets");
    let before = list.len();
    // Another low-priority billing question: the docs rule, as for the first ticket.
    let mut added = list[0].clone();
    let first = added["id"].as_str().expect("id").to_string();
    added["id"] = json!("TK-199");
    added["text"] = json!("Where can I read how the annual plan is billed?");
    list.push(added);
    expectations["tickets"]["TK-199"] = expectations["tickets"][&first].clone();
    write_json(&tickets_path, &tickets);
    write_json(&exp_path, &expectations);

    let out = refreeze_and_check(dir.path());
    let n = before + 1;
    assert!(out.contains(&format!("{n} tickets (rule")), "{out}");
    assert!(
        out.contains(&format!("triage gold: {n}/{n} passing")),
        "{out}"
    );
}

#[test]
fn malformed_files_name_the_file_and_line() {
    check_malformed_files(copy_data);
}

/// The same data re-dumped as a researcher's script would write it (same content, other layout):
/// it still checks green once re-frozen, and every malformed-file error still names the file and
/// the line where the fault now stands.
#[test]
fn malformed_files_are_named_in_any_layout() {
    for layout in LAYOUTS {
        let dir = tempdir();
        copy_data(dir.path());
        for sub in ["tasks", "graders"] {
            redump_tree(&dir.path().join(sub), layout);
        }
        let out = refreeze_and_check(dir.path());
        let g = crate::util::store_conversations();
        assert!(
            out.contains(&format!("gold: {g}/{g} passing")),
            "{layout:?}: {out}"
        );
        check_malformed_files(|d| {
            copy_data(d);
            for sub in ["tasks", "graders"] {
                redump_tree(&d.join(sub), layout);
            }
        });
    }
}

/// Breaks the data laid out by `fresh` in five ways, each located by content rather than by
/// formatting, and checks that each error names the file, and the line read from the edited text.
fn check_malformed_files(fresh: impl Fn(&Path)) {
    let dir = tempdir();
    fresh(dir.path());
    let conv = dir.path().join("tasks/store/conversations.json");
    // A key that is not a string, just inside the first conversation's object.
    let text = std::fs::read_to_string(&conv).expect("read");
    let at = text.find('{').expect("a conversation") + 1;
    std::fs::write(&conv, format!("{},{}", &text[..at], &text[at..])).expect("write");
    let (line, column) = line_column(&text, at);
    let err = load_store(dir.path()).expect_err("broken json").to_string();
    assert!(
        err.contains(&format!(
            "conversations.json:{line}:{column}: key must be a string"
        )),
        "{err}"
    );

    fresh(dir.path());
    edit_json(&conv, |v| {
        let w1 = find_by(v, "id", "W1");
        let call = &mut w1["gold"]["turns"][0]["calls"][2];
        assert_eq!(call["tool"], "cancel_order");
        *call = json!({"tool": "cancel", "args": {}});
    });
    let err = load_store(dir.path())
        .expect_err("unknown tool")
        .to_string();
    assert!(
        err.contains("conversations.json: W1.gold.turns[0].calls[2].tool: unknown tool 'cancel'"),
        "{err}"
    );

    fresh(dir.path());
    let exp = dir.path().join("graders/store/expectations.json");
    let text = std::fs::read_to_string(&exp).expect("read");
    let l1 = text.find("\"L1\"").expect("L1");
    let at = l1 + text[l1..].find("\"2026-10-18\"").expect("L1's date");
    let bad = format!("{}\"2026-10-32\"{}", &text[..at], &text[at + 12..]);
    std::fs::write(&exp, bad).expect("write");
    let err = load_store(dir.path()).expect_err("bad date").to_string();
    let (line, _) = line_column(&text, at);
    assert!(
        err.contains(&format!("expectations.json:{line}:"))
            && err.contains("invalid date '2026-10-32'"),
        "{err}"
    );

    fresh(dir.path());
    edit_json(&exp, |v| {
        let orders = v["conversations"]["W1"]["orders"]
            .as_object_mut()
            .expect("W1's orders");
        let order = orders.remove("5111").expect("order 5111");
        orders.insert("5999".into(), order);
    });
    let err = load_store(dir.path())
        .expect_err("unknown order")
        .to_string();
    assert!(
        err.contains("conversations.W1.orders.5999: unknown order"),
        "{err}"
    );

    fresh(dir.path());
    let mut index = None;
    edit_json(&dir.path().join("tasks/store/tools/documented.json"), |v| {
        let tools = v["tools"].as_array_mut().expect("tools");
        let i = tools
            .iter()
            .position(|t| t["name"] == "list_orders")
            .expect("list_orders");
        tools[i]["parameters"][0]["example"] = json!("C101");
        index = Some(i);
    });
    let err = load_store(dir.path())
        .expect_err("example in data")
        .to_string();
    let i = index.expect("edited");
    assert!(
        err.contains(&format!(
            "documented.json: tools[{i}].parameters[0].example"
        )),
        "{err}"
    );

    let (code, _, stderr) = output(passk().args(["suite", "check", "--root"]).arg(dir.path()));
    assert_eq!(code, 1);
    assert!(stderr.contains("documented.json"), "{stderr}");
}

/// The 1-based line and column of byte `at` in `text`, as serde_json counts them.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Edits a JSON file as a value and writes it back.
fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json");
    f(&mut v);
    write_json(path, &v);
}

/// The object of the array `v` whose `key` is `id`.
fn find_by<'a>(v: &'a mut Value, key: &str, id: &str) -> &'a mut Value {
    v.as_array_mut()
        .expect("a list")
        .iter_mut()
        .find(|c| c[key] == id)
        .unwrap_or_else(|| panic!("no {key} {id}"))
}

#[test]
fn the_committed_lock_matches_and_carries_the_grader_digest() {
    let (code, out, err) = output(passk().arg("verify"));
    assert_eq!(
        code, 0,
        "graders/graders.lock is stale: run `passk freeze`\n{out}{err}"
    );
    let lock = read_lock(&root()).expect("lock");
    assert_eq!(current(&root()).expect("now").suites, lock.suites);
    for (name, part) in &lock.suites {
        assert!(
            out.contains(&format!("{name}: grader digest {}", part.digest)),
            "{out}"
        );
    }
    let suites = passk::suites::BUILT_IN.len() + passk::suites::discover(&root()).mcp.len();
    assert!(suites >= 4, "found {suites} suites");
    assert_eq!(lock.suites.len(), suites, "one digest per suite: {out}");
}

#[test]
fn editing_any_grader_file_fails_verify_and_names_it() {
    let suite_files = [
        "store/expectations.json",
        "store/baseline.json",
        "router/labels.json",
    ];
    for file in suite_files {
        let dir = tempdir();
        copy_data(dir.path());
        let path = dir.path().join("graders").join(file);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push(' ');
        std::fs::write(&path, text).expect("write");
        let (code, _, err) = output(passk().args(["verify", "--root"]).arg(dir.path()));
        assert_eq!(code, 3, "{file}: {err}");
        let suite = file.split('/').next().unwrap_or_default();
        assert!(
            err.contains(&format!("suite {suite}: graders/{file} changed")),
            "{err}"
        );
    }
}

#[test]
fn editing_non_graders_keeps_the_lock_valid() {
    let dir = tempdir();
    copy_data(dir.path());
    edit(
        &dir.path().join("tasks/store/tools/documented.json"),
        "Find customers by email address or by name.",
        "Look a customer up.",
    );
    edit(
        &dir.path().join("tasks/store/policy.md"),
        "Hearth & Grain",
        "Hearth and Grain",
    );
    let (code, _, err) = output(passk().args(["verify", "--root"]).arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    let suite = load_store(dir.path()).expect("still loads");
    let real = load_store(&root()).expect("store");
    assert_ne!(
        suite.digests(ToolVariant::DOCUMENTED).tools,
        real.digests(ToolVariant::DOCUMENTED).tools
    );
    assert_ne!(
        suite.digests(ToolVariant::BARE).policy,
        real.digests(ToolVariant::BARE).policy
    );
    assert_eq!(
        suite.digests(ToolVariant::BARE).tools,
        real.digests(ToolVariant::BARE).tools
    );
}

/// How many files lie under `dir`, at any depth.
fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let p = e.expect("entry").path();
            if p.is_dir() { walk(&p) } else { 1 }
        })
        .sum()
}

#[test]
fn freeze_then_verify_in_a_copy() {
    let dir = tempdir();
    copy_data(dir.path());
    std::fs::remove_file(dir.path().join("graders/graders.lock")).expect("rm");
    let (code, _, err) = output(passk().args(["verify", "--root"]).arg(dir.path()));
    assert_eq!(code, 3);
    assert!(err.contains("missing"), "{err}");
    let (code, out, _) = output(passk().args(["freeze", "--root"]).arg(dir.path()));
    assert_eq!(code, 0);
    let lock = read_lock(dir.path()).expect("lock");
    let graders = walk(&dir.path().join("graders"));
    let frozen: usize = lock
        .suites
        .values()
        .map(|p| p.files.keys().filter(|f| f.starts_with("graders/")).count())
        .sum();
    assert!(
        frozen == graders - 1,
        "every file under graders/ but the lock: {out}"
    );
    let (code, _, _) = output(passk().args(["verify", "--root"]).arg(dir.path()));
    assert_eq!(code, 0);
}

#[test]
fn router_suite_loads_with_gold_labels() {
    let r = load_router(&root()).expect("router");
    assert!(!r.messages.is_empty());
    assert_eq!(r.labels.len(), 6);
    for l in &r.labels {
        assert_eq!(
            r.messages.iter().filter(|m| &m.label == l).count(),
            8,
            "{l}"
        );
        assert!(r.prompt.contains(l.as_str()), "the prompt names {l}");
    }
    assert!(
        r.messages
            .iter()
            .enumerate()
            .all(|(i, m)| m.index as usize == i)
    );
    assert_eq!(r.digest.len(), 64);
}

#[test]
fn tools_are_ollama_shaped_and_examples_stay_out_of_the_data() {
    let suite = load_store(&root()).expect("store");
    // The tools offered are the dispatch table's, each with its required parameters in order.
    let table: Vec<(&str, Vec<&str>)> = passk::suites::store::tools::TOOLS
        .iter()
        .map(|t| (t.name, t.params.to_vec()))
        .collect();
    for variant in [ToolVariant::BARE, ToolVariant::DOCUMENTED] {
        let tools = suite.tools(variant);
        let offered: Vec<(&str, Vec<&str>)> = tools
            .iter()
            .map(|t| {
                let required = t["function"]["parameters"]["required"]
                    .as_array()
                    .map_or(Vec::new(), |r| {
                        r.iter().filter_map(|p| p.as_str()).collect()
                    });
                (t["function"]["name"].as_str().unwrap_or(""), required)
            })
            .collect();
        assert_eq!(offered, table, "{variant:?}");
        for t in tools {
            assert_eq!(t["type"], "function");
            assert_eq!(t["function"]["parameters"]["type"], "object");
        }
    }
    let described = |v: ToolVariant| {
        suite
            .tools(v)
            .iter()
            .flat_map(|t| {
                t["function"]["parameters"]["properties"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|(_, p)| p.get("description").is_some())
            .count()
    };
    // Every parameter of the table, documented; one alone in the bare variant.
    let params: usize = table.iter().map(|(_, p)| p.len()).sum();
    assert_eq!(described(ToolVariant::BARE), 1);
    assert_eq!(described(ToolVariant::DOCUMENTED), params);
    let data = std::fs::read_to_string(root().join("tasks/store/store.json"))
        .expect("store.json")
        .to_lowercase();
    let examples = suite.example_values();
    assert_eq!(examples.len(), params);
    for (param, value) in examples {
        assert!(
            !data.contains(&value.to_lowercase()),
            "example {value} of {param} appears in the store data"
        );
    }
}

#[test]
fn snapshot_is_canonical() {
    let suite = load_store(&root()).expect("store");
    let mut env = suite.new_environment();
    let snap = env.snapshot();
    assert_eq!(snap["orders"].as_object().map(|o| o.len()), Some(16));
    assert_eq!(snap["returns"], json!([]));
    assert_eq!(snap["tickets"], json!([]));
    assert_eq!(
        snap["orders"]["5111"],
        json!({"status": "processing", "address": "Storgatan 8, 113 51 Stockholm"})
    );
    env.execute("cancel_order", &json!({"order_id": 5111, "reason": "x"}));
    env.execute(
        "create_ticket",
        &json!({"customer_id": "C101", "summary": "s"}),
    );
    let snap = env.snapshot();
    assert_eq!(snap["orders"]["5111"]["status"], "cancelled");
    assert_eq!(
        snap["tickets"],
        json!([{"customer_id": "C101", "summary": "s"}])
    );
    let keys: Vec<&String> = snap["orders"].as_object().expect("orders").keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn store_data_covers_the_experiment() {
    let suite = load_store(&root()).expect("store");
    let d: &StoreData = &suite.data;
    let firsts: Vec<&str> = d
        .customers
        .iter()
        .filter_map(|c| c.name.split(' ').next())
        .collect();
    assert!(
        firsts
            .iter()
            .any(|f| firsts.iter().filter(|g| *g == f).count() >= 2),
        "a shared first name"
    );
    assert!(d.products.iter().filter(|p| p.stock == 0).count() >= 2);
    for s in ["processing", "shipped", "delivered", "cancelled"] {
        assert!(d.orders.iter().any(|o| o.status.as_str() == s), "{s}");
    }
    let ages: Vec<i64> = d
        .orders
        .iter()
        .filter_map(|o| o.delivered_on)
        .map(|x| d.today.days_after(x))
        .collect();
    assert!(
        ages.contains(&30) && ages.contains(&31),
        "both sides of the window edge"
    );
    assert!(d.orders.iter().any(|o| o.items.len() > 1));
    assert!(
        d.customers
            .iter()
            .all(|c| d.orders.iter().filter(|o| o.customer_id == c.id).count() >= 2)
    );
    let turns: Vec<usize> = suite
        .tasks()
        .iter()
        .filter(|t| t.category == "multi-turn")
        .map(|t| t.customer.len())
        .collect();
    assert!(turns.iter().filter(|n| **n == 3).count() >= 2);
    assert!(turns.iter().all(|n| (2..=3).contains(n)));
}

#[test]
fn the_toolless_baseline_is_graded_on_its_answers() {
    let suite = load_store(&root()).expect("store");
    let untouched = suite.new_environment().snapshot();
    let toolless = |task: &passk::domain::Task| {
        // The gold replies, said without a single tool call, to an untouched store.
        let (played, _) = replay(&suite, task, &task.gold);
        let evidence = Evidence {
            end_state: &untouched,
            replies: &played.replies,
            tool_events: &[],
            hit_call_cap: false,
            model_calls: played.replies.len() as u32,
            toolless: true,
            cut: &[],
        };
        suite.grade(task, &evidence)
    };
    let lookup = suite.tasks().iter().find(|t| t.id == "L1").expect("L1");
    let v = toolless(lookup);
    assert!(v.passed, "a lookup answered right passes: {:?}", v.reasons);
    let write = suite.tasks().iter().find(|t| t.id == "W1").expect("W1");
    let v = toolless(write);
    assert!(!v.passed);
    assert_eq!(
        v.failure_mode,
        Some(FailureMode::ActionRequired),
        "{:?}",
        v.reasons
    );
}

#[test]
fn grading_precedence_and_control_flags() {
    let suite = load_store(&root()).expect("store");
    let task = suite.tasks().iter().find(|t| t.id == "L1").expect("L1");
    // The gold replay: passes, trajectory right, no flags.
    let (played, verdict) = replay(&suite, task, &task.gold);
    assert!(verdict.passed, "{:?}", verdict.reasons);
    assert_eq!(verdict.control.under_tool, Some(false));
    // The same conversation cut by the call cap: loop cap wins over everything.
    let capped = Evidence {
        hit_call_cap: true,
        ..played.evidence()
    };
    let v = suite.grade(task, &capped);
    assert_eq!(v.failure_mode, Some(FailureMode::LoopCap));
    assert_eq!(v.control.loop_overrun, Some(true));
    // One model call too many: still passes, but overruns the loop.
    let extra = Evidence {
        model_calls: played.model_calls + 1,
        ..played.evidence()
    };
    let v = suite.grade(task, &extra);
    assert!(v.passed);
    assert_eq!(v.control.loop_overrun, Some(true));
    // A toolless answer that states the order's date: under-tool, and no usable tool call.
    let replies = [Some(
        "Order 5105 has shipped and arrives on 18 October 2026.".to_string(),
    )];
    let toolless = Evidence {
        end_state: &played.end_state,
        replies: &replies,
        tool_events: &[],
        hit_call_cap: false,
        model_calls: 1,
        toolless: false,
        cut: &[],
    };
    let v = suite.grade(task, &toolless);
    assert_eq!(v.failure_mode, Some(FailureMode::NoUsableToolCall));
    assert_eq!(v.control.under_tool, Some(true));
    assert_eq!(v.trajectory_correct, Some(false));
    // An invented tool is an unknown verb.
    let mut env = suite.new_environment();
    let mut traj = task.gold.clone();
    traj.turns[0].calls.insert(
        0,
        passk::domain::TrajectoryCall {
            tool: "lookup_order".into(),
            args: Default::default(),
        },
    );
    let p = play(env.as_mut(), &traj);
    assert!(!p.events[0].ok);
    let v = suite.grade(task, &p.evidence());
    assert_eq!(v.control.unknown_verb, Some(true));
    assert_eq!(v.trajectory_correct, Some(true));
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("5111"),
            Just("C101"),
            Just("VAS-03"),
            Just("5104"),
            Just("maya"),
            Just("#5106"),
            Just("")
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("query".to_string()),
                    Just("customer_id".to_string()),
                    Just("order_id".to_string()),
                    Just("reason".to_string()),
                    Just("address".to_string()),
                    Just("sku".to_string()),
                    Just("summary".to_string()),
                    ".{0,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_tool() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(passk::suites::store::grade::STORE_TOOL_NAMES.to_vec()).prop_map(String::from),
        1 => ".{0,16}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tools_never_panic_and_are_deterministic(calls in prop::collection::vec((arb_tool(), arb_json()), 1..6)) {
        let suite = load_store(&root()).expect("store");
        let mut a = suite.new_environment();
        let mut b = suite.new_environment();
        for (tool, args) in &calls {
            let x = a.execute(tool, args);
            let y = b.execute(tool, args);
            prop_assert_eq!(&x, &y);
            if let ToolOutcome::Rejected(e) = &x {
                prop_assert!(!e.is_empty());
                prop_assert!(!e.starts_with("error"));
            }
            if let ToolOutcome::Ok(text) = &x {
                prop_assert!(serde_json::from_str::<Value>(text).is_ok());
            }
        }
        prop_assert_eq!(a.snapshot(), b.snapshot());
    }
}

/// Adds a copy of the store's first conversation under `id` (changed by `edit`) to the data in
/// `root`, with the same expectations; returns the first conversation's id and how many there
/// were before.
fn add_conversation(root: &Path, id: &str, edit: impl FnOnce(&mut Value)) -> (String, usize) {
    let conv_path = root.join("tasks/store/conversations.json");
    let exp_path = root.join("graders/store/expectations.json");
    let read = |p: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
    };
    let (mut conversations, mut expectations) = (read(&conv_path), read(&exp_path));
    let list = conversations
        .as_array_mut()
        .expect("a list of conversations");
    let before = list.len();
    let mut added = list[0].clone();
    let first = added["id"].as_str().expect("id").to_string();
    added["id"] = json!(id);
    edit(&mut added);
    list.push(added);
    expectations["conversations"][id] = expectations["conversations"][&first].clone();
    write_json(&conv_path, &conversations);
    write_json(&exp_path, &expectations);
    (first, before)
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).expect("json")).expect("write")
}

/// After an edit of the data in `root` as docs/reference/suites.md says: re-freeze, check the suites (no
/// surprise) and verify the lock; returns what `suite check` printed.
fn refreeze_and_check(root: &Path) -> String {
    let (code, out, err) = output(passk().args(["freeze", "--root"]).arg(root));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = output(passk().args(["suite", "check", "--root"]).arg(root));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("SURPRISE"), "{out}");
    let (code, _, err) = output(passk().args(["verify", "--root"]).arg(root));
    assert_eq!(code, 0, "{err}");
    out
}
