//! The `WHEN` column of `list --long`: when a session ran, in local time (`2026-09-01 10:00`,
//! then `→14:32`, `→09-03` or `→2027-01-02` when it was last active later), written fast
//! enough for tens of thousands of rows: offsets come from a per-thread cache of the zone's
//! current period and the calendar fields are worked out here, not by jiff's civil
//! conversion.

use pi_retrospect_core::{Session, SessionSummary};

/// Appends to `out` when a session ran, in local time: its start (`2026-09-01 10:00`), then,
/// when it was last active in a later minute, `→14:32` on the same day or `→09-03` on a
/// later one.
pub fn push_when(
    out: &mut String,
    session: &Session,
    summary: Option<&SessionSummary>,
    clock: &LocalClock<'_>,
) {
    // The zone gives the offset; the calendar fields are worked out here, which costs a
    // fraction of jiff's civil conversion (two per `--long` row). An instant past jiff's
    // calendar (9999-12-30, leaving room for any offset) has no local time.
    let local =
        |instant: pi_retrospect_core::Timestamp| Civil::at(instant, clock.offset_seconds(instant)?);
    // Written byte by byte into a buffer on the stack: `strftime`, and even `write!` or
    // `String::push`, cost more than the rest of a `--long` row.
    let mut text = WhenText::default();
    let Some(start) = local(session.instant) else {
        // Past the local calendar (a header at 9999-12-31): its UTC date and time, as short
        // as a local start, so one odd row does not widen the column.
        let Some(start) = Civil::at(session.instant, 0) else {
            out.push_str(&session.timestamp);
            return;
        };
        start.push_date(&mut text);
        text.push(b' ');
        text.push_pair(start.hour, b':', start.minute);
        return text.append_to(out);
    };
    start.push_date(&mut text);
    text.push(b' ');
    text.push_pair(start.hour, b':', start.minute);
    let last_instant = session.last_activity(summary);
    let Some(last) = local(last_instant) else {
        // The file said it and `--jsonl` reports it: never dropped.
        // Shown as its UTC date, in the later-year form (`→9999-12-31`): the whole UTC text
        // made every row's WHEN 43 columns wide.
        if last_instant != session.instant
            && let Some(last) = Civil::at(last_instant, 0)
        {
            text.push_arrow();
            last.push_date(&mut text);
        }
        return text.append_to(out);
    };
    if last.year != start.year {
        text.push_arrow();
        last.push_date(&mut text);
    } else if (last.month, last.day) != (start.month, start.day) {
        text.push_arrow();
        text.push_pair(last.month, b'-', last.day);
    } else if (last.hour, last.minute) != (start.hour, start.minute) {
        text.push_arrow();
        text.push_pair(last.hour, b':', last.minute);
    }
    text.append_to(out);
}

/// A time zone as `--long` reads it: offsets looked up through a cache of each thread's last
/// offset period (the span between two of the zone's transitions), as consecutive rows
/// (sorted by time) mostly fall in one.
pub struct LocalClock<'z> {
    zone: &'z jiff::tz::TimeZone,
    /// Tells this clock's cache entries from another's (another zone's, in tests).
    id: u64,
}

/// The id of the next [`LocalClock`]; 0 is no clock's.
static NEXT_CLOCK_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A thread's last answers: an offset period of a clock and a local day's date.
#[derive(Clone, Copy)]
struct ClockCache {
    /// The clock whose period this is (0: none).
    clock: u64,
    /// The period, in seconds since the epoch: from `period_start` up to, not including,
    /// `period_end`, the zone's offset is `offset_seconds`.
    period_start: i64,
    period_end: i64,
    offset_seconds: i32,
    /// A local day (days since the epoch; `i64::MIN` for none) and its date.
    day: i64,
    year: i16,
    month: i8,
    day_of_month: i8,
}

thread_local! {
    static CLOCK_CACHE: std::cell::Cell<ClockCache> = const {
        std::cell::Cell::new(ClockCache {
            clock: 0,
            period_start: 0,
            period_end: 0,
            offset_seconds: 0,
            day: i64::MIN,
            year: 0,
            month: 0,
            day_of_month: 0,
        })
    };
}

