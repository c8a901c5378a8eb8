//! What a report counts: the grouping, the time zone periods are counted in and the time range.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pi_retrospect_core::stats::GroupKey;

use crate::error::StatsError;

/// What a statistics report groups by and which records it counts.
#[derive(Debug, Clone)]
pub struct StatsOptions {
    /// The dimensions of each row, in order (`--by day,model`); empty for the total alone.
    pub group_by: Vec<GroupKey>,
    /// The zone whose calendar days, weeks and months the period groupings use.
    pub time_zone: TimeZone,
    /// The zone's name as the report states it (see [`StatsOptions::new`]).
    pub time_zone_name: String,
    /// Counts only records whose own timestamp is at or after this instant.
    pub since: Option<Timestamp>,
    /// Counts only records whose own timestamp is at or before this instant.
    pub until: Option<Timestamp>,
    /// Counts only the session file at this path and its runs; the rest of the listing is its
    /// context (the sessions that launched it give its depth, its launcher and, for a run in
    /// `forks/`, its fork parent) and is not counted. `None` counts every listed session.
    pub only: Option<String>,
    /// Counts only the sessions whose id starts with one of these prefixes, with their runs
    /// (empty: no such condition). The sessions that launched a matching run are its context,
    /// as with `only`: a run picked by its id is counted alone, not with its launcher.
    pub only_ids: Vec<String>,
    /// The canonical root directories of the stores the listing was read from. A fork parent
    /// that a header names and the listing does not hold is read only when it resolves to a
    /// `.jsonl` file below one of them; any other path is never opened.
    pub store_roots: Vec<String>,
    /// The longest line read (`$PI_RETROSPECT_MAX_LINE` in the front ends, as every reader
    /// keeps it); a longer one is skipped with a warning.
    pub max_line_bytes: usize,
}

impl StatsOptions {
    /// Returns options that count every record, ungrouped, with periods in `time_zone`; the
    /// report names the zone by its IANA name, or its fixed offset, or `unnamed`.
    pub fn new(time_zone: TimeZone) -> StatsOptions {
        let time_zone_name = match (time_zone.iana_name(), time_zone.to_fixed_offset()) {
            (Some(name), _) => name.to_owned(),
            (None, Ok(offset)) => offset.to_string(),
            (None, Err(_)) => "unnamed".to_owned(),
        };
        StatsOptions {
            group_by: Vec::new(),
            time_zone,
            time_zone_name,
            since: None,
            until: None,
            only: None,
            only_ids: Vec::new(),
            store_roots: Vec::new(),
            max_line_bytes: pi_retrospect_read::DEFAULT_MAX_LINE_BYTES,
        }
    }

    /// Returns whether a record's timestamp decides whether and where it is counted.
    pub(crate) fn needs_time(&self) -> bool {
        self.since.is_some() || self.until.is_some() || self.needs_period()
    }

    /// Returns whether rows are keyed by a calendar period.
    pub(crate) fn needs_period(&self) -> bool {
        self.group_by.iter().any(|key| key.is_period())
    }

    /// Returns whether rows are keyed by model.
    pub(crate) fn needs_model(&self) -> bool {
        self.group_by.contains(&GroupKey::Model)
    }

    /// Returns whether an instant lies in the range.
    pub(crate) fn is_in_range(&self, instant: Timestamp) -> bool {
        self.since.is_none_or(|since| instant >= since)
            && self.until.is_none_or(|until| instant <= until)
    }
}

/// Parses a `--by` value: comma-separated names of [`GroupKey`]s (`session`, `project`,
/// `model`, `day`, `week`, `month`), each at most once, surrounding spaces ignored.
pub fn parse_group_keys(text: &str) -> Result<Vec<GroupKey>, StatsError> {
    let mut keys = Vec::new();
    for name in text.split(',').map(str::trim) {
        let key =
            GroupKey::from_name(name).ok_or_else(|| StatsError::UnknownGroup(name.to_owned()))?;
        if keys.contains(&key) {
            return Err(StatsError::RepeatedGroup(name.to_owned()));
        }
        keys.push(key);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_group_keys() {
        fn check(text: &str, expected: Result<&[GroupKey], &str>) {
            let actual = parse_group_keys(text).map_err(|error| error.to_string());
            assert_eq!(
                actual.as_deref(),
                expected.map_err(str::to_owned).as_deref(),
                "{text}"
            );
        }
        use GroupKey::*;
        check("day", Ok(&[Day]));
        check("day,model", Ok(&[Day, Model]));
        check(" session , week ", Ok(&[Session, Week]));
        check("project,model,month", Ok(&[Project, Model, Month]));
        check(
            "days",
            Err("unknown grouping \"days\" (expected session, project, model, day, week or month)"),
        );
        check(
            "",
            Err("unknown grouping \"\" (expected session, project, model, day, week or month)"),
        );
        check("day,day", Err("grouping \"day\" given twice"));
    }

    #[test]
    fn names_the_time_zone() {
        let check = |time_zone: TimeZone, expected: &str| {
            assert_eq!(StatsOptions::new(time_zone).time_zone_name, expected);
        };
        check(TimeZone::UTC, "UTC");
        check(TimeZone::fixed(jiff::tz::offset(2)), "+02");
        check(
            TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").expect("valid POSIX TZ"),
            "unnamed",
        );
    }
}
