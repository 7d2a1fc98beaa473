//! `keep_alive` values as Ollama reads them (`api.Duration.UnmarshalJSON`): a number of seconds, or
//! a string in Go's `time.ParseDuration` syntax ("15m", "1h30m", "-1m"); a negative value keeps the
//! model loaded for ever, zero unloads it. Anything else is refused with Go's own error text.

use serde_json::Value;
use std::time::Duration;

/// How long a model stays loaded after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepAlive {
    /// A negative value: never unloaded.
    Forever,
    /// This long (zero: unloaded at once).
    For(Duration),
}

/// Reads a JSON `keep_alive` as Ollama does; the error is the text Ollama answers with a 400.
pub fn keep_alive(v: &Value) -> Result<KeepAlive, String> {
    match v {
        Value::Number(n) => {
            let secs = n.as_f64().unwrap_or(0.0);
            Ok(if secs < 0.0 {
                KeepAlive::Forever
            } else {
                KeepAlive::For(Duration::from_secs_f64(secs.min(1e12)))
            })
        }
        Value::String(s) => parse_go_duration(s).map(|ns| {
            if ns < 0 {
                KeepAlive::Forever
            } else {
                KeepAlive::For(Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)))
            }
        }),
        other => Err(format!("Unsupported type: '{}'", go_type(other))),
    }
}

/// The name Go's `reflect.TypeOf` gives a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Null => "<nil>",
    }
}

/// What to tell a user whose keep_alive Ollama would refuse.
pub const ACCEPTED: &str = "a Go duration such as 15m, 1h30m or 90s (a negative one such as -1m keeps the model loaded, 0 unloads it after each call)";

/// Go's `time.ParseDuration`: nanoseconds, or Go's error text.
pub fn parse_go_duration(orig: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {orig:?}");
    let mut s = orig;
    let mut neg = false;
    if let Some(rest) = s.strip_prefix('-') {
        neg = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let number = &s[..number_end];
        let (int, frac) = number.split_once('.').unwrap_or((number, ""));
        if !s.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            || number.matches('.').count() > 1
            || (int.is_empty() && frac.is_empty())
        {
            return Err(invalid());
        }
        s = &s[number_end..];
        let unit_end = s
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {orig:?}"));
        }
        s = &s[unit_end..];
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(format!("time: unknown unit {unit:?} in duration {orig:?}")),
        };
        let value: f64 = format!("{}.{}", if int.is_empty() { "0" } else { int }, frac)
            .trim_end_matches('.')
            .parse()
            .map_err(|_| invalid())?;
        total += value * scale;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
    }
    let ns = total as i128;
    Ok(if neg { -ns } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_durations_and_numbers_are_read_as_ollama_reads_them() {
        assert_eq!(parse_go_duration("15m"), Ok(900_000_000_000));
        assert_eq!(parse_go_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_go_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_go_duration("-1m"), Ok(-60_000_000_000));
        assert_eq!(parse_go_duration("0"), Ok(0));
        assert_eq!(
            parse_go_duration("600"),
            Err("time: missing unit in duration \"600\"".to_string())
        );
        assert_eq!(
            parse_go_duration("-1"),
            Err("time: missing unit in duration \"-1\"".to_string())
        );
        assert_eq!(
            parse_go_duration("forever"),
            Err("time: invalid duration \"forever\"".to_string())
        );
        assert_eq!(
            parse_go_duration("5d"),
            Err("time: unknown unit \"d\" in duration \"5d\"".to_string())
        );
        assert!(parse_go_duration("").is_err());
        assert_eq!(keep_alive(&json!(-1)), Ok(KeepAlive::Forever));
        assert_eq!(
            keep_alive(&json!(600)),
            Ok(KeepAlive::For(Duration::from_secs(600)))
        );
        assert_eq!(keep_alive(&json!(0)), Ok(KeepAlive::For(Duration::ZERO)));
        assert_eq!(keep_alive(&json!("-1m")), Ok(KeepAlive::Forever));
        assert_eq!(
            keep_alive(&json!(true)),
            Err("Unsupported type: 'bool'".to_string())
        );
    }
}
