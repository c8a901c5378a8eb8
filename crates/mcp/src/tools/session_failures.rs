//! `session_failures`: what failed across the sessions of the stores (or one session):
//! tool errors, provider errors, aborted and cut-off replies and `!` commands that exited
//! non-zero, as the rows of `pi-retrospect failures --json`, or grouped, in bounded pages
//! continued by a key cursor.

use std::sync::Arc;

use pi_retrospect_app::{FailureGroup, FailureKind, FailureRow, GroupBy, RepeatRow};
use pi_retrospect_app::{FailuresRequest, ListRequest};
use pi_retrospect_core::Timestamp;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{CwdMatch, OneOrMany, SessionFilters, bounded, parse, session_target};
use crate::cursor;
use crate::error::ToolError;
use crate::output::{
    MAX_WARNINGS, ToolOutput, bounded_text, fit_page, json_from_writer, page_budget,
    text_from_writer,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "session_failures",
    title: "What failed, where, how often",
    description: DESCRIPTION,
    input_schema: input_schema::<SessionFailuresParams>,
    output_schema,
    run,
    needs_session: false,
};

/// Rows per page when `limit` is not given.
const DEFAULT_LIMIT: u64 = 100;
/// The largest `limit`.
const MAX_LIMIT: u64 = 500;

const DESCRIPTION: &str = "\
Start a retrospective here: lists what failed in every selected session (subagent runs \
included), newest first. Kinds (failureKind): tool_error (a tool result with isError), \
api_error (a reply that ended with stopReason error, with the provider's errorMessage), \
aborted, cut_off (stopReason length) and command_exit (a `!` command that exited non-zero); \
kind selects some. Each row is a row of `pi-retrospect failures --json`: path and entryId \
(a handle inspect_session view read opens), timestamp, cwd, title, onActiveBranch, depth, \
toolName, the failing call's arguments and whole bash command, exitCode and message (the \
error text, head and tail kept). by groups them: signature (the tool plus the error text \
with numbers, ids, paths and positions replaced, so one failure in 40 sessions is one row), \
tool, session, project or day; each group has count, nSessions, firstSeen, lastSeen and one \
example handle (examplePath + exampleEntryId); with by session also repeatedCalls. repeats \
also lists runs of the same tool called with the same arguments three or more times in a \
row (the loop an agent gets stuck in). startTimestamp/endTimestamp bound each failure's own \
time; timeZone (IANA, default the server's zone) sets the days of by day; sessionPath (with its runs), cwds/cwdPrefix/cwdMatch, id, name and \
excludeSessionPath choose the sessions as in list_sessions. nFailures counts every failure \
selected. Pages: at most limit rows (default 100, at most 500) and 32 KiB of JSON (256 KiB \
when limit is given); when nextCursor is not null, repeat the call with cursor = nextCursor. \
Failure rows and repeats are paged by their key (time, path, entry), groups by their count \
and key; sessions created after a walk's first page (forks, copies) and failures dated \
after it stay out of its later pages, so Pi's writes do not shift the walk (a failure \
appended with an older time can still join). A page holds one part of the walk: the failures (or \
groups), then the repeats (with repeats, or by session). Never writes.";

/// The arguments of `session_failures`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionFailuresParams {
    /// Only these kinds: one or an array of tool_error, api_error, aborted, command_exit,
    /// cut_off (default every kind).
    #[serde(default)]
    kind: OneOrMany<Kind>,
    /// Group the failures: signature, tool, session, project or day.
    by: Option<By>,
    /// Also list runs of the same call repeated three or more times in a row.
    #[serde(default)]
    repeats: bool,
    /// Only this session file (an absolute `path` from list_sessions) with its runs.
    session_path: Option<String>,
    /// Only sessions whose cwd is one of these absolute directories.
    #[serde(default)]
    cwds: OneOrMany,
    /// Only sessions whose cwd is one of these absolute directories or below.
    #[serde(default)]
    cwd_prefix: OneOrMany,
    /// How `cwds` and `cwdPrefix` match: `exact` (default), or `sibling-prefix` to also match
    /// sibling directories named DIR-<suffix> (git worktrees beside the checkout).
    #[serde(default)]
    cwd_match: CwdMatch,
    /// Only sessions whose id starts with one of these prefixes.
    #[serde(default)]
    id: OneOrMany,
    /// Only sessions whose name (Pi's /name) contains this text, case-insensitively.
    name: Option<String>,
    /// Read the calling session too when the server knows it (default false: it is left
    /// out with its runs, as in list_sessions).
    #[serde(default)]
    include_current_session: bool,
    /// Leave out the session at this absolute path, with its runs.
    exclude_session_path: Option<String>,
    /// Only failures at or after this instant: RFC 3339, a date, a local date-time, or an
    /// age such as `30m`, `2h`, `3d`, `1w`.
    start_timestamp: Option<String>,
    /// Only failures at or before this instant.
    end_timestamp: Option<String>,
    /// The IANA time zone of by day and of dates without an offset (default the server's
    /// zone).
    time_zone: Option<String>,
    /// Rows per page (default 100, at most 500); giving it also raises the page's byte
    /// budget from 32 KiB to 256 KiB.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u64>,
    /// The nextCursor of the previous page, with the same other arguments (only limit may
    /// change).
    cursor: Option<String>,
}

