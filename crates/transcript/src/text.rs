//! Small text helpers shared by the views: previews, head-and-tail excerpts of long output,
//! literal case-insensitive matching, snippets around a match, and timestamps in one form.

use pi_retrospect_core::timestamp;
use serde::Serialize;

/// Returns the first `max_chars` characters of `text` and whether anything was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte_idx, _)) => (text[..byte_idx].to_owned(), true),
        None => (text.to_owned(), false),
    }
}

/// Returns `text` cut to `max_chars` characters, with runs of whitespace folded to one space.
pub(crate) fn preview(text: &str, max_chars: usize) -> String {
    let mut folded = String::with_capacity(text.len().min(max_chars * 4));
    let mut n_chars = 0;
    let mut is_pending_space = false;
    for character in text.chars() {
        if character.is_whitespace() {
            is_pending_space = !folded.is_empty();
            continue;
        }
        if is_pending_space {
            if n_chars == max_chars {
                break;
            }
            folded.push(' ');
            n_chars += 1;
            is_pending_space = false;
        }
        if n_chars == max_chars {
            break;
        }
        folded.push(character);
        n_chars += 1;
    }
    folded
}

/// How much of a long output a text view keeps: at most `max_chars` characters and
/// `max_lines` lines, split between the head and the tail (errors are at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimit {
    /// Characters kept; 0 keeps nothing (a view then shows only its header line).
    pub max_chars: usize,
    /// Lines kept.
    pub max_lines: usize,
}

impl OutputLimit {
    /// Returns the limit of `max_chars` characters and, so that thousands of short lines do
    /// not fill a screen, one line per 50 of them (at least 2).
    pub fn chars(max_chars: usize) -> OutputLimit {
        OutputLimit {
            max_chars,
            max_lines: (max_chars / 50).max(2),
        }
    }
}

/// The part of a text an excerpt leaves out: where, and how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Omission {
    /// Byte offset in the excerpt's text where the left-out part was.
    pub at: usize,
    /// Lines left out (a line cut part way counts as one).
    pub n_lines: usize,
    /// Bytes left out.
    pub n_bytes: usize,
}

/// A text cut to its head and tail, with what was left out between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadAndTail {
    /// The head and the tail, joined.
    pub text: String,
    /// What was left out, when anything was.
    pub omitted: Option<Omission>,
}

/// Returns the byte offset where Pi's own truncation notice starts (the last line, in
/// brackets, of a tool's output that Pi cut: `[Showing lines 1001-3000 of 3000. Full output:
/// ...]`), so that an excerpt always keeps it.
fn pi_notice_start(text: &str) -> Option<usize> {
    let trimmed = text.trim_end();
    let start = trimmed.rfind('\n').map_or(0, |newline| newline + 1);
    let line = &trimmed[start..];
    let is_notice = line.starts_with('[')
        && line.ends_with(']')
        && line.len() <= 1000
        && (line.starts_with("[Showing")
            || line.contains("Full output")
            || line.contains("truncated")
            || line.contains("offset="));
    (is_notice && start > 0).then_some(start)
}

/// Returns `text` cut to `limit`: as many whole lines of the head and of the tail as fit (a
/// single over-long line is cut within), Pi's own truncation notice always kept at the end.
/// Linear in the length of `text`.
pub fn head_and_tail(text: &str, limit: OutputLimit) -> HeadAndTail {
    let n_chars = text.chars().count();
    let n_lines = text.lines().count();
    if n_chars <= limit.max_chars && n_lines <= limit.max_lines {
        return HeadAndTail {
            text: text.to_owned(),
            omitted: None,
        };
    }
    if limit.max_chars == 0 || limit.max_lines == 0 {
        return HeadAndTail {
            text: String::new(),
            omitted: Some(Omission {
                at: 0,
                n_lines: n_lines.max(1),
                n_bytes: text.len(),
            }),
        };
    }
    // The notice keeps the blank line Pi writes before it.
    let (body, notice) = match pi_notice_start(text) {
        Some(start) => {
            let body_end = text[..start].trim_end_matches('\n').len();
            (&text[..body_end], &text[body_end..])
        }
        None => (text, ""),
    };
    let notice_chars = notice.chars().count();
    let budget = limit.max_chars.saturating_sub(notice_chars).max(2);
    let head_chars = budget * 2 / 5;
    let tail_chars = budget - head_chars;
    let head_lines = (limit.max_lines * 2 / 5).max(1);
    let tail_lines = limit.max_lines.saturating_sub(head_lines).max(1);
    let head_end = head_end(body, head_chars, head_lines);
    let tail_start = tail_start(body, tail_chars, tail_lines).max(head_end);
    let omitted = &body[head_end..tail_start];
    if omitted.is_empty() {
        return HeadAndTail {
            text: text.to_owned(),
            omitted: None,
        };
    }
    let n_omitted_lines = omitted.matches('\n').count() + usize::from(!omitted.ends_with('\n'));
    let mut kept = String::with_capacity(head_end + body.len() - tail_start + notice.len() + 1);
    kept.push_str(&body[..head_end]);
    kept.push_str(&body[tail_start..]);
    kept.push_str(notice);
    HeadAndTail {
        text: kept,
        omitted: Some(Omission {
            at: head_end,
            n_lines: n_omitted_lines,
            n_bytes: omitted.len(),
        }),
    }
}

