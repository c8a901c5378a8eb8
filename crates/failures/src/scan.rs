//! The scan of session files for failures and repeated calls: each file read once through
//! transcript's capped line reader, only candidate lines decoded (see `recognize`), and a
//! file with a failure parsed again for its entry tree (the active branch, the failing call's
//! arguments) and title.

use std::collections::HashSet;
use std::path::Path;

use pi_retrospect_core::sanitize::sanitize_for_terminal;
use pi_retrospect_core::{Session, Timestamp, Warning, timestamp};
use pi_retrospect_read::{DEFAULT_MAX_LINE_BYTES, Symlinks, for_each_line, open_regular};
use pi_retrospect_transcript::{
    OutputLimit, ReadLimits, Role, Transcript, head_and_tail, read_summary,
};
use serde_json::Value;

use crate::decode::{self, Recorded, RecordedCall};
use crate::recognize;
use crate::types::{FailureKind, FailureRow, FailuresReport, RepeatRow};

/// Characters of an error text kept in a row (head and tail), as `show` keeps of an output.
pub const MESSAGE_CHARS: usize = 2000;
/// Calls in a row with the same tool and arguments that make a repeat.
pub const REPEAT_MIN_CALLS: u64 = 3;
/// Parents walked up from a tool result to find the assistant message that made its call.
const MAX_PARENT_STEPS: usize = 10_000;

/// One session file to scan, with what the listing knows about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFile {
    /// The session file.
    pub path: String,
    /// Its working directory.
    pub cwd: String,
    /// Its run depth.
    pub depth: u32,
    /// For a fork whose parent is scanned too: the fork's start; entries before it are the
    /// parent's, copied, and counted there.
    pub copied_before: Option<Timestamp>,
}

/// What a scan looks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// The kinds kept; empty keeps every kind.
    pub kinds: Vec<FailureKind>,
    /// Only failures at or after this instant (the entry's own timestamp).
    pub since: Option<Timestamp>,
    /// Only failures at or before this instant.
    pub until: Option<Timestamp>,
    /// Fill in the rows' tree facts (active branch, the call's arguments) and titles; a
    /// count needs none of them.
    pub is_detailed: bool,
    /// Also find runs of repeated calls.
    pub find_repeats: bool,
}

/// Returns the files of `sessions` (runs included, at every depth) in a scan's order, each
/// fork marked when its parent is among them.
pub fn files_of(sessions: &[Session]) -> Vec<ScanFile> {
    let mut all: Vec<(&Session, u32)> = Vec::new();
    let mut pending: Vec<(&Session, u32)> = sessions.iter().rev().map(|s| (s, 0)).collect();
    while let Some((session, depth)) = pending.pop() {
        all.push((session, depth));
        pending.extend(
            session
                .subagent_sessions
                .iter()
                .rev()
                .map(|s| (s, depth + 1)),
        );
    }
    // A parent is known by its path and also by its place in the store (`store_tail`): the
    // header records the absolute path Pi wrote, which no longer matches once the store is
    // copied, moved or reached through a link.
    let paths: HashSet<&str> = all
        .iter()
        .flat_map(|(session, _)| {
            let path = session.path.as_str();
            [Some(path), pi_retrospect_core::path::store_tail(path)]
        })
        .flatten()
        .collect();
    all.into_iter()
        .map(|(session, depth)| ScanFile {
            path: session.path.clone(),
            cwd: session.cwd.clone(),
            depth,
            copied_before: session
                .parent_session_path
                .as_deref()
                .filter(|parent| {
                    paths.contains(parent)
                        || pi_retrospect_core::path::store_tail(parent)
                            .is_some_and(|tail| paths.contains(tail))
                })
                .map(|_| session.instant),
        })
        .collect()
}

/// Scans one file and returns its failures (and repeats) with its warnings; [`merge`]
/// puts the reports of many files together. The caller chooses the threads (the layers that
/// render these types never pull in a thread pool).
pub fn scan_one(file: &ScanFile, options: &ScanOptions) -> FailuresReport {
    let result = scan_file(file, options);
    FailuresReport {
        n_failures: result.failures.len() as u64,
        failures: result.failures,
        repeats: result.repeats,
        n_files: 1,
        n_files_decoded: u64::from(result.is_decoded),
        warnings: result.warnings,
    }
}

/// Returns the reports of many files as one, rows newest first (see
/// [`FailureRow::sort_key`]), warnings sorted.
pub fn merge(reports: Vec<FailuresReport>) -> FailuresReport {
    let mut report = FailuresReport::default();
    for one in reports {
        report.absorb(one);
    }
    report.sort();
    report
}

