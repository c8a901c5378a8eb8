//! `show`: one session's active branch as a readable transcript, or its whole entry tree, as
//! text or JSON.
//!
//! Text output is for a person: one-line fields (ids, types, roles, paths) are escaped so a
//! file cannot forge a block or a warning, content is stripped of terminal controls, long
//! outputs keep their head and tail, failures are marked, times are local. `--json` keeps
//! everything whole, with UTC times.

use std::io::{self, Write};

use pi_retrospect_transcript::{
    DisplayItem, Lineage, MessageStatus, Omission, SessionFacts, Transcript, TranscriptWarning,
    TreeCounts, TreeRow,
};
use serde::Serialize;
use serde_json::Value;

use crate::entries::{write_lines_indented, write_warnings_array};
use crate::text::{
    Paint, clean, field, human_bytes, local_time, omission_line, one_line, status_marks, thousands,
    wrap, write_indented,
};

/// Deepest level of side branches drawn with its own indentation; deeper rows are drawn at
/// this level with their depth written out, so a row's width never grows with the tree.
pub const MAX_DRAWN_DEPTH: usize = 8;
/// Tools named in the one-line summary of a system prompt before the rest are counted.
const MAX_SUMMARY_TOOLS: usize = 8;
/// Runs listed in the heading before the rest are counted.
const MAX_HEADING_RUNS: usize = 20;

/// The `show --json` document up to its `items` or `tree` array, which is written one
/// element at a time.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowHead<'a> {
    path: &'a str,
    session_id: Option<&'a str>,
    name: Option<&'a str>,
    cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fork_copy: Option<&'a pi_retrospect_transcript::ForkCopy>,
    #[serde(flatten)]
    lineage: &'a Lineage,
    first_activity: Option<&'a str>,
    last_activity: Option<&'a str>,
    leaf_id: Option<&'a str>,
}

/// Which array a `show --json` document carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonView {
    /// `items`: the active branch's display items.
    Items,
    /// `tree`: every entry's tree row.
    Tree,
}

/// What a `show` document is made of.
pub struct ShowParts<'a> {
    /// The session file's path.
    pub path: &'a str,
    /// The parsed file.
    pub transcript: &'a Transcript,
    /// Facts about the whole file.
    pub facts: &'a SessionFacts,
    /// Fork parent, launcher and runs.
    pub lineage: &'a Lineage,
}

/// How `show` text is laid out.
pub struct ShowStyle<'a> {
    /// Colour.
    pub paint: Paint,
    /// The width lines are fitted to (the terminal's, or a default).
    pub width: usize,
    /// The time zone times are shown in.
    pub time_zone: &'a jiff::tz::TimeZone,
    /// Print system prompts whole (otherwise one line each).
    pub system: bool,
    /// Print every tool call's full arguments under it.
    pub tool_args: bool,
    /// Fold each side branch of the tree into one line.
    pub fold: bool,
}

/// The body of a `show` transcript, made one item or row at a time by whoever holds the open
/// session (`app::ShowResult`): `for_each` hands each to the visitor it is given and stops at
/// the visitor's first error.
pub enum TranscriptBody<'a> {
    /// The active branch's items.
    Items {
        /// Entries on the active branch, for the head line.
        n_active_entries: usize,
        /// Makes each item and hands it to the visitor.
        for_each: ItemSource<'a>,
    },
    /// The whole entry tree.
    Tree {
        /// The tree's counts, for the head line.
        counts: TreeCounts,
        /// Makes each row and hands it to the visitor.
        for_each: RowSource<'a>,
    },
}

/// Makes each display item and hands it to the visitor (see [`TranscriptBody`]).
pub type ItemSource<'a> = &'a mut dyn FnMut(
    &mut dyn FnMut(DisplayItem) -> Result<(), TranscriptWriteError>,
) -> Result<(), TranscriptWriteError>;

/// Makes each tree row and hands it to the visitor (see [`TranscriptBody`]).
pub type RowSource<'a> = &'a mut dyn FnMut(
    &mut dyn FnMut(TreeRow) -> Result<(), TranscriptWriteError>,
) -> Result<(), TranscriptWriteError>;

/// Why a transcript could not be written whole: a write failed (its kind kept, so a pager
/// that quit is `BrokenPipe`), or the session could not be read further.
#[derive(Debug)]
pub enum TranscriptWriteError {
    /// Writing failed.
    Write(io::Error),
    /// Making the next item or row failed.
    Read(pi_retrospect_transcript::TranscriptError),
}

impl std::fmt::Display for TranscriptWriteError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TranscriptWriteError::Write(error) => write!(formatter, "{error}"),
            TranscriptWriteError::Read(error) => write!(formatter, "{error}"),
        }
    }
}

impl std::error::Error for TranscriptWriteError {
    // Transparent, as the message is the inner error's own: its sources are this error's.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TranscriptWriteError::Write(error) => error.source(),
            TranscriptWriteError::Read(error) => error.source(),
        }
    }
}

