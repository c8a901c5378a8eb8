//! The plain result types of a failure scan: one row per failure, one per repeated call,
//! the grouped rows, and the report that holds them. Front ends render and page these.

use pi_retrospect_core::{Timestamp, Warning};
use std::sync::Arc;

use serde::Serialize;

/// How an entry failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A tool result with `isError: true`.
    ToolError,
    /// An assistant reply that ended with `stopReason: "error"`.
    ApiError,
    /// An assistant reply that ended with `stopReason: "aborted"`.
    Aborted,
    /// A `!` command (`bashExecution`) that exited with a code other than 0.
    CommandExit,
    /// An assistant reply cut off at the output limit (`stopReason: "length"`).
    CutOff,
}

impl FailureKind {
    /// Every kind, in the order `--kind` lists them.
    pub const ALL: [FailureKind; 5] = [
        FailureKind::ToolError,
        FailureKind::ApiError,
        FailureKind::Aborted,
        FailureKind::CommandExit,
        FailureKind::CutOff,
    ];

    /// Returns the kind's name, as JSON and `--kind` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::ToolError => "tool_error",
            FailureKind::ApiError => "api_error",
            FailureKind::Aborted => "aborted",
            FailureKind::CommandExit => "command_exit",
            FailureKind::CutOff => "cut_off",
        }
    }

    /// Returns the kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<FailureKind> {
        FailureKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// One failure: where it is, what failed and the error text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureRow {
    /// The session file (shared by the rows of a file).
    pub path: Arc<str>,
    /// The entry's handle (its id, or `line:N`), which `show` and `inspect read` open.
    pub entry_id: String,
    /// The entry's timestamp as stored.
    pub timestamp: String,
    /// The instant `timestamp` denotes (the sort key); not serialised.
    #[serde(skip)]
    pub instant: Option<Timestamp>,
    /// How it failed.
    pub failure_kind: FailureKind,
    /// The session's working directory.
    pub cwd: Arc<str>,
    /// The session's name, else the first line of its first user message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Arc<str>>,
    /// Whether the entry is on the session's active branch.
    pub on_active_branch: bool,
    /// The run depth: 0 for a top-level session, 1 for its subagent runs, ...
    pub depth: u32,
    /// The tool that failed (`bash` for a `!` command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The failing call's arguments as stored (JSON text; a `!` command's is
    /// `{"command":...}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// The whole shell command of a `bash` call or `!` command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A `!` command's exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The error text: bounded (head and tail kept) and free of terminal controls.
    pub message: String,
    /// Bytes of the error text left out of `message` (0 when it is whole).
    pub n_message_bytes_cut: usize,
}

impl FailureRow {
    /// Returns the row's sort key, newest first: later instants sort before earlier ones,
    /// then path, then entry id; a row without a valid timestamp sorts last.
    pub fn sort_key(&self) -> (std::cmp::Reverse<Option<Timestamp>>, &str, &str) {
        (
            std::cmp::Reverse(self.instant),
            &self.path,
            self.entry_id.as_str(),
        )
    }
}

/// The same tool called with the same arguments three or more times in a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepeatRow {
    /// The session file (shared by the rows of a file).
    pub path: Arc<str>,
    /// The handle of the assistant message that made the first call of the run.
    pub entry_id: String,
    /// That message's timestamp as stored.
    pub timestamp: String,
    /// The instant `timestamp` denotes; not serialised.
    #[serde(skip)]
    pub instant: Option<Timestamp>,
    /// The session's working directory.
    pub cwd: Arc<str>,
    /// The session's title (see [`FailureRow::title`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Arc<str>>,
    /// The run depth.
    pub depth: u32,
    /// The tool called.
    pub tool_name: String,
    /// The arguments every call of the run had (JSON text).
    pub arguments: String,
    /// Calls in the run.
    pub n_calls: u64,
    /// How many of them failed (their results had `isError: true`).
    pub n_failed: u64,
}

/// What failures are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// The tool (or kind) and the error text with its variable parts replaced.
    Signature,
    /// The tool (or, without one, the kind).
    Tool,
    /// The session file.
    Session,
    /// The session's working directory.
    Project,
    /// The UTC day of the failure.
    Day,
}

impl GroupBy {
    /// Returns the grouping's name, as `--by` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Signature => "signature",
            GroupBy::Tool => "tool",
            GroupBy::Session => "session",
            GroupBy::Project => "project",
            GroupBy::Day => "day",
        }
    }
}

