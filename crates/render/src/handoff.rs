//! The handoff document (a bounded, redacted excerpt of where a session stood): its Markdown
//! and JSON writers and the JSON Schema of the JSON.
//!
//! The types are the `pi-retrospect-handoff` crate's (re-exported here). Message text arrives already
//! stripped of terminal controls and redacted; the Markdown writer strips controls again all
//! the same, and escapes every single-line field, because a [`Handoff`] can also be built or
//! deserialised by other code.

use std::io::{self, Write};

use crate::text::{escape_for_terminal, sanitize_for_terminal};
use pi_retrospect_core::timestamp;
pub use pi_retrospect_handoff::{
    Excerpt, ExcerptLimits, FailureKind, Handoff, HandoffFailure, HandoffFile, HandoffMessage,
    HandoffRole, HandoffSource, HandoffSummary, HandoffText, HandoffWarning, RedactionCounts,
};

/// Options for [`write_markdown`].
#[derive(Debug, Clone)]
pub struct MarkdownOptions {
    /// The time zone message times are shown in: the local zone, or UTC.
    pub zone: jiff::tz::TimeZone,
}

/// Writes the handoff as a Markdown document: a header naming the source, the goal, the
/// original task, the resume command and the redaction count, the latest compaction summary,
/// the files touched, the failures of the last turns, then the messages, each under a heading
/// with its role and time; every text is quoted so that none can forge a heading of its own.
pub fn write_markdown(
    out: &mut dyn Write,
    handoff: &Handoff,
    options: &MarkdownOptions,
) -> io::Result<()> {
    let mut document = String::with_capacity(handoff.excerpt.n_bytes + 2048);
    let source = &handoff.source;
    document.push_str("# Pi session handoff\n\n");
    push_field(&mut document, "Source", Some(&code_span(&source.path)));
    push_field(
        &mut document,
        "Session id",
        source.session_id.as_deref().map(code_span).as_deref(),
    );
    push_field(
        &mut document,
        "Working directory",
        source.cwd.as_deref().map(code_span).as_deref(),
    );
    push_field(&mut document, "Name", source.name.as_deref());
    if !source.models.is_empty() {
        let mut models: Vec<String> = source.models.iter().map(|model| code_span(model)).collect();
        if source.n_models > source.models.len() {
            models.push(format!(
                "and {} more",
                source.n_models - source.models.len()
            ));
        }
        push_field(&mut document, "Models", Some(&models.join(", ")));
    }
    push_field(
        &mut document,
        "First activity",
        source
            .first_activity
            .as_deref()
            .map(|stored| format_time(stored, &options.zone))
            .as_deref(),
    );
    push_field(
        &mut document,
        "Last activity",
        source
            .last_activity
            .as_deref()
            .map(|stored| format_time(stored, &options.zone))
            .as_deref(),
    );
    push_field(
        &mut document,
        "Redactions",
        Some(&describe_redactions(&handoff.redactions)),
    );
    if !handoff.warnings.is_empty() || handoff.n_warnings > 0 {
        let n_warnings = handoff.n_warnings.max(handoff.warnings.len());
        let noun = if n_warnings == 1 {
            "warning"
        } else {
            "warnings"
        };
        push_field(
            &mut document,
            "Damage",
            Some(&format!(
                "{n_warnings} {noun} about the session file (see the JSON for each)"
            )),
        );
    }

    if let Some(goal) = &handoff.goal {
        document.push_str("\n## Goal\n\n");
        push_quoted(&mut document, &goal.text);
        if goal.is_cut {
            push_cut_marker(&mut document, goal.text.len(), goal.n_bytes);
        }
    }

    if let Some(task) = &handoff.task {
        document.push_str("\n## Original task\n\n");
        document.push_str(&format!(
            "The first user message, {}:\n\n",
            describe_time(task.timestamp.as_deref(), &options.zone)
        ));
        push_quoted(&mut document, &task.text);
        if task.is_cut {
            push_cut_marker(&mut document, task.text.len(), task.n_bytes);
        }
    }
    document.push_str("\n## Resume\n\n");
    let fence = fence_for(&handoff.resume_command);
    document.push_str(&fence);
    document.push_str("sh\n");
    document.push_str(&sanitize_for_terminal(&handoff.resume_command));
    document.push('\n');
    document.push_str(&fence);
    document.push('\n');

    push_work(&mut document, handoff, options);

    let excerpt = &handoff.excerpt;
    document.push_str("\n## Recent messages\n\n");
    if excerpt.messages.is_empty() {
        document.push_str(&format!(
            "No user or assistant text messages shown ({} on the active branch).\n",
            excerpt.n_available
        ));
    } else {
        document.push_str(&format!(
            "The last {} of {} user and assistant text messages on the active branch, newest last ({} bytes of text).\n",
            excerpt.messages.len(),
            excerpt.n_available,
            excerpt.n_bytes
        ));
    }
    for message in &excerpt.messages {
        document.push_str("\n### ");
        document.push_str(message.role.as_str());
        if let Some(model) = &message.model {
            document.push_str(" (");
            document.push_str(&escape_for_terminal(model));
            document.push(')');
        }
        document.push_str(", ");
        match &message.timestamp {
            Some(stored) => document.push_str(&format_time(stored, &options.zone)),
            None => document.push_str("time unknown"),
        }
        document.push_str("\n\n");
        push_quoted(&mut document, &message.text);
        if message.is_cut {
            push_cut_marker(&mut document, message.text.len(), message.n_bytes);
        }
    }
    out.write_all(document.as_bytes())
}