impl From<io::Error> for TranscriptWriteError {
    fn from(error: io::Error) -> TranscriptWriteError {
        TranscriptWriteError::Write(error)
    }
}

impl From<pi_retrospect_transcript::TranscriptError> for TranscriptWriteError {
    fn from(error: pi_retrospect_transcript::TranscriptError) -> TranscriptWriteError {
        TranscriptWriteError::Read(error)
    }
}

/// Writes the text transcript `show` prints and the picker pages: the heading, then the
/// active branch's items or the entry tree, each as it is made, so no more than one is held
/// whatever the session's size.
pub fn write_transcript(
    out: &mut dyn Write,
    parts: &ShowParts<'_>,
    style: &ShowStyle<'_>,
    body: TranscriptBody<'_>,
) -> Result<(), TranscriptWriteError> {
    write_heading(out, parts, style)?;
    match body {
        TranscriptBody::Tree { counts, for_each } => {
            let mut writer = TreeWriter::new(style);
            writer.write_head(out, counts)?;
            for_each(&mut |row| Ok(writer.write_row(out, &row)?))
        }
        TranscriptBody::Items {
            n_active_entries,
            for_each,
        } => {
            write_items_head(out, n_active_entries)?;
            for_each(&mut |item| Ok(write_item(out, &item, style)?))
        }
    }
}

/// Writes the `show --json` document up to the opening of its `items` or `tree` array;
/// elements follow with [`write_json_element`] and the document ends with
/// [`write_json_tail`]. Together they write exactly what serde's pretty printer writes for the
/// whole document, while holding one element at a time.
pub fn write_json_head(
    out: &mut dyn Write,
    parts: &ShowParts<'_>,
    view: JsonView,
) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(&show_head(parts)).map_err(io::Error::from)?;
    // The head always has fields (`path` first), so its pretty form ends with a newline and
    // the closing brace, which the rest of the document replaces.
    let open = text.strip_suffix(b"\n}").unwrap_or(&text);
    out.write_all(open)?;
    match view {
        JsonView::Items => out.write_all(b",\n  \"items\": ["),
        JsonView::Tree => out.write_all(b",\n  \"tree\": ["),
    }
}

/// Returns the heading fields of a `show` document.
fn show_head<'a>(parts: &ShowParts<'a>) -> ShowHead<'a> {
    let facts = parts.facts;
    ShowHead {
        path: parts.path,
        session_id: parts.transcript.session_id(),
        name: facts.name.as_deref(),
        cwd: facts.cwd.as_deref(),
        parent_session: facts.parent_session.as_deref(),
        fork_copy: facts.fork_copy.as_ref(),
        lineage: parts.lineage,
        first_activity: facts.first_activity.as_deref(),
        last_activity: facts.last_activity.as_deref(),
        leaf_id: facts.leaf_id.as_deref(),
    }
}