/// Scans `files` one after the other (see [`scan_one`]).
pub fn scan(files: &[ScanFile], options: &ScanOptions) -> FailuresReport {
    merge(files.iter().map(|file| scan_one(file, options)).collect())
}

#[derive(Default)]
struct FileResult {
    failures: Vec<FailureRow>,
    repeats: Vec<RepeatRow>,
    warnings: Vec<Warning>,
    is_decoded: bool,
}

/// A failure found in the first read, with its line.
struct Found {
    line_no: u64,
    instant: Option<Timestamp>,
    recorded: Recorded,
}

/// A tool call found in the first read.
struct Call {
    entry_id: String,
    timestamp: String,
    instant: Option<Timestamp>,
    call: RecordedCall,
}

fn warning(path: &str, reason: String) -> Warning {
    Warning {
        path: path.to_owned(),
        reason,
        is_out_of_scope: false,
    }
}

fn scan_file(file: &ScanFile, options: &ScanOptions) -> FileResult {
    let mut result = FileResult::default();
    let path = Path::new(&file.path);
    let (handle, metadata) = match open_regular(path, Symlinks::Refuse) {
        Ok(opened) => opened,
        Err(error) => {
            result.warnings.push(warning(&file.path, error.to_string()));
            return result;
        }
    };
    let mut found: Vec<Found> = Vec::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut failed_calls: HashSet<String> = HashSet::new();
    let is_copied = |instant: Option<Timestamp>| matches!((file.copied_before, instant), (Some(start), Some(at)) if at < start);
    let read = for_each_line(&handle, metadata.len(), DEFAULT_MAX_LINE_BYTES, |line| {
        if let Some(length) = line.over_long {
            result.warnings.push(warning(
                &file.path,
                format!(
                    "line {}: {length} bytes, over the line cap; not read for failures",
                    line.line_no
                ),
            ));
            return;
        }
        let is_failure = recognize::may_record_failure(line.bytes);
        let is_call = options.find_repeats && recognize::may_hold_tool_call(line.bytes);
        if !(is_failure || is_call) {
            return;
        }
        result.is_decoded = true;
        // Read as Pi reads it: a lone surrogate half (JavaScript writes one when a string is
        // cut inside an emoji) or invalid UTF-8 is U+FFFD, not a reason to lose the entry.
        let value: Value = match pi_retrospect_read::decode_line(line.bytes) {
            Some(value) => value,
            None => {
                let error = serde_json::from_slice::<Value>(line.bytes)
                    .err()
                    .map_or_else(String::new, |error| error.to_string());
                result.warnings.push(warning(
                    &file.path,
                    format!("line {}: not valid JSON: {error}", line.line_no),
                ));
                return;
            }
        };
        let instant = value
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(timestamp::parse);
        if is_copied(instant) {
            return;
        }
        if is_call {
            let entry_id = value
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("line:{}", line.line_no), str::to_owned);
            let stamp = value
                .get("timestamp")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            for call in decode::tool_calls(&value) {
                calls.push(Call {
                    entry_id: entry_id.clone(),
                    timestamp: stamp.clone(),
                    instant,
                    call,
                });
            }
        }
        let Some(recorded) = decode::classify(&value) else {
            return;
        };
        if let (FailureKind::ToolError, Some(id)) = (recorded.kind, &recorded.tool_call_id) {
            failed_calls.insert(id.clone());
        }
        if is_selected(&recorded, instant, options) {
            found.push(Found {
                line_no: line.line_no,
                instant,
                recorded,
            });
        }
    });
    if let Err(error) = read {
        result
            .warnings
            .push(warning(&file.path, format!("reading: {error}")));
    }
    let is_detailed = options.is_detailed && (!found.is_empty() || !calls.is_empty());
    let title = if is_detailed {
        read_summary(path)
            .ok()
            .and_then(|summary| summary.name.or(summary.first_user_message))
            .map(|title| {
                let first = title.lines().next().unwrap_or("").trim();
                sanitize_for_terminal(first).chars().take(200).collect()
            })
    } else {
        None
    };
    let transcript = if is_detailed && !found.is_empty() {
        match Transcript::open_with(path, &ReadLimits::default()) {
            Ok(transcript) => Some(transcript),
            Err(error) => {
                result.warnings.push(warning(&file.path, error.to_string()));
                None
            }
        }
    } else {
        None
    };
    let active: HashSet<usize> = transcript
        .as_ref()
        .map(|transcript| transcript.active_branch().into_iter().collect())
        .unwrap_or_default();
    for found in found {
        result.failures.push(row(
            file,
            found,
            title.clone(),
            transcript.as_ref(),
            &active,
        ));
    }
    if options.find_repeats {
        result.repeats = repeats(file, &calls, &failed_calls, title.as_ref(), options);
    }
    result
}

