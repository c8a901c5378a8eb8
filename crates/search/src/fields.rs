//! The searchable texts of one decoded entry, each with its [`FieldKind`].
//!
//! Only string values reached through known fields are texts: JSON field names, ids,
//! timestamps, image data, signatures, usage and extension state never are. Which fields
//! hold which kind follows Pi's session format; the crate documentation has the table.

use pi_retrospect_core::search::FieldKind;
use serde_json::Value;

use crate::scope::FieldKinds;

/// Returns the envelope facts of an entry that a hit reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryFacts<'v> {
    /// The stored `type`.
    pub entry_type: &'v str,
    /// The stored id.
    pub id: Option<&'v str>,
    /// The stored timestamp.
    pub timestamp: Option<&'v str>,
    /// The message role in version 3 spelling (`hookMessage` of older files is `custom`).
    pub role: Option<&'v str>,
    /// The assistant message's model.
    pub model: Option<&'v str>,
    /// The assistant message's provider.
    pub provider: Option<&'v str>,
}

/// Returns one searchable text of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Text<'v> {
    /// Which kind of text it is.
    pub kind: FieldKind,
    /// The decoded text.
    pub text: &'v str,
    /// The tool, for tool-call arguments and tool results.
    pub tool_name: Option<&'v str>,
}

fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// Collects the texts of kinds in `kinds` from one decoded line into `texts` and returns the
/// entry's facts, or `None` when the line is not an entry (not an object, or no string
/// `type`). `version` is asked for only when a `hookMessage` role needs it.
pub(crate) fn entry_texts<'v>(
    value: &'v Value,
    kinds: FieldKinds,
    version: &mut dyn FnMut() -> u64,
    texts: &mut Vec<Text<'v>>,
) -> Option<EntryFacts<'v>> {
    let entry_type = string(value, "type")?;
    let mut facts = EntryFacts {
        entry_type,
        id: string(value, "id"),
        timestamp: string(value, "timestamp"),
        role: None,
        model: None,
        provider: None,
    };
    let mut push = |kind: FieldKind, text: Option<&'v str>, tool_name: Option<&'v str>| {
        if let Some(text) = text
            && kinds.contains(kind)
        {
            texts.push(Text {
                kind,
                text,
                tool_name,
            });
        }
    };
    match entry_type {
        "message" => {
            let message = value.get("message").unwrap_or(&Value::Null);
            let role = match string(message, "role") {
                Some("hookMessage") if version() < 3 => Some("custom"),
                role => role,
            };
            facts.role = role;
            message_texts(message, role, kinds, &mut push);
            if role == Some("assistant") {
                facts.model = string(message, "model");
                facts.provider = string(message, "provider");
            }
        }
        "compaction" => {
            push(FieldKind::CompactionSummary, string(value, "summary"), None);
            if kinds.contains(FieldKind::System)
                && let Some(system) = value.get("systemMessage")
            {
                system_texts(system, &mut push);
            }
        }
        "branch_summary" => push(FieldKind::BranchSummary, string(value, "summary"), None),
        "custom_message" => {
            if let Some(content) = value.get("content") {
                content_texts(content, FieldKind::Custom, None, &mut push);
            }
        }
        "label" => push(FieldKind::Label, string(value, "label"), None),
        "session_info" => push(FieldKind::SessionName, string(value, "name"), None),
        _ => {}
    }
    Some(facts)
}

type Push<'p, 'v> = dyn FnMut(FieldKind, Option<&'v str>, Option<&'v str>) + 'p;