/// A failure kind, as `failureKind` spells it.
#[derive(Debug, Clone, Copy, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// A tool result with isError.
    ToolError,
    /// A reply that ended with stopReason error.
    ApiError,
    /// A reply the user aborted.
    Aborted,
    /// A `!` command that exited non-zero.
    CommandExit,
    /// A reply cut off at the output limit.
    CutOff,
}

/// What failures are grouped by.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum By {
    /// The tool (or kind) plus the normalised error text.
    Signature,
    /// The tool, or the kind without one.
    Tool,
    /// The session file.
    Session,
    /// The session's cwd.
    Project,
    /// The UTC day.
    Day,
}

fn output_schema() -> Arc<JsonObject> {
    // `failures --json`'s schema, plus what a page adds.
    let mut schema: Value = serde_json::from_str(pi_retrospect_render::failures::FAILURES_SCHEMA)
        .unwrap_or(Value::Object(serde_json::Map::new()));
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "nextCursor".to_owned(),
            serde_json::json!({ "type": ["string", "null"], "description": "Continues after the last row of this page: pass as cursor with the same arguments; null at the end." }),
        );
        properties.insert(
            "nWarnings".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0, "description": "How many warnings in all (at most 50 are kept)." }),
        );
        properties.insert(
            "nGroups".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0, "description": "With by: how many groups in all." }),
        );
        properties.insert(
            "nRepeats".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0, "description": "With repeats (or by session): how many runs of repeated calls in all." }),
        );
    }
    schema_from_text(&schema.to_string())
}

/// The part of a walk a page holds: failure rows (or groups, with `by`) first, then the
/// runs of repeated calls. A page holds rows of one section only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Failures,
    Groups,
    Repeats,
}

impl Section {
    fn name(self) -> &'static str {
        match self {
            Section::Failures => "failures",
            Section::Groups => "groups",
            Section::Repeats => "repeats",
        }
    }
}

/// Where the previous page ended: its section and its last row's key (none: the section
/// starts at its beginning).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Position {
    section: Section,
    key: Option<RowKey>,
    /// How many rows with that key were returned: rows can share one (a file whose entries
    /// repeat an id at one time), and the next page starts after them, not after the key.
    n_same: u64,
    /// The walk's snapshot: the time of its first page. Failures written after it stay out
    /// of every page, so that a group's count, and so its place, holds from page to page.
    as_of: Option<Timestamp>,
    /// When the first page was read, by this machine's clock: session files created after
    /// it (a fork, a copy) stay out of the later pages.
    started: Option<Timestamp>,
}

/// A row's key: a failure's or repeat's sort key (newest first: instant, path, entry), or a
/// group's place (count, largest first, then key).
#[derive(Debug, Clone, PartialEq, Eq)]
enum RowKey {
    Row {
        instant: Option<Timestamp>,
        path: String,
        entry_id: String,
    },
    Group {
        count: u64,
        key: String,
    },
}

impl RowKey {
    fn of_failure(row: &FailureRow) -> RowKey {
        RowKey::Row {
            instant: row.instant,
            path: row.path.to_string(),
            entry_id: row.entry_id.clone(),
        }
    }

    fn of_repeat(row: &RepeatRow) -> RowKey {
        RowKey::Row {
            instant: row.instant,
            path: row.path.to_string(),
            entry_id: row.entry_id.clone(),
        }
    }

