//! `show`: one session's active branch as a readable transcript, or its whole entry tree, as
//! text or JSON.

use std::io::{self, Write};

use pi_retrospect_transcript::{DisplayItem, SessionFacts, Transcript, TranscriptWarning, TreeRow};
use serde::Serialize;

use pi_retrospect_core::sanitize::escape_for_terminal;

use crate::text::{clean, one_line, write_indented};

/// The `show --json` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowDocument<'a> {
    path: &'a str,
    session_id: Option<&'a str>,
    name: Option<&'a str>,
    cwd: Option<&'a str>,
    leaf_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    items: Option<&'a [DisplayItem]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tree: Option<&'a [TreeRow]>,
    warnings: &'a [TranscriptWarning],
}

/// ANSI styles, empty when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    /// Whether to colour.
    pub is_on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.is_on {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
}

/// Writes the `show --json` document: the active-branch `items` or the entry `tree`.
pub fn write_json(
    out: &mut dyn Write,
    path: &str,
    session: &Transcript,
    facts: &SessionFacts,
    items: Option<&[DisplayItem]>,
    tree: Option<&[TreeRow]>,
) -> io::Result<()> {
    let document = ShowDocument {
        path,
        session_id: session.session_id(),
        name: facts.name.as_deref(),
        cwd: facts.cwd.as_deref(),
        leaf_id: facts.leaf_id.as_deref(),
        items,
        tree,
        warnings: session.warnings(),
    };
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// Writes the heading: session id and name, path, cwd and leaf.
pub fn write_heading(
    out: &mut dyn Write,
    path: &str,
    facts: &SessionFacts,
    paint: &Paint,
) -> io::Result<()> {
    let id = facts.session_id.as_deref().unwrap_or("(no id)");
    let name = facts
        .name
        .as_deref()
        .map(|name| format!("  {:?}", one_line(name, 120)))
        .unwrap_or_default();
    writeln!(
        out,
        "{}{name}",
        paint.wrap("1", &format!("session {}", clean(id)))
    )?;
    writeln!(out, "path: {}", escape_for_terminal(path))?;
    if let Some(cwd) = &facts.cwd {
        writeln!(out, "cwd: {}", clean(cwd))?;
    }
    if let Some(leaf) = &facts.leaf_id {
        writeln!(out, "leaf: {}", clean(leaf))?;
    }
    Ok(())
}

/// Writes `text` indented by two spaces, sanitised, keeping its lines.
fn write_body(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    write_indented(out, text, "  ")
}

/// Writes the active-branch items as a transcript, tool output cut to `tool_output` characters.
pub fn write_items(
    out: &mut dyn Write,
    items: &[DisplayItem],
    tool_output_chars: usize,
    paint: &Paint,
) -> io::Result<()> {
    let id = |entry_id: &str| paint.wrap("2", &format!("[{}]", clean(entry_id)));
    for item in items {
        match item {
            DisplayItem::User {
                entry_id,
                text,
                n_images,
            } => {
                let images = match n_images {
                    0 => String::new(),
                    1 => " (1 image)".to_owned(),
                    n => format!(" ({n} images)"),
                };
                writeln!(
                    out,
                    "{} {}{images}",
                    id(entry_id),
                    paint.wrap("1;32", "user")
                )?;
                write_body(out, text)?;
                writeln!(out)?;
            }
            DisplayItem::Assistant {
                entry_id,
                text,
                model,
            } => {
                let model = model
                    .as_deref()
                    .map(|model| format!(" ({})", clean(model)))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{} {}{model}",
                    id(entry_id),
                    paint.wrap("1;36", "assistant")
                )?;
                write_body(out, text)?;
                writeln!(out)?;
            }
            DisplayItem::Thinking { entry_id, text } => {
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
                writeln!(out)?;
            }
            DisplayItem::ToolCall {
                entry_id,
                name,
                argument_summary,
            } => {
                let arguments = if argument_summary.is_empty() {
                    String::new()
                } else {
                    format!(" {}", one_line(argument_summary, 200))
                };
                writeln!(
                    out,
                    "{} {} {}{arguments}",
                    id(entry_id),
                    paint.wrap("33", "->"),
                    paint.wrap("1;33", &one_line(name, 80))
                )?;
            }
            DisplayItem::ToolResult {
                entry_id,
                tool_name,
                text,
                is_truncated,
                is_error,
            } => {
                let name = tool_name
                    .as_deref()
                    .map(|name| one_line(name, 80))
                    .unwrap_or_else(|| "tool".to_owned());
                let error = if *is_error {
                    format!(" {}", paint.wrap("1;31", "(error)"))
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "{} {} {name} result{error}",
                    id(entry_id),
                    paint.wrap("35", "<-")
                )?;
                write_body(out, text)?;
                if *is_truncated {
                    writeln!(
                        out,
                        "  {}",
                        paint.wrap(
                            "2",
                            &format!("[… output cut to {tool_output_chars} characters]")
                        )
                    )?;
                }
                writeln!(out)?;
            }
            DisplayItem::Note {
                entry_id,
                entry_type,
                role,
                text,
            } => {
                let kind = match role {
                    Some(role) => format!("{} {}", clean(entry_type), clean(role)),
                    None => clean(entry_type).into_owned(),
                };
                if !text.contains('\n') && text.chars().count() <= 100 {
                    writeln!(
                        out,
                        "{} {}: {}",
                        id(entry_id),
                        paint.wrap("2", &kind),
                        clean(text)
                    )?;
                } else {
                    writeln!(out, "{} {}", id(entry_id), paint.wrap("2", &kind))?;
                    // System prompts and extension messages can run to many kilobytes: they
                    // are cut like tool output, and `--json` still carries them whole.
                    match text.char_indices().nth(tool_output_chars) {
                        Some((cut, _)) => {
                            write_body(out, &text[..cut])?;
                            let note = format!(
                                "[… cut to {tool_output_chars} characters; --json has all of it]"
                            );
                            writeln!(out, "  {}", paint.wrap("2", &note))?;
                        }
                        None => write_body(out, text)?,
                    }
                    writeln!(out)?;
                }
            }
        }
    }
    Ok(())
}

