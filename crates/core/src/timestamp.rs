//! Strict ISO 8601 timestamps as Pi writes them in session headers.
//!
//! The accepted shape is `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`: the subset that
//! JavaScript's `Date.parse` reads the same way everywhere. On top of the shape, the value must
//! denote a real instant: the day exists in that month (`2026-02-30` does not, `2024-02-29`
//! does), hours are 0-23, minutes 0-59, seconds 0-59 (a leap second `:60` is rejected like any
//! other impossible time, because `Date.parse` would roll it into the next minute), and an
//! offset lies within +-23:59.

use std::fmt;

/// Returns the instant a header timestamp denotes, or `None` when it is not a real one.
///
/// The instant keeps the full precision of the fraction (up to nanoseconds), so two rows
/// whose timestamps differ only past the millisecond still order correctly.
pub fn parse(text: &str) -> Option<Timestamp> {
    let bytes = text.as_bytes();
    // Fixed part: "YYYY-MM-DDTHH:MM:SS" is 19 bytes.
    if bytes.len() < 20 {
        return None;
    }
    let year = digits(bytes, 0, 4)?;
    expect(bytes, 4, b'-')?;
    let month = digits(bytes, 5, 2)?;
    expect(bytes, 7, b'-')?;
    let day = digits(bytes, 8, 2)?;
    expect(bytes, 10, b'T')?;
    let hour = digits(bytes, 11, 2)?;
    expect(bytes, 13, b':')?;
    let minute = digits(bytes, 14, 2)?;
    expect(bytes, 16, b':')?;
    let second = digits(bytes, 17, 2)?;

    let mut idx = 19;
    let mut nanos: u32 = 0;
    if bytes.get(idx) == Some(&b'.') {
        idx += 1;
        let start = idx;
        while idx < bytes.len() && bytes[idx].is_ascii_digit() {
            idx += 1;
        }
        let n_digits = idx - start;
        if !(1..=9).contains(&n_digits) {
            return None;
        }
        for position in 0..9 {
            let digit = if position < n_digits {
                u32::from(bytes[start + position] - b'0')
            } else {
                0
            };
            nanos = nanos * 10 + digit;
        }
    }

    let offset_seconds: i64 = match bytes.get(idx)? {
        b'Z' if idx + 1 == bytes.len() => 0,
        sign @ (b'+' | b'-') if idx + 6 == bytes.len() => {
            let offset_hours = digits(bytes, idx + 1, 2)?;
            expect(bytes, idx + 3, b':')?;
            let offset_minutes = digits(bytes, idx + 4, 2)?;
            if offset_hours > 23 || offset_minutes > 59 {
                return None;
            }
            let magnitude = i64::from(offset_hours * 3600 + offset_minutes * 60);
            if *sign == b'-' { -magnitude } else { magnitude }
        }
        _ => return None,
    };

    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }

    let days = days_from_civil(i64::from(year), month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset_seconds;
    Some(Timestamp { seconds, nanos })
}

/// An instant: whole seconds since the Unix epoch plus nanoseconds within that second.
///
/// Ordering is chronological.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z; negative before it.
    pub seconds: i64,
    /// Nanoseconds past `seconds`, always below one billion.
    pub nanos: u32,
}

impl Timestamp {
    /// Returns the instant as whole milliseconds since the epoch, rounded down.
    pub fn as_millis(self) -> i64 {
        self.seconds * 1000 + i64::from(self.nanos / 1_000_000)
    }

    /// Returns the UTC calendar fields `(year, month, day, hour, minute, second)`.
    pub fn to_utc_fields(self) -> (i64, u32, u32, u32, u32, u32) {
        let days = self.seconds.div_euclid(86_400);
        let second_of_day = self.seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        // The remainder is below 86,400, so each field fits in u32.
        let second_of_day = second_of_day as u32;
        (
            year,
            month,
            day,
            second_of_day / 3600,
            (second_of_day / 60) % 60,
            second_of_day % 60,
        )
    }
}

impl Timestamp {
    /// Appends the instant as [`Display`](fmt::Display) writes it (RFC 3339, UTC,
    /// milliseconds), without the formatting machinery: a listing writes one per row.
    pub fn push_rfc3339(self, out: &mut Vec<u8>) {
        let (year, month, day, hour, minute, second) = self.to_utc_fields();
        let Ok(year @ 0..=9999) = u32::try_from(year) else {
            // Outside four digits: the general formatter says it as Display does.
            out.extend_from_slice(self.to_string().as_bytes());
            return;
        };
        let millis = self.nanos / 1_000_000;
        let mut text = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for slot in text[at..at + width].iter_mut().rev() {
                // A digit: below 10, so the cast keeps it.
                *slot = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, month);
        put(8, 2, day);
        put(11, 2, hour);
        put(14, 2, minute);
        put(17, 2, second);
        put(20, 3, millis);
        out.extend_from_slice(&text);
    }
}

impl fmt::Display for Timestamp {
    /// Formats the instant as RFC 3339 in UTC with millisecond precision.
    ///
    /// A year outside 0000-9999 (an offset can move a header at the calendar's edge into
    /// year -1 or 10000) has no RFC 3339 form; it is written as ISO 8601's expanded year, the
    /// way JavaScript's `toISOString` writes it and `Date.parse` reads it back: a sign and six
    /// digits (`-000001-12-31T23:00:00.000Z`, `+010000-01-01T00:00:00.000Z`), never a
    /// three-digit `-001`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (year, month, day, hour, minute, second) = self.to_utc_fields();
        if !(0..=9999).contains(&year) {
            let sign = if year < 0 { '-' } else { '+' };
            write!(formatter, "{sign}{:06}", year.unsigned_abs())?;
        } else {
            write!(formatter, "{year:04}")?;
        }
        write!(
            formatter,
            "-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
            self.nanos / 1_000_000
        )
    }
}

