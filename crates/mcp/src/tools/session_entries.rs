//! `session_entries`: one session's stored entries in file order, one row each, filtered, in
//! pages of bounded size that continue with `startLineNo`.

use std::sync::Arc;

use pi_retrospect_app::EntryRow;
use pi_retrospect_app::{EntriesRequest, OpenedSession};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{Case, EntryType, MessageRole, OneOrMany, parse, session_target};
use crate::cursor;
use crate::error::ToolError;
use crate::output::{
    DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES, ToolOutput, bound_warnings, bounded_text, fit_rows,
    json_from_writer, page_budget, text_from_writer,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "session_entries",
    title: "Read a session's entries",
    description: DESCRIPTION,
    input_schema: input_schema::<SessionEntriesParams>,
    output_schema,
    run,
    needs_session: true,
};

/// Rows per page when `limit` is not given.
const DEFAULT_LIMIT: u64 = 100;
/// The largest `limit`.
const MAX_LIMIT: u64 = 500;
/// Characters of `text` kept in a row.
const MAX_TEXT_CHARS: usize = 8_000;
/// The largest `raw` kept in a row, in bytes, when `limit` is given (the 256 KiB budget).
const MAX_RAW_BYTES: usize = 64 * 1024;
/// The largest `raw` kept in a default page's row: with up to 8000 characters of text it
/// still fits the default 32 KiB budget, so one large line does not make the page large.
const DEFAULT_MAX_RAW_BYTES: usize = 16 * 1024;
/// The most `ids` × `parentIds` combinations one call may ask for.
const MAX_HANDLE_COMBINATIONS: usize = 64;

const DESCRIPTION: &str = "\
Reads the stored entries of one session file in file order, one row each: {lineNo, id, \
parentId, timestamp, type, messageRole, text, raw}. Never writes.
- sessionPath is a `path` from list_sessions (absolute; only *.jsonl files inside the session \
stores can be read). Pi 1.6.0 does not tell the server which session is calling, so it is required.
- lineNo is the physical line (line 1 is the header, never a row) and the stable handle; in \
version 1 files id and parentId are null and `line:N` names an entry in ids/parentIds.
- text is the readable body (message text, summaries, `!cmd` for bash); never thinking, tool \
calls or images. raw is the line's JSON exactly as stored.
- Filters combine with AND; values within ids, parentIds, types, messageRoles and \
search.terms OR. search is literal, smart case unless search.case says, over the texts \
search_sessions searches (user and assistant text, API errors, `!` commands and output, \
summaries, custom messages, session names, labels; search.thinking, toolArgs, toolResults \
and system add theirs).
- Pages: at most `limit` rows (default 100, at most 500) and at most 32 KiB of JSON (256 KiB when limit is given); text is \
cut to 8000 characters (isTextTruncated) and raw over 16 KiB (64 KiB when limit is given) is left \
out (rawBytes gives its size). When nextCursor is not null, call again with the same arguments and cursor = nextCursor \
for the next page (or startLineNo = nextStartLineNo, which does not check the file is the same).
- Damage in the file is in warnings (at most 50; nWarnings counts them all), never a failure.";

/// The arguments of `session_entries`: the upstream tool's.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionEntriesParams {
    /// The session file: an absolute `path` from list_sessions, inside the session stores.
    session_path: Option<String>,
    /// Only entries on this physical line or after it (line 1 is the header).
    #[schemars(range(min = 1))]
    start_line_no: Option<u64>,
    /// Only entries on this physical line or before it.
    #[schemars(range(min = 1))]
    end_line_no: Option<u64>,
    /// Only the entries with these ids (or `line:N` handles).
    #[serde(default)]
    ids: OneOrMany,
    /// Only the entries whose parent has one of these ids (or `line:N` handles).
    #[serde(default)]
    parent_ids: OneOrMany,
    /// Only entries of these types (`message`, `compaction`, `label`, `session_info`, ...).
    #[serde(default)]
    types: OneOrMany<EntryType>,
    /// Only messages with these roles (`user`, `assistant`, `toolResult`, `bashExecution`, ...).
    #[serde(default)]
    message_roles: OneOrMany<MessageRole>,
    /// Only entries whose text contains one of the terms.
    search: Option<Search>,
    /// Only entries whose own timestamp is at or after this (RFC 3339, a date, a local
    /// date-time, or an age such as `2h`).
    start_timestamp: Option<String>,
    /// Only entries whose own timestamp is at or before this.
    end_timestamp: Option<String>,
    /// At most this many rows in this page (default 100, at most 500); giving it also raises
    /// the page's byte budget from 32 KiB to 256 KiB.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u64>,
    /// The nextCursor of the previous page, with the same other arguments (only limit may
    /// change): continues after its last row in the same file, refused if the file was
    /// replaced or shrank since.
    cursor: Option<String>,
}

