//! The trial queue and the servers that play it. Trials go from one queue to every server still in
//! the pool; each server plays up to `--parallel` of them at once. The futures of the trials in
//! flight are polled by one coordinator, which is also the only writer: it appends each finished
//! trial to the journal (one fsynced line) as it comes in, so records are never interleaved and a
//! kill loses at most the trials in flight.
//!
//! A trial that ended on a transport failure while its server did not answer at all is the
//! server's fault, not the trial's: while another server is in the pool it goes back to the queue
//! instead of being recorded. A server with [`SERVER_LOST_AFTER`] such failures in a row leaves the
//! pool; the run stops (exit 9) only when no server is left.

use crate::runner::agent_loop::Player;
use crate::runner::context::PromptCounts;
use crate::runner::event::{EventSink, RunEvent};
use crate::runner::hosts::Host;
use crate::runner::journal::Journal;
use crate::runner::preflight;
use crate::runner::record::{Manifest, Outcome, Record};
use crate::runner::record_file::key_and_outcome;
use crate::runner::run_error::{RunError, SERVER_LOST_AFTER};
use crate::runner::schedule::TrialSpec;
use crate::runner::settings::SuiteChoice;
use crate::runner::spec::{Experiment, RunSummary};
use crate::runner::suite_set::Suites;
use crate::wire::outcome::Attempt;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

/// What every trial in flight reads: the experiment, its suites and its servers.
pub struct Stage<'a> {
    /// The experiment.
    pub exp: &'a Experiment,
    /// Its suites.
    pub suites: Suites,
    /// Its servers, in the order given.
    pub hosts: Vec<Host>,
    /// How the servers count prompt tokens, and the conversation openings seen.
    pub prompt_counts: PromptCounts,
}

/// Which servers are still in the pool, and the transport failures in a row of each.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    live: Vec<bool>,
    lost_in_a_row: Vec<usize>,
}

impl Pool {
    /// Every one of `hosts` servers in the pool.
    pub fn new(hosts: usize) -> Pool {
        Pool {
            live: vec![true; hosts],
            lost_in_a_row: vec![0; hosts],
        }
    }

    /// The servers still in the pool.
    pub fn live(&self) -> Vec<usize> {
        (0..self.live.len()).filter(|&h| self.live[h]).collect()
    }

    /// Whether a server other than `host` is in the pool.
    fn another_than(&self, host: usize) -> bool {
        self.live().iter().any(|&h| h != host)
    }
}

/// Hands queued trials to servers with a free slot, one per server in turn so that a short queue
/// is spread over every server; returns (server, trial) pairs and counts them in `busy`.
pub fn assign<'t>(
    queue: &mut VecDeque<&'t TrialSpec>,
    busy: &mut [usize],
    pool: &Pool,
    parallel: usize,
) -> Vec<(usize, &'t TrialSpec)> {
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for h in pool.live() {
            if busy[h] < parallel
                && let Some(spec) = queue.pop_front()
            {
                busy[h] += 1;
                out.push((h, spec));
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// What the single writer appends to: the journal, the manifest to save before stopping, the
/// summary and the pool.
pub struct Writer<'w> {
    /// The run directory.
    pub journal: &'w mut Journal,
    /// The manifest, saved before the run stops on lost servers.
    pub manifest: &'w Manifest,
    /// Counts of what was written.
    pub summary: &'w mut RunSummary,
    /// The servers still in the pool.
    pub pool: &'w mut Pool,
}

/// One trial back from a server.
struct Played<'t> {
    host: usize,
    spec: &'t TrialSpec,
    record: Option<Record>,
    reachable: bool,
}

/// Plays `trials` over the pool until they are all written or `cancel` is set; on cancel the
/// trials in flight finish and are written, and the summary says it was interrupted.
pub async fn play(
    stage: &Stage<'_>,
    w: &mut Writer<'_>,
    trials: &[TrialSpec],
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<(), RunError> {
    let parallel = stage.exp.settings.parallel.max(1) as usize;
    let mut queue: VecDeque<&TrialSpec> = trials.iter().collect();
    let mut busy = vec![0; stage.hosts.len()];
    let mut in_flight = FuturesUnordered::new();
    loop {
        if !cancel.load(Ordering::SeqCst) {
            for (h, spec) in assign(&mut queue, &mut busy, w.pool, parallel) {
                sink.emit(RunEvent::TrialStarted {
                    host: stage.hosts[h].url.clone(),
                });
                in_flight.push(play_on(stage, h, spec, sink));
            }
        }
        let Some(done) = in_flight.next().await else {
            break;
        };
        busy[done.host] -= 1;
        settle(stage, w, done, &mut queue, sink)?;
    }
    if !queue.is_empty() {
        w.summary.interrupted = true;
    }
    Ok(())
}

/// Plays one trial on server `host` and, when it ended on a transport failure, asks the server
/// whether it still answers.
async fn play_on<'t>(
    stage: &Stage<'_>,
    host: usize,
    spec: &'t TrialSpec,
    sink: &dyn EventSink,
) -> Played<'t> {
    let server = &stage.hosts[host];
    let mut record = play_trial(stage, server, spec, sink).await;
    let mut reachable = true;
    if let Some(r) = &mut record {
        if key_and_outcome(r).1 == Outcome::TransportFail {
            reachable = preflight::server_version(server.client.as_ref(), &server.url)
                .await
                .is_ok();
            if reachable
                && let Some(why) =
                    preflight::behind_another_model(server.client.as_ref(), spec.model()).await
            {
                r.explain_last_failure(&why);
                sink.emit(RunEvent::Warning(why));
            }
        }
        if !reachable {
            r.mark_server_unreachable();
        }
        r.set_played_on(&server.url, stage.exp.settings.parallel);
    }
    Played {
        host,
        spec,
        record,
        reachable,
    }
}

