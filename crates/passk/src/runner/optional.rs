//! Optional numbers in the width of the number: a record holds a dozen per model call, and an
//! `Option<u64>` or `Option<f64>` takes twice the bytes of its value (a report over 100,000
//! conversations held a quarter of a million calls). One value of each type that no record can
//! carry stands for "absent": `NaN` for a float (JSON has none), the largest `u64` and the smallest
//! `i64` for integers (a record that writes one is refused when read).
//!
//! On disk an [`Opt`] is exactly the `Option` it replaces: the number, or `null` or nothing.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number type with one value kept for "absent".
pub trait Sentinel: Copy + PartialEq + fmt::Debug {
    /// The value that stands for "absent".
    const ABSENT: Self;
    /// Whether `self` is that value.
    fn is_absent(self) -> bool;
}

impl Sentinel for u64 {
    const ABSENT: u64 = u64::MAX;
    fn is_absent(self) -> bool {
        self == u64::MAX
    }
}

impl Sentinel for i64 {
    const ABSENT: i64 = i64::MIN;
    fn is_absent(self) -> bool {
        self == i64::MIN
    }
}

impl Sentinel for f64 {
    const ABSENT: f64 = f64::NAN;
    fn is_absent(self) -> bool {
        self.is_nan()
    }
}

/// An optional number stored in the number's own width; [`Opt::get`] gives the `Option`.
#[derive(Clone, Copy)]
pub struct Opt<T: Sentinel>(T);

impl<T: Sentinel> Opt<T> {
    /// Absent.
    pub const NONE: Opt<T> = Opt(T::ABSENT);

    /// The number, if present.
    #[inline]
    pub fn get(self) -> Option<T> {
        (!self.0.is_absent()).then_some(self.0)
    }

    /// Whether the number is absent.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.0.is_absent()
    }

    /// Whether the number is present.
    #[inline]
    pub fn is_some(&self) -> bool {
        !self.0.is_absent()
    }
}

impl<T: Sentinel> Default for Opt<T> {
    fn default() -> Self {
        Opt::NONE
    }
}

impl<T: Sentinel> From<Option<T>> for Opt<T> {
    /// `Some` of the absent value itself (a float's `NaN`) is absent, as JSON writes it.
    fn from(value: Option<T>) -> Self {
        Opt(value.unwrap_or(T::ABSENT))
    }
}

impl<T: Sentinel> From<Opt<T>> for Option<T> {
    fn from(value: Opt<T>) -> Self {
        value.get()
    }
}

impl<T: Sentinel> PartialEq for Opt<T> {
    /// Equal as the `Option`s are (two absent floats are equal).
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Opt<u64> {}
impl Eq for Opt<i64> {}

impl<T: Sentinel> fmt::Debug for Opt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl<T: Sentinel + Serialize> Serialize for Opt<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de, T: Sentinel + Deserialize<'de>> Deserialize<'de> for Opt<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Option::<T>::deserialize(d)? {
            Some(v) if v.is_absent() => Err(serde::de::Error::custom(format_args!(
                "{v:?} is out of range for a recorded figure (it stands for an absent one)"
            ))),
            v => Ok(Opt::from(v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Figures {
        #[serde(default, skip_serializing_if = "Opt::is_none")]
        count: Opt<u64>,
        #[serde(default, skip_serializing_if = "Opt::is_none")]
        seconds: Opt<f64>,
        #[serde(default)]
        seed: Opt<i64>,
    }

    #[test]
    fn an_opt_reads_and_writes_as_the_option_it_replaces() {
        let full = Figures {
            count: Some(0).into(),
            seconds: Some(1.5).into(),
            seed: Some(-3).into(),
        };
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(text, r#"{"count":0,"seconds":1.5,"seed":-3}"#);
        assert_eq!(serde_json::from_str::<Figures>(&text).unwrap(), full);

        let empty: Figures = serde_json::from_str(r#"{"seconds":null}"#).unwrap();
        assert_eq!(
            (empty.count.get(), empty.seconds.get(), empty.seed.get()),
            (None, None, None)
        );
        assert_eq!(serde_json::to_string(&empty).unwrap(), r#"{"seed":null}"#);
    }

    #[test]
    fn a_number_kept_for_absent_is_refused_when_read() {
        let err = serde_json::from_str::<Figures>(r#"{"count":18446744073709551615}"#).unwrap_err();
        assert!(err.to_string().contains("18446744073709551615"), "{err}");
        assert!(serde_json::from_str::<Figures>(r#"{"seed":-9223372036854775808}"#).is_err());
        assert!(serde_json::from_str::<Figures>(r#"{"count":18446744073709551614}"#).is_ok());
    }

    #[test]
    fn opts_compare_and_print_as_options() {
        assert_eq!(Opt::<f64>::NONE, Opt::from(None));
        assert_eq!(Opt::from(Some(f64::NAN)), Opt::<f64>::NONE);
        assert_ne!(Opt::from(Some(2.0)), Opt::<f64>::NONE);
        assert_eq!(format!("{:?}", Opt::from(Some(7u64))), "Some(7)");
        assert_eq!(format!("{:?}", Opt::<u64>::NONE), "None");
        assert_eq!(std::mem::size_of::<Opt<f64>>(), 8);
    }
}