/// A text search over the entries' searchable texts, as search_sessions has them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Search {
    /// Literal terms; an entry matches when one of its texts contains any of them.
    terms: OneOrMany,
    /// smart (default), sensitive or insensitive.
    case: Option<Case>,
    /// The same as case = sensitive (kept for callers that pass it).
    #[serde(default)]
    case_sensitive: bool,
    /// Also search thinking.
    #[serde(default)]
    thinking: bool,
    /// Also search tool-call arguments (string values, never keys).
    #[serde(default)]
    tool_args: bool,
    /// Also search tool output.
    #[serde(default)]
    tool_results: bool,
    /// Also search system prompts.
    #[serde(default)]
    system: bool,
}

fn output_schema() -> Arc<JsonObject> {
    schema_from_text(OUTPUT_SCHEMA)
}

/// The JSON Schema of a `session_entries` page.
const OUTPUT_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "session_entries page",
  "type": "object",
  "required": ["path", "sessionId", "version", "entries", "nextStartLineNo", "nWarnings", "warnings"],
  "additionalProperties": false,
  "properties": {
    "path": { "type": "string", "description": "Absolute path of the file read." },
    "sessionId": { "type": ["string", "null"], "description": "The header's id." },
    "version": { "type": "integer", "minimum": 0, "description": "The header's format version." },
    "entries": {
      "type": "array",
      "maxItems": 500,
      "description": "Rows in file order.",
      "items": { "$ref": "#/$defs/EntryRow" }
    },
    "nextStartLineNo": {
      "type": ["integer", "null"],
      "minimum": 2,
      "description": "Pass as startLineNo with the same arguments for the next page; null when no more rows match."
    },
    "nextCursor": {
      "type": ["string", "null"],
      "description": "Pass as cursor with the same arguments for the next page (it also checks the file is the same one); null when no more rows match."
    },
    "nWarnings": { "type": "integer", "minimum": 0, "description": "How many warnings the file has." },
    "warnings": {
      "type": "array",
      "maxItems": 50,
      "description": "Damage found in the file (the first 50).",
      "items": { "$ref": "#/$defs/Warning" }
    }
  },
  "$defs": {
    "EntryRow": {
      "type": "object",
      "required": ["lineNo", "id", "parentId", "timestamp", "type", "messageRole", "text"],
      "properties": {
        "lineNo": { "type": "integer", "minimum": 2, "description": "Physical line number: the stable handle." },
        "id": { "type": ["string", "null"], "description": "Stored id; null in version 1 files." },
        "parentId": { "type": ["string", "null"], "description": "Stored parent id; null for roots and in version 1 files." },
        "timestamp": { "type": ["string", "null"], "description": "The entry's own timestamp as stored." },
        "type": { "type": "string", "description": "Stored entry type." },
        "messageRole": { "type": ["string", "null"], "description": "The role of a message entry." },
        "text": { "type": ["string", "null"], "maxLength": 8000, "description": "Readable body: never thinking, tool calls or images." },
        "isTextTruncated": { "const": true, "description": "Present when text was cut to 8000 characters." },
        "raw": { "description": "The line's JSON exactly as stored; absent when larger than 16 KiB (64 KiB when limit is given) or when it holds a number JSON cannot carry (1e400)." },
        "rawBytes": { "type": "integer", "minimum": 0, "description": "Present when raw was left out: its size in bytes." },
        "stopReason": { "type": "string", "description": "Assistant: stop, toolUse, length (cut off at the output limit), error, aborted, ..." },
        "errorMessage": { "type": "string", "description": "Assistant: the provider's or Pi's error." },
        "isError": { "type": "boolean", "description": "Tool result: the tool failed." },
        "exitCode": { "type": "integer", "description": "! command: the exit code." },
        "cancelled": { "const": true, "description": "! command: cancelled by the user." },
        "truncated": { "const": true, "description": "! command: Pi kept only part of the output." },
        "fullOutputPath": { "type": "string", "description": "Where Pi saved the whole output it cut." },
        "excludeFromContext": { "const": true, "description": "!! command: not sent to the model." },
        "toolCalls": { "type": "array", "items": { "type": "string" }, "description": "Assistant: the names of the tools it called, in order." },
        "nImages": { "type": "integer", "minimum": 1, "description": "Images in the content, when there are any." },
        "nThinking": { "type": "integer", "minimum": 1, "description": "Thinking blocks in the content (never shown), when there are any." }
      },
      "additionalProperties": false
    },
    "Warning": {
      "type": "object",
      "required": ["lineNo", "kind", "message"],
      "properties": {
        "lineNo": { "type": ["integer", "null"], "minimum": 1 },
        "kind": { "type": "string" },
        "message": { "type": "string" },
        "omitted": {
          "type": "object",
          "required": ["kind", "count"],
          "description": "Only on an `omitted` warning: the warnings of one kind beyond the first ones, counted but not listed.",
          "properties": {
            "kind": { "type": "string" },
            "count": { "type": "integer", "minimum": 1 }
          },
          "additionalProperties": false
        }
      },
      "additionalProperties": false
    }
  }
}
"##;

