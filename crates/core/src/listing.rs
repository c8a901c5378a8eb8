//! The contract's result types: session rows, nested sessions, warnings and the listing.

use serde::Serialize;

use crate::timestamp::Timestamp;

/// The fields a valid session header contributes to a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderFields {
    /// Session id from the header.
    pub id: String,
    /// Header timestamp exactly as written.
    pub timestamp: String,
    /// The instant `timestamp` denotes, used for ordering.
    pub instant: Timestamp,
    /// Absolute working directory from the header.
    pub cwd: String,
    /// Non-empty `parentSession` from the header (fork lineage), verbatim.
    pub parent_session_path: Option<String>,
}

/// One discovered session file whose header validated, before nesting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Absolute path of the session file; the handle to key on.
    pub path: String,
    /// Values from the file's header line.
    pub header: HeaderFields,
}

/// A session with the subagent transcripts nested under it, as the contract returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Session id from the header; not unique across rows.
    pub id: String,
    /// Absolute path of the session file; unique across rows.
    pub path: String,
    /// Header timestamp exactly as written.
    pub timestamp: String,
    /// Absolute working directory from the header.
    pub cwd: String,
    /// Fork lineage from the header's `parentSession`, only when present and non-empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_path: Option<String>,
    /// Subagent transcripts launched under this session, oldest first; always present.
    pub subagent_sessions: Vec<Session>,
    /// The instant `timestamp` denotes; not part of the contract's JSON.
    #[serde(skip)]
    pub instant: Timestamp,
    /// How many direct runs a depth limit removed from `subagent_sessions`, so that a pruned
    /// listing still reports how many runs a session launched; not part of the contract's JSON.
    #[serde(skip)]
    pub n_pruned_runs: usize,
    /// The body facts the walk read for this session while it held the file open (the ends
    /// read of `--long` and `--jsonl`), kept on the session itself so that a listing of
    /// thousands needs no lookup by path to show them; `None` when none were read this way.
    /// Boxed, so that a session stays small to move (sorting and nesting move thousands).
    /// Not part of the contract's JSON.
    #[serde(skip)]
    pub summary: Option<Box<SessionSummary>>,
}

impl Drop for Session {
    /// Drops the runs below this session one level at a time from a work list: the drop the
    /// compiler writes recurses once per level, which a store with runs nested thousands of
    /// levels deep would take past the end of the stack.
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.subagent_sessions);
        while let Some(mut session) = pending.pop() {
            pending.append(&mut session.subagent_sessions);
        }
    }
}

impl Session {
    /// Returns a childless session made from one row.
    pub fn from_row(row: SessionRow) -> Self {
        Session {
            id: row.header.id,
            path: row.path,
            timestamp: row.header.timestamp,
            cwd: row.header.cwd,
            parent_session_path: row.header.parent_session_path,
            subagent_sessions: Vec::new(),
            instant: row.header.instant,
            n_pruned_runs: 0,
            summary: None,
        }
    }

    /// Returns the body facts to use for this session: `read` (facts read apart from the
    /// session, by path), else its own [`Session::summary`].
    pub fn facts<'a>(&'a self, read: Option<&'a SessionSummary>) -> Option<&'a SessionSummary> {
        read.or(self.summary.as_deref())
    }

    /// Returns how many runs this session launched directly, including any a depth limit hid.
    pub fn n_runs(&self) -> usize {
        self.subagent_sessions.len() + self.n_pruned_runs
    }

    /// Returns the contract's order: timestamp instant ascending, then path bytes.
    pub fn chronological_cmp(&self, other: &Session) -> std::cmp::Ordering {
        self.instant
            .cmp(&other.instant)
            .then_with(|| self.path.as_bytes().cmp(other.path.as_bytes()))
    }
}

/// A file or directory the walk reached but could not turn into a session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Warning {
    /// Absolute path of what was skipped.
    pub path: String,
    /// Why it was skipped; free-form text.
    pub reason: String,
    /// Whether the discovery rules leave the entry out rather than skip it (a symbolic link
    /// or a FIFO where a session file or project directory could be, a directory name too
    /// short for `--<slug>--`). The contract's documents (`list --json`, the text output,
    /// `list_sessions`) do not warn about such entries, so their writers leave these out;
    /// every other output reports them like any warning.
    #[serde(skip)]
    pub is_out_of_scope: bool,
}

