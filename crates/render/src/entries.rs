//! `entries`: the stored entries of one session file in file order, one row
//! each, filtered, as aligned text, a JSON document or JSON lines.

use std::io::{self, Write};

use pi_retrospect_transcript::{EntryRow, Transcript, TranscriptWarning};
use serde::Serialize;

use crate::text::{field, local_time, one_line, status_marks};

/// Characters of `text` shown in a text row.
const TEXT_CHARS: usize = 160;

/// The `entries --json` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntriesDocument<'a> {
    path: &'a str,
    session_id: Option<&'a str>,
    version: u64,
    entries: &'a [EntryRow],
    warnings: &'a [TranscriptWarning],
}

/// Writes the `entries --json` document.
pub fn write_json(
    out: &mut dyn Write,
    path: &str,
    transcript: &Transcript,
    rows: &[EntryRow],
) -> io::Result<()> {
    let document = EntriesDocument {
        path,
        session_id: transcript.session_id(),
        version: transcript.version(),
        entries: rows,
        warnings: transcript.warnings(),
    };
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::from)?;
    writeln!(out)
}

/// Writes entry rows as JSON lines, one row per line.
pub fn write_jsonl(out: &mut dyn Write, rows: &[EntryRow]) -> io::Result<()> {
    for row in rows {
        serde_json::to_writer(&mut *out, row).map_err(io::Error::from)?;
        writeln!(out)?;
    }
    Ok(())
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
    let dash = |value: &Option<String>| {
        value
            .as_deref()
            .map(|value| field(value).into_owned())
            .unwrap_or_else(|| "-".to_owned())
    };
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| {
            [
                row.line_no.to_string(),
                dash(&row.id),
                dash(&row.parent_id),
                row.timestamp
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), |stamp| local_time(stamp, time_zone)),
                field(&row.entry_type).into_owned(),
                dash(&row.message_role),
            ]
        })
        .collect();
    let headings = ["LINE", "ID", "PARENT", "TIMESTAMP", "TYPE", "ROLE"];
    let mut widths = headings.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let pad = |cell: &str, width: usize| {
        let n_chars = cell.chars().count();
        format!("{cell}{}", " ".repeat(width.saturating_sub(n_chars)))
    };
    let mut heading = String::new();
    for (cell, width) in headings.iter().zip(widths) {
        heading.push_str(&pad(cell, width));
        heading.push_str("  ");
    }
    writeln!(out, "{heading}TEXT")?;
    for (row, cell_row) in rows.iter().zip(&cells) {
        let mut line = String::new();
        for (cell, width) in cell_row.iter().zip(widths) {
            line.push_str(&pad(cell, width));
            line.push_str("  ");
        }
        let text = text_cell(row);
        writeln!(out, "{}", format!("{line}{text}").trim_end())?;
        if let Some(raw) = &row.raw {
            writeln!(out, "  {}", field(raw.get()))?;
        }
    }
    Ok(())
}