/// The filters of one call, checked.
struct Filters {
    target: pi_retrospect_app::SessionTarget,
    base: EntriesRequest,
    ids: Vec<String>,
    parent_ids: Vec<String>,
    limit: usize,
    /// The page budget in bytes.
    budget: usize,
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let digest = cursor::digest(&arguments);
    let mut params: SessionEntriesParams = parse(arguments)?;
    let after = params
        .cursor
        .take()
        .map(|text| {
            cursor::decode(TOOL.name, &digest, &text).and_then(|key| FileKey::from_value(&key))
        })
        .transpose()?;
    if let Some(after) = &after {
        params.start_line_no = Some(params.start_line_no.unwrap_or(0).max(after.next_line_no));
    }
    let filters = filters(context, params)?;
    let (session, mut rows) = read(context, &filters)?;
    // The file as it is now: a cursor holds what it was at the first page, so a file
    // replaced (another inode) or cut shorter is refused rather than paged on as if it were
    // the same. Appends do not shift lines, so they never repeat or skip rows.
    let now = FileKey::of(&session.path, 0)?;
    if let Some(after) = &after {
        if (after.dev, after.ino) != (now.dev, now.ino) {
            return Err(ToolError::argument(
                "cursor",
                format!(
                    "{} was replaced since the first page; start again without cursor",
                    session.path
                ),
            ));
        }
        if now.size < after.size {
            return Err(ToolError::argument(
                "cursor",
                format!(
                    "{} is shorter than at the first page ({} < {} bytes); start again without cursor",
                    session.path, now.size, after.size
                ),
            ));
        }
    }
    let first_size = after.as_ref().map_or(now.size, |after| after.size);
    let mut is_more = rows.len() > filters.limit;
    rows.truncate(filters.limit);
    let max_raw_bytes = if filters.budget > DEFAULT_PAGE_BYTES {
        MAX_RAW_BYTES
    } else {
        DEFAULT_MAX_RAW_BYTES
    };
    let page = bound_rows(&mut rows, max_raw_bytes);
    if page.n_rows < rows.len() {
        rows.truncate(page.n_rows);
        is_more = true;
    }
    let mut document = json_from_writer(|out| {
        pi_retrospect_render::entries::write_json(out, &session.path, &session.transcript, &rows)
    })?;
    mark_cut_rows(&mut document, &page);
    bound_warnings(&mut document);
    // The continuation is fitted inside the budget with the rows, never added after it.
    let n_rows = rows.len();
    let next_for = |n_kept: usize| {
        if n_kept < n_rows || is_more {
            n_kept
                .checked_sub(1)
                .and_then(|idx| rows.get(idx))
                .map(|row| row.line_no + 1)
        } else {
            None
        }
    };
    let cursor_for = |line: u64| {
        let key = FileKey {
            next_line_no: line,
            size: first_size,
            ..now
        };
        cursor::encode(TOOL.name, &digest, &key.to_value())
    };
    let n_kept = fit_rows(&mut document, "entries", filters.budget, &mut |n_kept| {
        let next = next_for(n_kept);
        vec![
            ("nextStartLineNo", next.map_or(Value::Null, Value::from)),
            (
                "nextCursor",
                next.map_or(Value::Null, |line| Value::from(cursor_for(line))),
            ),
        ]
    });
    if n_kept == 0 && n_rows > 0 {
        return Err(ToolError::Internal(format!(
            "one row is larger than the page ({} bytes); give a larger limit",
            filters.budget
        )));
    }
    let next_start_line_no = next_for(n_kept);
    rows.truncate(n_kept);
    // The text shows rows, not their raw JSON (that is in the document).
    for row in &mut rows {
        row.raw = None;
    }
    let mut text = format!("path: {}\n", session.path);
    text.push_str(&text_from_writer(|out| {
        pi_retrospect_render::entries::write_text(out, &rows, &context.env.time_zone)
    })?);
    if let Some(line) = next_start_line_no {
        text.push_str(&format!(
            "more rows: call again with startLineNo = {line}\n"
        ));
    }
    Ok(ToolOutput {
        structured: document,
        text: bounded_text(text),
    })
}