/// Returns the byte offset where the head of `text` ends: after at most `max_lines` whole
/// lines of at most `max_chars` characters, or within the first line when it alone is longer.
fn head_end(text: &str, max_chars: usize, max_lines: usize) -> usize {
    let mut end = 0;
    let mut n_chars = 0;
    for (n_lines, line) in text.split_inclusive('\n').enumerate() {
        let line_chars = line.chars().count();
        if n_lines == max_lines || n_chars + line_chars > max_chars {
            if n_lines == 0 {
                return char_offset(line, max_chars);
            }
            break;
        }
        n_chars += line_chars;
        end += line.len();
    }
    end
}

/// Returns the byte offset where the tail of `text` starts: before at most `max_lines` whole
/// lines of at most `max_chars` characters, or within the last line when it alone is longer.
fn tail_start(text: &str, max_chars: usize, max_lines: usize) -> usize {
    let mut start = text.len();
    let mut n_chars = 0;
    let mut remaining = text;
    let mut n_lines = 0;
    while !remaining.is_empty() {
        // The last line of `remaining`, with its newline when it has one.
        let body = remaining.strip_suffix('\n').unwrap_or(remaining);
        let line_start = body.rfind('\n').map_or(0, |newline| newline + 1);
        let line = &remaining[line_start..];
        let line_chars = line.chars().count();
        if n_lines == max_lines || n_chars + line_chars > max_chars {
            if n_lines == 0 {
                let n_skipped = line_chars.saturating_sub(max_chars);
                return line_start + char_offset(line, n_skipped);
            }
            break;
        }
        n_chars += line_chars;
        n_lines += 1;
        start = line_start;
        remaining = &remaining[..line_start];
    }
    start
}

/// Returns the byte offset of character `n` of `text` (its length when shorter).
fn char_offset(text: &str, n: usize) -> usize {
    text.char_indices()
        .nth(n)
        .map_or(text.len(), |(idx, _)| idx)
}

/// Returns a stored timestamp as UTC RFC 3339 with milliseconds, the one form JSON output
/// uses; a timestamp that is not a real instant is returned as stored.
pub fn utc_timestamp(stored: &str) -> String {
    match timestamp::parse(stored) {
        Some(instant) => instant.to_string(),
        None => stored.to_owned(),
    }
}

/// Returns up to `max_chars` characters of `text` around character offset `at`.
pub(crate) fn snippet_around(text: &str, at: usize, max_chars: usize) -> String {
    let start = at.saturating_sub(max_chars / 4);
    let tail: String = text.chars().skip(start).collect();
    preview(&tail, max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_fold_whitespace_and_cut() {
        assert_eq!(preview("  a\n\n b  c ", 240), "a b c");
        assert_eq!(preview("abcdef", 3), "abc");
        assert_eq!(preview("ab cd", 2), "ab");
        assert_eq!(preview("ab cd", 3), "ab ");
        assert_eq!(preview("ééé", 2), "éé");
    }

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé".to_owned(), true));
        assert_eq!(truncate_chars("hé", 2), ("hé".to_owned(), false));
    }

    fn check_excerpt(
        text: &str,
        max_chars: usize,
        expected: &str,
        omitted: Option<(usize, usize)>,
    ) {
        let excerpt = head_and_tail(text, OutputLimit::chars(max_chars));
        let shown = match excerpt.omitted {
            Some(omission) => format!(
                "{}<GAP>{}",
                &excerpt.text[..omission.at],
                &excerpt.text[omission.at..]
            ),
            None => excerpt.text.clone(),
        };
        assert_eq!(shown, expected, "{text:?} cut to {max_chars}");
        assert_eq!(
            excerpt
                .omitted
                .map(|omission| (omission.n_lines, omission.n_bytes)),
            omitted,
            "{text:?} cut to {max_chars}"
        );
    }

    /// Long output keeps its head and its tail, says what it left out, and keeps
    /// Pi's own truncation notice.
    #[test]
    fn excerpts_keep_head_and_tail() {
        check_excerpt("short", 100, "short", None);
        let numbers: String = (1..=100).map(|n| format!("{n}\n")).collect();
        // 100 characters: 2 lines; 40 head characters in at most 1 line, 60 tail in 1.
        check_excerpt(
            &numbers,
            100,
            "1\n<GAP>100\n",
            Some((98, numbers.len() - 6)),
        );
        check_excerpt(&numbers, 0, "<GAP>", Some((100, numbers.len())));
        // One long line is cut inside it.
        check_excerpt(&"ab".repeat(50), 10, "abab<GAP>ababab", Some((1, 90)));
        // Pi's notice survives whatever the budget.
        let mut pi = numbers.clone();
        pi.push_str("\n[Showing lines 1-100 of 300. Full output: /tmp/x.log]");
        let excerpt = head_and_tail(&pi, OutputLimit::chars(100));
        assert!(
            excerpt
                .text
                .ends_with("100\n\n[Showing lines 1-100 of 300. Full output: /tmp/x.log]"),
            "{excerpt:?}"
        );
        assert!(excerpt.text.starts_with("1\n"), "{excerpt:?}");
    }

    #[test]
    fn timestamps_become_utc() {
        assert_eq!(
            utc_timestamp("2026-01-01T02:00:00+02:00"),
            "2026-01-01T00:00:00.000Z"
        );
        assert_eq!(
            utc_timestamp("2026-11-30T19:15:37.102Z"),
            "2026-11-30T19:15:37.102Z"
        );
        assert_eq!(utc_timestamp("yesterday"), "yesterday");
    }
}