/// One group of failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureGroup {
    /// What the failures share (a signature, a tool, a path, a cwd or a day).
    pub key: String,
    /// Failures in the group.
    pub count: u64,
    /// Sessions they are in.
    pub n_sessions: u64,
    /// The earliest failure's timestamp as stored.
    pub first_seen: String,
    /// The latest failure's timestamp as stored.
    pub last_seen: String,
    /// The latest failure's session file: with `exampleEntryId` a handle `show` opens.
    pub example_path: String,
    /// The latest failure's entry handle.
    pub example_entry_id: String,
    /// With `--by session`: calls that were part of a run of three or more identical calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeated_calls: Option<u64>,
}

/// Everything a failure scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailuresReport {
    /// Failures selected, `failures` included: all of them, also when a grouped or counted
    /// scan kept no rows.
    pub n_failures: u64,
    /// Every failure selected, newest first (see [`FailureRow::sort_key`]); empty when the
    /// scan only counted or grouped them.
    pub failures: Vec<FailureRow>,
    /// With repeats asked for: every run of repeated calls, newest first.
    pub repeats: Vec<RepeatRow>,
    /// Session files read (runs included).
    pub n_files: u64,
    /// Session files whose bytes held a candidate and were decoded.
    pub n_files_decoded: u64,
    /// Bad lines and unreadable files, each naming its file.
    pub warnings: Vec<Warning>,
}

impl FailuresReport {
    /// Adds `other`'s rows, counts and warnings to this report, in no order ([`sort`] puts
    /// them in order).
    ///
    /// [`sort`]: FailuresReport::sort
    pub fn absorb(&mut self, other: FailuresReport) {
        self.n_failures += other.n_failures;
        self.n_files += other.n_files;
        self.n_files_decoded += other.n_files_decoded;
        append_to_larger(&mut self.failures, other.failures);
        append_to_larger(&mut self.repeats, other.repeats);
        append_to_larger(&mut self.warnings, other.warnings);
    }

    /// Sorts the rows newest first (see [`FailureRow::sort_key`]) and the warnings.
    pub fn sort(&mut self) {
        sort_stably_in_place(&mut self.failures, |left, right| {
            left.sort_key().cmp(&right.sort_key())
        });
        sort_stably_in_place(&mut self.repeats, |left, right| {
            left.sort_key().cmp(&right.sort_key())
        });
        self.warnings.sort();
    }
}

/// Moves `other`'s items into `items`, keeping the larger of the two buffers: the rows of one
/// big file are never copied into a second buffer of their size.
fn append_to_larger<T>(items: &mut Vec<T>, mut other: Vec<T>) {
    if other.len() > items.len() {
        std::mem::swap(items, &mut other);
    }
    items.extend(other);
}

/// Sorts `items` as `compare` orders them, equal items in their order, with a buffer of one
/// index per item rather than the half of the items' size a stable sort of the items borrows.
pub(crate) fn sort_stably_in_place<T>(
    items: &mut [T],
    compare: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&left, &right| compare(&items[left], &items[right]));
    // Item `i` of the sorted slice is item `order[i]` of the unsorted one: each cycle of the
    // permutation is walked once, swapping, and marked done.
    for start in 0..items.len() {
        let mut current = start;
        while order[current] != start {
            let next = order[current];
            items.swap(current, next);
            order[current] = current;
            current = next;
        }
        order[current] = current;
    }
}

impl RepeatRow {
    /// Returns the row's sort key, newest first, as [`FailureRow::sort_key`] orders.
    pub fn sort_key(&self) -> (std::cmp::Reverse<Option<Timestamp>>, &str, &str) {
        (
            std::cmp::Reverse(self.instant),
            &self.path,
            self.entry_id.as_str(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_in_place_as_a_stable_sort_does(keys in proptest::collection::vec(0u8..6, 0..200)) {
            // Each item is its key and its first position: equal keys must keep their order.
            let items: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|item| item.0);
            let mut sorted = items;
            sort_stably_in_place(&mut sorted, |left, right| left.0.cmp(&right.0));
            prop_assert_eq!(sorted, expected);
        }
    }

    #[test]
    fn appends_whichever_is_larger() {
        let mut small = vec![1];
        append_to_larger(&mut small, vec![2, 3, 4]);
        assert_eq!(small, [2, 3, 4, 1]);
        let mut large = vec![1, 2, 3];
        append_to_larger(&mut large, vec![4]);
        assert_eq!(large, [1, 2, 3, 4]);
    }
}