/// Writes a finished trial, or puts it back in the queue when its server was gone and another
/// can play it; a server gone [`SERVER_LOST_AFTER`] times in a row leaves the pool.
fn settle<'t>(
    stage: &Stage<'_>,
    w: &mut Writer<'_>,
    done: Played<'t>,
    queue: &mut VecDeque<&'t TrialSpec>,
    sink: &dyn EventSink,
) -> Result<(), RunError> {
    let Some(record) = done.record else {
        return Ok(());
    };
    let h = done.host;
    let url = &stage.hosts[h].url;
    let (_, outcome) = key_and_outcome(&record);
    let failed = outcome == Outcome::TransportFail;
    w.pool.lost_in_a_row[h] = if failed {
        w.pool.lost_in_a_row[h] + 1
    } else {
        0
    };
    let gone = failed && !done.reachable;
    if gone && w.pool.lost_in_a_row[h] >= SERVER_LOST_AFTER && w.pool.live[h] {
        w.pool.live[h] = false;
        // The last server to go is said by the error that stops the run.
        if w.pool.another_than(h) {
            sink.emit(RunEvent::HostLeft { host: url.clone() });
        }
    }
    if gone && w.pool.another_than(h) {
        sink.emit(RunEvent::TrialRequeued { host: url.clone() });
        queue.push_front(done.spec);
        return Ok(());
    }
    write(w, &record, url, sink)?;
    if w.pool.lost_in_a_row[h] >= SERVER_LOST_AFTER {
        let trials = w.pool.lost_in_a_row[h];
        w.pool.lost_in_a_row[h] = 0;
        check_server_lost(stage, w, url, &record, trials, done.reachable, sink)?;
    }
    Ok(())
}

/// Appends one record (once: a key on disk is never written again) and says so.
fn write(
    w: &mut Writer<'_>,
    record: &Record,
    host: &str,
    sink: &dyn EventSink,
) -> Result<(), RunError> {
    let (key, outcome) = key_and_outcome(record);
    if w.journal.append(record)? {
        w.summary.written += 1;
        *w.summary.outcomes.entry(outcome).or_default() += 1;
    }
    let (calls, retries) = match record {
        Record::Conversation(c) => (
            c.calls.len() as u32,
            c.calls.iter().map(|call| call.retries()).sum(),
        ),
        Record::Router(r) => (1, r.call.retries()),
    };
    sink.emit(RunEvent::TrialFinished {
        key,
        outcome,
        calls,
        retries,
        server_unreachable: record.server_unreachable(),
        host: host.to_string(),
    });
    Ok(())
}

