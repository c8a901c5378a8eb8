//! `inspect`: bounded pages of checkpoint views over one session (overview,
//! ancestors, children, search, read), as text or JSON, with cursors that continue the same
//! snapshot of the file.

use std::io::{self, Write};

use pi_retrospect_transcript::{
    CheckpointItem, InspectHit, InspectPage, InspectView, ReadItem, ReadResult, Transcript,
    TranscriptWarning,
};
use serde::Serialize;

use crate::entries::write_warnings_array;
use crate::text::{field, local_time, one_line, status_marks, thousands, write_indented};

/// The `inspect --json` document: the page with the file's path and warnings (none when
/// they are streamed after it).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InspectDocument<'a> {
    path: &'a str,
    #[serde(flatten)]
    page: &'a InspectPage,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<&'a [TranscriptWarning]>,
}

/// Writes the `inspect --json` document with `warnings` (a bounded list, as an MCP page
/// keeps).
pub fn write_json(
    out: &mut dyn Write,
    path: &str,
    page: &InspectPage,
    warnings: &[TranscriptWarning],
) -> io::Result<()> {
    let document = InspectDocument {
        path,
        page,
        warnings: Some(warnings),
    };
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::from)?;
    writeln!(out)
}

/// Writes the `inspect --json` document with every warning about `transcript`'s file,
/// streamed one at a time after the page; the same bytes as [`write_json`] given
/// them all.
pub fn write_json_all_warnings(
    out: &mut dyn Write,
    path: &str,
    page: &InspectPage,
    transcript: &Transcript,
) -> io::Result<()> {
    let document = InspectDocument {
        path,
        page,
        warnings: None,
    };
    let mut text = serde_json::to_vec_pretty(&document).map_err(io::Error::from)?;
    // The pretty object ends with "\n}"; the warnings go in before its close, as the last
    // member, where serde puts them in the whole document.
    if text.ends_with(b"\n}") {
        text.truncate(text.len() - 2);
    }
    out.write_all(&text)?;
    out.write_all(b",\n  \"warnings\": ")?;
    write_warnings_array(out, transcript)?;
    out.write_all(b"\n}\n")
}

/// How `inspect` text is laid out.
pub struct InspectStyle<'a> {
    /// Where the page starts in its view (0 without a cursor).
    pub offset: usize,
    /// The time zone times are shown in.
    pub time_zone: &'a jiff::tz::TimeZone,
    /// How the hints name the options that widen a search or turn the page.
    pub spelling: Spelling,
}

/// How a front end spells its options in the hints a page gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Spelling {
    /// Command-line flags: `--tool-results`, `--cursor X`.
    #[default]
    Flags,
    /// Tool arguments: `toolResults: true`, `cursor = X`.
    Arguments,
}

impl Spelling {
    /// Returns how the option that adds `kind` (`toolResults`, `toolArgs`, `thinking`,
    /// `system`) is given.
    fn adding(self, kind: &str) -> String {
        match self {
            Spelling::Flags => {
                let flag = match kind {
                    "toolResults" => "tool-results",
                    "toolArgs" => "tool-args",
                    other => other,
                };
                format!("--{flag}")
            }
            Spelling::Arguments => format!("{kind}: true"),
        }
    }

    /// Returns how the next page is asked for.
    fn next_page(self, cursor: &str) -> String {
        match self {
            Spelling::Flags => format!("--cursor {cursor}"),
            Spelling::Arguments => format!("cursor = {cursor}"),
        }
    }
}

fn or_dash(value: Option<&str>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| field(value).into_owned())
}

fn time_or_dash(value: Option<&str>, style: &InspectStyle<'_>) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |value| local_time(value, style.time_zone),
    )
}

/// Returns `ids` escaped and joined with commas.
fn join_fields(ids: &[String]) -> String {
    let ids: Vec<String> = ids.iter().map(|id| field(id).into_owned()).collect();
    ids.join(", ")
}

/// Returns `texts` each on one line cut to `max_chars` characters, joined with commas.
fn join_one_line(texts: &[String], max_chars: usize) -> String {
    let texts: Vec<String> = texts.iter().map(|text| one_line(text, max_chars)).collect();
    texts.join(", ")
}

/// Returns `  [mark, mark]` or nothing.
fn marks_suffix(marks: &[String]) -> String {
    if marks.is_empty() {
        String::new()
    } else {
        format!("  [{}]", marks.join(", "))
    }
}

