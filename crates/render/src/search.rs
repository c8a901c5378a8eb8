//! Writers for search results: text grouped per session like ripgrep's `--heading`, the
//! `--json` document, `--jsonl` rows, `--count` lines and `--files-with-matches` paths, plus
//! the JSON Schema of the document.
//!
//! Text output:
//!
//! ```text
//! /home/me/.pi/agent/sessions/--home-me-app--/2026-09-01T10-00-00-000Z_0199….jsonl
//!   Explain the fixture project  /home/me/app
//! 5:[37e9c488] 2026-09-01 12:00:04 user: What is in this project? Read the README …
//! 9:[101e43e2] 2026-09-01 12:00:09 assistant (off branch): README says it is a fixture project …
//!
//! /home/me/.pi/agent/sessions/--home-me-app--/2026-09-01T10-00-00-000Z_0199…/5f0c…/run-0/session.jsonl  (subagent run, depth 1)
//! 3:[0f1e2d3c] 2026-09-01 12:01:30 toolResult(bash): … error: cannot find …
//! ```
//!
//! Under each path, a line with the session's title and cwd when the caller handed them over
//! ([`TextWriter::set_heading`]). Each hit is `LINE:[ENTRY] TIME KIND: SNIPPET`, where `ENTRY` is the entry id (`line:N` in
//! a version 1 file), `TIME` the entry's timestamp in the writer's time zone (local time, as
//! in the other text views; left out when the writer has no zone or the entry no timestamp)
//! and `KIND` the field kind, with the tool for tool-call arguments and tool results; hits
//! not on the session's active branch say `(off branch)`. With colour the path is magenta,
//! the line number green and the match bold red, as in ripgrep.

use std::io::{self, Write};

use crate::text::escape_for_terminal;
use pi_retrospect_core::search::{
    FieldKind, FileCount, SearchDocument, SearchHit, SearchTotals, SearchWarning, SessionHeading,
};
use serde::Serialize;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::long::truncate_end;
use crate::text::local_time;

const MAGENTA: &str = "\u{1b}[35m";
const GREEN: &str = "\u{1b}[32m";
const BOLD_RED: &str = "\u{1b}[1;31m";
const DIM: &str = "\u{1b}[2m";
const RESET: &str = "\u{1b}[0m";

/// Returns a streaming text writer: hits arrive in order and are grouped under a heading per
/// session file, with a blank line between groups.
pub struct TextWriter<'w> {
    out: &'w mut dyn Write,
    paint: crate::Paint,
    current_path: Option<String>,
    time_zone: Option<jiff::tz::TimeZone>,
    width: Option<usize>,
    heading: Option<SessionHeading>,
}

impl<'w> TextWriter<'w> {
    /// Returns a writer to `out`, coloured as `paint` says.
    pub fn new(out: &'w mut dyn Write, paint: crate::Paint) -> TextWriter<'w> {
        TextWriter {
            out,
            paint,
            current_path: None,
            time_zone: None,
            width: None,
            heading: None,
        }
    }

    /// Returns the writer cutting every line but the path headings to `width` columns (a
    /// terminal's width) with `…`, keeping each hit's match in view; `None` writes whole
    /// lines.
    pub fn with_width(mut self, width: Option<usize>) -> TextWriter<'w> {
        self.width = width;
        self
    }

    /// Returns whether `path`'s next hit starts a new heading, so the caller can hand the
    /// heading's title and cwd over with [`TextWriter::set_heading`] first.
    pub fn is_new_file(&self, path: &str) -> bool {
        self.current_path.as_deref() != Some(path)
    }

    /// Sets the title and cwd shown under the next heading.
    pub fn set_heading(&mut self, heading: SessionHeading) {
        self.heading = Some(heading);
    }

