//! On-demand decoding of an entry's content: its human-readable text, thinking, tool calls
//! and images, from the entry's full JSON value.

use serde::Serialize;
use serde_json::Value;

use crate::entry::{Entry, EntryKind, Role};
use crate::text::truncate_chars;

/// Returns one tool call reduced to what is safe to show: name and a short argument summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallSummary {
    /// The tool call id.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// `key=value` pairs of scalar arguments, cut to 120 characters.
    pub argument_summary: String,
}

/// Returns the decoded content of one entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryContent {
    /// The human-readable body; never thinking, tool-call arguments or image data.
    pub text: Option<String>,
    /// Thinking blocks' text (redacted blocks are empty strings).
    pub thinking: Vec<String>,
    /// Tool calls of an assistant message.
    pub tool_calls: Vec<ToolCallSummary>,
    /// Number of images in the content.
    pub n_images: usize,
    /// System messages: names of tools added.
    pub tools_added: Vec<String>,
    /// System messages: names of tools removed.
    pub tools_removed: Vec<String>,
}

/// Returns the text of `content` given as a string or an array of blocks (text blocks only).
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn tool_names(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Returns a short `key=value` summary of tool-call arguments: scalars only, cut to 120 chars.
pub fn summarize_arguments(arguments: &Value) -> String {
    let Some(map) = arguments.as_object() else {
        return String::new();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(key, value)| match value {
            Value::String(text) => {
                let (cut, is_cut) = truncate_chars(text.lines().next().unwrap_or(""), 60);
                let more = if is_cut || text.contains('\n') {
                    "…"
                } else {
                    ""
                };
                format!("{key}={cut:?}{more}")
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => format!("{key}={value}"),
            Value::Array(items) => format!("{key}=[{} items]", items.len()),
            Value::Object(_) => format!("{key}={{…}}"),
        })
        .collect();
    truncate_chars(&parts.join(", "), 120).0
}

fn system_text(message: &Value) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(text) = message.get("content").and_then(content_text)
        && !text.is_empty()
    {
        parts.push(text);
    }
    if let Some(sections) = message.get("sections").and_then(Value::as_object) {
        for (name, section) in sections {
            match section.as_str() {
                Some(body) => parts.push(format!("[section {name}]\n{body}")),
                None => parts.push(format!("[section {name} removed]")),
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// Returns the human-readable text of an entry: what the `entries` view prints.
pub fn entry_text(entry: &Entry<'_>, value: &Value) -> Option<String> {
    match &entry.kind {
        EntryKind::Message(meta) => {
            let message = value.get("message")?;
            match &meta.role {
                Role::System => system_text(message),
                Role::BashExecution => {
                    string_field(message, "command").map(|command| format!("!{command}"))
                }
                Role::BranchSummary | Role::CompactionSummary => string_field(message, "summary"),
                _ => message.get("content").and_then(content_text),
            }
        }
        EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. } => {
            string_field(value, "summary")
        }
        EntryKind::CustomMessage { .. } => value.get("content").and_then(content_text),
        EntryKind::ContextEdit { .. } => value.get("replacement").and_then(content_text),
        EntryKind::SessionInfo { name } => name.map(str::to_owned),
        EntryKind::Label { label, .. } => label.map(str::to_owned),
        EntryKind::ModelChange { provider, model_id } => match (provider, model_id) {
            (Some(provider), Some(model_id)) => Some(format!("{provider}/{model_id}")),
            (None, Some(model_id)) => Some((*model_id).to_owned()),
            _ => None,
        },
        EntryKind::ThinkingLevelChange { thinking_level } => thinking_level.map(str::to_owned),
        EntryKind::Usage { .. } | EntryKind::Custom { .. } | EntryKind::Unknown => None,
    }
}

/// Returns the decoded content of an entry from its full JSON value.
pub fn entry_content(entry: &Entry<'_>, value: &Value) -> EntryContent {
    let mut content = EntryContent {
        text: entry_text(entry, value),
        ..EntryContent::default()
    };
    let message = value.get("message");
    let blocks = match &entry.kind {
        EntryKind::Message(_) => message.and_then(|message| message.get("content")),
        EntryKind::CustomMessage { .. } => value.get("content"),
        _ => None,
    };
    if let Some(blocks) = blocks.and_then(Value::as_array) {
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("thinking") => content
                    .thinking
                    .push(string_field(block, "thinking").unwrap_or_default()),
                Some("toolCall") => content.tool_calls.push(ToolCallSummary {
                    id: string_field(block, "id"),
                    name: string_field(block, "name").unwrap_or_default(),
                    argument_summary: block
                        .get("arguments")
                        .map(summarize_arguments)
                        .unwrap_or_default(),
                }),
                Some("image") => content.n_images += 1,
                _ => {}
            }
        }
    }
    if let (Some(Role::System), Some(message)) = (entry.role(), message) {
        content.tools_added = tool_names(message.get("toolsAdded"));
        content.tools_removed = tool_names(message.get("toolsRemoved"));
    }
    content
}
