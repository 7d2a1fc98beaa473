//! Text tool-call recovery on a labelled corpus of replies (`tests/data/replies.toml`): each reply
//! cites its source and says what a careful reader takes from it (the calls made, the calls written
//! but not made and why, a malformed call). Replies the rule misreads are marked so, and the error
//! rates over the corpus are the ones docs/reference/metrics.md states ("Text tool calls").

use passk::wire::chat::Message;
use passk::wire::tool_call::{Withheld, extract_all};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// The store suite's tools; the writes among them.
const TOOLS: [&str; 8] = [
    "find_customer",
    "get_order",
    "list_orders",
    "search_products",
    "cancel_order",
    "update_address",
    "request_return",
    "create_ticket",
];
const WRITES: [&str; 4] = [
    "cancel_order",
    "update_address",
    "request_return",
    "create_ticket",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    reply: Vec<Reply>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    id: String,
    /// Which reading rule the reply exercises (`harness`, `duplicates`, `reasoning`, `prose`,
    /// `format`).
    item: String,
    source: String,
    content: String,
    #[serde(default)]
    thinking: Option<String>,
    /// The calls a careful reader says the reply makes, in order.
    #[serde(default)]
    made: Vec<Made>,
    /// The calls written but not made, with why, in any order.
    #[serde(default)]
    withheld: Vec<Held>,
    /// The one malformed call, when the reply attempts a call that cannot be read.
    #[serde(default)]
    malformed: Option<Malformed>,
    /// Set where the rule misreads the reply: what it gets wrong.
    #[serde(default)]
    misread: Option<String>,
    /// A reply of the held-out part: written before the rule was built on the others, its figures
    /// stated apart.
    #[serde(default)]
    held_out: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Made {
    tool: String,
    args: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Held {
    tool: String,
    why: Withheld,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Malformed {
    tool: String,
    /// A part of the error text the model is sent.
    says: String,
}

fn corpus() -> Vec<Reply> {
    let path = crate::util::root().join("tests/data/replies.toml");
    let text = std::fs::read_to_string(&path).expect("the corpus");
    toml::from_str::<Corpus>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .reply
}

/// What the rule read in one reply.
struct Reading {
    executed: Vec<(String, Value)>,
    withheld: BTreeSet<(String, Withheld)>,
    malformed: Vec<(String, String)>,
}

fn read(r: &Reply) -> Reading {
    read_message(&r.content, r.thinking.clone())
}

fn read_message(content: &str, thinking: Option<String>) -> Reading {
    let known: Vec<String> = TOOLS.map(String::from).to_vec();
    let mut message = Message::assistant(content);
    message.thinking = thinking;
    let all = extract_all(&message, &known);
    let (malformed, executed): (Vec<_>, Vec<_>) = all
        .calls
        .into_iter()
        .partition(|c| c.name.starts_with(passk::wire::tool_call::MALFORMED_PREFIX));
    Reading {
        executed: executed
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect(),
        withheld: all
            .withheld
            .into_iter()
            .map(|(c, why)| (c.name, why))
            .collect(),
        malformed: malformed
            .into_iter()
            .map(|c| (c.name, c.error.unwrap_or_default()))
            .collect(),
    }
}

/// Calls executed that the reader says were not made, and calls made that were not executed.
fn errors(r: &Reply, got: &Reading) -> (Vec<String>, Vec<String>) {
    let want: Vec<(String, Value)> = r
        .made
        .iter()
        .map(|m| (m.tool.clone(), m.args.clone()))
        .collect();
    let false_exec = got
        .executed
        .iter()
        .filter(|c| !want.contains(c))
        .map(|c| c.0.clone())
        .collect();
    let missed = want
        .iter()
        .filter(|c| !got.executed.contains(c))
        .map(|c| c.0.clone())
        .collect();
    (false_exec, missed)
}

#[test]
fn every_reply_reads_as_its_label_says() {
    let replies = corpus();
    assert!(
        replies.len() >= 40,
        "the corpus has {} replies",
        replies.len()
    );
    let mut ids = BTreeSet::new();
    for r in &replies {
        assert!(ids.insert(r.id.clone()), "{}: id twice", r.id);
        assert!(!r.source.trim().is_empty(), "{}: no source", r.id);
        let got = read(r);
        let (false_exec, missed) = errors(r, &got);
        let want: BTreeSet<(String, Withheld)> =
            r.withheld.iter().map(|h| (h.tool.clone(), h.why)).collect();
        if r.misread.is_some() {
            assert!(
                !false_exec.is_empty() || !missed.is_empty() || got.withheld != want,
                "{}: marked misread but read right",
                r.id
            );
            continue;
        }
        assert_eq!(
            (false_exec, missed),
            (vec![], vec![]),
            "{}: executed {:?}",
            r.id,
            got.executed
        );
        assert_eq!(got.withheld, want, "{}", r.id);
        match &r.malformed {
            Some(m) => {
                assert_eq!(got.malformed.len(), 1, "{}: {:?}", r.id, got.malformed);
                let (name, error) = &got.malformed[0];
                assert_eq!(
                    name,
                    &format!("{}{}", passk::wire::tool_call::MALFORMED_PREFIX, m.tool),
                    "{}",
                    r.id
                );
                assert!(error.contains(&m.says), "{}: {error}", r.id);
            }
            None => assert_eq!(got.malformed, vec![], "{}", r.id),
        }
    }
}

#[test]
fn no_reply_read_as_no_call_executes_a_write() {
    for r in corpus() {
        let (false_exec, _) = errors(&r, &read(&r));
        let writes: Vec<&String> = false_exec
            .iter()
            .filter(|t| WRITES.contains(&t.as_str()))
            .collect();
        assert!(writes.is_empty(), "{}: executed {writes:?}", r.id);
    }
}

/// The error rates of one part of the corpus, as docs/reference/metrics.md states them: false
/// executions of writes and of reads, and calls made that were not executed.
fn figures(replies: &[&Reply]) -> String {
    let (mut writes, mut reads, mut missed, mut calls, mut no_calls) = (0, 0, 0, 0, 0);
    for r in replies {
        let (f, m) = errors(r, &read(r));
        writes += f.iter().filter(|t| WRITES.contains(&t.as_str())).count();
        reads += f.iter().filter(|t| !WRITES.contains(&t.as_str())).count();
        missed += m.len();
        calls += r.made.len();
        no_calls += usize::from(r.made.is_empty());
    }
    format!(
        "{} labelled replies ({calls} calls made, {no_calls} replies making none): \
         writes executed that were not made {writes}, reads executed that were not made {reads}, \
         calls made but not executed {missed}",
        replies.len()
    )
}

/// Measures the rule both ways on the corpus's replies of calls in prose, and apart on the
/// held-out part (written before the rule was built); `--nocapture` prints the figures.
#[test]
fn the_embedded_call_rule_has_the_error_rates_the_docs_state() {
    let replies = corpus();
    let designed: Vec<&Reply> = replies
        .iter()
        .filter(|r| r.item == "prose" && !r.held_out)
        .collect();
    let held_out: Vec<&Reply> = replies.iter().filter(|r| r.held_out).collect();
    assert!(held_out.len() >= 15, "{} held-out replies", held_out.len());
    let docs = std::fs::read_to_string(crate::util::root().join("docs/reference/metrics.md"))
        .expect("docs");
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    println!("Held out: {}", figures(&held_out));
    for stated in [
        format!("Designed on: {}", figures(&designed)),
        format!("Held out: {}", figures(&held_out)),
    ] {
        println!("{stated}");
        assert!(
            docs.contains(&stated),
            "docs/reference/metrics.md should state: {stated}"
        );
    }
}

/// The final answers of the reference experiment's two runs (qwen2.5-coder 3b and 7b through
/// Ollama, the store's tasks): each was passed to the customer as the answer, and none makes a
/// call, though some echo a made-up `<tool_response>`, a JSON record, or name a tool in prose. The
/// rule executes none of them and reads no malformed call in them, as docs/reference/metrics.md states.
/// Skipped where `../shared/reference` is absent.
#[test]
fn the_reference_final_answers_make_no_call() {
    let Some(dir) = crate::util::shared_reference() else {
        crate::util::skip(crate::util::NO_REFERENCE);
        return;
    };
    let (mut replies, mut misread) = (0, Vec::new());
    for run in ["results", "results-run2"] {
        let path = dir.join(run).join("orchestrator.jsonl");
        let text = std::fs::read_to_string(&path).expect("the reference records");
        for (line, record) in text.lines().enumerate() {
            let record: Value = serde_json::from_str(record)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), line + 1));
            let answers = record["replies"].as_array().into_iter().flatten();
            for (k, answer) in answers.filter_map(Value::as_str).enumerate() {
                replies += 1;
                let got = read_message(answer, None);
                if !got.executed.is_empty() || !got.malformed.is_empty() {
                    misread.push(format!("{run}:{}:{k}: {answer}", line + 1));
                }
            }
        }
    }
    assert_eq!(misread, Vec::<String>::new());
    let stated = format!("{replies} final answers of the reference experiment");
    let docs = std::fs::read_to_string(crate::util::root().join("docs/reference/metrics.md"))
        .expect("docs");
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        docs.contains(&stated),
        "docs/reference/metrics.md should state: {stated}"
    );
}
