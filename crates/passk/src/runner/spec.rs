//! What a run is given (an [`Experiment`] and its [`Backend`]) and what it gives back (a
//! [`RunSummary`]).

use crate::runner::journal::ResumePolicy;
use crate::runner::record::Outcome;
use crate::runner::settings::RunSettings;
use crate::sequence::RoundState;
use crate::wire::chat::ApiKind;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    /// Trials the schedule had left to play when the session began.
    pub planned: usize,
    /// Stopped by the cancel flag before the schedule was done.
    pub interrupted: bool,
    /// Outcomes of the records written now.
    pub outcomes: BTreeMap<Outcome, usize>,
    /// With `--stop-when-decided`: the round whose confidence sequence decided, and what it
    /// says (naming the models).
    pub decided: Option<(RoundState, String)>,
    /// With `--stop-when-decided`: why the run stopped on a round that waits on ungraded trials.
    pub waiting: Option<String>,
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
