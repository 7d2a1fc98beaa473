//! Turns run events into indicatif bars on stderr (one per model plus an overall bar with ETA, live
//! pass counts, retries as they happen, wire failures, calls per second and the trials in flight; with several
//! servers, one line per server with its trials in flight, done and sent back), or into plain log
//! lines when stderr is not a terminal, when `TERM=dumb` is set, or with `--no-progress`.
//! `NO_COLOR` keeps the bars and drops their colour.

use crate::runner::event::{EventSink, RunEvent};
use crate::runner::record::{Outcome, TrialKey};
use crate::wire::outcome::CallOutcome;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Whether bars should be drawn: stderr is a terminal that can redraw, and `--no-progress` is off.
pub fn bars_wanted(no_progress: bool) -> bool {
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    !no_progress && !dumb && std::io::stderr().is_terminal()
}

/// Whether output may be coloured (`NO_COLOR` unset, see no-color.org).
fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Graded trials and their passes.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Counts {
    passes: u64,
    graded: u64,
}

impl Counts {
    fn add(&mut self, outcome: Outcome) {
        if outcome.is_graded() {
            self.graded += 1;
            self.passes += u64::from(outcome == Outcome::Pass);
        }
    }
}

/// One server's trials: in flight now, written, and sent back to the queue.
#[derive(Debug, Default, Clone, PartialEq)]
struct ServerTally {
    url: String,
    in_flight: u64,
    done: u64,
    requeued: u64,
    left: bool,
}

impl ServerTally {
    /// A server line's message.
    fn message(&self, parallel: u32) -> String {
        let mut parts = Vec::new();
        if self.left {
            parts.push("LEFT THE POOL (not answering)".to_string());
        }
        parts.push(format!("{}/{parallel} in flight", self.in_flight));
        parts.push(format!("{} done", self.done));
        if self.requeued > 0 {
            parts.push(format!("{} sent back to the queue", self.requeued));
        }
        parts.join(" · ")
    }
}

/// A model's finished trials: its conversations and its standalone router messages.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct ModelCounts {
    conversations: Counts,
    router: Counts,
}

/// What the bars say: passes over finished, graded conversations (the router's standalone
/// messages apart), wire failures of finished trials, and whether the server answered; retries
/// as each failed attempt happens; and, per server, the trials in flight.
#[derive(Debug, Default)]
struct Tally {
    conversations: Counts,
    router: Counts,
    by_model: BTreeMap<String, ModelCounts>,
    transport: u64,
    protocol: u64,
    retries: u64,
    calls: u64,
    server_unreachable: bool,
    servers: Vec<ServerTally>,
    parallel: u32,
}

impl Tally {
    /// The tally of server `url` (added when first seen).
    fn server(&mut self, url: &str) -> &mut ServerTally {
        let i = match self.servers.iter().position(|s| s.url == url) {
            Some(i) => i,
            None => {
                self.servers.push(ServerTally {
                    url: url.to_string(),
                    ..ServerTally::default()
                });
                self.servers.len() - 1
            }
        };
        &mut self.servers[i]
    }

    /// A finished trial (its retries were counted as they happened, see [`Tally::attempt_failed`]).
    fn add(&mut self, key: &TrialKey, outcome: Outcome, calls: u32, unreachable: bool) {
        let model = self.by_model.entry(key.model.clone()).or_default();
        if key.suite == ROUTER_SUITE {
            self.router.add(outcome);
            model.router.add(outcome);
        } else {
            self.conversations.add(outcome);
            model.conversations.add(outcome);
        }
        match outcome {
            Outcome::TransportFail => self.transport += 1,
            Outcome::ProtocolFail => self.protocol += 1,
            Outcome::Pass | Outcome::ModelFail | Outcome::ToolServerFail => {}
        }
        self.calls += u64::from(calls);
        self.server_unreachable = unreachable;
    }

    /// A failed attempt of a model call, as it happens: a retry when another attempt follows.
    fn attempt_failed(&mut self, retrying: bool) {
        self.retries += u64::from(retrying);
    }