/// Appends the compaction summary, the files touched and the failures of the last turns.
fn push_work(document: &mut String, handoff: &Handoff, options: &MarkdownOptions) {
    if let Some(summary) = &handoff.compaction {
        document.push_str("\n## Latest compaction summary\n\n");
        document.push_str(&format!(
            "What the model was told of the work before the compaction of {}:\n\n",
            describe_time(summary.timestamp.as_deref(), &options.zone)
        ));
        push_quoted(document, &summary.text);
        if summary.is_cut {
            push_cut_marker(document, summary.text.len(), summary.n_bytes);
        }
    }
    if !handoff.files_touched.is_empty() {
        document.push_str("\n## Files touched\n\n");
        let n_files = handoff.n_files_touched.max(handoff.files_touched.len());
        let noun = if n_files == 1 { "file" } else { "files" };
        document.push_str(&format!(
            "{n_files} {noun} touched by edit and write calls, least recently touched first:\n\n"
        ));
        for file in &handoff.files_touched {
            let times = if file.n_calls == 1 {
                String::new()
            } else {
                format!(", {} calls", file.n_calls)
            };
            document.push_str(&format!(
                "- {} ({}{times})\n",
                code_span(&escape_for_terminal(&file.path)),
                escape_for_terminal(&file.tools.join(", "))
            ));
        }
        if n_files > handoff.files_touched.len() {
            document.push_str(&format!(
                "- and {} more\n",
                n_files - handoff.files_touched.len()
            ));
        }
    }
    if !handoff.failures.is_empty() {
        document.push_str("\n## Failures in the last turns\n\n");
        let n_failures = handoff.n_failures.max(handoff.failures.len());
        document.push_str(&format!(
            "The last {} of {n_failures} failures since the third-last user message, oldest first.\n",
            handoff.failures.len()
        ));
        for failure in &handoff.failures {
            document.push_str("\n### ");
            document.push_str(describe_failure(failure.kind));
            if let Some(tool) = &failure.tool {
                document.push_str(" (");
                document.push_str(&escape_for_terminal(tool));
                document.push(')');
            }
            document.push_str(", ");
            document.push_str(&describe_time(failure.timestamp.as_deref(), &options.zone));
            document.push_str("\n\n");
            push_field(
                document,
                "Call",
                failure
                    .call
                    .as_deref()
                    .map(|call| code_span(&escape_for_terminal(call)))
                    .as_deref(),
            );
            push_field(
                document,
                "Exit code",
                failure.exit_code.map(|code| code.to_string()).as_deref(),
            );
            if failure.call.is_some() || failure.exit_code.is_some() {
                document.push('\n');
            }
            if failure.text.is_empty() {
                document.push_str("> (no error text recorded)\n");
            } else {
                push_quoted(document, &failure.text);
            }
            if failure.is_cut {
                // Output keeps its end, where the error is; a reply's error its start.
                let part = match failure.kind {
                    FailureKind::ToolError | FailureKind::CommandFailed => "last",
                    _ => "first",
                };
                document.push_str(&format!(
                    ">\n> [… the {part} {} of {} bytes shown]\n",
                    failure.text.len(),
                    failure.n_bytes
                ));
            }
        }
    }
}

