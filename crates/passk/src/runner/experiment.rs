//! One experiment end to end: verify the frozen graders, load the suites, preflight every server,
//! open (or resume) the run directory, then play the schedule model by model over the pool of servers
//! ([`crate::runner::pool`]), appending one record per finished trial. `passk run` and `passk
//! calibrate` both come through here; only the backend differs.

pub use crate::runner::run_error::{RunError, SERVER_LOST_AFTER, SequenceError};
pub use crate::runner::spec::{Backend, Experiment, RunSummary, STUB_BACKEND};
pub use crate::runner::suite_set::{Suites, load_suites, prompt_size_warnings, task_digests};

use crate::domain::Domain;
use crate::runner::context::PromptCounts;
use crate::runner::event::{EventSink, RunEvent};
use crate::runner::journal::Journal;
use crate::runner::judge::RoundJudge;
use crate::runner::play::play_trials;
use crate::runner::pool::{Pool, Stage};
use crate::runner::preflight;
use crate::runner::record::Manifest;
use crate::runner::schedule::{ScheduleInput, TrialSpec, schedule};
use crate::runner::session::Session;
use crate::runner::settings::SuiteChoice;
use crate::runner::{manifest, servers, stopping};
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs (or resumes) the experiment. Returns when the schedule is done or `cancel` is set; each
/// finished trial is on disk as soon as it is done, and on `cancel` the trials in flight finish
/// and are written first.
pub async fn run(
    exp: &Experiment,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
    cancel: &AtomicBool,
) -> Result<RunSummary, RunError> {
    let mut summary = RunSummary {
        dir: exp.run_dir.clone(),
        ..RunSummary::default()
    };
    if cancel.load(Ordering::SeqCst) {
        summary.interrupted = true;
        return Ok(summary);
    }
    let mut session = open_session(exp, sink).await?;
    let todo = schedule_session(&session, &mut summary, sink);
    if exp.settings.stop.is_some() {
        stopping::play_rounds(&mut session, &todo, &mut summary, sink, judge, cancel).await?;
    } else {
        play_trials(&mut session, &todo, &mut summary, sink, cancel).await?;
    }
    session.journal.update_manifest(&session.manifest)?;
    Ok(summary)
}

/// Verifies the graders, loads the suites, preflights every server and each model on it, and
/// opens (or resumes) the run directory.
async fn open_session<'a>(
    exp: &'a Experiment,
    sink: &dyn EventSink,
) -> Result<Session<'a>, RunError> {
    let suites = load_suites(&exp.root, &exp.settings)?;
    for w in prompt_size_warnings(&suites, &exp.settings) {
        sink.emit(RunEvent::Warning(w));
    }
    let checked = servers::preflight_servers(exp, &suites).await?;
    for note in &checked.notes {
        sink.emit(RunEvent::Warning(note.clone()));
    }
    servers::say_missing_telemetry(&checked.hosts, sink);
    // A server that publishes the suites it loaded is passk's own stub, whatever the command
    // thought it was talking to: its timings are simulated, and the report must say so.
    let backend = if checked.stub {
        STUB_BACKEND
    } else {
        exp.backend.name()
    };
    let fresh = manifest::new_manifest(exp, &suites, backend, &checked);
    let journal = open_journal(exp, &fresh, sink)?;
    let manifest = manifest::session_manifest(exp, &checked.models, &checked.hosts)?;
    sink.emit(RunEvent::Servers {
        hosts: checked.hosts.iter().map(|h| h.url.clone()).collect(),
        parallel: exp.settings.parallel,
    });
    let version = checked
        .hosts
        .first()
        .map(|h| h.info.version.clone())
        .unwrap_or_default();
    Ok(Session {
        warmed: Vec::new(),
        pool: Pool::new(checked.hosts.len()),
        stage: Stage {
            exp,
            suites,
            hosts: checked.hosts,
            prompt_counts: PromptCounts::new(preflight::prompt_counts_only_new(&version)),
        },
        journal,
        manifest,
    })
}

/// Locks and opens the run directory, saying what the resume found.
fn open_journal(
    exp: &Experiment,
    fresh: &Manifest,
    sink: &dyn EventSink,
) -> Result<Journal, RunError> {
    let journal = Journal::open_with(&exp.run_dir, fresh, &exp.resume)?;
    if let Some(holder) = journal.lock_taken_over_from() {
        sink.emit(RunEvent::Warning(format!(
            "took over the run directory's lock left by {holder}, which no longer holds it"
        )));
    }
    if journal.dropped_torn() > 0 {
        sink.emit(RunEvent::Warning(format!(
            "dropped {} torn last line(s) left by an interrupted run",
            journal.dropped_torn()
        )));
    }
    if journal.to_retry() > 0 {
        sink.emit(RunEvent::Info(format!(
            "{} trial(s) that ended on a transport or protocol failure run again",
            journal.to_retry()
        )));
    }
    Ok(journal)
}

/// The trials still to play, skipping those on disk; announces the schedule.
fn schedule_session(
    session: &Session<'_>,
    summary: &mut RunSummary,
    sink: &dyn EventSink,
) -> Vec<TrialSpec> {
    let s = &session.stage.exp.settings;
    let suites = &session.stage.suites;
    let task_ids = |d: &dyn Domain| -> Vec<String> {
        d.tasks()
            .iter()
            .map(|t| t.id.clone())
            .filter(|id| s.tasks.is_empty() || s.tasks.contains(id))
            .collect()
    };
    let input = ScheduleInput {
        models: &s.models,
        suites: suites
            .domains
            .iter()
            .map(|d| (d.name().to_string(), task_ids(d.as_ref())))
            .collect(),
        router_messages: match (&suites.router, s.suites.contains(&SuiteChoice::Router)) {
            (Some(r), true) => r.messages.iter().map(|m| m.index).collect(),
            _ => Vec::new(),
        },
        trials: s.trials,
        call_caps: &s.call_caps,
        modes: s.modes(),
        rounds: s.stop.is_some(),
        tool_docs: &s.tool_docs.0,
        router_in_front: &s.router_in_front.0,
        prompt: &s.prompt.0,
    };
    let (todo, skipped) = schedule(&input, session.journal.done());
    let mut per_model: Vec<(String, u64)> = Vec::new();
    for t in &todo {
        match per_model.iter_mut().find(|(m, _)| m == t.model()) {
            Some((_, n)) => *n += 1,
            None => per_model.push((t.model().to_string(), 1)),
        }
    }
    sink.emit(RunEvent::Scheduled {
        per_model,
        already_done: skipped as u64,
        may_stop_early: s.stop.is_some(),
    });
    summary.skipped = skipped;
    summary.planned = todo.len();
    todo
}