fn is_selected(recorded: &Recorded, instant: Option<Timestamp>, options: &ScanOptions) -> bool {
    let is_kind = options.kinds.is_empty() || options.kinds.contains(&recorded.kind);
    let is_bounded = options.since.is_some() || options.until.is_some();
    let is_in_time = match instant {
        Some(at) => {
            options.since.is_none_or(|since| at >= since)
                && options.until.is_none_or(|until| at <= until)
        }
        // An entry without a valid timestamp is outside every bound.
        None => !is_bounded,
    };
    is_kind && is_in_time
}

fn row(
    file: &ScanFile,
    found: Found,
    title: Option<String>,
    transcript: Option<&Transcript>,
    active: &HashSet<usize>,
) -> FailureRow {
    let Found {
        line_no,
        instant,
        recorded,
    } = found;
    let entry_id = recorded
        .id
        .clone()
        .unwrap_or_else(|| format!("line:{line_no}"));
    let idx = transcript.and_then(|transcript| transcript.find(&entry_id));
    let on_active_branch = idx.is_some_and(|idx| active.contains(&idx));
    let (mut arguments, mut command) = (None, recorded.command.clone());
    if let Some(command) = &recorded.command {
        arguments = Some(serde_json::json!({ "command": command }).to_string());
    }
    if let (Some(transcript), Some(idx), Some(call_id)) =
        (transcript, idx, recorded.tool_call_id.as_deref())
        && let Some(found) = find_call(transcript, idx, call_id)
    {
        arguments = Some(found.0);
        command = found.1;
    }
    let text = sanitize_for_terminal(&recorded.text);
    let excerpt = head_and_tail(&text, OutputLimit::chars(MESSAGE_CHARS));
    FailureRow {
        path: file.path.clone(),
        entry_id: sanitize_for_terminal(&entry_id).into_owned(),
        timestamp: sanitize_for_terminal(recorded.timestamp.as_deref().unwrap_or_default())
            .into_owned(),
        instant,
        failure_kind: recorded.kind,
        cwd: file.cwd.clone(),
        title,
        on_active_branch,
        depth: file.depth,
        tool_name: recorded
            .tool_name
            .as_deref()
            .map(|name| sanitize_for_terminal(name).into_owned()),
        arguments,
        command,
        exit_code: recorded.exit_code,
        n_message_bytes_cut: excerpt.omitted.map_or(0, |omitted| omitted.n_bytes),
        message: excerpt.text,
    }
}

/// Returns the arguments (and bash command) of the call `call_id`, from the assistant
/// message above the tool result `idx` (tool results of one reply are chained one under
/// the other, below the reply).
fn find_call(
    transcript: &Transcript,
    idx: usize,
    call_id: &str,
) -> Option<(String, Option<String>)> {
    let mut current = transcript.parent(idx);
    for _ in 0..MAX_PARENT_STEPS {
        let parent = current?;
        if transcript.entry(parent).role() == Some(Role::Assistant) {
            let value = transcript.decode(parent).ok()?;
            return decode::call_arguments(&value, call_id);
        }
        current = transcript.parent(parent);
    }
    None
}

fn repeats(
    file: &ScanFile,
    calls: &[Call],
    failed_calls: &HashSet<String>,
    title: Option<&String>,
    options: &ScanOptions,
) -> Vec<RepeatRow> {
    let mut rows = Vec::new();
    let mut start = 0;
    while start < calls.len() {
        let same = |call: &Call| {
            call.call.name == calls[start].call.name
                && call.call.arguments == calls[start].call.arguments
        };
        let end = start + calls[start..].iter().take_while(|call| same(call)).count();
        let n_calls = (end - start) as u64;
        let first = &calls[start];
        let is_in_time = first.instant.is_some_and(|at| {
            options.since.is_none_or(|since| at >= since)
                && options.until.is_none_or(|until| at <= until)
        }) || (options.since.is_none() && options.until.is_none());
        if n_calls >= REPEAT_MIN_CALLS && is_in_time {
            let n_failed = calls[start..end]
                .iter()
                .filter(|call| {
                    call.call
                        .call_id
                        .as_ref()
                        .is_some_and(|id| failed_calls.contains(id))
                })
                .count() as u64;
            rows.push(RepeatRow {
                path: file.path.clone(),
                entry_id: sanitize_for_terminal(&first.entry_id).into_owned(),
                timestamp: sanitize_for_terminal(&first.timestamp).into_owned(),
                instant: first.instant,
                cwd: file.cwd.clone(),
                title: title.cloned(),
                depth: file.depth,
                tool_name: sanitize_for_terminal(&first.call.name).into_owned(),
                arguments: first.call.arguments.clone(),
                n_calls,
                n_failed,
            });
        }
        start = end;
    }
    rows
}