/// Writes an inspect page as text.
pub fn write_text(
    out: &mut dyn Write,
    path: &str,
    page: &InspectPage,
    view: &InspectView,
    style: &InspectStyle<'_>,
) -> io::Result<()> {
    writeln!(
        out,
        "session {}  view {}  active entry {}",
        or_dash(page.session_id.as_deref()),
        page.view,
        or_dash(page.active_entry_id.as_deref())
    )?;
    writeln!(out, "path: {}", field(path))?;
    writeln!(out, "tokens are estimates: serialized characters / 4")?;
    let hits = page.hits.as_deref().unwrap_or_default();
    let n_shown = page.checkpoints.len() + hits.len();
    match view {
        InspectView::Read { .. } => {}
        InspectView::Search { .. } => {
            if !page.not_searched.is_empty() {
                writeln!(
                    out,
                    "{}",
                    not_searched_line(&page.not_searched, style.spelling)
                )?;
            }
            let range = range_line("matches", style.offset, n_shown, page.n_total);
            writeln!(out, "{range}\n")?;
        }
        _ => {
            let range = range_line("checkpoints", style.offset, n_shown, page.n_total);
            writeln!(out, "{range}\n")?;
        }
    }
    for checkpoint in &page.checkpoints {
        write_checkpoint(out, checkpoint, style)?;
    }
    for hit in hits {
        write_hit(out, hit, style)?;
    }
    if let Some(read) = &page.read {
        write_read(out, read, page.next_cursor.as_deref(), style)?;
    }
    if let Some(cursor) = &page.next_cursor {
        writeln!(
            out,
            "next page: {}",
            style.spelling.next_page(&field(cursor))
        )?;
    }
    Ok(())
}

/// Returns the line that says what a search did not look in (`toolResults`, `toolArgs`,
/// `thinking`, `system`), and how to add each, spelled for the front end.
pub fn not_searched_line(not_searched: &[&str], spelling: Spelling) -> String {
    let parts: Vec<String> = not_searched
        .iter()
        .map(|name| {
            let what = match *name {
                "toolResults" => "tool output",
                "toolArgs" => "tool-call arguments",
                "thinking" => "thinking",
                "system" => "system prompts",
                other => return (*other).to_owned(),
            };
            format!("{what} ({})", spelling.adding(name))
        })
        .collect();
    format!("not searched: {}", parts.join(", "))
}

fn range_line(what: &str, offset: usize, n_shown: usize, n_total: usize) -> String {
    if n_total == 0 {
        format!("no {what}")
    } else if n_shown == 0 {
        format!("{what}: none past {offset} of {n_total}")
    } else {
        format!("{what} {}-{} of {n_total}", offset + 1, offset + n_shown)
    }
}

fn write_hit(out: &mut dyn Write, hit: &InspectHit, style: &InspectStyle<'_>) -> io::Result<()> {
    let active = if hit.is_on_active_branch {
        "  active"
    } else {
        ""
    };
    let field_name = serde_json::to_value(hit.field)?;
    writeln!(
        out,
        "{}  {}  checkpoint {}  {}{active}{}",
        field(&hit.entry_id),
        field_name.as_str().unwrap_or("?"),
        or_dash(hit.checkpoint_id.as_deref()),
        time_or_dash(hit.timestamp.as_deref(), style),
        marks_suffix(&status_marks(&hit.status)),
    )?;
    writeln!(out, "  {}\n", one_line(&hit.snippet, 240))
}

fn write_checkpoint(
    out: &mut dyn Write,
    checkpoint: &CheckpointItem,
    style: &InspectStyle<'_>,
) -> io::Result<()> {
    let active = if checkpoint.is_on_active_branch {
        "  active"
    } else {
        ""
    };
    writeln!(
        out,
        "{}  {}{active}  ~{} context tokens",
        field(&checkpoint.entry_id),
        time_or_dash(checkpoint.timestamp.as_deref(), style),
        thousands(checkpoint.estimated_context_tokens as usize)
    )?;
    if checkpoint.assistant_entry_id != checkpoint.entry_id {
        writeln!(
            out,
            "  turn from: {}",
            field(&checkpoint.assistant_entry_id)
        )?;
    }
    writeln!(
        out,
        "  parent: {}  children: {}",
        or_dash(checkpoint.parent_checkpoint_id.as_deref()),
        if checkpoint.child_checkpoint_ids.is_empty() {
            "-".to_owned()
        } else {
            join_fields(&checkpoint.child_checkpoint_ids)
        }
    )?;
    if !checkpoint.labels.is_empty() {
        writeln!(out, "  labels: {}", join_one_line(&checkpoint.labels, 240))?;
    }
    if let Some(request) = &checkpoint.request_preview {
        writeln!(out, "  request: {}", one_line(request, 240))?;
    }
    write_reply(out, checkpoint)?;
    write_turn_tools(out, checkpoint)?;
    for output in &checkpoint.tool_output_previews {
        writeln!(out, "  output: {}", one_line(output, 240))?;
    }
    writeln!(out)
}

/// Writes the reply line of a checkpoint: the text, or what stands in for it, and how the
/// response ended when it failed.
fn write_reply(out: &mut dyn Write, checkpoint: &CheckpointItem) -> io::Result<()> {
    let marks = marks_suffix(&status_marks(&checkpoint.status));
    match &checkpoint.preview {
        Some(reply) => writeln!(out, "  reply: {}{marks}", one_line(reply, 240)),
        None if !marks.is_empty() => writeln!(out, "  reply: (none){marks}"),
        None if !checkpoint.tool_names.is_empty() => writeln!(out, "  reply: (tool calls only)"),
        None if checkpoint.n_thinking > 0 => writeln!(out, "  reply: (thinking only, not shown)"),
        None => writeln!(out, "  reply: (no text)"),
    }
}

