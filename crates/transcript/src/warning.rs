//! Warnings about damage found in a session file, each with the line it concerns.

use serde::Serialize;

/// Returns what kind of damage a [`TranscriptWarning`] reports; serialised in `snake_case`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The file is empty or its first line is not a session header.
    MissingHeader,
    /// The header's version is not 1, 2 or 3.
    UnknownVersion,
    /// A version 1 file: entries carry no ids, so Pi invents new ones on every open.
    Version1Ids,
    /// The file starts with a UTF-8 byte order mark.
    ByteOrderMark,
    /// Lines end with CRLF instead of LF.
    CrlfLineEndings,
    /// A line is not valid JSON (or not valid UTF-8).
    MalformedLine,
    /// A line is longer than the line cap; it was skipped without being held in memory.
    OverLongLine,
    /// A line is valid JSON but not an entry object with a string `type`.
    NotAnEntry,
    /// The final line has no newline and is not complete JSON: a write in progress.
    PartialFinalLine,
    /// The final line has no newline but is complete JSON; it is kept.
    MissingFinalNewline,
    /// A second (or later) session header inside the file.
    ExtraHeader,
    /// An entry of a version 2+ file has no id, so nothing can name it as parent.
    MissingId,
    /// Two entries share an id; the later one wins lookups, as in Pi.
    DuplicateId,
    /// An entry's parent id names no entry; the entry is kept as an extra root.
    MissingParent,
    /// Entries form a parent cycle; the cycle is cut and its first entry becomes a root.
    Cycle,
    /// A compaction's `firstKeptEntryId` is not on its branch.
    FirstKeptNotOnBranch,
}

/// Returns one problem found in a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptWarning {
    /// The physical line (1-based) the problem is on, when it has one.
    pub line_no: Option<u64>,
    /// What kind of problem it is.
    pub kind: WarningKind,
    /// A human-readable description.
    pub message: String,
}

impl TranscriptWarning {
    /// Returns a warning of `kind` about `line_no`.
    pub fn new(line_no: Option<u64>, kind: WarningKind, message: impl Into<String>) -> Self {
        TranscriptWarning {
            line_no,
            kind,
            message: message.into(),
        }
    }
}
