//! Support for `show`: the active branch as displayable items, and the whole entry tree with
//! branch points, labels and the active path marked.

use serde::Serialize;

use crate::content::{EntryContent, entry_content};
use crate::context::model_of;
use crate::entry::{EntryKind, Role};
use crate::error::TranscriptError;
use crate::facts::labels;
use crate::session::Transcript;
use crate::text::{preview, truncate_chars};

/// Returns how much of tool output `show` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShowOptions {
    /// Characters kept of each tool result or bash output.
    pub tool_output_chars: usize,
}

impl Default for ShowOptions {
    fn default() -> Self {
        ShowOptions {
            tool_output_chars: 2000,
        }
    }
}

/// Returns one displayable item of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum DisplayItem {
    /// A user message.
    #[serde(rename_all = "camelCase")]
    User {
        /// The entry's handle.
        entry_id: String,
        /// The text.
        text: String,
        /// Images attached (their data is never shown).
        n_images: usize,
    },
    /// An assistant message's text.
    #[serde(rename_all = "camelCase")]
    Assistant {
        /// The entry's handle.
        entry_id: String,
        /// The text.
        text: String,
        /// `provider/model` that answered.
        model: Option<String>,
    },
    /// A thinking block: available, but flagged so a renderer can hide it.
    #[serde(rename_all = "camelCase")]
    Thinking {
        /// The entry's handle.
        entry_id: String,
        /// The thinking text (empty when redacted).
        text: String,
    },
    /// A tool call: name and a short argument summary.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// The entry's handle.
        entry_id: String,
        /// The tool's name.
        name: String,
        /// Scalar arguments, cut short.
        argument_summary: String,
    },
    /// A tool result, truncated.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        /// The entry's handle.
        entry_id: String,
        /// The tool's name.
        tool_name: Option<String>,
        /// The output, cut to the configured length.
        text: String,
        /// The output was cut.
        is_truncated: bool,
        /// The tool failed.
        is_error: bool,
    },
    /// Any other entry with a text body: system message, bash command, summary, custom
    /// message, context edit, label, session name, model or thinking-level change.
    #[serde(rename_all = "camelCase")]
    Note {
        /// The entry's handle.
        entry_id: String,
        /// The stored type.
        entry_type: String,
        /// The message role, for messages.
        role: Option<String>,
        /// The text (tool output of bash commands is cut like tool results).
        text: String,
    },
}

fn push_items(
    items: &mut Vec<DisplayItem>,
    session: &Transcript,
    idx: usize,
    content: EntryContent,
    options: ShowOptions,
) {
    let entry = session.entry(idx);
    let entry_id = entry.handle();
    let text = content.text.unwrap_or_default();
    match entry.message() {
        Some(meta) if meta.role == Role::User => items.push(DisplayItem::User {
            entry_id,
            text,
            n_images: content.n_images,
        }),
        Some(meta) if meta.role == Role::Assistant => {
            for thinking in content.thinking {
                items.push(DisplayItem::Thinking {
                    entry_id: entry_id.clone(),
                    text: thinking,
                });
            }
            if !text.is_empty() {
                items.push(DisplayItem::Assistant {
                    entry_id: entry_id.clone(),
                    text,
                    model: model_of(&entry.kind).map(|model| model.display()),
                });
            }
            for call in content.tool_calls {
                items.push(DisplayItem::ToolCall {
                    entry_id: entry_id.clone(),
                    name: call.name,
                    argument_summary: call.argument_summary,
                });
            }
        }
        Some(meta) if meta.role == Role::ToolResult => {
            let (text, is_truncated) = truncate_chars(&text, options.tool_output_chars);
            items.push(DisplayItem::ToolResult {
                entry_id,
                tool_name: meta.tool_name.map(str::to_owned),
                text,
                is_truncated,
                is_error: meta.is_error,
            });
        }
        meta => {
            if matches!(
                entry.kind,
                EntryKind::Usage { .. } | EntryKind::Custom { .. }
            ) {
                return;
            }
            items.push(DisplayItem::Note {
                entry_id,
                entry_type: entry.entry_type.to_owned(),
                role: meta.map(|meta| meta.role.as_str().to_owned()),
                text,
            });
        }
    }
}

/// Returns the active branch (root to leaf) as displayable items, decoding each entry once.
pub fn active_branch_items(
    session: &Transcript,
    options: ShowOptions,
) -> Result<Vec<DisplayItem>, TranscriptError> {
    let mut items = Vec::new();
    for idx in session.active_branch() {
        let value = session.decode(idx)?;
        let content = entry_content(&session.entry(idx), &value);
        push_items(&mut items, session, idx, content, options);
    }
    Ok(items)
}

/// Returns one entry of the tree view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeRow {
    /// The entry's handle.
    pub entry_id: String,
    /// The resolved parent's handle.
    pub parent_id: Option<String>,
    /// Physical line number.
    pub line_no: u64,
    /// Number of branch points strictly above this entry whose other children come later:
    /// the indentation a renderer should use.
    pub indent: usize,
    /// The stored type.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// The message role.
    pub role: Option<String>,
    /// The entry's label.
    pub label: Option<String>,
    /// Number of children.
    pub n_children: usize,
    /// The entry has more than one child.
    pub is_branch_point: bool,
    /// The entry is on the active path.
    pub is_on_active_path: bool,
    /// The entry is the leaf.
    pub is_leaf: bool,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// A one-line preview of the entry's text, when previews were asked for.
    pub preview: Option<String>,
}

/// Returns the whole entry tree in depth-first order (children in file order).
///
/// With `with_previews`, each entry is decoded for an 80-character preview; without, only the
/// envelopes are used.
pub fn entry_tree(
    session: &Transcript,
    with_previews: bool,
) -> Result<Vec<TreeRow>, TranscriptError> {
    let labels = labels(session);
    let mut is_active = vec![false; session.entries().len()];
    for idx in session.active_branch() {
        is_active[idx] = true;
    }
    let leaf = session.leaf();
    let mut rows = Vec::with_capacity(session.entries().len());
    // (entry, indent)
    let root_indent = usize::from(session.roots().len() > 1);
    let mut stack: Vec<(usize, usize)> = session
        .roots()
        .iter()
        .rev()
        .map(|&root| (root, root_indent))
        .collect();
    while let Some((idx, indent)) = stack.pop() {
        let entry = session.entry(idx);
        let children = session.children(idx);
        let preview_text = if with_previews {
            let value = session.decode(idx)?;
            entry_content(&entry, &value)
                .text
                .map(|text| preview(&text, 80))
        } else {
            None
        };
        rows.push(TreeRow {
            entry_id: entry.handle(),
            parent_id: session
                .parent(idx)
                .map(|parent| session.entry(parent).handle()),
            line_no: entry.line_no,
            indent,
            entry_type: entry.entry_type.to_owned(),
            role: entry.role().map(|role| role.as_str().to_owned()),
            label: entry
                .id
                .filter(|_| !session.is_linear())
                .and_then(|id| labels.get(id))
                .cloned(),
            n_children: children.len(),
            is_branch_point: children.len() > 1,
            is_on_active_path: is_active[idx],
            is_leaf: leaf == Some(idx),
            timestamp: entry.timestamp.map(str::to_owned),
            preview: preview_text,
        });
        let child_indent = if children.len() > 1 {
            indent + 1
        } else {
            indent
        };
        stack.extend(children.iter().rev().map(|&child| (child, child_indent)));
    }
    Ok(rows)
}
