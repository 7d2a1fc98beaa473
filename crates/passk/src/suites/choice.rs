//! [`SuiteChoice`]: a suite as `--suite`, the experiment file and the manifest name it: a
//! compiled-in suite of [`BUILT_IN`], or an MCP suite [`discover`](super::discover) found.

use crate::domain::{Domain, SuiteError};
use crate::suites::found::{bad_name, found_so_far, intern};
use crate::suites::{BUILT_IN, Kind};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;
use std::path::Path;

/// One suite, by name. Suites sort in registration order: the compiled-in ones first, then the
/// MCP suites by name.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SuiteChoice(&'static str);

// Named like enum variants so that code naming one suite reads as before.
#[allow(non_upper_case_globals)]
impl SuiteChoice {
    /// The store agent's conversations.
    pub const Store: SuiteChoice = SuiteChoice("store");
    /// Standalone router messages.
    pub const Router: SuiteChoice = SuiteChoice("router");
    /// The ticket-triage agent's tickets.
    pub const Triage: SuiteChoice = SuiteChoice("triage");

    /// The suite of this (interned) name.
    pub(crate) fn named(name: &'static str) -> SuiteChoice {
        SuiteChoice(name)
    }

    /// Every suite known in this process, in registration order: the compiled-in ones, then the
    /// MCP suites found.
    pub fn all() -> Vec<SuiteChoice> {
        BUILT_IN
            .iter()
            .map(|b| b.name)
            .chain(found_so_far())
            .map(SuiteChoice)
            .collect()
    }

    /// Every conversation suite (all but the router), in registration order.
    pub fn conversations() -> Vec<SuiteChoice> {
        let mut all = SuiteChoice::all();
        all.retain(|s| s.is_conversation());
        all
    }

    /// The suite called `name`; the error lists the names there are.
    pub fn parse(name: &str) -> Result<SuiteChoice, String> {
        SuiteChoice::all()
            .into_iter()
            .find(|s| s.0 == name)
            .ok_or_else(|| {
                let names: Vec<&str> = SuiteChoice::all().iter().map(|s| s.0).collect();
                format!(
                    "unknown suite '{name}'; the suites are {} (an MCP suite is a folder \
                     tasks/<name>/ with an mcp.json)",
                    names.join(", ")
                )
            })
    }

    /// The suite's name, as on the command line, in the manifest and in records.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// The compiled-in suite of this name, if it is one.
    fn built_in(self) -> Option<(usize, &'static super::Registered)> {
        BUILT_IN.iter().enumerate().find(|(_, b)| b.name == self.0)
    }

    /// Whether the suite is compiled in (its tools are Rust code).
    pub fn is_built_in(self) -> bool {
        self.built_in().is_some()
    }

    /// Whether the suite is played as conversations (every suite but the router).
    pub fn is_conversation(self) -> bool {
        !matches!(self.built_in(), Some((_, b)) if matches!(b.kind, Kind::Router))
    }

    /// Loads a conversation suite from the experiment directory `root`; `None` for the router.
    pub fn load(self, root: &Path) -> Option<Result<Box<dyn Domain>, SuiteError>> {
        match self.built_in() {
            Some((_, b)) => match b.kind {
                Kind::Conversation(load) => Some(load(root)),
                Kind::Router => None,
            },
            None => Some(crate::mcp::load(root, self.0)),
        }
    }

    /// What `--help` says the suite is.
    pub fn about(self) -> String {
        match self.built_in() {
            Some((_, b)) => b.about.to_string(),
            None => format!("Tools from an MCP server (tasks/{}/)", self.0),
        }
    }

    /// The names of the conversation suites, for messages (`store or triage`).
    pub fn conversation_names() -> String {
        let names: Vec<&str> = SuiteChoice::conversations()
            .into_iter()
            .map(SuiteChoice::name)
            .collect();
        names.join(" or ")
    }
}

impl Ord for SuiteChoice {
    fn cmp(&self, other: &SuiteChoice) -> Ordering {
        let rank = |s: &SuiteChoice| s.built_in().map_or(BUILT_IN.len(), |(i, _)| i);
        rank(self)
            .cmp(&rank(other))
            .then_with(|| self.0.cmp(other.0))
    }
}

impl PartialOrd for SuiteChoice {
    fn partial_cmp(&self, other: &SuiteChoice) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for SuiteChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for SuiteChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::str::FromStr for SuiteChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<SuiteChoice, String> {
        SuiteChoice::parse(s)
    }
}

impl Serialize for SuiteChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// Any well-formed name reads, so that a run's manifest reads wherever it is analysed; an
/// experiment file's names are checked against the suites there are by
/// [`RunSettings::validate`](crate::runner::settings::RunSettings::validate).
impl<'de> Deserialize<'de> for SuiteChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SuiteChoice, D::Error> {
        let name = String::deserialize(d)?;
        match bad_name(&name) {
            Some(why) => Err(serde::de::Error::custom(format!("suite {name:?}: {why}"))),
            None => Ok(SuiteChoice(intern(&name))),
        }
    }
}

impl clap::ValueEnum for SuiteChoice {
    fn value_variants<'a>() -> &'a [SuiteChoice] {
        // The list is made once per parse, after the experiment directory was looked through.
        Box::leak(SuiteChoice::all().into_boxed_slice())
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0).help(self.about()))
    }
}