/// Checks the arguments and returns the filters; nothing is read yet except to confine
/// `sessionPath`.
fn filters(context: &CallContext, params: SessionEntriesParams) -> Result<Filters, ToolError> {
    let budget = page_budget(params.limit.is_some());
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ToolError::argument(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}, not {limit}"),
        ));
    }
    for (name, line) in [
        ("startLineNo", params.start_line_no),
        ("endLineNo", params.end_line_no),
    ] {
        if line == Some(0) {
            return Err(ToolError::argument(name, "line numbers start at 1"));
        }
    }
    if let (Some(start), Some(end)) = (params.start_line_no, params.end_line_no)
        && end < start
    {
        return Err(ToolError::argument(
            "endLineNo",
            format!("{end} is before startLineNo ({start}): the range is empty"),
        ));
    }
    let lines = match (params.start_line_no, params.end_line_no) {
        (None, None) => None,
        (start, end) => Some(format!(
            "{}..{}",
            start.map(|line| line.to_string()).unwrap_or_default(),
            end.map(|line| line.to_string()).unwrap_or_default()
        )),
    };
    let params_search_given = params.search.is_some();
    let (terms, case, grep_scope) = match params.search {
        Some(search) => {
            let case = match (search.case, search.case_sensitive) {
                (None, true) => pi_retrospect_app::CaseMode::Sensitive,
                (Some(_), true) => {
                    return Err(ToolError::argument(
                        "search.caseSensitive",
                        "give search.case or search.caseSensitive, not both",
                    ));
                }
                (case, false) => Case::mode(case),
            };
            let scope = pi_retrospect_app::SearchScope {
                tool_results: search.tool_results,
                tool_args: search.tool_args,
                thinking: search.thinking,
                system: search.system,
            };
            (search.terms.into_vec(), case, scope)
        }
        None => (Vec::new(), Case::mode(None), Default::default()),
    };
    if terms.is_empty() && params_search_given {
        return Err(ToolError::argument(
            "search.terms",
            "give at least one term (or leave search out)",
        ));
    }
    if terms.iter().any(String::is_empty) {
        return Err(ToolError::argument(
            "search.terms",
            "a term must not be empty",
        ));
    }
    let ids = params.ids.into_vec();
    let parent_ids = params.parent_ids.into_vec();
    if ids.len().max(1) * parent_ids.len().max(1) > MAX_HANDLE_COMBINATIONS {
        return Err(ToolError::argument(
            "ids",
            format!(
                "{} ids with {} parentIds are too many; at most {MAX_HANDLE_COMBINATIONS} \
                 combinations",
                ids.len(),
                parent_ids.len()
            ),
        ));
    }
    for (name, handles) in [("ids", &ids), ("parentIds", &parent_ids)] {
        if handles.iter().any(String::is_empty) {
            return Err(ToolError::argument(name, "an id must not be empty"));
        }
    }
    let target = session_target(context, params.session_path)?;
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    Ok(Filters {
        target,
        base: EntriesRequest {
            lines,
            types: params.types.into_names(),
            roles: params.message_roles.into_names(),
            since: params.start_timestamp,
            until: params.end_timestamp,
            grep: terms,
            case,
            grep_scope,
            // One row more than the page shows tells whether another page follows.
            limit: Some(limit as u64 + 1),
            raw: true,
            ..EntriesRequest::default()
        },
        ids,
        parent_ids,
        limit,
        budget,
    })
}

