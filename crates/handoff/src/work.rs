//! The work a handoff carries beside the recent messages: the original task, the latest
//! compaction summary, the files `edit` and `write` calls touched, and the failures of the
//! last turns with their error text. Each part is bounded on its own (see the constants), so
//! the document stays bounded whatever the session holds.

use std::collections::{BTreeMap, HashMap, HashSet};

use pi_retrospect_transcript::{EntryKind, Failure, Role, Transcript, message_status};
use serde_json::Value;

use crate::document::{
    FailureKind, HandoffFailure, HandoffFile, HandoffMessage, HandoffRole, HandoffSummary,
};
use crate::error::HandoffError;
use crate::excerpt::{cut_field, cut_redacted_field, message_text_blocks};
use crate::redact::{Redacted, SecretKind, clean, clean_blocks};
use pi_retrospect_core::sanitize::sanitize_for_terminal;

/// The limit of the original task's text, in bytes (2 KiB).
pub const MAX_TASK_BYTES: usize = 2 * 1024;
/// The limit of the compaction summary's text, in bytes (4 KiB).
pub const MAX_SUMMARY_BYTES: usize = 4 * 1024;
/// At most this many files touched are listed (`nFilesTouched` counts all).
pub const MAX_FILES: usize = 50;
/// At most this many failures are listed (`nFailures` counts all in the last turns).
pub const MAX_FAILURES: usize = 8;
/// The limit of one failure's error text, in bytes (1 KiB).
pub const MAX_FAILURE_BYTES: usize = 1024;
/// Failures are looked for in this many last turns: from the third-last user message of the
/// active branch on.
pub const FAILURE_TURNS: usize = 3;

/// The tools whose calls touch a file, as Pi names them.
const FILE_TOOLS: &[&str] = &["edit", "write"];

/// Redactions counted per kind.
type Counts = BTreeMap<SecretKind, u64>;

/// The items of a bounded list kept, how many there were in all, and the redactions in each
/// item kept.
struct Listed<T> {
    items: Vec<T>,
    n_all: usize,
    counts: Vec<Counts>,
}

/// The work of a session, read from its active branch.
pub(crate) struct Work {
    pub(crate) task: Option<HandoffMessage>,
    pub(crate) compaction: Option<HandoffSummary>,
    pub(crate) files_touched: Vec<HandoffFile>,
    pub(crate) n_files_touched: usize,
    pub(crate) failures: Vec<HandoffFailure>,
    pub(crate) n_failures: usize,
    /// The redactions in the task and the compaction summary.
    pub(crate) counts: Counts,
    /// The redactions in each file of `files_touched`, in its order.
    pub(crate) file_counts: Vec<Counts>,
    /// The redactions in each failure of `failures`, in its order.
    pub(crate) failure_counts: Vec<Counts>,
}

/// Returns the work of the entries `branch` of `transcript` (the active branch, root first),
/// leaving out the messages whose ids `omitted` holds.
pub(crate) fn read_work(
    transcript: &Transcript,
    branch: &[usize],
    omitted: &HashSet<&str>,
) -> Result<Work, HandoffError> {
    let mut counts = BTreeMap::new();
    let is_kept = |idx: usize| {
        transcript
            .entry(idx)
            .id
            .is_none_or(|id| !omitted.contains(id))
    };
    let task = read_task(transcript, branch, &is_kept, &mut counts)?;
    let compaction = read_compaction(transcript, branch, &mut counts)?;
    let files = read_files_touched(transcript, branch, &is_kept)?;
    let failures = read_failures(transcript, branch, &is_kept)?;
    Ok(Work {
        task,
        compaction,
        files_touched: files.items,
        n_files_touched: files.n_all,
        failures: failures.items,
        n_failures: failures.n_all,
        counts,
        file_counts: files.counts,
        failure_counts: failures.counts,
    })
}

/// Returns the first user message with text on the branch.
fn read_task(
    transcript: &Transcript,
    branch: &[usize],
    is_kept: &dyn Fn(usize) -> bool,
    counts: &mut Counts,
) -> Result<Option<HandoffMessage>, HandoffError> {
    for &idx in branch {
        let entry = transcript.entry(idx);
        let Some(meta) = entry.message() else {
            continue;
        };
        if meta.role != Role::User
            || !(meta.shape.is_string || meta.shape.n_text > 0)
            || !is_kept(idx)
        {
            continue;
        }
        let value = transcript.decode(idx)?;
        let Some(blocks) = message_text_blocks(&value) else {
            continue;
        };
        let cleaned = clean_blocks(&blocks);
        if cleaned.text.trim().is_empty() {
            continue;
        }
        let kept = cleaned.cut(MAX_TASK_BYTES);
        add_counts(counts, &kept);
        return Ok(Some(HandoffMessage {
            entry_id: cut_field(&sanitize_for_terminal(&entry.handle())),
            role: HandoffRole::User,
            timestamp: entry
                .timestamp
                .map(|time| cut_field(&sanitize_for_terminal(time))),
            model: None,
            is_cut: kept.text.len() < cleaned.text.len(),
            n_bytes: cleaned.text.len(),
            text: kept.text,
        }));
    }
    Ok(None)
}

