//! Text helpers every text writer shares: sanitising, folding to one line, indenting, and the
//! one-line form of a warning.

use std::borrow::Cow;
use std::io::Write;

use pi_retrospect_core::sanitize::{escape_for_terminal, sanitize_for_terminal};

/// Returns session content made safe for a terminal (escape sequences, controls, bidi and
/// invisible characters removed; newlines and tabs kept).
pub fn clean(text: &str) -> Cow<'_, str> {
    sanitize_for_terminal(text)
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
    fn one_line_folds_cuts_and_cleans() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("x\u{1b}[31my\u{202e}z", 10), "xyz");
    }

    /// Issue 8: an id holding `ESC ] 0 ; … BEL` cannot retitle the terminal through stderr.
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