/// Returns what a failure kind is, in words.
fn describe_failure(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::ReplyError => "reply failed",
        FailureKind::ReplyAborted => "reply aborted",
        FailureKind::ReplyCutOff => "reply cut off at the output limit",
        FailureKind::ToolError => "tool error",
        FailureKind::CommandFailed => "command failed",
    }
}

/// Returns a stored timestamp shown in `zone`, or `time unknown`.
fn describe_time(stored: Option<&str>, zone: &jiff::tz::TimeZone) -> String {
    stored.map_or_else(
        || "time unknown".to_owned(),
        |stored| format_time(stored, zone),
    )
}

/// Writes the handoff as pretty-printed JSON (two-space indentation) with a final newline.
pub fn write_json(out: &mut dyn Write, handoff: &Handoff) -> io::Result<()> {
    let mut document = serde_json::to_vec_pretty(handoff).map_err(io::Error::other)?;
    document.push(b'\n');
    out.write_all(&document)
}

/// Appends `- Label: value` when there is a value; the value is escaped to one line.
fn push_field(document: &mut String, label: &str, value: Option<&str>) {
    let Some(value) = value else {
        return;
    };
    document.push_str("- ");
    document.push_str(label);
    document.push_str(": ");
    document.push_str(&escape_for_terminal(value));
    document.push('\n');
}

/// Appends `text` as a Markdown block quote: every line starts with `>`.
fn push_quoted(document: &mut String, text: &str) {
    let clean = sanitize_for_terminal(text);
    if clean.is_empty() {
        document.push_str(">\n");
        return;
    }
    for line in clean.split('\n') {
        if line.is_empty() {
            document.push_str(">\n");
        } else {
            document.push_str("> ");
            document.push_str(line);
            document.push('\n');
        }
    }
}

/// Appends the note that marks a cut text.
fn push_cut_marker(document: &mut String, n_kept: usize, n_bytes: usize) {
    document.push_str(&format!(
        ">\n> [… cut: {n_kept} of {n_bytes} bytes shown]\n"
    ));
}

/// Returns the redaction count for the header: `0`, or `3 (github-token: 2, jwt: 1)`.
fn describe_redactions(counts: &RedactionCounts) -> String {
    if counts.by_kind.is_empty() {
        return counts.total.to_string();
    }
    let kinds: Vec<String> = counts
        .by_kind
        .iter()
        .map(|(kind, count)| format!("{kind}: {count}"))
        .collect();
    format!("{} ({})", counts.total, kinds.join(", "))
}

/// Returns a stored timestamp shown in `zone` (`2026-11-30 08:00:59 +01:00`), or the stored
/// text escaped when it is not a valid instant.
fn format_time(stored: &str, zone: &jiff::tz::TimeZone) -> String {
    let shown = timestamp::parse(stored).and_then(|instant| {
        let nanos = i32::try_from(instant.nanos).ok()?;
        let instant = jiff::Timestamp::new(instant.seconds, nanos).ok()?;
        Some(
            instant
                .to_zoned(zone.clone())
                .strftime("%Y-%m-%d %H:%M:%S %:z")
                .to_string(),
        )
    });
    shown.unwrap_or_else(|| escape_for_terminal(stored).into_owned())
}

/// Returns the length of the longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for character in text.chars() {
        if character == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// Returns `text` as a Markdown code span whose delimiters no backtick run in it can close.
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Returns a code fence longer than any backtick run in `text` (at least three).
fn fence_for(text: &str) -> String {
    "`".repeat((longest_backtick_run(text) + 1).max(3))
}