    /// Returns the writer showing each hit's timestamp in `time_zone`.
    pub fn with_time_zone(mut self, time_zone: jiff::tz::TimeZone) -> TextWriter<'w> {
        self.time_zone = Some(time_zone);
        self
    }

    /// Returns the writer the hits go to, for the other lines of a search (counts, paths,
    /// JSON rows).
    pub fn out(&mut self) -> &mut dyn Write {
        &mut *self.out
    }

    fn paint(&self, text: &mut Vec<u8>, color: &str, part: &str) {
        if self.paint.is_on {
            text.extend_from_slice(color.as_bytes());
            text.extend_from_slice(part.as_bytes());
            text.extend_from_slice(RESET.as_bytes());
        } else {
            text.extend_from_slice(part.as_bytes());
        }
    }

    /// Writes one hit, preceded by its file's heading when it is the file's first.
    pub fn write_hit(&mut self, hit: &SearchHit) -> io::Result<()> {
        let mut text = Vec::with_capacity(256);
        if self.current_path.as_deref() != Some(hit.path.as_str()) {
            if self.current_path.is_some() {
                text.push(b'\n');
            }
            self.paint(&mut text, MAGENTA, &escape_for_terminal(&hit.path));
            if hit.depth > 0 {
                text.extend_from_slice(format!("  (subagent run, depth {})", hit.depth).as_bytes());
            }
            text.push(b'\n');
            if let Some(line) = self
                .heading
                .take()
                .and_then(|heading| heading_line(&heading))
            {
                let line = match self.width {
                    Some(width) => truncate_end(&line, width),
                    None => line,
                };
                self.paint(&mut text, DIM, &line);
                text.push(b'\n');
            }
            self.current_path = Some(hit.path.clone());
        }
        let mut prefix = String::with_capacity(64);
        let line_no = hit.line_no.to_string();
        self.paint(&mut text, GREEN, &line_no);
        text.push(b':');
        prefix.push_str(&line_no);
        prefix.push(':');
        let handle = match &hit.entry_id {
            Some(id) => escape_for_terminal(id).into_owned(),
            None => format!("line:{}", hit.line_no),
        };
        let mut plain = format!("[{handle}] ");
        if let (Some(zone), Some(stamp)) = (&self.time_zone, &hit.timestamp) {
            plain.push_str(&local_time(stamp, zone));
            plain.push(' ');
        }
        plain.push_str(&kind_label(hit));
        text.extend_from_slice(plain.as_bytes());
        prefix.push_str(&plain);
        if !hit.is_on_active_branch {
            text.push(b' ');
            self.paint(&mut text, DIM, "(off branch)");
            prefix.push_str(" (off branch)");
        }
        text.extend_from_slice(b": ");
        prefix.push_str(": ");
        let snippet = &hit.snippet;
        match hit.snippet_parts() {
            Some((before, found, after)) => {
                let budget = self.width.map(|width| width.saturating_sub(prefix.width()));
                let [before, found, after] = fit_around_match(before, found, after, budget);
                text.extend_from_slice(before.as_bytes());
                self.paint(&mut text, BOLD_RED, &found);
                text.extend_from_slice(after.as_bytes());
            }
            // A range that does not fit the snippet (never made by the search) prints plain.
            None => match self.width {
                Some(width) => text.extend_from_slice(
                    truncate_end(snippet, width.saturating_sub(prefix.width())).as_bytes(),
                ),
                None => text.extend_from_slice(snippet.as_bytes()),
            },
        }
        text.push(b'\n');
        self.out.write_all(&text)
    }
}

/// Returns the line under a heading: the title (on one line, terminal-safe) and the cwd, or
/// `None` when neither was read.
fn heading_line(heading: &SessionHeading) -> Option<String> {
    let title = heading
        .title
        .as_deref()
        .map(|title| crate::text::one_line(title, 200));
    let cwd = heading.cwd.as_deref().map(escape_for_terminal);
    match (title, cwd) {
        (Some(title), Some(cwd)) => Some(format!("  {title}  {cwd}")),
        (Some(title), None) => Some(format!("  {title}")),
        (None, Some(cwd)) => Some(format!("  {cwd}")),
        (None, None) => None,
    }
}

/// Returns the text before a match, the match and the text after it, cut so that together
/// they take at most `budget` columns: the text before keeps its end (at most a third of the
/// budget, so the match stays in view), the match its start, the text after its start, each
/// cut marked with `…`. `None` keeps them whole.
pub fn fit_around_match(
    before: &str,
    found: &str,
    after: &str,
    budget: Option<usize>,
) -> [String; 3] {
    let whole = [before.to_owned(), found.to_owned(), after.to_owned()];
    let Some(budget) = budget else {
        return whole;
    };
    if before.width() + found.width() + after.width() <= budget {
        return whole;
    }
    let before = truncate_start(before, before.width().min(budget / 3));
    let found = truncate_end(found, budget.saturating_sub(before.width()));
    let after = truncate_end(after, budget.saturating_sub(before.width() + found.width()));
    [before, found, after]
}

