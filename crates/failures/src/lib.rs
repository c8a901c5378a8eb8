//! What failed in Pi sessions: tool errors, provider errors, aborted and cut-off replies and
//! `!` commands that exited non-zero, each as a row with its place in the session and its
//! error text; grouped by a normalised signature, tool, session, project or day; and runs of
//! the same call repeated three or more times in a row.
//!
//! A file is read once through transcript's capped line reader; a line is decoded only when
//! its raw bytes hold a failure's key and value (`recognize`, the one module that reads raw
//! bytes), so a file without such bytes is never decoded. A file with a failure is parsed
//! again for its entry tree (whether the failure is on the active branch, the arguments of
//! the call that failed). Entries a fork copied from a parent that is scanned too are counted
//! in the parent only.

#![deny(missing_docs)]

mod decode;
mod group;
mod recognize;
mod scan;
mod signature;
mod types;

pub use group::{Grouper, group};
pub use recognize::{may_hold_tool_call, may_record_failure};
pub use scan::{
    MAX_HELD_ROWS, MESSAGE_CHARS, REPEAT_MIN_CALLS, ScanFile, ScanOptions, files_of, merge, scan,
    scan_one, scan_one_folded, scan_one_held, scan_one_streamed,
};
pub use signature::{normalize_error, signature};
pub use types::{FailureGroup, FailureKind, FailureRow, FailuresReport, GroupBy, RepeatRow};

/// Returns the failure kind one decoded line records, if any: the decoding the raw-byte
/// recognition must never miss (for tests that hold the two together).
pub fn decoded_failure_kind(line: &[u8]) -> Option<FailureKind> {
    let value = pi_retrospect_read::decode_line(line)?;
    decode::classify(&value).map(|recorded| recorded.kind)
}