/// Reads the rows the filters select. The application layer filters on one id and one
/// parent id at a time, so several are read as one request per combination and merged in
/// file order (each request's first `limit + 1` rows hold the union's first `limit + 1`).
fn read(
    context: &CallContext,
    filters: &Filters,
) -> Result<(OpenedSession, Vec<EntryRow>), ToolError> {
    let choices = |handles: &[String]| -> Vec<Option<String>> {
        if handles.is_empty() {
            vec![None]
        } else {
            handles.iter().cloned().map(Some).collect()
        }
    };
    let mut merged: Option<(OpenedSession, Vec<EntryRow>)> = None;
    for id in choices(&filters.ids) {
        for parent_id in choices(&filters.parent_ids) {
            let request = EntriesRequest {
                id: id.clone(),
                parent_id,
                ..filters.base.clone()
            };
            // An id that names nothing is this tool's `ids` (the application names it as
            // `inspect_session`'s entry).
            let result = pi_retrospect_app::entries(&filters.target, &request, &context.env)
                .map_err(|error| match error.input {
                    Some(pi_retrospect_app::Input::Entry) => {
                        ToolError::argument("ids", error.message.clone())
                    }
                    _ => ToolError::from(error),
                })?;
            let rows = result.rows()?;
            merged = Some(match merged {
                None => (result.session, rows),
                Some((session, mut so_far)) => {
                    so_far.extend(rows);
                    (session, so_far)
                }
            });
        }
    }
    let (session, mut rows) =
        merged.ok_or_else(|| ToolError::Internal("no request was made".into()))?;
    if filters.ids.len() > 1 || filters.parent_ids.len() > 1 {
        rows.sort_by_key(|row| row.line_no);
        rows.dedup_by_key(|row| row.line_no);
    }
    Ok((session, rows))
}

/// Where one session's pages are: the file's identity (device and inode), its size at the
/// first page, and the line the next page starts at.
#[derive(Debug, Clone, Copy)]
struct FileKey {
    dev: u64,
    ino: u64,
    size: u64,
    next_line_no: u64,
}

impl FileKey {
    fn of(path: &str, next_line_no: u64) -> Result<FileKey, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path)
            .map_err(|error| ToolError::Internal(format!("{path}: {error}")))?;
        Ok(FileKey {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.len(),
            next_line_no,
        })
    }

    fn to_value(self) -> Value {
        serde_json::json!([self.dev, self.ino, self.size, self.next_line_no])
    }

    fn from_value(value: &Value) -> Result<FileKey, ToolError> {
        let number = |idx: usize| {
            value[idx]
                .as_u64()
                .ok_or_else(|| ToolError::argument("cursor", "not a nextCursor of session_entries"))
        };
        Ok(FileKey {
            dev: number(0)?,
            ino: number(1)?,
            size: number(2)?,
            next_line_no: number(3)?,
        })
    }
}

/// Which rows of a page were cut, and how many rows fit.
#[derive(Debug, Default)]
struct Page {
    /// Rows that fit in [`MAX_PAGE_BYTES`] (at least one).
    n_rows: usize,
    /// Indexes of rows whose text was cut.
    cut_text: Vec<usize>,
    /// Indexes of rows whose raw JSON was left out, with its size.
    omitted_raw: Vec<(usize, usize)>,
}

/// Cuts each row's text and raw JSON to their limits and returns how many rows fit in one
/// page.
fn bound_rows(rows: &mut [EntryRow], max_raw_bytes: usize) -> Page {
    let mut page = Page::default();
    let mut n_bytes = 0;
    for (idx, row) in rows.iter_mut().enumerate() {
        if let Some(text) = &mut row.text
            && let Some((cut, _)) = text.char_indices().nth(MAX_TEXT_CHARS)
        {
            text.truncate(cut);
            page.cut_text.push(idx);
        }
        // A line can hold a number JSON tools cannot carry (`1e400`, which JavaScript reads as
        // Infinity): its raw form is left out like a long one, not the page refused.
        if let Some(raw) = &row.raw
            && (raw.get().len() > max_raw_bytes
                || serde_json::from_str::<Value>(raw.get()).is_err())
        {
            page.omitted_raw.push((idx, raw.get().len()));
            row.raw = None;
        }
        // The flags added later are a few dozen bytes; the margin covers them.
        let row_bytes = serde_json::to_vec(&*row).map_or(0, |bytes| bytes.len()) + 64;
        if idx > 0 && n_bytes + row_bytes > MAX_PAGE_BYTES {
            break;
        }
        n_bytes += row_bytes;
        page.n_rows = idx + 1;
    }
    page
}

