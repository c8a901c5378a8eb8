//! The `--long` listing: one aligned line per session for a person at a terminal.
//!
//! Columns: `WHEN ID CWD RUNS TITLE`. On a terminal ([`LongOptions::width`] set) every line
//! fits the width: the cwd shrinks first (`~` for the home directory, then its middle
//! elided), then the title is cut; a header row names the columns. Anywhere else nothing is
//! cut, so a pipe into `grep` or `fzf` gets whole values.
//!
//! The id column shows each id's shortest unique prefix (at least eight characters), so every
//! id shown is a handle for `show` and `list --id`. The column is as wide as the longest such
//! prefix up to [`ID_COLUMN_MAX`] (or the longest of all, when none is that short); a row
//! whose prefix is longer (subagent runs of one launch share long UUIDv7 prefixes) shows it
//! whole in a wider cell that takes the difference from its own cwd, so the common row stays
//! narrow. On a terminal that row's cwd is elided as far as it must be (to one column) to keep
//! a title as long as the others' and the line within the width; off a terminal only the
//! cwd's padding gives way, so nothing is cut and the row shifts right when its cwd has no
//! padding to give.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::text::escape_for_terminal;
use pi_retrospect_core::{Listing, Session, SessionSummary};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Options for [`write_long`].
pub struct LongOptions<'a> {
    /// Emit ANSI colour.
    pub paint: crate::Paint,
    /// The terminal's width: every line fits it. `None` (not a terminal): nothing is cut.
    pub width: Option<usize>,
    /// Write a header row naming the columns.
    pub header: bool,
    /// The home directory, shown as `~` when a cwd has to shrink.
    pub home: Option<&'a str>,
    /// Appends to the text when a session ran (its start, and its last activity when later),
    /// given its body facts when they were read. Appended to text the rows share, rather than
    /// returned, so that a row costs no allocation of its own.
    pub when_of: &'a (dyn Fn(&Session, Option<&SessionSummary>, &mut String) + Sync),
    /// Returns a session's body facts read apart from it (by path), when they were; a
    /// session's own [`Session::summary`] serves otherwise.
    pub summary_of: &'a (dyn Fn(&str) -> Option<&'a SessionSummary> + Sync),
    /// Returns how many characters of an id to show: its shortest unique prefix among the
    /// sessions a lookup by id searches.
    pub id_len_of: &'a (dyn Fn(&str) -> usize + Sync),
}

/// The widest the id column grows; longer prefixes widen only their own row.
pub const ID_COLUMN_MAX: usize = 13;
/// The narrowest the cwd column shrinks to fit a terminal.
const MIN_CWD_WIDTH: usize = 12;
/// The narrowest title kept when the cwd can still give way.
const MIN_TITLE_WIDTH: usize = 24;
const SEPARATOR: &str = "  ";

/// A field's text (escaped for a terminal, not yet cut or coloured) and its width in
/// columns, measured once.
struct Field<'a> {
    text: FieldText<'a>,
    width: usize,
}

/// Where a field's text is.
enum FieldText<'a> {
    /// Its own, or borrowed from the session.
    Own(Cow<'a, str>),
    /// A range of one part's text of the texts the rows share ([`LongRows`]).
    Shared {
        part: usize,
        range: std::ops::Range<usize>,
    },
}

impl<'a> Field<'a> {
    fn new(text: impl Into<Cow<'a, str>>) -> Field<'a> {
        let text = text.into();
        let width = columns(&text);
        Field {
            width,
            text: FieldText::Own(text),
        }
    }

    /// Returns the field's text, given the texts the rows share.
    fn text<'s>(&'s self, shared: &'s [String]) -> &'s str {
        match &self.text {
            FieldText::Own(text) => text,
            // Ranges are made from the shared text and moved with it: always in it.
            FieldText::Shared { part, range } => shared
                .get(*part)
                .and_then(|text| text.get(range.clone()))
                .unwrap_or_default(),
        }
    }

    /// A field of the text appended to `shared` from `start` on, escaped for a terminal in
    /// place and measured (when `is_measured`; else its width is never asked for).
    fn shared(shared: &mut String, start: usize, is_measured: bool) -> Field<'a> {
        let text = &shared[start..];
        let width = match plain_width(text) {
            Some(width) => width,
            None => {
                if let Cow::Owned(escaped) = escape_for_terminal(text) {
                    shared.truncate(start);
                    shared.push_str(&escaped);
                }
                if is_measured {
                    shared[start..].width()
                } else {
                    0
                }
            }
        };
        Field::in_shared(start..shared.len(), width)
    }

