//! The `entries` view: the stored entries of one file in file order, one row each, filtered.

use pi_retrospect_core::Timestamp;
use pi_retrospect_core::search::FieldKind;
use pi_retrospect_core::timestamp;
use pi_retrospect_read::searchable::{CaseMode, LiteralMatcher, SearchScope, context_role};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::content::{MessageFacts, entry_text, message_facts, searchable_texts};
use crate::entry::Entry;
use crate::error::TranscriptError;
use crate::session::Transcript;
use pi_retrospect_read::decode_lossy;

/// Returns the filters of the `entries` view; all given filters must hold (AND).
#[derive(Debug, Clone, Default)]
pub struct EntriesFilter {
    /// Only lines at or after this physical line number.
    pub first_line: Option<u64>,
    /// Only lines at or before this physical line number.
    pub last_line: Option<u64>,
    /// Only the entry with this stored id.
    pub id: Option<String>,
    /// Only entries whose stored parent id is this.
    pub parent_id: Option<String>,
    /// Only entries of these types (any of them); empty means all.
    pub types: Vec<String>,
    /// Only messages with these roles (any of them); empty means all entries.
    pub roles: Vec<String>,
    /// Only entries whose own timestamp is at or after this instant.
    pub since: Option<Timestamp>,
    /// Only entries whose own timestamp is at or before this instant.
    pub until: Option<Timestamp>,
    /// Only entries with a searchable text (the rule of `read::searchable`, as `search`
    /// has it) that contains any of these literal terms.
    pub grep: Vec<String>,
    /// How `grep` terms treat case (smart case by default).
    pub case: CaseMode,
    /// The opt-in kinds `grep` looks in besides the default ones; `roles` naming
    /// `toolResult` or `system` adds theirs, as in `search`.
    pub grep_scope: SearchScope,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// Include each line's JSON verbatim as `raw`.
    pub include_raw: bool,
}

/// Returns one row of the `entries` view.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryRow {
    /// Physical line number: the stable handle of the entry.
    pub line_no: u64,
    /// The stored id; null in version 1 files.
    pub id: Option<String>,
    /// The stored parent id; null in version 1 files and for roots.
    pub parent_id: Option<String>,
    /// The entry's own timestamp, UTC RFC 3339 (as stored when it is not a real instant).
    pub timestamp: Option<String>,
    /// The stored type.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// The message role, for `message` entries.
    pub message_role: Option<String>,
    /// The human-readable body (never thinking, tool calls or images).
    pub text: Option<String>,
    /// Messages: how it ended, tools called, images and thinking blocks counted.
    #[serde(flatten)]
    pub facts: MessageFacts,
    /// The line's JSON when asked for: as stored, but as strict single-line JSON (whitespace
    /// between tokens dropped, invalid UTF-8 and lone surrogates as U+FFFD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<Box<RawValue>>,
}

/// Returns the rows of `session` that pass `filter`, in file order.
///
/// This holds every row in memory; a writer that can print rows one by one should use
/// [`for_each_entry_row`] instead.
pub fn entries(
    session: &Transcript,
    filter: &EntriesFilter,
) -> Result<Vec<EntryRow>, TranscriptError> {
    let mut rows = Vec::new();
    for_each_entry_row(session, filter, |row| {
        rows.push(row);
        Ok::<(), TranscriptError>(())
    })?;
    Ok(rows)
}