    fn of_group(group: &FailureGroup) -> RowKey {
        RowKey::Group {
            count: group.count,
            key: group.key.clone(),
        }
    }

    /// Returns whether `self`, the key of a row, sorts after `after`, the cursor's key.
    fn is_after(&self, after: &RowKey) -> bool {
        match (self, after) {
            (
                RowKey::Row {
                    instant,
                    path,
                    entry_id,
                },
                RowKey::Row {
                    instant: after_instant,
                    path: after_path,
                    entry_id: after_entry,
                },
            ) => {
                (std::cmp::Reverse(*instant), path, entry_id)
                    > (std::cmp::Reverse(*after_instant), after_path, after_entry)
            }
            (
                RowKey::Group { count, key },
                RowKey::Group {
                    count: after_count,
                    key: after_key,
                },
            ) => (std::cmp::Reverse(*count), key) > (std::cmp::Reverse(*after_count), after_key),
            _ => false,
        }
    }
}

impl Position {
    fn to_value(&self) -> Value {
        let key = match &self.key {
            None => Value::Null,
            Some(RowKey::Row {
                instant,
                path,
                entry_id,
            }) => serde_json::json!([
                instant.map(|at| at.seconds),
                instant.map(|at| at.nanos),
                path,
                entry_id
            ]),
            Some(RowKey::Group { count, key }) => serde_json::json!([count, key]),
        };
        let as_of = self
            .as_of
            .map_or(Value::Null, |at| serde_json::json!([at.seconds, at.nanos]));
        let started = self
            .started
            .map_or(Value::Null, |at| serde_json::json!([at.seconds, at.nanos]));
        serde_json::json!([self.section.name(), key, self.n_same, as_of, started])
    }

