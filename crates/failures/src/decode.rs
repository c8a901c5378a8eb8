//! What a decoded entry says about failure: the kind, the tool, the call it answers and the
//! error text, read from the entry's JSON value with transcript's rules for how a message
//! ended ([`MessageStatus`], [`Failure`]).

use pi_retrospect_transcript::{Failure, MessageStatus, content_text_blocks};
use serde_json::Value;

use crate::types::FailureKind;

/// A failure as one line records it, before the session's tree is consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub(crate) kind: FailureKind,
    pub(crate) id: Option<String>,
    pub(crate) parent_id: Option<String>,
    pub(crate) timestamp: Option<String>,
    pub(crate) tool_name: Option<String>,
    /// A tool result's `toolCallId`: the call is found in the assistant message above it.
    pub(crate) tool_call_id: Option<String>,
    /// A `!` command's command.
    pub(crate) command: Option<String>,
    pub(crate) exit_code: Option<i64>,
    /// The error text, whole.
    pub(crate) text: String,
}

fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Returns the failure `entry` (one decoded line) records, if it records one.
pub(crate) fn classify(entry: &Value) -> Option<Recorded> {
    if entry.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let message = entry.get("message")?;
    let role = message.get("role").and_then(Value::as_str)?;
    let (kind, text) = match role {
        "assistant" => {
            let status = MessageStatus {
                stop_reason: string(message, "stopReason"),
                error_message: string(message, "errorMessage"),
                ..MessageStatus::default()
            };
            match status.failure()? {
                Failure::Error(error) => (FailureKind::ApiError, error.unwrap_or_default()),
                Failure::Aborted => (
                    FailureKind::Aborted,
                    status.error_message.unwrap_or_default(),
                ),
                // The reply itself is the evidence of where it was cut.
                Failure::CutOff => (FailureKind::CutOff, content_text(message)),
            }
        }
        "toolResult" => {
            if message.get("isError").and_then(Value::as_bool) != Some(true) {
                return None;
            }
            (FailureKind::ToolError, content_text(message))
        }
        "bashExecution" => {
            let exit_code = message.get("exitCode").and_then(Value::as_i64)?;
            if exit_code == 0 {
                return None;
            }
            (
                FailureKind::CommandExit,
                string(message, "output").unwrap_or_default(),
            )
        }
        _ => return None,
    };
    let is_command = kind == FailureKind::CommandExit;
    Some(Recorded {
        kind,
        id: string(entry, "id"),
        parent_id: string(entry, "parentId"),
        timestamp: string(entry, "timestamp"),
        tool_name: if is_command {
            Some("bash".to_owned())
        } else {
            string(message, "toolName")
        },
        tool_call_id: string(message, "toolCallId"),
        command: is_command.then(|| string(message, "command")).flatten(),
        exit_code: is_command
            .then(|| message.get("exitCode").and_then(Value::as_i64))
            .flatten(),
        text,
    })
}

/// Returns the text blocks of a message's content, joined by newlines.
fn content_text(message: &Value) -> String {
    message
        .get("content")
        .and_then(content_text_blocks)
        .map(|blocks| blocks.join("\n"))
        .unwrap_or_default()
}

/// One tool call as a decoded assistant line records it, for the repeat count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordedCall {
    pub(crate) call_id: Option<String>,
    pub(crate) name: String,
    /// The arguments as compact JSON text (object keys in stored order).
    pub(crate) arguments: String,
}

/// Returns the tool calls of an assistant entry, in order.
pub(crate) fn tool_calls(entry: &Value) -> Vec<RecordedCall> {
    let Some(message) = entry.get("message") else {
        return Vec::new();
    };
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return Vec::new();
    }
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|block| RecordedCall {
            call_id: string(block, "id"),
            name: string(block, "name").unwrap_or_default(),
            arguments: block
                .get("arguments")
                .map(Value::to_string)
                .unwrap_or_else(|| "null".to_owned()),
        })
        .collect()
}

/// Returns the arguments of the call `call_id` among an assistant entry's tool calls.
pub(crate) fn call_arguments(entry: &Value, call_id: &str) -> Option<(String, Option<String>)> {
    let block = entry
        .get("message")?
        .get("content")?
        .as_array()?
        .iter()
        .find(|block| {
            block.get("type").and_then(Value::as_str) == Some("toolCall")
                && block.get("id").and_then(Value::as_str) == Some(call_id)
        })?;
    let arguments = block.get("arguments")?;
    let command = (block.get("name").and_then(Value::as_str) == Some("bash"))
        .then(|| string(arguments, "command"))
        .flatten();
    Some((arguments.to_string(), command))
}
