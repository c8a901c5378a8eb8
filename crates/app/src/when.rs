//! Parsing `--since` / `--until` values into instants, in the local timezone.
//!
//! Accepted forms: a bare date (`2026-09-30`: a whole local calendar day, so `--since` takes
//! its first instant and `--until` its last), a local date-time without offset
//! (`2026-09-30T14:30`, seconds and a fraction optional, a space instead of `T` allowed), an
//! RFC 3339 instant with `Z` or an offset, or an age before now (`45s`, `30m`, `2h`, `3d`,
//! `1w`). Anything else, or a date that does not exist, is a usage error.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use pi_retrospect_core::Timestamp;

/// Which end of a range a value bounds; a bare date means its first or its last instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--since`: the range starts here.
    Start,
    /// `--until`: the range ends here (inclusive).
    End,
}

/// Returns the instant `text` denotes, or a message saying why it is not one.
pub fn parse_when(
    text: &str,
    bound: Bound,
    now: jiff::Timestamp,
    zone: &TimeZone,
) -> Result<Timestamp, String> {
    let text = text.trim();
    if let Some(age) = parse_age(text) {
        let seconds = age.ok_or_else(|| format!("{text:?} is too long ago"))?;
        let instant = now
            .checked_sub(jiff::SignedDuration::from_secs(seconds))
            .map_err(|_| format!("{text:?} is too long ago"))?;
        return Ok(to_core(instant));
    }
    if is_bare_date(text) {
        let date: Date = text
            .parse()
            .map_err(|error| format!("{text:?} is not a real date: {error}"))?;
        let instant = match bound {
            Bound::Start => date
                .to_zoned(zone.clone())
                .map_err(|error| format!("{text:?}: {error}"))?
                .timestamp(),
            Bound::End => {
                let next = date
                    .tomorrow()
                    .map_err(|error| format!("{text:?}: {error}"))?
                    .to_zoned(zone.clone())
                    .map_err(|error| format!("{text:?}: {error}"))?
                    .timestamp();
                next.checked_sub(jiff::SignedDuration::from_nanos(1))
                    .map_err(|error| format!("{text:?}: {error}"))?
            }
        };
        return Ok(to_core(instant));
    }
    if has_offset(text) {
        return match pi_retrospect_core::timestamp::parse(&text.replacen(' ', "T", 1)) {
            Some(instant) => Ok(instant),
            None => Err(format!(
                "{text:?} is not a real instant (expected e.g. 2026-09-30T14:30:00Z)"
            )),
        };
    }
    let local: DateTime = text.replacen(' ', "T", 1).parse().map_err(|error| {
        format!("{text:?} is not a date, a date-time or an age like 3d ({error})")
    })?;
    let instant = local
        .to_zoned(zone.clone())
        .map_err(|error| format!("{text:?}: {error}"))?
        .timestamp();
    Ok(to_core(instant))
}

/// Returns `Some(Some(seconds))` for an age like `3d`, `Some(None)` when it overflows, `None`
/// when `text` is not an age.
fn parse_age(text: &str) -> Option<Option<i64>> {
    let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(unit_at);
    if number.is_empty() {
        return None;
    }
    let unit_seconds = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return None,
    };
    Some(
        number
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(unit_seconds)),
    )
}

fn is_bare_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(idx, byte)| idx == 4 || idx == 7 || byte.is_ascii_digit())
}

/// Returns whether a date-time carries `Z` or a numeric offset after its time part.
fn has_offset(text: &str) -> bool {
    let Some(time) = text.get(11..) else {
        return false;
    };
    time.ends_with('Z') || time.ends_with('z') || time.contains('+') || time.contains('-')
}

fn to_core(instant: jiff::Timestamp) -> Timestamp {
    Timestamp {
        seconds: instant.as_second(),
        nanos: u32::try_from(instant.subsec_nanosecond()).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, bound: Bound, expected: Result<&str, &str>) {
        let zone = TimeZone::fixed(jiff::tz::offset(2));
        let now: jiff::Timestamp = "2026-10-10T12:00:00Z".parse().expect("now");
        let actual = parse_when(text, bound, now, &zone).map(|instant| instant.to_string());
        match expected {
            Ok(expected) => assert_eq!(actual.as_deref(), Ok(expected), "{text}"),
            Err(fragment) => {
                let message = actual.expect_err(text);
                assert!(message.contains(fragment), "{text}: {message}");
            }
        }
    }

    #[test]
    fn forms() {
        check("2026-09-30", Bound::Start, Ok("2026-09-29T22:00:00.000Z"));
        check("2026-09-30", Bound::End, Ok("2026-09-30T21:59:59.999Z"));
        check(
            "2026-09-30T14:30",
            Bound::Start,
            Ok("2026-09-30T12:30:00.000Z"),
        );
        check(
            "2026-09-30 14:30:15",
            Bound::End,
            Ok("2026-09-30T12:30:15.000Z"),
        );
        check(
            "2026-09-30T14:30:00Z",
            Bound::Start,
            Ok("2026-09-30T14:30:00.000Z"),
        );
        check(
            "2026-09-30T14:30:00-01:00",
            Bound::Start,
            Ok("2026-09-30T15:30:00.000Z"),
        );
        check("2h", Bound::Start, Ok("2026-10-10T10:00:00.000Z"));
        check("3d", Bound::Start, Ok("2026-10-07T12:00:00.000Z"));
        check("1w", Bound::End, Ok("2026-10-03T12:00:00.000Z"));
        check("30m", Bound::Start, Ok("2026-10-10T11:30:00.000Z"));
    }

    #[test]
    fn refusals() {
        check("2026-02-30", Bound::Start, Err("not a real date"));
        check("2026-13-01", Bound::End, Err("not a real date"));
        check("yesterday", Bound::Start, Err("not a date"));
        check("3y", Bound::Start, Err("not a date"));
        check("2026-09-30T25:00", Bound::Start, Err("not a date"));
        check(
            "2026-02-30T10:00:00Z",
            Bound::Start,
            Err("not a real instant"),
        );
        check("99999999999999999d", Bound::Start, Err("too long ago"));
    }
}
