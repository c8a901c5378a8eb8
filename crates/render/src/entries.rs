//! `entries`: the stored entries of one session file in file order, one row
//! each, filtered, as aligned text, a JSON document or JSON lines.
//!
//! The JSON document and JSON lines can be written a row at a time ([`write_json_head`],
//! [`write_json_row`], [`write_json_tail`], [`write_jsonl_row`]), so a caller that streams rows
//! holds one row in memory, whatever the file's size.

use std::io::{self, Write};

use pi_retrospect_transcript::{EntryRow, Transcript};
use serde::Serialize;

use crate::text::{field, local_time, one_line, status_marks};

/// Characters of `text` shown in a text row.
const TEXT_CHARS: usize = 160;

/// Writes the `entries --json` document.
pub fn write_json(
    out: &mut dyn Write,
    path: &str,
    transcript: &Transcript,
    rows: &[EntryRow],
) -> io::Result<()> {
    write_json_head(out, path, transcript)?;
    for (index, row) in rows.iter().enumerate() {
        write_json_row(out, row, index)?;
    }
    write_json_tail(out, transcript, rows.len())
}

/// Writes the `entries --json` document up to the opening of its `entries` array; rows follow
/// with [`write_json_row`] and the document ends with [`write_json_tail`]. Together they write
/// exactly what serde's pretty printer writes for the whole document.
pub fn write_json_head(out: &mut dyn Write, path: &str, transcript: &Transcript) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"path\": {},\n  \"sessionId\": {},\n  \"version\": {},\n  \"entries\": [",
        compact(&path)?,
        compact(&transcript.session_id())?,
        transcript.version()
    )
}

/// Writes row number `index` (0 for the first) of the `entries --json` document.
pub fn write_json_row(out: &mut dyn Write, row: &EntryRow, index: usize) -> io::Result<()> {
    out.write_all(if index == 0 { b"\n" } else { b",\n" })?;
    let mut text = Vec::new();
    serde_json::to_writer_pretty(&mut text, row).map_err(io::Error::from)?;
    write_lines_indented(out, &text, "    ", true)
}

/// Writes the end of the `entries --json` document: the close of its `n_rows` rows and the
/// warnings.
pub fn write_json_tail(
    out: &mut dyn Write,
    transcript: &Transcript,
    n_rows: usize,
) -> io::Result<()> {
    out.write_all(if n_rows == 0 { b"]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"warnings\": ")?;
    write_warnings_array(out, transcript)?;
    out.write_all(b"\n}\n")
}

/// Writes every warning about `transcript`'s file as the pretty JSON array a document's
/// top-level `warnings` member holds, one warning at a time: all of them, not only the kept
/// ones, from [`Transcript::for_each_warning`], so memory holds one whatever their
/// number.
pub(crate) fn write_warnings_array(out: &mut dyn Write, transcript: &Transcript) -> io::Result<()> {
    let mut n_written = 0usize;
    let mut failure: Option<io::Error> = None;
    let mut text = Vec::new();
    transcript
        .for_each_warning(|warning| {
            if failure.is_some() {
                return;
            }
            text.clear();
            let written = serde_json::to_writer_pretty(&mut text, warning)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(if n_written == 0 { b"[\n" } else { b",\n" }))
                .and_then(|()| write_lines_indented(out, &text, "    ", true));
            match written {
                Ok(()) => n_written += 1,
                Err(error) => failure = Some(error),
            }
        })
        .map_err(io::Error::other)?;
    if let Some(error) = failure {
        return Err(error);
    }
    out.write_all(if n_written == 0 { b"[]" } else { b"\n  ]" })
}

