//! The levels of one factor of a run (`--tool-docs bare,documented`, `--router-in-front off,on`):
//! one value or several, played as a full factorial. One level is written as the bare value, as
//! before factors took several, so older manifests read back and their default run ids stay the
//! same; several are written as a list.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One or more values of a factor, in the order given (never empty once validated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels<T>(pub Vec<T>);

impl<T: Copy> Levels<T> {
    /// A factor held at one value.
    pub fn one(v: T) -> Levels<T> {
        Levels(vec![v])
    }

    /// The first level: the one a single-valued run has, and the one the toolless baseline uses.
    pub fn first(&self) -> Option<T> {
        self.0.first().copied()
    }

    /// Whether the run varies this factor.
    pub fn varies(&self) -> bool {
        self.0.len() > 1
    }

    /// The single level, when there is exactly one.
    pub fn single(&self) -> Option<T> {
        (self.0.len() == 1).then(|| self.0[0])
    }
}

impl<T: Serialize> Serialize for Levels<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Levels<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Levels<T>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany<T> {
            One(T),
            Many(Vec<T>),
        }
        Ok(match OneOrMany::deserialize(d)? {
            OneOrMany::One(v) => Levels(vec![v]),
            OneOrMany::Many(v) => Levels(v),
        })
    }
}

/// The levels a manifest's settings declare for `key` (`None`: absent or unreadable, as in an
/// imported run's settings).
pub fn declared<T: for<'de> Deserialize<'de>>(
    settings: &serde_json::Value,
    key: &str,
) -> Option<Levels<T>> {
    serde_json::from_value(settings.get(key)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_level_reads_and_writes_as_the_bare_value() {
        let one: Levels<bool> = serde_json::from_str("true").expect("one");
        assert_eq!(one, Levels::one(true));
        assert_eq!(serde_json::to_string(&one).expect("json"), "true");
        let two: Levels<bool> = serde_json::from_str("[false, true]").expect("two");
        assert_eq!(two.0, vec![false, true]);
        assert_eq!(serde_json::to_string(&two).expect("json"), "[false,true]");
        assert!(two.varies() && two.single().is_none());
    }
}
