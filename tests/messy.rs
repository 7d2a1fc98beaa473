//! Messy model output through `passk run` against the stub over loopback, plain and streamed: each
//! `messy-<shape>` model writes the conversation's first call in one shape real models emit, and
//! the records say what passk read, ran, rejected and kept (docs/reference/metrics.md, "Text tool calls").

use crate::util::{self, Stub, load, output, passk};
use passk::analysis::figures::behaviour::behaviour;
use passk::runner::agent_loop::TOOL_CALLS_PER_REPLY;
use passk::runner::record::{ConversationRecord, NotExecuted, Outcome, UNEXECUTED_KEPT};
use passk::trace::CallFormat;
use passk::wire::depth::TOO_DEEP_KEY;
use passk_stub::MessyShape;
use passk_stub::messy::{FLOOD_BYTES, REPEATS};
use std::collections::BTreeMap;

/// Plays task L1 (find_customer, then get_order 5105) once with every messy model.
fn play_all(stream: bool) -> BTreeMap<MessyShape, ConversationRecord> {
    let stub = Stub::start(Vec::new(), |_| {});
    let tmp = util::tempdir();
    let out = tmp.path().join("run");
    let models: Vec<String> = MessyShape::ALL
        .iter()
        .map(|s| format!("messy-{}", s.name()))
        .collect();
    let mut args: Vec<String> = [
        "run",
        "--no-progress",
        "--suite",
        "store",
        "--tasks",
        "L1",
        "--trials",
        "1",
        // The stub cuts a reply at num_predict as Ollama does; the flood is a megabyte long.
        "--num-predict=-1",
        "--host",
        &stub.host(),
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--models".into(), models.join(",")]);
    args.extend(["--out".into(), out.display().to_string()]);
    if stream {
        args.push("--stream".into());
    }
    let (code, _, stderr) = output(passk().args(&args));
    assert_eq!(code, 0, "{stderr}");
    load(&out)
        .conversations
        .into_iter()
        .map(|c| {
            let shape =
                MessyShape::from_name(c.model.trim_start_matches("messy-")).expect("a messy model");
            (shape, c)
        })
        .collect()
}

/// The tool events of the conversation's first model call.
fn first_step(c: &ConversationRecord) -> Vec<&passk::trace::ToolEvent> {
    c.tool_events
        .iter()
        .filter(|e| e.turn == 0 && e.step == 0)
        .collect()
}

fn check(stream: bool) {
    let played = play_all(stream);
    assert_eq!(played.len(), MessyShape::ALL.len());
    for (shape, c) in &played {
        let what = format!("{shape:?} (stream {stream})");
        assert_eq!(c.outcome, Outcome::Pass, "{what}: {:?}", c.verdict.reasons);
        assert!(
            c.tool_events.iter().all(|e| e.tool != "cancel_order"),
            "{what}"
        );
        let first = first_step(c);
        let call = &c.calls[0];
        match shape {
            MessyShape::DeepArguments => {
                assert_eq!(first.len(), 1, "{what}");
                assert!(!first[0].ok, "{what}");
                assert!(
                    first[0]
                        .error
                        .as_deref()
                        .is_some_and(|e| e.contains("nested"))
                );
                assert!(first[0].args.to_string().contains(TOO_DEEP_KEY), "{what}");
            }
            MessyShape::ArrayArgument => {
                assert_eq!(first.len(), 1, "{what}");
                assert!(!first[0].ok && first[0].args["query"].is_array(), "{what}");
                let b = behaviour(&[c], &[]);
                assert_eq!((b.rejected_calls, b.schema_copy.calls), (1, 0), "{what}");
            }
            MessyShape::BesideNative => {
                assert_eq!(first.len(), 1, "{what}");
                assert_eq!(call.call_format, Some(CallFormat::Native), "{what}");
                assert_eq!(call.unexecuted_calls, 1, "{what}");
                assert_eq!(call.unexecuted[0].reason, NotExecuted::BesideNative);
                assert_eq!(call.unexecuted[0].tool, "find_customer");
            }
            MessyShape::Repeated | MessyShape::Flood => {
                let made = if *shape == MessyShape::Repeated {
                    REPEATS
                } else {
                    let one = c.transcript[2].to_value()["content"]
                        .as_str()
                        .expect("the reply")
                        .to_string();
                    assert!(one.len() >= FLOOD_BYTES, "{what}");
                    one.lines().count()
                };
                assert_eq!(first.len(), TOOL_CALLS_PER_REPLY, "{what}");
                assert_eq!(call.tool_calls as usize, TOOL_CALLS_PER_REPLY, "{what}");
                assert_eq!(
                    call.unexecuted_calls as usize,
                    made - TOOL_CALLS_PER_REPLY,
                    "{what}"
                );
                assert_eq!(
                    call.unexecuted.len(),
                    (made - TOOL_CALLS_PER_REPLY).min(UNEXECUTED_KEPT),
                    "{what}"
                );
                assert!(
                    call.unexecuted
                        .iter()
                        .all(|u| u.reason == NotExecuted::OverCap)
                );
                assert_eq!(behaviour(&[c], &[]).unexecuted_calls, made - 8, "{what}");
            }
            MessyShape::HarmonyBackToBack => {
                assert_eq!(first.len(), 2, "{what}: {first:?}");
                assert!(
                    first.iter().all(|e| e.tool == "find_customer" && e.ok),
                    "{what}"
                );
                assert_eq!(call.unexecuted_calls, 0, "{what}");
            }
            MessyShape::OptionsList | MessyShape::PastMention => {
                // The writes offered, or said to have run already, are recorded; the lookup made
                // now runs.
                assert_eq!(first.len(), 1, "{what}: {first:?}");
                assert_eq!(
                    (first[0].tool.as_str(), first[0].ok),
                    ("find_customer", true)
                );
                let (reason, tools) = if *shape == MessyShape::OptionsList {
                    (NotExecuted::Offered, vec!["cancel_order", "request_return"])
                } else {
                    (NotExecuted::Past, vec!["cancel_order"])
                };
                let got: Vec<&str> = call.unexecuted.iter().map(|u| u.tool.as_str()).collect();
                assert_eq!(got, tools, "{what}");
                assert!(
                    call.unexecuted.iter().all(|u| u.reason == reason),
                    "{what}: {:?}",
                    call.unexecuted
                );
            }
            MessyShape::Harmony | MessyShape::HarmonyStripped => {
                // The call in the analysis channel is considered; the commentary call runs.
                assert_eq!(first.len(), 1, "{what}: {first:?}");
                assert_eq!(first[0].format, Some(CallFormat::Text), "{what}");
                assert_eq!(
                    (first[0].tool.as_str(), first[0].ok),
                    ("find_customer", true)
                );
                assert_eq!(call.unexecuted_calls, 1, "{what}");
                assert_eq!(call.unexecuted[0].reason, NotExecuted::Reasoning, "{what}");
                assert_eq!(call.unexecuted[0].tool, "cancel_order", "{what}");
            }
            MessyShape::ThinkMention => {
                // The call in the `<think>` block and the one in `thinking` are recorded as
                // considered; only the call after the reasoning runs.
                assert_eq!(first.len(), 1, "{what}: {first:?}");
                assert_eq!(
                    (first[0].tool.as_str(), first[0].ok),
                    ("find_customer", true)
                );
                assert_eq!(call.unexecuted_calls, 2, "{what}");
                assert!(
                    call.unexecuted
                        .iter()
                        .all(|u| u.reason == NotExecuted::Reasoning && u.tool == "cancel_order"),
                    "{what}: {:?}",
                    call.unexecuted
                );
            }
            _ => {
                // Every other shape is read as the gold call, written into the text.
                assert_eq!(first.len(), 1, "{what}: {first:?}");
                assert_eq!(first[0].tool, "find_customer", "{what}");
                assert!(first[0].ok, "{what}: {:?}", first[0]);
                assert_eq!(first[0].format, Some(CallFormat::Text), "{what}");
                assert_eq!(call.unexecuted_calls, 0, "{what}");
                assert_eq!(behaviour(&[c], &[]).rejected_calls, 0, "{what}");
            }
        }
        if *shape == MessyShape::ThinkMention {
            assert!(
                call.thinking
                    .as_deref()
                    .is_some_and(|t| t.contains("cancel_order")),
                "{what}: the thinking field is recorded"
            );
        } else {
            assert_eq!(call.thinking, None, "{what}");
        }
    }
}

#[test]
fn messy_shapes_are_read_capped_and_recorded() {
    check(false);
}

#[test]
fn messy_shapes_are_read_the_same_when_streamed() {
    check(true);
}
