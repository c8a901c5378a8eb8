//! Parsing time values (`--since`, `--until`, `--active-since`, `--active-until`) into
//! instants, in the local time zone.
//!
//! Accepted forms ([`ACCEPTED`] says it to the user):
//! - a bare date (`2026-09-30`): a whole local calendar day, so a start bound takes its first
//!   instant and an end bound its last;
//! - `today`, `yesterday`: that whole local day, the same way; `now`: this instant;
//! - a local date-time without offset (`2026-09-30T14:30`, seconds and a fraction optional, a
//!   space instead of `T` allowed);
//! - an RFC 3339 instant with `Z` or an offset;
//! - an age before now: a number and a unit, upper or lower case, a space between them
//!   allowed: `s`, `m`/`min`, `h`, `d`, `w`, `mo` (calendar months), `y` (calendar years), and
//!   their long forms (`3 days`, `2weeks`). A bare `M` is refused as ambiguous (minutes or
//!   months?).
//!
//! Anything else, or a date that does not exist, is an error whose message lists the accepted
//! forms.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use pi_retrospect_core::Timestamp;

/// What a time value may be, as the error message for a value that is none of these says it.
pub const ACCEPTED: &str = "a date (2026-09-30), today, yesterday, now, a local date-time \
(2026-09-30T14:30), an RFC 3339 instant (2026-09-30T14:30:00Z), or an age: a number and a \
unit s, m/min, h, d, w, mo, y (30m, 2h, 3d, 1w, 6mo, 1y)";

/// Which end of a range a value bounds; a bare date means its first or its last instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--since`: the range starts here.
    Start,
    /// `--until`: the range ends here (inclusive).
    End,
}

/// Returns the instant `text` denotes, or a message saying why it is not one (and, when the
/// value is not understood at all, what is accepted).
pub fn parse_when(
    text: &str,
    bound: Bound,
    now: jiff::Timestamp,
    zone: &TimeZone,
) -> Result<Timestamp, String> {
    let text = text.trim();
    let not_understood = || format!("{text:?} is not understood; expected {ACCEPTED}");
    match text.to_ascii_lowercase().as_str() {
        "now" => return Ok(to_core(now)),
        "today" => return Ok(day_bound(now.to_zoned(zone.clone()).date(), bound, zone)),
        "yesterday" => {
            let today = now.to_zoned(zone.clone()).date();
            let yesterday = today
                .yesterday()
                .map_err(|error| format!("{text:?}: {error}"))?;
            return Ok(day_bound(yesterday, bound, zone));
        }
        _ => {}
    }
    if let Some(age) = parse_age(text) {
        let (number, unit) = age?;
        let too_long_ago = || format!("{text:?} is too long ago");
        let span = match unit {
            AgeUnit::Seconds(unit_seconds) => {
                let seconds = number.checked_mul(unit_seconds).ok_or_else(too_long_ago)?;
                jiff::Span::new()
                    .try_seconds(seconds)
                    .map_err(|_| too_long_ago())?
            }
            AgeUnit::Months => jiff::Span::new()
                .try_months(number)
                .map_err(|_| too_long_ago())?,
            AgeUnit::Years => jiff::Span::new()
                .try_years(number)
                .map_err(|_| too_long_ago())?,
        };
        // Months and years count back on the local calendar (a month before March 31 is the
        // last day of February); seconds to weeks are exact durations.
        let instant = now
            .to_zoned(zone.clone())
            .checked_sub(span)
            .map_err(|_| too_long_ago())?
            .timestamp();
        return Ok(to_core(instant));
    }
    if is_bare_date(text) {
        let date: Date = text.parse().map_err(|_| {
            format!("{text:?} is not a real date (no such day); expected {ACCEPTED}")
        })?;
        return Ok(day_bound(date, bound, zone));
    }
    if !looks_like_date_time(text) {
        return Err(not_understood());
    }
    if has_offset(text) {
        return match pi_retrospect_core::timestamp::parse(&text.replacen(' ', "T", 1)) {
            Some(instant) => Ok(instant),
            None => Err(format!(
                "{text:?} is not a real instant (expected e.g. 2026-09-30T14:30:00Z)"
            )),
        };
    }
    let local: DateTime = text
        .replacen(' ', "T", 1)
        .parse()
        .map_err(|_| format!("{text:?} is not a real date-time; expected {ACCEPTED}"))?;
    Ok(local.to_zoned(zone.clone()).map_or_else(
        |_| beyond_the_calendar(local.year()),
        |local| to_core(local.timestamp()),
    ))
}

