//! Snippets: the text around a match, on one line and safe to print on a terminal.

use std::ops::Range;

use pi_retrospect_core::sanitize::sanitize_for_terminal;
use pi_retrospect_core::search::MatchRange;

/// The most characters of a match a snippet shows; a longer match is cut.
const MAX_MATCH_CHARS: usize = 256;

/// Marks text cut at either end of a snippet.
const ELLIPSIS: &str = "…";

/// Returns `text` made safe for one terminal line: tabs and every line break (newline,
/// carriage return, vertical tab, form feed, next line, and the Unicode line and paragraph
/// separators U+2028 and U+2029) become spaces, every other control, escape sequence and
/// bidi override is removed.
fn one_safe_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|character| match character {
            '\n' | '\r' | '\t' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
            other => other,
        })
        .collect();
    sanitize_for_terminal(&spaced).into_owned()
}

/// Returns the byte index `n_chars` characters before `end` in `text` (or 0).
fn back_chars(text: &str, end: usize, n_chars: usize) -> usize {
    if n_chars == 0 {
        return end;
    }
    text[..end]
        .char_indices()
        .rev()
        .nth(n_chars - 1)
        .map_or(0, |(idx, _)| idx)
}

/// Returns the byte index `n_chars` characters after `start` in `text` (or its length).
fn forward_chars(text: &str, start: usize, n_chars: usize) -> usize {
    text[start..]
        .char_indices()
        .nth(n_chars)
        .map_or(text.len(), |(idx, _)| start + idx)
}

/// Returns the snippet of `text` around the match at `found` (byte offsets on character
/// boundaries): up to `context_chars` characters on each side, `…` where text was cut, and
/// where the match sits in the snippet. Each part is cleaned on its own, so removing a
/// control never moves the match's range.
pub(crate) fn snippet(
    text: &str,
    found: Range<usize>,
    context_chars: usize,
) -> (String, MatchRange) {
    let before_start = back_chars(text, found.start, context_chars);
    let shown_end = forward_chars(text, found.start, MAX_MATCH_CHARS).min(found.end);
    let is_match_cut = shown_end < found.end;
    let after_end = if is_match_cut {
        found.end
    } else {
        forward_chars(text, found.end, context_chars)
    };
    let mut snippet = String::new();
    if before_start > 0 {
        snippet.push_str(ELLIPSIS);
    }
    snippet.push_str(&one_safe_line(&text[before_start..found.start]));
    let start = snippet.len();
    snippet.push_str(&one_safe_line(&text[found.start..shown_end]));
    let end = snippet.len();
    snippet.push_str(&one_safe_line(&text[found.end..after_end]));
    if is_match_cut || after_end < text.len() {
        snippet.push_str(ELLIPSIS);
    }
    (snippet, MatchRange { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the snippet of the first `needle` in `text`, with the match shown in brackets.
    fn check(text: &str, needle: &str, context_chars: usize, expected: &str) {
        let start = text.find(needle).expect("needle in text");
        let (snippet, range) = snippet(text, start..start + needle.len(), context_chars);
        let marked = format!(
            "{}[{}]{}",
            &snippet[..range.start],
            &snippet[range.start..range.end],
            &snippet[range.end..]
        );
        assert_eq!(marked, expected, "{text:?} {needle:?} {context_chars}");
    }

    #[test]
    fn context_is_cut_with_ellipses() {
        check("abc needle xyz", "needle", 40, "abc [needle] xyz");
        check("abc needle xyz", "needle", 2, "…c [needle] x…");
        check("abc needle xyz", "needle", 0, "…[needle]…");
        check("needle", "needle", 0, "[needle]");
        check("ééé needle ààà", "needle", 2, "…é [needle] à…");
    }

    #[test]
    fn snippets_are_one_terminal_safe_line() {
        check("a\nb\tneedle\r\nc", "needle", 40, "a b [needle]  c");
        check("x\u{1b}[31mneedle\u{1b}[0m y", "needle", 40, "x[needle] y");
        check("\u{202e}evil needle", "needle", 40, "evil [needle]");
        check("a \u{1b}]0;title\u{7}needle", "needle", 40, "a [needle]");
        // Unicode line and paragraph separators break no line either.
        check("a\u{2028}needle\u{2029}b", "needle", 40, "a [needle] b");
        check(
            "a\u{85}b\u{0b}c\u{0c}needle",
            "needle",
            40,
            "a b c [needle]",
        );
    }

    #[test]
    fn long_matches_are_cut() {
        let long = "x".repeat(300);
        let text = format!("a {long} b");
        let expected = format!("a [{}]…", "x".repeat(MAX_MATCH_CHARS));
        check(&text, &long, 5, &expected);
    }
}
