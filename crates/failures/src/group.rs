//! Failures grouped by signature, tool, session, project or day: a count, the sessions, the
//! first and last seen, and one example handle.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::signature::signature;
use crate::types::{FailureGroup, FailureRow, GroupBy, RepeatRow};

/// Returns the groups of `failures` (newest first, as a scan returns them) by `by`, the
/// largest first; with `--by session`, each group counts the session's repeated calls.
pub fn group(failures: &[FailureRow], by: GroupBy, repeats: &[RepeatRow]) -> Vec<FailureGroup> {
    let mut groups: BTreeMap<String, (FailureGroup, HashSet<&str>)> = BTreeMap::new();
    let mut repeated: HashMap<&str, u64> = HashMap::new();
    for repeat in repeats {
        *repeated.entry(repeat.path.as_str()).or_default() += repeat.n_calls;
    }
    for failure in failures {
        let tool_or_kind = failure
            .tool_name
            .as_deref()
            .unwrap_or(failure.failure_kind.as_str());
        let key = match by {
            GroupBy::Signature => signature(tool_or_kind, &failure.message),
            GroupBy::Tool => tool_or_kind.to_owned(),
            GroupBy::Session => failure.path.clone(),
            GroupBy::Project => failure.cwd.clone(),
            GroupBy::Day => failure
                .instant
                .map(|at| at.to_string().chars().take(10).collect())
                .unwrap_or_else(|| "unknown".to_owned()),
        };
        let (group, sessions) = groups.entry(key.clone()).or_insert_with(|| {
            (
                FailureGroup {
                    key,
                    count: 0,
                    n_sessions: 0,
                    // Rows come newest first: the first is the last seen and the example.
                    first_seen: failure.timestamp.clone(),
                    last_seen: failure.timestamp.clone(),
                    example_path: failure.path.clone(),
                    example_entry_id: failure.entry_id.clone(),
                    repeated_calls: (by == GroupBy::Session)
                        .then(|| repeated.get(failure.path.as_str()).copied().unwrap_or(0)),
                },
                HashSet::new(),
            )
        });
        group.count += 1;
        if failure.instant.is_some() {
            group.first_seen = failure.timestamp.clone();
        }
        sessions.insert(failure.path.as_str());
        group.n_sessions = sessions.len() as u64;
    }
    let mut groups: Vec<FailureGroup> = groups.into_values().map(|(group, _)| group).collect();
    groups.sort_by(|left, right| right.count.cmp(&left.count).then(left.key.cmp(&right.key)));
    groups
}
