//! One experiment end to end: verify the frozen graders, load the suites, preflight every server,
//! open (or resume) the run directory, then play the plan model by model over the pool of servers
//! ([`crate::runner::pool`]), appending one record per finished trial. `passk run` and `passk
//! calibrate` both come through here; only the backend differs.

pub use crate::runner::suite_set::{Suites, load_suites, prompt_size_warnings, task_digests};

use crate::runner::context::PromptCounts;
use crate::runner::event::{EventSink, RunEvent};
use crate::runner::journal::{Journal, JournalError, ResumePolicy};
use crate::runner::judge::{JudgeError, RoundJudge};
use crate::runner::plan::{PlanInput, TrialSpec, plan};
use crate::runner::pool::{self, Pool, Stage, Writer};
use crate::runner::preflight::{self, PreflightError};
use crate::runner::record::{Manifest, Outcome, Record};
use crate::runner::settings::{RunSettings, SettingsError, SuiteChoice};
use crate::runner::{manifest, servers, stopping};
use crate::sequence::RoundState;
use crate::suite::Domain;
use crate::wire::chat::ApiKind;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why an experiment stopped before its plan was done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The graders lock is missing or does not match.
    #[error("graders are not frozen as locked: {0} (`passk verify` lists every difference)")]
    GraderLock(#[source] crate::grade::freeze::FreezeError),
    /// A suite could not be loaded.
    #[error(transparent)]
    Suite(#[from] crate::suite::SuiteError),
    /// Preflight refused.
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// The run directory refused or failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Several trials in a row ended on transport failures: the server is gone.
    #[error(
        "{trials} trials in a row ended on transport failures ({error}) and {host} no longer answers; is Ollama still running? Finished trials are kept: rerun the same command to resume, and the failed ones run again"
    )]
    ServerLost {
        /// Base URL.
        host: String,
        /// Trials lost in a row.
        trials: usize,
        /// The last attempt's error.
        error: String,
    },
    /// A setting names something that does not exist.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The client could not be built.
    #[error(transparent)]
    Client(#[from] crate::wire::error::WireError),
    /// The records could not be read back to update the confidence sequence, or its states
    /// could not be written.
    #[error(transparent)]
    Sequence(#[from] SequenceError),
}

/// Why the confidence sequence could not be updated after a round.
#[derive(Debug, thiserror::Error)]
pub enum SequenceError {
    /// The round judge could not read the run's records back.
    #[error("cannot update the confidence sequence: {0}")]
    Judge(#[source] JudgeError),
    /// `rounds.jsonl` could not be written.
    #[error("cannot update the confidence sequence: {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Transport-failed trials in a row after which the run stops.
pub const SERVER_LOST_AFTER: usize = 5;

/// The error text of the last failed attempt in a record.
pub(crate) fn last_wire_error(record: &Record) -> String {
    let calls: Vec<&crate::runner::record::CallRecord> = match record {
        Record::Conversation(c) => c.calls.iter().collect(),
        Record::Router(r) => vec![&r.call],
    };
    calls
        .iter()
        .flat_map(|c| c.attempts.iter())
        .filter_map(|a| a.error.clone())
        .next_back()
        .unwrap_or_else(|| "no error text".into())
}

/// What to run and where.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Resolved settings.
    pub settings: RunSettings,
    /// Project root holding tasks/ and graders/.
    pub root: PathBuf,
    /// Server base URLs (one or more), in the order given.
    pub hosts: Vec<String>,
    /// Run directory.
    pub run_dir: PathBuf,
    /// The server the run expects: a real one speaking an API, or passk's stub.
    pub backend: Backend,
    /// The experiment file's text, when one was given.
    pub experiment_file: Option<String>,
    /// Sample GPU and server telemetry (of the servers on this machine).
    pub telemetry: bool,
    /// How a resume treats what is on disk (`--retry-failed`, `--allow-unknown-digest`).
    pub resume: ResumePolicy,
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// The run directory.
    pub dir: PathBuf,
    /// Records written now.
    pub written: usize,
    /// Trials skipped because their records existed.
    pub skipped: usize,
    /// Trials the plan had left to play when the session began.
    pub planned: usize,
    /// Stopped by the cancel flag before the plan was done.
    pub interrupted: bool,
    /// Outcomes of the records written now.
    pub outcomes: BTreeMap<Outcome, usize>,
    /// With `--stop-when-decided`: the round whose confidence sequence decided, and what it
    /// says (naming the models).
    pub decided: Option<(RoundState, String)>,
    /// With `--stop-when-decided`: why the run stopped on a round that waits on ungraded trials.
    pub waiting: Option<String>,
}

/// What one session of a run works with, once the checks have passed.
pub(crate) struct Session<'a> {
    pub(crate) stage: Stage<'a>,
    pub(crate) journal: Journal,
    pub(crate) manifest: Manifest,
    pub(crate) pool: Pool,
}

/// Runs (or resumes) the experiment. Returns when the plan is done or `cancel` is set; each
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
    let todo = plan_session(&session, &mut summary, sink);
    if exp.settings.stop.is_some() {
        stopping::play_rounds(&mut session, &todo, &mut summary, sink, judge, cancel).await?;
    } else {
        play_plan(&mut session, &todo, &mut summary, sink, cancel).await?;
    }
    session.journal.update_manifest(&session.manifest)?;
    Ok(summary)
}

/// The manifest's backend for a run against passk's own stub (`passk serve-stub`, calibrate).
pub const STUB_BACKEND: &str = "stub";

/// What a run plays against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A real server speaking this API.
    Server(ApiKind),
    /// passk's own stub (it speaks both APIs).
    Stub,
}

impl Backend {
    /// The name the manifest records (`ollama`, `stub`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Server(api) => api.as_str(),
            Backend::Stub => STUB_BACKEND,
        }
    }
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

/// The trials still to play, skipping those on disk; announces the plan.
fn plan_session(
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
    let input = PlanInput {
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
    let (todo, skipped) = plan(&input, session.journal.done());
    let mut per_model: Vec<(String, u64)> = Vec::new();
    for t in &todo {
        match per_model.iter_mut().find(|(m, _)| m == t.model()) {
            Some((_, n)) => *n += 1,
            None => per_model.push((t.model().to_string(), 1)),
        }
    }
    sink.emit(RunEvent::Planned {
        per_model,
        already_done: skipped as u64,
        may_stop_early: s.stop.is_some(),
    });
    summary.skipped = skipped;
    summary.planned = todo.len();
    todo
}

/// Plays the plan model by model over the pool of servers, one record per trial, until it is done
/// or `cancel` is set. Each model's trials begin once it is warmed up on every server, and end
/// before the next model's begin.
pub(crate) async fn play_plan(
    session: &mut Session<'_>,
    todo: &[TrialSpec],
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<(), RunError> {
    let mut rest = todo;
    while !rest.is_empty() {
        if cancel.load(Ordering::SeqCst) {
            summary.interrupted = true;
            break;
        }
        let model = rest[0].model().to_string();
        let end = rest
            .iter()
            .position(|t| t.model() != model)
            .unwrap_or(rest.len());
        servers::start_model(session, &model, sink).await?;
        let mut writer = Writer {
            journal: &mut session.journal,
            manifest: &session.manifest,
            summary,
            pool: &mut session.pool,
        };
        pool::play(&session.stage, &mut writer, &rest[..end], sink, cancel).await?;
        if summary.interrupted {
            break;
        }
        rest = &rest[end..];
    }
    Ok(())
}
