//! One conversation trial (experiment.md section 6), and one standalone router call.
//!
//! Per customer message: call the model, execute every tool call it made in order, send each result
//! back as a `tool` message, and repeat until the model answers without a tool call or the turn
//! reaches the call cap. Tool calls come natively or as text (recovered by `wire::tool_call`); a
//! call-shaped text that does not parse is answered with the expected shape and counts as rejected.
//! A call that fails for good on the wire ends the conversation as a transport or protocol failure:
//! it is never graded, so it can never be blamed on the model.

use crate::runner::record::{
    CallRecord, ConversationRecord, Mode, Node, Outcome, RouterRecord, SCHEMA_VERSION, Status,
};
use crate::runner::settings::RunSettings;
use crate::runner::telemetry::Telemetry;
use crate::seed::CallSeed;
use crate::suite::{Domain, Evidence, RouterMessage, RouterSuite, Task, ToolOutcome};
use crate::trace::{CallFormat, ToolEvent, Verdict};
use crate::wire::api::{ChatMessage, ChatOptions, ChatRequest, ChatResponse};
use crate::wire::client::Client;
use crate::wire::outcome::CallOutcome;
use crate::wire::tool_call;
use serde_json::Value;
use std::time::Instant;

/// Prefix of a rejected tool result as the model sees it.
pub const ERROR_PREFIX: &str = "error: ";

/// Everything needed to play trials of one model.
pub struct Player<'a> {
    /// The Ollama (or stub) client.
    pub client: &'a Client,
    /// Model tag.
    pub model: &'a str,
    /// Resolved settings.
    pub settings: &'a RunSettings,
    /// GPU and server telemetry.
    pub telemetry: &'a Telemetry,
    /// Digest stamped on every record.
    pub grader_digest: &'a str,
    /// The router, when it runs in front of the agent.
    pub router_in_front: Option<&'a RouterSuite>,
}

/// Outcome of one model call: its record and, when ok, the response.
struct Called {
    record: CallRecord,
    response: Option<ChatResponse>,
}