/// Returns the summary of the latest compaction on the branch.
fn read_compaction(
    transcript: &Transcript,
    branch: &[usize],
    counts: &mut Counts,
) -> Result<Option<HandoffSummary>, HandoffError> {
    let Some(&idx) = branch
        .iter()
        .rev()
        .find(|&&idx| matches!(transcript.entry(idx).kind, EntryKind::Compaction { .. }))
    else {
        return Ok(None);
    };
    let entry = transcript.entry(idx);
    let value = transcript.decode(idx)?;
    let summary = value.get("summary").and_then(Value::as_str).unwrap_or("");
    let cleaned = clean(summary);
    let kept = cleaned.cut(MAX_SUMMARY_BYTES);
    add_counts(counts, &kept);
    Ok(Some(HandoffSummary {
        entry_id: cut_field(&sanitize_for_terminal(&entry.handle())),
        timestamp: entry
            .timestamp
            .map(|time| cut_field(&sanitize_for_terminal(time))),
        is_cut: kept.text.len() < cleaned.text.len(),
        n_bytes: cleaned.text.len(),
        text: kept.text,
    }))
}

/// Returns the path a file tool's arguments name (`path`, or the `file_path` / `filePath`
/// other harnesses use).
fn tool_path(arguments: &Value) -> Option<&str> {
    ["path", "file_path", "filePath"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str))
        .filter(|path| !path.is_empty())
}

/// Returns the tool calls of an assistant message's content: `(id, name, arguments)`.
fn tool_calls(value: &Value) -> impl Iterator<Item = (Option<&str>, &str, &Value)> {
    value
        .get("message")
        .and_then(|message| message.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|block| {
            (
                block.get("id").and_then(Value::as_str),
                block.get("name").and_then(Value::as_str).unwrap_or(""),
                block.get("arguments").unwrap_or(&Value::Null),
            )
        })
}

/// A file touched, while the branch is read.
struct Touched {
    tools: Vec<String>,
    n_calls: usize,
    last_entry_id: String,
    last_seen: usize,
}

/// Returns the files the branch's `edit` and `write` calls touched, the most recently
/// touched [`MAX_FILES`] of them least recent first, and how many there were.
fn read_files_touched(
    transcript: &Transcript,
    branch: &[usize],
    is_kept: &dyn Fn(usize) -> bool,
) -> Result<Listed<HandoffFile>, HandoffError> {
    let mut touched: HashMap<String, Touched> = HashMap::new();
    let mut n_seen = 0;
    for &idx in branch {
        let entry = transcript.entry(idx);
        let Some(meta) = entry.message() else {
            continue;
        };
        if meta.role != Role::Assistant || meta.shape.n_tool_calls == 0 || !is_kept(idx) {
            continue;
        }
        let value = transcript.decode(idx)?;
        for (_, name, arguments) in tool_calls(&value) {
            if !FILE_TOOLS.contains(&name) {
                continue;
            }
            let Some(path) = tool_path(arguments) else {
                continue;
            };
            n_seen += 1;
            let file = touched.entry(path.to_owned()).or_insert_with(|| Touched {
                tools: Vec::new(),
                n_calls: 0,
                last_entry_id: String::new(),
                last_seen: 0,
            });
            if !file.tools.iter().any(|tool| tool == name) {
                file.tools.push(name.to_owned());
            }
            file.n_calls += 1;
            file.last_entry_id = entry.handle();
            file.last_seen = n_seen;
        }
    }
    let n_files = touched.len();
    let mut files: Vec<(String, Touched)> = touched.into_iter().collect();
    files.sort_by_key(|(_, file)| file.last_seen);
    let n_dropped = files.len().saturating_sub(MAX_FILES);
    let mut file_counts = Vec::new();
    let files = files
        .into_iter()
        .skip(n_dropped)
        .map(|(path, file)| {
            let mut counts = BTreeMap::new();
            let path = cut_redacted_field(&clean(&path), &mut counts);
            file_counts.push(counts);
            HandoffFile {
                path,
                tools: file.tools,
                n_calls: file.n_calls,
                last_entry_id: cut_field(&sanitize_for_terminal(&file.last_entry_id)),
            }
        })
        .collect();
    Ok(Listed {
        items: files,
        n_all: n_files,
        counts: file_counts,
    })
}

/// A failure found, before it is cleaned and cut.
struct Found {
    idx: usize,
    kind: FailureKind,
    tool: Option<String>,
    call: Option<String>,
    exit_code: Option<i64>,
    text: String,
    /// The text is output, whose end matters most.
    is_output: bool,
}