/// Adds `isTextTruncated` and `rawBytes` to the rows of `document` that were cut.
fn mark_cut_rows(document: &mut Value, page: &Page) {
    let Some(rows) = document.get_mut("entries").and_then(Value::as_array_mut) else {
        return;
    };
    for &idx in &page.cut_text {
        if let Some(row) = rows.get_mut(idx).and_then(Value::as_object_mut) {
            row.insert("isTextTruncated".to_owned(), Value::Bool(true));
        }
    }
    for &(idx, n_bytes) in &page.omitted_raw {
        if let Some(row) = rows.get_mut(idx).and_then(Value::as_object_mut) {
            row.insert("rawBytes".to_owned(), Value::from(n_bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line_no: u64, text: &str, raw_bytes: usize) -> EntryRow {
        let raw = format!("\"{}\"", "r".repeat(raw_bytes.saturating_sub(2)));
        EntryRow {
            line_no,
            id: Some(format!("e{line_no}")),
            parent_id: None,
            timestamp: None,
            entry_type: "message".into(),
            message_role: Some("user".into()),
            text: Some(text.into()),
            raw: serde_json::value::RawValue::from_string(raw).ok(),
            facts: pi_retrospect_app::MessageFacts::default(),
        }
    }

    #[test]
    fn rows_are_cut_and_pages_bounded() {
        /// Rows as (text characters, raw bytes), rows kept, cut texts, omitted raws.
        type Case<'a> = (&'a [(usize, usize)], usize, &'a [usize], &'a [usize]);
        let cases: &[Case] = &[
            (&[(10, 100), (10, 100)], 2, &[], &[]),
            (&[(MAX_TEXT_CHARS + 1, 100)], 1, &[0], &[]),
            (&[(10, MAX_RAW_BYTES + 1), (10, 100)], 2, &[], &[0]),
            // Each row is about 63 KiB of raw: four fit in 256 KiB, the fifth does not.
            (&[(10, MAX_RAW_BYTES - 1000); 6], 4, &[], &[]),
        ];
        for (shape, n_rows, cut_text, omitted_raw) in cases {
            let mut rows: Vec<EntryRow> = shape
                .iter()
                .enumerate()
                .map(|(idx, (n_chars, raw_bytes))| {
                    row(idx as u64 + 2, &"é".repeat(*n_chars), *raw_bytes)
                })
                .collect();
            let page = bound_rows(&mut rows, MAX_RAW_BYTES);
            assert_eq!(page.n_rows, *n_rows, "{shape:?}");
            assert_eq!(page.cut_text, *cut_text, "{shape:?}");
            let omitted: Vec<usize> = page.omitted_raw.iter().map(|(idx, _)| *idx).collect();
            assert_eq!(omitted, *omitted_raw, "{shape:?}");
            let kept: usize = rows[..page.n_rows]
                .iter()
                .map(|row| serde_json::to_vec(row).map_or(0, |bytes| bytes.len()))
                .sum();
            assert!(kept <= MAX_PAGE_BYTES, "{shape:?}: {kept}");
            for row in &rows[..page.n_rows] {
                let n_chars = row.text.as_deref().map_or(0, |text| text.chars().count());
                assert!(n_chars <= MAX_TEXT_CHARS);
            }
        }
    }

    #[test]
    fn a_raw_line_json_cannot_carry_is_left_out_not_the_page() {
        let mut rows = vec![row(2, "a", 10), row(3, "b", 10)];
        rows[0].raw = serde_json::value::RawValue::from_string(r#"{"n":1e400}"#.to_owned()).ok();
        assert!(rows[0].raw.is_some(), "the line is JSON");
        let page = bound_rows(&mut rows, MAX_RAW_BYTES);
        assert_eq!(page.n_rows, 2);
        assert_eq!(page.omitted_raw, [(0, 11)]);
        assert!(rows[0].raw.is_none() && rows[1].raw.is_some());
    }
}
