//! One experiment end to end: verify the frozen graders, load the suites, preflight the server,
//! open (or resume) the run directory, then play the plan model by model, appending one record per
//! finished trial. `passk run` and `passk calibrate` both come through here; only the backend
//! differs.

use crate::runner::agent_loop::Player;
use crate::runner::event::{EventSink, RunEvent};
use crate::runner::journal::{Journal, JournalError};
use crate::runner::plan::{PlanInput, TrialSpec, plan};
use crate::runner::preflight::{self, PreflightError};
use crate::runner::record::{Manifest, Outcome, Record, SCHEMA_VERSION};
use crate::runner::settings::{RunSettings, SuiteChoice};
use crate::runner::telemetry::{self, Telemetry};
use crate::suite::{Domain, RouterSuite, ToolVariant};
use crate::wire::client::{Client, ClientConfig};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Why an experiment stopped before its plan was done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The graders lock is missing or does not match.
    #[error(
        "graders are not frozen as locked: {0}. Run `passk verify` for details, or `passk freeze` if the change is intended"
    )]
    GraderLock(String),
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
    #[error("{0}")]
    Settings(String),
    /// The client could not be built.
    #[error("{0}")]
    Client(String),
}

/// Transport-failed trials in a row after which the run stops.
pub const SERVER_LOST_AFTER: usize = 5;

/// The error text of the last failed attempt in a record.
fn last_wire_error(record: &Record) -> String {
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
    /// Server base URL.
    pub host: String,
    /// Run directory.
    pub run_dir: PathBuf,
    /// `ollama` or `stub`.
    pub backend: String,
    /// The experiment file's text, when one was given.
    pub experiment_file: Option<String>,
    /// Sample GPU and server telemetry.
    pub telemetry: bool,
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
    /// Stopped by the cancel flag before the plan was done.
    pub interrupted: bool,
    /// Outcomes of the records written now.
    pub outcomes: BTreeMap<Outcome, usize>,
}

/// The suites an experiment plays, loaded once.
pub struct Suites {
    /// Conversation suites.
    pub domains: Vec<Box<dyn Domain>>,
    /// The router suite (standalone and/or in front).
    pub router: Option<RouterSuite>,
    /// Digest of the frozen graders.
    pub grader_digest: String,
}

impl Suites {
    /// Suite name to the digest of its tasks, as passk's stub publishes them.
    pub fn task_digests(&self) -> BTreeMap<String, String> {
        let domains: Vec<&dyn Domain> = self.domains.iter().map(|d| d.as_ref()).collect();
        task_digests(&domains, self.router.as_ref())
    }
}

/// Suite name to the digest of its tasks (the router's messages for `router`).
pub fn task_digests(
    domains: &[&dyn Domain],
    router: Option<&RouterSuite>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = domains
        .iter()
        .map(|d| (d.name().to_string(), d.digests(ToolVariant::Bare).tasks))
        .collect();
    if let Some(r) = router {
        out.insert("router".to_string(), r.digest.clone());
    }
    out
}

/// Verifies the lock and loads what `settings` asks for.
pub fn load_suites(root: &Path, settings: &RunSettings) -> Result<Suites, RunError> {
    let grader_digest =
        crate::grade::freeze::verify(root).map_err(|e| RunError::GraderLock(e.to_string()))?;
    let mut domains: Vec<Box<dyn Domain>> = Vec::new();
    for suite in &settings.suites {
        match suite {
            SuiteChoice::Store => domains.push(Box::new(crate::suite::load_store(root)?)),
            SuiteChoice::Triage => domains.push(Box::new(crate::suite::load_triage(root)?)),
            SuiteChoice::Router => {}
        }
    }
    let router = if settings.suites.contains(&SuiteChoice::Router) || settings.router_in_front {
        Some(crate::suite::load_router(root)?)
    } else {
        None
    };
    let unknown: Vec<&str> = settings
        .tasks
        .iter()
        .filter(|id| {
            !domains
                .iter()
                .any(|d| d.tasks().iter().any(|t| &t.id == *id))
        })
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(RunError::Settings(format!(
            "--tasks names tasks that none of the chosen suites has: {}",
            unknown.join(", ")
        )));
    }
    Ok(Suites {
        domains,
        router,
        grader_digest,
    })
}