/// A `show --jsonl` row that is not an item: the session's heading, a tree row or a warning.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum JsonlRow<'a> {
    Session(ShowHead<'a>),
    TreeRow { row: &'a TreeRow },
    Warning { warning: &'a TranscriptWarning },
}

fn write_jsonl_value(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Writes the first `show --jsonl` row: `{"kind": "session", ...}` with the heading fields of
/// `show --json`.
pub fn write_jsonl_session(out: &mut dyn Write, parts: &ShowParts<'_>) -> io::Result<()> {
    write_jsonl_value(out, &JsonlRow::Session(show_head(parts)))
}

/// Writes one item of the active branch as a `show --jsonl` row (its own `kind` tags it).
pub fn write_jsonl_item(out: &mut dyn Write, item: &DisplayItem) -> io::Result<()> {
    write_jsonl_value(out, item)
}

/// Writes one row of `show --tree --jsonl`: `{"kind": "treeRow", "row": {...}}`.
pub fn write_jsonl_tree_row(out: &mut dyn Write, row: &TreeRow) -> io::Result<()> {
    write_jsonl_value(out, &JsonlRow::TreeRow { row })
}

/// Writes every warning about the file as the last `show --jsonl` rows,
/// `{"kind": "warning", "warning": {...}}`, one at a time (see
/// [`Transcript::for_each_warning`]).
pub fn write_jsonl_warnings(out: &mut dyn Write, transcript: &Transcript) -> io::Result<()> {
    let mut failure: Option<io::Error> = None;
    transcript
        .for_each_warning(|warning| {
            if failure.is_none()
                && let Err(error) = write_jsonl_value(out, &JsonlRow::Warning { warning })
            {
                failure = Some(error);
            }
        })
        .map_err(io::Error::other)?;
    failure.map_or(Ok(()), Err)
}

/// Writes element number `index` (0 for the first) of the `items` or `tree` array: a
/// [`DisplayItem`] or a [`TreeRow`].
pub fn write_json_element(
    out: &mut dyn Write,
    element: &impl Serialize,
    index: usize,
) -> io::Result<()> {
    out.write_all(if index == 0 { b"\n" } else { b",\n" })?;
    let text = serde_json::to_vec_pretty(element).map_err(io::Error::from)?;
    write_lines_indented(out, &text, "    ", true)
}

/// Writes the end of the `show --json` document: the close of its array of `n_elements` and
/// the warnings.
pub fn write_json_tail(
    out: &mut dyn Write,
    parts: &ShowParts<'_>,
    n_elements: usize,
) -> io::Result<()> {
    out.write_all(if n_elements == 0 { b"]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"warnings\": ")?;
    write_warnings_array(out, parts.transcript)?;
    out.write_all(b"\n}\n")
}

/// Writes the heading: session id and name, path, cwd, first and last activity (local
/// time), fork parent and where its copies end, the launching session, the runs launched,
/// and the leaf.
pub fn write_heading(
    out: &mut dyn Write,
    parts: &ShowParts<'_>,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let facts = parts.facts;
    let id = facts.session_id.as_deref().unwrap_or("(no id)");
    let name = facts
        .name
        .as_deref()
        .map(|name| format!("  \"{}\"", one_line(name, 120)))
        .unwrap_or_default();
    let title = style.paint.wrap("1", &format!("session {}", field(id)));
    writeln!(out, "{title}{name}")?;
    writeln!(out, "path: {}", field(parts.path))?;
    if let Some(cwd) = &facts.cwd {
        writeln!(out, "cwd: {}", field(cwd))?;
    }
    if let (Some(first), Some(last)) = (&facts.first_activity, &facts.last_activity) {
        writeln!(
            out,
            "activity: {} to {}",
            local_time(first, style.time_zone),
            local_time(last, style.time_zone)
        )?;
    }
    write_lineage(out, parts)?;
    if let Some(leaf) = &facts.leaf_id {
        writeln!(out, "leaf: {}", field(leaf))?;
    }
    Ok(())
}

fn write_lineage(out: &mut dyn Write, parts: &ShowParts<'_>) -> io::Result<()> {
    let lineage = parts.lineage;
    if let Some(parent) = &parts.facts.parent_session {
        let missing = if lineage.parent_session_exists == Some(false) {
            " (not found)"
        } else {
            ""
        };
        writeln!(out, "forked from: {}{missing}", field(parent))?;
        if let Some(copy) = &parts.facts.fork_copy {
            match &copy.last_entry_id {
                Some(last) => writeln!(
                    out,
                    "  copied {} entries up to [{}]; the fork's own entries follow",
                    thousands(copy.n_entries),
                    field(last)
                )?,
                None => writeln!(out, "  no entries copied")?,
            }
        }
    }
    if let Some(launcher) = &lineage.launched_by {
        writeln!(out, "launched by: {}", field(launcher))?;
    }
    if !lineage.runs.is_empty() {
        writeln!(out, "runs ({}):", thousands(lineage.runs.len()))?;
        for run in lineage.runs.iter().take(MAX_HEADING_RUNS) {
            // Titled as `list` titles it: its name, else the task it was given.
            let task = run
                .name
                .as_deref()
                .or(run.first_task.as_deref())
                .map(|task| format!("  \"{}\"", one_line(task, 100)))
                .unwrap_or_default();
            let nested = match run.n_runs {
                0 => String::new(),
                n => format!("  (+{n} runs)"),
            };
            writeln!(out, "  - {}{task}{nested}", field(&run.path))?;
        }
        if lineage.runs.len() > MAX_HEADING_RUNS {
            writeln!(
                out,
                "  … and {} more (--json lists all of them)",
                thousands(lineage.runs.len() - MAX_HEADING_RUNS)
            )?;
        }
    }
    Ok(())
}

/// Writes `text` indented by two spaces, sanitised, keeping its lines.
fn write_body(out: &mut dyn Write, text: &str) -> io::Result<()> {
    write_indented(out, text, "  ")
}

/// Writes a body that may have been cut: the head, the line that says what was left out,
/// the tail.
fn write_excerpt(
    out: &mut dyn Write,
    text: &str,
    omitted: Option<&Omission>,
    paint: &Paint,
) -> io::Result<()> {
    match omitted {
        Some(omission) => {
            let at = omission.at.min(text.len());
            let (head, tail) = text.split_at(if text.is_char_boundary(at) { at } else { 0 });
            write_body(out, head)?;
            writeln!(out, "  {}", paint.wrap("2", &omission_line(omission)))?;
            write_body(out, tail)
        }
        None => write_body(out, text),
    }
}

/// Returns ` [mark, mark]` for a header line, coloured, or nothing.
fn marks_suffix(status: &MessageStatus, paint: &Paint) -> String {
    let marks = status_marks(status);
    if marks.is_empty() {
        return String::new();
    }
    format!(
        " {}",
        paint.wrap("1;31", &format!("[{}]", marks.join(", ")))
    )
}

/// Writes the heading of the active-branch transcript: how many entries it has.
pub fn write_items_head(out: &mut dyn Write, n_entries: usize) -> io::Result<()> {
    writeln!(out, "active branch: {n_entries} entries\n")
}

/// Writes one active-branch item of the transcript; items are written as they are made, so
/// a whole transcript is never held.
pub fn write_item(
    out: &mut dyn Write,
    item: &DisplayItem,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let paint = &style.paint;
    let id = |entry_id: &str| paint.wrap("2", &format!("[{}]", field(entry_id)));
    match item {
        DisplayItem::User {
            entry_id,
            text,
            n_images,
            ..
        } => {
            let images = images_note(*n_images);
            writeln!(
                out,
                "{} {}{images}",
                id(entry_id),
                paint.wrap("1;32", "user")
            )?;
            write_body(out, text)?;
            writeln!(out)
        }
        DisplayItem::Assistant { entry_id, .. } => write_assistant(out, &id(entry_id), item, style),
        DisplayItem::Thinking { entry_id, text, .. } => {
            writeln!(out, "{} {}", id(entry_id), paint.wrap("2;3", "thinking"))?;
            if text.is_empty() {
                writeln!(out, "  (redacted)")?;
            } else if paint.is_on {
                for line in clean(text).lines() {
                    writeln!(out, "  {}", paint.wrap("2;3", line))?;
                }
            } else {
                write_body(out, text)?;
            }
            writeln!(out)
        }
        DisplayItem::ToolCall { entry_id, .. } => write_tool_call(out, &id(entry_id), item, style),
        DisplayItem::ToolResult { entry_id, .. } => {
            write_tool_result(out, &id(entry_id), item, paint)
        }
        DisplayItem::Bash { entry_id, .. } => write_bash(out, &id(entry_id), item, style),
        DisplayItem::System { entry_id, .. } => write_system(out, &id(entry_id), item, style),
        _ => write_note(out, item, style),
    }
}

fn images_note(n_images: usize) -> String {
    match n_images {
        0 => String::new(),
        1 => " (image)".to_owned(),
        n => format!(" ({n} images)"),
    }
}

fn write_assistant(
    out: &mut dyn Write,
    id: &str,
    item: &DisplayItem,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let DisplayItem::Assistant {
        text,
        model,
        n_hidden_thinking,
        status,
        ..
    } = item
    else {
        return Ok(());
    };
    let paint = &style.paint;
    let model = model
        .as_deref()
        .map(|model| format!(" ({})", field(model)))
        .unwrap_or_default();
    writeln!(out, "{id} {}{model}", paint.wrap("1;36", "assistant"))?;
    let failure = status.failure();
    let mark = |text: &str| paint.wrap("1;31", &format!("[{text}]"));
    // An error or an abort says so first: usually there is no text at all.
    let marks = status_marks(status);
    let is_cut_off = matches!(failure, Some(pi_retrospect_transcript::Failure::CutOff));
    if !is_cut_off {
        for text in &marks {
            writeln!(out, "  {}", mark(text))?;
        }
    }
    write_body(out, text)?;
    if is_cut_off {
        for text in &marks {
            writeln!(out, "  {}", mark(text))?;
        }
    }
    if text.is_empty() && failure.is_none() {
        let note = match n_hidden_thinking {
            0 => "(no text)".to_owned(),
            1 => "(thinking only, hidden; --thinking shows it)".to_owned(),
            n => format!("(thinking only: {n} blocks hidden; --thinking shows them)"),
        };
        writeln!(out, "  {}", paint.wrap("2", &note))?;
    }
    writeln!(out)
}

/// Writes a shell command after `head` (`[id] -> bash` or `[id] !`): on the same line after
/// `sep` when it fits in `width`, otherwise under it, each of its lines wrapped, sanitised.
fn write_command(
    out: &mut dyn Write,
    head: (&str, usize),
    sep: &str,
    command: &str,
    suffix: &str,
    width: usize,
) -> io::Result<()> {
    let (head, head_width) = head;
    let clean_command = clean(command);
    let is_one_line = !clean_command.contains('\n')
        && head_width + sep.len() + clean_command.chars().count() + suffix.chars().count() <= width;
    if is_one_line {
        return writeln!(out, "{head}{sep}{clean_command}{suffix}");
    }
    writeln!(out, "{head}{suffix}")?;
    for line in clean_command.lines() {
        for (idx, part) in wrap(line, width.saturating_sub(4)).iter().enumerate() {
            let lead = if idx == 0 { "  $ " } else { "    " };
            writeln!(out, "{lead}{part}")?;
        }
    }
    Ok(())
}

fn write_tool_call(
    out: &mut dyn Write,
    id: &str,
    item: &DisplayItem,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let DisplayItem::ToolCall {
        entry_id,
        name,
        arguments,
        argument_summary,
        ..
    } = item
    else {
        return Ok(());
    };
    let paint = &style.paint;
    let arrow = paint.wrap("33", "->");
    let shown_name = one_line(name, 80);
    let head = format!("{id} {arrow} {}", paint.wrap("1;33", &shown_name));
    let head_width = id_width(entry_id) + 4 + shown_name.chars().count();
    let command = (name == "bash")
        .then(|| arguments.get("command").and_then(Value::as_str))
        .flatten();
    match command {
        Some(command) => {
            let others = other_arguments(arguments);
            let suffix = if others.is_empty() {
                String::new()
            } else {
                format!("  ({})", one_line(&others, 120))
            };
            write_command(
                out,
                (&head, head_width),
                " $ ",
                command,
                &suffix,
                style.width,
            )?;
        }
        None if argument_summary.is_empty() => writeln!(out, "{head}")?,
        None => {
            let room = style.width.saturating_sub(head_width + 1).max(40);
            writeln!(out, "{head} {}", one_line(argument_summary, room))?;
        }
    }
    let is_only_a_command = command.is_some() && other_arguments(arguments).is_empty();
    if style.tool_args && !arguments.is_null() && !is_only_a_command {
        let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
        write_indented(out, &pretty, "    ")?;
    }
    Ok(())
}

/// Returns the width an entry handle takes on screen in brackets (`[abcd1234]`).
fn id_width(entry_id: &str) -> usize {
    field(entry_id).chars().count() + 2
}

/// Returns the arguments of a `bash` call other than its command, summarised.
fn other_arguments(arguments: &Value) -> String {
    match arguments.as_object() {
        Some(map) if map.len() > 1 => {
            let mut others = map.clone();
            others.remove("command");
            pi_retrospect_transcript::summarize_arguments(&Value::Object(others))
        }
        _ => String::new(),
    }
}

fn write_tool_result(
    out: &mut dyn Write,
    id: &str,
    item: &DisplayItem,
    paint: &Paint,
) -> io::Result<()> {
    let DisplayItem::ToolResult {
        tool_name,
        text,
        omitted,
        n_images,
        status,
        ..
    } = item
    else {
        return Ok(());
    };
    let name = tool_name
        .as_deref()
        .map(|name| one_line(name, 80))
        .unwrap_or_else(|| "tool".to_owned());
    writeln!(
        out,
        "{id} {} {name} result{}{}{}",
        paint.wrap("35", "<-"),
        marks_suffix(status, paint),
        images_note(*n_images),
        size_note(text, omitted.as_ref()),
    )?;
    // With no room for output (`--tool-output 0`) the header line is all there is.
    if !(text.is_empty() && omitted.is_some()) {
        write_excerpt(out, text, omitted.as_ref(), paint)?;
        // Pi's own notice in the output usually names the file already.
        if let Some(path) = status
            .full_output_path
            .as_ref()
            .filter(|path| !text.contains(path.as_str()))
        {
            writeln!(
                out,
                "  {}",
                paint.wrap("2", &format!("[full output: {}]", field(path)))
            )?;
        }
    }
    writeln!(out)
}

/// Returns ` (N lines, X KB)` for an output that was cut, so a header line alone still says
/// how much there was.
fn size_note(text: &str, omitted: Option<&Omission>) -> String {
    let Some(omission) = omitted else {
        return String::new();
    };
    let n_lines = text.lines().count() + omission.n_lines;
    let n_bytes = text.len() + omission.n_bytes;
    let lines = if n_lines == 1 { "line" } else { "lines" };
    format!(
        " ({} {lines}, {})",
        thousands(n_lines),
        human_bytes(n_bytes)
    )
}

fn write_bash(
    out: &mut dyn Write,
    id: &str,
    item: &DisplayItem,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let DisplayItem::Bash {
        entry_id,
        command,
        output,
        omitted,
        status,
        ..
    } = item
    else {
        return Ok(());
    };
    let paint = &style.paint;
    let bang = if status.exclude_from_context {
        "!!"
    } else {
        "!"
    };
    let mut suffix = marks_suffix(status, paint);
    if status.exclude_from_context {
        suffix.push_str(&paint.wrap("2", "  (not sent to the model)"));
    }
    suffix.push_str(&size_note(output, omitted.as_ref()));
    let head = format!("{id} {}", paint.wrap("1;32", bang));
    let head_width = id_width(entry_id) + 1 + bang.len();
    write_command(out, (&head, head_width), " ", command, &suffix, style.width)?;
    if !(output.is_empty() && omitted.is_some()) {
        write_excerpt(out, output, omitted.as_ref(), paint)?;
        if let Some(path) = &status.full_output_path {
            writeln!(
                out,
                "  {}",
                paint.wrap("2", &format!("[full output: {}]", field(path)))
            )?;
        }
    }
    writeln!(out)
}

fn write_system(
    out: &mut dyn Write,
    id: &str,
    item: &DisplayItem,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let DisplayItem::System {
        text,
        sections,
        removed_sections,
        tools_added,
        tools_removed,
        ..
    } = item
    else {
        return Ok(());
    };
    let mut parts = vec![human_bytes(text.len())];
    if !sections.is_empty() {
        parts.push(format!("sections: {}", join_fields(sections, usize::MAX)));
    }
    if !removed_sections.is_empty() {
        parts.push(format!(
            "removes sections: {}",
            join_fields(removed_sections, usize::MAX)
        ));
    }
    if !tools_added.is_empty() {
        parts.push(format!(
            "tools: {}",
            join_fields(tools_added, MAX_SUMMARY_TOOLS)
        ));
    }
    if !tools_removed.is_empty() {
        parts.push(format!(
            "removes tools: {}",
            join_fields(tools_removed, MAX_SUMMARY_TOOLS)
        ));
    }
    let kind = style.paint.wrap("2", "system prompt");
    writeln!(out, "{id} {kind}: {}", parts.join("; "))?;
    if style.system {
        write_body(out, text)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Returns names escaped and joined with commas, the first `max` of them, then a count.
fn join_fields(names: &[String], max: usize) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(max)
        .map(|name| one_line(name, 60))
        .collect();
    if names.len() > max {
        shown.push(format!("… {} more", names.len() - max));
    }
    shown.join(", ")
}

/// What a note prints: its line, then maybe a body (cut as `omitted` says).
struct NoteParts<'a> {
    entry_id: &'a str,
    line: String,
    body: Option<&'a String>,
    omitted: Option<&'a Omission>,
}

/// Returns `[id]` of an entry a note points at, escaped; `[?]` when the file names none.
fn target(target_id: &Option<String>) -> String {
    format!("[{}]", field(target_id.as_deref().unwrap_or("?")))
}

/// Returns what a compaction note says: the tokens it replaced and where the kept part
/// starts.
fn compaction_line(entry_id: &str, tokens_before: Option<u64>, first_kept: Option<&str>) -> String {
    let tokens = tokens_before
        .map(|tokens| format!("{} tokens before; ", thousands(tokens as usize)))
        .unwrap_or_default();
    let kept = match first_kept {
        Some(kept) if kept != entry_id => format!(
            "the model keeps entries from [{}] on, after this summary",
            field(kept)
        ),
        _ => "nothing before it is kept; the model gets this summary".to_owned(),
    };
    format!("compaction: {tokens}{kept}:")
}

/// Returns the kind a generic note is introduced by: `model`, `thinking level`, `name`, or its
/// type (with its role or extension type).
fn note_kind(entry_type: &str, role: Option<&str>, custom_type: Option<&str>) -> String {
    match (entry_type, role, custom_type) {
        ("model_change", _, _) => "model".to_owned(),
        ("thinking_level_change", _, _) => "thinking level".to_owned(),
        ("session_info", _, _) => "name".to_owned(),
        (_, _, Some(custom)) => format!("{} ({})", field(entry_type), one_line(custom, 60)),
        (_, Some(role), None) => format!("{} {}", field(entry_type), field(role)),
        (_, None, None) => field(entry_type).into_owned(),
    }
}

/// Returns what a note about an entry that is not part of the conversation prints.
fn note_parts(item: &DisplayItem) -> Option<NoteParts<'_>> {
    let parts = match item {
        DisplayItem::Compaction {
            entry_id,
            summary,
            omitted,
            tokens_before,
            first_kept_entry_id,
            ..
        } => NoteParts {
            entry_id,
            line: compaction_line(entry_id, *tokens_before, first_kept_entry_id.as_deref()),
            body: Some(summary),
            omitted: omitted.as_ref(),
        },
        DisplayItem::BranchSummary {
            entry_id,
            summary,
            omitted,
            from_id,
            ..
        } => NoteParts {
            entry_id,
            line: format!("branch summary of the branch left at {}:", target(from_id)),
            body: Some(summary),
            omitted: omitted.as_ref(),
        },
        DisplayItem::ContextEdit {
            entry_id,
            target_id,
            omits,
            replacement,
            omitted,
            ..
        } => NoteParts {
            entry_id,
            line: if *omits {
                format!("context edit: hides {} from the model", target(target_id))
            } else {
                format!("context edit: the model sees {} as:", target(target_id))
            },
            body: replacement.as_ref(),
            omitted: omitted.as_ref(),
        },
        DisplayItem::Label {
            entry_id,
            target_id,
            label,
            ..
        } => NoteParts {
            entry_id,
            line: match label {
                Some(label) => format!(
                    "label \"{}\" on {}",
                    one_line(label, 120),
                    target(target_id)
                ),
                None => format!("label cleared on {}", target(target_id)),
            },
            body: None,
            omitted: None,
        },
        DisplayItem::Note {
            entry_id,
            entry_type,
            role,
            custom_type,
            text,
            omitted,
            ..
        } => {
            let kind = note_kind(entry_type, role.as_deref(), custom_type.as_deref());
            let is_short = omitted.is_none() && !text.contains('\n') && text.chars().count() <= 100;
            NoteParts {
                entry_id,
                line: if is_short {
                    format!("{kind}: {}", clean(text))
                } else {
                    kind
                },
                body: (!is_short).then_some(text),
                omitted: omitted.as_ref(),
            }
        }
        _ => return None,
    };
    Some(parts)
}

/// Writes an entry that is not part of the conversation itself, saying what it does.
fn write_note(out: &mut dyn Write, item: &DisplayItem, style: &ShowStyle<'_>) -> io::Result<()> {
    let Some(note) = note_parts(item) else {
        return Ok(());
    };
    let paint = &style.paint;
    let id = paint.wrap("2", &format!("[{}]", field(note.entry_id)));
    writeln!(out, "{id} {}", paint.wrap("2", &note.line))?;
    if let Some(body) = note.body {
        write_excerpt(out, body, note.omitted, paint)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Writes the entry tree one row at a time, one row per entry (or one per folded side
/// branch): the active path flush left, side branches under their branch point with `|`
/// beside them. Each row is fitted to the width, and no row is wider than
/// [`MAX_DRAWN_DEPTH`] levels of indentation plus the width, so the output grows linearly
/// with the number of entries. It remembers only whether a folded branch is being skipped.
pub struct TreeWriter<'a> {
    style: &'a ShowStyle<'a>,
    /// Inside a folded side branch: its depth, until a row leaves it.
    skip_until_depth: Option<usize>,
}

impl<'a> TreeWriter<'a> {
    /// Returns a writer of tree rows in `style`.
    pub fn new(style: &'a ShowStyle<'a>) -> TreeWriter<'a> {
        TreeWriter {
            style,
            skip_until_depth: None,
        }
    }

    /// Writes the line above the rows: how many entries and branch points the tree has.
    pub fn write_head(&self, out: &mut dyn Write, counts: TreeCounts) -> io::Result<()> {
        let n_branch_points = counts.n_branch_points;
        writeln!(
            out,
            "tree: {} entries, {} branch point{} (* active path, @ leaf, + first entry of a side branch)\n",
            thousands(counts.n_rows),
            thousands(n_branch_points),
            if n_branch_points == 1 { "" } else { "s" }
        )
    }

    /// Writes the next row in drawing order, or nothing for a row inside a folded branch.
    pub fn write_row(&mut self, out: &mut dyn Write, row: &TreeRow) -> io::Result<()> {
        if let Some(depth) = self.skip_until_depth {
            if row.depth >= depth
                && !row.is_on_active_path
                && !(row.is_branch_start && row.depth == depth)
            {
                return Ok(());
            }
            self.skip_until_depth = None;
        }
        let is_folded = self.style.fold && row.is_branch_start && row.depth == 1;
        write_tree_row(out, row, is_folded, self.style)?;
        if is_folded {
            self.skip_until_depth = Some(row.depth);
        }
        Ok(())
    }
}

fn write_tree_row(
    out: &mut dyn Write,
    row: &TreeRow,
    is_folded: bool,
    style: &ShowStyle<'_>,
) -> io::Result<()> {
    let paint = &style.paint;
    let marker = if row.is_leaf {
        "@"
    } else if row.is_on_active_path {
        "*"
    } else {
        "|"
    };
    let drawn = row.depth.min(MAX_DRAWN_DEPTH);
    let mut prefix = String::new();
    if drawn > 0 {
        prefix.push_str(&"  ".repeat(drawn - 1));
        prefix.push_str(if row.is_branch_start { "+ " } else { "  " });
    }
    if row.depth > MAX_DRAWN_DEPTH {
        prefix.push_str(&format!("(depth {}) ", row.depth));
    }
    let kind = match &row.role {
        Some(role) => field(role).into_owned(),
        None => field(&row.entry_type).into_owned(),
    };
    if is_folded {
        let size = row.branch_size.unwrap_or(1);
        let entries = if size == 1 { "entry" } else { "entries" };
        prefix.push_str(&format!(
            "abandoned branch, {} {entries}: ",
            thousands(size)
        ));
    }
    let mut head = format!("{} {kind}", field(&row.entry_id));
    if let Some(label) = &row.label {
        head.push_str(&format!(" [{}]", one_line(label, 40)));
    }
    let marks = status_marks(&row.status);
    if !marks.is_empty() {
        head.push_str(&format!(" [{}]", one_line(&marks.join(", "), 80)));
    }
    let mut tail = String::new();
    if row.is_branch_point {
        tail = format!("  ({} branches)", row.n_children);
    }
    let used = 2 + prefix.chars().count() + head.chars().count() + tail.chars().count();
    let room = style.width.saturating_sub(used + 2).max(20);
    let preview = row
        .preview
        .as_deref()
        .filter(|preview| !preview.is_empty())
        .map(|preview| format!("  {}", one_line(preview, room)))
        .unwrap_or_default();
    let marker = if row.is_on_active_path {
        paint.wrap("1;32", marker)
    } else {
        paint.wrap("2", marker)
    };
    let head = match head.split_once(' ') {
        Some((id, rest)) => format!("{} {rest}", paint.wrap("2", id)),
        None => head,
    };
    let tail = if tail.is_empty() {
        tail
    } else {
        paint.wrap("1;33", &tail)
    };
    writeln!(out, "{marker} {prefix}{head}{preview}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_transcript::{
        ForkCopy, RunInfo, ShowOptions, TranscriptWarning, active_branch_items, entry_tree, facts,
    };

    /// The `show --json` document, whole, as serde writes it.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct ShowDocument<'a> {
        path: &'a str,
        session_id: Option<&'a str>,
        name: Option<&'a str>,
        cwd: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_session: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        fork_copy: Option<&'a ForkCopy>,
        #[serde(flatten)]
        lineage: &'a Lineage,
        first_activity: Option<&'a str>,
        last_activity: Option<&'a str>,
        leaf_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        items: Option<&'a [DisplayItem]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tree: Option<&'a [TreeRow]>,
        warnings: &'a [TranscriptWarning],
    }

    /// Returns the document streamed element by element.
    fn streamed(parts: &ShowParts<'_>, view: JsonView, elements: &[impl Serialize]) -> String {
        let mut out = Vec::new();
        write_json_head(&mut out, parts, view).expect("head");
        for (index, element) in elements.iter().enumerate() {
            write_json_element(&mut out, element, index).expect("element");
        }
        write_json_tail(&mut out, parts, elements.len()).expect("tail");
        String::from_utf8(out).expect("utf-8")
    }

    /// The streamed `show --json` document is byte for byte what serde writes for
    /// the whole document, for items and for the tree, empty or not, with a fork parent,
    /// runs and warnings.
    #[test]
    fn the_streamed_document_is_the_pretty_document() {
        let plain = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
        let fork = r#"{"type":"session","version":3,"id":"s2","timestamp":"2026-01-01T00:00:03.000Z","cwd":"/p","parentSession":"/p/s1.jsonl"}"#;
        let body = [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi\nthere \"you\""}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls\n-la","n":[1,{}]}}],"provider":"p","model":"m","stopReason":"toolUse"}}"#,
            "junk",
            r#"{"type":"label","id":"l","parentId":"b","timestamp":"2026-01-01T00:00:04.000Z","targetId":"a","label":"x"}"#,
            r#"{"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"again"}}"#,
        ];
        let lineages = [
            Lineage::default(),
            Lineage {
                parent_session_exists: Some(false),
                launched_by: Some("/p/launcher.jsonl".to_owned()),
                runs: vec![RunInfo {
                    path: "/p/s/l/run-0/session.jsonl".to_owned(),
                    id: "r0".to_owned(),
                    timestamp: "2026-01-01T00:00:09.000Z".to_owned(),
                    name: None,
                    first_task: Some("do\tit".to_owned()),
                    n_runs: 2,
                }],
            },
        ];
        for header in [plain, fork] {
            for n_lines in [0, 1, body.len()] {
                let mut text = format!("{header}\n");
                for line in &body[..n_lines] {
                    text.push_str(line);
                    text.push('\n');
                }
                let transcript = Transcript::from_bytes(text.into_bytes());
                let facts = facts(&transcript).expect("facts");
                let options = ShowOptions {
                    output_limit: None,
                    include_thinking: true,
                };
                let items = active_branch_items(&transcript, options).expect("items");
                let rows = entry_tree(&transcript, true).expect("tree");
                for lineage in &lineages {
                    let parts = ShowParts {
                        path: "/p/s \"1\".jsonl",
                        transcript: &transcript,
                        facts: &facts,
                        lineage,
                    };
                    let document = |items, tree| ShowDocument {
                        path: parts.path,
                        session_id: transcript.session_id(),
                        name: facts.name.as_deref(),
                        cwd: facts.cwd.as_deref(),
                        parent_session: facts.parent_session.as_deref(),
                        fork_copy: facts.fork_copy.as_ref(),
                        lineage,
                        first_activity: facts.first_activity.as_deref(),
                        last_activity: facts.last_activity.as_deref(),
                        leaf_id: facts.leaf_id.as_deref(),
                        items,
                        tree,
                        warnings: transcript.warnings(),
                    };
                    let whole = |document: ShowDocument<'_>| {
                        let mut text = serde_json::to_string_pretty(&document).expect("json");
                        text.push('\n');
                        text
                    };
                    assert_eq!(
                        streamed(&parts, JsonView::Items, &items),
                        whole(document(Some(&items), None))
                    );
                    assert_eq!(
                        streamed(&parts, JsonView::Tree, &rows),
                        whole(document(None, Some(&rows)))
                    );
                }
            }
        }
    }
}