/// Returns the inclusive instants a pair of inputs (since and until, or active-since and
/// active-until) denotes, refusing a value that is not a time and an empty range. Each error
/// is about the input that is wrong (an empty range: its end).
pub(crate) fn time_bounds(
    (since_input, since): (crate::Input, Option<&str>),
    (until_input, until): (crate::Input, Option<&str>),
    env: &crate::Environment,
) -> Result<(Option<Timestamp>, Option<Timestamp>), crate::AppError> {
    let bound = |input: crate::Input, value: Option<&str>, which: Bound| {
        value
            .map(|text| {
                parse_when(text, which, env.now, &env.time_zone)
                    .map_err(|message| crate::AppError::bad_input(input, message))
            })
            .transpose()
    };
    let since = bound(since_input, since, Bound::Start)?;
    let until = bound(until_input, until, Bound::End)?;
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        return Err(crate::AppError::bad_input_mentioning(
            until_input,
            &format!("{until} is before "),
            since_input,
            &format!(" ({since}): the range is empty"),
        ));
    }
    Ok((since, until))
}

/// Returns the first (start) or last (end) instant of the local day `date`.
fn day_bound(date: Date, bound: Bound, zone: &TimeZone) -> Timestamp {
    let instant = match bound {
        Bound::Start => date.to_zoned(zone.clone()).map(|start| start.timestamp()),
        Bound::End => date
            .tomorrow()
            .and_then(|next| next.to_zoned(zone.clone()))
            .and_then(|next| {
                next.timestamp()
                    .checked_sub(jiff::SignedDuration::from_nanos(1))
            }),
    };
    instant.map_or_else(|_| beyond_the_calendar(date.year()), to_core)
}

/// Returns the instant a real date or date-time of `year` stands for when its local time
/// falls past the calendar the tool computes in (about 9999-12-30 to -9999-01-01): the last
/// instant for a date at the far end, the first for one at the near end. A script's
/// `--until 9999-12-31` means "no upper bound", and keeps every session, rather than failing
/// with the date library's overflow message (say what is accepted, never the
/// parser's internals).
fn beyond_the_calendar(year: i16) -> Timestamp {
    to_core(if year > 0 {
        jiff::Timestamp::MAX
    } else {
        jiff::Timestamp::MIN
    })
}

/// The unit of an age.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AgeUnit {
    /// An exact duration of this many seconds per unit.
    Seconds(i64),
    /// Calendar months.
    Months,
    /// Calendar years.
    Years,
}

/// Returns `Some(Ok((number, unit)))` for an age like `3d`, `Some(Err(message))` for a number
/// followed by a unit that is not one, `None` when `text` does not start with a number.
fn parse_age(text: &str) -> Option<Result<(i64, AgeUnit), String>> {
    let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(unit_at);
    if number.is_empty() || !unit.starts_with(|c: char| c.is_ascii_alphabetic() || c == ' ') {
        return None;
    }
    let unit = unit.trim_start();
    if unit == "M" {
        return Some(Err(format!(
            "{text:?} is ambiguous: write {number}min for minutes or {number}mo for months"
        )));
    }
    let unit = match unit.to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => AgeUnit::Seconds(1),
        "m" | "min" | "mins" | "minute" | "minutes" => AgeUnit::Seconds(60),
        "h" | "hr" | "hrs" | "hour" | "hours" => AgeUnit::Seconds(3600),
        "d" | "day" | "days" => AgeUnit::Seconds(86_400),
        "w" | "wk" | "wks" | "week" | "weeks" => AgeUnit::Seconds(7 * 86_400),
        "mo" | "mos" | "month" | "months" => AgeUnit::Months,
        "y" | "yr" | "yrs" | "year" | "years" => AgeUnit::Years,
        _ => {
            return Some(Err(format!(
                "{text:?} is not understood: {unit:?} is not a unit; expected {ACCEPTED}"
            )));
        }
    };
    match number.parse::<i64>() {
        Ok(number) => Some(Ok((number, unit))),
        Err(_) => Some(Err(format!("{text:?} is too long ago"))),
    }
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

