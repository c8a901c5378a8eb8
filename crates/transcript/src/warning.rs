//! Warnings about damage found in a session file, each with the line it concerns, and the
//! bounded collector that keeps them.
//!
//! A damaged file can hold millions of bad lines, and one kept warning per line cost 742 MB
//! for 10 MiB of junk. So warnings are counted by kind, exactly, and only the first
//! [`KEPT_PER_KIND`] of each kind are kept with their line numbers; each kind that had more
//! ends the list with one [`WarningKind::Omitted`] warning that says how many more there were.
//! A warning that is not kept is never formatted.

use serde::Serialize;

/// The number of warnings of each kind kept with their line numbers.
pub const KEPT_PER_KIND: usize = 20;

/// Returns what kind of damage a [`TranscriptWarning`] reports; serialised in `snake_case`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
    /// A line is not valid JSON as JavaScript's `JSON.parse` reads it (a raw control character
    /// inside a string and an invalid escape included), so Pi skips it too.
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
    /// The file shrank or its first bytes changed while it was read: the entries may mix two
    /// versions of the file.
    ChangedWhileRead,
    /// The file holds more entries than one transcript can index; the rest were not read.
    TooManyEntries,
    /// Stands for the warnings of one kind beyond the first [`KEPT_PER_KIND`]: they were
    /// counted (see [`TranscriptWarning::omitted`]) but not kept.
    Omitted,
}

/// The number of kinds, for per-kind counters.
const N_KINDS: usize = WarningKind::Omitted as usize + 1;

impl WarningKind {
    /// Returns the kind's name as serialised (`malformed_line`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            WarningKind::MissingHeader => "missing_header",
            WarningKind::UnknownVersion => "unknown_version",
            WarningKind::Version1Ids => "version1_ids",
            WarningKind::ByteOrderMark => "byte_order_mark",
            WarningKind::CrlfLineEndings => "crlf_line_endings",
            WarningKind::MalformedLine => "malformed_line",
            WarningKind::OverLongLine => "over_long_line",
            WarningKind::NotAnEntry => "not_an_entry",
            WarningKind::PartialFinalLine => "partial_final_line",
            WarningKind::MissingFinalNewline => "missing_final_newline",
            WarningKind::ExtraHeader => "extra_header",
            WarningKind::MissingId => "missing_id",
            WarningKind::DuplicateId => "duplicate_id",
            WarningKind::MissingParent => "missing_parent",
            WarningKind::Cycle => "cycle",
            WarningKind::FirstKeptNotOnBranch => "first_kept_not_on_branch",
            WarningKind::ChangedWhileRead => "changed_while_read",
            WarningKind::TooManyEntries => "too_many_entries",
            WarningKind::Omitted => "omitted",
        }
    }
}

/// Returns how many warnings of one kind were counted but not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OmittedWarnings {
    /// The kind of the warnings left out.
    pub kind: WarningKind,
    /// How many were left out (the kept ones not included).
    pub count: u64,
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
    /// For a [`WarningKind::Omitted`] warning: which warnings it stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<OmittedWarnings>,
}

impl TranscriptWarning {
    /// Returns a warning of `kind` about `line_no`.
    pub fn new(line_no: Option<u64>, kind: WarningKind, message: impl Into<String>) -> Self {
        TranscriptWarning {
            line_no,
            kind,
            message: message.into(),
            omitted: None,
        }
    }

    /// Returns how many warnings this one stands for: the count of an omitted group, else 1.
    pub fn n_represented(&self) -> u64 {
        self.omitted.map_or(1, |omitted| omitted.count)
    }
}

/// Returns exact warning counts by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WarningCounts {
    counts: [u64; N_KINDS],
}

impl WarningCounts {
    /// Returns how many warnings of `kind` were found.
    pub fn get(&self, kind: WarningKind) -> u64 {
        self.counts[kind as usize]
    }

    /// Returns how many warnings were found in all.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    fn add(&mut self, kind: WarningKind) -> u64 {
        let count = &mut self.counts[kind as usize];
        *count = count.saturating_add(1);
        *count
    }
}

/// Keeps the first [`KEPT_PER_KIND`] warnings of each kind and counts them all; or, with a
/// sink, hands every warning to it as it is found and keeps none.
#[derive(Default)]
pub(crate) struct Warnings<'s> {
    kept: Vec<TranscriptWarning>,
    counts: WarningCounts,
    sink: Option<&'s mut dyn FnMut(TranscriptWarning)>,
}

impl<'s> Warnings<'s> {
    /// Returns a collector that hands every warning to `sink` (the second pass of
    /// [`crate::Transcript::for_each_warning`]) instead of keeping the first few.
    pub(crate) fn streaming(sink: &'s mut dyn FnMut(TranscriptWarning)) -> Self {
        Warnings {
            kept: Vec::new(),
            counts: WarningCounts::default(),
            sink: Some(sink),
        }
    }

