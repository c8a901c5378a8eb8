//! The handoff document of one session: its plain, serialisable types (built by
//! [`crate::handoff`], rendered by `pi_retrospect_render::handoff`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The handoff of one session: its header facts, the goal, how to resume it, and the most
/// recent user and assistant text messages of its active branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Handoff {
    /// Where the excerpt comes from.
    pub source: HandoffSource,
    /// The goal of the work to continue, when one was given: terminal controls stripped,
    /// redacted, cut to its byte limit.
    pub goal: Option<HandoffText>,
    /// The shell command that resumes the source session: `pi --session PATH`, with the path
    /// quoted for a POSIX shell when it needs quoting.
    pub resume_command: String,
    /// How many credentials were redacted in everything the document shows: the goal, the
    /// name, the task, the compaction summary, the files, the failures and the excerpt.
    pub redactions: RedactionCounts,
    /// The original task: the first user message with text on the active branch, stripped,
    /// redacted and cut like a message of the excerpt (to the goal's byte limit).
    pub task: Option<HandoffMessage>,
    /// The summary of the latest compaction on the active branch: what Pi's model was told
    /// of the work before it.
    pub compaction: Option<HandoffSummary>,
    /// The files the session's `edit` and `write` tool calls on the active branch touched,
    /// least recently touched first: at most the last 50.
    pub files_touched: Vec<HandoffFile>,
    /// How many files were touched in all.
    pub n_files_touched: usize,
    /// What failed in the last turns (since the third-last user message of the active
    /// branch), oldest first: failed, aborted or cut-off assistant replies, tool errors and
    /// `!` commands that failed; at most the last 8.
    pub failures: Vec<HandoffFailure>,
    /// How many failures there were in those turns.
    pub n_failures: usize,
    /// The most recent user and assistant text messages, newest last.
    pub excerpt: Excerpt,
    /// Damage found in the session file (lines skipped or repaired), in the order found: at
    /// most the first 20.
    pub warnings: Vec<HandoffWarning>,
    /// How many warnings there were in all.
    pub n_warnings: usize,
}

/// The source session of a handoff, as its header and entries describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffSource {
    /// The absolute path of the session file.
    pub path: String,
    /// The session id from the header.
    pub session_id: Option<String>,
    /// The working directory from the header.
    pub cwd: Option<String>,
    /// The session's name as Pi shows it (the latest `session_info`), stripped of terminal
    /// controls, redacted and cut like every one-line field.
    pub name: Option<String>,
    /// Models used, `provider/model`, in order of first use: at most the first 16.
    pub models: Vec<String>,
    /// How many models were used in all.
    pub n_models: usize,
    /// The earliest entry timestamp, as stored.
    pub first_activity: Option<String>,
    /// The latest entry timestamp, as stored.
    pub last_activity: Option<String>,
}

/// A text that may have been cut to a byte limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffText {
    /// The text kept: a prefix of the cleaned text, cut on a character boundary.
    pub text: String,
    /// Whether anything was cut off.
    pub is_cut: bool,
    /// The length in bytes of the cleaned text before the cut.
    pub n_bytes: usize,
}

/// Counts of redacted credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedactionCounts {
    /// All redactions.
    pub total: u64,
    /// Redactions per kind, by the kind's name as written in `[redacted: KIND]`.
    pub by_kind: BTreeMap<String, u64>,
}

/// The excerpt of a handoff: the messages shown and the limits they were cut to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Excerpt {
    /// The messages shown, oldest first (newest last).
    pub messages: Vec<HandoffMessage>,
    /// The number of user and assistant messages with text on the active branch.
    pub n_available: usize,
    /// The total length in bytes of the messages' `text`.
    pub n_bytes: usize,
    /// The limits the excerpt was cut to.
    pub limits: ExcerptLimits,
}

/// The limits of an excerpt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExcerptLimits {
    /// At most this many messages.
    pub max_messages: usize,
    /// Each message's text at most this many bytes.
    pub max_message_bytes: usize,
    /// All messages' text together at most this many bytes.
    pub max_excerpt_bytes: usize,
}

