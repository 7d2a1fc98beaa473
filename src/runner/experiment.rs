//! One experiment end to end: verify the frozen graders, load the suites, preflight every server,
//! open (or resume) the run directory, then play the plan model by model over the pool of servers
//! ([`crate::runner::pool`]), appending one record per finished trial. `passk run` and `passk
//! calibrate` both come through here; only the backend differs.

use crate::runner::context::PromptCounts;
use crate::runner::event::{EventSink, RunEvent};
use crate::runner::hosts::{self, Host, Preflighted};
use crate::runner::journal::{Journal, JournalError, MAX_WIRE_TRIES, ResumePolicy};
use crate::runner::judge::{JudgeError, Judgement, RoundJudge};
use crate::runner::plan::{PlanInput, TrialSpec, plan};
use crate::runner::pool::{self, Pool, Stage, Writer};
use crate::runner::preflight::{self, PreflightError};
use crate::runner::record::{Manifest, ModelInfo, Outcome, Record, SCHEMA_VERSION, ServerInfo};
use crate::runner::settings::{RunSettings, SettingsError, SuiteChoice};
use crate::runner::telemetry;
use crate::sequence::RoundState;
use crate::suite::{Domain, ToolVariant};
use crate::suites::router::RouterSuite;
use crate::wire::ChatApi;
use crate::wire::chat::ApiKind;
use crate::wire::chat_api::connect;
use crate::wire::config::ClientConfig;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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
        .map(|d| (d.name().to_string(), d.digests(ToolVariant::BARE).tasks))
        .collect();
    if let Some(r) = router {
        out.insert("router".to_string(), r.digest.clone());
    }
    out
}

/// Verifies the lock and loads what `settings` asks for.
pub fn load_suites(root: &Path, settings: &RunSettings) -> Result<Suites, RunError> {
    let grader_digest = crate::grade::freeze::verify(root).map_err(RunError::GraderLock)?;
    let mut domains: Vec<Box<dyn Domain>> = Vec::new();
    for load in settings.suites.iter().filter_map(|s| s.loader()) {
        domains.push(load(root)?);
    }
    let router = if settings.suites.contains(&SuiteChoice::Router) || settings.any_router_in_front()
    {
        Some(crate::suites::router::load_router(root)?)
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
        return Err(RunError::Settings(SettingsError::Invalid(format!(
            "--tasks names tasks that none of the chosen suites has: {}",
            unknown.join(", ")
        ))));
    }
    check_variants(&domains, settings)?;
    Ok(Suites {
        domains,
        router,
        grader_digest,
    })
}

/// Every `--tool-docs` and `--prompt` variant must be a file of every conversation suite played.
fn check_variants(domains: &[Box<dyn Domain>], settings: &RunSettings) -> Result<(), RunError> {
    for d in domains {
        let has = d.presentation().prompts();
        if let Some(v) = settings.prompt.0.iter().find(|v| !has.contains(v)) {
            let files: Vec<String> = has
                .iter()
                .map(|p| {
                    if p.is_policy() {
                        format!("tasks/{}/policy.md (policy)", d.name())
                    } else {
                        format!("tasks/{}/prompts/{p}.md", d.name())
                    }
                })
                .collect();
            return Err(RunError::Settings(SettingsError::Invalid(format!(
                "--prompt {v}: the {} suite has no tasks/{}/prompts/{v}.md (its prompt files: {})",
                d.name(),
                d.name(),
                files.join(", ")
            ))));
        }
        let has = d.presentation().variants();
        if let Some(v) = settings.tool_docs.0.iter().find(|v| !has.contains(v)) {
            let names: Vec<&str> = has.iter().map(|v| v.as_str()).collect();
            return Err(RunError::Settings(SettingsError::Invalid(format!(
                "--tool-docs {v}: the {} suite has no tasks/{}/tools/{v}.json (its variants: {})",
                d.name(),
                d.name(),
                names.join(", ")
            ))));
        }
    }
    Ok(())
}

