//! `entries`: the stored entries of one session file in file order, one row
//! each, filtered, as aligned text, a JSON document or JSON lines.

use std::io::{self, Write};

use pi_retrospect_transcript::{EntryRow, Transcript, TranscriptWarning};
use serde::Serialize;

use crate::text::{clean, one_line};

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

/// Writes entry rows as aligned text, one line each.
pub fn write_text(out: &mut dyn Write, rows: &[EntryRow]) -> io::Result<()> {
    let dash = |value: &Option<String>| {
        value
            .as_deref()
            .map(|value| one_line(value, 80))
            .unwrap_or_else(|| "-".to_owned())
    };
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| {
            [
                row.line_no.to_string(),
                dash(&row.id),
                dash(&row.parent_id),
                dash(&row.timestamp),
                clean(&row.entry_type).into_owned(),
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
        let text = row
            .text
            .as_deref()
            .map(|text| one_line(text, TEXT_CHARS))
            .unwrap_or_default();
        writeln!(out, "{}", format!("{line}{text}").trim_end())?;
        if let Some(raw) = &row.raw {
            writeln!(out, "  {}", clean(raw.get()))?;
        }
    }
    Ok(())
}
