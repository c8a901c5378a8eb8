//! The scan of session files for failures and repeated calls: each file read once through
//! transcript's capped line reader, only candidate lines decoded (see `recognize`), and a
//! file with a failure parsed again for its entry tree (the active branch, the failing call's
//! arguments) and title.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use pi_retrospect_core::sanitize::sanitize_for_terminal;
use pi_retrospect_core::{Session, Timestamp, Warning, timestamp};
use pi_retrospect_read::{DEFAULT_MAX_LINE_BYTES, Symlinks, for_each_line, open_regular};
use pi_retrospect_transcript::{
    OutputLimit, ReadLimits, Role, Transcript, head_and_tail, read_summary,
};
use serde_json::Value;

use crate::decode::{self, Recorded};
use crate::group::Grouper;
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
    /// The session file (every row of the file shares it).
    pub path: Arc<str>,
    /// Its working directory.
    pub cwd: Arc<str>,
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
    /// Only failures written by this instant, or without a valid timestamp: a paged walk's
    /// snapshot, so that failures written between pages do not move its rows or counts
    /// (unlike `until`, it keeps the failures that carry no time).
    pub as_of: Option<Timestamp>,
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
            path: session.path.as_str().into(),
            cwd: session.cwd.as_str().into(),
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
    scan_file(file, options, Rows::Keep(usize::MAX)).0
}

/// Scans one file as [`scan_one`] does, unless it has more than `max_rows` failures: then
/// `None`, its rows dropped as soon as they pass the bound (read it with
/// [`scan_one_streamed`]).
pub fn scan_one_held(
    file: &ScanFile,
    options: &ScanOptions,
    max_rows: usize,
) -> Option<FailuresReport> {
    let (report, is_over, _) = scan_file(file, options, Rows::Keep(max_rows));
    (!is_over).then_some(report)
}

/// Scans one file as [`scan_one`] does and hands its report to `each` in parts, holding a
/// small key per failure instead of its row: the rows are built again, in order, from their
/// lines (read by offset) a few thousand at a time. The first part holds the warnings and
/// the counts, the last the repeated calls; together they are [`scan_one`]'s report, sorted.
/// A line that no longer holds its failure when read again (the file rewritten meanwhile)
/// is a warning. Returns [`ControlFlow::Break`] when `each` did.
pub fn scan_one_streamed(
    file: &ScanFile,
    options: &ScanOptions,
    each: &mut dyn FnMut(FailuresReport) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut keys = Vec::new();
    let (mut part, _, snapshot) = scan_file(file, options, Rows::Keys(&mut keys));
    crate::types::sort_stably_in_place(&mut keys, |left, right| {
        (std::cmp::Reverse(left.instant), &left.entry_id)
            .cmp(&(std::cmp::Reverse(right.instant), &right.entry_id))
    });
    let repeats = std::mem::take(&mut part.repeats);
    let path = Path::new(&*file.path);
    let facts = if options.is_detailed && !keys.is_empty() {
        TreeFacts::of(file, path, snapshot, &mut part.warnings)
    } else {
        TreeFacts::default()
    };
    let handle = if keys.is_empty() {
        None
    } else {
        match open_regular(path, Symlinks::Refuse) {
            Ok((handle, _)) => Some(handle),
            Err(error) => {
                part.warnings.push(warning(&file.path, error.to_string()));
                None
            }
        }
    };
    let mut buffer = Vec::new();
    for key in &keys {
        // A file that cannot be opened again has a warning, and no rows.
        let Some(handle) = &handle else { break };
        buffer.resize(key.n_bytes, 0);
        let recorded = match pi_retrospect_read::read_full_at(handle, &mut buffer, key.offset) {
            Ok(n_read) if n_read == key.n_bytes => {
                pi_retrospect_read::decode_line(&buffer).and_then(|value| decode::classify(&value))
            }
            _ => None,
        };
        let Some(recorded) = recorded else {
            part.warnings.push(warning(
                &file.path,
                format!(
                    "line {}: changed while the file was read; its failure is left out",
                    key.line_no
                ),
            ));
            continue;
        };
        let (mut row, stored_id, tool_call_id) = row(file, key.line_no, key.instant, recorded);
        if options.is_detailed {
            let link = TreeLink {
                stored_id,
                tool_call_id,
            };
            facts.attach(&mut row, link);
        }
        part.failures.push(row);
        if part.failures.len() == STREAMED_ROWS {
            let mut full = std::mem::take(&mut part);
            full.sort();
            each(full)?;
        }
    }
    part.repeats = repeats;
    part.sort();
    each(part)
}