    /// A field of `range` of the shared text of the part being made (its part number is
    /// set when the parts are put together), `width` columns wide.
    fn in_shared(range: std::ops::Range<usize>, width: usize) -> Field<'a> {
        Field {
            text: FieldText::Shared { part: 0, range },
            width,
        }
    }

    /// A field of `text` escaped for a terminal ([`escape_for_terminal`]) and measured, in
    /// one scan when it is plain (every ordinary path and id): plain text needs no escape.
    fn escaped(text: &'a str) -> Field<'a> {
        match plain_width(text) {
            Some(width) => Field {
                text: FieldText::Own(Cow::Borrowed(text)),
                width,
            },
            None => Field::new(escape_for_terminal(text)),
        }
    }

    /// A field whose width is never asked for (a title off a terminal, which nothing cuts).
    fn unmeasured(text: &'a str) -> Field<'a> {
        Field {
            text: FieldText::Own(Cow::Borrowed(text)),
            width: 0,
        }
    }
}

/// Returns how many columns `text` takes, as unicode-width measures it.
fn columns(text: &str) -> usize {
    plain_width(text).unwrap_or_else(|| text.width())
}

/// Returns the columns `text` takes when it is plain: printable ASCII and the three
/// characters the listing writes itself (`→` in a time, `↳` before a run's title, `…` where
/// text was cut), each one column wide and none part of a sequence unicode-width measures as
/// a whole, and none needing an escape. `None` for any other text, which the general
/// measure takes.
fn plain_width(text: &str) -> Option<usize> {
    // Printable ASCII (most titles and paths) is a column a byte: checked first by a fold
    // with no early exit, which the compiler turns into many bytes an instruction.
    if crate::text::is_printable_ascii(text) {
        return Some(text.len());
    }
    let bytes = text.as_bytes();
    let mut width = 0;
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if (0x20..0x7f).contains(&byte) {
            index += 1;
        } else if matches!(
            bytes.get(index..index + 3),
            Some([0xe2, 0x86, 0x92] | [0xe2, 0x86, 0xb3] | [0xe2, 0x80, 0xa6])
        ) {
            index += 3;
        } else {
            return None;
        }
        width += 1;
    }
    Some(width)
}

/// One row's fields.
struct Row<'a> {
    when: Field<'a>,
    id: Field<'a>,
    cwd: Field<'a>,
    runs: Field<'a>,
    title: Field<'a>,
}

impl Row<'_> {
    /// Renumbers the part of the row's shared text by `offset`, as its part is put after
    /// others.
    fn move_shared(&mut self, offset: usize) {
        for field in [
            &mut self.when,
            &mut self.id,
            &mut self.cwd,
            &mut self.runs,
            &mut self.title,
        ] {
            if let FieldText::Shared { part, .. } = &mut field.text {
                *part += offset;
            }
        }
    }
}

/// Writes one line per session, children under their parent with their titles indented:
/// `when  id-prefix  cwd  runs  title`, where the title is the session's name, else its first
/// user message, on one line, stripped of terminal controls. Warnings are not written here:
/// a front end reports them apart from the rows.
///
pub fn write_long<'a>(
    out: &mut dyn Write,
    listing: &'a Listing,
    options: &LongOptions<'a>,
) -> io::Result<()> {
    out.write_all(long_lines(listing, options).as_bytes())
}

/// Returns the lines [`write_long`] writes, each ending with a newline: [`long_rows`] of
/// every session, then [`long_header`] and [`long_lines_of`] them, in one piece. A front end
/// that has threads to spare makes the rows and the lines of parts of the listing in
/// parallel with the same calls (a row costs a few microseconds: the title's clean-up, the
/// id's unique prefix, the local time), as `list --long` does.
pub fn long_lines<'a>(listing: &'a Listing, options: &LongOptions<'a>) -> String {
    let sessions = long_sessions(listing);
    let rows = long_rows(&sessions, options);
    let layout = long_layout(&rows, options);
    let mut lines = long_header(&layout, options);
    lines.push_str(&long_lines_of(&rows, 0..rows.len(), &layout, options));
    lines
}

/// Returns every session of `listing` with its depth, parents before their runs: the rows
/// [`long_rows`] makes, in order.
pub fn long_sessions(listing: &Listing) -> Vec<(&Session, usize)> {
    let mut sessions = Vec::new();
    collect(&listing.sessions, 0, &mut sessions);
    sessions
}

/// The rows of some sessions, not yet laid out (see [`long_layout`]).
pub struct LongRows<'a> {
    rows: Vec<Row<'a>>,
    /// The text of the fields the rows make (the times, the runs' indented titles), one
    /// after another in a text a part of the rows, so that a row allocates nothing of its own.
    shared: Vec<String>,
}