fn client_for(exp: &Experiment) -> Result<Client, RunError> {
    Client::new(ClientConfig {
        base_url: exp.host.clone(),
        connect_timeout: Duration::from_secs_f64(exp.settings.connect_timeout_s),
        request_timeout: Duration::from_secs_f64(exp.settings.timeout_s),
        retries: exp.settings.retries,
        backoff: Duration::from_secs_f64(exp.settings.retry_backoff_s),
    })
    .map_err(|e| RunError::Client(e.to_string()))
}

/// Runs (or resumes) the experiment. Returns when the plan is done or `cancel` is set; each
/// finished trial is on disk before the next begins.
pub async fn run(
    exp: &Experiment,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<RunSummary, RunError> {
    let s = &exp.settings;
    let suites = load_suites(&exp.root, s)?;
    let client = client_for(exp)?;
    let server = preflight::server(&client, &exp.host).await?;
    preflight::check_stub_suites(server.passk_suites.as_ref(), &suites.task_digests())?;
    let version = server.version.clone();
    let mut models = Vec::new();
    for model in &s.models {
        let info =
            preflight::check_model(&client, &exp.host, model, !suites.domains.is_empty()).await?;
        preflight::check_think(&info, s.think)?;
        models.push(info);
    }
    let telemetry = if exp.telemetry {
        Telemetry::start(telemetry::DEFAULT_INTERVAL)
    } else {
        Telemetry::disabled("telemetry off for this backend")
    };
    if let Some(why) = &telemetry.gpu_info().unavailable {
        sink.emit(RunEvent::Info(format!("no GPU telemetry: {why}")));
    }
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        run_id: exp
            .run_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        passk_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: option_env!("PASSK_GIT_COMMIT").map(String::from),
        created: crate::timefmt::now_rfc3339(),
        grader_digest: suites.grader_digest.clone(),
        settings: serde_json::to_value(s).unwrap_or_default(),
        experiment_file: exp.experiment_file.clone(),
        suite_digests: suites
            .domains
            .iter()
            .map(|d| (d.name().to_string(), d.digests(s.tool_docs)))
            .collect(),
        ollama_version: Some(version.clone()),
        ollama_host: Some(exp.host.clone()),
        backend: exp.backend.clone(),
        models: models.clone(),
        gpu: telemetry.gpu_info().clone(),
        example_values: suites
            .domains
            .iter()
            .flat_map(|d| d.example_values())
            .map(|(_, v)| v)
            .collect(),
        tasks_without_tools: suites
            .domains
            .iter()
            .flat_map(|d| {
                d.tasks()
                    .iter()
                    .filter(|t| !t.needs_tools)
                    .map(|t| t.id.clone())
            })
            .collect(),
        host: telemetry::host_info(),
        ..Manifest::default()
    };
    if let Some(r) = &suites.router {
        manifest.suite_digests.insert(
            "router".into(),
            crate::suite::SuiteDigests {
                tasks: r.digest.clone(),
                tools: String::new(),
                policy: String::new(),
            },
        );
    }
    let mut journal = Journal::open(&exp.run_dir, &manifest)?;
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
    // Keep the manifest of the first session; later sessions add what they learn (a model digest
    // that could not be read then, for instance).
    manifest = crate::runner::journal::read_manifest(&exp.run_dir)?;
    // The journal allowed only the task filter and the wire's patience to change: record this
    // session's values.
    manifest.settings = serde_json::to_value(s).unwrap_or_default();
    for m in &mut manifest.models {
        if m.digest.is_none() {
            m.digest = models
                .iter()
                .find(|n| n.name == m.name)
                .and_then(|n| n.digest.clone());
        }
    }

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
    };
    let (todo, skipped) = plan(&input, journal.done());
    let mut per_model: Vec<(String, u64)> = Vec::new();
    for t in &todo {
        match per_model.last_mut() {
            Some((m, n)) if m == t.model() => *n += 1,
            _ => per_model.push((t.model().to_string(), 1)),
        }
    }
    sink.emit(RunEvent::Planned {
        per_model,
        already_done: skipped as u64,
    });

    let mut summary = RunSummary {
        dir: exp.run_dir.clone(),
        skipped,
        ..RunSummary::default()
    };
    let mut current_model: Option<String> = None;
    let mut lost_in_a_row = 0;
    for spec in &todo {
        if cancel.load(Ordering::SeqCst) {
            summary.interrupted = true;
            break;
        }
        if current_model.as_deref() != Some(spec.model()) {
            let info = manifest.models.iter_mut().find(|m| m.name == spec.model());
            if let Some(info) = info {
                for w in preflight::warm_up(&client, s, info).await? {
                    manifest.warnings.push(w.clone());
                    sink.emit(RunEvent::Warning(w));
                }
            }
            journal.update_manifest(&manifest)?;
            current_model = Some(spec.model().to_string());
            sink.emit(RunEvent::ModelStarted {
                model: spec.model().to_string(),
            });
        }
        let player = Player {
            client: &client,
            model: spec.model(),
            settings: s,
            telemetry: &telemetry,
            grader_digest: &suites.grader_digest,
            router_in_front: if s.router_in_front {
                suites.router.as_ref()
            } else {
                None
            },
            prompt_counts_only_new: preflight::prompt_counts_only_new(&version),
        };
        let record = match spec {
            TrialSpec::Conversation {
                suite,
                task_id,
                trial,
                call_cap,
                mode,
                ..
            } => {
                let found = suites
                    .domains
                    .iter()
                    .filter(|d| d.name() == suite)
                    .find_map(|d| d.tasks().iter().find(|t| &t.id == task_id).map(|t| (d, t)));
                let Some((domain, task)) = found else {
                    continue;
                };
                let rec = player
                    .play(domain.as_ref(), task, *trial, *call_cap, *mode)
                    .await;
                if rec.calls.iter().any(|c| c.context_overflow) {
                    let w = format!(
                        "CONTEXT OVERFLOW in {} {} trial {}: raise --num-ctx (now {})",
                        rec.model, rec.task, rec.trial, s.num_ctx
                    );
                    sink.emit(RunEvent::Warning(w));
                }
                Record::Conversation(Box::new(rec))
            }
            TrialSpec::Router { index, trial, .. } => {
                let Some(router) = suites.router.as_ref() else {
                    continue;
                };
                let Some(message) = router.messages.iter().find(|m| m.index == *index) else {
                    continue;
                };
                Record::Router(Box::new(player.play_router(router, message, *trial).await))
            }
        };
        let (outcome, calls) = match &record {
            Record::Conversation(c) => (c.outcome, c.calls.len() as u32),
            Record::Router(r) => (r.outcome, 1),
        };
        if journal.append(&record)? {
            summary.written += 1;
            *summary.outcomes.entry(outcome).or_default() += 1;
        }
        sink.emit(RunEvent::TrialFinished {
            key: spec.key(),
            outcome,
            calls,
        });
        // A server that is gone would otherwise turn the rest of the plan into transport
        // failures; stop instead, so that a rerun plays those trials once the server is back.
        lost_in_a_row = if outcome == Outcome::TransportFail {
            lost_in_a_row + 1
        } else {
            0
        };
        if lost_in_a_row >= SERVER_LOST_AFTER {
            let error = last_wire_error(&record);
            // Gone, or only slow? A server that still answers is not lost: timeouts go on being
            // recorded (and retried on resume), with a hint.
            if preflight::server_version(&client, &exp.host).await.is_ok() {
                sink.emit(RunEvent::Warning(format!(
                    "{lost_in_a_row} trials in a row ended on transport failures ({error}), but the \
                     server answers; if these are timeouts, raise --timeout (now {} s)",
                    s.timeout_s
                )));
                lost_in_a_row = 0;
            } else {
                journal.update_manifest(&manifest)?;
                return Err(RunError::ServerLost {
                    host: exp.host.clone(),
                    trials: lost_in_a_row,
                    error,
                });
            }
        }
    }
    journal.update_manifest(&manifest)?;
    Ok(summary)
}
