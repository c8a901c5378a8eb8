//! The `failures` writers: text grouped under each session (as `search` groups hits), the
//! `--json` document, `--jsonl` rows, the grouped table, and the document's JSON Schema.

use std::io::{self, Write};

use crate::text::escape_for_terminal;
use pi_retrospect_core::Warning;
use pi_retrospect_failures::{FailureGroup, FailureRow, FailuresReport, RepeatRow};
use serde_json::json;

use crate::text::one_line;

const MAGENTA: &str = "\u{1b}[35m";
const GREEN: &str = "\u{1b}[32m";
const BOLD_RED: &str = "\u{1b}[1;31m";
const DIM: &str = "\u{1b}[2m";
const RESET: &str = "\u{1b}[0m";

/// Lines of a failure's message shown in text.
const TEXT_MESSAGE_LINES: usize = 6;

/// How text output looks: colour and the width lines are fitted to (`None`: whole lines).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Colour with ANSI escapes.
    pub paint: crate::Paint,
    /// Fit lines to this many characters.
    pub width: Option<usize>,
}

fn paint(options: TextOptions, color: &str, text: &str) -> String {
    if options.paint.is_on {
        format!("{color}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

fn fit(options: TextOptions, text: &str, indent: usize) -> String {
    match options.width {
        // Cut by terminal columns (a wide character takes two), never inside a character.
        Some(width) => crate::text::cut_to(
            &one_line(text, MAX_LINE_CHARS),
            width.saturating_sub(indent).max(20),
        ),
        // Without a terminal a line is whole up to a bound: a call's arguments can be
        // megabytes (a file written whole), which `--json` holds and text has no use for.
        None => one_line(text, MAX_LINE_CHARS),
    }
}

/// The longest line text output writes without a terminal to fit (in characters).
const MAX_LINE_CHARS: usize = 4096;

/// Writes the failures as text: under each session (the one with the newest failure first),
/// one header line per failure, the failing call and the first lines of the message.
pub fn write_text(
    out: &mut dyn Write,
    failures: &[FailureRow],
    options: TextOptions,
) -> io::Result<()> {
    // Sessions in the order of their newest failure, each with its rows: one pass, however
    // many sessions there are.
    let mut order: Vec<(&str, Vec<&FailureRow>)> = Vec::new();
    let mut position: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for failure in failures {
        let at = *position.entry(&failure.path).or_insert_with(|| {
            order.push((&failure.path, Vec::new()));
            order.len() - 1
        });
        order[at].1.push(failure);
    }
    drop(position);
    for (n_session, (path, rows)) in order.into_iter().enumerate() {
        let first = rows[0];
        if n_session > 0 {
            writeln!(out)?;
        }
        let mut header = paint(options, MAGENTA, &escape_for_terminal(path));
        if first.depth > 0 {
            header.push_str(&format!("  (subagent run, depth {})", first.depth));
        }
        writeln!(out, "{header}")?;
        let about = match &first.title {
            Some(title) => format!("{} · {title}", first.cwd),
            None => first.cwd.to_string(),
        };
        writeln!(out, "{}", paint(options, DIM, &fit(options, &about, 0)))?;
        for row in rows {
            let mut line = format!(
                "{} [{}] {}",
                paint(options, GREEN, &row.timestamp),
                escape_for_terminal(&row.entry_id),
                paint(options, BOLD_RED, row.failure_kind.as_str()),
            );
            if let Some(tool) = &row.tool_name {
                line.push_str(&format!("({})", escape_for_terminal(tool)));
            }
            if let Some(code) = row.exit_code {
                line.push_str(&format!(" exit {code}"));
            }
            if !row.on_active_branch {
                line.push(' ');
                line.push_str(&paint(options, DIM, "(off branch)"));
            }
            writeln!(out, "{line}")?;
            match (&row.command, &row.arguments) {
                (Some(command), _) => writeln!(out, "  $ {}", fit(options, command, 4))?,
                (None, Some(arguments)) => {
                    writeln!(out, "  args {}", fit(options, arguments, 7))?;
                }
                (None, None) => {}
            }
            let lines: Vec<&str> = row
                .message
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect();
            write_message_lines(out, &lines, options)?;
        }
    }
    Ok(())
}

/// Writes a message's non-empty lines: all of them when they are few, else its first and
/// last lines around a line saying how many were left out (the last lines of an error, a
/// traceback's exception or a command's exit code, are often what names it).
fn write_message_lines(
    out: &mut dyn Write,
    lines: &[&str],
    options: TextOptions,
) -> io::Result<()> {
    if lines.len() <= TEXT_MESSAGE_LINES {
        for line in lines {
            writeln!(out, "  {}", fit(options, line, 2))?;
        }
        return Ok(());
    }
    let n_head = TEXT_MESSAGE_LINES / 2;
    let n_tail = TEXT_MESSAGE_LINES - n_head;
    for line in &lines[..n_head] {
        writeln!(out, "  {}", fit(options, line, 2))?;
    }
    let n_cut = lines.len() - n_head - n_tail;
    writeln!(
        out,
        "  {}",
        paint(options, DIM, &format!("… {n_cut} more lines …"))
    )?;
    for line in &lines[lines.len() - n_tail..] {
        writeln!(out, "  {}", fit(options, line, 2))?;
    }
    Ok(())
}

/// Writes the repeated calls as text, one line each.
pub fn write_repeats_text(
    out: &mut dyn Write,
    repeats: &[RepeatRow],
    options: TextOptions,
) -> io::Result<()> {
    for repeat in repeats {
        writeln!(
            out,
            "{} [{}] {}×{} {}",
            paint(options, MAGENTA, &escape_for_terminal(&repeat.path)),
            escape_for_terminal(&repeat.entry_id),
            repeat.n_calls,
            escape_for_terminal(&repeat.tool_name),
            fit(options, &repeat.arguments, 40),
        )?;
    }
    Ok(())
}

/// Writes the groups as text: count, sessions, first and last seen, the key, and the example
/// handle (`PATH ENTRY`, which `show` and `inspect read` open).
pub fn write_groups_text(
    out: &mut dyn Write,
    groups: &[FailureGroup],
    options: TextOptions,
) -> io::Result<()> {
    for group in groups {
        let repeated = group
            .repeated_calls
            .map_or_else(String::new, |n| format!("  repeated calls {n}"));
        writeln!(
            out,
            "{:>6}  {:>4} sessions  {} .. {}{repeated}",
            group.count, group.n_sessions, group.first_seen, group.last_seen
        )?;
        writeln!(
            out,
            "  {}",
            paint(options, BOLD_RED, &fit(options, &group.key, 2))
        )?;
        writeln!(
            out,
            "  {}",
            paint(
                options,
                DIM,
                &format!(
                    "e.g. {} {}",
                    escape_for_terminal(&group.example_path),
                    escape_for_terminal(&group.example_entry_id)
                )
            )
        )?;
    }
    Ok(())
}

fn warning_value(warning: &Warning) -> serde_json::Value {
    json!({ "path": warning.path, "reason": warning.reason })
}

/// Writes the `--json` document (`pi-retrospect schema failures`).
///
/// Written row by row: the members in name order and each row as its own small value (so
/// its members are in name order too, as in `--jsonl`), never the document as one value,
/// which cost twice the rows' own memory on a file of a million failures.
pub fn write_json(
    out: &mut dyn Write,
    report: &FailuresReport,
    groups: Option<&[FailureGroup]>,
) -> io::Result<()> {
    let document = Document { report, groups };
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"  ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, formatter);
    serde::Serialize::serialize(&document, &mut serializer)?;
    writeln!(out)
}

/// The `--json` document, serialised member by member.
struct Document<'a> {
    report: &'a FailuresReport,
    groups: Option<&'a [FailureGroup]>,
}

impl serde::Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let report = self.report;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("failures", &RowsInNameOrder(&report.failures))?;
        if let Some(groups) = self.groups {
            map.serialize_entry("groups", &RowsInNameOrder(groups))?;
        }
        map.serialize_entry("nFailures", &report.n_failures)?;
        map.serialize_entry("nFiles", &report.n_files)?;
        map.serialize_entry("nFilesDecoded", &report.n_files_decoded)?;
        map.serialize_entry("repeats", &RowsInNameOrder(&report.repeats))?;
        let warnings: Vec<serde_json::Value> = report.warnings.iter().map(warning_value).collect();
        map.serialize_entry("warnings", &warnings)?;
        map.end()
    }
}

