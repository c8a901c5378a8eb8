//! Text helpers every text writer shares: sanitising content, escaping one-line fields,
//! folding, wrapping and indenting, sizes and counts, local times, the marks of a failed
//! message, and warnings (capped).

use std::borrow::Cow;
use std::io::Write;

// The terminal sanitiser every writer uses. Its rules live in `core::sanitize` because the
// libraries escape what their own messages quote (a header's bad value, a path); the writers
// reach it here, beside the helpers built on it.
pub use pi_retrospect_core::sanitize::{
    escape_for_terminal, is_printable_ascii, sanitize_for_terminal,
};
use pi_retrospect_core::timestamp;
use pi_retrospect_transcript::{Failure, MessageStatus, Omission, TranscriptWarning, WarningKind};

/// Whether a text writer colours its output with ANSI escapes: the one colour setting every
/// writer takes. A front end decides it (the CLI from `--color` and the environment, the
/// picker from `NO_COLOR`); the writers only follow it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paint {
    /// Whether to colour.
    pub is_on: bool,
}

impl Paint {
    /// No colour.
    pub const OFF: Paint = Paint { is_on: false };
    /// ANSI colour.
    pub const ON: Paint = Paint { is_on: true };

    /// Returns `text` in the SGR style `code` (`1`, `2;33`) when colour is on, else as is.
    pub fn wrap(&self, code: &str, text: &str) -> String {
        if self.is_on {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
}

/// Warnings printed as text before the rest are only counted (`--json` has all of them).
pub const MAX_TEXT_WARNINGS: usize = 20;

/// Returns session content made safe for a terminal (escape sequences, controls, bidi and
/// invisible characters removed; newlines and tabs kept).
pub fn clean(text: &str) -> Cow<'_, str> {
    sanitize_for_terminal(text)
}

/// Returns a one-line field read from a file (an id, an entry type, a role, a path, a cwd)
/// with every control, bidi and invisible character escaped visibly, so that it can neither
/// drive the terminal nor start a line of its own.
pub fn field(text: &str) -> Cow<'_, str> {
    escape_for_terminal(text)
}

/// Writes `text` sanitised, keeping its lines, each non-empty one after `indent`.
pub fn write_indented(out: &mut dyn Write, text: &str, indent: &str) -> std::io::Result<()> {
    for line in clean(text).lines() {
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "{indent}{line}")?;
        }
    }
    Ok(())
}

/// Returns `text` on one line (whitespace runs folded to one space), cut to `max_chars`
/// characters with an ellipsis, and sanitised.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let folded = clean(&folded).into_owned();
    match folded.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &folded[..cut]),
        None => folded,
    }
}

/// Returns `text` cut to at most `max` terminal columns, by whole grapheme clusters (a wide
/// CJK character or an emoji sequence is never split), ending in `…` when it was cut.
pub(crate) fn cut_to(text: &str, max: usize) -> String {
    use unicode_segmentation::UnicodeSegmentation;
    use unicode_width::UnicodeWidthStr;
    if text.width() <= max {
        return text.to_owned();
    }
    let mut cut = String::new();
    let mut used = 0;
    for grapheme in text.graphemes(true) {
        let width = grapheme.width();
        if used + width + 1 > max {
            break;
        }
        cut.push_str(grapheme);
        used += width;
    }
    cut.push('…');
    cut
}