/// Writes the lines of `text` with `indent` before each (before the first too when
/// `is_first_indented`). Pretty JSON holds no raw newline inside a string, so its lines are
/// its structure. `show --json` streams its elements the same way.
pub(crate) fn write_lines_indented(
    out: &mut dyn Write,
    text: &[u8],
    indent: &str,
    is_first_indented: bool,
) -> io::Result<()> {
    for (index, line) in text.split(|&byte| byte == b'\n').enumerate() {
        if index > 0 {
            out.write_all(b"\n")?;
        }
        if index > 0 || is_first_indented {
            out.write_all(indent.as_bytes())?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// Returns `value` as compact JSON.
fn compact(value: &impl Serialize) -> io::Result<String> {
    serde_json::to_string(value).map_err(io::Error::from)
}

/// Writes entry rows as JSON lines, one row per line.
pub fn write_jsonl(out: &mut dyn Write, rows: &[EntryRow]) -> io::Result<()> {
    for row in rows {
        write_jsonl_row(out, row)?;
    }
    Ok(())
}

/// Writes one entry row as a JSON line.
pub fn write_jsonl_row(out: &mut dyn Write, row: &EntryRow) -> io::Result<()> {
    serde_json::to_writer(&mut *out, row).map_err(io::Error::from)?;
    writeln!(out)
}

/// Returns the TEXT cell of a row: how the message ended (`[error: …]`, `[exit 2]`), then its
/// text on one line, or what stands in for a message without text (the tools a tool-only turn
/// called, hidden thinking, an image).
fn text_cell(row: &EntryRow) -> String {
    let facts = &row.facts;
    let mut parts = Vec::new();
    let marks = status_marks(&facts.status);
    if !marks.is_empty() {
        parts.push(format!("[{}]", marks.join(", ")));
    }
    let bang = if facts.status.exclude_from_context {
        "!"
    } else {
        ""
    };
    match row.text.as_deref().filter(|text| !text.is_empty()) {
        Some(text) => parts.push(format!("{bang}{}", one_line(text, TEXT_CHARS))),
        None if !facts.tool_calls.is_empty() => {
            parts.push(format!("-> {}", one_line(&facts.tool_calls.join(", "), 80)));
        }
        None if facts.n_thinking > 0 => parts.push("(thinking only)".to_owned()),
        None => {}
    }
    match facts.n_images {
        0 => {}
        1 => parts.push("(image)".to_owned()),
        n => parts.push(format!("({n} images)")),
    }
    parts.join(" ")
}

/// Writes entry rows as aligned text, one line each, times in `time_zone`.
pub fn write_text(
    out: &mut dyn Write,
    rows: &[EntryRow],
    time_zone: &jiff::tz::TimeZone,
) -> io::Result<()> {
    let mut table = TextTable::new(time_zone);
    for row in rows {
        table.measure(row);
    }
    table.write_heading(out)?;
    for row in rows {
        table.write_row(out, row)?;
    }
    Ok(())
}

/// The aligned text form of entry rows, written in two passes over the rows so that none is
/// held: every row is measured, then the heading and each row are written.
#[derive(Debug, Clone)]
pub struct TextTable<'z> {
    widths: [usize; 6],
    time_zone: &'z jiff::tz::TimeZone,
}

/// The column headings of [`TextTable`], before the text.
const HEADINGS: [&str; 6] = ["LINE", "ID", "PARENT", "TIMESTAMP", "TYPE", "ROLE"];

impl<'z> TextTable<'z> {
    /// Returns a table with times in `time_zone`, its columns as wide as their headings.
    pub fn new(time_zone: &'z jiff::tz::TimeZone) -> TextTable<'z> {
        TextTable {
            widths: HEADINGS.map(str::len),
            time_zone,
        }
    }

    /// Widens the columns to fit `row`.
    pub fn measure(&mut self, row: &EntryRow) {
        let cells = self.cells(row);
        for (width, cell) in self.widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }

    /// Writes the heading line.
    pub fn write_heading(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut heading = String::new();
        for (cell, width) in HEADINGS.iter().zip(self.widths) {
            push_padded(&mut heading, cell, width);
        }
        writeln!(out, "{heading}TEXT")
    }

    /// Writes `row`, its cells padded to the measured widths (a row measured by none is
    /// written whole, its columns wider).
    pub fn write_row(&self, out: &mut dyn Write, row: &EntryRow) -> io::Result<()> {
        let mut line = String::new();
        for (cell, width) in self.cells(row).iter().zip(self.widths) {
            push_padded(&mut line, cell, width);
        }
        line.push_str(&text_cell(row));
        writeln!(out, "{}", line.trim_end())?;
        if let Some(raw) = &row.raw {
            writeln!(out, "  {}", field(raw.get()))?;
        }
        Ok(())
    }

    fn cells(&self, row: &EntryRow) -> [String; 6] {
        let dash = |value: &Option<String>| {
            value
                .as_deref()
                .map(|value| field(value).into_owned())
                .unwrap_or_else(|| "-".to_owned())
        };
        [
            row.line_no.to_string(),
            dash(&row.id),
            dash(&row.parent_id),
            row.timestamp
                .as_deref()
                .map_or_else(|| "-".to_owned(), |stamp| local_time(stamp, self.time_zone)),
            field(&row.entry_type).into_owned(),
            dash(&row.message_role),
        ]
    }
}

/// Appends `cell` padded with spaces to `width` characters, and the column gap.
fn push_padded(line: &mut String, cell: &str, width: usize) {
    let n_chars = cell.chars().count();
    line.push_str(cell);
    line.extend(std::iter::repeat_n(' ', width.saturating_sub(n_chars) + 2));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_transcript::{EntriesFilter, TranscriptWarning, entries};

    /// The `entries --json` document, whole.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct EntriesDocument<'a> {
        path: &'a str,
        session_id: Option<&'a str>,
        version: u64,
        entries: &'a [EntryRow],
        warnings: &'a [TranscriptWarning],
    }

    /// The streamed document is byte for byte what serde writes for the whole document.
    #[test]
    fn the_streamed_document_is_the_pretty_document() {
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
        let one = r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi\nthere"}}"#;
        let two = r#"{"type":"label","id":"b","parentId":"a","label":"x"}"#;
        for body in [vec![], vec![one], vec![one, two, "junk"]] {
            let mut text = format!("{header}\n");
            for line in &body {
                text.push_str(line);
                text.push('\n');
            }
            let transcript = Transcript::from_bytes(text.into_bytes());
            for include_raw in [false, true] {
                let filter = EntriesFilter {
                    include_raw,
                    ..EntriesFilter::default()
                };
                let rows = entries(&transcript, &filter).expect("rows");
                let mut streamed = Vec::new();
                write_json(&mut streamed, "/p/s.jsonl", &transcript, &rows).expect("write");
                let document = EntriesDocument {
                    path: "/p/s.jsonl",
                    session_id: transcript.session_id(),
                    version: transcript.version(),
                    entries: &rows,
                    warnings: transcript.warnings(),
                };
                let mut whole = serde_json::to_vec_pretty(&document).expect("json");
                whole.push(b'\n');
                assert_eq!(
                    String::from_utf8_lossy(&streamed),
                    String::from_utf8_lossy(&whole)
                );
            }
        }
    }
}