impl<'a> LongRows<'a> {
    /// Returns the rows of `parts`, one after another.
    pub fn concat(parts: Vec<LongRows<'a>>) -> LongRows<'a> {
        let mut rows = Vec::with_capacity(parts.iter().map(LongRows::len).sum());
        let mut shared = Vec::with_capacity(parts.iter().map(|part| part.shared.len()).sum());
        for mut part in parts {
            let offset = shared.len();
            shared.append(&mut part.shared);
            if offset > 0 {
                for row in &mut part.rows {
                    row.move_shared(offset);
                }
            }
            rows.append(&mut part.rows);
        }
        LongRows { rows, shared }
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Returns the rows of `sessions` (each with its depth, as [`long_sessions`] gives them).
pub fn long_rows<'a>(sessions: &[(&'a Session, usize)], options: &LongOptions<'a>) -> LongRows<'a> {
    // About a time's length a row; the runs' titles add to it.
    let mut shared = String::with_capacity(32 * sessions.len());
    let rows = sessions
        .iter()
        .map(|(session, depth)| row(session, *depth, options, &mut shared))
        .collect();
    LongRows {
        rows,
        shared: vec![shared],
    }
}

/// How the rows of a whole listing are laid out: the columns' widths, and whether the cwd
/// shrinks `~` for the home directory.
pub struct LongLayout {
    widths: Widths,
    shorten_home: bool,
}

/// Returns the layout of `rows`, every row of the listing.
pub fn long_layout(rows: &LongRows<'_>, options: &LongOptions<'_>) -> LongLayout {
    let shared = rows.shared.as_slice();
    let rows = &rows.rows;
    let column = |field: for<'r> fn(&'r Row<'_>) -> &'r Field<'r>, header_width: usize| {
        rows.iter()
            .map(|row| field(row).width)
            .max()
            .unwrap_or(0)
            .max(if options.header { header_width } else { 0 })
    };
    let when_width = column(|row| &row.when, 4);
    let runs_width = column(|row| &row.runs, 4);
    // The common rows set the column, on a terminal and off it: one launch's runs (UUIDv7
    // ids sharing 30-odd characters) widened every row to 36 in a pipe. When no shown id
    // fits the cap, every row's id is long: the column takes the widest, so the header sits
    // over its columns rather than over a two-wide `ID`.
    let id_width = rows
        .iter()
        .map(|row| row.id.width)
        .filter(|width| *width <= ID_COLUMN_MAX)
        .max()
        .or_else(|| rows.iter().map(|row| row.id.width).max())
        .unwrap_or(0)
        .max(if options.header { 2 } else { 0 });
    let mut cwd_width = column(|row| &row.cwd, 3);
    let mut shorten_home = false;
    if let Some(width) = options.width {
        // What the cwd and the title share once the other columns and separators are placed.
        let fixed = when_width + id_width + runs_width + 4 * SEPARATOR.len();
        let title_width = rows.iter().map(|row| row.title.width).max().unwrap_or(0);
        let room = width
            .saturating_sub(fixed)
            .saturating_sub(title_width.min(MIN_TITLE_WIDTH));
        if cwd_width > room {
            shorten_home = options.home.is_some();
            let shortened = rows
                .iter()
                .map(|row| shorten(row.cwd.text(shared), options.home, shorten_home).width())
                .max()
                .unwrap_or(0)
                .max(if options.header { 3 } else { 0 });
            cwd_width = shortened.min(room.max(MIN_CWD_WIDTH));
        }
    }
    LongLayout {
        widths: Widths {
            when: when_width,
            id: id_width,
            cwd: cwd_width,
            runs: runs_width,
        },
        shorten_home,
    }
}

/// Returns the header row's line when the options want one (else nothing).
pub fn long_header(layout: &LongLayout, options: &LongOptions<'_>) -> String {
    let mut lines = String::new();
    if options.header {
        let header = Row {
            when: Field::new("WHEN"),
            id: Field::new("ID"),
            cwd: Field::new("CWD"),
            runs: Field::new("RUNS"),
            title: Field::new("TITLE"),
        };
        push_row(
            &mut lines,
            &header,
            &[],
            None,
            &layout.widths,
            options,
            false,
        );
    }
    lines
}

/// Returns the lines of the rows in `range` of `rows`, laid out by `layout`.
pub fn long_lines_of(
    rows: &LongRows<'_>,
    range: std::ops::Range<usize>,
    layout: &LongLayout,
    options: &LongOptions<'_>,
) -> String {
    let widths = layout.widths;
    let shared = rows.shared.as_slice();
    let rows = &rows.rows[range];
    // Sized once for the whole part: the line's columns and its title.
    let line_width = widths.when + widths.id + widths.cwd + widths.runs + 4 * SEPARATOR.len();
    let mut lines = String::with_capacity(
        rows.iter()
            .map(|row| line_width + row.title.text(shared).len() + 16)
            .sum(),
    );
    for row in rows {
        // A row whose id is wider than the column takes the difference from its cwd's cell,
        // so its runs and title stay in line with the others where its cwd leaves room.
        let extra = row.id.width.saturating_sub(widths.id);
        let Some(width) = options.width else {
            // Off a terminal nothing is cut: only the cwd's padding gives way.
            let widths = Widths {
                cwd: widths.cwd.saturating_sub(extra),
                ..widths
            };
            push_row(&mut lines, row, shared, None, &widths, options, true);
            continue;
        };
        let mut row_cwd_width = widths
            .cwd
            .saturating_sub(extra)
            .max(widths.cwd.min(MIN_CWD_WIDTH));
        if extra > 0 {
            // Still too wide to keep a title as long as the other rows' (up to
            // `MIN_TITLE_WIDTH`), or, with no title, to fit at all: the cwd shrinks further,
            // to one column at least (runs of one launch share their session's cwd, which the
            // row above shows), so the runs column stays in the line.
            let common_title = width.saturating_sub(
                widths.when + widths.id + widths.cwd + widths.runs + 4 * SEPARATOR.len(),
            );
            let wanted_title = row.title.width.min(MIN_TITLE_WIDTH).min(common_title);
            let before_cwd = widths.when
                + row.id.width
                + widths.runs
                + n_separators(row, shared) * SEPARATOR.len();
            let cwd_room = width.saturating_sub(before_cwd + wanted_title);
            if wanted_title > 0 || cwd_room > 0 {
                row_cwd_width = row_cwd_width.min(cwd_room.max(1));
            }
        }
        let cwd = Field::new(elide_middle(
            &shorten(row.cwd.text(shared), options.home, layout.shorten_home),
            row_cwd_width,
        ));
        let widths = Widths {
            cwd: row_cwd_width,
            ..widths
        };
        push_row(&mut lines, row, shared, Some(&cwd), &widths, options, true);
    }
    lines
}

/// Appends an ANSI style (or its reset), which is empty without colour: then nothing is
/// called.
fn push_style(lines: &mut String, style: &str) {
    if !style.is_empty() {
        lines.push_str(style);
    }
}

/// Appends `count` spaces, a slice at a time rather than a character at a time.
fn push_spaces(lines: &mut String, count: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = count;
    while left > 0 {
        let n = left.min(SPACES.len());
        lines.push_str(&SPACES[..n]);
        left -= n;
    }
}

