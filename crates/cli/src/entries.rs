//! `pi-retrospect entries`: the stored entries of one session file in file order, one row
//! each, filtered, as aligned text, a JSON document or JSON lines.

use std::io::Write;

use pi_retrospect_transcript::{EntriesFilter, EntryRow, TranscriptWarning, entries};
use serde::Serialize;

use crate::UsageError;
use crate::opts::EntriesArgs;
use crate::session_arg::{clean, one_line, print_warnings, resolve_and_open};
use crate::when::{Bound, parse_when};

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

/// Runs `entries` with `args`, writing to `out`.
pub fn run(args: &EntriesArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let filter = resolve_filter(args)?;
    let (path, session) = resolve_and_open(&args.session, &args.store, None)?;
    let rows = entries(&session, &filter)?;
    if args.json {
        let document = EntriesDocument {
            path: &path,
            session_id: session.session_id(),
            version: session.version(),
            entries: &rows,
            warnings: session.warnings(),
        };
        serde_json::to_writer_pretty(&mut *out, &document)?;
        writeln!(out)?;
        return Ok(());
    }
    print_warnings(&path, session.warnings());
    if args.jsonl {
        for row in &rows {
            serde_json::to_writer(&mut *out, row)?;
            writeln!(out)?;
        }
        return Ok(());
    }
    write_text(out, &rows)
}

/// Returns the filter the flags describe, or a usage error.
fn resolve_filter(args: &EntriesArgs) -> anyhow::Result<EntriesFilter> {
    let usage = |message: String| anyhow::Error::from(UsageError(message));
    let (first_line, last_line) = match &args.lines {
        Some(text) => parse_lines(text).map_err(|message| usage(format!("--lines: {message}")))?,
        None => (None, None),
    };
    let zone = jiff::tz::TimeZone::system();
    let now = jiff::Timestamp::now();
    let when = |text: &Option<String>, bound: Bound, flag: &str| {
        text.as_deref()
            .map(|text| {
                parse_when(text, bound, now, &zone)
                    .map_err(|message| usage(format!("{flag}: {message}")))
            })
            .transpose()
    };
    let since = when(&args.since, Bound::Start, "--since")?;
    let until = when(&args.until, Bound::End, "--until")?;
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        return Err(usage(format!(
            "--until ({until}) is before --since ({since}): the range is empty"
        )));
    }
    if args.grep.iter().any(String::is_empty) {
        return Err(usage("--grep needs a non-empty term".to_owned()));
    }
    Ok(EntriesFilter {
        first_line,
        last_line,
        id: args.id.clone(),
        parent_id: args.parent_id.clone(),
        types: args.types.clone(),
        roles: args.roles.clone(),
        since,
        until,
        grep: args.grep.clone(),
        is_case_sensitive: args.case_sensitive,
        limit: args
            .limit
            .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX)),
        include_raw: args.raw,
    })
}

/// Returns the inclusive line range of `A..B`, `A..`, `..B` or `N`.
fn parse_lines(text: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let number = |part: &str| -> Result<Option<u64>, String> {
        if part.is_empty() {
            return Ok(None);
        }
        match part.parse::<u64>() {
            Ok(0) => Err("line numbers start at 1".to_owned()),
            Ok(line) => Ok(Some(line)),
            Err(_) => Err(format!("{part:?} is not a line number")),
        }
    };
    let (first, last) = match text.split_once("..") {
        Some((first, last)) => (number(first)?, number(last)?),
        None if text.is_empty() => return Err("expected A..B, A.., ..B or N".to_owned()),
        None => {
            let line = number(text)?;
            (line, line)
        }
    };
    if let (Some(first), Some(last)) = (first, last)
        && last < first
    {
        return Err(format!("{text:?} is an empty range"));
    }
    Ok((first, last))
}

fn write_text(out: &mut dyn Write, rows: &[EntryRow]) -> anyhow::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges() {
        assert_eq!(parse_lines("3..7"), Ok((Some(3), Some(7))));
        assert_eq!(parse_lines("3.."), Ok((Some(3), None)));
        assert_eq!(parse_lines("..7"), Ok((None, Some(7))));
        assert_eq!(parse_lines("5"), Ok((Some(5), Some(5))));
        assert_eq!(parse_lines(".."), Ok((None, None)));
        for bad in ["", "0..3", "7..3", "a..b", "1...3"] {
            assert!(parse_lines(bad).is_err(), "{bad}");
        }
    }
}