    fn from_value(value: &Value) -> Result<Position, ToolError> {
        let bad = || ToolError::argument("cursor", "not a nextCursor of session_failures");
        let section = match value[0].as_str() {
            Some("failures") => Section::Failures,
            Some("groups") => Section::Groups,
            Some("repeats") => Section::Repeats,
            _ => return Err(bad()),
        };
        let key = &value[1];
        let key = match (section, key) {
            (_, Value::Null) => None,
            (Section::Groups, key) => Some(RowKey::Group {
                count: key[0].as_u64().ok_or_else(bad)?,
                key: key[1].as_str().ok_or_else(bad)?.to_owned(),
            }),
            (_, key) => {
                let instant = match (&key[0], &key[1]) {
                    (Value::Null, Value::Null) => None,
                    (seconds, nanos) => Some(Timestamp {
                        seconds: seconds.as_i64().ok_or_else(bad)?,
                        nanos: nanos
                            .as_u64()
                            .and_then(|nanos| u32::try_from(nanos).ok())
                            .filter(|nanos| *nanos < 1_000_000_000)
                            .ok_or_else(bad)?,
                    }),
                };
                Some(RowKey::Row {
                    instant,
                    path: key[2].as_str().ok_or_else(bad)?.to_owned(),
                    entry_id: key[3].as_str().ok_or_else(bad)?.to_owned(),
                })
            }
        };
        let n_same = match &value[2] {
            Value::Null => 0,
            n_same => n_same.as_u64().ok_or_else(bad)?,
        };
        let instant = |at: &Value| -> Result<Option<Timestamp>, ToolError> {
            match at {
                Value::Null => Ok(None),
                at => Ok(Some(Timestamp {
                    seconds: at[0].as_i64().ok_or_else(bad)?,
                    nanos: at[1]
                        .as_u64()
                        .and_then(|nanos| u32::try_from(nanos).ok())
                        .filter(|nanos| *nanos < 1_000_000_000)
                        .ok_or_else(bad)?,
                })),
            }
        };
        Ok(Position {
            section,
            key,
            n_same,
            as_of: instant(&value[3])?,
            started: instant(&value[4])?,
        })
    }
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let digest = cursor::digest(&arguments);
    let params: SessionFailuresParams = parse(arguments)?;
    let budget = page_budget(params.limit.is_some());
    let limit = bounded("limit", params.limit, DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    let after = params
        .cursor
        .as_deref()
        .map(|text| {
            cursor::decode(TOOL.name, &digest, text).and_then(|key| Position::from_value(&key))
        })
        .transpose()?;
    let group_by = params.by.map(|by| match by {
        By::Signature => GroupBy::Signature,
        By::Tool => GroupBy::Tool,
        By::Session => GroupBy::Session,
        By::Project => GroupBy::Project,
        By::Day => GroupBy::Day,
    });
    let first_section = if group_by.is_some() {
        Section::Groups
    } else {
        Section::Failures
    };
    if let Some(after) = &after
        && after.section != first_section
        && after.section != Section::Repeats
    {
        return Err(ToolError::argument(
            "cursor",
            "not a nextCursor of session_failures (damaged, made up, or from an earlier server process); start again without cursor",
        ));
    }
    let kinds: Vec<FailureKind> = params
        .kind
        .into_names()
        .iter()
        .filter_map(|name| FailureKind::from_name(name))
        .collect();
    let session = params
        .session_path
        .map(|path| session_target(context, Some(path)))
        .transpose()?;
    // The time bounds select failures, not sessions: they move from the listing to the scan.
    let (mut sessions, env) = SessionFilters {
        cwds: params.cwds,
        cwd_prefix: params.cwd_prefix,
        cwd_match: params.cwd_match,
        start_timestamp: params.start_timestamp,
        end_timestamp: params.end_timestamp,
        include_current_session: params.include_current_session,
        exclude_session_path: params.exclude_session_path,
    }
    .request(context)?;
    let (since, until) = (sessions.since.take(), sessions.until.take());
    // The next pages keep the walk's snapshot, which the first page fixes below.
    let as_of = after.as_ref().and_then(|after| after.as_of);
    let started = match &after {
        Some(after) => after.started,
        None => {
            let since_epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Some(Timestamp {
                seconds: i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX),
                nanos: since_epoch.subsec_nanos(),
            })
        }
    };
    let created_by = after.as_ref().and(started).and_then(|at| {
        let seconds = u64::try_from(at.seconds).ok()?;
        std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(seconds, at.nanos))
    });
    let request = FailuresRequest {
        sessions: ListRequest {
            id_prefixes: params.id.into_vec(),
            name_contains: params.name,
            ..sessions
        },
        session,
        kinds,
        since,
        until,
        group_by,
        time_zone: params.time_zone,
        repeats: params.repeats,
        is_count_only: false,
        interrupt: Some(Arc::clone(&context.interrupt)),
        as_of,
        created_by,
    };
    let pi_retrospect_app::FailuresResult { mut report, groups } =
        pi_retrospect_app::failures(&request, &env)?;
    let mut groups = groups;
    // The first page's snapshot: now, or the newest failure it found when that is later (a
    // file from a clock ahead of this one), so that no failure of the first page is left out
    // of the next ones.
    let as_of = match &after {
        Some(_) => as_of,
        None => {
            let now = Timestamp {
                seconds: env.now.as_second(),
                nanos: u32::try_from(env.now.subsec_nanosecond()).unwrap_or(0),
            };
            let newest_group = groups
                .iter()
                .flatten()
                .filter_map(|group| pi_retrospect_core::timestamp::parse(&group.last_seen));
            let newest_row = report.failures.iter().filter_map(|row| row.instant);
            newest_group.chain(newest_row).chain([now]).max()
        }
    };
    let n_groups = groups.as_ref().map(Vec::len);
    let n_repeats = report.repeats.len();
    // The rows of this page's section after the cursor's key: rows written since the
    // previous page sort by their own key, so they neither shift nor repeat the walk.
    let section = after.as_ref().map_or(first_section, |after| after.section);
    let after_key = after.as_ref().and_then(|after| after.key.clone());
    let after_n_same = after.as_ref().map_or(0, |after| after.n_same);
    // Rows after the cursor's key, and those with its key past the ones already returned.
    let keep_after = |key: RowKey, seen: &mut u64| match &after_key {
        None => true,
        Some(after) if key == *after => {
            *seen += 1;
            *seen > after_n_same
        }
        Some(after) => key.is_after(after),
    };
    let mut seen = 0;
    report.failures.retain(|row| {
        section == Section::Failures && keep_after(RowKey::of_failure(row), &mut seen)
    });
    if let Some(groups) = groups.as_mut() {
        let mut seen = 0;
        groups.retain(|group| {
            section == Section::Groups && keep_after(RowKey::of_group(group), &mut seen)
        });
    }
    let mut seen = 0;
    report
        .repeats
        .retain(|row| section == Section::Repeats && keep_after(RowKey::of_repeat(row), &mut seen));
    let rows_key = section.name();
    let n_section_rows = match section {
        Section::Failures => report.failures.len(),
        Section::Groups => groups.as_ref().map_or(0, Vec::len),
        Section::Repeats => report.repeats.len(),
    };
    let n_taken = n_section_rows.min(limit);
    report.failures.truncate(limit);
    report.repeats.truncate(limit);
    if let Some(groups) = groups.as_mut() {
        groups.truncate(limit);
    }
    let keys: Vec<RowKey> = match section {
        Section::Failures => report.failures.iter().map(RowKey::of_failure).collect(),
        Section::Groups => groups.iter().flatten().map(RowKey::of_group).collect(),
        Section::Repeats => report.repeats.iter().map(RowKey::of_repeat).collect(),
    };
    let has_repeats_after = section != Section::Repeats && n_repeats > 0;
    let n_warnings = report.warnings.len();
    report.warnings.truncate(MAX_WARNINGS);
    let mut structured = json_from_writer(|out| {
        pi_retrospect_render::failures::write_json(out, &report, groups.as_deref())
    })?;
    if let Some(object) = structured.as_object_mut() {
        object.insert("nWarnings".to_owned(), Value::from(n_warnings));
        if let Some(n_groups) = n_groups {
            object.insert("nGroups".to_owned(), Value::from(n_groups));
        }
        if params.repeats || n_repeats > 0 {
            object.insert("nRepeats".to_owned(), Value::from(n_repeats));
        }
    }
    // The cursor after the first `n_kept` rows of this page: the last kept row's key, or the
    // start of the repeats once this section is done; null at the end of the walk.
    let cursor_for = |n_kept: usize| -> Option<String> {
        let position = if n_kept < n_section_rows {
            match n_kept.checked_sub(1) {
                Some(last) => {
                    let key = &keys[last];
                    let on_page = keys[..=last]
                        .iter()
                        .rev()
                        .take_while(|other| *other == key)
                        .count() as u64;
                    let before = if after_key.as_ref() == Some(key) {
                        after_n_same
                    } else {
                        0
                    };
                    Position {
                        section,
                        key: Some(key.clone()),
                        n_same: before + on_page,
                        as_of,
                        started,
                    }
                }
                // Not even one row fits: the page is refused below.
                None => return None,
            }
        } else if has_repeats_after {
            Position {
                section: Section::Repeats,
                key: None,
                n_same: 0,
                as_of,
                started,
            }
        } else {
            return None;
        };
        Some(cursor::encode(TOOL.name, &digest, &position.to_value()))
    };
    let n_kept = fit_page(&mut structured, rows_key, budget, &mut |n_kept| {
        vec![(
            "nextCursor",
            cursor_for(n_kept).map_or(Value::Null, Value::from),
        )]
    });
    if n_kept == 0 && n_taken > 0 {
        return Err(ToolError::Internal(format!(
            "one row is larger than the page ({budget} bytes); give a larger limit"
        )));
    }
    let next_cursor = cursor_for(n_kept);
    let mut text = text_from_writer(|out| {
        let options = pi_retrospect_render::failures::TextOptions::default();
        match section {
            Section::Failures => {
                report.failures.truncate(n_kept);
                pi_retrospect_render::failures::write_text(out, &report.failures, options)
            }
            Section::Groups => {
                let groups = groups.as_deref().unwrap_or_default();
                pi_retrospect_render::failures::write_groups_text(
                    out,
                    &groups[..n_kept.min(groups.len())],
                    options,
                )
            }
            Section::Repeats => {
                report.repeats.truncate(n_kept);
                pi_retrospect_render::failures::write_repeats_text(out, &report.repeats, options)
            }
        }
    })?;
    if report.n_failures == 0 {
        text.push_str("no failures\n");
    } else {
        text.push_str(&format!("{} failures in all\n", report.n_failures));
    }
    if let Some(cursor) = &next_cursor {
        text.push_str(&format!("more: call again with cursor = {cursor:?}\n"));
    }
    Ok(ToolOutput {
        structured,
        text: bounded_text(text),
    })
}