/// Writes the tools a turn called, then the results that failed.
fn write_turn_tools(out: &mut dyn Write, checkpoint: &CheckpointItem) -> io::Result<()> {
    if !checkpoint.tool_names.is_empty() {
        writeln!(
            out,
            "  tools: {}",
            join_one_line(&checkpoint.tool_names, 80)
        )?;
    }
    let failed: Vec<String> = checkpoint
        .tool_results
        .iter()
        .filter(|result| result.is_error)
        .map(|result| {
            format!(
                "{} ({})",
                one_line(result.tool_name.as_deref().unwrap_or("tool"), 80),
                field(&result.entry_id)
            )
        })
        .collect();
    if !failed.is_empty() {
        writeln!(out, "  failed: {}", failed.join(", "))?;
    }
    Ok(())
}

fn write_read(
    out: &mut dyn Write,
    read: &ReadResult,
    next_cursor: Option<&str>,
    style: &InspectStyle<'_>,
) -> io::Result<()> {
    writeln!(out)?;
    for item in &read.before {
        write_read_item(out, item, " ", style)?;
    }
    write_read_item(out, &read.entry, ">", style)?;
    if read.entry.is_text_truncated && next_cursor.is_some() {
        let shown = read.entry.text_offset
            + read
                .entry
                .text
                .as_deref()
                .map_or(0, |text| text.chars().count());
        writeln!(
            out,
            "    [… {} more characters of {}: continue with the cursor below]",
            thousands(read.entry.n_text_chars.saturating_sub(shown)),
            thousands(read.entry.n_text_chars)
        )?;
    }
    for item in &read.after {
        write_read_item(out, item, " ", style)?;
    }
    if let Some(branch_point) = &read.branch_point {
        writeln!(
            out,
            "branch point at {}: {} children: {} (read one of them to continue)",
            field(&branch_point.entry_id),
            branch_point.child_ids.len(),
            join_fields(&branch_point.child_ids)
        )?;
    }
    Ok(())
}

fn write_read_item(
    out: &mut dyn Write,
    item: &ReadItem,
    marker: &str,
    style: &InspectStyle<'_>,
) -> io::Result<()> {
    let kind = match (&item.role, &item.tool_name) {
        (Some(role), Some(tool)) => format!("{} {}", field(role), field(tool)),
        (Some(role), None) => field(role).into_owned(),
        (None, _) => field(&item.entry_type).into_owned(),
    };
    let mut notes = Vec::new();
    if item.is_checkpoint {
        notes.push("checkpoint".to_owned());
    }
    if item.is_on_active_branch {
        notes.push("active".to_owned());
    }
    if item.n_children > 1 {
        notes.push(format!("{} children", item.n_children));
    }
    notes.push(format!(
        "~{} tokens",
        thousands(item.estimated_tokens as usize)
    ));
    writeln!(
        out,
        "{marker} {}  {kind}  {}  {}{}",
        field(&item.entry_id),
        time_or_dash(item.timestamp.as_deref(), style),
        notes.join(", "),
        marks_suffix(&status_marks(&item.status)),
    )?;
    if !item.labels.is_empty() {
        writeln!(out, "    labels: {}", join_one_line(&item.labels, 240))?;
    }
    if item.text_offset > 0 {
        writeln!(
            out,
            "    [… continued from character {}]",
            thousands(item.text_offset)
        )?;
    }
    if let Some(text) = &item.text {
        write_indented(out, text, "    ")?;
        if item.is_text_truncated && marker != ">" {
            writeln!(
                out,
                "    [… cut to {} of {} characters; read {} to see all]",
                thousands(text.chars().count()),
                thousands(item.n_text_chars),
                field(&item.entry_id)
            )?;
        }
    }
    write_read_item_facts(out, item, style.spelling)
}

/// Writes what a read item holds besides its text: hidden output, images, thinking, tools.
fn write_read_item_facts(
    out: &mut dyn Write,
    item: &ReadItem,
    spelling: Spelling,
) -> io::Result<()> {
    if item.is_tool_output_hidden {
        writeln!(
            out,
            "    [tool output hidden; add {}]",
            spelling.adding("toolResults")
        )?;
    }
    if item.n_images > 0 {
        writeln!(
            out,
            "    ({} image{})",
            item.n_images,
            if item.n_images == 1 { "" } else { "s" }
        )?;
    }
    if item.n_thinking > 0 {
        writeln!(
            out,
            "    (thinking: {} block{}, not shown)",
            item.n_thinking,
            if item.n_thinking == 1 { "" } else { "s" }
        )?;
    }
    for (what, names) in [
        ("tool calls", &item.tool_calls),
        ("tools added", &item.tools_added),
        ("tools removed", &item.tools_removed),
    ] {
        if !names.is_empty() {
            writeln!(out, "    {what}: {}", join_one_line(names, 80))?;
        }
    }
    Ok(())
}