impl Warning {
    /// Returns a warning for `path` with `reason`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Warning {
            path: path.into(),
            reason: reason.into(),
            is_out_of_scope: false,
        }
    }

    /// Returns a warning for an entry at `path` that the discovery rules leave out, and why
    /// (see [`Warning::is_out_of_scope`]).
    pub fn out_of_scope(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Warning {
            is_out_of_scope: true,
            ..Warning::new(path, reason)
        }
    }
}

/// The result of listing a store: nested sessions and warnings, both in contract order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// Top-level sessions, oldest first, each with its subagent tree.
    pub sessions: Vec<Session>,
    /// Everything skipped, sorted by path then reason.
    pub warnings: Vec<Warning>,
}

impl Listing {
    /// Puts sessions (at every level) and warnings into the contract's order.
    pub fn sort(&mut self) {
        sort_sessions(&mut self.sessions);
        self.warnings.sort();
        self.warnings.dedup();
    }
}

/// Sorts sessions and their children, at every level, into the contract's order. Levels are
/// kept on an explicit work list, so a deep nesting cannot overflow the stack.
pub fn sort_sessions(sessions: &mut [Session]) {
    let mut levels: Vec<&mut [Session]> = vec![sessions];
    while let Some(level) = levels.pop() {
        level.sort_by(Session::chronological_cmp);
        for session in level {
            if !session.subagent_sessions.is_empty() {
                levels.push(&mut session.subagent_sessions);
            }
        }
    }
}

/// Facts about a session that need its body, not just its header; read only on request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session's name as Pi shows it: the latest `session_info` entry's non-empty `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text of the first user message, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_user_message: Option<String>,
    /// The newest entry's timestamp (read from the end of the file), when one was read.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_instant"
    )]
    pub last_activity: Option<Timestamp>,
    /// Why the newest entry's timestamp could not be read within the bounded read from the
    /// end (a last line longer than the line cap), so the start counts instead: the reason a
    /// front end reports as a warning naming the file. `None` when the read reached an
    /// entry or the file's start.
    #[serde(skip)]
    pub last_activity_unknown: Option<String>,
}

/// Writes an instant as RFC 3339 text in UTC with milliseconds.
fn serialize_instant<S: serde::Serializer>(
    instant: &Option<Timestamp>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match instant {
        Some(instant) => serializer.collect_str(instant),
        None => serializer.serialize_none(),
    }
}

impl SessionSummary {
    /// Returns the name, else the first user message: what a one-line listing shows.
    pub fn title(&self) -> Option<&str> {
        self.name.as_deref().or(self.first_user_message.as_deref())
    }
}

impl Session {
    /// Returns when the session was last active: the newest entry's timestamp from `summary`
    /// when it was read and is not older than the header's, else the header's instant.
    pub fn last_activity(&self, summary: Option<&SessionSummary>) -> Timestamp {
        summary
            .and_then(|summary| summary.last_activity)
            .map_or(self.instant, |last| last.max(self.instant))
    }
}

/// The shortest id prefix `--long` shows.
pub const MIN_ID_WIDTH: usize = 8;

/// Returns the shortest prefix length (at least eight characters) at which the distinct ids
/// shown are all told apart, so the id column is a usable `--id` prefix.
pub fn unique_prefix_len<'a>(ids: impl Iterator<Item = &'a str>) -> usize {
    let mut distinct: Vec<&str> = ids.collect();
    distinct.sort_unstable();
    distinct.dedup();
    let longest = distinct
        .iter()
        .map(|id| id.chars().count())
        .max()
        .unwrap_or(0);
    // In sorted order, the longest prefix any two ids share is shared by a neighbouring pair.
    let needed = distinct
        .windows(2)
        .map(|pair| crate::id_prefixes::common_chars(pair[0], pair[1]) + 1)
        .max()
        .unwrap_or(0);
    needed.max(MIN_ID_WIDTH).min(longest)
}
