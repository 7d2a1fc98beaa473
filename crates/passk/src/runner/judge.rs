//! The round judge: what a run that stops when decided asks after each complete round. The
//! stopping rule's state is read back from the run's records, which is the analysis stage's work,
//! so the runner does not compute it: the command hands `experiment::run` a judge, as it hands it
//! an event sink, and the runner acts on the [`Judgement`].

use crate::runner::record::{Manifest, TrialKey};
use crate::runner::settings::RunSettings;
use crate::sequence::RoundState;
use std::path::Path;

/// Why a judge could not read the run's records.
pub type JudgeError = Box<dyn std::error::Error + Send + Sync>;

/// Reads the records a run has written and says where its stopping rule stands.
pub trait RoundJudge: Send + Sync {
    /// The rule's state after the rounds whose records are in `dir`; `None` for a run without the
    /// rule (or without two models and a conversation suite).
    fn judge(
        &self,
        dir: &Path,
        settings: &RunSettings,
        manifest: &Manifest,
    ) -> Result<Option<Judgement>, JudgeError>;
}

/// The stopping rule's state as the runner needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The sequence's state after each complete round, up to the first that decides (what
    /// `rounds.jsonl` holds).
    pub rounds: Vec<RoundState>,
    /// The last round's decision ("not decided" before any round), naming the models.
    pub says: String,
    /// The round that waits on trials that ended ungraded, if one does.
    pub waiting: Option<WaitingRound>,
}

/// A round whose trials all have records, some of which ended ungraded.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingRound {
    /// Round number (the trial index, from 0).
    pub round: u32,
    /// The keys of the compared trials of that round that ended ungraded.
    pub ungraded: Vec<TrialKey>,
}

impl Judgement {
    /// The last complete round's state.
    pub fn last(&self) -> Option<&RoundState> {
        self.rounds.last()
    }

    /// The state of the round that decided, if one did.
    pub fn decided(&self) -> Option<&RoundState> {
        self.last().filter(|s| s.decision.stops())
    }
}
