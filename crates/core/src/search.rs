//! The result types of a search over session files: hits, per-file counts, warnings and the
//! `search --json` document.
//!
//! They are plain data so that the search engine (which produces them) and the renderers
//! (which write them) meet here, as the walk and the list writers meet at [`crate::Listing`].
//! Every type serialises with camelCase field names.

use serde::Serialize;

/// Returns which kind of text a hit was found in; serialised in camelCase (`bashCommand`).
///
/// Which kinds are searched by default, and the flag that adds each of the others, is the
/// rule of `pi-retrospect-read`'s `searchable` module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FieldKind {
    /// The text of a user message.
    User,
    /// The text blocks of an assistant message.
    Assistant,
    /// The error of a failed assistant response (`errorMessage`: the provider's error, such
    /// as `429 … rate limit` or `overloaded`).
    ErrorMessage,
    /// The command of a `!` shell command (a `bashExecution` message).
    BashCommand,
    /// The output of a `!` shell command.
    BashOutput,
    /// The summary of a compaction (a `compaction` entry or a `compactionSummary` message).
    CompactionSummary,
    /// The summary of an abandoned branch (a `branch_summary` entry or a `branchSummary`
    /// message).
    BranchSummary,
    /// The text of an extension's message (a `custom_message` entry, a `custom` message, or a
    /// message with a role Pi does not define).
    Custom,
    /// A session name (a `session_info` entry).
    SessionName,
    /// A label on an entry (a `label` entry).
    Label,
    /// The text of a thinking block (opt-in).
    Thinking,
    /// A string value inside a tool call's arguments (opt-in).
    ToolArgs,
    /// The text of a tool result (opt-in).
    ToolResult,
    /// The system prompt: a system message's text and prompt sections (opt-in).
    System,
}

impl FieldKind {
    /// Every kind, the ones searched by default first.
    pub const ALL: [FieldKind; 14] = [
        FieldKind::User,
        FieldKind::Assistant,
        FieldKind::ErrorMessage,
        FieldKind::BashCommand,
        FieldKind::BashOutput,
        FieldKind::CompactionSummary,
        FieldKind::BranchSummary,
        FieldKind::Custom,
        FieldKind::SessionName,
        FieldKind::Label,
        FieldKind::Thinking,
        FieldKind::ToolArgs,
        FieldKind::ToolResult,
        FieldKind::System,
    ];

    /// Returns the kind's name as serialised (`bashCommand`).
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::User => "user",
            FieldKind::Assistant => "assistant",
            FieldKind::ErrorMessage => "errorMessage",
            FieldKind::BashCommand => "bashCommand",
            FieldKind::BashOutput => "bashOutput",
            FieldKind::CompactionSummary => "compactionSummary",
            FieldKind::BranchSummary => "branchSummary",
            FieldKind::Custom => "custom",
            FieldKind::SessionName => "sessionName",
            FieldKind::Label => "label",
            FieldKind::Thinking => "thinking",
            FieldKind::ToolArgs => "toolArgs",
            FieldKind::ToolResult => "toolResult",
            FieldKind::System => "system",
        }
    }

    /// Returns the kind named `name` (the serialised spelling).
    pub fn from_name(name: &str) -> Option<FieldKind> {
        FieldKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// What a text heading shows of a session besides its path: its title (its name, else its
/// first user message, as stored) and its working directory, each when it could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionHeading {
    /// The session's name, else its first user message.
    pub title: Option<String>,
    /// The header's working directory.
    pub cwd: Option<String>,
}

/// Returns where a match sits inside a snippet: UTF-8 byte offsets, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MatchRange {
    /// Offset of the match's first byte in the snippet.
    pub start: usize,
    /// Offset just past the match's last byte shown in the snippet.
    pub end: usize,
}