/// Rows serialised one at a time, each as a value whose members are in name order.
struct RowsInNameOrder<'a, T>(&'a [T]);

impl<T: serde::Serialize> serde::Serialize for RowsInNameOrder<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut sequence = serializer.serialize_seq(Some(self.0.len()))?;
        for row in self.0 {
            let value = serde_json::to_value(row).map_err(S::Error::custom)?;
            sequence.serialize_element(&value)?;
        }
        sequence.end()
    }
}

/// Writes one `--jsonl` row: `value`'s members and a `type` member naming the row.
pub fn write_jsonl_row(
    out: &mut dyn Write,
    row_type: &str,
    value: &impl serde::Serialize,
) -> io::Result<()> {
    let mut row = serde_json::Map::new();
    row.insert("type".to_owned(), json!(row_type));
    if let serde_json::Value::Object(members) = serde_json::to_value(value)? {
        row.extend(members);
    }
    serde_json::to_writer(&mut *out, &row)?;
    writeln!(out)
}

/// Writes a warning as a `--jsonl` row.
pub fn write_warning_jsonl(out: &mut dyn Write, warning: &Warning) -> io::Result<()> {
    write_jsonl_row(out, "warning", &warning_value(warning))
}

/// The JSON Schema of the `failures --json` document; `$defs/Failure`, `$defs/Repeat` and
/// `$defs/Group` are also the `--jsonl` rows of type `failure`, `repeat` and `group`.
pub const FAILURES_SCHEMA: &str = include_str!("failures.schema.json");

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_failures::FailureKind;

    fn row(message: &str) -> FailureRow {
        FailureRow {
            path: "/s/a.jsonl".into(),
            entry_id: "r1".to_owned(),
            timestamp: "2026-11-30T19:15:37.110Z".to_owned(),
            instant: None,
            failure_kind: FailureKind::ToolError,
            cwd: "/work".into(),
            title: None,
            on_active_branch: true,
            depth: 0,
            tool_name: Some("bash".to_owned()),
            arguments: None,
            command: Some("pytest".to_owned()),
            exit_code: None,
            message: message.to_owned(),
            n_message_bytes_cut: 0,
        }
    }

    fn text(message: &str) -> String {
        let mut out = Vec::new();
        write_text(&mut out, &[row(message)], TextOptions::default()).expect("write");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn wide_characters_are_fitted_by_their_columns() {
        use unicode_width::UnicodeWidthStr;
        let mut failure = row(&"错误".repeat(60));
        failure.command = Some("echo 你好世界".repeat(20));
        let mut out = Vec::new();
        let options = TextOptions {
            width: Some(40),
            ..TextOptions::default()
        };
        write_text(&mut out, &[failure], options).expect("write");
        let shown = String::from_utf8(out).expect("UTF-8");
        for line in shown.lines().skip(3) {
            assert!(line.width() <= 40, "{line:?} is {} columns", line.width());
        }
        assert!(shown.contains('错'));
    }

    #[test]
    fn huge_arguments_are_cut_in_text() {
        let mut failure = row("boom");
        failure.command = None;
        failure.arguments = Some(format!("{{\"content\":\"{}\"}}", "x".repeat(1 << 20)));
        let mut out = Vec::new();
        write_text(&mut out, &[failure], TextOptions::default()).expect("write");
        let shown = String::from_utf8(out).expect("UTF-8");
        let args = shown
            .lines()
            .find(|line| line.starts_with("  args "))
            .expect("the arguments' line");
        assert!(
            args.chars().count() <= 7 + MAX_LINE_CHARS + 1,
            "{}",
            args.len()
        );
        assert!(args.ends_with('…'));
    }

    #[test]
    fn a_long_message_keeps_its_head_and_its_tail() {
        let lines: Vec<String> = (1..=20).map(|n| format!("frame {n}")).collect();
        let mut message = lines.join("\n");
        message.push_str("\nValueError: the last line names it\n");
        let shown = text(&message);
        for kept in [
            "frame 1\n",
            "frame 3\n",
            "frame 20\n",
            "ValueError: the last line names it",
        ] {
            assert!(shown.contains(kept), "{kept:?} in {shown}");
        }
        for cut in ["frame 4\n", "frame 10\n", "frame 18\n"] {
            assert!(!shown.contains(cut), "{cut:?} in {shown}");
        }
        assert!(shown.contains("… 15 more lines …"), "{shown}");
        // A short message is shown whole, without a marker.
        let short = text("one\n\ntwo\nthree");
        assert!(short.contains("  one\n  two\n  three\n"), "{short}");
        assert!(!short.contains("more lines"));
    }
}