/// Returns whether `text` starts like a date-time: `YYYY-MM-DD` and then `T`, `t` or a space.
fn looks_like_date_time(text: &str) -> bool {
    text.get(..10).is_some_and(is_bare_date)
        && matches!(text.as_bytes().get(10), Some(b'T' | b't' | b' '))
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
    fn days_and_calendar_ages() {
        // Now is 2026-10-10T14:00 local (UTC+2).
        check("today", Bound::Start, Ok("2026-10-09T22:00:00.000Z"));
        check("Today", Bound::End, Ok("2026-10-10T21:59:59.999Z"));
        check("yesterday", Bound::Start, Ok("2026-10-08T22:00:00.000Z"));
        check("YESTERDAY", Bound::End, Ok("2026-10-09T21:59:59.999Z"));
        check("now", Bound::End, Ok("2026-10-10T12:00:00.000Z"));
        check("1y", Bound::Start, Ok("2025-10-10T12:00:00.000Z"));
        check("2Y", Bound::Start, Ok("2024-10-10T12:00:00.000Z"));
        check("1mo", Bound::Start, Ok("2026-09-10T12:00:00.000Z"));
        check("13MO", Bound::Start, Ok("2025-09-10T12:00:00.000Z"));
        check("3D", Bound::Start, Ok("2026-10-07T12:00:00.000Z"));
        check("2H", Bound::Start, Ok("2026-10-10T10:00:00.000Z"));
        check("90min", Bound::Start, Ok("2026-10-10T10:30:00.000Z"));
        check("3 days", Bound::Start, Ok("2026-10-07T12:00:00.000Z"));
        check("2weeks", Bound::Start, Ok("2026-09-26T12:00:00.000Z"));
        check(" 45s ", Bound::Start, Ok("2026-10-10T11:59:15.000Z"));
    }

    /// A real date at the calendar's ends stands for the first or last
    /// instant instead of failing with the date library's overflow message.
    #[test]
    fn dates_past_the_calendar_are_its_ends() {
        let last = to_core(jiff::Timestamp::MAX).to_string();
        for text in ["9999-12-31", "9999-12-31T23:59", "9999-12-31 23:59:59"] {
            check(text, Bound::End, Ok(&last));
        }
        for text in ["9999-12-31T23:59", "9999-12-31 23:59:59"] {
            check(text, Bound::Start, Ok(&last));
        }
        // The day's start is still on the calendar at two hours east of UTC.
        check("9999-12-31", Bound::Start, Ok("9999-12-30T22:00:00.000Z"));
        // Inside the calendar nothing changes.
        check("9999-12-29", Bound::Start, Ok("9999-12-28T22:00:00.000Z"));
    }

    #[test]
    fn refusals() {
        // Our own message with the accepted forms, not the date library's
        // ("parameter 'day' for `2026-02` is invalid, must be in range `1..=28`").
        for text in ["2026-02-30", "2026-13-01"] {
            check(
                text,
                Bound::Start,
                Err("not a real date (no such day); expected "),
            );
            let message = parse_when(
                text,
                Bound::End,
                jiff::Timestamp::UNIX_EPOCH,
                &TimeZone::UTC,
            )
            .expect_err(text);
            assert!(!message.contains("parameter"), "{message}");
        }
        check(
            "2026-09-30T25:00",
            Bound::Start,
            Err("not a real date-time"),
        );
        check(
            "2026-02-30T10:00:00Z",
            Bound::Start,
            Err("not a real instant"),
        );
        check("99999999999999999d", Bound::Start, Err("too long ago"));
        check("99999999999y", Bound::Start, Err("too long ago"));
        check(
            "3M",
            Bound::Start,
            Err("ambiguous: write 3min for minutes or 3mo"),
        );
        // A value that is not understood says what is accepted, never the parser's
        // internals.
        for text in ["tomorrow", "3x", "last week", "", "d3", "2026-09"] {
            let zone = TimeZone::UTC;
            let message =
                parse_when(text, Bound::Start, jiff::Timestamp::UNIX_EPOCH, &zone).expect_err(text);
            assert!(message.contains(ACCEPTED), "{text}: {message}");
            assert!(!message.contains("failed to"), "{text}: {message}");
        }
    }
}