/// How many separators a row's line shows: four, or three when it has no title (the last one
/// is trailing space, trimmed), so an untitled row's room is not short by one.
fn n_separators(row: &Row<'_>, shared: &[String]) -> usize {
    if row.title.text(shared).is_empty() {
        3
    } else {
        4
    }
}

/// The column widths of a listing.
#[derive(Clone, Copy)]
struct Widths {
    when: usize,
    id: usize,
    cwd: usize,
    runs: usize,
}

/// Returns the row of `session`, at `depth`, appending the text of its own that it makes to
/// `shared`.
fn row<'a>(
    session: &'a Session,
    depth: usize,
    options: &LongOptions<'a>,
    shared: &mut String,
) -> Row<'a> {
    // The unique prefix is counted in the id's own characters, so it is cut before it is
    // escaped: cut after, an escape (`\u{202e}`) was cut through and two ids could show the
    // same text.
    let id_len = (options.id_len_of)(&session.id).max(1);
    let id = session.id.as_str();
    let prefix = if id.is_ascii() {
        // A character a byte.
        &id[..id_len.min(id.len())]
    } else {
        match id.char_indices().nth(id_len) {
            Some((cut, _)) => &id[..cut],
            None => id,
        }
    };
    let runs = match session.n_runs() {
        0 => Field {
            text: FieldText::Own(Cow::Borrowed("-")),
            width: 1,
        },
        runs => Field::new(runs_text(runs)),
    };
    let summary = session.facts((options.summary_of)(&session.path));
    let text = summary.and_then(SessionSummary::title);
    let is_measured = options.width.is_some();
    let title = match text {
        // A top-level row's title already on one line (most first messages): borrowed.
        Some(text) if depth == 0 && is_one_line(text) => {
            if is_measured {
                Field::new(text)
            } else {
                Field::unmeasured(text)
            }
        }
        _ => {
            let start = shared.len();
            for _ in 0..depth {
                shared.push_str("  ");
            }
            if depth > 0 {
                shared.push_str("↳ ");
            }
            if let Some(text) = text {
                push_one_line(shared, text);
            }
            // Clean already: nothing to escape.
            let width = if is_measured {
                columns(&shared[start..])
            } else {
                0
            };
            Field::in_shared(start..shared.len(), width)
        }
    };
    // The time is the front end's text, escaped in place when it is not clean.
    let start = shared.len();
    (options.when_of)(session, summary, shared);
    Row {
        when: Field::shared(shared, start, true),
        id: Field::escaped(prefix),
        cwd: Field::escaped(&session.cwd),
        runs,
        title,
    }
}

/// Returns a run count as text, borrowed for the common counts below 100.
fn runs_text(runs: usize) -> Cow<'static, str> {
    const PAIRS: &str = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    match runs {
        0..10 => Cow::Borrowed(&PAIRS[2 * runs + 1..2 * runs + 2]),
        10..100 => Cow::Borrowed(&PAIRS[2 * runs..2 * runs + 2]),
        _ => Cow::Owned(runs.to_string()),
    }
}

/// Appends one row padded to `widths` (with `cwd` in place of the row's own when given) and
/// its newline to `lines`; on a terminal, the title (and, when even that is not enough, the
/// rest of the line) is cut so the line fits.
fn push_row(
    lines: &mut String,
    row: &Row,
    shared: &[String],
    cwd: Option<&Field>,
    widths: &Widths,
    options: &LongOptions<'_>,
    is_body: bool,
) {
    let cwd = cwd.unwrap_or(&row.cwd);
    let padded = |field: &Field, width: usize| field.width.max(width);
    let before_title = padded(&row.when, widths.when)
        + padded(&row.id, widths.id)
        + padded(cwd, widths.cwd)
        + padded(&row.runs, widths.runs)
        + n_separators(row, shared) * SEPARATOR.len();
    // When not even the columns fit, the plain line itself is cut.
    let is_cut_whole = matches!(options.width, Some(width) if before_title > width);
    let (dim, yellow, cyan, bold, reset) = match (options.paint.is_on && !is_cut_whole, is_body) {
        (false, _) => ("", "", "", "", ""),
        (true, true) => ("\x1b[2m", "\x1b[33m", "\x1b[36m", "\x1b[1m", "\x1b[0m"),
        (true, false) => ("\x1b[1m", "\x1b[1m", "\x1b[1m", "\x1b[1m", "\x1b[0m"),
    };
    let start = lines.len();
    let push_padded = |lines: &mut String, field: &Field, width: usize, is_left: bool| {
        let fill = width.saturating_sub(field.width);
        if !is_left {
            push_spaces(lines, fill);
        }
        lines.push_str(field.text(shared));
        if is_left {
            push_spaces(lines, fill);
        }
    };
    push_style(lines, dim);
    push_padded(lines, &row.when, widths.when, true);
    push_style(lines, reset);
    lines.push_str(SEPARATOR);
    push_style(lines, yellow);
    push_padded(lines, &row.id, widths.id, true);
    push_style(lines, reset);
    lines.push_str(SEPARATOR);
    push_style(lines, cyan);
    push_padded(lines, cwd, widths.cwd, true);
    push_style(lines, reset);
    lines.push_str(SEPARATOR);
    // The header's labels are all bold; a body row's run count is plain.
    let (runs_style, runs_reset) = if is_body { ("", "") } else { (bold, reset) };
    push_style(lines, runs_style);
    push_padded(lines, &row.runs, widths.runs, false);
    push_style(lines, runs_reset);
    let title = row.title.text(shared);
    if title.is_empty() && !is_cut_whole {
        // No title: the line ends with the run count, coloured or not, as its room was
        // counted (`n_separators`); a separator and an empty bold title made a coloured line
        // two columns wider than the terminal.
        lines.push('\n');
        return;
    }
    lines.push_str(SEPARATOR);
    push_style(lines, bold);
    match options.width {
        Some(width) if is_cut_whole => {
            lines.push_str(title);
            let cut = truncate_end(lines[start..].trim_end(), width);
            lines.truncate(start);
            lines.push_str(&cut);
            lines.push('\n');
            return;
        }
        Some(width) if row.title.width > width - before_title => {
            lines.push_str(&truncate_end(title, width - before_title));
        }
        _ => lines.push_str(title),
    }
    push_style(lines, reset);
    if reset.is_empty() {
        let end = start + lines[start..].trim_end().len();
        lines.truncate(end);
    }
    lines.push('\n');
}

