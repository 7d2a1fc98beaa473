//! RFC 3339 timestamps (UTC) without a date-time dependency: manifests record when a run was
//! created, and the stub writes Ollama's `created_at`.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` as `YYYY-MM-DDTHH:MM:SSZ`; when `nanos`, with the fraction of a second as Go's
/// `time.RFC3339Nano` writes it (and so Ollama's JSON times): up to nine digits, trailing zeros
/// dropped, and no fraction at all on a whole second.
pub fn rfc3339(t: SystemTime, nanos: bool) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let fraction = if nanos && d.subsec_nanos() > 0 {
        let digits = format!(".{:09}", d.subsec_nanos());
        digits.trim_end_matches('0').to_string()
    } else {
        String::new()
    };
    format!("{y:04}-{m:02}-{day:02}T{hh:02}:{mm:02}:{ss:02}{fraction}Z")
}

/// The current time, to the second.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now(), false)
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn formats() {
        let t = UNIX_EPOCH + Duration::new(1_796_006_590, 5);
        assert_eq!(rfc3339(t, false), "2026-11-30T02:43:10Z");
        assert_eq!(rfc3339(t, true), "2026-11-30T02:43:10.000000005Z");
        let leap = UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(rfc3339(leap, false), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn nanoseconds_are_written_as_go_writes_rfc3339_nano() {
        // Go: time.Unix(s, ns).UTC().Format(time.RFC3339Nano), as encoding/json writes a time.
        let at = |ns: u32| rfc3339(UNIX_EPOCH + Duration::new(1_709_210_096, ns), true);
        assert_eq!(at(0), "2024-02-29T12:34:56Z");
        assert_eq!(at(120_000_000), "2024-02-29T12:34:56.12Z");
        assert_eq!(at(499_127_000), "2024-02-29T12:34:56.499127Z");
        assert_eq!(at(999_999_999), "2024-02-29T12:34:56.999999999Z");
        assert_eq!(at(10), "2024-02-29T12:34:56.00000001Z");
    }
}