/// Writes the entry tree, one row per entry.
pub fn write_tree(out: &mut dyn Write, rows: &[TreeRow], paint: &Paint) -> io::Result<()> {
    writeln!(
        out,
        "tree: {} entries (* active path, @ leaf, + first entry of a branch)\n",
        rows.len()
    )?;
    let n_roots = rows.iter().filter(|row| row.parent_id.is_none()).count();
    let n_children_of: std::collections::HashMap<&str, usize> = rows
        .iter()
        .map(|row| (row.entry_id.as_str(), row.n_children))
        .collect();
    for row in rows {
        let marker = if row.is_leaf {
            "@"
        } else if row.is_on_active_path {
            "*"
        } else {
            " "
        };
        let starts_branch = match &row.parent_id {
            None => n_roots > 1,
            Some(parent) => n_children_of.get(parent.as_str()).copied().unwrap_or(0) > 1,
        };
        let indent = if starts_branch && row.indent > 0 {
            format!("{}+ ", "  ".repeat(row.indent - 1))
        } else {
            "  ".repeat(row.indent)
        };
        let kind = match &row.role {
            Some(role) => clean(role).into_owned(),
            None => clean(&row.entry_type).into_owned(),
        };
        let label = row
            .label
            .as_deref()
            .map(|label| {
                format!(
                    " {}",
                    paint.wrap("1;35", &format!("[{}]", one_line(label, 80)))
                )
            })
            .unwrap_or_default();
        let preview = row
            .preview
            .as_deref()
            .filter(|preview| !preview.is_empty())
            .map(|preview| format!("  {}", one_line(preview, 80)))
            .unwrap_or_default();
        let branches = if row.is_branch_point {
            format!(
                "  {}",
                paint.wrap("1;33", &format!("({} branches)", row.n_children))
            )
        } else {
            String::new()
        };
        let marker = if row.is_on_active_path {
            paint.wrap("1;32", marker)
        } else {
            marker.to_owned()
        };
        writeln!(
            out,
            "{marker} {indent}{} {}{label}{preview}{branches}",
            paint.wrap("2", &clean(&row.entry_id)),
            kind
        )?;
    }
    Ok(())
}