/// Cuts `text` to at most `width` columns keeping its end, starting with `…` when anything
/// was cut.
fn truncate_start(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 0;
    for character in text.chars().rev() {
        let char_width = character.width().unwrap_or(0);
        if used + char_width > width - 1 {
            break;
        }
        kept.push(character);
        used += char_width;
    }
    let mut cut = String::from("…");
    cut.extend(kept.into_iter().rev());
    cut
}

/// Returns how a hit's kind of text is shown: the kind, with the tool for tool texts.
fn kind_label(hit: &SearchHit) -> String {
    match (&hit.field, &hit.tool_name) {
        (FieldKind::ToolArgs | FieldKind::ToolResult, Some(tool)) => {
            format!("{}({})", hit.field.as_str(), escape_for_terminal(tool))
        }
        _ => hit.field.as_str().to_owned(),
    }
}

/// Writes one warning as a line of text: `PATH: MESSAGE` (the message names the line).
pub fn write_warning_text(out: &mut dyn Write, warning: &SearchWarning) -> io::Result<()> {
    writeln!(
        out,
        "{}: {}",
        escape_for_terminal(&warning.path),
        escape_for_terminal(&warning.message)
    )
}

/// Writes a `--count` line: `PATH:N`, as `rg -c` does; the path as it is when `is_raw`
/// (not a terminal), else escaped.
pub fn write_count(out: &mut dyn Write, count: &FileCount, is_raw: bool) -> io::Result<()> {
    writeln!(out, "{}:{}", output_path(&count.path, is_raw), count.n_hits)
}

/// Writes a `--files-with-matches` line: the absolute path alone, as it is when `is_raw` (not
/// a terminal, so a script gets a usable handle, as from ripgrep), else escaped.
pub fn write_path(out: &mut dyn Write, path: &str, is_raw: bool) -> io::Result<()> {
    writeln!(out, "{}", output_path(path, is_raw))
}

fn output_path(path: &str, is_raw: bool) -> std::borrow::Cow<'_, str> {
    if is_raw {
        std::borrow::Cow::Borrowed(path)
    } else {
        escape_for_terminal(path)
    }
}

/// Writes the `--json` document, pretty-printed with a final newline; content is kept as
/// the search made it (snippets are already terminal-safe).
pub fn write_json(out: &mut dyn Write, document: &SearchDocument) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, document).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct HitLine<'a> {
    kind: &'static str,
    #[serde(flatten)]
    hit: &'a SearchHit,
}

#[derive(Serialize)]
struct WarningLine<'a> {
    kind: &'static str,
    #[serde(flatten)]
    warning: &'a SearchWarning,
}

/// Writes one `--jsonl` hit row: `{"kind":"hit", …the hit's fields}`.
pub fn write_hit_jsonl(out: &mut dyn Write, hit: &SearchHit) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &HitLine { kind: "hit", hit }).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct CountLine<'a> {
    kind: &'static str,
    #[serde(flatten)]
    count: &'a FileCount,
}

#[derive(Serialize)]
struct FileLine<'a> {
    kind: &'static str,
    path: &'a str,
}

