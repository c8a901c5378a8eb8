//! On-demand decoding of an entry's content: its human-readable text, thinking, tool calls
//! (with their full arguments), images and how the message ended (stop reason, error, exit
//! code), all from the entry's full JSON value. Which texts a search looks in is the rule of
//! `read::searchable` ([`searchable_texts`]).

use pi_retrospect_read::searchable::{FieldKinds, Text, entry_texts};
use serde::Serialize;
use serde_json::Value;

use crate::entry::{Entry, EntryKind, Role};
use crate::text::truncate_chars;

/// Characters of one string value kept in an argument summary.
const SUMMARY_STRING_CHARS: usize = 60;
/// Items of an array shown in an argument summary.
const SUMMARY_ARRAY_ITEMS: usize = 3;
/// Characters of a whole argument summary.
const SUMMARY_CHARS: usize = 200;

/// One tool call of an assistant message: its id, name and full arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The tool call id, which the matching tool result names as `toolCallId`.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as stored (an object, normally).
    pub arguments: Value,
}

impl ToolCall {
    /// Returns a readable one-line summary of the arguments (see [`summarize_arguments`]).
    pub fn argument_summary(&self) -> String {
        summarize_arguments(&self.arguments)
    }

    /// Returns the whole shell command of a `bash` call, when it has one.
    pub fn command(&self) -> Option<&str> {
        (self.name == "bash")
            .then(|| self.arguments.get("command").and_then(Value::as_str))
            .flatten()
    }
}

/// How a message ended, as far as the file records it: the assistant's stop reason and error,
/// a tool result's failure, a `!` command's exit code and state. Absent facts are left out of
/// JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStatus {
    /// Assistant: why the response stopped (`stop`, `toolUse`, `length`, `error`, `aborted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Assistant: the provider's error, with `stopReason: "error"` (sometimes `"aborted"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Tool result: whether the tool failed (present on every tool result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `!` command: the exit code; absent when the command was killed or never exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// `!` command: the user cancelled it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// `!` command: Pi kept only part of the output.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// `!` command or tool result: where Pi saved the whole output it cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// `!!` command: run without sending it or its output to the model.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclude_from_context: bool,
}

/// Returns how a response failed, from an assistant's stop reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// `stopReason: "error"`: the provider or Pi failed; the error text when recorded.
    Error(Option<String>),
    /// `stopReason: "aborted"`: the user or Pi stopped the response.
    Aborted,
    /// `stopReason: "length"`: the model hit its output limit and the reply is cut off.
    CutOff,
}

impl MessageStatus {
    /// Returns how the assistant response failed, when its stop reason says it did.
    pub fn failure(&self) -> Option<Failure> {
        match self.stop_reason.as_deref()? {
            "error" => Some(Failure::Error(self.error_message.clone())),
            "aborted" => Some(Failure::Aborted),
            "length" => Some(Failure::CutOff),
            _ => None,
        }
    }

    /// Returns whether a `!` command failed: cancelled, or exited with a code other than 0.
    pub fn is_failed_command(&self) -> bool {
        self.cancelled || self.exit_code.is_some_and(|code| code != 0)
    }
}

/// What a row of the `entries` view adds about a message besides its text: how it ended,
/// the tools it called, its images and thinking blocks (counted, never shown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageFacts {
    /// How the message ended.
    #[serde(flatten)]
    pub status: MessageStatus,
    /// Assistant: the names of the tools it called, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<String>,
    /// Images in the content.
    #[serde(skip_serializing_if = "is_zero")]
    pub n_images: usize,
    /// Thinking blocks in the content.
    #[serde(skip_serializing_if = "is_zero")]
    pub n_thinking: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// Returns the [`MessageFacts`] of an entry (empty for entries that are not messages).
pub fn message_facts(entry: &Entry, value: &Value) -> MessageFacts {
    let Some(meta) = entry.message() else {
        return MessageFacts::default();
    };
    let blocks = value
        .get("message")
        .and_then(|message| message.get("content"))
        .and_then(Value::as_array);
    let tool_calls = blocks
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|block| string_field(block, "name").unwrap_or_default())
        .collect();
    MessageFacts {
        status: message_status(entry, value),
        tool_calls,
        n_images: meta.shape.n_images as usize,
        n_thinking: meta.shape.n_thinking as usize,
    }
}

/// Returns the texts of a decoded entry (of a file in format `version`) that a search of
/// `kinds` looks in, each with its kind, in stored order: the one rule of `read::searchable`, which
/// the search engine asks too.
pub fn searchable_texts(value: &Value, kinds: FieldKinds, version: u64) -> Vec<Text<'_>> {
    let mut texts = Vec::new();
    entry_texts(value, kinds, &mut || version, &mut texts);
    texts
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
    pub tool_calls: Vec<ToolCall>,
    /// Number of images in the content.
    pub n_images: usize,
    /// System messages: names of tools added.
    pub tools_added: Vec<String>,
    /// System messages: names of tools removed.
    pub tools_removed: Vec<String>,
    /// How the message ended.
    pub status: MessageStatus,
}

/// Returns the text of `content` given as a string or an array of blocks (text blocks only).
pub(crate) fn content_text(content: &Value) -> Option<String> {
    content_text_blocks(content).map(|texts| texts.join("\n"))
}

/// Returns the text blocks of `content` given as a string (one block) or an array of blocks
/// (text blocks only, kept apart), or `None` when it has no text block.
pub fn content_text_blocks(content: &Value) -> Option<Vec<&str>> {
    match content {
        Value::String(text) => Some(vec![text.as_str()]),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then_some(texts)
        }
        _ => None,
    }
}

