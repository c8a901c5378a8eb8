//! `inspect`: bounded pages of checkpoint views over one session (overview,
//! ancestors, children, search, read), as text or JSON, with cursors that continue the same
//! snapshot of the file.

use std::io::{self, Write};

use pi_retrospect_transcript::{
    CheckpointItem, InspectPage, InspectView, ReadItem, TranscriptWarning,
};
use serde::Serialize;

use crate::text::{clean, one_line, write_indented};

/// The `inspect --json` document: the page with the file's path and warnings.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InspectDocument<'a> {
    path: &'a str,
    #[serde(flatten)]
    page: &'a InspectPage,
    warnings: &'a [TranscriptWarning],
}

/// Writes the `inspect --json` document: the page with the file's path and warnings.
pub fn write_json(
    out: &mut dyn Write,
    path: &str,
    page: &InspectPage,
    warnings: &[TranscriptWarning],
) -> io::Result<()> {
    let document = InspectDocument {
        path,
        page,
        warnings,
    };
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::from)?;
    writeln!(out)
}

fn or_dash(value: Option<&str>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| clean(value).into_owned())
}

/// Returns `ids` sanitised and joined with commas.
fn join_clean(ids: &[String]) -> String {
    let ids: Vec<String> = ids.iter().map(|id| clean(id).into_owned()).collect();
    ids.join(", ")
}

/// Returns `texts` each on one line cut to `max_chars` characters, joined with commas.
fn join_one_line(texts: &[String], max_chars: usize) -> String {
    let texts: Vec<String> = texts.iter().map(|text| one_line(text, max_chars)).collect();
    texts.join(", ")
}

/// Writes an inspect page as text; `offset` is where the page starts in its view.
pub fn write_text(
    out: &mut dyn Write,
    path: &str,
    page: &InspectPage,
    view: &InspectView,
    offset: usize,
) -> io::Result<()> {
    writeln!(
        out,
        "session {}  view {}  active entry {}",
        or_dash(page.session_id.as_deref()),
        page.view,
        or_dash(page.active_entry_id.as_deref())
    )?;
    writeln!(out, "path: {}", clean(path))?;
    writeln!(out, "tokens are estimates: serialized characters / 4")?;
    let n_shown = page.checkpoints.len() + page.hits.len();
    match view {
        InspectView::Read { .. } => {}
        InspectView::Search { .. } => {
            writeln!(
                out,
                "{}\n",
                range_line("matches", offset, n_shown, page.n_total)
            )?;
        }
        _ => {
            writeln!(
                out,
                "{}\n",
                range_line("checkpoints", offset, n_shown, page.n_total)
            )?;
        }
    }
    for checkpoint in &page.checkpoints {
        write_checkpoint(out, checkpoint)?;
    }
    for hit in &page.hits {
        let active = if hit.is_on_active_branch {
            "  active"
        } else {
            ""
        };
        let field = serde_json::to_value(hit.field)?;
        writeln!(
            out,
            "{}  {}  checkpoint {}  {}{active}",
            clean(&hit.entry_id),
            field.as_str().unwrap_or("?"),
            or_dash(hit.checkpoint_id.as_deref()),
            or_dash(hit.timestamp.as_deref())
        )?;
        writeln!(out, "  {}\n", one_line(&hit.snippet, 240))?;
    }
    if let Some(read) = &page.read {
        writeln!(out)?;
        for item in &read.before {
            write_read_item(out, item, " ")?;
        }
        write_read_item(out, &read.entry, ">")?;
        for item in &read.after {
            write_read_item(out, item, " ")?;
        }
        if let Some(branch_point) = &read.branch_point {
            writeln!(
                out,
                "branch point at {}: {} children: {} (read one of them to continue)",
                clean(&branch_point.entry_id),
                branch_point.child_ids.len(),
                join_clean(&branch_point.child_ids)
            )?;
        }
    }
    if let Some(cursor) = &page.next_cursor {
        writeln!(out, "next page: --cursor {cursor}")?;
    }
    Ok(())
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

fn write_checkpoint(out: &mut dyn Write, checkpoint: &CheckpointItem) -> io::Result<()> {
    let active = if checkpoint.is_on_active_branch {
        "  active"
    } else {
        ""
    };
    writeln!(
        out,
        "{}  {}{active}  ~{} context tokens",
        clean(&checkpoint.entry_id),
        or_dash(checkpoint.timestamp.as_deref()),
        checkpoint.estimated_context_tokens
    )?;
    if checkpoint.assistant_entry_id != checkpoint.entry_id {
        writeln!(
            out,
            "  turn from: {}",
            clean(&checkpoint.assistant_entry_id)
        )?;
    }
    writeln!(
        out,
        "  parent: {}  children: {}",
        or_dash(checkpoint.parent_checkpoint_id.as_deref()),
        if checkpoint.child_checkpoint_ids.is_empty() {
            "-".to_owned()
        } else {
            join_clean(&checkpoint.child_checkpoint_ids)
        }
    )?;
    if !checkpoint.labels.is_empty() {
        writeln!(out, "  labels: {}", join_one_line(&checkpoint.labels, 240))?;
    }
    if let Some(request) = &checkpoint.request_preview {
        writeln!(out, "  request: {}", one_line(request, 240))?;
    }
    if let Some(reply) = &checkpoint.preview {
        writeln!(out, "  reply: {}", one_line(reply, 240))?;
    }
    if !checkpoint.tool_names.is_empty() {
        writeln!(
            out,
            "  tools: {}",
            join_one_line(&checkpoint.tool_names, 80)
        )?;
    }
    for output in &checkpoint.tool_output_previews {
        writeln!(out, "  output: {}", one_line(output, 240))?;
    }
    writeln!(out)?;
    Ok(())
}

fn write_read_item(out: &mut dyn Write, item: &ReadItem, marker: &str) -> io::Result<()> {
    let kind = match (&item.role, &item.tool_name) {
        (Some(role), Some(tool)) => format!("{} {}", clean(role), clean(tool)),
        (Some(role), None) => clean(role).into_owned(),
        (None, _) => clean(&item.entry_type).into_owned(),
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
    notes.push(format!("~{} tokens", item.estimated_tokens));
    writeln!(
        out,
        "{marker} {}  {kind}  {}  {}",
        clean(&item.entry_id),
        or_dash(item.timestamp.as_deref()),
        notes.join(", ")
    )?;
    if !item.labels.is_empty() {
        writeln!(out, "    labels: {}", join_one_line(&item.labels, 240))?;
    }
    if let Some(text) = &item.text {
        write_indented(out, text, "    ")?;
        if item.is_text_truncated {
            writeln!(out, "    [… cut to 2000 characters]")?;
        }
    }
    if item.is_tool_output_hidden {
        writeln!(out, "    [tool output hidden; add --tool-results]")?;
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