    /// The overall bar's message.
    fn message(&self, seconds: f64) -> String {
        let mut parts = Vec::new();
        if self.server_unreachable {
            parts.push("SERVER UNREACHABLE".to_string());
        }
        let left = self.servers.iter().filter(|s| s.left).count();
        if left > 0 {
            parts.push(format!(
                "{left} of {} servers left the pool",
                self.servers.len()
            ));
        }
        let c = self.conversations;
        if c.graded > 0 || self.router.graded == 0 {
            parts.push(format!("pass {}/{} conversations", c.passes, c.graded));
        }
        if self.router.graded > 0 {
            parts.push(format!(
                "router {}/{}",
                self.router.passes, self.router.graded
            ));
        }
        // With the server gone, its retries and transport failures say nothing of the model.
        if self.retries > 0 && !self.server_unreachable {
            parts.push(counted(self.retries, "retry", "retries"));
        }
        if self.transport > 0 && !self.server_unreachable {
            parts.push(counted(
                self.transport,
                "transport failure",
                "transport failures",
            ));
        }
        if self.protocol > 0 {
            parts.push(counted(
                self.protocol,
                "protocol failure",
                "protocol failures",
            ));
        }
        parts.push(format!(
            "{:.1} calls/s",
            self.calls as f64 / seconds.max(1e-9)
        ));
        parts.join(" · ")
    }

    /// A model bar's message, over the same trials as the bar's position: its conversations and,
    /// apart, its router messages.
    fn model_message(&self, model: &str) -> String {
        let m = self.by_model.get(model).copied().unwrap_or_default();
        let c = m.conversations;
        let mut text = format!("pass {}/{}", c.passes, c.graded);
        if m.router.graded > 0 {
            text.push_str(&format!(
                " · router {}/{}",
                m.router.passes, m.router.graded
            ));
        }
        text
    }
}

/// How often the server lines are redrawn.
const REDRAW: std::time::Duration = std::time::Duration::from_millis(250);

/// The suite name of standalone router trials.
const ROUTER_SUITE: &str = "router";

/// "1 retry", "2 retries".
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One finished trial as a plain log line.
fn trial_line(
    key: &TrialKey,
    outcome: Outcome,
    calls: u32,
    retries: u32,
    unreachable: bool,
) -> String {
    let word = match outcome {
        Outcome::Pass => "pass",
        Outcome::ModelFail => "fail",
        Outcome::TransportFail if unreachable => "transport failure (server unreachable)",
        Outcome::TransportFail => "transport failure",
        Outcome::ProtocolFail => "protocol failure",
        Outcome::ToolServerFail => "tool server failure",
    };
    let mut detail = counted(u64::from(calls), "call", "calls");
    if retries > 0 {
        detail.push_str(&format!(
            ", {}",
            counted(u64::from(retries), "retry", "retries")
        ));
    }
    format!(
        "{} {} {} trial {}: {word} ({detail})",
        key.model, key.suite, key.task, key.trial
    )
}

/// The stderr sink of `passk run` and `passk calibrate`.
pub struct Progress {
    bars: Option<MultiProgress>,
    overall: ProgressBar,
    models: Mutex<BTreeMap<String, ProgressBar>>,
    servers: Mutex<BTreeMap<String, ProgressBar>>,
    tally: Arc<Mutex<Tally>>,
    started: Instant,
    label: String,
    trial_lines: bool,
    said_no_gpu: AtomicBool,
}

impl Progress {
    /// A sink drawing bars when `bars` is true, else printing plain lines (one per finished trial
    /// when `trial_lines`); `label` prefixes lines.
    pub fn new(bars: bool, label: &str, trial_lines: bool) -> Progress {
        let mp = bars.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let overall = match &mp {
            Some(mp) => mp.add(ProgressBar::new(0).with_style(style("overall"))),
            None => ProgressBar::hidden(),
        };
        Progress {
            bars: mp,
            overall,
            models: Mutex::new(BTreeMap::new()),
            servers: Mutex::new(BTreeMap::new()),
            tally: Arc::new(Mutex::new(Tally::default())),
            started: Instant::now(),
            label: label.to_string(),
            trial_lines,
            said_no_gpu: AtomicBool::new(false),
        }
    }