/// Scans one file as [`scan_one`] does but keeps none of its failure rows: each failure is
/// counted (`n_failures`) and added to `grouper`, when there is one, as its line is read, so
/// memory grows with the groups, never with the failures. The failures a grouper sees lack
/// the tree facts (the active branch, the call's arguments) and the title, which no
/// grouping reads; repeats are found as [`scan_one`] finds them.
pub fn scan_one_folded(
    file: &ScanFile,
    options: &ScanOptions,
    grouper: Option<&mut Grouper>,
) -> FailuresReport {
    scan_file(file, options, Rows::Fold(grouper)).0
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

/// What a file's failure rows become.
enum Rows<'a> {
    /// Kept in the report, with the tree facts and title when the options ask for them, up
    /// to this many: past it the rows are dropped and the scan reports the file too big to
    /// hold.
    Keep(usize),
    /// Counted and added to the grouper, if any, as they are read.
    Fold(Option<&'a mut Grouper>),
    /// A small key per failure (its sort key and its line's place), for the rows to be built
    /// again from their lines in order (see [`scan_one_streamed`]).
    Keys(&'a mut Vec<RowKey>),
}

/// Where a failure's line is and how its row sorts, kept instead of the row.
#[derive(Debug)]
struct RowKey {
    instant: Option<Timestamp>,
    /// The row's entry id (its handle, terminal-safe): the sort's tie-break.
    entry_id: Box<str>,
    line_no: u64,
    offset: u64,
    n_bytes: usize,
}

/// Failure rows one file's report may hold in a batch scan; a file with more is scanned
/// again by [`scan_one_streamed`], which holds keys instead of rows.
pub const MAX_HELD_ROWS: usize = 1024;

/// Rows handed over at a time by [`scan_one_streamed`].
const STREAMED_ROWS: usize = MAX_HELD_ROWS;

/// What a kept failure row's tree facts are found from, beside the row.
struct TreeLink {
    /// The entry's id as stored when it differs from the row's terminal-safe one.
    stored_id: Option<String>,
    /// A tool result's `toolCallId`.
    tool_call_id: Option<String>,
}

/// A tool call found in the first read: the first of a run of the same call.
struct Call {
    entry_id: String,
    /// The assistant message's parent: replies regenerated from one point are siblings.
    parent_id: Option<String>,
    timestamp: String,
    instant: Option<Timestamp>,
    name: String,
    arguments: String,
}

/// A run of calls with the same tool and arguments.
struct Run {
    first: Call,
    /// The message of the run's last call and that message's parent.
    last_entry_id: String,
    last_parent_id: Option<String>,
    n_calls: u64,
    n_failed: u64,
    /// The ids of the run's calls while it is shorter than a repeat: forgotten again (see
    /// [`RepeatFinder::pending`]) if it ends that short.
    ids: Vec<String>,
}

/// Finds runs of repeated calls as the lines are read. It keeps the runs long enough to be
/// repeats, the run in progress, and the ids of their calls whose failure has not been read
/// yet; never every call of the file.
#[derive(Default)]
struct RepeatFinder {
    /// The runs of [`REPEAT_MIN_CALLS`] calls or more, then the run in progress, if any.
    runs: Vec<Run>,
    is_in_progress: bool,
    /// Call id to its run in `runs`, for the calls of kept runs whose result has not been
    /// read as failed: a result answers a call written above it.
    pending: HashMap<String, usize>,
}

impl RepeatFinder {
    fn add(&mut self, call: Call, call_id: Option<String>) {
        let last = self.runs.last().filter(|_| self.is_in_progress);
        let is_same = last.is_some_and(|run| {
            run.first.name == call.name && run.first.arguments == call.arguments
        });
        // The same call twice in one message is one step (calls made in parallel), and a
        // reply regenerated from the point the last one started from is a sibling branch, not
        // the next step: neither is a loop.
        if is_same && last.is_some_and(|run| run.last_entry_id == call.entry_id) {
            return;
        }
        let is_sibling = last
            .is_some_and(|run| call.parent_id.is_some() && run.last_parent_id == call.parent_id);
        if !is_same || is_sibling {
            self.end_run();
            self.runs.push(Run {
                last_entry_id: call.entry_id.clone(),
                last_parent_id: call.parent_id.clone(),
                first: call,
                n_calls: 0,
                n_failed: 0,
                ids: Vec::new(),
            });
            self.is_in_progress = true;
        } else if let Some(run) = self.runs.last_mut() {
            run.last_entry_id = call.entry_id;
            run.last_parent_id = call.parent_id;
        }
        let idx = self.runs.len() - 1;
        let Some(run) = self.runs.last_mut() else {
            return;
        };
        run.n_calls += 1;
        if let Some(id) = call_id {
            if run.n_calls < REPEAT_MIN_CALLS {
                run.ids.push(id.clone());
            } else {
                run.ids = Vec::new();
            }
            self.pending.insert(id, idx);
        }
    }

    /// Ends the run in progress: one shorter than a repeat is dropped with its calls' ids.
    fn end_run(&mut self) {
        if !std::mem::take(&mut self.is_in_progress) {
            return;
        }
        if self
            .runs
            .last()
            .is_some_and(|run| run.n_calls < REPEAT_MIN_CALLS)
            && let Some(run) = self.runs.pop()
        {
            for id in run.ids {
                self.pending.remove(&id);
            }
        }
    }

    fn failed(&mut self, call_id: &str) {
        if let Some(idx) = self.pending.remove(call_id)
            && let Some(run) = self.runs.get_mut(idx)
        {
            run.n_failed += 1;
        }
    }

    fn finish(mut self) -> Vec<Run> {
        self.end_run();
        self.runs
    }
}

fn warning(path: &str, reason: String) -> Warning {
    Warning {
        path: path.to_owned(),
        reason,
        is_out_of_scope: false,
    }
}

/// Returns the report of one file, whether it had more failures than [`Rows::Keep`] holds
/// (its rows are then left out), and the length read (the file's when it was opened).
fn scan_file(
    file: &ScanFile,
    options: &ScanOptions,
    mut rows: Rows<'_>,
) -> (FailuresReport, bool, u64) {
    let mut report = FailuresReport {
        n_files: 1,
        ..FailuresReport::default()
    };
    let mut is_over = false;
    let path = Path::new(&*file.path);
    let (handle, metadata) = match open_regular(path, Symlinks::Refuse) {
        Ok(opened) => opened,
        Err(error) => {
            report.warnings.push(warning(&file.path, error.to_string()));
            return (report, false, 0);
        }
    };
    // The rows go straight into the report; their tree links (only when details are asked
    // for) beside them, so that no second copy of the rows is ever made.
    let mut links: Vec<TreeLink> = Vec::new();
    let mut finder = RepeatFinder::default();
    let mut is_decoded = false;
    let is_copied = |instant: Option<Timestamp>| matches!((file.copied_before, instant), (Some(start), Some(at)) if at < start);
    // The rows and their tree facts are of the same bytes: the file as long as it was when
    // opened, whatever Pi appends meanwhile (a new branch would move the leaf).
    let snapshot = metadata.len();
    let read = for_each_line(&handle, snapshot, DEFAULT_MAX_LINE_BYTES, |line| {
        if let Some(length) = line.over_long {
            report.warnings.push(warning(
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
        is_decoded = true;
        // Read as Pi reads it: a lone surrogate half (JavaScript writes one when a string is
        // cut inside an emoji) or invalid UTF-8 is U+FFFD, not a reason to lose the entry.
        let value: Value = match pi_retrospect_read::decode_line(line.bytes) {
            Some(value) => value,
            None => {
                let error = serde_json::from_slice::<Value>(line.bytes)
                    .err()
                    .map_or_else(String::new, |error| error.to_string());
                report.warnings.push(warning(
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
            let parent_id = value
                .get("parentId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            for call in decode::tool_calls(&value) {
                finder.add(
                    Call {
                        entry_id: entry_id.clone(),
                        parent_id: parent_id.clone(),
                        timestamp: stamp.clone(),
                        instant,
                        name: call.name,
                        arguments: call.arguments,
                    },
                    call.call_id,
                );
            }
        }
        let Some(recorded) = decode::classify(&value) else {
            return;
        };
        // The line's value is not needed past here: dropped now, so a file's rows never
        // hold a decoded line beside them.
        drop(value);
        if let (FailureKind::ToolError, Some(id)) = (recorded.kind, &recorded.tool_call_id) {
            finder.failed(id);
        }
        if !is_selected(&recorded, instant, options) {
            return;
        }
        report.n_failures += 1;
        match &mut rows {
            Rows::Keep(max_rows) => {
                if report.failures.len() >= *max_rows {
                    // Too many to hold: counted on, and left to a scan that keeps keys.
                    is_over = true;
                    report.failures = Vec::new();
                    links = Vec::new();
                    *max_rows = 0;
                }
                if is_over {
                    return;
                }
                let (row, stored_id, tool_call_id) = row(file, line.line_no, instant, recorded);
                report.failures.push(row);
                if options.is_detailed {
                    links.push(TreeLink {
                        stored_id,
                        tool_call_id,
                    });
                }
            }
            Rows::Fold(Some(grouper)) => grouper.add(&row(file, line.line_no, instant, recorded).0),
            Rows::Fold(None) => {}
            Rows::Keys(keys) => {
                // Only the sort key is kept: the row is built when its line is read again.
                let (entry_id, _) = row_id(recorded.id, line.line_no);
                keys.push(RowKey {
                    instant,
                    entry_id: entry_id.into_boxed_str(),
                    line_no: line.line_no,
                    offset: line.offset,
                    n_bytes: line.bytes.len(),
                });
            }
        }
    });
    if let Err(error) = read {
        report
            .warnings
            .push(warning(&file.path, format!("reading: {error}")));
    }
    report.n_files_decoded = u64::from(is_decoded);
    if is_over {
        return (report, true, snapshot);
    }
    let runs = if options.find_repeats {
        finder.finish()
    } else {
        Vec::new()
    };
    let is_detailed = options.is_detailed && (!report.failures.is_empty() || !runs.is_empty());
    let title = if is_detailed { title_of(path) } else { None };
    if options.is_detailed && !report.failures.is_empty() {
        let facts = TreeFacts::of(file, path, snapshot, &mut report.warnings);
        for (row, link) in report.failures.iter_mut().zip(links) {
            facts.attach(row, link);
        }
    }
    report.repeats = repeats(file, runs, title.as_ref(), options);
    (report, false, snapshot)
}

/// Returns a session's title as rows show it: its name, else its first user message, first
/// line, terminal-safe, at most 200 characters.
fn title_of(path: &Path) -> Option<Arc<str>> {
    read_summary(path)
        .ok()
        .and_then(|summary| summary.name.or(summary.first_user_message))
        .map(|title| {
            let first = title.lines().next().unwrap_or("").trim();
            Arc::from(
                sanitize_for_terminal(first)
                    .chars()
                    .take(200)
                    .collect::<String>(),
            )
        })
}

/// What a failure row learns from its file's entry tree: whether its entry is on the active
/// branch and the failing call's arguments; and the session's title.
#[derive(Default)]
struct TreeFacts {
    transcript: Option<Transcript>,
    /// One flag per entry.
    active: Vec<bool>,
    title: Option<Arc<str>>,
}

impl TreeFacts {
    /// Reads the tree and title of `file`; a tree that cannot be read is a warning.
    fn of(file: &ScanFile, path: &Path, snapshot: u64, warnings: &mut Vec<Warning>) -> TreeFacts {
        let limits = ReadLimits {
            snapshot_bytes: Some(snapshot),
            ..ReadLimits::default()
        };
        let transcript = match Transcript::open_with(path, &limits) {
            Ok(transcript) => Some(transcript),
            Err(error) => {
                warnings.push(warning(&file.path, error.to_string()));
                None
            }
        };
        // One bit per entry: a set of a million entries' indices took tens of megabytes.
        let mut active = Vec::new();
        if let Some(transcript) = &transcript {
            active = vec![false; transcript.entries().len()];
            for idx in transcript.active_branch() {
                active[idx] = true;
            }
        }
        TreeFacts {
            transcript,
            active,
            title: title_of(path),
        }
    }

    /// Sets `row`'s title, active-branch flag and call arguments.
    fn attach(&self, row: &mut FailureRow, link: TreeLink) {
        row.title.clone_from(&self.title);
        let Some(transcript) = &self.transcript else {
            return;
        };
        let idx = transcript.find(link.stored_id.as_deref().unwrap_or(&row.entry_id));
        row.on_active_branch = idx.is_some_and(|idx| self.active.get(idx) == Some(&true));
        if let (Some(idx), Some(call_id)) = (idx, link.tool_call_id.as_deref())
            && let Some((arguments, command)) = find_call(transcript, idx, call_id)
        {
            row.arguments = Some(arguments);
            row.command = command;
        }
    }
}

fn is_selected(recorded: &Recorded, instant: Option<Timestamp>, options: &ScanOptions) -> bool {
    let is_kind = options.kinds.is_empty() || options.kinds.contains(&recorded.kind);
    let is_bounded = options.since.is_some() || options.until.is_some();
    let is_in_time = match instant {
        Some(at) => {
            options.since.is_none_or(|since| at >= since)
                && options.until.is_none_or(|until| at <= until)
                && options.as_of.is_none_or(|as_of| at <= as_of)
        }
        // An entry without a valid timestamp is outside every bound.
        None => !is_bounded,
    };
    is_kind && is_in_time
}

/// Returns the row of a failure as its line records it (no tree facts, no title), with the
/// entry's id as stored when the row's differs and the call id its tree facts come from.
fn row(
    file: &ScanFile,
    line_no: u64,
    instant: Option<Timestamp>,
    recorded: Recorded,
) -> (FailureRow, Option<String>, Option<String>) {
    let Recorded {
        kind,
        id,
        timestamp,
        tool_name,
        tool_call_id,
        command,
        exit_code,
        text,
        ..
    } = recorded;
    let (safe_id, stored_id) = row_id(id, line_no);
    let arguments = command
        .as_ref()
        .map(|command| serde_json::json!({ "command": command }).to_string());
    let excerpt = {
        let text = sanitize_for_terminal(&text);
        head_and_tail(&text, OutputLimit::chars(MESSAGE_CHARS))
    };
    let row = FailureRow {
        path: file.path.clone(),
        entry_id: safe_id,
        timestamp: sanitize_for_terminal(timestamp.as_deref().unwrap_or_default()).into_owned(),
        instant,
        failure_kind: kind,
        cwd: file.cwd.clone(),
        title: None,
        on_active_branch: false,
        depth: file.depth,
        tool_name: tool_name
            .as_deref()
            .map(|name| sanitize_for_terminal(name).into_owned()),
        arguments,
        command,
        exit_code,
        n_message_bytes_cut: excerpt.omitted.map_or(0, |omitted| omitted.n_bytes),
        message: excerpt.text,
    };
    (row, stored_id, tool_call_id)
}

/// Returns a failure's handle as its row shows it (its id, else `line:N`, terminal-safe), and
/// the id as stored when that differs.
fn row_id(id: Option<String>, line_no: u64) -> (String, Option<String>) {
    let entry_id = id.unwrap_or_else(|| format!("line:{line_no}"));
    match sanitize_for_terminal(&entry_id) {
        std::borrow::Cow::Borrowed(_) => (entry_id, None),
        std::borrow::Cow::Owned(safe) => (safe, Some(entry_id)),
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
    runs: Vec<Run>,
    title: Option<&Arc<str>>,
    options: &ScanOptions,
) -> Vec<RepeatRow> {
    let is_bounded = options.since.is_some() || options.until.is_some();
    runs.into_iter()
        .filter(|run| {
            let is_in_time = run.first.instant.is_some_and(|at| {
                options.since.is_none_or(|since| at >= since)
                    && options.until.is_none_or(|until| at <= until)
            }) || !is_bounded;
            run.n_calls >= REPEAT_MIN_CALLS && is_in_time
        })
        .map(|run| RepeatRow {
            path: file.path.clone(),
            entry_id: sanitize_for_terminal(&run.first.entry_id).into_owned(),
            timestamp: sanitize_for_terminal(&run.first.timestamp).into_owned(),
            instant: run.first.instant,
            cwd: file.cwd.clone(),
            title: title.cloned(),
            depth: file.depth,
            tool_name: sanitize_for_terminal(&run.first.name).into_owned(),
            arguments: run.first.arguments,
            n_calls: run.n_calls,
            n_failed: run.n_failed,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree facts are those of the bytes the rows came from: a branch Pi appends after
    /// the scan (a new leaf below the first entry) does not move a row off the active branch.
    #[test]
    fn tree_facts_are_of_the_scanned_bytes() {
        use pi_retrospect_testkit::{Entry, Header, Message, write_session_file};
        let dir = tempfile::tempdir().expect("temp dir");
        let header = Header::new("s")
            .timestamp("2026-01-01T00:00:00.000Z")
            .cwd("/p");
        let user = Entry::message(Message::user("go"))
            .id("u")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z");
        let failed = Entry::message(Message::bash_execution("false", "", Some(1)))
            .id("b")
            .parent(Some("u"))
            .at("2026-01-01T00:00:02.000Z");
        let path = write_session_file(&dir.path().join("s.jsonl"), &header, [user, failed]);
        let file = ScanFile {
            path: path.to_str().expect("utf-8").into(),
            cwd: "/p".into(),
            depth: 0,
            copied_before: None,
        };
        let options = ScanOptions {
            is_detailed: true,
            ..ScanOptions::default()
        };
        let (report, _, snapshot) = scan_file(&file, &options, Rows::Keep(usize::MAX));
        assert!(report.failures[0].on_active_branch);
        // Pi goes on from the first entry: the failure leaves the active branch.
        let branch = Entry::message(Message::user("again"))
            .id("v")
            .parent(Some("u"))
            .at("2026-01-01T00:00:03.000Z");
        pi_retrospect_testkit::append_jsonl(&path, [branch]);
        let mut warnings = Vec::new();
        let link = || TreeLink {
            stored_id: None,
            tool_call_id: None,
        };
        let mut row = report.failures[0].clone();
        TreeFacts::of(&file, &path, snapshot, &mut warnings).attach(&mut row, link());
        assert!(row.on_active_branch, "the scanned bytes' branch");
        let grown = std::fs::metadata(&path).expect("stat").len();
        TreeFacts::of(&file, &path, grown, &mut warnings).attach(&mut row, link());
        assert!(!row.on_active_branch, "the grown file's branch");
    }
}
