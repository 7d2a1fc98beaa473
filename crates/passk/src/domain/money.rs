//! An amount of money in cents: the store's prices, and the amounts the graders look for in replies.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An amount of money in cents, written `"64.00"` in the data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(pub u64);

impl Money {
    /// Parses `"64"`, `"64.5"` or `"64.50"` (an optional leading `$` is allowed).
    pub fn parse(text: &str) -> Option<Money> {
        let t = text.trim().trim_start_matches('$');
        let (whole, frac) = match t.split_once('.') {
            Some((w, f)) => (w, f),
            None => (t, ""),
        };
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || whole.len() > 12 {
            return None;
        }
        if frac.len() > 2 || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let w: u64 = whole.parse().ok()?;
        let f: u64 = match frac.len() {
            0 => 0,
            1 => frac.parse::<u64>().ok()? * 10,
            _ => frac.parse().ok()?,
        };
        Some(Money(w * 100 + f))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Money::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("invalid amount '{s}', expected e.g. \"64.00\""))
        })
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