    fn line(&self, text: &str) {
        match &self.bars {
            Some(mp) => {
                let _ = mp.println(text);
            }
            None => crate::errln!("{text}"),
        }
    }

    /// Clears the bars.
    pub fn finish(&self) {
        self.overall.finish_and_clear();
        for bars in [&self.models, &self.servers] {
            if let Ok(bars) = bars.lock() {
                for bar in bars.values() {
                    bar.finish_and_clear();
                }
            }
        }
    }

    /// One line per server (bars only), drawn on a clock from the tally: a trial ends and the
    /// next one starts within a redraw, so a line drawn on events would always show the moment
    /// between the two.
    fn add_server_lines(&self, hosts: &[String]) {
        if let (Some(mp), Ok(mut lines)) = (&self.bars, self.servers.lock()) {
            for url in hosts {
                let line = mp.add(
                    ProgressBar::new(0)
                        .with_style(server_style(Arc::clone(&self.tally), url.clone())),
                );
                line.set_prefix(url.trim_start_matches("http://").to_string());
                line.enable_steady_tick(REDRAW);
                lines.insert(url.clone(), line);
            }
        }
    }

    /// Counts what happened to a trial on server `url` and redraws the overall message (server
    /// lines redraw on their own). The tally is never held while a bar draws: a server line's
    /// draw takes the tally under indicatif's own lock, so the other order would deadlock.
    fn server_event(&self, url: &str, change: impl FnOnce(&mut ServerTally)) {
        let message = {
            let Ok(mut t) = self.tally.lock() else { return };
            change(t.server(url));
            t.message(self.started.elapsed().as_secs_f64())
        };
        self.overall.set_message(message);
    }
}

/// A server line: its trials in flight, done and sent back, read from the tally at each draw.
fn server_style(tally: Arc<Mutex<Tally>>, url: String) -> ProgressStyle {
    let line = move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
        if let Ok(mut t) = tally.lock() {
            let parallel = t.parallel;
            let _ = w.write_str(&t.server(&url).message(parallel));
        }
    };
    ProgressStyle::with_template("{prefix:>18} {server}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("server", line)
}