/// The JSON Schema (draft 2020-12) of the handoff document written by [`write_json`].
pub const HANDOFF_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/handoff.json",
  "title": "pi-retrospect handoff --json",
  "description": "A bounded, redacted excerpt of where a Pi session stood (every one-line field cut to 512 bytes, ending in '… [cut: N bytes]'; the whole document at most 192 KiB of compact JSON by default, files, then the oldest messages, then failures dropped to fit): the source's header facts, the goal, the command that resumes it, the original task, the latest compaction summary, the files edit and write calls touched, the failures of the last turns with their error text, and the most recent user and assistant text messages of its active branch, newest last. Never thinking, images, system messages, custom entries, branch summaries, or tool arguments and results other than the paths of edit and write calls and the calls and output of what failed.",
  "type": "object",
  "additionalProperties": false,
  "required": ["source", "goal", "resumeCommand", "redactions", "task", "compaction", "filesTouched", "nFilesTouched", "failures", "nFailures", "excerpt", "warnings", "nWarnings"],
  "properties": {
    "source": { "$ref": "#/$defs/Source" },
    "goal": {
      "description": "The goal given for the handoff, stripped of terminal controls, redacted and cut; null when none was given.",
      "anyOf": [{ "$ref": "#/$defs/CutText" }, { "type": "null" }]
    },
    "resumeCommand": { "type": "string", "description": "`pi --session PATH`, the path quoted for a POSIX shell when it needs quoting." },
    "redactions": { "$ref": "#/$defs/RedactionCounts" },
    "task": {
      "description": "The original task: the first user message with text on the active branch, cleaned, redacted and cut to 2 KiB; null when there is none.",
      "anyOf": [{ "$ref": "#/$defs/Message" }, { "type": "null" }]
    },
    "compaction": {
      "description": "The summary of the latest compaction on the active branch, cleaned, redacted and cut to 4 KiB; null when there is none.",
      "anyOf": [{ "$ref": "#/$defs/Summary" }, { "type": "null" }]
    },
    "filesTouched": {
      "type": "array",
      "description": "Files that edit and write tool calls on the active branch touched, least recently touched first: at most the last 50.",
      "items": { "$ref": "#/$defs/File" }
    },
    "nFilesTouched": { "type": "integer", "minimum": 0, "description": "How many files were touched in all." },
    "failures": {
      "type": "array",
      "description": "Failures since the third-last user message of the active branch, oldest first: at most the last 8.",
      "items": { "$ref": "#/$defs/Failure" }
    },
    "nFailures": { "type": "integer", "minimum": 0, "description": "How many failures there were in those turns." },
    "excerpt": { "$ref": "#/$defs/Excerpt" },
    "warnings": {
      "type": "array",
      "description": "Damage found in the session file, in the order found: at most the first 20.",
      "items": { "$ref": "#/$defs/Warning" }
    },
    "nWarnings": { "type": "integer", "minimum": 0, "description": "How many warnings there were in all." }
  },
  "$defs": {
    "Source": {
      "type": "object",
      "additionalProperties": false,
      "required": ["path", "sessionId", "cwd", "name", "models", "nModels", "firstActivity", "lastActivity"],
      "properties": {
        "path": { "type": "string", "minLength": 1, "description": "Absolute path of the session file." },
        "sessionId": { "type": ["string", "null"], "description": "Session id from the header." },
        "cwd": { "type": ["string", "null"], "description": "Working directory from the header." },
        "name": { "type": ["string", "null"], "description": "The session's name (latest session_info), stripped of terminal controls and redacted." },
        "models": { "type": "array", "items": { "type": "string" }, "description": "Models used, provider/model, in order of first use: at most the first 16." },
        "nModels": { "type": "integer", "minimum": 0, "description": "How many models were used in all." },
        "firstActivity": { "type": ["string", "null"], "description": "Earliest entry timestamp, as stored." },
        "lastActivity": { "type": ["string", "null"], "description": "Latest entry timestamp, as stored." }
      }
    },
    "CutText": {
      "type": "object",
      "additionalProperties": false,
      "required": ["text", "isCut", "nBytes"],
      "properties": {
        "text": { "type": "string", "description": "The text kept, cut on a character boundary." },
        "isCut": { "type": "boolean" },
        "nBytes": { "type": "integer", "minimum": 0, "description": "Length in bytes of the cleaned text before the cut." }
      }
    },
    "RedactionCounts": {
      "type": "object",
      "additionalProperties": false,
      "required": ["total", "byKind"],
      "properties": {
        "total": { "type": "integer", "minimum": 0 },
        "byKind": {
          "type": "object",
          "description": "Count per kind, keyed by the KIND of [redacted: KIND].",
          "additionalProperties": { "type": "integer", "minimum": 1 }
        }
      }
    },
    "Excerpt": {
      "type": "object",
      "additionalProperties": false,
      "required": ["messages", "nAvailable", "nBytes", "limits"],
      "properties": {
        "messages": { "type": "array", "description": "Oldest first, newest last.", "items": { "$ref": "#/$defs/Message" } },
        "nAvailable": { "type": "integer", "minimum": 0, "description": "User and assistant messages with text on the active branch." },
        "nBytes": { "type": "integer", "minimum": 0, "description": "Total bytes of the messages' text; at most limits.maxExcerptBytes." },
        "limits": { "$ref": "#/$defs/Limits" }
      }
    },
    "Limits": {
      "type": "object",
      "additionalProperties": false,
      "required": ["maxMessages", "maxMessageBytes", "maxExcerptBytes"],
      "properties": {
        "maxMessages": { "type": "integer", "minimum": 0 },
        "maxMessageBytes": { "type": "integer", "minimum": 0 },
        "maxExcerptBytes": { "type": "integer", "minimum": 0 }
      }
    },
    "Message": {
      "type": "object",
      "additionalProperties": false,
      "required": ["entryId", "role", "timestamp", "model", "text", "isCut", "nBytes"],
      "properties": {
        "entryId": { "type": "string", "description": "The entry id, or line:N in files without ids." },
        "role": { "enum": ["user", "assistant"] },
        "timestamp": { "type": ["string", "null"], "description": "Entry timestamp, as stored." },
        "model": { "type": ["string", "null"], "description": "Assistant messages: provider/model." },
        "text": { "type": "string", "description": "Text blocks only; controls stripped, credentials redacted as [redacted: KIND], cut on a character boundary." },
        "isCut": { "type": "boolean" },
        "nBytes": { "type": "integer", "minimum": 0, "description": "Length in bytes of the cleaned text before the cut." }
      }
    },
    "Summary": {
      "type": "object",
      "additionalProperties": false,
      "required": ["entryId", "timestamp", "text", "isCut", "nBytes"],
      "properties": {
        "entryId": { "type": "string", "description": "The compaction entry's id." },
        "timestamp": { "type": ["string", "null"], "description": "Entry timestamp, as stored." },
        "text": { "type": "string", "description": "The summary; controls stripped, credentials redacted as [redacted: KIND], cut on a character boundary." },
        "isCut": { "type": "boolean" },
        "nBytes": { "type": "integer", "minimum": 0, "description": "Length in bytes of the cleaned summary before the cut." }
      }
    },
    "File": {
      "type": "object",
      "additionalProperties": false,
      "required": ["path", "tools", "nCalls", "lastEntryId"],
      "properties": {
        "path": { "type": "string", "description": "The path as the tool call gave it; cleaned, redacted, cut to 512 bytes." },
        "tools": { "type": "array", "items": { "type": "string" }, "description": "The tools that touched it (edit, write), in order of first use." },
        "nCalls": { "type": "integer", "minimum": 1 },
        "lastEntryId": { "type": "string", "description": "The entry of the last call that touched it." }
      }
    },
    "Failure": {
      "type": "object",
      "additionalProperties": false,
      "required": ["entryId", "timestamp", "kind", "tool", "call", "exitCode", "text", "isCut", "nBytes"],
      "properties": {
        "entryId": { "type": "string", "description": "The entry id, or line:N in files without ids." },
        "timestamp": { "type": ["string", "null"], "description": "Entry timestamp, as stored." },
        "kind": { "enum": ["replyError", "replyAborted", "replyCutOff", "toolError", "commandFailed"] },
        "tool": { "type": ["string", "null"], "description": "Tool errors: the tool's name." },
        "call": { "type": ["string", "null"], "description": "The tool call's arguments in one line, or the ! command; cleaned, redacted, cut to 512 bytes." },
        "exitCode": { "type": ["integer", "null"], "description": "! commands: the exit code, when the command exited." },
        "text": { "type": "string", "description": "The error text: the reply's error message (its start kept when cut), or the output (its end kept when cut); at most 1 KiB, redacted." },
        "isCut": { "type": "boolean" },
        "nBytes": { "type": "integer", "minimum": 0, "description": "Length in bytes of the cleaned text before the cut." }
      }
    },
    "Warning": {
      "type": "object",
      "additionalProperties": false,
      "required": ["lineNo", "message"],
      "properties": {
        "lineNo": { "type": ["integer", "null"], "minimum": 1 },
        "message": { "type": "string" }
      }
    }
  }
}
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn sample() -> Handoff {
        Handoff {
            source: HandoffSource {
                path: "/s/--p--/2026_x.jsonl".into(),
                session_id: Some("0199-abc".into()),
                cwd: Some("/p".into()),
                name: Some("Fix the parser".into()),
                models: vec!["anthropic/claude".into(), "openai/gpt".into()],
                n_models: 2,
                first_activity: Some("2026-11-30T07:00:59.245Z".into()),
                last_activity: Some("2026-11-30T08:01:00.000Z".into()),
            },
            goal: Some(HandoffText {
                text: "Finish the parser".into(),
                is_cut: false,
                n_bytes: 17,
            }),
            resume_command: "pi --session /s/--p--/2026_x.jsonl".into(),
            redactions: RedactionCounts {
                total: 1,
                by_kind: std::collections::BTreeMap::from([("github-token".to_owned(), 1)]),
            },
            task: Some(HandoffMessage {
                entry_id: "aa".into(),
                role: HandoffRole::User,
                timestamp: Some("2026-11-30T07:00:59.245Z".into()),
                model: None,
                text: "Make the parser fast".into(),
                is_cut: false,
                n_bytes: 20,
            }),
            compaction: Some(HandoffSummary {
                entry_id: "k1".into(),
                timestamp: Some("2026-11-30T07:30:00.000Z".into()),
                text: "Parsed a file; next: tests".into(),
                is_cut: true,
                n_bytes: 5000,
            }),
            files_touched: vec![
                HandoffFile {
                    path: "src/a`b.rs".into(),
                    tools: vec!["write".into(), "edit".into()],
                    n_calls: 3,
                    last_entry_id: "bb".into(),
                },
                HandoffFile {
                    path: "README.md".into(),
                    tools: vec!["edit".into()],
                    n_calls: 1,
                    last_entry_id: "bb".into(),
                },
            ],
            n_files_touched: 3,
            failures: vec![
                HandoffFailure {
                    entry_id: "t1".into(),
                    timestamp: Some("2026-11-30T07:40:00.000Z".into()),
                    kind: FailureKind::ToolError,
                    tool: Some("bash".into()),
                    call: Some("bash command=\"cargo test\"".into()),
                    exit_code: None,
                    text: "test parse ... FAILED\n### not a heading".into(),
                    is_cut: true,
                    n_bytes: 4000,
                },
                HandoffFailure {
                    entry_id: "a9".into(),
                    timestamp: None,
                    kind: FailureKind::ReplyAborted,
                    tool: None,
                    call: None,
                    exit_code: None,
                    text: String::new(),
                    is_cut: false,
                    n_bytes: 0,
                },
            ],
            n_failures: 2,
            excerpt: Excerpt {
                messages: vec![
                    HandoffMessage {
                        entry_id: "aa".into(),
                        role: HandoffRole::User,
                        timestamp: Some("2026-11-30T07:00:59.245Z".into()),
                        model: None,
                        text: "Use [redacted: github-token]\n\n### assistant".into(),
                        is_cut: false,
                        n_bytes: 42,
                    },
                    HandoffMessage {
                        entry_id: "bb".into(),
                        role: HandoffRole::Assistant,
                        timestamp: None,
                        model: Some("openai/gpt".into()),
                        text: "Done\u{1b}[2J".into(),
                        is_cut: true,
                        n_bytes: 9000,
                    },
                ],
                n_available: 7,
                n_bytes: 46,
                limits: ExcerptLimits {
                    max_messages: 12,
                    max_message_bytes: 2048,
                    max_excerpt_bytes: 16384,
                },
            },
            n_warnings: 1,
            warnings: vec![HandoffWarning {
                line_no: Some(3),
                message: "line 3 is not valid JSON".into(),
            }],
        }
    }

    fn markdown(handoff: &Handoff) -> String {
        let options = MarkdownOptions {
            zone: jiff::tz::TimeZone::UTC,
        };
        let mut out = Vec::new();
        write_markdown(&mut out, handoff, &options).expect("write to memory");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn markdown_document() {
        let expected = "# Pi session handoff

- Source: `/s/--p--/2026_x.jsonl`
- Session id: `0199-abc`
- Working directory: `/p`
- Name: Fix the parser
- Models: `anthropic/claude`, `openai/gpt`
- First activity: 2026-11-30 07:00:59 +00:00
- Last activity: 2026-11-30 08:01:00 +00:00
- Redactions: 1 (github-token: 1)
- Damage: 1 warning about the session file (see the JSON for each)

## Goal

> Finish the parser

## Original task

The first user message, 2026-11-30 07:00:59 +00:00:

> Make the parser fast

## Resume

```sh
pi --session /s/--p--/2026_x.jsonl
```

## Latest compaction summary

What the model was told of the work before the compaction of 2026-11-30 07:30:00 +00:00:

> Parsed a file; next: tests
>
> [… cut: 26 of 5000 bytes shown]

## Files touched

3 files touched by edit and write calls, least recently touched first:

- ``src/a`b.rs`` (write, edit, 3 calls)
- `README.md` (edit)
- and 1 more

## Failures in the last turns

The last 2 of 2 failures since the third-last user message, oldest first.

### tool error (bash), 2026-11-30 07:40:00 +00:00

- Call: `bash command=\"cargo test\"`

> test parse ... FAILED
> ### not a heading
>
> [… the last 39 of 4000 bytes shown]

### reply aborted, time unknown

> (no error text recorded)

## Recent messages

The last 2 of 7 user and assistant text messages on the active branch, newest last (46 bytes of text).

### user, 2026-11-30 07:00:59 +00:00

> Use [redacted: github-token]
>
> ### assistant

### assistant (openai/gpt), time unknown

> Done
>
> [… cut: 8 of 9000 bytes shown]
";
        assert_eq!(markdown(&sample()), expected);
    }

    #[test]
    fn markdown_without_goal_or_messages() {
        let mut handoff = sample();
        handoff.goal = None;
        handoff.excerpt.messages.clear();
        handoff.excerpt.n_bytes = 0;
        handoff.warnings.clear();
        handoff.n_warnings = 0;
        handoff.redactions = RedactionCounts::default();
        handoff.source.name = None;
        handoff.source.models.clear();
        handoff.source.n_models = 0;
        handoff.task = None;
        handoff.compaction = None;
        handoff.files_touched.clear();
        handoff.n_files_touched = 0;
        handoff.failures.clear();
        handoff.n_failures = 0;
        let text = markdown(&handoff);
        for section in [
            "## Original task",
            "## Latest compaction",
            "## Files",
            "## Failures",
        ] {
            assert!(!text.contains(section), "{section} in {text}");
        }
        assert!(!text.contains("## Goal"), "{text}");
        assert!(!text.contains("- Name"), "{text}");
        assert!(!text.contains("- Models"), "{text}");
        assert!(!text.contains("- Damage"), "{text}");
        assert!(text.contains("- Redactions: 0\n"), "{text}");
        assert!(
            text.ends_with(
                "## Recent messages\n\nNo user or assistant text messages shown (7 on the active branch).\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn markdown_escapes_single_line_fields_and_fences() {
        let mut handoff = sample();
        handoff.source.name = Some("evil\nname\u{1b}]0;t\u{7}".into());
        handoff.source.path = "/s/a`b.jsonl".into();
        handoff.resume_command = "pi --session '/s/```x'".into();
        let text = markdown(&handoff);
        assert!(
            text.contains("- Name: evil\\u{a}name\\u{1b}]0;t\\u{7}\n"),
            "{text}"
        );
        assert!(text.contains("- Source: ``/s/a`b.jsonl``\n"), "{text}");
        assert!(
            text.contains("````sh\npi --session '/s/```x'\n````\n"),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "{text}");
    }

    #[test]
    fn times_in_a_zone() {
        let zone = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        for (stored, expected) in [
            ("2026-11-30T07:00:59.245Z", "2026-11-30 09:00:59 +02:00"),
            ("2026-11-30T07:00:59+01:00", "2026-11-30 08:00:59 +02:00"),
            ("not a time\u{1b}", "not a time\\u{1b}"),
        ] {
            assert_eq!(format_time(stored, &zone), expected, "{stored:?}");
        }
    }

    #[test]
    fn json_round_trips_and_is_camel_case() {
        let handoff = sample();
        let mut out = Vec::new();
        write_json(&mut out, &handoff).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.ends_with("}\n"));
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value["resumeCommand"], "pi --session /s/--p--/2026_x.jsonl");
        assert_eq!(value["excerpt"]["messages"][1]["isCut"], true);
        assert_eq!(value["redactions"]["byKind"]["github-token"], 1);
        let back: Handoff = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, handoff);
    }

    /// Checks `value` against the subset of JSON Schema the handoff schema uses: `type`,
    /// `required`, `properties`, `additionalProperties`, `items`, `enum`, `anyOf`, `$ref`,
    /// `minimum`, `minLength`.
    fn conforms(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            return conforms(root, &root["$defs"][name], value, at);
        }
        if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
            return if options
                .iter()
                .any(|option| conforms(root, option, value, at).is_ok())
            {
                Ok(())
            } else {
                Err(format!("{at}: matches no anyOf option"))
            };
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array)
            && !choices.contains(value)
        {
            return Err(format!("{at}: {value} not in enum"));
        }
        if let Some(kind) = schema.get("type") {
            let kinds: Vec<&str> = match kind {
                Value::String(kind) => vec![kind.as_str()],
                Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            let matches = |kind: &str| match kind {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => value.is_u64() || value.is_i64(),
                "boolean" => value.is_boolean(),
                "null" => value.is_null(),
                _ => false,
            };
            if !kinds.into_iter().any(matches) {
                return Err(format!("{at}: {value} has the wrong type"));
            }
        }
        if let (Some(minimum), Some(number)) = (
            schema.get("minimum").and_then(Value::as_i64),
            value.as_i64(),
        ) && number < minimum
        {
            return Err(format!("{at}: {number} below {minimum}"));
        }
        if let (Some(min_length), Some(text)) = (
            schema.get("minLength").and_then(Value::as_u64),
            value.as_str(),
        ) && (text.chars().count() as u64) < min_length
        {
            return Err(format!("{at}: too short"));
        }
        if let Some(object) = value.as_object() {
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = name.as_str().unwrap_or_default();
                if !object.contains_key(name) {
                    return Err(format!("{at}: missing {name}"));
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, field) in object {
                let path = format!("{at}.{name}");
                match properties.and_then(|properties| properties.get(name)) {
                    Some(field_schema) => conforms(root, field_schema, field, &path)?,
                    None => match schema.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return Err(format!("{at}: unexpected {name}"));
                        }
                        Some(extra @ Value::Object(_)) => conforms(root, extra, field, &path)?,
                        _ => {}
                    },
                }
            }
            // Every declared property must be required: the writer always emits them all.
            if let Some(properties) = properties {
                for name in properties.keys() {
                    let is_required = schema
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|required| required.iter().any(|item| item == name));
                    if !is_required {
                        return Err(format!("{at}: property {name} is not required"));
                    }
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (idx, item) in array.iter().enumerate() {
                conforms(root, items, item, &format!("{at}[{idx}]"))?;
            }
        }
        Ok(())
    }

    #[test]
    fn json_conforms_to_the_schema() {
        let schema: Value = serde_json::from_str(HANDOFF_SCHEMA).expect("schema is JSON");
        let mut bare = sample();
        bare.goal = None;
        bare.source.session_id = None;
        bare.source.cwd = None;
        bare.source.name = None;
        bare.source.first_activity = None;
        bare.source.last_activity = None;
        bare.warnings[0].line_no = None;
        bare.redactions = RedactionCounts::default();
        bare.task = None;
        bare.compaction = None;
        bare.files_touched.clear();
        bare.failures[0].exit_code = Some(1);
        for handoff in [sample(), bare] {
            let mut out = Vec::new();
            write_json(&mut out, &handoff).expect("write");
            let value: Value = serde_json::from_slice(&out).expect("json");
            let checked = conforms(&schema, &schema, &value, "$");
            assert_eq!(checked, Ok(()));
        }
        // The checker itself can fail.
        let wrong = serde_json::json!({ "source": {} });
        assert!(conforms(&schema, &schema, &wrong, "$").is_err());
    }
}