/// Hands the rows of `session` that pass `filter` to `visit` one at a time, in file order, so
/// memory stays at one row whatever the file holds; stops at the first error `visit`
/// returns.
pub fn for_each_entry_row<E: From<TranscriptError>>(
    session: &Transcript,
    filter: &EntriesFilter,
    mut visit: impl FnMut(EntryRow) -> Result<(), E>,
) -> Result<(), E> {
    let needles = filter
        .grep
        .iter()
        .map(|term| {
            LiteralMatcher::new(term, filter.case).ok_or_else(|| TranscriptError::InvalidArgument {
                name: "grep",
                value: term.clone(),
                reason: "is too long to search for",
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kinds = filter.grep_scope.kinds().with_filters(&filter.roles, &[]);
    let version = session.version();
    let mut n_rows = 0usize;
    for (idx, entry) in session.entries().iter().enumerate() {
        if filter.limit.is_some_and(|limit| n_rows >= limit) {
            break;
        }
        if filter.last_line.is_some_and(|last| entry.line_no > last) {
            break;
        }
        if !is_selected(session, filter, idx, &entry) {
            continue;
        }
        // One read of the line serves both the text and, with `include_raw`, the raw JSON.
        let bytes = session.line_bytes(idx)?;
        let value = decode_lossy(&bytes);
        let text = entry_text(&entry, &value);
        // With a role filter, a text counts only when its role in Pi's context is one of
        // those asked for, as in `search`.
        let role = entry.role();
        let is_wanted_role = |kind| {
            filter.roles.is_empty()
                || context_role(
                    entry.entry_type,
                    role.as_ref().map(|role| role.as_str()),
                    kind,
                )
                .is_some_and(|role| filter.roles.iter().any(|wanted| wanted == role))
        };
        if !needles.is_empty()
            && !searchable_texts(&value, kinds, version).iter().any(|text| {
                is_wanted_role(text.kind)
                    && needles.iter().any(|needle| needle.is_match(&text.text))
            })
        {
            continue;
        }
        let raw = filter.include_raw.then(|| strict_json(&bytes));
        let (id, parent_id) = if session.is_linear() {
            (None, None)
        } else {
            (entry.id, entry.parent_id)
        };
        n_rows += 1;
        visit(EntryRow {
            line_no: entry.line_no,
            id: id.map(str::to_owned),
            parent_id: parent_id.map(str::to_owned),
            timestamp: entry.timestamp.map(crate::text::utc_timestamp),
            entry_type: entry.entry_type.to_owned(),
            message_role: entry.role().map(|role| role.as_str().to_owned()),
            text,
            facts: message_facts(&entry, &value),
            raw,
        })?;
    }
    Ok(())
}

/// Returns whether entry `idx` passes every filter that needs only its envelope.
fn is_selected(
    session: &Transcript,
    filter: &EntriesFilter,
    idx: usize,
    entry: &Entry<'_>,
) -> bool {
    if filter.first_line.is_some_and(|first| entry.line_no < first) {
        return false;
    }
    let is_linear = session.is_linear();
    let id = if is_linear { None } else { entry.id };
    let parent_id = if is_linear { None } else { entry.parent_id };
    if let Some(wanted) = &filter.id
        && !is_handle_match(wanted, id, Some(entry.line_no))
    {
        return false;
    }
    if let Some(wanted) = &filter.parent_id {
        let parent_line = session
            .parent(idx)
            .map(|parent| session.entry(parent).line_no);
        if !is_handle_match(wanted, parent_id, parent_line) {
            return false;
        }
    }
    if !filter.types.is_empty() && !filter.types.iter().any(|kind| kind == entry.entry_type) {
        return false;
    }
    // An entry's role is its role in Pi's context (a `custom_message` is `custom`); with
    // `--grep`, the texts that match are held to it instead (a compaction's system checkpoint
    // is `system`), below.
    if !filter.roles.is_empty() && filter.grep.is_empty() {
        let role = entry.role();
        let role = context_role(
            entry.entry_type,
            role.as_ref().map(|role| role.as_str()),
            FieldKind::User,
        );
        if !role.is_some_and(|role| filter.roles.iter().any(|wanted| wanted == role)) {
            return false;
        }
    }
    if filter.since.is_some() || filter.until.is_some() {
        let Some(instant) = entry.timestamp.and_then(timestamp::parse) else {
            return false;
        };
        if filter.since.is_some_and(|since| instant < since)
            || filter.until.is_some_and(|until| instant > until)
        {
            return false;
        }
    }
    true
}

/// Returns whether `wanted` names an entry whose stored id is `stored` and whose line is
/// `line`: a `line:N` handle (the stable handle in every file, and the only one in version 1
/// files) matches the line, anything else the stored id.
fn is_handle_match(wanted: &str, stored: Option<&str>, line: Option<u64>) -> bool {
    match wanted
        .strip_prefix("line:")
        .and_then(|number| number.parse::<u64>().ok())
    {
        Some(number) => line == Some(number),
        None => stored == Some(wanted),
    }
}

/// Returns a line's JSON as strict, single-line JSON text that any JSON reader accepts
/// ([`pi_retrospect_read::json::to_strict_json`]: white space between tokens dropped, invalid
/// UTF-8 and lone surrogate escapes as U+FFFD, everything else as stored).
///
/// `bytes` must be a line the envelope decoding accepted; `null` stands in for anything else
/// (only possible when the file changed after it was parsed).
fn strict_json(bytes: &[u8]) -> Box<RawValue> {
    pi_retrospect_read::json::to_strict_json(bytes)
        .ok()
        .and_then(|json| RawValue::from_string(json).ok())
        .unwrap_or_else(null_raw)
}

#[expect(
    clippy::unwrap_used,
    reason = "the literal `null` is valid JSON, so parsing it cannot fail"
)]
fn null_raw() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap()
}