/// Writes one `--count --jsonl` row: `{"kind":"count","path","depth","nHits"}`.
pub fn write_count_jsonl(out: &mut dyn Write, count: &FileCount) -> io::Result<()> {
    let line = CountLine {
        kind: "count",
        count,
    };
    serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Writes one `--files-with-matches --jsonl` row: `{"kind":"file","path"}`.
pub fn write_file_jsonl(out: &mut dyn Write, path: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &FileLine { kind: "file", path }).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Returns a writer of the `--json` document that streams its arrays: hits (or counts, or
/// paths) are written as they arrive, so memory does not grow with the number of hits; the
/// warnings and totals follow at the end. The bytes are those of [`write_json`] on the
/// whole document.
pub struct JsonStream<'w> {
    out: &'w mut dyn Write,
    /// The member of the array being written and how many items it has.
    open: Option<(&'static str, u64)>,
    /// Whether the members `counts` and `files` are written (their modes).
    sections: &'static [&'static str],
    n_done: usize,
}

impl<'w> JsonStream<'w> {
    /// Returns a stream to `out` of the document of a search in hits mode.
    pub fn hits(out: &'w mut dyn Write) -> JsonStream<'w> {
        JsonStream::with_sections(out, &["hits"])
    }

    /// Returns a stream to `out` of the document of a `--count` search.
    pub fn counts(out: &'w mut dyn Write) -> JsonStream<'w> {
        JsonStream::with_sections(out, &["hits", "counts"])
    }

    /// Returns a stream to `out` of the document of a `--files-with-matches` search.
    pub fn files(out: &'w mut dyn Write) -> JsonStream<'w> {
        JsonStream::with_sections(out, &["hits", "files"])
    }

    fn with_sections(out: &'w mut dyn Write, sections: &'static [&'static str]) -> Self {
        JsonStream {
            out,
            open: None,
            sections,
            n_done: 0,
        }
    }

    /// Writes `value` as the next item of `section`, opening it (and the empty sections
    /// before it) when needed. Sections come in document order.
    fn item(&mut self, section: &'static str, value: &dyn erased::Item) -> io::Result<()> {
        while self.open.is_none_or(|(open, _)| open != section) {
            self.next_section()?;
        }
        let Some((_, n_items)) = &mut self.open else {
            return Ok(());
        };
        self.out
            .write_all(if *n_items == 0 { b"\n" } else { b",\n" })?;
        *n_items += 1;
        write_indented(self.out, value, 4)
    }

    /// Closes the open array, if any, and opens the next section's.
    fn next_section(&mut self) -> io::Result<()> {
        self.close()?;
        let Some(section) = self.sections.get(self.n_done) else {
            return Err(io::Error::other("a search document section out of order"));
        };
        let opening = if self.n_done == 0 { "{\n" } else { ",\n" };
        write!(self.out, "{opening}  \"{section}\": [")?;
        self.n_done += 1;
        self.open = Some((section, 0));
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        match self.open.take() {
            Some((_, 0)) => self.out.write_all(b"]"),
            Some(_) => self.out.write_all(b"\n  ]"),
            None => Ok(()),
        }
    }

    /// Writes one hit.
    pub fn hit(&mut self, hit: &SearchHit) -> io::Result<()> {
        self.item("hits", hit)
    }

    /// Writes one file's count (a `--count` document).
    pub fn count(&mut self, count: &FileCount) -> io::Result<()> {
        self.item("counts", count)
    }

    /// Writes one path (a `--files-with-matches` document).
    pub fn file(&mut self, path: &str) -> io::Result<()> {
        self.item("files", &path)
    }

    /// Hands what has been written so far on to the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes the sections not written yet, the warnings and the totals, and ends the
    /// document with a newline.
    pub fn finish(mut self, warnings: &[SearchWarning], totals: &SearchTotals) -> io::Result<()> {
        while self.n_done < self.sections.len() {
            self.next_section()?;
        }
        self.close()?;
        self.out.write_all(b",\n  \"warnings\": ")?;
        write_indented_tail(self.out, &warnings, 2)?;
        self.out.write_all(b",\n  \"totals\": ")?;
        write_indented_tail(self.out, totals, 2)?;
        self.out.write_all(b"\n}\n")
    }
}

/// Object-safe serialisation, so the stream takes any item behind one reference type.
mod erased {
    /// A value the stream can write.
    pub trait Item {
        /// Returns the value pretty-printed as `serde_json` does at the top level.
        fn pretty(&self) -> serde_json::Result<Vec<u8>>;
    }

    impl<T: serde::Serialize + ?Sized> Item for T {
        fn pretty(&self) -> serde_json::Result<Vec<u8>> {
            serde_json::to_vec_pretty(self)
        }
    }
}

/// Writes `value` pretty-printed with every line indented by `indent` spaces.
fn write_indented(out: &mut dyn Write, value: &dyn erased::Item, indent: usize) -> io::Result<()> {
    out.write_all(&" ".repeat(indent).into_bytes())?;
    write_indented_tail(out, value, indent)
}

/// Writes `value` pretty-printed with every line but the first indented by `indent` spaces
/// (the first continues the line already written). Multi-line strings cannot occur: JSON
/// escapes every newline inside a string.
fn write_indented_tail(
    out: &mut dyn Write,
    value: &dyn erased::Item,
    indent: usize,
) -> io::Result<()> {
    let text = value.pretty().map_err(io::Error::from)?;
    let pad = " ".repeat(indent);
    for (idx, line) in text.split(|&byte| byte == b'\n').enumerate() {
        if idx > 0 {
            out.write_all(b"\n")?;
            out.write_all(pad.as_bytes())?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// Writes one `--jsonl` warning row: `{"kind":"warning","path","lineNo","message"}`.
pub fn write_warning_jsonl(out: &mut dyn Write, warning: &SearchWarning) -> io::Result<()> {
    let line = WarningLine {
        kind: "warning",
        warning,
    };
    serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The JSON Schema (draft 2020-12) of the `search --json` document; `$defs` also describes
/// the `--jsonl` rows.
pub const SEARCH_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/search.json",
  "title": "pi-retrospect search --json",
  "description": "Hits of a pattern in Pi sessions: in the requested order of sessions (default newest first), in file order inside a session; one hit per searchable text of an entry that matches. With --count, hits is empty and counts lists the files with hits; with --files-with-matches, hits is empty and files lists their paths. With --jsonl, each line is a HitRow, a CountRow (--count), a FileRow (--files-with-matches) or a WarningRow instead.",
  "type": "object",
  "additionalProperties": false,
  "required": ["hits", "warnings", "totals"],
  "properties": {
    "hits": { "type": "array", "items": { "$ref": "#/$defs/Hit" } },
    "counts": {
      "type": "array",
      "description": "With --count only: each file with at least one hit, in order.",
      "items": { "$ref": "#/$defs/Count" }
    },
    "files": {
      "type": "array",
      "description": "With --files-with-matches only: the absolute path of each file with a hit, in order.",
      "items": { "type": "string" }
    },
    "warnings": {
      "type": "array",
      "description": "Files that could not be read and lines that could hold a match but are not valid JSON, in the order of the files.",
      "items": { "$ref": "#/$defs/Warning" }
    },
    "totals": { "$ref": "#/$defs/Totals" }
  },
  "$defs": {
    "FieldKind": {
      "enum": ["user", "assistant", "errorMessage", "bashCommand", "bashOutput", "compactionSummary", "branchSummary", "custom", "sessionName", "label", "thinking", "toolArgs", "toolResult", "system"],
      "description": "Which kind of text matched; the last four are searched only on request (the README's table of searchable fields)."
    },
    "Hit": {
      "$ref": "#/$defs/HitFields",
      "unevaluatedProperties": false
    },
    "HitFields": {
      "type": "object",
      "description": "The members of a hit, shared by Hit and HitRow.",
      "required": ["path", "depth", "lineNo", "entryId", "timestamp", "entryType", "role", "field", "toolName", "model", "isOnActiveBranch", "snippet", "matchRange", "nMatches"],
      "properties": {
        "path": { "type": "string", "description": "Absolute path of the session file." },
        "depth": { "type": "integer", "minimum": 0, "description": "0 for a top-level session, 1 for a subagent run it launched, and so on." },
        "lineNo": { "type": "integer", "minimum": 1, "description": "Physical line of the entry; with path, the stable handle (line:N)." },
        "entryId": { "type": ["string", "null"], "description": "The entry's id; null in version 1 files." },
        "timestamp": { "type": ["string", "null"], "description": "The entry's timestamp as stored." },
        "entryType": { "type": "string", "description": "The entry's type: message, compaction, branch_summary, custom_message, label, session_info." },
        "role": { "type": ["string", "null"], "description": "The message role for message entries (a version 2 hookMessage is custom)." },
        "field": { "$ref": "#/$defs/FieldKind" },
        "toolName": { "type": ["string", "null"], "description": "The tool, for toolArgs and toolResult hits." },
        "model": { "type": ["string", "null"], "description": "The model, for hits in assistant messages." },
        "isOnActiveBranch": { "type": "boolean", "description": "Whether the entry is on the path from a root to the leaf (the last entry appended)." },
        "snippet": { "type": "string", "description": "Text around the first match, on one line, terminal-safe; an ellipsis marks text cut at either end." },
        "matchRange": {
          "type": "object",
          "additionalProperties": false,
          "required": ["start", "end"],
          "description": "UTF-8 byte offsets of the first match in snippet.",
          "properties": {
            "start": { "type": "integer", "minimum": 0 },
            "end": { "type": "integer", "minimum": 0 }
          }
        },
        "nMatches": { "type": "integer", "minimum": 1, "description": "Matches in this text." }
      }
    },
    "Warning": {
      "$ref": "#/$defs/WarningFields",
      "unevaluatedProperties": false
    },
    "WarningFields": {
      "type": "object",
      "description": "The members of a warning, shared by Warning and WarningRow.",
      "required": ["path", "lineNo", "message"],
      "properties": {
        "path": { "type": "string" },
        "lineNo": { "type": ["integer", "null"], "minimum": 1 },
        "message": { "type": "string" }
      }
    },
    "Totals": {
      "type": "object",
      "additionalProperties": false,
      "required": ["nFilesSearched", "nFilesWithHits", "nHits", "nBytesSearched", "isLimitReached"],
      "properties": {
        "nFilesSearched": { "type": "integer", "minimum": 0 },
        "nFilesWithHits": { "type": "integer", "minimum": 0 },
        "nHits": { "type": "integer", "minimum": 0 },
        "nBytesSearched": { "type": "integer", "minimum": 0 },
        "isLimitReached": { "type": "boolean", "description": "The search stopped at --limit; more hits may exist." }
      }
    },
    "Count": {
      "$ref": "#/$defs/CountFields",
      "unevaluatedProperties": false
    },
    "CountFields": {
      "type": "object",
      "description": "How many hits one file has (cut short by --limit, when it was reached).",
      "required": ["path", "depth", "nHits"],
      "properties": {
        "path": { "type": "string", "description": "Absolute path of the session file." },
        "depth": { "type": "integer", "minimum": 0, "description": "0 for a top-level session, 1 for a subagent run it launched, and so on." },
        "nHits": { "type": "integer", "minimum": 1 }
      }
    },
    "HitRow": {
      "description": "A --jsonl line for a hit: kind and the Hit's fields.",
      "$ref": "#/$defs/HitFields",
      "required": ["kind"],
      "properties": { "kind": { "const": "hit" } },
      "unevaluatedProperties": false
    },
    "CountRow": {
      "description": "A --count --jsonl line: kind and the Count's fields.",
      "$ref": "#/$defs/CountFields",
      "required": ["kind"],
      "properties": { "kind": { "const": "count" } },
      "unevaluatedProperties": false
    },
    "FileRow": {
      "description": "A --files-with-matches --jsonl line: kind and the absolute path of a file with a hit.",
      "type": "object",
      "required": ["kind", "path"],
      "properties": { "kind": { "const": "file" }, "path": { "type": "string" } },
      "additionalProperties": false
    },
    "WarningRow": {
      "description": "A --jsonl line for a warning: kind and the Warning's fields.",
      "$ref": "#/$defs/WarningFields",
      "required": ["kind"],
      "properties": { "kind": { "const": "warning" } },
      "unevaluatedProperties": false
    }
  }
}
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::search::{MatchRange, SearchTotals};
    use serde_json::Value;

    fn hit(
        path: &str,
        depth: u32,
        line_no: u64,
        field: FieldKind,
        snippet: &str,
        found: &str,
    ) -> SearchHit {
        let start = snippet.find(found).expect("match in snippet");
        SearchHit {
            path: path.to_owned(),
            depth,
            line_no,
            entry_id: Some(format!("e{line_no}")),
            timestamp: Some("2026-01-01T00:00:00.000Z".to_owned()),
            entry_type: "message".to_owned(),
            role: Some("user".to_owned()),
            field,
            tool_name: None,
            model: None,
            is_on_active_branch: true,
            snippet: snippet.to_owned(),
            match_range: MatchRange {
                start,
                end: start + found.len(),
            },
            n_matches: 1,
        }
    }

    fn hits() -> Vec<SearchHit> {
        let mut tool = hit(
            "/s/a.jsonl",
            0,
            9,
            FieldKind::ToolResult,
            "… error: x …",
            "error",
        );
        tool.tool_name = Some("bash".to_owned());
        tool.is_on_active_branch = false;
        let mut v1 = hit(
            "/s/a/L/run-0/session.jsonl",
            1,
            3,
            FieldKind::Assistant,
            "an error",
            "error",
        );
        v1.entry_id = None;
        vec![
            hit(
                "/s/a.jsonl",
                0,
                5,
                FieldKind::User,
                "the error here",
                "error",
            ),
            tool,
            v1,
        ]
    }

    fn check(is_color: bool, expected: &str) {
        let mut out = Vec::new();
        let mut writer = TextWriter::new(&mut out, crate::Paint { is_on: is_color });
        for hit in hits() {
            writer.write_hit(&hit).expect("write");
        }
        assert_eq!(String::from_utf8(out).expect("utf-8"), expected);
    }

    #[test]
    fn text_groups_hits_under_their_session() {
        check(
            false,
            "/s/a.jsonl\n\
             5:[e5] user: the error here\n\
             9:[e9] toolResult(bash) (off branch): … error: x …\n\
             \n\
             /s/a/L/run-0/session.jsonl  (subagent run, depth 1)\n\
             3:[line:3] assistant: an error\n",
        );
        check(
            true,
            "\u{1b}[35m/s/a.jsonl\u{1b}[0m\n\
             \u{1b}[32m5\u{1b}[0m:[e5] user: the \u{1b}[1;31merror\u{1b}[0m here\n\
             \u{1b}[32m9\u{1b}[0m:[e9] toolResult(bash) \u{1b}[2m(off branch)\u{1b}[0m: … \u{1b}[1;31merror\u{1b}[0m: x …\n\
             \n\
             \u{1b}[35m/s/a/L/run-0/session.jsonl\u{1b}[0m  (subagent run, depth 1)\n\
             \u{1b}[32m3\u{1b}[0m:[line:3] assistant: an \u{1b}[1;31merror\u{1b}[0m\n",
        );
    }

    /// Under a heading, the title and cwd the caller handed over; with a width, every line
    /// but the path fits it and the match stays in view, wide characters counted as two.
    #[test]
    fn headings_carry_the_title_and_lines_fit_the_width() {
        let mut out = Vec::new();
        let mut writer = TextWriter::new(&mut out, crate::Paint::OFF).with_width(Some(30));
        let long = hit(
            "/s/a-long-session-path.jsonl",
            0,
            5,
            FieldKind::User,
            "a long start of the text before the error and a long tail after it",
            "error",
        );
        assert!(writer.is_new_file(&long.path));
        writer.set_heading(SessionHeading {
            title: Some("Fix the\nflaky 漢字 webhook test".to_owned()),
            cwd: Some("/home/me/app".to_owned()),
        });
        writer.write_hit(&long).expect("write");
        assert!(!writer.is_new_file(&long.path));
        let short = hit("/s/b.jsonl", 0, 2, FieldKind::User, "an error", "error");
        writer.write_hit(&short).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "/s/a-long-session-path.jsonl",
                "  Fix the flaky 漢字 webhook …",
                "5:[e5] user: …the error and a…",
                "",
                "/s/b.jsonl",
                "2:[e2] user: an error",
            ]
        );
        for line in &lines[1..] {
            assert!(line.width() <= 30, "{line:?}");
        }
        // Without a width the lines are whole, and a heading without title or cwd adds none.
        let mut out = Vec::new();
        let mut writer = TextWriter::new(&mut out, crate::Paint::OFF);
        writer.set_heading(SessionHeading::default());
        writer.write_hit(&long).expect("write");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "/s/a-long-session-path.jsonl\n\
             5:[e5] user: a long start of the text before the error and a long tail after it\n"
        );
    }

    #[test]
    fn cuts_keep_the_match_and_mark_what_went() {
        assert_eq!(
            fit_around_match("abcdefghij", "MATCH", "klmnopqrst", Some(12)),
            ["…hij".to_owned(), "MATCH".to_owned(), "kl…".to_owned()]
        );
        // A match longer than the budget keeps its start.
        assert_eq!(
            fit_around_match("", "MATCHMATCHMATCH", "tail", Some(6)),
            [String::new(), "MATCH…".to_owned(), String::new()]
        );
        assert_eq!(truncate_start("漢字漢字", 5), "…漢字");
        assert_eq!(
            fit_around_match("a", "b", "c", Some(3)),
            ["a", "b", "c"].map(str::to_owned)
        );
    }

    #[test]
    fn lines_for_counts_paths_warnings_and_jsonl() {
        let mut out = Vec::new();
        let count = FileCount {
            path: "/s/a\nb.jsonl".to_owned(),
            depth: 0,
            n_hits: 3,
        };
        write_count(&mut out, &count, false).expect("write");
        write_path(&mut out, "/s/a.jsonl", false).expect("write");
        let warning = SearchWarning::new("/s/b.jsonl", Some(4), "line 4 is not valid JSON");
        write_warning_text(&mut out, &warning).expect("write");
        write_warning_jsonl(&mut out, &warning).expect("write");
        write_hit_jsonl(&mut out, &hits()[0]).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "/s/a\\u{a}b.jsonl:3",
                "/s/a.jsonl",
                "/s/b.jsonl: line 4 is not valid JSON"
            ]
        );
        assert_eq!(
            lines[3],
            r#"{"kind":"warning","path":"/s/b.jsonl","lineNo":4,"message":"line 4 is not valid JSON"}"#
        );
        let row: Value = serde_json::from_str(lines[4]).expect("json");
        assert_eq!(row["kind"], "hit");
        assert_eq!(row["matchRange"]["start"], 4);
        assert_eq!(lines.len(), 5);
    }

    /// Checks `value` against `definition` (the subset of JSON Schema the schema uses).
    fn conforms(schema: &Value, definition: &Value, value: &Value) {
        if let Some(reference) = definition.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            return conforms(schema, &schema["$defs"][name], value);
        }
        if let Some(options) = definition.get("enum").and_then(Value::as_array) {
            assert!(options.contains(value), "{value} not in {options:?}");
            return;
        }
        let types: Vec<&str> = match &definition["type"] {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            other => panic!("no type in {definition}: {other}"),
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(number) if number.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        assert!(types.contains(&actual), "{value} is not {types:?}");
        match value {
            Value::Object(object) => {
                for required in definition["required"].as_array().expect("required") {
                    let name = required.as_str().expect("name");
                    assert!(object.contains_key(name), "missing {name}");
                }
                let properties = definition["properties"].as_object().expect("properties");
                for (key, member) in object {
                    let property = properties
                        .get(key)
                        .unwrap_or_else(|| panic!("unexpected {key}"));
                    conforms(schema, property, member);
                }
            }
            Value::Array(items) => {
                for item in items {
                    conforms(schema, &definition["items"], item);
                }
            }
            _ => {}
        }
    }

    /// The streamed `--json` document is byte for byte the
    /// document written whole, in every mode.
    #[test]
    fn the_streamed_document_equals_the_whole_one() {
        let warnings = vec![
            SearchWarning::new("/s/b.jsonl", Some(4), "line 4 is not valid JSON"),
            SearchWarning::new("/s/c.jsonl", None, "cannot open: missing"),
        ];
        let totals = SearchTotals {
            n_files_searched: 3,
            n_files_with_hits: 2,
            n_hits: 3,
            n_bytes_searched: 100,
            is_limit_reached: false,
        };
        let count = FileCount {
            path: "/s/a.jsonl".to_owned(),
            depth: 1,
            n_hits: 2,
        };
        for (hits, counts, files, warnings) in [
            (hits(), None, None, warnings.clone()),
            (Vec::new(), None, None, Vec::new()),
            (
                Vec::new(),
                Some(vec![count.clone(), count.clone()]),
                None,
                warnings.clone(),
            ),
            (Vec::new(), Some(Vec::new()), None, Vec::new()),
            (
                Vec::new(),
                None,
                Some(vec!["/s/a.jsonl".to_owned()]),
                warnings.clone(),
            ),
        ] {
            let document = SearchDocument {
                hits: hits.clone(),
                counts: counts.clone(),
                files: files.clone(),
                warnings: warnings.clone(),
                totals,
            };
            let mut whole = Vec::new();
            write_json(&mut whole, &document).expect("write");
            let mut streamed = Vec::new();
            let mut stream = match (&counts, &files) {
                (Some(_), _) => JsonStream::counts(&mut streamed),
                (_, Some(_)) => JsonStream::files(&mut streamed),
                _ => JsonStream::hits(&mut streamed),
            };
            for hit in &hits {
                stream.hit(hit).expect("write");
            }
            for count in counts.iter().flatten() {
                stream.count(count).expect("write");
            }
            for path in files.iter().flatten() {
                stream.file(path).expect("write");
            }
            stream.finish(&warnings, &totals).expect("write");
            assert_eq!(
                String::from_utf8(streamed).expect("utf-8"),
                String::from_utf8(whole).expect("utf-8")
            );
        }
    }

    #[test]
    fn the_document_conforms_to_the_schema() {
        let document = SearchDocument {
            hits: hits(),
            counts: None,
            files: None,
            warnings: vec![
                SearchWarning::new("/s/b.jsonl", Some(4), "line 4 is not valid JSON"),
                SearchWarning::new("/s/c.jsonl", None, "cannot open: missing"),
            ],
            totals: SearchTotals {
                n_files_searched: 3,
                n_files_with_hits: 2,
                n_hits: 3,
                n_bytes_searched: 100,
                is_limit_reached: false,
            },
        };
        let mut out = Vec::new();
        write_json(&mut out, &document).expect("write");
        assert!(out.ends_with(b"}\n"));
        let value: Value = serde_json::from_slice(&out).expect("json");
        let schema: Value = serde_json::from_str(SEARCH_SCHEMA).expect("the schema is JSON");
        conforms(&schema, &schema, &value);
        let kinds = schema["$defs"]["FieldKind"]["enum"]
            .as_array()
            .expect("enum");
        assert_eq!(kinds.len(), FieldKind::ALL.len());
        for (kind, name) in FieldKind::ALL.iter().zip(kinds) {
            assert_eq!(name, kind.as_str());
        }
    }
}
