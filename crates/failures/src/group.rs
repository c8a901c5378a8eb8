//! Failures grouped by signature, tool, session, project or day: a count, the sessions, the
//! first and last seen, and one example handle. Groups are built one row at a time and keep
//! only their aggregates, so grouping a store never holds its failure rows.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use pi_retrospect_core::Timestamp;

use crate::signature::signature;
use crate::types::{FailureGroup, FailureRow, GroupBy, RepeatRow};

/// What one group keeps while rows are added: its count, its sessions, its oldest failure's
/// time and its newest failure (the example and the last seen).
#[derive(Debug, Clone)]
struct Aggregate {
    count: u64,
    sessions: HashSet<Arc<str>>,
    /// The earliest valid instant and its timestamp as stored.
    first: Option<(Timestamp, String)>,
    /// The newest row by [`FailureRow::sort_key`]: its instant, path, entry id and timestamp.
    example: (Option<Timestamp>, Arc<str>, String, String),
}

impl Aggregate {
    fn example_key(&self) -> (std::cmp::Reverse<Option<Timestamp>>, &str, &str) {
        (
            std::cmp::Reverse(self.example.0),
            &self.example.1,
            self.example.2.as_str(),
        )
    }

    fn merge(&mut self, other: Aggregate) {
        let is_newer = other.example_key() < self.example_key();
        self.count += other.count;
        self.sessions.extend(other.sessions);
        if let Some((at, stamp)) = other.first
            && self.first.as_ref().is_none_or(|(mine, _)| at < *mine)
        {
            self.first = Some((at, stamp));
        }
        if is_newer {
            self.example = other.example;
        }
    }
}

/// Groups being built: rows are added one at a time (or accumulators of separate threads
/// merged), and [`Grouper::finish`] returns the groups. Memory grows with the groups and the
/// sessions in them, never with the rows.
#[derive(Debug, Clone)]
pub struct Grouper {
    by: GroupBy,
    /// The zone whose calendar days `--by day` groups by.
    zone: jiff::tz::TimeZone,
    groups: HashMap<String, Aggregate>,
}

impl Grouper {
    /// Returns an empty grouping by `by`, days in UTC.
    pub fn new(by: GroupBy) -> Grouper {
        Grouper::in_zone(by, jiff::tz::TimeZone::UTC)
    }

    /// Returns an empty grouping by `by`, days in `zone`.
    pub fn in_zone(by: GroupBy, zone: jiff::tz::TimeZone) -> Grouper {
        Grouper {
            by,
            zone,
            groups: HashMap::new(),
        }
    }

    /// Returns the key `failure` groups under.
    pub fn key_of(&self, failure: &FailureRow) -> String {
        let by = self.by;
        let tool_or_kind = failure
            .tool_name
            .as_deref()
            .unwrap_or(failure.failure_kind.as_str());
        match by {
            GroupBy::Signature => signature(tool_or_kind, &failure.message),
            GroupBy::Tool => tool_or_kind.to_owned(),
            GroupBy::Session => failure.path.to_string(),
            GroupBy::Project => failure.cwd.to_string(),
            GroupBy::Day => failure
                .instant
                .and_then(|at| {
                    let nanos = i32::try_from(at.nanos).ok()?;
                    let instant = jiff::Timestamp::new(at.seconds, nanos).ok()?;
                    Some(instant.to_zoned(self.zone.clone()).date().to_string())
                })
                .unwrap_or_else(|| "unknown".to_owned()),
        }
    }

    /// Adds one failure.
    pub fn add(&mut self, failure: &FailureRow) {
        let key = self.key_of(failure);
        let one = Aggregate {
            count: 1,
            sessions: HashSet::from([failure.path.clone()]),
            first: failure.instant.map(|at| (at, failure.timestamp.clone())),
            example: (
                failure.instant,
                failure.path.clone(),
                failure.entry_id.clone(),
                failure.timestamp.clone(),
            ),
        };
        match self.groups.get_mut(&key) {
            Some(group) => group.merge(one),
            None => {
                self.groups.insert(key, one);
            }
        }
    }

    /// Adds every group of `other` (built with the same `by`).
    pub fn merge(&mut self, other: Grouper) {
        for (key, aggregate) in other.groups {
            match self.groups.get_mut(&key) {
                Some(group) => group.merge(aggregate),
                None => {
                    self.groups.insert(key, aggregate);
                }
            }
        }
    }

    /// Returns the groups, the largest first (ties by key); with `--by session`, each group
    /// counts the calls of its session's runs of repeated calls in `repeats`.
    pub fn finish(self, repeats: &[RepeatRow]) -> Vec<FailureGroup> {
        let mut repeated: HashMap<&str, u64> = HashMap::new();
        for repeat in repeats {
            *repeated.entry(&*repeat.path).or_default() += repeat.n_calls;
        }
        let by = self.by;
        let mut groups: Vec<FailureGroup> = self
            .groups
            .into_iter()
            .map(|(key, aggregate)| {
                let (_, path, entry_id, last_seen) = aggregate.example;
                FailureGroup {
                    key,
                    count: aggregate.count,
                    n_sessions: aggregate.sessions.len() as u64,
                    // A group without any valid time says when its example was, as stored.
                    first_seen: aggregate
                        .first
                        .map_or_else(|| last_seen.clone(), |(_, stamp)| stamp),
                    repeated_calls: (by == GroupBy::Session)
                        .then(|| repeated.get(&*path).copied().unwrap_or(0)),
                    last_seen,
                    example_path: path.to_string(),
                    example_entry_id: entry_id,
                }
            })
            .collect();
        groups.sort_by(|left, right| right.count.cmp(&left.count).then(left.key.cmp(&right.key)));
        groups
    }
}

/// Returns the groups of `failures` by `by`, the largest first; with `--by session`, each
/// group counts the session's repeated calls.
pub fn group(failures: &[FailureRow], by: GroupBy, repeats: &[RepeatRow]) -> Vec<FailureGroup> {
    let mut grouper = Grouper::new(by);
    for failure in failures {
        grouper.add(failure);
    }
    grouper.finish(repeats)
}