impl<'z> LocalClock<'z> {
    /// Returns a clock for `zone`.
    pub fn new(zone: &'z jiff::tz::TimeZone) -> LocalClock<'z> {
        let id = NEXT_CLOCK_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LocalClock { zone, id }
    }

    /// Returns the zone's offset at `instant`, in seconds east of UTC, as
    /// [`jiff::tz::TimeZone::to_offset`] says it, or `None` when jiff cannot hold the instant.
    fn offset_seconds(&self, instant: pi_retrospect_core::Timestamp) -> Option<i32> {
        let cache = CLOCK_CACHE.with(std::cell::Cell::get);
        // The period's ends are within jiff's range, so an instant in it is one jiff holds
        // when its fraction is a valid one.
        if cache.clock == self.id
            && (cache.period_start..cache.period_end).contains(&instant.seconds)
            && instant.nanos < 1_000_000_000
        {
            return Some(cache.offset_seconds);
        }
        let nanos = i32::try_from(instant.nanos).unwrap_or(0);
        let at = jiff::Timestamp::new(instant.seconds, nanos).ok()?;
        let offset_seconds = self.zone.to_offset(at).seconds();
        // The transitions around `at` are strictly before and after it. The offset holds
        // from the one before when that one set it (else one falls at `at` itself: from
        // `at`), up to the one after.
        let period_start = match self.zone.preceding(at).next() {
            Some(transition) if transition.offset().seconds() == offset_seconds => {
                transition.timestamp().as_second()
            }
            Some(_) => instant.seconds,
            None => jiff::Timestamp::MIN.as_second(),
        };
        let period_end = self
            .zone
            .following(at)
            .next()
            .map_or(jiff::Timestamp::MAX.as_second() + 1, |transition| {
                transition.timestamp().as_second()
            });
        CLOCK_CACHE.with(|cell| {
            cell.set(ClockCache {
                clock: self.id,
                period_start,
                period_end,
                offset_seconds,
                ..cell.get()
            });
        });
        Some(offset_seconds)
    }
}

/// A date and time to the minute, as `when` writes it.
#[derive(Clone, Copy)]
struct Civil {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
    minute: i8,
}

impl Civil {
    /// Returns the calendar fields of `instant` at `offset_seconds` east of UTC, or `None`
    /// when its year is beyond what `strftime`'s `%Y` writes here. The date of the thread's
    /// last local day is kept, as consecutive rows mostly fall on one.
    fn at(instant: pi_retrospect_core::Timestamp, offset_seconds: i32) -> Option<Civil> {
        let seconds = instant.seconds.checked_add(i64::from(offset_seconds))?;
        let day = seconds.div_euclid(86_400);
        // Below 86,400: each of hour and minute fits in i8.
        let second_of_day = seconds.rem_euclid(86_400) as i32;
        let hour = (second_of_day / 3600) as i8;
        let minute = (second_of_day / 60 % 60) as i8;
        let cache = CLOCK_CACHE.with(std::cell::Cell::get);
        if cache.day == day {
            return Some(Civil {
                year: cache.year,
                month: cache.month,
                day: cache.day_of_month,
                hour,
                minute,
            });
        }
        let (year, month, day_of_month, _, _, _) =
            pi_retrospect_core::Timestamp { seconds, nanos: 0 }.to_utc_fields();
        let civil = Civil {
            year: i16::try_from(year).ok()?,
            month: i8::try_from(month).ok()?,
            day: i8::try_from(day_of_month).ok()?,
            hour,
            minute,
        };
        CLOCK_CACHE.with(|cell| {
            cell.set(ClockCache {
                day,
                year: civil.year,
                month: civil.month,
                day_of_month: civil.day,
                ..cell.get()
            });
        });
        Some(civil)
    }

    /// Appends the date, `YYYY-MM-DD` (the year as [`WhenText::push_year`] writes it).
    fn push_date(self, text: &mut WhenText) {
        text.push_year(self.year);
        text.push(b'-');
        text.push_pair(self.month, b'-', self.day);
    }
}

/// The text `when` writes, built on the stack: at most 31 ASCII bytes (`-32768-12-31 23:59`
/// and `-32768-12-31`) and the arrow between them, kept apart so that the bytes are checked
/// as UTF-8 on the fast path for ASCII.
struct WhenText {
    bytes: [u8; 40],
    len: usize,
    /// Where `→` stands, when it does.
    arrow_at: Option<usize>,
}

impl Default for WhenText {
    fn default() -> WhenText {
        WhenText {
            bytes: [0; 40],
            len: 0,
            arrow_at: None,
        }
    }
}

impl WhenText {
    /// Appends a byte (never past the buffer, which is longer than any text `when` writes).
    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Appends `→`.
    fn push_arrow(&mut self) {
        self.arrow_at = Some(self.len);
    }

    /// Appends two calendar fields as two digits each, `separator` between them (`09-03`,
    /// `14:32`).
    fn push_pair(&mut self, first: i8, separator: u8, second: i8) {
        self.push_two(first);
        self.push(separator);
        self.push_two(second);
    }