fn client_for(exp: &Experiment, url: &str) -> Result<Box<dyn ChatApi>, RunError> {
    let (connect_timeout, request_timeout, backoff) = exp.settings.wire_durations()?;
    connect(
        exp.backend.api(),
        ClientConfig {
            base_url: url.to_string(),
            connect_timeout,
            request_timeout,
            retries: exp.settings.retries,
            backoff,
        },
    )
    .map_err(RunError::Client)
}

/// What one session of a run works with, once the checks have passed.
struct Session<'a> {
    stage: Stage<'a>,
    journal: Journal,
    manifest: Manifest,
    pool: Pool,
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
        play_rounds(&mut session, &todo, &mut summary, sink, judge, cancel).await?;
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
    /// passk's own stub (it speaks Ollama's API).
    Stub,
}

impl Backend {
    /// The API its client speaks.
    pub fn api(self) -> ApiKind {
        match self {
            Backend::Server(api) => api,
            Backend::Stub => ApiKind::Ollama,
        }
    }

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
    let checked = preflight_servers(exp, &suites).await?;
    for note in &checked.notes {
        sink.emit(RunEvent::Warning(note.clone()));
    }
    say_missing_telemetry(&checked.hosts, sink);
    // A server that publishes the suites it loaded is passk's own stub, whatever the command
    // thought it was talking to: its timings are simulated, and the report must say so.
    let backend = if checked.stub {
        STUB_BACKEND
    } else {
        exp.backend.name()
    };
    let fresh = new_manifest(exp, &suites, backend, &checked);
    let journal = open_journal(exp, &fresh, sink)?;
    let manifest = session_manifest(exp, &checked.models, &checked.hosts)?;
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

/// Preflights each server (version, stub suites, each model), holds every server to the first
/// (same Ollama version, same model digests), and gives each its telemetry.
async fn preflight_servers(exp: &Experiment, suites: &Suites) -> Result<Preflighted, RunError> {
    let s = &exp.settings;
    if exp.hosts.is_empty() {
        return Err(RunError::Settings(SettingsError::Invalid(
            "--host: no server to play on".into(),
        )));
    }
    let need_tools = !suites.domains.is_empty();
    let digests = suites.task_digests();
    let exporters = hosts::pair_gpu_metrics(&s.gpu_metrics, &exp.hosts)
        .map_err(|m| RunError::Settings(SettingsError::Invalid(m)))?;
    let probed = hosts::probe_exporters(&exporters).await?;
    let scrape_interval = s
        .scrape_interval_s
        .map_or(telemetry::DEFAULT_SCRAPE_INTERVAL, Duration::from_secs_f64);
    let telemetries = hosts::telemetries(
        &exp.hosts,
        exp.telemetry,
        &exporters,
        &probed,
        scrape_interval,
    );
    let mut checks: Vec<(String, hosts::ServerCheck, Box<dyn ChatApi>)> = Vec::new();
    for url in &exp.hosts {
        let client = client_for(exp, url)?;
        let check = hosts::check_server(
            client.as_ref(),
            url,
            &s.models,
            need_tools,
            s.think,
            &digests,
        )
        .await?;
        if let Some((first, first_check, _)) = checks.first() {
            hosts::check_same_as_first((first.as_str(), first_check), (url.as_str(), &check))?;
        }
        checks.push((url.clone(), check, client));
    }
    let stub = checks.iter().any(|(_, c, _)| c.passk_suites.is_some());
    let models = checks
        .first()
        .map(|(_, c, _)| c.models.clone())
        .unwrap_or_default();
    let hosts = checks
        .into_iter()
        .zip(telemetries)
        .map(|((url, check, client), telemetry)| Host {
            info: ServerInfo {
                url: url.clone(),
                version: check.version,
                gpu: telemetry.gpu_info().clone(),
                models: Vec::new(),
                checked: crate::timefmt::now_rfc3339(),
            },
            url,
            client,
            telemetry,
        })
        .collect();
    Ok(Preflighted {
        hosts,
        models,
        stub,
        notes: probed.notes,
    })
}

/// Says once why a server has no GPU telemetry (once per process for this machine: calibrate
/// plays five runs on it).
fn say_missing_telemetry(hosts: &[Host], sink: &dyn EventSink) {
    static SAID: AtomicBool = AtomicBool::new(false);
    for h in hosts {
        let Some(why) = &h.info.gpu.unavailable else {
            continue;
        };
        if why == hosts::REMOTE_NO_TELEMETRY {
            sink.emit(RunEvent::Info(format!(
                "no GPU telemetry: remote host {}",
                h.url
            )));
        } else if !SAID.swap(true, Ordering::SeqCst) {
            sink.emit(RunEvent::Info(format!("no GPU telemetry: {why}")));
        }
    }
}

/// Characters per token assumed when sizing a prompt before any call (English text and JSON with
/// the usual tokenizers run 3.5 to 4.5).
const CHARS_PER_TOKEN: usize = 4;

/// A warning for each suite whose fixed prompt (system prompt and tool documentation) alone is
/// about as large as `num_ctx`: every call of it would overflow the context.
pub fn prompt_size_warnings(suites: &Suites, s: &RunSettings) -> Vec<String> {
    suites
        .domains
        .iter()
        .filter_map(|d| {
            let largest = s.tool_docs.0.iter().map(|&v| d.tools(v)).max_by_key(|t| {
                serde_json::to_string(t)
                    .map(|j| j.len())
                    .unwrap_or_default()
            });
            let tools = serde_json::to_string(&largest).unwrap_or_default();
            let prompt = s.prompt.0.iter().map(|&p| d.system_prompt(p).len()).max();
            let tokens = (prompt.unwrap_or_default() + tools.len()) / CHARS_PER_TOKEN;
            (s.num_ctx < tokens as u64).then(|| {
                format!(
                    "--num-ctx {} is below the {} suite's prompt alone (about {tokens} tokens of \
                     system prompt and tool documentation, at {CHARS_PER_TOKEN} characters a \
                     token): every call will overflow the context",
                    s.num_ctx,
                    d.name()
                )
            })
        })
        .collect()
}

/// The manifest a new run directory gets.
fn new_manifest(
    exp: &Experiment,
    suites: &Suites,
    backend: &str,
    checked: &Preflighted,
) -> Manifest {
    let s = &exp.settings;
    let first = checked.hosts.first().map(|h| &h.info);
    // The first GPU read (here or through an exporter), else this machine's absence, else the
    // first server's.
    let infos = || checked.hosts.iter().map(|h| &h.info);
    let gpu = infos()
        .find(|i| i.gpu.unavailable.is_none())
        .or_else(|| {
            infos().find(|i| i.gpu.unavailable.as_deref() != Some(hosts::REMOTE_NO_TELEMETRY))
        })
        .or(first)
        .map(|i| i.gpu.clone())
        .unwrap_or_default();
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
            .map(|d| {
                // A factorial run records its first variant's tool digest here, and every
                // variant's in `tool_docs_digests`.
                let variant = s.tool_docs.first().unwrap_or(ToolVariant::BARE);
                (d.name().to_string(), d.digests(variant))
            })
            .collect(),
        tool_docs_digests: suites
            .domains
            .iter()
            .map(|d| {
                let all = d.presentation().tool_docs_digests();
                let played = s
                    .tool_docs
                    .0
                    .iter()
                    .filter_map(|v| Some((v.to_string(), all.get(v.as_str())?.clone())))
                    .collect();
                (d.name().to_string(), played)
            })
            .collect(),
        prompt_digests: suites
            .domains
            .iter()
            .filter(|_| !s.prompt.single().is_some_and(|p| p.is_policy()))
            .map(|d| {
                let played = s
                    .prompt
                    .0
                    .iter()
                    .map(|&p| (p.to_string(), d.presentation().prompt_digest(p).to_string()))
                    .collect();
                (d.name().to_string(), played)
            })
            .collect(),
        server_version: first.map(|i| i.version.clone()),
        server_host: first.map(|i| i.url.clone()),
        servers: checked.hosts.iter().map(|h| h.info.clone()).collect(),
        backend: backend.to_string(),
        models: checked.models.clone(),
        gpu,
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
        suite_tasks: suites
            .domains
            .iter()
            .map(|d| {
                let ids = d.tasks().iter().map(|t| t.id.clone()).collect();
                (d.name().to_string(), ids)
            })
            .collect(),
        host: crate::runner::telemetry::host_info(),
        checkout: crate::runner::checkout::checkout(&exp.root),
        ..Manifest::default()
    };
    if let Some(r) = &suites.router {
        let indices = (0..r.messages.len()).map(|i| i.to_string()).collect();
        manifest.suite_tasks.insert("router".into(), indices);
        manifest.suite_digests.insert(
            "router".into(),
            crate::suite::SuiteDigests {
                tasks: r.digest.clone(),
                tools: String::new(),
                policy: String::new(),
            },
        );
    }
    manifest
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

/// The manifest of the first session, with what this session adds: its settings (the journal
/// allowed only the task filter, the wire's patience, the servers and the parallelism to change),
/// its servers, a model digest that could not be read before, and a note when a recorded digest
/// could not be read now.
fn session_manifest(
    exp: &Experiment,
    models: &[ModelInfo],
    hosts: &[Host],
) -> Result<Manifest, RunError> {
    let mut manifest = crate::runner::journal::read_manifest(&exp.run_dir)?;
    manifest.settings = serde_json::to_value(&exp.settings).unwrap_or_default();
    for h in hosts {
        match manifest.servers.iter_mut().find(|s| s.url == h.url) {
            Some(known) => {
                let models = std::mem::take(&mut known.models);
                *known = ServerInfo {
                    models,
                    ..h.info.clone()
                };
            }
            None => manifest.servers.push(h.info.clone()),
        }
    }
    for m in &mut manifest.models {
        let now = models.iter().find(|n| n.name == m.name);
        if m.digest.is_none() {
            m.digest = now.and_then(|n| n.digest.clone());
            if let Some(d) = &m.digest {
                manifest.warnings.push(format!(
                    "{}: earlier sessions ran with the model's digest unknown; records written                      before {} cannot be proved to come from digest {d}",
                    m.name,
                    crate::timefmt::now_rfc3339(),
                ));
            }
        } else if now.is_some_and(|n| n.digest.is_none()) {
            manifest.warnings.push(format!(
                "{}: a session started {} appended with the model's digest unknown \
                 (--allow-unknown-digest); its records cannot be proved to come from digest {}",
                m.name,
                crate::timefmt::now_rfc3339(),
                m.digest.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(manifest)
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
async fn play_plan(
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
        start_model(session, &model, sink).await?;
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

/// Plays the plan round by round (every task once per model); after each complete round the
/// confidence sequence is recomputed from the records, and the run stops once it decides. A
/// round's trials that end on a wire failure are played again before the sequence takes it, and
/// the run stops when they stay ungraded. A resumed run first replays the rounds on disk, so it
/// continues the same sequence.
async fn play_rounds(
    session: &mut Session<'_>,
    todo: &[TrialSpec],
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
    cancel: &AtomicBool,
) -> Result<(), RunError> {
    let mut state = update_sequence(session, sink, judge)?;
    let mut rest = todo;
    while !summary.interrupted && !rest.is_empty() {
        let round = rest[0].key().trial;
        let held = |st: &Judgement| {
            st.decided().is_some() || st.waiting.as_ref().is_some_and(|w| w.round < round)
        };
        if state.as_ref().is_some_and(held) {
            break;
        }
        let end = rest
            .iter()
            .position(|t| t.key().trial != round)
            .unwrap_or(rest.len());
        play_plan(session, &rest[..end], summary, sink, cancel).await?;
        state = update_sequence(session, sink, judge)?;
        let round_trials = &rest[..end];
        state = complete_round(session, round_trials, state, summary, sink, judge, cancel).await?;
        rest = &rest[end..];
    }
    summary.decided = state
        .as_ref()
        .and_then(|st| Some((*st.decided()?, st.says.clone())));
    summary.waiting = state.and_then(|st| {
        let w = st.waiting?;
        Some(format!(
            "round {} waits on {} trial(s) that ended on a wire failure; the confidence sequence \
             needs every pair of a round graded (resume the run, with --retry-failed once they are \
             out of wire tries)",
            w.round + 1,
            w.ungraded.len()
        ))
    });
    Ok(())
}

/// Plays again, up to [`MAX_WIRE_TRIES`] times in all, the trials of a just-played round that
/// ended ungraded, so that the sequence can take the round; returns the sequence's state after.
async fn complete_round(
    session: &mut Session<'_>,
    round: &[TrialSpec],
    mut state: Option<Judgement>,
    summary: &mut RunSummary,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
    cancel: &AtomicBool,
) -> Result<Option<Judgement>, RunError> {
    for _ in 1..MAX_WIRE_TRIES {
        let Some(w) = state.as_ref().and_then(|st| st.waiting.as_ref()) else {
            break;
        };
        let again: Vec<TrialSpec> = round
            .iter()
            .filter(|t| w.ungraded.contains(&t.key()))
            .cloned()
            .collect();
        if again.is_empty() || summary.interrupted {
            break;
        }
        for t in &again {
            session.journal.play_again(&t.key());
        }
        sink.emit(RunEvent::Info(format!(
            "round {}: {} trial(s) ended on a wire failure; playing them again, since the \
             confidence sequence needs every pair of the round graded",
            w.round + 1,
            again.len()
        )));
        play_plan(session, &again, summary, sink, cancel).await?;
        state = update_sequence(session, sink, judge)?;
    }
    Ok(state)
}

/// Recomputes the sequence from the run's records, appends the rounds `rounds.jsonl` lacks, and
/// says the last round's state; returns the rule's state (`None` for a run without it).
fn update_sequence(
    session: &Session<'_>,
    sink: &dyn EventSink,
    judge: &dyn RoundJudge,
) -> Result<Option<Judgement>, RunError> {
    let dir = session.journal.dir();
    let state = judge
        .judge(dir, &session.stage.exp.settings, &session.manifest)
        .map_err(SequenceError::Judge)?;
    let states = state.as_ref().map_or(&[][..], |st| &st.rounds);
    crate::runner::rounds::record(dir, states).map_err(|source| SequenceError::Write {
        path: dir.join(crate::runner::rounds::ROUNDS_FILE),
        source,
    })?;
    if let Some((st, last)) = state.as_ref().and_then(|st| Some((st, st.last()?))) {
        sink.emit(RunEvent::Info(format!(
            "round {}: difference {:+.1} pp, confidence sequence [{:+.1}, {:+.1}] pp over {} tasks: {}",
            last.round + 1,
            100.0 * last.mean,
            100.0 * last.low,
            100.0 * last.high,
            last.tasks,
            st.says
        )));
    }
    Ok(state)
}

/// Warms up a model on every server in the pool before its first trial (all at once) and records
/// what each warm-up found: per server in the manifest's `servers`, and the first server's in its
/// `models`.
async fn start_model(
    session: &mut Session<'_>,
    model: &str,
    sink: &dyn EventSink,
) -> Result<(), RunError> {
    let stage = &session.stage;
    let live = session.pool.live();
    if let Some(base) = session.manifest.models.iter().find(|m| m.name == model) {
        let warm = live.iter().map(|&h| {
            let mut info = base.clone();
            async move {
                let found = preflight::warm_up(
                    stage.hosts[h].client.as_ref(),
                    &stage.exp.settings,
                    &mut info,
                )
                .await;
                (h, info, found)
            }
        });
        let warmed = futures_util::future::join_all(warm).await;
        let several = stage.hosts.len() > 1;
        for (i, (h, info, found)) in warmed.into_iter().enumerate() {
            let url = &stage.hosts[h].url;
            for w in found? {
                let w = if several { format!("{url}: {w}") } else { w };
                // A resumed run warms the model up again: its warning is kept once.
                if !session.manifest.warnings.contains(&w) {
                    session.manifest.warnings.push(w.clone());
                }
                sink.emit(RunEvent::Warning(w));
            }
            record_warm_up(&mut session.manifest, url, &info, i == 0);
        }
    }
    session.journal.update_manifest(&session.manifest)?;
    sink.emit(RunEvent::ModelStarted {
        model: model.to_string(),
    });
    Ok(())
}

/// Puts a model's warm-up on `url` in the manifest: in that server's entry, and in `models` when
/// `first` (the first server in the pool).
fn record_warm_up(manifest: &mut Manifest, url: &str, info: &ModelInfo, first: bool) {
    if first && let Some(m) = manifest.models.iter_mut().find(|m| m.name == info.name) {
        *m = info.clone();
    }
    if let Some(server) = manifest.servers.iter_mut().find(|s| s.url == url) {
        server.models.retain(|m| m.name != info.name);
        server.models.push(info.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(digest: Option<&str>) -> ModelInfo {
        ModelInfo {
            name: "m".into(),
            digest: digest.map(String::from),
            ..ModelInfo::default()
        }
    }

    /// A stub experiment whose run directory is `dir`.
    fn experiment_in(dir: &Path, allow_unknown_digest: bool) -> Experiment {
        Experiment {
            settings: RunSettings::default(),
            root: PathBuf::from("."),
            hosts: vec!["http://127.0.0.1:9".into()],
            run_dir: dir.to_path_buf(),
            backend: Backend::Stub,
            experiment_file: None,
            telemetry: false,
            resume: ResumePolicy {
                allow_unknown_digest,
                ..ResumePolicy::default()
            },
        }
    }

    #[test]
    fn appending_with_an_unknown_digest_is_said_in_the_manifest() {
        let dir = tempfile::tempdir().expect("tmp");
        let recorded = Manifest {
            models: vec![model(Some("sha256:aa"))],
            ..Manifest::default()
        };
        crate::runner::journal::write_manifest(dir.path(), &recorded).expect("write");
        let exp = experiment_in(dir.path(), true);
        let known = session_manifest(&exp, &[model(Some("sha256:aa"))], &[]).expect("known");
        assert!(known.warnings.is_empty());
        let unknown = session_manifest(&exp, &[model(None)], &[]).expect("unknown");
        assert_eq!(unknown.models[0].digest.as_deref(), Some("sha256:aa"));
        assert!(
            unknown
                .warnings
                .iter()
                .any(|w| w.contains("--allow-unknown-digest")),
            "{:?}",
            unknown.warnings
        );
    }

    #[test]
    fn a_digest_learnt_after_sessions_without_it_is_said_in_the_manifest() {
        let dir = tempfile::tempdir().expect("tmp");
        let recorded = Manifest {
            models: vec![model(None)],
            ..Manifest::default()
        };
        crate::runner::journal::write_manifest(dir.path(), &recorded).expect("write");
        let exp = experiment_in(dir.path(), false);
        let still = session_manifest(&exp, &[model(None)], &[]).expect("still unknown");
        assert!(still.warnings.is_empty(), "{:?}", still.warnings);
        let learnt = session_manifest(&exp, &[model(Some("sha256:bb"))], &[]).expect("known");
        assert_eq!(learnt.models[0].digest.as_deref(), Some("sha256:bb"));
        assert!(
            learnt
                .warnings
                .iter()
                .any(|w| w.contains("cannot be proved to come from digest sha256:bb")),
            "{:?}",
            learnt.warnings
        );
    }
}
