//! The `--long` listing: one aligned line per session for a person at a terminal.

use std::io::{self, Write};

use pi_retrospect_core::sanitize::escape_for_terminal;
use pi_retrospect_core::{Listing, Session, SessionSummary, unique_prefix_len};

/// Options for [`write_long`].
pub struct LongOptions<'a> {
    /// Emit ANSI colour.
    pub color: bool,
    /// Total line width to fit the title into (the terminal's width, or a default).
    pub width: usize,
    /// Formats a session's instant as local time.
    pub time_of: &'a dyn Fn(&Session) -> String,
    /// Returns a session's body facts, when they were read.
    pub summary_of: &'a dyn Fn(&str) -> Option<&'a SessionSummary>,
    /// Characters of each id to show; `None` computes the shortest prefix (at least eight)
    /// that tells the shown ids apart. A caller that filtered the listing passes the width
    /// computed over every id an `--id` lookup would search, so a shown prefix stays unique.
    pub id_width: Option<usize>,
}

const MAX_CWD_WIDTH: usize = 40;
const MIN_TITLE_WIDTH: usize = 20;

/// Writes one line per session, children under their parent and indented:
/// `local time  id-prefix  cwd  runs  title`, where the title is the session's name, else its
/// first user message, on one line, stripped of terminal controls, cut to fit `width`.
/// Warnings follow as in the contract's text.
pub fn write_long(
    out: &mut dyn Write,
    listing: &Listing,
    options: &LongOptions<'_>,
) -> io::Result<()> {
    let mut rows = Vec::new();
    collect(&listing.sessions, 0, &mut rows);
    let cwd_width = rows
        .iter()
        .map(|(session, _)| display_width(&session.cwd))
        .max()
        .unwrap_or(0)
        .min(MAX_CWD_WIDTH);
    let id_width = options
        .id_width
        .unwrap_or_else(|| unique_prefix_len(rows.iter().map(|(session, _)| session.id.as_str())));
    for (session, depth) in rows {
        let time = (options.time_of)(session);
        let id: String = escape_for_terminal(&session.id)
            .chars()
            .take(id_width)
            .collect();
        let cwd = truncate_start(&escape_for_terminal(&session.cwd), cwd_width);
        let runs = session.n_runs();
        let runs = if runs == 0 {
            "  -".to_owned()
        } else {
            format!("{runs:>3}")
        };
        let mut title = "  ".repeat(depth);
        if depth > 0 {
            title.push_str("↳ ");
        }
        let text = (options.summary_of)(&session.path)
            .and_then(SessionSummary::title)
            .map(one_line)
            .unwrap_or_default();
        title.push_str(&text);
        let used = display_width(&time) + id_width + cwd_width + 3 + 4 * 2;
        let title_width = options.width.saturating_sub(used).max(MIN_TITLE_WIDTH);
        let title = truncate_end(&title, title_width);
        let cwd = pad(&cwd, cwd_width);
        let id = pad(&id, id_width);
        if options.color {
            writeln!(
                out,
                "\x1b[2m{time}\x1b[0m  \x1b[33m{id}\x1b[0m  \x1b[36m{cwd}\x1b[0m  {runs}  \x1b[1m{title}\x1b[0m"
            )?;
        } else {
            writeln!(out, "{time}  {id}  {cwd}  {runs}  {title}")?;
        }
    }
    if !listing.warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "Warnings ({})", listing.warnings.len())?;
        for warning in &listing.warnings {
            let line = format!("- {}: {}", warning.path, warning.reason);
            let line = escape_for_terminal(&line);
            if options.color {
                writeln!(out, "\x1b[33m{line}\x1b[0m")?;
            } else {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

fn collect<'a>(sessions: &'a [Session], depth: usize, rows: &mut Vec<(&'a Session, usize)>) {
    for session in sessions {
        rows.push((session, depth));
        collect(&session.subagent_sessions, depth + 1, rows);
    }
}

/// Returns `text` on one line: controls stripped, runs of white space folded to one space.
pub fn one_line(text: &str) -> String {
    pi_retrospect_core::sanitize::sanitize_for_terminal(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Returns the number of columns `text` takes, counting each character as one (wide
/// characters are rare in paths and titles; this errs on the short side).
fn display_width(text: &str) -> usize {
    text.chars().count()
}

fn pad(text: &str, width: usize) -> String {
    let mut padded = text.to_owned();
    for _ in display_width(text)..width {
        padded.push(' ');
    }
    padded
}

/// Cuts `text` to `width` characters, ending with `…` when anything was cut.
pub fn truncate_end(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Cuts `text` to `width` characters from the left, starting with `…` when anything was cut.
fn truncate_start(text: &str, width: usize) -> String {
    let n_chars = display_width(text);
    if n_chars <= width {
        return text.to_owned();
    }
    let mut cut = String::from("…");
    cut.extend(text.chars().skip(n_chars - width.saturating_sub(1)));
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_prefixes_tell_ids_apart() {
        let check = |ids: &[&str], expected: usize| {
            assert_eq!(unique_prefix_len(ids.iter().copied()), expected, "{ids:?}")
        };
        check(&[], 0);
        check(&["abc"], 3);
        check(&["0199aaaa-1", "0199bbbb-2"], 8);
        check(
            &[
                "01990000-0000-7000-8000-000000000201",
                "01990000-0000-7000-8000-000000000202",
            ],
            36,
        );
        check(&["01990000-00a0", "01990000-00b0", "01990000-00a0"], 12);
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate_end("abcdef", 4), "abc…");
        assert_eq!(truncate_end("abc", 4), "abc");
        assert_eq!(truncate_start("/a/very/long/path", 8), "…ng/path");
        assert_eq!(one_line("a\n\n b\u{1b}[31m c\u{202E}"), "a b c");
    }
}