pub(crate) fn string_field(value: &Value, key: &str) -> Option<String> {
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

/// Returns a readable one-line summary of tool-call arguments: `key=value` pairs in key
/// order, strings quoted (first line, cut to 60 characters), the first three items of an
/// array, one level of an object; 200 characters at most.
pub fn summarize_arguments(arguments: &Value) -> String {
    let summary = match arguments.as_object() {
        Some(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{key}={}", summarize_value(value, 1)))
                .collect();
            parts.join(", ")
        }
        None if arguments.is_null() => String::new(),
        None => summarize_value(arguments, 1),
    };
    let (cut, is_cut) = truncate_chars(&summary, SUMMARY_CHARS);
    if is_cut { format!("{cut}…") } else { cut }
}

/// Returns one argument value in a summary; `depth` levels of arrays and objects are opened.
fn summarize_value(value: &Value, depth: usize) -> String {
    match value {
        Value::String(text) => {
            let first_line = text.lines().next().unwrap_or("");
            let (cut, is_cut) = truncate_chars(first_line, SUMMARY_STRING_CHARS);
            let more = if is_cut || first_line.len() < text.trim_end().len() {
                "…"
            } else {
                ""
            };
            format!("{cut:?}{more}")
        }
        Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        Value::Array(items) if depth == 0 => format!("[{} items]", items.len()),
        Value::Array(items) => {
            let mut parts: Vec<String> = items
                .iter()
                .take(SUMMARY_ARRAY_ITEMS)
                .map(|item| summarize_value(item, depth - 1))
                .collect();
            if items.len() > SUMMARY_ARRAY_ITEMS {
                parts.push(format!("… {} more", items.len() - SUMMARY_ARRAY_ITEMS));
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Object(_) if depth == 0 => "{…}".to_owned(),
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{key}={}", summarize_value(value, depth - 1)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// Returns the text of a system message: its own content, then each section it sets (or
/// removes), in key order.
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

/// Returns the names of the sections a system message sets and the ones it removes.
pub(crate) fn system_sections(message: &Value) -> (Vec<String>, Vec<String>) {
    let mut set = Vec::new();
    let mut removed = Vec::new();
    if let Some(sections) = message.get("sections").and_then(Value::as_object) {
        for (name, section) in sections {
            if section.is_string() {
                set.push(name.clone());
            } else {
                removed.push(name.clone());
            }
        }
    }
    (set, removed)
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

/// Returns how a message entry ended (see [`MessageStatus`]); empty for other entries.
pub fn message_status(entry: &Entry<'_>, value: &Value) -> MessageStatus {
    let (Some(meta), Some(message)) = (entry.message(), value.get("message")) else {
        return MessageStatus::default();
    };
    let is_true = |key: &str| message.get(key).and_then(Value::as_bool) == Some(true);
    match meta.role {
        Role::Assistant => MessageStatus {
            stop_reason: meta.stop_reason.map(str::to_owned),
            error_message: string_field(message, "errorMessage"),
            ..MessageStatus::default()
        },
        Role::ToolResult => MessageStatus {
            is_error: Some(meta.is_error),
            full_output_path: message
                .get("details")
                .and_then(|details| string_field(details, "fullOutputPath")),
            ..MessageStatus::default()
        },
        Role::BashExecution => MessageStatus {
            exit_code: message.get("exitCode").and_then(Value::as_i64),
            cancelled: is_true("cancelled"),
            truncated: is_true("truncated"),
            full_output_path: string_field(message, "fullOutputPath"),
            exclude_from_context: meta.exclude_from_context,
            ..MessageStatus::default()
        },
        _ => MessageStatus::default(),
    }
}

/// Returns the output of a `!` command entry.
pub(crate) fn bash_output(value: &Value) -> Option<String> {
    value
        .get("message")
        .and_then(|message| string_field(message, "output"))
}

/// Returns the decoded content of an entry from its full JSON value.
pub fn entry_content(entry: &Entry<'_>, value: &Value) -> EntryContent {
    let mut content = EntryContent {
        text: entry_text(entry, value),
        status: message_status(entry, value),
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
                Some("toolCall") => content.tool_calls.push(ToolCall {
                    id: string_field(block, "id"),
                    name: string_field(block, "name").unwrap_or_default(),
                    arguments: block.get("arguments").cloned().unwrap_or(Value::Null),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn check_summary(arguments: Value, expected: &str) {
        assert_eq!(summarize_arguments(&arguments), expected, "{arguments}");
    }

    /// Arrays are shown, not counted, and a long string keeps its head.
    #[test]
    fn summaries_are_readable() {
        check_summary(
            serde_json::json!({"path": "README.md", "limit": 5}),
            r#"limit=5, path="README.md""#,
        );
        check_summary(
            serde_json::json!({"tasks": ["check main.rs compiles", "check README.md"]}),
            r#"tasks=["check main.rs compiles", "check README.md"]"#,
        );
        check_summary(
            serde_json::json!({"tasks": ["a", "b", "c", "d", "e"]}),
            r#"tasks=["a", "b", "c", … 2 more]"#,
        );
        check_summary(
            serde_json::json!({"options": {"deep": {"x": 1}, "n": null}}),
            r#"options={deep={…}, n=null}"#,
        );
        check_summary(
            serde_json::json!({"text": "line one\nline two"}),
            r#"text="line one"…"#,
        );
        check_summary(serde_json::json!({}), "");
        check_summary(Value::Null, "");
        let long = "x".repeat(500);
        let summary =
            summarize_arguments(&serde_json::json!({ "a": long, "b": long, "c": long, "d": long }));
        assert_eq!(summary.chars().count(), SUMMARY_CHARS + 1, "{summary}");
        assert!(summary.ends_with('…'));
    }
}
