//! [`SuiteChoice`]: a registered suite as `--suite`, the experiment file and the manifest name it.
//! Every value comes from [`SUITES`]; a name that is not registered does not parse.

use crate::suites::{Kind, Loader, SUITES};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One registered suite, by its place in [`SUITES`] (so suites sort in registration order).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SuiteChoice(usize);

/// Every suite, in registration order.
const ALL: [SuiteChoice; SUITES.len()] = {
    let mut out = [SuiteChoice(0); SUITES.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = SuiteChoice(i);
        i += 1;
    }
    out
};

/// Every suite's name, in registration order.
const NAMES: [&str; SUITES.len()] = {
    let mut out = [""; SUITES.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = SUITES[i].name;
        i += 1;
    }
    out
};

/// Whether two names are the same, at compile time.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

// Named like enum variants so that code naming one suite reads as before; a suite needs no
// constant of its own to be played.
#[allow(non_upper_case_globals)]
impl SuiteChoice {
    /// The store agent's conversations.
    pub const Store: SuiteChoice = SuiteChoice::registered("store");
    /// Standalone router messages.
    pub const Router: SuiteChoice = SuiteChoice::registered("router");
    /// The ticket-triage agent's tickets.
    pub const Triage: SuiteChoice = SuiteChoice::registered("triage");

    /// The suite registered as `name`; a name not registered fails the build.
    const fn registered(name: &str) -> SuiteChoice {
        let mut i = 0;
        while i < SUITES.len() {
            if same(SUITES[i].name, name) {
                return SuiteChoice(i);
            }
            i += 1;
        }
        panic!("no suite is registered under this name")
    }

    /// Every registered suite, in registration order.
    pub fn all() -> &'static [SuiteChoice] {
        &ALL
    }

    /// Every conversation suite (all but the router), in registration order.
    pub fn conversations() -> Vec<SuiteChoice> {
        ALL.into_iter().filter(|s| s.loader().is_some()).collect()
    }

    /// The registered suite called `name`; the error lists the names there are.
    pub fn parse(name: &str) -> Result<SuiteChoice, String> {
        NAMES
            .iter()
            .position(|n| *n == name)
            .map(SuiteChoice)
            .ok_or_else(|| {
                format!(
                    "unknown suite '{name}'; the suites are {}",
                    NAMES.join(", ")
                )
            })
    }

    /// The suite's name, as on the command line, in the manifest and in records.
    pub fn name(self) -> &'static str {
        SUITES[self.0].name
    }

    /// The loader of a conversation suite; `None` for the router.
    pub fn loader(self) -> Option<Loader> {
        match SUITES[self.0].kind {
            Kind::Conversation(load) => Some(load),
            Kind::Router => None,
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

impl fmt::Debug for SuiteChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for SuiteChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for SuiteChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SuiteChoice, D::Error> {
        let name = String::deserialize(d)?;
        SuiteChoice::parse(&name).map_err(|_| serde::de::Error::unknown_variant(&name, &NAMES))
    }
}

impl clap::ValueEnum for SuiteChoice {
    fn value_variants<'a>() -> &'a [SuiteChoice] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(SUITES[self.0].about))
    }
}