/// Appends every session of the trees in `sessions` with its depth, parents before their
/// runs; with an explicit stack, so runs nested thousands of levels deep cannot overflow the
/// thread's stack.
fn collect<'a>(sessions: &'a [Session], depth: usize, rows: &mut Vec<(&'a Session, usize)>) {
    let mut stack: Vec<(&Session, usize)> = sessions
        .iter()
        .rev()
        .map(|session| (session, depth))
        .collect();
    while let Some((session, depth)) = stack.pop() {
        rows.push((session, depth));
        stack.extend(
            session
                .subagent_sessions
                .iter()
                .rev()
                .map(|child| (child, depth + 1)),
        );
    }
}

/// Returns `text` on one line: controls stripped, runs of white space folded to one space.
pub fn one_line(text: &str) -> String {
    let mut line = String::new();
    push_one_line(&mut line, text);
    line
}

/// Appends `text` to `line` as [`one_line`] returns it.
fn push_one_line(line: &mut String, text: &str) {
    let bytes = text.as_bytes();
    if is_one_line(text) {
        // One line of words one space apart already (most first messages): as it is.
        line.push_str(text);
        return;
    }
    if bytes
        .iter()
        .all(|&byte| (0x20..0x7f).contains(&byte) || is_ascii_space(byte))
    {
        // Printable ASCII and ASCII whitespace: nothing to strip, and the words are split
        // bytewise rather than char by char, with the same result.
        line.reserve(text.len());
        let mut is_first = true;
        for word in text.split(|character: char| u8::try_from(character).is_ok_and(is_ascii_space))
        {
            if word.is_empty() {
                continue;
            }
            if !is_first {
                line.push(' ');
            }
            line.push_str(word);
            is_first = false;
        }
        return;
    }
    push_one_line_general(line, text);
}

/// Returns whether `text` is already as [`one_line`] returns it because it is printable
/// ASCII words one space apart, with no space at either end.
fn is_one_line(text: &str) -> bool {
    let bytes = text.as_bytes();
    // One fold with no early exit over the bytes and their successors, which the compiler
    // checks many bytes an instruction: every byte printable, and no two spaces in a row.
    let is_printable = crate::text::is_printable_ascii(text);
    let has_double_space = bytes
        .iter()
        .zip(bytes.iter().skip(1))
        .fold(false, |found, (&first, &second)| {
            found | ((first == b' ') & (second == b' '))
        });
    is_printable && !has_double_space && bytes.first() != Some(&b' ') && bytes.last() != Some(&b' ')
}

/// Returns whether `byte` is ASCII whitespace as [`char::is_whitespace`] says: the space, a
/// tab, a line feed, a vertical tab, a form feed or a carriage return.
fn is_ascii_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// [`push_one_line`] for any text: stripped of terminal controls, split on Unicode
/// whitespace. The whitespace controls (a carriage return, a vertical tab, a form feed)
/// separate words as a tab does: the clean-up would drop them and glue the words together
/// (`cr\rcarriage` read as `crcarriage`).
fn push_one_line_general(line: &mut String, text: &str) {
    let spaced: std::borrow::Cow<'_, str> = if text.contains(['\r', '\u{0b}', '\u{0c}']) {
        text.replace(['\r', '\u{0b}', '\u{0c}'], " ").into()
    } else {
        text.into()
    };
    let clean = crate::text::sanitize_for_terminal(&spaced);
    line.reserve(clean.len());
    let mut is_first = true;
    for word in clean.split_whitespace() {
        if !is_first {
            line.push(' ');
        }
        line.push_str(word);
        is_first = false;
    }
}

/// Returns `cwd` with the home directory written `~` when `is_on` and it starts there.
fn shorten(cwd: &str, home: Option<&str>, is_on: bool) -> String {
    if let Some(home) = home.filter(|home| is_on && home.len() > 1)
        && let Some(rest) = cwd.strip_prefix(home.trim_end_matches('/'))
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return format!("~{rest}");
    }
    cwd.to_owned()
}

/// Cuts `text` to at most `width` columns, ending with `…` when anything was cut.
pub fn truncate_end(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut cut = String::new();
    let mut used = 0;
    for character in text.chars() {
        let char_width = character.width().unwrap_or(0);
        if used + char_width > width - 1 {
            break;
        }
        cut.push(character);
        used += char_width;
    }
    cut.push('…');
    cut
}