impl Player<'_> {
    async fn call(&self, request: &ChatRequest, node: Node, turn: u32, step: u32) -> Called {
        let mark = self.telemetry.begin();
        let (result, ttft_s) = if request.stream {
            let streamed = self.client.chat_stream(request).await;
            (streamed.result, streamed.first_token_s)
        } else {
            (self.client.chat(request).await, None)
        };
        let mut record = CallRecord::new(node, turn, step);
        record.seed = request.options.seed;
        record.started_unix_ms = Some(result.started_unix_ms);
        record.wall_s = Some(result.wall_s);
        record.outcome = result.outcome;
        record.attempts = result.attempts;
        record.timeout_s = Some(self.settings.timeout_s);
        record.ttfb_s = result.ttfb_s;
        record.ttft_s = ttft_s;
        record.gpu = self.telemetry.finish(mark);
        let response = result
            .response
            .filter(|_| result.outcome == CallOutcome::Ok);
        if let Some(r) = &response {
            record.timings = r.timings.clone();
            record.truncated = r.timings.done_reason.as_deref() == Some("length");
        }
        Called { record, response }
    }

    fn options(&self, temperature: f64, num_predict: i64, seed: i64) -> ChatOptions {
        ChatOptions {
            temperature: Some(temperature),
            seed: Some(seed),
            num_ctx: Some(self.settings.num_ctx),
            num_predict: Some(num_predict),
            ..ChatOptions::default()
        }
    }

    fn request(
        &self,
        messages: Vec<ChatMessage>,
        tools: Option<Vec<Value>>,
        options: ChatOptions,
    ) -> ChatRequest {
        ChatRequest {
            model: self.model.to_string(),
            messages,
            tools,
            stream: self.settings.stream,
            options,
            keep_alive: Some(self.settings.keep_alive.clone()),
        }
    }

    /// Classifies one customer message with the router; returns the call and the label.
    async fn route(
        &self,
        router: &RouterSuite,
        text: &str,
        seed: CallSeed,
        turn: u32,
    ) -> (CallRecord, Option<String>, String) {
        let messages = vec![ChatMessage::system(&router.prompt), ChatMessage::user(text)];
        let options = self.options(
            self.settings.router_temperature,
            self.settings.router_num_predict,
            seed.encode(),
        );
        let request = self.request(messages, None, options);
        let mut called = self.call(&request, Node::Router, turn, 0).await;
        let reply = called
            .response
            .as_ref()
            .and_then(|r| r.message.as_ref())
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let predicted = router.parse_label(&reply);
        called.record.predicted = predicted.clone();
        (called.record, predicted, reply)
    }

    /// Plays one standalone router call.
    pub async fn play_router(
        &self,
        router: &RouterSuite,
        message: &RouterMessage,
        trial: u32,
    ) -> RouterRecord {
        let seed = CallSeed {
            base: self.settings.base_seed,
            trial,
            turn: 0,
            step: 0,
        };
        let (call, predicted, reply) = self.route(router, &message.text, seed, 0).await;
        let outcome =
            wire_outcome(call.outcome).unwrap_or(if predicted.as_deref() == Some(&message.label) {
                Outcome::Pass
            } else {
                Outcome::ModelFail
            });
        RouterRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: self.grader_digest.to_string(),
            model: self.model.to_string(),
            index: message.index,
            trial,
            label: message.label.clone(),
            correct: outcome == Outcome::Pass,
            predicted,
            raw: reply.chars().take(200).collect(),
            temperature: Some(self.settings.router_temperature),
            outcome,
            call,
            imported: false,
        }
    }

    /// Plays one conversation trial of `task` in `mode` and grades it.
    pub async fn play(
        &self,
        domain: &dyn Domain,
        task: &Task,
        trial: u32,
        call_cap: u32,
        mode: Mode,
    ) -> ConversationRecord {
        let started = Instant::now();
        let toolless = mode == Mode::Toolless;
        let tools = domain.tools(self.settings.tool_docs).to_vec();
        let tool_names: Vec<String> = tools
            .iter()
            .filter_map(|t| {
                t.pointer("/function/name")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .collect();
        let mut env = domain.new_environment();
        let mut messages = vec![ChatMessage::system(domain.system_prompt())];
        let mut calls: Vec<CallRecord> = Vec::new();
        let mut events: Vec<ToolEvent> = Vec::new();
        let mut replies: Vec<Option<String>> = Vec::new();
        let mut status = Status::Ok;
        let mut aborted: Option<Outcome> = None;
        let mut last_prompt: Option<u64> = None;

        'turns: for (turn, text) in task.customer.iter().enumerate() {
            let turn = turn as u32;
            if let Some(router) = self.router_in_front {
                let seed = CallSeed {
                    base: self.settings.base_seed,
                    trial,
                    turn,
                    step: 0,
                };
                let (call, predicted, _) = self.route(router, text, seed, turn).await;
                let failed = wire_outcome(call.outcome);
                calls.push(call);
                if let Some(o) = failed {
                    aborted = Some(o);
                    break 'turns;
                }
                let label = predicted.unwrap_or_else(|| "unknown".into());
                messages.push(ChatMessage::system(format!("intent router: {label}")));
            }
            messages.push(ChatMessage::user(text));
            let mut step = 0u32;
            loop {
                if step >= call_cap {
                    status = Status::LoopCap;
                    replies.push(None);
                    break 'turns;
                }
                let seed = CallSeed {
                    base: self.settings.base_seed,
                    trial,
                    turn,
                    step,
                }
                .encode();
                let options =
                    self.options(self.settings.temperature, self.settings.num_predict, seed);
                let request = self.request(
                    messages.clone(),
                    (!toolless).then(|| tools.clone()),
                    options,
                );
                let mut called = self.call(&request, Node::Orchestrator, turn, step).await;
                if let Some(o) = wire_outcome(called.record.outcome) {
                    calls.push(called.record);
                    aborted = Some(o);
                    break 'turns;
                }
                let message = called.response.and_then(|r| r.message).unwrap_or_default();
                if let Some(prompt) = called.record.timings.prompt_eval_count {
                    called.record.context_overflow =
                        prompt >= self.settings.num_ctx || last_prompt.is_some_and(|p| prompt < p);
                    last_prompt = Some(prompt);
                }
                let extracted = if toolless {
                    Vec::new()
                } else {
                    tool_call::extract(&message, &tool_names)
                };
                called.record.tool_calls = extracted.len() as u32;
                called.record.call_format = summarise_format(extracted.iter().map(|c| c.format));
                calls.push(called.record);
                messages.push(assistant_echo(&message));
                if extracted.is_empty() {
                    replies.push(Some(message.content.clone()));
                    break;
                }
                for call in extracted {
                    let (ok, content, error) = match (&call.format, &call.error) {
                        (CallFormat::Malformed, hint) => {
                            let hint = hint.clone().unwrap_or_else(|| "malformed tool call".into());
                            (false, format!("{ERROR_PREFIX}{hint}"), Some(hint))
                        }
                        _ => match env.execute(&call.name, &call.arguments) {
                            ToolOutcome::Ok(text) => (true, text, None),
                            ToolOutcome::Rejected(e) => {
                                (false, format!("{ERROR_PREFIX}{e}"), Some(e))
                            }
                        },
                    };
                    events.push(ToolEvent {
                        turn,
                        step,
                        tool: call.name.clone(),
                        args: call.arguments.clone(),
                        ok,
                        error,
                        format: Some(call.format),
                    });
                    messages.push(ChatMessage::tool(
                        call.name.clone(),
                        call.id.clone(),
                        content,
                    ));
                }
                step += 1;
            }
        }

        let end_state = env.snapshot();
        let model_calls = calls
            .iter()
            .filter(|c| c.node == Node::Orchestrator)
            .count() as u32;
        let (outcome, verdict) = match aborted {
            Some(o) => {
                status = Status::Aborted;
                (
                    o,
                    Verdict {
                        passed: false,
                        reasons: vec![format!(
                            "not graded: the conversation ended on a {} failure",
                            describe(o)
                        )],
                        ..Verdict::default()
                    },
                )
            }
            None => {
                let evidence = Evidence {
                    end_state: &end_state,
                    replies: &replies,
                    tool_events: &events,
                    hit_call_cap: status == Status::LoopCap,
                    model_calls,
                    toolless,
                };
                let verdict = domain.grade(task, &evidence);
                (
                    if verdict.passed {
                        Outcome::Pass
                    } else {
                        Outcome::ModelFail
                    },
                    verdict,
                )
            }
        };
        let transcript = messages
            .iter()
            .filter_map(|m| serde_json::to_value(m).ok())
            .collect();
        ConversationRecord {
            schema_version: SCHEMA_VERSION,
            grader_digest: self.grader_digest.to_string(),
            suite: domain.name().to_string(),
            task: task.id.clone(),
            category: task.category.clone(),
            model: self.model.to_string(),
            trial,
            call_cap,
            mode,
            router_in_front: self.router_in_front.is_some(),
            status,
            outcome,
            calls,
            tool_events: events,
            replies,
            transcript,
            end_state,
            verdict,
            wall_s: started.elapsed().as_secs_f64(),
            imported: false,
        }
    }
}

/// The conversation outcome a failed call forces, `None` for an ok call.
fn wire_outcome(outcome: CallOutcome) -> Option<Outcome> {
    match outcome {
        CallOutcome::Ok => None,
        CallOutcome::Transport => Some(Outcome::TransportFail),
        CallOutcome::Protocol => Some(Outcome::ProtocolFail),
    }
}

fn describe(o: Outcome) -> &'static str {
    match o {
        Outcome::TransportFail => "transport",
        Outcome::ProtocolFail => "protocol",
        Outcome::Pass | Outcome::ModelFail => "model",
    }
}

/// The format of a reply's calls: native if any was native, else text, else malformed.
fn summarise_format(formats: impl Iterator<Item = CallFormat>) -> Option<CallFormat> {
    formats.min()
}

/// The assistant message as it goes back into the history: what the model said, with its native
/// tool calls kept (ids and indexes included) so the next request matches what the server sent.
fn assistant_echo(message: &ChatMessage) -> ChatMessage {
    ChatMessage {
        role: "assistant".into(),
        content: message.content.clone(),
        tool_calls: message.tool_calls.clone(),
        ..ChatMessage::default()
    }
}