    /// Appends a calendar field (0-99) as two digits.
    fn push_two(&mut self, value: i8) {
        let value = value.unsigned_abs() % 100;
        self.push(b'0' + value / 10);
        self.push(b'0' + value % 10);
    }

    /// Appends a year as `strftime`'s `%Y` writes it: at least four digits, with a sign when
    /// negative.
    fn push_year(&mut self, year: i16) {
        if year < 0 {
            self.push(b'-');
        }
        let year = year.unsigned_abs();
        if year >= 10_000 {
            // At most 32,768: one more digit.
            self.push(b'0' + (year / 10_000) as u8);
        }
        for divisor in [1000, 100, 10, 1] {
            // A digit: below 10, so the cast keeps it.
            self.push(b'0' + ((year / divisor) % 10) as u8);
        }
    }

    /// Appends the text to `out`. Only ASCII is pushed, so it is UTF-8 (the empty fallbacks
    /// are never taken).
    fn append_to(self, out: &mut String) {
        let arrow_at = self.arrow_at.unwrap_or(self.len);
        out.push_str(std::str::from_utf8(&self.bytes[..arrow_at]).unwrap_or_default());
        if self.arrow_at.is_some() {
            out.push('→');
            out.push_str(std::str::from_utf8(&self.bytes[arrow_at..self.len]).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns what [`push_when`] appends.
    fn when(session: &Session, summary: Option<&SessionSummary>, clock: &LocalClock<'_>) -> String {
        let mut text = String::new();
        push_when(&mut text, session, summary, clock);
        text
    }

    /// `when` writes its fields by hand; it must say what `strftime` says, in any zone, for
    /// every shape (same minute, same day, same year, another year).
    #[test]
    fn when_matches_strftime() {
        let reference = |session: &Session,
                         last: pi_retrospect_core::Timestamp,
                         zone: &jiff::tz::TimeZone| {
            let local = |instant: pi_retrospect_core::Timestamp| {
                jiff::Timestamp::new(instant.seconds, i32::try_from(instant.nanos).unwrap_or(0))
                    .expect("in range")
                    .to_zoned(zone.clone())
            };
            let start = local(session.instant);
            let last = local(last);
            let mut text = start.strftime("%Y-%m-%d %H:%M").to_string();
            if last.year() != start.year() {
                text.push_str(&last.strftime("→%Y-%m-%d").to_string());
            } else if last.date() != start.date() {
                text.push_str(&last.strftime("→%m-%d").to_string());
            } else if last.strftime("%H:%M").to_string() != start.strftime("%H:%M").to_string() {
                text.push_str(&last.strftime("→%H:%M").to_string());
            }
            text
        };
        let parse = |text: &str| pi_retrospect_core::timestamp::parse(text).expect("timestamp");
        let zones = [
            jiff::tz::TimeZone::UTC,
            jiff::tz::TimeZone::get("Asia/Kolkata").expect("zone"),
            jiff::tz::TimeZone::get("America/St_Johns").expect("zone"),
            jiff::tz::TimeZone::get("America/New_York").expect("zone"),
            jiff::tz::TimeZone::get("Australia/Lord_Howe").expect("zone"),
        ];
        // Around New York's and Lord Howe's changes (2026-03-08 07:00, 2026-11-01 06:00 and
        // 2026-04-04 15:00 UTC), at them and a second and a nanosecond either side, so the
        // clock's cached periods are crossed in both directions.
        let starts = [
            "2026-01-01T00:00:00Z",
            "0999-12-31T23:59:59.999Z",
            "2026-03-08T06:30:00Z",
            "2026-03-08T06:59:59.999999999Z",
            "2026-03-08T07:00:00Z",
            "2026-11-01T05:59:59Z",
            "2026-11-01T06:00:00Z",
            "2026-04-04T14:59:59Z",
            "2026-04-04T15:00:00Z",
            "2026-04-04T15:00:01Z",
        ];
        let lasts = [
            "2026-01-01T00:00:30Z",
            "2026-01-01T00:01:00Z",
            "2026-01-01T23:59:00Z",
            "2026-02-03T04:05:06Z",
            "2027-01-01T00:00:00Z",
            "1000-01-01T00:00:00Z",
            "2026-03-08T07:00:00.000000001Z",
            "2026-11-01T06:30:00Z",
            "2026-04-04T15:29:00Z",
        ];
        for zone in &zones {
            // One clock for the whole zone, as one listing has: its cache sees every order.
            let clock = LocalClock::new(zone);
            for start in starts {
                for last in lasts {
                    let session = Session {
                        id: "s".into(),
                        path: "/s.jsonl".into(),
                        timestamp: start.into(),
                        cwd: "/w".into(),
                        parent_session_path: None,
                        subagent_sessions: Vec::new(),
                        instant: parse(start),
                        n_pruned_runs: 0,
                        summary: None,
                    };
                    let summary = SessionSummary {
                        last_activity: Some(parse(last)),
                        ..SessionSummary::default()
                    };
                    assert_eq!(
                        when(&session, Some(&summary), &clock),
                        reference(&session, session.last_activity(Some(&summary)), zone),
                        "{start} → {last}"
                    );
                }
            }
        }
    }

    /// An entry stamped 9999-12-31 is the last activity `--jsonl`
    /// reports; `--long` shows the same instant (in UTC, as local time cannot hold it) rather
    /// than no arrow at all.
    #[test]
    fn when_shows_an_activity_past_the_local_calendar() {
        let parse = |text: &str| pi_retrospect_core::timestamp::parse(text).expect("timestamp");
        let session = Session {
            id: "s".into(),
            path: "/s.jsonl".into(),
            timestamp: "2026-11-30T10:00:00Z".into(),
            cwd: "/w".into(),
            parent_session_path: None,
            subagent_sessions: Vec::new(),
            instant: parse("2026-11-30T10:00:00Z"),
            n_pruned_runs: 0,
            summary: None,
        };
        let summary = SessionSummary {
            last_activity: Some(parse("9999-12-31T23:59:59.999Z")),
            ..SessionSummary::default()
        };
        let zone = jiff::tz::TimeZone::get("Asia/Kolkata").expect("zone");
        let last = session.last_activity(Some(&summary)).to_string();
        assert_eq!(last, "9999-12-31T23:59:59.999Z");
        // In the later-year form, as wide as any other row's, so that one
        // odd row does not widen every row's WHEN column; the date is the UTC one.
        let zone = LocalClock::new(&zone);
        let shown = when(&session, Some(&summary), &zone);
        assert_eq!(shown, "2026-11-30 15:30→9999-12-31");
        let later_year = SessionSummary {
            last_activity: Some(parse("2027-01-02T00:00:00Z")),
            ..SessionSummary::default()
        };
        assert_eq!(
            shown.chars().count(),
            when(&session, Some(&later_year), &zone).chars().count()
        );

        // A start past the local calendar is its UTC date and time, as short as a local one.
        let mut far = session.clone();
        far.timestamp = "9999-12-31T23:59:59.123456789-23:59".into();
        far.instant = parse("9999-12-31T23:59:59.123456789-23:59");
        assert_eq!(when(&far, None, &zone), "10000-01-01 23:58");
    }

    proptest::proptest! {
        /// The clock's cached offset periods answer what the zone does, for instants in any
        /// order (sorted as a listing's, near each other, or anywhere in jiff's range), in
        /// zones with and without changes, and with another clock's entries in between.
        #[test]
        fn clock_offsets_match_the_zone(
            zone in proptest::sample::select(vec![
                "UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
                "Europe/London", "Asia/Kathmandu",
            ]),
            base in proptest::prop_oneof![
                // Zones change most between 1900 and 2040; jiff's range is years -9999 to 9999.
                -2_300_000_000_i64..2_300_000_000,
                -377_800_000_000_i64..253_500_000_000,
            ],
            steps in proptest::collection::vec((-40_000_000_i64..40_000_000, 0_u32..1_000_000_000), 1..40),
            is_sorted: bool,
        ) {
            let zone = jiff::tz::TimeZone::get(zone).expect("zone");
            let other_zone = jiff::tz::TimeZone::get("America/St_Johns").expect("zone");
            let clock = LocalClock::new(&zone);
            let other = LocalClock::new(&other_zone);
            let mut instants: Vec<pi_retrospect_core::Timestamp> = steps
                .iter()
                .map(|&(step, nanos)| pi_retrospect_core::Timestamp { seconds: base + step, nanos })
                .collect();
            if is_sorted {
                instants.sort_by_key(|instant| (instant.seconds, instant.nanos));
            }
            for (index, instant) in instants.iter().enumerate() {
                let expected = jiff::Timestamp::new(instant.seconds, i32::try_from(instant.nanos).unwrap_or(0))
                    .ok()
                    .map(|at| zone.to_offset(at).seconds());
                proptest::prop_assert_eq!(clock.offset_seconds(*instant), expected, "{:?}", instant);
                if index % 7 == 6 {
                    let _ = other.offset_seconds(*instant);
                }
            }
        }
    }
}