/// Cuts the middle out of `text` so it takes at most `width` columns, keeping its start and
/// the more telling end (`/home/me/…/app/crates`), with `…` where the cut is.
pub(crate) fn elide_middle(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let budget = width - 1;
    let head_budget = budget / 3;
    let mut head = String::new();
    let mut used = 0;
    for character in text.chars() {
        let char_width = character.width().unwrap_or(0);
        if used + char_width > head_budget {
            break;
        }
        head.push(character);
        used += char_width;
    }
    let mut tail: Vec<char> = Vec::new();
    let mut tail_used = 0;
    for character in text.chars().rev() {
        let char_width = character.width().unwrap_or(0);
        if used + tail_used + char_width > budget {
            break;
        }
        tail.push(character);
        tail_used += char_width;
    }
    tail.reverse();
    let tail: String = tail.into_iter().collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::timestamp;
    use proptest::strategy::Strategy;

    #[test]
    fn truncation() {
        assert_eq!(truncate_end("abcdef", 4), "abc…");
        assert_eq!(truncate_end("abc", 4), "abc");
        assert_eq!(truncate_end("日本語のテキスト", 7), "日本語…");
        assert_eq!(elide_middle("/a/very/long/path", 8), "/a…/path");
        assert_eq!(elide_middle("/short", 8), "/short");
        assert_eq!(one_line("a\n\n b\u{1b}[31m c\u{202E}"), "a b c");
        assert_eq!(one_line("  two\twords \n"), "two words");
        assert_eq!(
            one_line("cr\rcarriage\u{0b}vt\u{0c}ff"),
            "cr carriage vt ff"
        );
        assert_eq!(one_line("é\r\u{1b}[31mx"), "é x");
        assert_eq!(one_line("one line as it is"), "one line as it is");
        assert_eq!(shorten("/home/me/app", Some("/home/me"), true), "~/app");
        assert_eq!(shorten("/home/me", Some("/home/me/"), true), "~");
        assert_eq!(shorten("/home/men", Some("/home/me"), true), "/home/men");
        assert_eq!(
            shorten("/home/me/app", Some("/home/me"), false),
            "/home/me/app"
        );
    }

    fn session(id: &str, cwd: &str, children: Vec<Session>) -> Session {
        Session {
            id: id.into(),
            path: format!("/s/{id}.jsonl"),
            timestamp: "2026-01-01T00:00:00Z".into(),
            cwd: cwd.into(),
            parent_session_path: None,
            subagent_sessions: children,
            instant: timestamp::parse("2026-01-01T00:00:00Z").unwrap_or_default(),
            n_pruned_runs: 0,
            summary: None,
        }
    }

    fn render(listing: &Listing, width: Option<usize>, header: bool) -> String {
        let summary = SessionSummary {
            first_user_message: Some(
                "Fix the flaky login test that fails on Mondays only and nobody knows why".into(),
            ),
            ..SessionSummary::default()
        };
        let ids = pi_retrospect_core::IdPrefixes::new(
            [
                "0199aaaa-0000-7000",
                "019a0000-0000-7abc-8000-000000000201",
                "019a0000-0000-7def-8000-000000000202",
            ]
            .into_iter(),
        );
        let options = LongOptions {
            paint: crate::Paint::OFF,
            width,
            header,
            home: Some("/home/me"),
            when_of: &|_, _, text| text.push_str("2026-01-01 00:00"),
            summary_of: &|_| Some(&summary),
            id_len_of: &|id| ids.unique_len(id),
        };
        let mut out = Vec::new();
        write_long(&mut out, listing, &options).expect("write to memory");
        String::from_utf8(out).expect("utf-8")
    }

    fn listing() -> Listing {
        Listing {
            sessions: vec![session(
                "0199aaaa-0000-7000",
                "/home/me/repos/a-rather-long-project-name/crates/deep",
                vec![
                    session("019a0000-0000-7abc-8000-000000000201", "/home/me/x", vec![]),
                    session("019a0000-0000-7def-8000-000000000202", "/home/me/x", vec![]),
                ],
            )],
            warnings: vec![],
        }
    }

    /// On a terminal no line is wider than the terminal, the cwd shrinks first,
    /// and the id column stays narrow while the runs' longer prefixes widen only their rows.
    #[test]
    fn fits_the_terminal() {
        let check = |width: usize, expected: &[&str]| {
            let text = render(&listing(), Some(width), true);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines, expected, "{width}");
            for line in lines {
                assert!(line.width() <= width, "{width}: {line}");
            }
        };
        check(
            80,
            &[
                "WHEN              ID        CWD                   RUNS  TITLE",
                "2026-01-01 00:00  0199aaaa  ~/repo…e/crates/deep     2  Fix the flaky login tes…",
                "2026-01-01 00:00  019a0000-0000-7a  ~/x              -    ↳ Fix the flaky login…",
                "2026-01-01 00:00  019a0000-0000-7d  ~/x              -    ↳ Fix the flaky login…",
            ],
        );
        check(
            40,
            &[
                "WHEN              ID        CWD        …",
                "2026-01-01 00:00  0199aaaa  ~/r…tes/dee…",
                "2026-01-01 00:00  019a0000-0000-7a  ~/x…",
                "2026-01-01 00:00  019a0000-0000-7d  ~/x…",
            ],
        );
    }

    /// When every shown id's prefix is longer than the column's cap, the header
    /// still sits over the columns, and the cwd is not cut while the line has room.
    #[test]
    fn header_aligned_when_every_id_is_long() {
        let listing = Listing {
            sessions: vec![
                session("019a0000-0000-7abc-8000-000000000201", "/home/me/x", vec![]),
                session("019a0000-0000-7def-8000-000000000202", "/tmp/y", vec![]),
            ],
            warnings: vec![],
        };
        let text = render(&listing, Some(100), true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "WHEN              ID                CWD         RUNS  TITLE",
                "2026-01-01 00:00  019a0000-0000-7a  /home/me/x     -  Fix the flaky login test that fails on Monday…",
                "2026-01-01 00:00  019a0000-0000-7d  /tmp/y         -  Fix the flaky login test that fails on Monday…",
            ]
        );
    }

    /// Off a terminal nothing is cut, and the runs' longer prefixes
    /// take their room from their own cwd's padding instead of widening every row's id.
    #[test]
    fn nothing_is_cut_off_a_terminal() {
        let text = render(&listing(), None, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "2026-01-01 00:00  0199aaaa  /home/me/repos/a-rather-long-project-name/crates/deep  2  Fix the flaky login test that fails on Mondays only and nobody knows why",
                "2026-01-01 00:00  019a0000-0000-7a  /home/me/x                                     -    ↳ Fix the flaky login test that fails on Mondays only and nobody knows why",
                "2026-01-01 00:00  019a0000-0000-7d  /home/me/x                                     -    ↳ Fix the flaky login test that fails on Mondays only and nobody knows why",
            ]
        );
    }

    /// One launch's runs whose ids differ only in their last
    /// character (36-character prefixes) beside sessions with 8-character ones. The column
    /// stays 8 wide in a pipe and on a terminal; in a pipe a run's whole id pushes its own row
    /// right (its cwd has no padding to give); on a terminal its cwd is elided so that it
    /// keeps a title and the line still fits.
    #[test]
    fn one_launchs_long_ids_widen_only_their_rows() {
        let runs = [
            "0199bbbb-cccc-7000-8000-000000000000",
            "0199bbbb-cccc-7000-8000-000000000001",
        ];
        let listing = Listing {
            sessions: vec![
                session("05413fb4-aaaa", "/home/u/proj", vec![]),
                session(
                    "0199aaaa-aaaa",
                    "/home/u/proj",
                    runs.iter()
                        .map(|id| session(id, "/home/u/proj", vec![]))
                        .collect(),
                ),
            ],
            warnings: vec![],
        };
        let ids = pi_retrospect_core::IdPrefixes::new(
            ["05413fb4-aaaa", "0199aaaa-aaaa", runs[0], runs[1]].into_iter(),
        );
        let summary = SessionSummary {
            first_user_message: Some("task with a title".into()),
            ..SessionSummary::default()
        };
        let render = |width: Option<usize>| {
            let options = LongOptions {
                paint: crate::Paint::OFF,
                width,
                header: width.is_some(),
                home: None,
                when_of: &|_, _, text| text.push_str("2026-11-25 10:00"),
                summary_of: &|_| Some(&summary),
                id_len_of: &|id| ids.unique_len(id),
            };
            long_lines(&listing, &options)
        };
        assert_eq!(
            render(None).lines().collect::<Vec<_>>(),
            [
                "2026-11-25 10:00  05413fb4  /home/u/proj  -  task with a title",
                "2026-11-25 10:00  0199aaaa  /home/u/proj  2  task with a title",
                "2026-11-25 10:00  0199bbbb-cccc-7000-8000-000000000000  /home/u/proj  -    ↳ task with a title",
                "2026-11-25 10:00  0199bbbb-cccc-7000-8000-000000000001  /home/u/proj  -    ↳ task with a title",
            ]
        );
        let lines = render(Some(80));
        let lines: Vec<&str> = lines.lines().collect();
        assert_eq!(
            lines,
            [
                "WHEN              ID        CWD           RUNS  TITLE",
                "2026-11-25 10:00  05413fb4  /home/u/proj     -  task with a title",
                "2026-11-25 10:00  0199aaaa  /home/u/proj     2  task with a title",
                "2026-11-25 10:00  0199bbbb-cccc-7000-8000-000000000000  …     -    ↳ task with …",
                "2026-11-25 10:00  0199bbbb-cccc-7000-8000-000000000001  …     -    ↳ task with …",
            ]
        );
        for line in lines {
            assert!(line.width() <= 80, "{line}");
        }
        // A long-id top-level row with no title (no user message yet) keeps
        // its runs column on a narrow terminal: its cwd gives way instead of the line being
        // cut.
        let untitled = [
            "abcd0000-0000-7000-8000-000000000001",
            "abcd0000-0000-7000-8000-000000000002",
        ];
        let listing = Listing {
            sessions: vec![
                session("05413fb4-aaaa", "/home/u/proj", vec![]),
                session(untitled[0], "/home/u/proj", vec![]),
                session(untitled[1], "/home/u/proj", vec![]),
            ],
            warnings: vec![],
        };
        let ids = pi_retrospect_core::IdPrefixes::new(
            ["05413fb4-aaaa", untitled[0], untitled[1]].into_iter(),
        );
        let options = LongOptions {
            paint: crate::Paint::OFF,
            width: Some(64),
            header: false,
            home: None,
            when_of: &|_, _, text| text.push_str("2026-11-25 10:00"),
            summary_of: &|id| id.contains("05413fb4").then_some(&summary),
            id_len_of: &|id| ids.unique_len(id),
        };
        let narrow = long_lines(&listing, &options);
        for line in narrow.lines().filter(|line| line.contains("abcd0000")) {
            assert!(line.width() <= 64, "{line}");
            let rest = line
                .strip_prefix("2026-11-25 10:00  abcd0000-0000-7000-8000-00000000000")
                .expect("the whole id");
            assert_eq!(rest.split_whitespace().nth(2), Some("-"), "{line}");
        }
        // Coloured, the untitled row is as wide as plain: no separator and empty bold title
        // after its run count.
        let coloured = LongOptions {
            paint: crate::Paint::ON,
            ..options
        };
        for line in long_lines(&listing, &coloured)
            .lines()
            .filter(|line| line.contains("abcd0000"))
        {
            let mut visible = String::new();
            let mut rest = line;
            while let Some(escape) = rest.find('\x1b') {
                visible.push_str(&rest[..escape]);
                rest = rest[escape..]
                    .split_once('m')
                    .map_or("", |(_, after)| after);
            }
            visible.push_str(rest);
            assert!(visible.width() <= 64, "{visible:?}");
            assert!(visible.ends_with('-'), "{visible:?}");
        }
        // Where the untitled row fits exactly, its cwd is whole: it shows three separators,
        // not four.
        let exact = LongOptions {
            width: Some(71),
            ..options
        };
        let exact = long_lines(&listing, &exact);
        assert!(
            exact.lines().any(|line| line
                == "2026-11-25 10:00  abcd0000-0000-7000-8000-000000000001  /home/u/proj  -"),
            "{exact}"
        );

        // An id is cut to its unique prefix before it is escaped, so an escape is never cut
        // through and two ids never show the same text.
        let odd = ["abcd\u{202e}1111-x", "abcd\u{202e}2222-x"];
        let listing = Listing {
            sessions: odd.iter().map(|id| session(id, "/w", vec![])).collect(),
            warnings: vec![],
        };
        let ids = pi_retrospect_core::IdPrefixes::new(odd.into_iter());
        let options = LongOptions {
            width: None,
            summary_of: &|_| None,
            id_len_of: &|id| ids.unique_len(id),
            ..options
        };
        let shown: Vec<String> = long_lines(&listing, &options)
            .lines()
            .map(|line| line.split("  ").nth(1).unwrap_or_default().to_owned())
            .collect();
        assert_eq!(shown, ["abcd\\u{202e}111", "abcd\\u{202e}222"]);
    }

    /// Returns text mixing printable ASCII with the characters the fast paths treat
    /// specially (`→`, `↳`, `…`), their neighbours in UTF-8, controls, spaces, wide,
    /// zero-width, combining and emoji characters and the sequences unicode-width measures as
    /// a whole (a variation selector, a keycap, a joiner, `\r\n`).
    fn mixed_text() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::collection::vec(
            proptest::prop_oneof![
                4 => proptest::char::range(' ', '~'),
                1 => proptest::sample::select(vec![
                    '→', '↳', '…', '↑', '↔', '⇒', '‥', '‧', '\u{2028}', '\u{202e}', '\u{200b}',
                    '\u{fe0f}', '\u{fe0e}', '\u{20e3}', '\u{200d}', '\u{301}', '\n', '\r', '\t',
                    '\u{1b}', '\u{7f}', '\u{85}', '日', '😀', '❤', 'é', '\u{0}', '\u{a0}', '\u{ff}',
                ]),
                1 => proptest::char::any(),
            ],
            0..24,
        )
        .prop_map(|characters| characters.into_iter().collect())
    }

    proptest::proptest! {
        /// The plain measure agrees with unicode-width wherever it answers, and answers for
        /// any mix of printable ASCII and the listing's own characters.
        #[test]
        fn plain_width_agrees_with_unicode_width(text in mixed_text()) {
            if let Some(width) = plain_width(&text) {
                proptest::prop_assert_eq!(width, text.width());
            }
            let is_plain = text
                .chars()
                .all(|character| matches!(character, ' '..='~' | '→' | '↳' | '…'));
            proptest::prop_assert_eq!(plain_width(&text).is_some(), is_plain);
            proptest::prop_assert_eq!(columns(&text), text.width());
        }

        /// A field escapes and measures as the general way does, whether it takes the plain
        /// path or not.
        #[test]
        fn escaped_fields_agree_with_the_general_way(text in mixed_text()) {
            let escaped = escape_for_terminal(&text);
            let general = (escaped.to_string(), escaped.width());
            let field = Field::escaped(&text);
            proptest::prop_assert_eq!((field.text(&[]).to_owned(), field.width), general.clone());
            // In the shared text, after another field's.
            let mut shared = String::from("before→");
            let field = Field::shared({ shared.push_str(&text); &mut shared }, 9, true);
            proptest::prop_assert_eq!((field.text(&[shared.clone()]).to_owned(), field.width), general);
            proptest::prop_assert!(shared.starts_with("before→"));
        }

        /// A title borrowed as it is would be the same text the clean-up writes.
        #[test]
        fn one_line_text_is_kept_as_it_is(text in proptest::prop_oneof![mixed_text(), "[ab \t]{0,12}"]) {
            let mut general = String::new();
            push_one_line_general(&mut general, &text);
            if is_one_line(&text) {
                proptest::prop_assert_eq!(&general, &text);
            }
            proptest::prop_assert_eq!(one_line(&text), general);
        }

        /// Run counts read as `to_string` writes them.
        #[test]
        fn runs_text_is_the_count(runs in proptest::prop_oneof![1_usize..200, proptest::num::usize::ANY]) {
            proptest::prop_assert_eq!(runs_text(runs), runs.to_string());
        }

        /// The bytewise way for printable ASCII with newlines and tabs gives what the
        /// general one does.
        #[test]
        fn one_line_of_ascii_agrees_with_the_general_way(text in "[a-c \t\n\r\x0b\x0c~!é]{0,40}") {
            let mut general = String::from("x");
            push_one_line_general(&mut general, &text);
            proptest::prop_assert_eq!(format!("x{}", one_line(&text)), general);
        }
    }
}