/// Returns `text` (one line, already safe) broken into lines of at most `width` characters,
/// at spaces where it can be, within words where it must.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut n_chars = 0;
    for word in text.split(' ') {
        let word_chars = word.chars().count();
        if n_chars > 0 && n_chars + 1 + word_chars > width {
            lines.push(std::mem::take(&mut line));
            n_chars = 0;
        }
        if n_chars > 0 {
            line.push(' ');
            n_chars += 1;
        }
        let mut rest = word;
        let mut rest_chars = word_chars;
        while n_chars + rest_chars > width {
            let split = rest
                .char_indices()
                .nth(width - n_chars)
                .map_or(rest.len(), |(idx, _)| idx);
            line.push_str(&rest[..split]);
            lines.push(std::mem::take(&mut line));
            n_chars = 0;
            rest = &rest[split..];
            rest_chars = rest.chars().count();
        }
        line.push_str(rest);
        n_chars += rest_chars;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Returns `n` with thousands separated by commas: `2,412`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, digit) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Returns a size in bytes for a person: `812 B`, `81 KB`, `4.2 MB` (1 KB = 1024 bytes, as Pi
/// counts its own output limits).
pub fn human_bytes(n_bytes: usize) -> String {
    const KB: f64 = 1024.0;
    let bytes = n_bytes as f64;
    if n_bytes < 1024 {
        format!("{n_bytes} B")
    } else if bytes < KB * 10.0 {
        format!("{:.1} KB", bytes / KB)
    } else if bytes < KB * KB {
        format!("{:.0} KB", bytes / KB)
    } else if bytes < KB * KB * 10.0 {
        format!("{:.1} MB", bytes / (KB * KB))
    } else {
        format!("{:.0} MB", bytes / (KB * KB))
    }
}

/// Returns the line that stands for a part of an output left out: `[… 2,412 lines, 81 KB
/// omitted]`.
pub fn omission_line(omission: &Omission) -> String {
    let lines = match omission.n_lines {
        1 => "1 line".to_owned(),
        n => format!("{} lines", thousands(n)),
    };
    format!("[… {lines}, {} omitted]", human_bytes(omission.n_bytes))
}

/// Returns a stored timestamp as local time for a person (`2026-11-30 19:15:37`), in
/// `zone`; as stored (escaped) when it is not a real instant.
pub fn local_time(stored: &str, zone: &jiff::tz::TimeZone) -> String {
    let Some(instant) = timestamp::parse(stored) else {
        return field(stored).into_owned();
    };
    let nanos = i32::try_from(instant.nanos).unwrap_or(0);
    match jiff::Timestamp::new(instant.seconds, nanos) {
        Ok(instant) => instant
            .to_zoned(zone.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Err(_) => field(stored).into_owned(),
    }
}

/// Returns the marks of a message that failed or ended early, each a short phrase: `error:
/// <message>`, `aborted`, `cut off: output limit` for a response (the provider's error
/// message after the last two as after the first, and `error message: <message>` on a
/// response that ended otherwise but carries one, as search finds it); `error` for a tool result;
/// `exit 2`, `cancelled`, `no exit code`, `output truncated by Pi` for a `!` command. Message
/// text is folded to one line and cut to 200 characters.
pub fn status_marks(status: &MessageStatus) -> Vec<String> {
    let mut marks = Vec::new();
    match status.failure() {
        Some(Failure::Error(Some(message))) => {
            marks.push(format!("error: {}", one_line(&message, 200)));
        }
        Some(Failure::Error(None)) => marks.push("error".to_owned()),
        Some(failure) => {
            let mark = match failure {
                Failure::Aborted => "aborted",
                _ => "cut off: output limit",
            };
            // The provider's text is searched whatever the stop reason, so it is shown too.
            match &status.error_message {
                Some(message) => marks.push(format!("{mark}: {}", one_line(message, 200))),
                None => marks.push(mark.to_owned()),
            }
        }
        None => {
            if let Some(message) = &status.error_message {
                marks.push(format!("error message: {}", one_line(message, 200)));
            }
        }
    }
    if status.is_error == Some(true) {
        marks.push("error".to_owned());
    }
    if status.cancelled {
        marks.push("cancelled".to_owned());
    }
    if let Some(code) = status.exit_code.filter(|&code| code != 0) {
        marks.push(format!("exit {code}"));
    }
    if status.truncated {
        marks.push("output truncated by Pi".to_owned());
    }
    marks
}

/// Writes the warnings about `path` to `out` as `pi-retrospect: warning: <path>: <message>`
/// lines, escaped: the first [`MAX_TEXT_WARNINGS`], then one line counting the rest by kind.
///
/// `warnings` are a transcript's kept warnings: the first 20 of each kind, then one omitted
/// group per kind that had more, which carries its count (a file of junk lines once
/// wrote 555 MB of warnings).
pub fn write_warnings(
    out: &mut dyn Write,
    path: &str,
    warnings: &[TranscriptWarning],
) -> std::io::Result<()> {
    let mut left_out: std::collections::BTreeMap<WarningKind, u64> = Default::default();
    let mut n_written = 0;
    for warning in warnings {
        if let Some(omitted) = warning.omitted {
            *left_out.entry(omitted.kind).or_default() += omitted.count;
        } else if n_written == MAX_TEXT_WARNINGS {
            *left_out.entry(warning.kind).or_default() += 1;
        } else {
            n_written += 1;
            writeln!(
                out,
                "pi-retrospect: warning: {}",
                warning_line(path, &warning.message)
            )?;
        }
    }
    if !left_out.is_empty() {
        let total: u64 = left_out.values().sum();
        let by_kind: Vec<String> = left_out
            .iter()
            .map(|(kind, count)| format!("{} {}", thousands(*count as usize), kind.as_str()))
            .collect();
        writeln!(
            out,
            "pi-retrospect: warning: {}: … and {} more warnings ({}; --json lists them all)",
            field(path),
            thousands(total as usize),
            by_kind.join(", ")
        )?;
    }
    Ok(())
}

/// Returns the text of a message for a terminal's stderr: each line sanitised, so an id or
/// path taken from a file or an argument cannot carry an escape sequence to the terminal,
/// while a message's own line breaks (a list of candidates) stay.
pub fn terminal_message(message: &str) -> String {
    let lines: Vec<Cow<'_, str>> = message.split('\n').map(escape_for_terminal).collect();
    lines.join("\n")
}

/// Returns one warning as the line the CLI prints to stderr (without the program prefix):
/// `<path>: <message>`, each part escaped so that neither can forge another line.
pub fn warning_line(path: &str, message: &str) -> String {
    format!(
        "{}: {}",
        escape_for_terminal(path),
        escape_for_terminal(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_and_within_long_words() {
        let check = |text: &str, width: usize, expected: &[&str]| {
            assert_eq!(wrap(text, width), expected, "{text:?} at {width}");
        };
        check("a b c", 20, &["a b c"]);
        check("aaaa bbbb cccc", 10, &["aaaa bbbb", "cccc"]);
        check(&"x".repeat(25), 10, &["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
        check("", 10, &[""]);
    }

    #[test]
    fn counts_and_sizes_read_well() {
        for (n, expected) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (2412, "2,412"),
            (1234567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), expected);
        }
        for (n, expected) in [
            (812, "812 B"),
            (2048, "2.0 KB"),
            (83_000, "81 KB"),
            (4_400_000, "4.2 MB"),
            (50_000_000, "48 MB"),
        ] {
            assert_eq!(human_bytes(n), expected);
        }
        let omission = Omission {
            at: 0,
            n_lines: 2412,
            n_bytes: 83_000,
        };
        assert_eq!(omission_line(&omission), "[… 2,412 lines, 81 KB omitted]");
    }

    #[test]
    fn times_are_local() {
        let zone = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        assert_eq!(
            local_time("2026-11-30T19:15:37.102Z", &zone),
            "2026-11-30 21:15:37"
        );
        assert_eq!(local_time("not\na time", &zone), "not\\u{a}a time");
    }

    /// Failures are named, not hidden.
    #[test]
    fn marks_name_failures() {
        let check = |status: MessageStatus, expected: &[&str]| {
            assert_eq!(status_marks(&status), expected, "{status:?}");
        };
        let stop = |reason: &str| MessageStatus {
            stop_reason: Some(reason.to_owned()),
            ..MessageStatus::default()
        };
        check(stop("stop"), &[]);
        check(stop("toolUse"), &[]);
        check(stop("aborted"), &["aborted"]);
        check(stop("length"), &["cut off: output limit"]);
        check(stop("error"), &["error"]);
        check(
            MessageStatus {
                error_message: Some("429\nToo Many".to_owned()),
                ..stop("error")
            },
            &["error: 429 Too Many"],
        );
        check(
            MessageStatus {
                error_message: Some("Request was\naborted".to_owned()),
                ..stop("aborted")
            },
            &["aborted: Request was aborted"],
        );
        check(
            MessageStatus {
                error_message: Some("stray".to_owned()),
                ..stop("stop")
            },
            &["error message: stray"],
        );
        check(
            MessageStatus {
                is_error: Some(true),
                ..MessageStatus::default()
            },
            &["error"],
        );
        check(
            MessageStatus {
                is_error: Some(false),
                ..MessageStatus::default()
            },
            &[],
        );
        check(
            MessageStatus {
                exit_code: Some(2),
                truncated: true,
                ..MessageStatus::default()
            },
            &["exit 2", "output truncated by Pi"],
        );
        check(
            MessageStatus {
                exit_code: Some(0),
                ..MessageStatus::default()
            },
            &[],
        );
        check(
            MessageStatus {
                cancelled: true,
                ..MessageStatus::default()
            },
            &["cancelled"],
        );
    }

    /// A binary produced 73,201 warning lines; text shows 20 and counts the rest.
    /// The count includes the groups the transcript kept only as counts.
    #[test]
    fn warnings_are_capped() {
        use pi_retrospect_transcript::{OmittedWarnings, WarningKind};
        let check = |warnings: &[TranscriptWarning], last_line: &str| {
            let mut out = Vec::new();
            write_warnings(&mut out, "/s/a.jsonl", warnings).expect("write");
            let text = String::from_utf8(out).expect("utf-8");
            assert_eq!(text.lines().count(), 21, "{text}");
            assert!(text.contains("line 0\\u{a}fake"), "{text}");
            assert_eq!(text.lines().last(), Some(last_line), "{text}");
        };
        let malformed = |n: u64| {
            TranscriptWarning::new(
                Some(n),
                WarningKind::MalformedLine,
                format!("line {n}\nfake"),
            )
        };
        let mut warnings: Vec<TranscriptWarning> = (0..25).map(malformed).collect();
        check(
            &warnings,
            "pi-retrospect: warning: /s/a.jsonl: … and 5 more warnings (5 malformed_line; --json lists them all)",
        );
        warnings.truncate(20);
        warnings.push(TranscriptWarning::new(
            Some(99),
            WarningKind::MissingParent,
            "orphan",
        ));
        let mut omitted = TranscriptWarning::new(None, WarningKind::Omitted, "73180 more");
        omitted.omitted = Some(OmittedWarnings {
            kind: WarningKind::MalformedLine,
            count: 73_180,
        });
        warnings.push(omitted);
        check(
            &warnings,
            "pi-retrospect: warning: /s/a.jsonl: … and 73,181 more warnings (73,180 malformed_line, 1 missing_parent; --json lists them all)",
        );
    }

    #[test]
    fn one_line_folds_cuts_and_cleans() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("x\u{1b}[31my\u{202e}z", 10), "xyz");
    }

    /// An id holding `ESC ] 0 ; … BEL` cannot retitle the terminal through stderr.
    #[test]
    fn messages_and_warnings_are_escaped() {
        assert_eq!(
            terminal_message("no session has the id \"\u{1b}]0;pwned\u{7}\"\n  a\u{200b}b"),
            "no session has the id \"\\u{1b}]0;pwned\\u{7}\"\n  a\\u{200b}b"
        );
        assert_eq!(
            warning_line("/s/a\nb.jsonl", "line 3\npi-retrospect: fake"),
            "/s/a\\u{a}b.jsonl: line 3\\u{a}pi-retrospect: fake"
        );
    }
}