fn style(kind: &str) -> ProgressStyle {
    let colour = colour_wanted();
    let bar = match (kind, colour) {
        ("overall", true) => "{bar:30.cyan/blue}",
        (_, true) => "{bar:30.green/white}",
        (_, false) => "{bar:30}",
    };
    let template = if kind == "overall" {
        format!("{{prefix:>18}} [{{elapsed_precise}}] {bar} {{pos}}/{{len}} ETA {{eta}} {{msg}}")
    } else {
        format!("{{prefix:>18}} {bar} {{pos}}/{{len}} {{msg}}")
    };
    ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl EventSink for Progress {
    fn emit(&self, event: RunEvent) {
        match event {
            RunEvent::Scheduled {
                per_model,
                already_done,
                may_stop_early,
            } => self.planned(&per_model, already_done, may_stop_early),
            RunEvent::Servers { hosts, parallel } => self.servers(&hosts, parallel),
            RunEvent::TrialStarted { host } => self.server_event(&host, |s| s.in_flight += 1),
            RunEvent::TrialRequeued { host } => {
                self.server_event(&host, |s| {
                    s.in_flight = s.in_flight.saturating_sub(1);
                    s.requeued += 1;
                });
                if self.bars.is_none() && self.trial_lines {
                    self.line(&format!(
                        "{}: {host} did not answer; its trial goes back to the queue",
                        self.label
                    ));
                }
            }
            RunEvent::HostLeft { host } => {
                self.server_event(&host, |s| s.left = true);
                self.line(&format!(
                    "warning: {host} stopped answering and left the pool; the other servers play its trials"
                ));
            }
            RunEvent::ModelStarted { model } => {
                self.line(&format!("{}: model {model}", self.label))
            }
            RunEvent::TrialFinished {
                key,
                outcome,
                calls,
                retries,
                server_unreachable,
                host,
            } => self.trial_finished(&key, outcome, calls, retries, server_unreachable, &host),
            RunEvent::AttemptFailed {
                host,
                model,
                outcome,
                retrying,
                error,
            } => self.attempt_failed(&host, &model, outcome, retrying, &error),
            RunEvent::Warning(w) => self.line(&format!("warning: {w}")),
            RunEvent::Info(i) => self.line(&format!("{}: {i}", self.label)),
            RunEvent::NoGpuTelemetry(why) => {
                if !self.said_no_gpu.swap(true, Ordering::SeqCst) {
                    self.line(&format!("{}: no GPU telemetry: {why}", self.label));
                }
            }
        }
    }
}

/// The steps of [`Progress`]'s display, one per kind of event.
impl Progress {
    /// The schedule is known: size the bars, say how many trials are left.
    fn planned(&self, per_model: &[(String, u64)], already_done: u64, may_stop_early: bool) {
        let total: u64 = per_model.iter().map(|(_, n)| n).sum();
        self.overall.set_length(total);
        self.overall.set_prefix("all models");
        if let (Some(mp), Ok(mut models)) = (&self.bars, self.models.lock()) {
            for (model, n) in per_model {
                let bar = mp.add(ProgressBar::new(*n).with_style(style("model")));
                bar.set_prefix(model.clone());
                models.insert(model.clone(), bar);
            }
        }
        let resumed = if already_done > 0 {
            format!(" ({already_done} already on disk, resuming)")
        } else {
            String::new()
        };
        let (up_to, until) = if may_stop_early {
            ("up to ", ", stopping once decided")
        } else {
            ("", "")
        };
        self.line(&format!(
            "{}: {up_to}{total} trials to run{until}{resumed}",
            self.label
        ));
    }

    /// The servers of the session: their lines, and how many conversations each plays at once.
    fn servers(&self, hosts: &[String], parallel: u32) {
        if let Ok(mut t) = self.tally.lock() {
            t.parallel = parallel;
            hosts.iter().for_each(|h| {
                t.server(h);
            });
        }
        if hosts.len() > 1 || parallel > 1 {
            self.add_server_lines(hosts);
            self.line(&format!(
                "{}: {} at a time on each of {}",
                self.label,
                counted(u64::from(parallel), "conversation", "conversations"),
                hosts.join(", ")
            ));
        }
    }

    /// A trial was written: count it, move the bars, and say it when there are no bars.
    fn trial_finished(
        &self,
        key: &TrialKey,
        outcome: Outcome,
        calls: u32,
        retries: u32,
        server_unreachable: bool,
        host: &str,
    ) {
        // Counted under the tally's lock, drawn after it is released (see `server_event`).
        let (overall, model, several_servers) = {
            let Ok(mut t) = self.tally.lock() else { return };
            t.add(key, outcome, calls, server_unreachable);
            let server = t.server(host);
            server.in_flight = server.in_flight.saturating_sub(1);
            server.done += 1;
            let overall = t.message(self.started.elapsed().as_secs_f64());
            (overall, t.model_message(&key.model), t.servers.len() > 1)
        };
        self.overall.inc(1);
        self.overall.set_message(overall);
        if let Ok(models) = self.models.lock()
            && let Some(bar) = models.get(&key.model)
        {
            bar.set_message(model);
            bar.inc(1);
        }
        if self.bars.is_none() && self.trial_lines {
            let mut line = trial_line(key, outcome, calls, retries, server_unreachable);
            if several_servers {
                line.push_str(&format!(" on {host}"));
            }
            crate::errln!("{}: {line}", self.label);
        }
    }

    /// A model call's attempt failed: count it now, before its trial ends.
    fn attempt_failed(
        &self,
        host: &str,
        model: &str,
        outcome: CallOutcome,
        retrying: bool,
        error: &str,
    ) {
        let message = {
            let Ok(mut t) = self.tally.lock() else { return };
            t.attempt_failed(retrying);
            t.message(self.started.elapsed().as_secs_f64())
        };
        self.overall.set_message(message);
        if self.bars.is_none() && self.trial_lines {
            let then = if retrying { "retrying" } else { "giving up" };
            let kind = match outcome {
                CallOutcome::Transport => "transport",
                CallOutcome::Protocol => "protocol",
                CallOutcome::Ok => "ok",
            };
            crate::errln!(
                "{}: {model} on {host}: attempt failed ({kind}: {error}); {then}",
                self.label
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::Mode;

    fn key(suite: &str, model: &str) -> TrialKey {
        TrialKey {
            suite: suite.into(),
            model: model.into(),
            task: "L1".into(),
            trial: 0,
            call_cap: 10,
            mode: Mode::Agent,
            tool_docs: None,
            router_in_front: false,
            prompt: None,
        }
    }

    #[test]
    fn passes_count_graded_conversations_only_and_the_router_apart() {
        let mut t = Tally::default();
        t.add(&key("store", "a"), Outcome::Pass, 3, false);
        t.attempt_failed(true);
        t.attempt_failed(true);
        t.attempt_failed(false);
        t.add(&key("store", "a"), Outcome::TransportFail, 1, false);
        t.add(&key("router", "a"), Outcome::Pass, 1, false);
        t.add(&key("router", "a"), Outcome::ModelFail, 1, false);
        let m = t.message(1.0);
        assert!(m.starts_with("pass 1/1 conversations · router 1/2"), "{m}");
        assert!(m.contains("2 retries · 1 transport failure"), "{m}");
        // The model bar's position counts all four trials; its message names them all too.
        assert_eq!(t.model_message("a"), "pass 1/1 · router 1/2");
    }

    #[test]
    fn retries_show_as_they_happen_before_the_trial_ends() {
        let mut t = Tally::default();
        t.attempt_failed(true);
        assert!(t.message(1.0).contains("1 retry ·"), "{}", t.message(1.0));
        t.attempt_failed(true);
        assert!(t.message(1.0).contains("2 retries"), "{}", t.message(1.0));
        assert_eq!(t.conversations, Counts::default(), "no trial has finished");
    }

    #[test]
    fn an_unreachable_server_is_said_not_counted_as_the_models() {
        let mut t = Tally::default();
        t.attempt_failed(true);
        t.add(&key("store", "a"), Outcome::TransportFail, 1, true);
        let m = t.message(1.0);
        assert!(
            m.starts_with("SERVER UNREACHABLE · pass 0/0 conversations"),
            "{m}"
        );
        assert!(
            !m.contains("failure") && !m.contains("retr"),
            "no failure count: {m}"
        );
        assert_eq!(t.model_message("a"), "pass 0/0");
        let line = trial_line(&key("store", "a"), Outcome::TransportFail, 1, 3, true);
        assert!(
            line.ends_with("transport failure (server unreachable) (1 call, 3 retries)"),
            "{line}"
        );
        t.add(&key("store", "a"), Outcome::Pass, 2, false);
        let m = t.message(1.0);
        assert!(!m.contains("UNREACHABLE"), "{m}");
        assert!(
            m.contains("1 retry · 1 transport failure"),
            "counted again: {m}"
        );
    }

    #[test]
    fn several_servers_say_what_is_in_flight_and_who_left() {
        let mut t = Tally {
            parallel: 4,
            ..Tally::default()
        };
        t.server("http://a").in_flight = 3;
        t.server("http://b").in_flight = 1;
        t.server("http://b").left = true;
        t.server("http://b").requeued = 2;
        let m = t.message(1.0);
        assert!(
            m.starts_with("1 of 2 servers left the pool · pass 0/0"),
            "{m}"
        );
        assert_eq!(t.server("http://a").message(4), "3/4 in flight · 0 done");
        assert_eq!(
            t.server("http://b").message(4),
            "LEFT THE POOL (not answering) · 1/4 in flight · 0 done · 2 sent back to the queue"
        );
    }
}