/// Who wrote a message of the excerpt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HandoffRole {
    /// The person.
    User,
    /// The model.
    Assistant,
}

impl HandoffRole {
    /// Returns the role's name as Pi writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            HandoffRole::User => "user",
            HandoffRole::Assistant => "assistant",
        }
    }
}

/// One message of the excerpt: its text blocks only, never thinking, tool calls or images.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffMessage {
    /// The entry's handle: its id, or `line:N` in files without ids.
    pub entry_id: String,
    /// Who wrote it.
    pub role: HandoffRole,
    /// The entry timestamp, as stored.
    pub timestamp: Option<String>,
    /// Assistant messages: the model that answered, `provider/model`.
    pub model: Option<String>,
    /// The text kept: controls stripped, credentials redacted, then cut on a character
    /// boundary (never inside a `[redacted: KIND]` marker).
    pub text: String,
    /// Whether anything was cut off.
    pub is_cut: bool,
    /// The length in bytes of the cleaned text before the cut.
    pub n_bytes: usize,
}

/// A problem found in the session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffWarning {
    /// The physical line it concerns, when it concerns one.
    pub line_no: Option<u64>,
    /// What is wrong, stripped of terminal controls.
    pub message: String,
}

/// The summary of a compaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffSummary {
    /// The compaction entry's id.
    pub entry_id: String,
    /// The entry timestamp, as stored.
    pub timestamp: Option<String>,
    /// The summary: controls stripped, credentials redacted, cut on a character boundary
    /// (never inside a marker).
    pub text: String,
    /// Whether anything was cut off.
    pub is_cut: bool,
    /// The length in bytes of the cleaned summary before the cut.
    pub n_bytes: usize,
}

/// A file an `edit` or `write` tool call touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffFile {
    /// The path as the tool call gave it (relative to the session's cwd when relative),
    /// stripped, redacted and cut like every one-line field.
    pub path: String,
    /// The tools that touched it (`edit`, `write`), in order of first use.
    pub tools: Vec<String>,
    /// How many calls touched it.
    pub n_calls: usize,
    /// The entry of the last call that touched it.
    pub last_entry_id: String,
}

/// What kind of failure a [`HandoffFailure`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FailureKind {
    /// An assistant reply that stopped with an error (`stopReason: "error"`).
    ReplyError,
    /// An assistant reply the user or Pi stopped (`stopReason: "aborted"`).
    ReplyAborted,
    /// An assistant reply cut off at the model's output limit (`stopReason: "length"`).
    ReplyCutOff,
    /// A tool result with `isError: true`.
    ToolError,
    /// A `!` command that exited with a code other than 0 or was cancelled.
    CommandFailed,
}

impl FailureKind {
    /// Returns the kind's name as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::ReplyError => "replyError",
            FailureKind::ReplyAborted => "replyAborted",
            FailureKind::ReplyCutOff => "replyCutOff",
            FailureKind::ToolError => "toolError",
            FailureKind::CommandFailed => "commandFailed",
        }
    }
}

/// One failure of the last turns, with its error text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoffFailure {
    /// The failing entry's handle: its id, or `line:N` in files without ids.
    pub entry_id: String,
    /// The entry timestamp, as stored.
    pub timestamp: Option<String>,
    /// What failed.
    pub kind: FailureKind,
    /// Tool errors: the tool's name.
    pub tool: Option<String>,
    /// What was run: a tool call's arguments in one line, or the `!` command; stripped,
    /// redacted and cut like every one-line field.
    pub call: Option<String>,
    /// `!` commands: the exit code, when the command exited.
    pub exit_code: Option<i64>,
    /// The error text: the reply's error message (its start kept when cut), or the tool's
    /// or command's output (its end kept when cut, where errors are); stripped and redacted.
    pub text: String,
    /// Whether anything was cut off.
    pub is_cut: bool,
    /// The length in bytes of the cleaned text before the cut.
    pub n_bytes: usize,
}