/// After [`SERVER_LOST_AFTER`] transport failures in a row on one server: a server that still
/// answers is only slow (warn, go on); when no server is left in the pool the run stops with
/// [`RunError::ServerLost`].
fn check_server_lost(
    stage: &Stage<'_>,
    w: &Writer<'_>,
    url: &str,
    record: &Record,
    lost_in_a_row: usize,
    reachable: bool,
    sink: &dyn EventSink,
) -> Result<(), RunError> {
    let error = crate::runner::run_error::last_wire_error(record);
    if reachable {
        sink.emit(RunEvent::Warning(format!(
            "{lost_in_a_row} trials in a row ended on transport failures ({error}), but the \
             server answers ({url}); if these are timeouts, raise --timeout (now {} s)",
            stage.exp.settings.timeout_s
        )));
        return Ok(());
    }
    if !w.pool.live().is_empty() {
        return Ok(());
    }
    w.journal.update_manifest(w.manifest)?;
    let urls: Vec<&str> = stage.hosts.iter().map(|h| h.url.as_str()).collect();
    Err(RunError::ServerLost {
        host: match urls.as_slice() {
            [one] => one.to_string(),
            many => format!("every server ({})", many.join(", ")),
        },
        trials: lost_in_a_row,
        error,
    })
}

/// Plays one trial on `server`; `None` when the schedule names a task or message the suites no longer
/// have.
async fn play_trial(
    stage: &Stage<'_>,
    server: &Host,
    spec: &TrialSpec,
    sink: &dyn EventSink,
) -> Option<Record> {
    let s = &stage.exp.settings;
    let suites = &stage.suites;
    let watch = |attempt: &Attempt, retrying: bool| {
        sink.emit(RunEvent::AttemptFailed {
            host: server.url.clone(),
            model: spec.model().to_string(),
            outcome: attempt.outcome,
            retrying,
            error: attempt.error.clone().unwrap_or_default(),
        })
    };
    let player = Player {
        client: server.client.as_ref(),
        model: spec.model(),
        settings: s,
        telemetry: &server.telemetry,
        grader_digest: suites.grader_digest(match spec {
            TrialSpec::Conversation { suite, .. } => suite,
            TrialSpec::Router { .. } => SuiteChoice::Router.name(),
        }),
        router_in_front: match spec {
            TrialSpec::Conversation {
                router_in_front: true,
                ..
            } => suites.router.as_ref(),
            _ => None,
        },
        prompt_counts: &stage.prompt_counts,
        watch: Some(&watch),
    };
    match spec {
        TrialSpec::Conversation {
            suite,
            task_id,
            trial,
            call_cap,
            mode,
            tool_docs,
            prompt,
            ..
        } => {
            let (domain, task) = suites
                .domains
                .iter()
                .filter(|d| d.name() == suite)
                .find_map(|d| d.tasks().iter().find(|t| &t.id == task_id).map(|t| (d, t)))?;
            let shown = crate::domain::Shown {
                tool_docs: *tool_docs,
                prompt: *prompt,
            };
            let rec = player
                .play(domain.as_ref(), task, *trial, *call_cap, *mode, shown)
                .await;
            if rec.calls.iter().any(|c| c.context_overflow) {
                sink.emit(RunEvent::Warning(format!(
                    "CONTEXT OVERFLOW in {} {} trial {}: raise --num-ctx (now {})",
                    rec.model, rec.task, rec.trial, s.num_ctx
                )));
            }
            Some(Record::Conversation(Box::new(rec)))
        }
        TrialSpec::Router { index, trial, .. } => {
            let router = suites.router.as_ref()?;
            let message = router.messages.iter().find(|m| m.index == *index)?;
            Some(Record::Router(Box::new(
                player.play_router(router, message, *trial).await,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(trial: u32) -> TrialSpec {
        TrialSpec::Router {
            model: "m".into(),
            index: 0,
            trial,
        }
    }

    #[test]
    fn queued_trials_are_spread_over_the_live_servers_up_to_their_slots() {
        let trials: Vec<TrialSpec> = (0..7).map(spec).collect();
        let mut queue: VecDeque<&TrialSpec> = trials.iter().collect();
        let mut pool = Pool::new(3);
        pool.live[1] = false;
        let mut busy = vec![0, 0, 1];
        let got = assign(&mut queue, &mut busy, &pool, 2);
        let hosts: Vec<usize> = got.iter().map(|(h, _)| *h).collect();
        assert_eq!(
            hosts,
            vec![0, 2, 0],
            "turn by turn, a gone server gets none"
        );
        assert_eq!(busy, vec![2, 0, 2]);
        assert_eq!(queue.len(), 4);
        assert!(
            assign(&mut queue, &mut busy, &pool, 2).is_empty(),
            "no free slot"
        );
    }
}