fn digits(bytes: &[u8], start: usize, count: usize) -> Option<u32> {
    let slice = bytes.get(start..start + count)?;
    let mut value = 0u32;
    for byte in slice {
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u32::from(byte - b'0');
    }
    Some(value)
}

fn expect(bytes: &[u8], idx: usize, wanted: u8) -> Option<()> {
    (bytes.get(idx) == Some(&wanted)).then_some(())
}

/// Returns whether `year` is a leap year in the proleptic Gregorian calendar.
pub fn is_leap_year(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

/// Returns the number of days in `month` (1-12) of `year`.
pub fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Returns the days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Returns the proleptic Gregorian `(year, month, day)` of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected_millis: Option<i64>) {
        let actual = parse(input).map(Timestamp::as_millis);
        assert_eq!(actual, expected_millis, "parse({input:?})");
    }

    #[test]
    fn accepts_real_instants() {
        check("1970-01-01T00:00:00Z", Some(0));
        check("1970-01-01T00:00:00.000Z", Some(0));
        check("2026-09-01T10:00:00.123Z", Some(1_788_256_800_123));
        check("2024-02-29T00:00:00Z", Some(1_709_164_800_000));
        check("2000-02-29T12:00:00Z", Some(951_825_600_000));
        check("2026-09-01T12:00:00+02:00", Some(1_788_256_800_000));
        check("2026-09-01T08:00:00-02:00", Some(1_788_256_800_000));
        check(
            "2026-09-01T10:00:00+23:59",
            Some(1_788_256_800_000 - 86_340_000),
        );
        check("1969-12-31T23:59:59.999Z", Some(-1));
        check("0000-01-01T00:00:00Z", Some(-62_167_219_200_000));
        check("9999-12-31T23:59:59.999Z", Some(253_402_300_799_999));
    }

    proptest::proptest! {
        /// The fast writer and Display agree on every instant, the four-digit years and the
        /// ones beyond them (an offset can move year 0 back into year -1).
        #[test]
        fn push_rfc3339_agrees_with_display(
            seconds in -62_200_000_000i64..253_500_000_000,
            nanos in 0u32..1_000_000_000,
        ) {
            let instant = Timestamp { seconds, nanos };
            let mut pushed = b"before".to_vec();
            instant.push_rfc3339(&mut pushed);
            proptest::prop_assert_eq!(pushed, format!("before{instant}").into_bytes());
        }
    }

    #[test]
    fn push_rfc3339_at_the_edges() {
        for text in [
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            let instant = parse(text).expect("valid");
            let mut pushed = Vec::new();
            instant.push_rfc3339(&mut pushed);
            assert_eq!(
                String::from_utf8(pushed).expect("utf-8"),
                instant.to_string(),
                "{text}"
            );
        }
        // Years beyond four digits are ISO 8601 expanded years, as
        // JavaScript's `toISOString` writes them, by both writers.
        for (text, expected) in [
            ("0000-01-01T00:00:00+01:00", "-000001-12-31T23:00:00.000Z"),
            ("9999-12-31T23:59:59.5-23:59", "+010000-01-01T23:58:59.500Z"),
        ] {
            let instant = parse(text).expect("valid");
            let mut pushed = Vec::new();
            instant.push_rfc3339(&mut pushed);
            assert_eq!(
                String::from_utf8(pushed).expect("utf-8"),
                expected,
                "{text}"
            );
            assert_eq!(instant.to_string(), expected, "{text}");
        }
    }

    #[test]
    fn rejects_impossible_or_misshapen_values() {
        for input in [
            "",
            "2026-02-30T08:00:00.000Z",
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T23:60:00Z",
            "2026-12-31T23:59:60Z",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+01:60",
            "2026-01-01T00:00:00",
            "2026-01-01 00:00:00Z",
            "2026-01-01t00:00:00z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00Zjunk",
            "+02026-01-01T00:00:00Z",
            "２０２６-01-01T00:00:00Z",
            "2026-1-01T00:00:00Z",
        ] {
            check(input, None);
        }
    }

    #[test]
    fn keeps_full_precision() {
        let coarse = parse("2026-01-01T00:00:00.0001Z").expect("valid");
        let fine = parse("2026-01-01T00:00:00.0002Z").expect("valid");
        assert!(coarse < fine);
        assert_eq!(coarse.nanos, 100_000);
        let nine = parse("2026-01-01T00:00:00.123456789Z").expect("valid");
        assert_eq!(nine.nanos, 123_456_789);
    }

    #[test]
    fn display_round_trips_through_parse() {
        let instant = parse("2026-03-01T05:06:07.089+01:00").expect("valid");
        assert_eq!(instant.to_string(), "2026-03-01T04:06:07.089Z");
        assert_eq!(parse(&instant.to_string()), Some(instant));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(input in ".{0,40}") {
            let _ = parse(&input);
        }

        #[test]
        fn civil_round_trip(days in -1_000_000i64..1_000_000) {
            let (year, month, day) = civil_from_days(days);
            proptest::prop_assert_eq!(days_from_civil(year, month, day), days);
        }
    }
}