fn message_texts<'v>(
    message: &'v Value,
    role: Option<&'v str>,
    kinds: FieldKinds,
    push: &mut Push<'_, 'v>,
) {
    let content = message.get("content");
    match role {
        Some("user") => {
            if let Some(content) = content {
                content_texts(content, FieldKind::User, None, push);
            }
        }
        Some("assistant") => match content {
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match string(block, "type") {
                        Some("text") => push(FieldKind::Assistant, string(block, "text"), None),
                        Some("thinking") => {
                            push(FieldKind::Thinking, string(block, "thinking"), None);
                        }
                        Some("toolCall") if kinds.contains(FieldKind::ToolArgs) => {
                            if let Some(arguments) = block.get("arguments") {
                                argument_texts(arguments, string(block, "name"), push);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some(Value::String(text)) => push(FieldKind::Assistant, Some(text), None),
            _ => {}
        },
        Some("toolResult") => {
            if let Some(content) = content
                && kinds.contains(FieldKind::ToolResult)
            {
                content_texts(
                    content,
                    FieldKind::ToolResult,
                    string(message, "toolName"),
                    push,
                );
            }
        }
        Some("bashExecution") => {
            push(FieldKind::BashCommand, string(message, "command"), None);
            push(FieldKind::BashOutput, string(message, "output"), None);
        }
        Some("branchSummary") => push(FieldKind::BranchSummary, string(message, "summary"), None),
        Some("compactionSummary") => {
            push(
                FieldKind::CompactionSummary,
                string(message, "summary"),
                None,
            );
        }
        Some("system") => {
            if kinds.contains(FieldKind::System) {
                system_texts(message, push);
            }
        }
        // `custom`, and any role Pi does not define (extensions may add roles): the content
        // is an extension's message.
        _ => {
            if let Some(content) = content {
                content_texts(content, FieldKind::Custom, None, push);
            }
        }
    }
}

/// Pushes a content value: a string, or the `text` of each text block (images skipped).
fn content_texts<'v>(
    content: &'v Value,
    kind: FieldKind,
    tool_name: Option<&'v str>,
    push: &mut Push<'_, 'v>,
) {
    match content {
        Value::String(text) => push(kind, Some(text), tool_name),
        Value::Array(blocks) => {
            for block in blocks {
                if string(block, "type") == Some("text") {
                    push(kind, string(block, "text"), tool_name);
                }
            }
        }
        _ => {}
    }
}

/// Pushes a system message's text and the body of each prompt section (never their names).
fn system_texts<'v>(system: &'v Value, push: &mut Push<'_, 'v>) {
    if let Some(content) = system.get("content") {
        content_texts(content, FieldKind::System, None, push);
    }
    if let Some(Value::Object(sections)) = system.get("sections") {
        for body in sections.values() {
            push(FieldKind::System, body.as_str(), None);
        }
    }
}

/// Pushes every string inside a tool call's arguments, at any depth, object members in key
/// order; keys are never texts. serde_json's recursion limit bounds the depth.
fn argument_texts<'v>(arguments: &'v Value, tool_name: Option<&'v str>, push: &mut Push<'_, 'v>) {
    match arguments {
        Value::String(text) => push(FieldKind::ToolArgs, Some(text), tool_name),
        Value::Array(items) => {
            for item in items {
                argument_texts(item, tool_name, push);
            }
        }
        Value::Object(members) => {
            for member in members.values() {
                argument_texts(member, tool_name, push);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the texts of `line` (all kinds on) as `kind:text[@tool]` strings, and its role.
    fn check(line: &str, version: u64, expected_role: Option<&str>, expected: &[&str]) {
        let value: Value = serde_json::from_str(line).expect("test line is JSON");
        let mut texts = Vec::new();
        let facts =
            entry_texts(&value, FieldKinds::all(), &mut || version, &mut texts).expect("an entry");
        let actual: Vec<String> = texts
            .iter()
            .map(|text| match text.tool_name {
                Some(tool) => format!("{}:{}@{tool}", text.kind.as_str(), text.text),
                None => format!("{}:{}", text.kind.as_str(), text.text),
            })
            .collect();
        assert_eq!(actual, expected, "{line}");
        assert_eq!(facts.role, expected_role, "{line}");
    }

    #[test]
    fn every_kind_comes_from_its_field() {
        for (line, version, role, expected) in [
            (
                r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
                3,
                Some("user"),
                &["user:hi"][..],
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"b"}]}}"#,
                3,
                Some("user"),
                &["user:a", "user:b"],
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"ok","textSignature":"ts"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs","opts":{"n":3,"tags":["x","y"]}},"thoughtSignature":"t"}],"model":"m1","provider":"p"}}"#,
                3,
                Some("assistant"),
                // Object members come in key order (`opts` before `path`).
                &[
                    "thinking:hmm",
                    "assistant:ok",
                    "toolArgs:x@read",
                    "toolArgs:y@read",
                    "toolArgs:a.rs@read",
                ],
            ),
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"out"}]}}"#,
                3,
                Some("toolResult"),
                &["toolResult:out@bash"],
            ),
            (
                r#"{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a b"}}"#,
                3,
                Some("bashExecution"),
                &["bashCommand:ls", "bashOutput:a b"],
            ),
            (
                r#"{"type":"message","message":{"role":"system","content":"sys","sections":{"preamble":"P","gone":null}}}"#,
                3,
                Some("system"),
                &["system:sys", "system:P"],
            ),
            (
                r#"{"type":"message","message":{"role":"custom","customType":"x","content":"ext"}}"#,
                3,
                Some("custom"),
                &["custom:ext"],
            ),
            (
                r#"{"type":"message","message":{"role":"hookMessage","content":"old"}}"#,
                2,
                Some("custom"),
                &["custom:old"],
            ),
            (
                r#"{"type":"message","message":{"role":"hookMessage","content":"new"}}"#,
                3,
                Some("hookMessage"),
                &["custom:new"],
            ),
            (
                r#"{"type":"message","message":{"role":"branchSummary","summary":"bs"}}"#,
                3,
                Some("branchSummary"),
                &["branchSummary:bs"],
            ),
            (
                r#"{"type":"message","message":{"role":"compactionSummary","summary":"cs"}}"#,
                3,
                Some("compactionSummary"),
                &["compactionSummary:cs"],
            ),
            (
                r#"{"type":"compaction","summary":"sum","systemMessage":{"role":"system","content":"ck"}}"#,
                3,
                None,
                &["compactionSummary:sum", "system:ck"],
            ),
            (
                r#"{"type":"branch_summary","summary":"left"}"#,
                3,
                None,
                &["branchSummary:left"],
            ),
            (
                r#"{"type":"custom_message","customType":"t","content":[{"type":"text","text":"cm"}],"details":{"k":"v"}}"#,
                3,
                None,
                &["custom:cm"],
            ),
            (
                r#"{"type":"label","targetId":"x","label":"lab"}"#,
                3,
                None,
                &["label:lab"],
            ),
            (
                r#"{"type":"session_info","name":"nm"}"#,
                3,
                None,
                &["sessionName:nm"],
            ),
            (
                r#"{"type":"custom","customType":"t","data":{"k":"state"}}"#,
                3,
                None,
                &[],
            ),
            (
                r#"{"type":"model_change","provider":"p","modelId":"m"}"#,
                3,
                None,
                &[],
            ),
            (r#"{"type":"session","id":"s","cwd":"/p"}"#, 3, None, &[]),
            (r#"{"type":"label","label":7}"#, 3, None, &[]),
        ] {
            check(line, version, role, expected);
        }
    }

    #[test]
    fn lines_that_are_not_entries_give_nothing() {
        for line in ["[1]", r#"{"type":5}"#, r#"{"id":"x"}"#] {
            let value: Value = serde_json::from_str(line).expect("json");
            let mut texts = Vec::new();
            assert!(entry_texts(&value, FieldKinds::all(), &mut || 3, &mut texts).is_none());
        }
    }
}