    /// Counts a warning of `kind` about `line_no`, formatting its message only when it is kept
    /// (or streamed).
    pub(crate) fn push(
        &mut self,
        line_no: Option<u64>,
        kind: WarningKind,
        message: impl FnOnce() -> String,
    ) {
        let count = self.counts.add(kind);
        if let Some(sink) = self.sink.as_mut() {
            sink(TranscriptWarning::new(line_no, kind, message()));
        } else if count <= KEPT_PER_KIND as u64 {
            self.kept
                .push(TranscriptWarning::new(line_no, kind, message()));
        }
    }

    /// Returns whether a warning of `kind` was counted.
    pub(crate) fn has(&self, kind: WarningKind) -> bool {
        self.counts.get(kind) > 0
    }

    /// Returns the kept warnings, followed by one [`WarningKind::Omitted`] warning for each
    /// kind that had more than were kept, and the exact counts.
    pub(crate) fn finish(mut self) -> (Vec<TranscriptWarning>, WarningCounts) {
        let mut kinds: Vec<WarningKind> = self.kept.iter().map(|warning| warning.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in kinds {
            let count = self.counts.get(kind);
            let n_left_out = count.saturating_sub(KEPT_PER_KIND as u64);
            if n_left_out == 0 {
                continue;
            }
            let name = kind.as_str();
            self.kept.push(TranscriptWarning {
                line_no: None,
                kind: WarningKind::Omitted,
                message: format!(
                    "{n_left_out} more {name} warnings not listed ({count} in all; the first {KEPT_PER_KIND} are listed)"
                ),
                omitted: Some(OmittedWarnings {
                    kind,
                    count: n_left_out,
                }),
            });
        }
        self.kept.shrink_to_fit();
        (self.kept, self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pushes: &[(WarningKind, usize)], expected: &[(WarningKind, usize, Option<u64>)]) {
        let mut warnings = Warnings::default();
        let mut n_formatted = 0;
        for &(kind, n) in pushes {
            for line in 0..n {
                warnings.push(Some(line as u64), kind, || {
                    n_formatted += 1;
                    format!("line {line}")
                });
            }
        }
        let (kept, counts) = warnings.finish();
        let mut actual: Vec<(WarningKind, usize, Option<u64>)> = Vec::new();
        for warning in &kept {
            let omitted = warning.omitted.map(|omitted| omitted.count);
            match actual.last_mut() {
                Some((kind, n, None)) if *kind == warning.kind && omitted.is_none() => *n += 1,
                _ => actual.push((warning.kind, 1, omitted)),
            }
        }
        assert_eq!(actual, expected, "pushes {pushes:?}");
        let total: usize = pushes.iter().map(|(_, n)| n).sum();
        assert_eq!(counts.total(), total as u64);
        assert_eq!(
            kept.iter()
                .map(TranscriptWarning::n_represented)
                .sum::<u64>(),
            total as u64
        );
        assert!(n_formatted <= N_KINDS * KEPT_PER_KIND);
    }

    #[test]
    fn kind_names_are_the_serialised_names() {
        for (idx, &kind) in ALL_KINDS.iter().enumerate() {
            let mut counts = WarningCounts::default();
            counts.counts[idx] = 1;
            assert_eq!(counts.get(kind), 1, "{kind:?} is number {idx}");
            assert_eq!(
                serde_json::to_value(kind).expect("json"),
                serde_json::Value::from(kind.as_str())
            );
        }
    }

    const ALL_KINDS: [WarningKind; N_KINDS] = [
        WarningKind::MissingHeader,
        WarningKind::UnknownVersion,
        WarningKind::Version1Ids,
        WarningKind::ByteOrderMark,
        WarningKind::CrlfLineEndings,
        WarningKind::MalformedLine,
        WarningKind::OverLongLine,
        WarningKind::NotAnEntry,
        WarningKind::PartialFinalLine,
        WarningKind::MissingFinalNewline,
        WarningKind::ExtraHeader,
        WarningKind::MissingId,
        WarningKind::DuplicateId,
        WarningKind::MissingParent,
        WarningKind::Cycle,
        WarningKind::FirstKeptNotOnBranch,
        WarningKind::ChangedWhileRead,
        WarningKind::TooManyEntries,
        WarningKind::Omitted,
    ];

    /// Warnings are counted by kind and only the first few of each are kept.
    #[test]
    fn keeps_the_first_of_each_kind_and_counts_the_rest() {
        use WarningKind::{MalformedLine, MissingParent};
        check(&[], &[]);
        check(&[(MalformedLine, 3)], &[(MalformedLine, 3, None)]);
        check(
            &[(MalformedLine, 20), (MissingParent, 2)],
            &[(MalformedLine, 20, None), (MissingParent, 2, None)],
        );
        check(
            &[(MalformedLine, 1_000_000), (MissingParent, 21)],
            &[
                (MalformedLine, 20, None),
                (MissingParent, 20, None),
                (WarningKind::Omitted, 1, Some(999_980)),
                (WarningKind::Omitted, 1, Some(1)),
            ],
        );
    }
}
