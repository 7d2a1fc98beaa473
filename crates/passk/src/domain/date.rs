//! A calendar date without time zones: enough for the store's "today", delivery dates and the
//! return window, and for the graders' written date forms. Parsing accepts `YYYY-MM-DD` only.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A proleptic Gregorian date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Year (four digits).
    pub year: i32,
    /// Month, 1..=12.
    pub month: u32,
    /// Day of the month, 1..=31.
    pub day: u32,
}

/// English month names, January first.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

impl Date {
    /// Parses `YYYY-MM-DD`; `None` for anything else or an impossible day.
    pub fn parse(text: &str) -> Option<Date> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let year: i32 = text.get(0..4)?.parse().ok()?;
        let month: u32 = text.get(5..7)?.parse().ok()?;
        let day: u32 = text.get(8..10)?.parse().ok()?;
        let date = Date { year, month, day };
        ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)).then_some(date)
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days_since_epoch(self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Whole days from `earlier` to `self` (negative when `earlier` is later).
    pub fn days_after(self, earlier: Date) -> i64 {
        self.days_since_epoch() - earlier.days_since_epoch()
    }

    /// The month's English name in lower case.
    pub fn month_name(self) -> &'static str {
        MONTHS[(self.month as usize).saturating_sub(1).min(11)]
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Date::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("invalid date '{s}', expected YYYY-MM-DD"))
        })
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_counts_days() {
        let a = Date::parse("2026-10-15").expect("valid");
        let b = Date::parse("2026-09-15").expect("valid");
        assert_eq!(a.days_after(b), 30);
        assert_eq!(
            Date::parse("1970-01-01").map(Date::days_since_epoch),
            Some(0)
        );
        assert_eq!(a.to_string(), "2026-10-15");
        assert_eq!(a.month_name(), "october");
    }

    #[test]
    fn rejects_bad_dates() {
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "26-10-15",
            "2026/10/15",
            "",
            "2026-1-015",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
        assert!(Date::parse("2028-02-29").is_some());
    }
}