/// Returns one place a pattern matched: one searchable text of one entry.
///
/// A text is one string of the entry (a text block, a thinking block, a summary, one string
/// inside a tool call's arguments, ...), so an entry can give several hits; `nMatches`
/// counts the matches inside this one text, and the snippet shows the first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Absolute path of the session file.
    pub path: String,
    /// Run depth: 0 for a top-level session, 1 for a subagent run it launched, and so on.
    pub depth: u32,
    /// The physical line (1-based) the entry is on; with the path, the stable handle.
    pub line_no: u64,
    /// The entry's stored id (absent in version 1 files).
    pub entry_id: Option<String>,
    /// The entry's timestamp as stored.
    pub timestamp: Option<String>,
    /// The entry's stored `type` (`message`, `compaction`, `label`, ...).
    pub entry_type: String,
    /// The message role for `message` entries (version 3 spelling: a version 2
    /// `hookMessage` is `custom`).
    pub role: Option<String>,
    /// Which kind of text matched.
    pub field: FieldKind,
    /// The tool whose call arguments or result matched.
    pub tool_name: Option<String>,
    /// The model that wrote the assistant message that matched.
    pub model: Option<String>,
    /// Whether the entry is on the session's active branch (the path from a root to the
    /// leaf, the last entry appended).
    pub is_on_active_branch: bool,
    /// Text around the first match in this text, on one line and safe for a terminal:
    /// whitespace controls become spaces, other controls, escape sequences and bidi
    /// overrides are removed; `…` marks text cut at either end.
    pub snippet: String,
    /// Where the first match sits in `snippet`.
    pub match_range: MatchRange,
    /// How many matches this text holds.
    pub n_matches: u64,
}

impl SearchHit {
    /// Returns the snippet's text before the first match, the match and the text after it,
    /// or `None` when `match_range` does not fit the snippet (never made by the search).
    pub fn snippet_parts(&self) -> Option<(&str, &str, &str)> {
        let (start, end) = (self.match_range.start, self.match_range.end);
        Some((
            self.snippet.get(..start)?,
            self.snippet.get(start..end)?,
            self.snippet.get(end..)?,
        ))
    }
}

/// Returns a problem met while searching: a file that could not be read, or a line that could
/// hold a match but is not valid JSON.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchWarning {
    /// The file concerned.
    pub path: String,
    /// The line concerned, when there is one.
    pub line_no: Option<u64>,
    /// What went wrong.
    pub message: String,
}

impl SearchWarning {
    /// Returns a warning about `path` (and `line_no`, when given).
    pub fn new(path: impl Into<String>, line_no: Option<u64>, message: impl Into<String>) -> Self {
        SearchWarning {
            path: path.into(),
            line_no,
            message: message.into(),
        }
    }
}

/// Returns how many hits one file gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileCount {
    /// Absolute path of the session file.
    pub path: String,
    /// Run depth, as in [`SearchHit::depth`].
    pub depth: u32,
    /// Hits in the file (cut short by a limit, when one was reached).
    pub n_hits: u64,
}

/// Returns the totals of one search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchTotals {
    /// Files whose search finished (read to the end, or to the limit).
    pub n_files_searched: u64,
    /// Files with at least one hit.
    pub n_files_with_hits: u64,
    /// Hits delivered.
    pub n_hits: u64,
    /// Bytes of session files read.
    pub n_bytes_searched: u64,
    /// Whether the search stopped at the requested limit, so more hits may exist.
    pub is_limit_reached: bool,
}

/// Returns the `search --json` document: every hit in order, the warnings and the totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchDocument {
    /// Hits in the requested order of sessions, in file order inside a session (empty with
    /// `--count` and `--files-with-matches`).
    pub hits: Vec<SearchHit>,
    /// With `--count`: each file with hits and how many, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<FileCount>>,
    /// With `--files-with-matches`: the absolute path of each file with a hit, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// Problems met, in the order of the files they concern.
    pub warnings: Vec<SearchWarning>,
    /// Totals.
    pub totals: SearchTotals,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip_and_match_serde() {
        for kind in FieldKind::ALL {
            assert_eq!(FieldKind::from_name(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).expect("serialise");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(FieldKind::from_name("tool_args"), None);
    }
}