/// Returns the failures from the [`FAILURE_TURNS`]th-last user message of the branch on, the
/// last [`MAX_FAILURES`] of them oldest first, and how many there were.
fn read_failures(
    transcript: &Transcript,
    branch: &[usize],
    is_kept: &dyn Fn(usize) -> bool,
) -> Result<Listed<HandoffFailure>, HandoffError> {
    let user_positions: Vec<usize> = branch
        .iter()
        .enumerate()
        .filter(|&(_, &idx)| transcript.entry(idx).role() == Some(Role::User))
        .map(|(position, _)| position)
        .collect();
    let start = user_positions
        .len()
        .checked_sub(FAILURE_TURNS)
        .map_or(0, |first| user_positions[first]);
    // The calls of the window, by id, so that a tool error can say what was run.
    let mut calls: HashMap<String, String> = HashMap::new();
    // Failures are found newest last; only the last MAX_FAILURES are cleaned and kept.
    let mut found: Vec<Found> = Vec::new();
    for &idx in &branch[start..] {
        let entry = transcript.entry(idx);
        let Some(meta) = entry.message() else {
            continue;
        };
        if !is_kept(idx) {
            continue;
        }
        match meta.role {
            Role::Assistant => {
                let may_fail = matches!(meta.stop_reason, Some("error" | "aborted" | "length"));
                if meta.shape.n_tool_calls == 0 && !may_fail {
                    continue;
                }
                let value = transcript.decode(idx)?;
                for (id, name, arguments) in tool_calls(&value) {
                    if let Some(id) = id {
                        let summary = pi_retrospect_transcript::summarize_arguments(arguments);
                        calls.insert(id.to_owned(), format!("{name} {summary}"));
                    }
                }
                let status = message_status(&entry, &value);
                let (kind, text) = match status.failure() {
                    Some(Failure::Error(message)) => {
                        (FailureKind::ReplyError, message.unwrap_or_default())
                    }
                    Some(Failure::Aborted) => (
                        FailureKind::ReplyAborted,
                        status.error_message.unwrap_or_default(),
                    ),
                    Some(Failure::CutOff) => (FailureKind::ReplyCutOff, String::new()),
                    None => continue,
                };
                found.push(Found {
                    idx,
                    kind,
                    tool: None,
                    call: None,
                    exit_code: None,
                    text,
                    is_output: false,
                });
            }
            Role::ToolResult if meta.is_error => {
                let value = transcript.decode(idx)?;
                let message = value.get("message");
                let call = message
                    .and_then(|message| message.get("toolCallId"))
                    .and_then(Value::as_str)
                    .and_then(|id| calls.get(id).cloned());
                let text = message_text_blocks(&value)
                    .map(|blocks| blocks.join("\n"))
                    .unwrap_or_default();
                let tool = meta.tool_name.map(str::to_owned);
                found.push(Found {
                    idx,
                    kind: FailureKind::ToolError,
                    tool,
                    call,
                    exit_code: None,
                    text,
                    is_output: true,
                });
            }
            Role::BashExecution => {
                let value = transcript.decode(idx)?;
                let status = message_status(&entry, &value);
                if !status.is_failed_command() {
                    continue;
                }
                let message = value.get("message");
                let field = |key: &str| {
                    message
                        .and_then(|message| message.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                // `!!` runs a command kept out of the model's context; the mark says which.
                let bang = if status.exclude_from_context {
                    "!!"
                } else {
                    "!"
                };
                let call = Some(format!("{bang}{}", field("command")));
                let mut text = field("output");
                if status.cancelled && text.trim().is_empty() {
                    text = "(cancelled)".to_owned();
                }
                found.push(Found {
                    idx,
                    kind: FailureKind::CommandFailed,
                    tool: None,
                    call,
                    exit_code: status.exit_code,
                    text,
                    is_output: true,
                });
            }
            _ => {}
        }
    }
    let n_failures = found.len();
    let n_dropped = n_failures.saturating_sub(MAX_FAILURES);
    let mut failure_counts = Vec::new();
    let failures = found
        .into_iter()
        .skip(n_dropped)
        .map(|failure| {
            let Found {
                idx,
                kind,
                tool,
                call,
                exit_code,
                text,
                is_output,
            } = failure;
            let entry = transcript.entry(idx);
            let cleaned = clean(&text);
            let kept = if is_output {
                cleaned.cut_tail(MAX_FAILURE_BYTES)
            } else {
                cleaned.cut(MAX_FAILURE_BYTES)
            };
            let mut counts = BTreeMap::new();
            add_counts(&mut counts, &kept);
            let call = call.map(|call| cut_redacted_field(&clean(&call), &mut counts));
            failure_counts.push(counts);
            HandoffFailure {
                entry_id: cut_field(&sanitize_for_terminal(&entry.handle())),
                timestamp: entry
                    .timestamp
                    .map(|time| cut_field(&sanitize_for_terminal(time))),
                kind,
                tool: tool.map(|tool| cut_field(&sanitize_for_terminal(&tool))),
                call,
                exit_code,
                is_cut: kept.text.len() < cleaned.text.len(),
                n_bytes: cleaned.text.len(),
                text: kept.text,
            }
        })
        .collect();
    Ok(Listed {
        items: failures,
        n_all: n_failures,
        counts: failure_counts,
    })
}

/// Adds the redactions of `redacted` to `counts`.
fn add_counts(counts: &mut Counts, redacted: &Redacted) {
    for (kind, count) in redacted.counts() {
        *counts.entry(kind).or_insert(0) += count;
    }
}
